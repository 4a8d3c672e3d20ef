"""Python's truth tests on traced values, written with ``jnp.logical_*`` and ``lax.cond``.

Python calls ``bool()`` on the condition of ``a if c else b``, on every operand of ``and``/
``or`` but the last (to decide whether to go on), on the operand of ``not``, and on every
comparison of a chain but the last (``lo < x < hi`` is ``lo < x and x < hi``). On a tracer
that call raises. The edits here replace exactly those places:

* ``not x`` -> ``jnp.logical_not(x)``;
* ``lo < x < hi`` -> ``jnp.logical_and(lo < x, x < hi)``;
* ``a and b`` -> ``jnp.logical_and(a, b)`` from the first traced operand on; static
  operands before it keep Python's short-circuit (``flag and jnp.logical_and(x > 0, y > 0)``);
* ``a if c else b`` -> ``lax.cond(c, lambda: a, lambda: b)``, which evaluates only the
  branch taken, as Python does (``jnp.where`` would evaluate both and differ in gradients);
* where the value of ``a or b`` is used and it is not a boolean (``scale or 1.0``): Python
  returns one of the operands, chosen by the truth of the first, ``a if a else b`` --
  ``lax.cond(a, lambda: a, lambda: b)`` (``and``: ``lax.cond(a, lambda: b, lambda: a)``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from jitfix.analysis.blocks import walk_body
from jitfix.analysis.catalogue import jnp_member
from jitfix.analysis.imports import ImportTable
from jitfix.control_flow.result_types import Callees, arms_to_cast
from jitfix.cst_text import code, cst
from jitfix.findings import Edit, EditContext

if TYPE_CHECKING:
    from jitfix.rules.base import ModuleContext

# jax.numpy functions whose result is a boolean array.
BOOLEAN_FUNCTIONS = frozenset(
    {"logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf", "isfinite", "isposinf",
     "isneginf", "any", "all", "array_equal", "array_equiv", "allclose", "isclose", "signbit", "greater",
     "greater_equal", "less", "less_equal", "equal", "not_equal", "isreal", "iscomplex"}
)


def _needs_own_parens(node: cst.CSTNode) -> bool:
    """Whether the expression keeps its parentheses as a call argument."""
    return isinstance(node, cst.Tuple | cst.NamedExpr | cst.GeneratorExp | cst.Yield)


def _argument(node: cst.BaseExpression) -> str:
    """An expression as a call argument, without parentheses it no longer needs."""
    if _needs_own_parens(node) or not getattr(node, "lpar", None):
        return code(node)
    return code(node.with_changes(lpar=[], rpar=[]))


def _with_parens(original: cst.BaseExpression, source: str) -> cst.BaseExpression:
    replacement = cst.parse_expression(source)
    return replacement.with_changes(lpar=original.lpar, rpar=original.rpar)


def _fold(context: EditContext, function: str, operands: list[str]) -> str:
    """``f(f(a, b), c)``, each call split over lines when it does not fit."""
    folded = operands[0]
    for operand in operands[1:]:
        folded = context.call_source(function, [folded, operand])
    return folded


def is_boolean_valued(expr: ast.AST, imports: ImportTable, boolean_names: frozenset[str] = frozenset()) -> bool:
    """The expression is certainly a boolean, so ``and``/``or`` of it is ``logical_and/or``.

    ``boolean_names`` are local names only ever bound to booleans (``ok = x > 0``).
    """
    if isinstance(expr, ast.Name):
        return expr.id in boolean_names
    if isinstance(expr, ast.Compare):
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):  # `~ok`: a boolean's negation
        return is_boolean_valued(expr.operand, imports, boolean_names)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd | ast.BitOr | ast.BitXor):
        # `(i < n) & (err > tol)`: elementwise logic of booleans is a boolean.
        return is_boolean_valued(expr.left, imports, boolean_names) and \
            is_boolean_valued(expr.right, imports, boolean_names)
    if isinstance(expr, ast.BoolOp):
        return all(is_boolean_valued(value, imports, boolean_names) for value in expr.values)
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, bool)
    if isinstance(expr, ast.Call):
        name = imports.resolve(expr.func) or ""
        if (jnp_member(name) or "").rpartition(".")[2] in BOOLEAN_FUNCTIONS:
            return True
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in {"any", "all"}:
            return True
    return False


def _nested_column(module: ModuleContext, node: ast.expr) -> int:
    """Where the replacement will most likely sit: as written, or, inside a test that becomes
    a ``lax.cond`` argument, two levels in from the statement's indentation."""
    line = module.lines[node.lineno - 1]
    return len(line) - len(line.lstrip()) + 8


def _at_most(context: EditContext, column: int) -> EditContext:
    context.column = min(context.column, column)
    return context


def not_edit(module: ModuleContext, node: ast.UnaryOp) -> Edit:
    start, end = module.span_of(node)

    column = _nested_column(module, node)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.UnaryOperation)
        context = _at_most(context, column)
        source = context.call_source(f"{context.name('jax.numpy')}.logical_not", [_argument(updated.expression)])
        return _with_parens(updated, source)

    return Edit(start, cst.UnaryOperation, replace, imports=("jax.numpy",), end=end)


def chain_edit(module: ModuleContext, node: ast.Compare) -> Edit:
    start, end = module.span_of(node)

    column = _nested_column(module, node)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Comparison)
        context = _at_most(context, column)
        operands = [updated.left, *(target.comparator for target in updated.comparisons)]
        pairs = [
            f"{code(left)} {code(target.operator).strip()} {code(right)}"
            for left, target, right in zip(operands, updated.comparisons, operands[1:])
        ]
        return _with_parens(updated, _fold(context, f"{context.name('jax.numpy')}.logical_and", pairs))

    return Edit(start, cst.Comparison, replace, imports=("jax.numpy",), end=end)


def boolop_edit(module: ModuleContext, node: ast.BoolOp, first_traced: int) -> Edit:
    """Operands before ``first_traced`` keep Python's short-circuit; the rest are folded."""
    start, end = module.span_of(node)
    count = len(node.values)
    word = "and" if isinstance(node.op, ast.And) else "or"

    column = _nested_column(module, node)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.BooleanOperation)
        context = _at_most(context, column)
        operands: list[cst.BaseExpression] = []
        current: cst.BaseExpression = updated
        for _ in range(count - 1):  # `a and b and c` is ((a and b) and c) in libcst
            assert isinstance(current, cst.BooleanOperation)
            operands.insert(0, current.right)
            current = current.left
        operands.insert(0, current)
        kept = [code(operand) for operand in operands[:first_traced]]
        folded = _fold(context, f"{context.name('jax.numpy')}.logical_{word}",
                       [_argument(operand) for operand in operands[first_traced:]])
        return _with_parens(updated, f" {word} ".join([*kept, folded]))

    return Edit(start, cst.BooleanOperation, replace, imports=("jax.numpy",), end=end)


def ternary_edit(module: ModuleContext, node: ast.IfExp, cast_arms: bool,
                 rewritten: Callable[[ast.IfExp], bool] = lambda arm: False, squeezed: bool = False) -> Edit:
    """``a if c else b`` -> ``lax.cond(c, lambda: a, lambda: b)``; arms of different result
    types (``x if c else 0``) are cast to ``jnp.result_type(a, b)``. An arm that is itself a
    conditional expression the rewrite takes (``rewritten``: `a if c else b if d else e`) may
    be any of its own arms: the type is theirs, read from the source (not from the `lax.cond`
    it becomes, which the dtype would then compute again). A ``squeezed`` test has a dimension
    (one element): `lax.cond` gets `jnp.squeeze(c)`, the scalar Python took the truth of."""
    start, end = module.span_of(node)
    arms = [_leaves(node.body, rewritten), _leaves(node.orelse, rewritten)]
    to_cast = arms_to_cast(arms, Callees(module.imports.resolve)) if cast_arms else []
    leaves = [*arms[0], *arms[1]]
    sources = [module.segment(leaf) for leaf in leaves] \
        if len(leaves) > 2 and not any(_takes_truth(leaf) for leaf in leaves) else None

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.IfExp)
        test = updated.test
        if squeezed:
            test = cst.parse_expression(f"{context.name('jax.numpy')}.squeeze({_argument(test)})")
        source = _cond_source(context, test, updated.body, updated.orelse, to_cast, sources)
        if "\n" in source and not updated.lpar:  # a call split over lines needs its own brackets
            return cst.parse_expression(source)
        return _with_parens(updated, source)

    imports = ("jax.lax", "jax.numpy") if to_cast or squeezed else ("jax.lax",)
    return Edit(start, cst.IfExp, replace, imports=imports, end=end)


def _leaves(arm: ast.expr, rewritten: Callable[[ast.IfExp], bool]) -> list[ast.expr]:
    """The values ``arm`` may be: its own arms', for a conditional expression the rewrite takes."""
    if isinstance(arm, ast.IfExp) and rewritten(arm):
        return [*_leaves(arm.body, rewritten), *_leaves(arm.orelse, rewritten)]
    return [arm]


def _takes_truth(node: ast.AST) -> bool:
    """Whether Python takes a truth in ``node`` (a traced one would raise in a dtype line)."""
    return any(isinstance(child, ast.IfExp | ast.BoolOp) or isinstance(child, ast.UnaryOp) and isinstance(child.op, ast.Not)
               or isinstance(child, ast.Compare) and len(child.ops) > 1 for child in ast.walk(node))


def _cond_source(context: EditContext, test: cst.BaseExpression, body: cst.BaseExpression,
                 orelse: cst.BaseExpression, to_cast: list[int], sources: list[str] | None = None) -> str:
    """``lax.cond(test, lambda: body, lambda: orelse)``, the arms ``to_cast`` cast to the
    result type of both (of ``sources``, where given)."""
    arms = [_argument(body), _argument(orelse)]
    if to_cast:
        common = f"{context.name('jax.numpy')}.result_type({', '.join(sources or arms)})"
        arms = [f"{context.name('jax.numpy')}.asarray({arm}, {common})" if index in to_cast else arm
                for index, arm in enumerate(arms)]
    return context.call_source(f"{context.name('jax.lax')}.cond", [_argument(test), *(f"lambda: {arm}" for arm in arms)])


def chosen_operand_edit(module: ModuleContext, node: ast.BoolOp, first_traced: int, optional: bool = False) -> Edit:
    """``a or b`` -> ``lax.cond(a, lambda: a, lambda: b)`` and ``a and b`` -> ``lax.cond(a,
    lambda: b, lambda: a)``, for the two operands from ``first_traced`` on (the static ones
    before keep Python's short-circuit): what Python returns, one of the operands, chosen by
    the truth of the first. Operands of different result types are cast as a ternary's arms.
    An ``optional`` first operand may also be None, which is static under jit and false: the
    choice is Python's there (``scale or d`` -> ``d if scale is None else lax.cond(...)``)."""
    start, end = module.span_of(node)
    is_or = isinstance(node.op, ast.Or)
    tested, other = node.values[first_traced:]
    arms = [[tested], [other]] if is_or else [[other], [tested]]
    to_cast = arms_to_cast(arms, Callees(module.imports.resolve))
    count = len(node.values)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.BooleanOperation)
        operands: list[cst.BaseExpression] = []
        current: cst.BaseExpression = updated
        for _ in range(count - 1):  # `a or b or c` is ((a or b) or c) in libcst
            assert isinstance(current, cst.BooleanOperation)
            operands.insert(0, current.right)
            current = current.left
        operands.insert(0, current)
        kept = [code(operand) for operand in operands[:first_traced]]
        first, second = operands[first_traced:]
        chosen = _cond_source(context, first, first, second, to_cast) if is_or \
            else _cond_source(context, first, second, first, to_cast)
        if optional:
            when_none = _argument(second) if is_or else "None"
            chosen = f"{when_none} if {_argument(first)} is None else {chosen}"
            chosen = f"({chosen})" if kept else chosen
        return _with_parens(updated, f" {'or' if is_or else 'and'} ".join([*kept, chosen]))

    imports = ("jax.lax", "jax.numpy") if to_cast else ("jax.lax",)
    return Edit(start, cst.BooleanOperation, replace, imports=imports, end=end)


def boolean_names(function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable) -> frozenset[str]:
    """Local names every binding of which is a boolean expression (parameters excluded, but
    for those annotated ``bool``)."""
    bindings: dict[str, list[ast.expr | None]] = {}
    for node in walk_body(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for bound in ast.walk(target):
                    if isinstance(bound, ast.Name):
                        value = node.value if isinstance(target, ast.Name) else None
                        bindings.setdefault(bound.id, []).append(value)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For | ast.NamedExpr | ast.withitem):
            other: ast.AST | None = getattr(node, "target", None) or getattr(node, "optional_vars", None)
            for bound in ast.walk(other) if other is not None else ():
                if isinstance(bound, ast.Name):
                    bindings.setdefault(bound.id, []).append(None)
    params = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    # A parameter annotated `bool` comes in a boolean; it stays one if the body binds it so.
    declared_bool = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)
                     and isinstance(arg.annotation, ast.Name) and arg.annotation.id == "bool"}
    declared = {name for node in walk_body(function) if isinstance(node, ast.Global | ast.Nonlocal)
                for name in node.names}
    for name in declared_bool:
        bindings.setdefault(name, [])
    # The greatest set whose every binding is boolean given the others are: `ok = ok and x > 0`
    # keeps `ok` boolean (a local is never read before its first binding).
    known = {name for name, values in bindings.items()
             if (name not in params or name in declared_bool) and name not in declared
             and all(value is not None for value in values)}
    changed = True
    while changed:
        changed = False
        for name in sorted(known):
            if not all(value is not None and is_boolean_valued(value, imports, frozenset(known))
                       for value in bindings[name]):
                known.discard(name)
                changed = True
    return frozenset(known)


def may_be_none(operand: ast.expr, function: ast.FunctionDef | ast.AsyncFunctionDef, before: int) -> bool:
    """``operand`` is a parameter of ``function`` that defaults to None (or is annotated
    ``Optional``/``X | None``), not rebound before line ``before``: a call may leave it None."""
    if not isinstance(operand, ast.Name):
        return False
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    defaults = dict(zip([arg.arg for arg in positional[len(positional) - len(arguments.defaults):]],
                        arguments.defaults))
    defaults.update({arg.arg: default for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
                     if default is not None})
    parameter = next((arg for arg in positional + arguments.kwonlyargs if arg.arg == operand.id), None)
    if parameter is None:
        return False
    default = defaults.get(operand.id)
    optional = isinstance(default, ast.Constant) and default.value is None or _optional_annotation(parameter.annotation)
    rebound = any(isinstance(node, ast.Name) and node.id == operand.id and isinstance(node.ctx, ast.Store)
                  and node.lineno < before for node in walk_body(function) for node in ast.walk(node))
    return optional and not rebound


def _optional_annotation(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Subscript):
        return isinstance(annotation.value, ast.Name | ast.Attribute) and \
            (annotation.value.id if isinstance(annotation.value, ast.Name) else annotation.value.attr) == "Optional"
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return any(isinstance(side, ast.Constant) and side.value is None for side in (annotation.left, annotation.right))
    return False
