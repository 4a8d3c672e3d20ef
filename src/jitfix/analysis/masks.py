"""Boolean masks: an index that selects as many elements as the data says.

``x[x > 0]``, ``x[mask] = 0`` and ``x.at[mask].set(0)`` need the number of selected elements
while tracing, which a traced mask does not give: each raises under jit and vmap
(``NonConcreteBooleanIndexError``). ``jnp.where(mask, new, x)`` and a reduction's
``where=mask`` keep the shape.
"""

from __future__ import annotations

import ast
from typing import Mapping, Sequence

from jitfix.analysis.catalogue import is_elementwise
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import compared_with_text

# jax.numpy functions whose result is a boolean array of their arguments' shape.
PREDICATES = frozenset(f"jax.numpy.{name}" for name in (
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit", "isclose", "logical_and", "logical_or",
    "logical_not", "logical_xor", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal"))
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def is_boolean_mask(expr: ast.AST, imports: ImportTable,
                    bindings: Mapping[str, Sequence[ast.AST | None]] | None = None) -> bool:
    """Whether ``expr`` is certainly a boolean array when its operands are arrays: one
    comparison (``x > 0``; not ``is``, ``in`` or one with a string), ``~`` of a mask, ``&``,
    ``|`` or ``^`` of masks, a jnp predicate (``jnp.isnan(x)``), or a name every binding of
    which (in ``bindings``) is one (``mask = x > 0``)."""
    if isinstance(expr, ast.Compare):
        return len(expr.ops) == 1 and isinstance(expr.ops[0], _COMPARISONS) and compared_with_text(expr) is None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return is_boolean_mask(expr.operand, imports, bindings)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd | ast.BitOr | ast.BitXor):
        return is_boolean_mask(expr.left, imports, bindings) and is_boolean_mask(expr.right, imports, bindings)
    if isinstance(expr, ast.Call):
        return imports.resolve(expr.func) in PREDICATES
    if isinstance(expr, ast.Name) and bindings is not None:
        bound = bindings.get(expr.id, ())
        return bool(bound) and all(value is not None and is_boolean_mask(value, imports) for value in bound)
    return False


def selects_elementwise(mask: ast.AST, array: str, imports: ImportTable,
                        bindings: Mapping[str, Sequence[ast.AST | None]], array_rebound: bool) -> bool:
    """Whether ``array[mask]`` selects elements one for one, so a reduction of the selection
    is the reduction of ``array`` with ``where=mask``: ``array`` is among the mask's
    elementwise operands (``x > 0``, ``~jnp.isnan(x)``). An elementwise result has at least
    its operands' dimensions and an index that works has at most the array's, so the two
    shapes are the same. A named mask counts through its one binding, unless ``array`` is
    rebound (``array_rebound``: the mask may have read another array of that name)."""

    def reaches(expr: ast.AST, through_names: bool) -> bool:
        if isinstance(expr, ast.Name):
            if expr.id == array:
                return True
            bound = bindings.get(expr.id, ())
            return through_names and not array_rebound and len(bound) == 1 and bound[0] is not None \
                and reaches(bound[0], False)
        if isinstance(expr, ast.Compare):
            return len(expr.ops) == 1 and any(reaches(side, through_names) for side in (expr.left, *expr.comparators))
        if isinstance(expr, ast.BinOp):
            return reaches(expr.left, through_names) or reaches(expr.right, through_names)
        if isinstance(expr, ast.UnaryOp):
            return reaches(expr.operand, through_names)
        if isinstance(expr, ast.Call) and not expr.keywords:
            name = imports.resolve(expr.func)
            return (name in PREDICATES or is_elementwise(name)) and any(reaches(argument, through_names)
                                                                        for argument in expr.args)
        return False

    return reaches(mask, True)
