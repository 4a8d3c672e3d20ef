"""Add parameters to the ``static_argnames`` of the jit that compiles a function.

``@jax.jit`` becomes ``@partial(jax.jit, static_argnames=("n",))``; an existing
``partial(jax.jit, ...)``, ``jax.jit(static_argnames=...)`` or ``jax.jit(f, ...)`` call gets
the keyword (or its tuple grows). Several findings that touch one jit merge into one edit.
"""

from __future__ import annotations

import ast
from typing import Mapping, Sequence, TypeVar

from jitfix.analysis.blocks import nodes_of
from jitfix.analysis.catalogue import RECEIVERS, is_range
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import positional_names
from jitfix.cst_text import code, cst, literal_value, with_keywords
from jitfix.findings import Edit, EditContext, Position
from jitfix.rules.base import ModuleContext


def names_source(names: list[str]) -> str:
    """`("n",)` / `("n", "m")`."""
    quoted = ", ".join(f'"{name}"' for name in names)
    return f"({quoted},)" if len(names) == 1 else f"({quoted})"

T = TypeVar("T")


def _existing(value: cst.BaseExpression, kind: type[T]) -> list[T] | None:
    """The items of a literal ``"n"`` / ``("n", "m")`` (or ``0`` / ``(0, 1)``) of ``kind``;
    None when it is not such a literal."""
    found = literal_value(value)
    items = list(found) if isinstance(found, tuple | list) else [found]
    typed = [item for item in items if isinstance(item, kind) and not isinstance(item, bool)]
    return typed if len(typed) == len(items) else None


def _numbers_source(numbers: list[int]) -> str:
    return f"({numbers[0]},)" if len(numbers) == 1 else f"({', '.join(map(str, numbers))})"


def _with_keyword(call: cst.Call, names: list[str], positions: dict[str, int],
                  positional_only: frozenset[str] = frozenset()) -> cst.Call:
    """Add ``names`` as static. Where the jit lists ``static_argnums`` (it does already, or a
    parameter is positional-only, which ``static_argnames`` refuses), positional parameters
    join it. JAX matches names to positions only while one of the two is given: when both
    are, a parameter a call may pass either way is listed in both (a method's receiver, always
    passed by position, by position only)."""
    args = list(call.args)
    numbers_at = _keyword_at(args, "static_argnums")
    names_at = _keyword_at(args, "static_argnames")
    numbers = _existing(args[numbers_at].value, int) if numbers_at is not None else []
    listed = _existing(args[names_at].value, str) if names_at is not None else []
    if numbers is None or listed is None:
        return call  # not a literal: leave it to the person
    by_position = numbers_at is not None or any(name in positional_only for name in names)
    new_numbers, new_names = list(numbers), list(listed)
    for name in names:
        if by_position and name in positions:
            new_numbers += [positions[name]] if positions[name] not in new_numbers else []
        elif name not in new_names:
            new_names.append(name)
    if new_numbers and new_names:  # both given: each name by position too, each position by name
        new_numbers += [positions[name] for name in new_names if name in positions and positions[name] not in new_numbers]
        named = {index: name for name, index in positions.items()}
        new_names += [named[number] for number in new_numbers if number in named and named[number] not in new_names
                      and named[number] not in positional_only and named[number] not in RECEIVERS]
    if new_numbers != numbers:
        source = cst.parse_expression(_numbers_source(new_numbers))
        if numbers_at is not None:
            args[numbers_at] = args[numbers_at].with_changes(value=source)
        else:
            call = with_keywords(call.with_changes(args=args), [("static_argnums", source)])
            args = list(call.args)
            names_at = _keyword_at(args, "static_argnames")
    if new_names == listed:
        return call.with_changes(args=args)
    order = lambda name: positions.get(name, len(positions))  # noqa: E731
    if listed == sorted(listed, key=order):  # the parameters' order, kept where it was
        new_names.sort(key=order)
    source = cst.parse_expression(names_source(new_names))
    if names_at is not None:
        args[names_at] = args[names_at].with_changes(value=source)
        return call.with_changes(args=args)
    return with_keywords(call.with_changes(args=args), [("static_argnames", source)])


def _keyword_at(args: list[cst.Arg], keyword: str) -> int | None:
    return next((i for i, arg in enumerate(args) if arg.keyword and arg.keyword.value == keyword), None)


def static_argnames_edit(module: ModuleContext, site: ast.AST, names: list[str],
                         function: ast.FunctionDef | ast.AsyncFunctionDef) -> Edit | None:
    """The edit that makes ``names`` (parameters of ``function``) static at one jit site, or
    None if the site is not one this knows how to change."""
    positions = {name: index for index, name in enumerate(positional_names(function))}
    positional_only = frozenset(argument.arg for argument in function.args.posonlyargs)
    start = module.start_of(site)
    end = Position(site.end_lineno, module.char_col(site.end_lineno, site.end_col_offset))  # type: ignore[attr-defined]

    def merge(edits: list[Edit]) -> Edit:
        together: list[str] = []
        for edit in edits:
            together += [name for name in edit.replace.names if name not in together]  # type: ignore[attr-defined]
        together.sort(key=lambda name: positions.get(name, len(positions)))  # as the parameters are
        return static_argnames_edit(module, site, together, function)  # type: ignore[return-value]

    if isinstance(site, ast.Call):
        replace = _AddToCall(names, positions, positional_only)
        return Edit(start, cst.Call, replace, end=end, merge=merge)
    if isinstance(site, ast.Name | ast.Attribute):
        node_type = cst.Name if isinstance(site, ast.Name) else cst.Attribute
        return Edit(start, node_type, _WrapInPartial(names, positions, positional_only), imports=("functools.partial",),
                    end=end, merge=merge)
    return None


def add_static_names(jit: cst.BaseExpression, names: list[str], context: EditContext) -> cst.BaseExpression:
    """A jit expression (``partial(jax.jit, static_argnums=0)``, ``jax.jit``) with the
    keyword-only parameters ``names`` static too."""
    if isinstance(jit, cst.Call):
        return _with_keyword(jit, names, {})
    return _WrapInPartial(names)(jit, context)  # type: ignore[return-value]


class _AddToCall:
    def __init__(self, names: list[str], positions: dict[str, int], positional_only: frozenset[str] = frozenset()):
        self.names = names
        self.positions = positions
        self.positional_only = positional_only

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return _with_keyword(node, self.names, self.positions, self.positional_only)


class _WrapInPartial:
    """``jax.jit`` -> ``partial(jax.jit, static_argnames=(...))`` (``static_argnums`` for a
    positional-only parameter)."""

    def __init__(self, names: list[str], positions: dict[str, int] | None = None,
                 positional_only: frozenset[str] = frozenset()):
        self.names = names
        self.positions = positions or {}
        self.positional_only = positional_only

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        wrapped = cst.parse_expression(f"{context.name('functools.partial')}({code(node)})")
        assert isinstance(wrapped, cst.Call)
        return _with_keyword(wrapped, self.names, self.positions, self.positional_only)


def static_removed_edit(module: ModuleContext, site: ast.Call, names: list[str],
                        function: ast.FunctionDef | ast.AsyncFunctionDef) -> Edit | None:
    """The edit that makes ``names`` traced again at one jit site: taken out of its
    ``static_argnames`` and (by position) ``static_argnums``; a keyword left empty goes, and
    ``partial(jax.jit)`` or ``jax.jit()`` left with nothing to add becomes ``jax.jit``. None
    when the site's static arguments are not literals this can read."""
    positions = {name: index for index, name in enumerate(positional_names(function))}
    for keyword in site.keywords:
        if keyword.arg in ("static_argnames", "static_argnums") and not _plain_literal(keyword.value, keyword.arg):
            return None
    start, end = module.span_of(site)
    removed = _RemoveFromCall(names, {positions[name] for name in names if name in positions},
                              unwrap=bool(site.args) and module.imports.resolve(site.func) == "functools.partial")

    def merge(edits: list[Edit]) -> Edit:
        together: list[str] = []
        for edit in edits:
            together += [name for name in edit.replace.names if name not in together]  # type: ignore[attr-defined]
        return static_removed_edit(module, site, together, function)  # type: ignore[return-value]

    return Edit(start, cst.Call, removed, end=end, merge=merge)


def _plain_literal(node: ast.expr, keyword: str) -> bool:
    """``"n"`` / ``("n", "m")`` for names, ``1`` / ``(0, 2)`` (no negative positions) for numbers."""
    try:
        found = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    items = list(found) if isinstance(found, tuple | list) else [found]
    if keyword == "static_argnames":
        return all(isinstance(item, str) for item in items)
    return all(isinstance(item, int) and not isinstance(item, bool) and item >= 0 for item in items)


class _RemoveFromCall:
    def __init__(self, names: list[str], positions: set[int], unwrap: bool):
        self.names = names
        self.positions = positions
        self.unwrap = unwrap  # `partial(jax.jit, ...)`: the jit is its first argument

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args: list[cst.Arg] = []
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == "static_argnames":
                names = [name for name in _existing(arg.value, str) or [] if name not in self.names]
                if not names:
                    continue
                arg = arg.with_changes(value=cst.parse_expression(names_source(names)))
            elif keyword == "static_argnums":
                numbers = [number for number in _existing(arg.value, int) or [] if number not in self.positions]
                if not numbers:
                    continue
                arg = arg.with_changes(value=cst.parse_expression(_numbers_source(numbers)))
            args.append(arg)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if self.unwrap and len(args) == 1 and args[0].keyword is None:
            return args[0].value  # partial(jax.jit) -> jax.jit
        if not args and not self.unwrap:
            return node.func  # jax.jit() -> jax.jit
        return node.with_changes(args=args)


# Built-ins whose result is a Python value when their arguments are (`int(n)`, `max(0, i - w)`).
STATIC_OF_STATIC = frozenset({"int", "max", "min", "abs"})


def parameters_behind(expr: ast.AST, params: frozenset[str], values, traced: TracedFunction,
                     bindings: Mapping[str, Sequence[ast.AST | None]]) -> list[str] | None:
    """The traced parameters an expression is made of (``n``, ``(n, m)``, ``n * 2``,
    ``int(n)``; a local bound once to such an expression, ``pad = length - x.shape[0]``; the
    variable of a ``range`` of one, ``for i in range(n - w)``), or None when a traced part is
    not a parameter: making those static makes the expression static."""
    names: list[str] = []
    followed: set[str] = set()
    ranges = _range_variables(traced.node)

    def visit(node: ast.AST) -> bool:
        if not values.is_traced(node) and not isinstance(node, ast.Name | ast.Tuple | ast.List | ast.BinOp):
            return True
        if isinstance(node, ast.Name):
            return name(node.id) if values.is_traced(node) or node.id in followed else True
        if isinstance(node, ast.Tuple | ast.List):
            return all(visit(element) for element in node.elts)
        if isinstance(node, ast.BinOp):
            return visit(node.left) and visit(node.right)
        if isinstance(node, ast.Compare):  # (`mode == 2`: a test of parameters)
            return all(visit(part) for part in (node.left, *node.comparators))
        if isinstance(node, ast.BoolOp):
            return all(visit(part) for part in node.values)
        if isinstance(node, ast.UnaryOp):
            return visit(node.operand)
        if isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "size"):
            return True  # (of an array: static)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            return visit(node.slice)  # (`x.shape[axis]`: static where the axis is)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in STATIC_OF_STATIC \
                and values.is_builtin(node.func.id) and node.args and not node.keywords \
                and not any(isinstance(argument, ast.Starred) for argument in node.args):
            return all(visit(argument) for argument in node.args)  # (`max(0, i - w)`: Python's, of static values)
        return False

    def name(identifier: str) -> bool:
        if identifier in params and not any(bindings.get(identifier, ())):  # (not rebound: `n = jnp.asarray(n)`)
            if identifier not in names:
                names.append(identifier)
            return True
        if identifier in followed:
            return False  # (bound in terms of itself)
        followed.add(identifier)
        bound = bindings.get(identifier, ())
        if len(bound) == 1 and bound[0] is not None:
            return visit(bound[0])
        loop_bounds = ranges.get(identifier)
        # (a `for` loop's variable is bound once, by the loop: recorded without a value)
        return loop_bounds is not None and list(bound) in ([], [None]) and all(visit(argument) for argument in loop_bounds)

    return names if visit(expr) and names else None


def _range_variables(function: ast.AST) -> dict[str, list[ast.expr]]:
    """Names bound only as the variable of one ``range(...)`` loop or comprehension, with the
    range's arguments."""
    found: dict[str, list[ast.expr]] = {}
    seen: dict[str, int] = {}
    for node in nodes_of(function):
        if isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name):
            seen[node.target.id] = seen.get(node.target.id, 0) + 1
            iterable = node.iter
            if is_range(iterable) and not iterable.keywords:
                found[node.target.id] = list(iterable.args)
    return {name: arguments for name, arguments in found.items() if seen[name] == 1}
