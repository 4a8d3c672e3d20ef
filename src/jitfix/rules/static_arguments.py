"""Add parameters to the ``static_argnames`` of the jit that compiles a function.

``@jax.jit`` becomes ``@partial(jax.jit, static_argnames=("n",))``; an existing
``partial(jax.jit, ...)``, ``jax.jit(static_argnames=...)`` or ``jax.jit(f, ...)`` call gets
the keyword (or its tuple grows). Several findings that touch one jit merge into one edit.
"""

from __future__ import annotations

import ast

from jitfix.cst_text import code, cst, with_keywords
from jitfix.findings import Edit, EditContext, Position


def names_source(names: list[str]) -> str:
    """`("n",)` / `("n", "m")`."""
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"({quoted},)" if len(names) == 1 else f"({quoted})"


def _existing_names(value: cst.BaseExpression) -> list[str] | None:
    """The strings of a literal ``"n"`` / ``("n", "m")``; None when not a literal."""
    if isinstance(value, cst.SimpleString):
        return [value.evaluated_value]  # type: ignore[list-item]
    if isinstance(value, cst.Tuple | cst.List):
        names = [element.value for element in value.elements]
        if all(isinstance(name, cst.SimpleString) for name in names):
            return [name.evaluated_value for name in names]  # type: ignore[union-attr, misc]
    return None


def _existing_numbers(value: cst.BaseExpression) -> list[int] | None:
    if isinstance(value, cst.Integer):
        return [int(value.value)]
    if isinstance(value, cst.Tuple | cst.List):
        numbers = [element.value for element in value.elements]
        if all(isinstance(number, cst.Integer) for number in numbers):
            return [int(number.value) for number in numbers]  # type: ignore[union-attr]
    return None


def _numbers_source(numbers: list[int]) -> str:
    return f"({numbers[0]},)" if len(numbers) == 1 else f"({', '.join(map(str, numbers))})"


def _with_keyword(call: cst.Call, names: list[str], positions: dict[str, int]) -> cst.Call:
    """Add ``names`` as static. When the jit already lists ``static_argnums``, JAX no longer
    matches names to positions, so positional parameters join ``static_argnums`` instead."""
    args = list(call.args)
    numbers_at = next((i for i, arg in enumerate(args) if arg.keyword and arg.keyword.value == "static_argnums"), None)
    if numbers_at is not None:
        existing = _existing_numbers(args[numbers_at].value)
        if existing is None:
            return call
        added = [positions[name] for name in names if name in positions and positions[name] not in existing]
        if added:
            args[numbers_at] = args[numbers_at].with_changes(
                value=cst.parse_expression(_numbers_source(existing + added)))
        names = [name for name in names if name not in positions]
        call = call.with_changes(args=args)
        if not names:
            return call
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "static_argnames":
            existing = _existing_names(arg.value)
            if existing is None:
                return call  # not a literal: leave it to the person
            merged = existing + [name for name in names if name not in existing]
            args[index] = arg.with_changes(value=cst.parse_expression(names_source(merged)))
            return call.with_changes(args=args)
    return with_keywords(call.with_changes(args=args), [("static_argnames", cst.parse_expression(names_source(names)))])


def static_argnames_edit(module, site: ast.AST, names: list[str], function: ast.FunctionDef) -> Edit | None:
    """The edit that makes ``names`` (parameters of ``function``) static at one jit site, or
    None if the site is not one this knows how to change."""
    arguments = function.args
    positions = {arg.arg: index for index, arg in enumerate([*arguments.posonlyargs, *arguments.args])}
    start = module.start_of(site)
    end = Position(site.end_lineno, module.char_col(site.end_lineno, site.end_col_offset))  # type: ignore[attr-defined]

    def merge(edits: list[Edit]) -> Edit:
        together: list[str] = []
        for edit in edits:
            together += [name for name in edit.replace.names if name not in together]  # type: ignore[attr-defined]
        return static_argnames_edit(module, site, together, function)  # type: ignore[return-value]

    if isinstance(site, ast.Call):
        replace = _AddToCall(names, positions)
        return Edit(start, cst.Call, replace, end=end, merge=merge)
    if isinstance(site, ast.Name | ast.Attribute):
        node_type = cst.Name if isinstance(site, ast.Name) else cst.Attribute
        return Edit(start, node_type, _WrapInPartial(names), imports=("functools.partial",), end=end, merge=merge)
    return None


class _AddToCall:
    def __init__(self, names: list[str], positions: dict[str, int]):
        self.names = names
        self.positions = positions

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return _with_keyword(node, self.names, self.positions)


class _WrapInPartial:
    """``jax.jit`` -> ``partial(jax.jit, static_argnames=(...))``."""

    def __init__(self, names: list[str]):
        self.names = names

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        source = f"{context.name('functools.partial')}({code(node)}, static_argnames={names_source(self.names)})"
        return cst.parse_expression(source)
