"""Boolean masks: an index that selects as many elements as the data says.

``x[x > 0]``, ``x[mask] = 0`` and ``x.at[mask].set(0)`` need the number of selected elements
while tracing, which a traced mask does not give: each raises under jit and vmap
(``NonConcreteBooleanIndexError``). ``jnp.where(mask, new, x)`` and a reduction's
``where=mask`` keep the shape.
"""

from __future__ import annotations

import ast
from typing import Mapping, Sequence

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
