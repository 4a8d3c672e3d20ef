"""Make the branches of a ``lax.cond`` agree on their result type.

``lax.cond`` requires every branch to return the same dtype; Python does not. The common
mismatches are visible in the source: a Python literal in one branch (``0`` against an
array), or a true division in one branch (``x / 2`` is inexact, ``x * 2`` keeps an integer
dtype). For those, each branch's value is cast to the type NumPy promotion gives all of
them together, ``jnp.result_type(a, b)`` -- exactly the value the eager code computes, in
the one type the compiled code can return.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from enum import Enum

# jax.numpy functions whose result is inexact for any input.
INEXACT_FUNCTIONS = frozenset(
    {"mean", "average", "var", "std", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
     "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
     "sigmoid", "softmax", "log_softmax", "logsumexp", "norm", "erf", "true_divide", "divide",
     "reciprocal", "hypot", "deg2rad", "rad2deg", "relu", "gelu", "silu", "softplus"}
)


class Kind(Enum):
    INT_LITERAL = "int literal"  # 0, True, -3: a weakly typed Python int
    FLOAT_LITERAL = "float literal"  # 0.5: a weakly typed Python float
    INEXACT = "inexact"  # x / 2, jnp.mean(x): floating point whatever x is
    OTHER = "other"  # anything else: its dtype follows its inputs


def kind_of(expr: ast.AST) -> Kind:
    if isinstance(expr, ast.Constant):
        if isinstance(expr.value, bool | int):
            return Kind.INT_LITERAL
        if isinstance(expr.value, float):
            return Kind.FLOAT_LITERAL
        return Kind.OTHER
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        return kind_of(expr.operand)
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Div):
            return Kind.INEXACT
        sides = {kind_of(expr.left), kind_of(expr.right)}
        if sides == {Kind.INT_LITERAL}:
            return Kind.INT_LITERAL
        if sides <= {Kind.INT_LITERAL, Kind.FLOAT_LITERAL}:
            return Kind.FLOAT_LITERAL
        if Kind.INEXACT in sides:
            return Kind.INEXACT
        # x * 0.5 follows x (a float array stays its type); only an integer x would differ,
        # and then lax.cond says so at trace time rather than computing something else.
        return Kind.OTHER
    if isinstance(expr, ast.IfExp):
        arms = {kind_of(expr.body), kind_of(expr.orelse)}
        return arms.pop() if len(arms) == 1 else Kind.OTHER
    if isinstance(expr, ast.Call):
        func = expr.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name in INEXACT_FUNCTIONS:
            return Kind.INEXACT
    return Kind.OTHER


def arms_to_cast(arms: Sequence[ast.AST]) -> list[int]:
    """Indices of the arms to cast to the common result type (empty: they already agree).

    Arms of one kind agree (two literals of a kind, or values whose dtype follows the same
    inputs), and a weak Python float agrees with any inexact array. An integer literal among
    arrays is cast; once a float is involved, every arm that may be exact is cast.
    """
    kinds = {kind_of(arm) for arm in arms}
    if len(kinds) <= 1 or kinds <= {Kind.FLOAT_LITERAL, Kind.INEXACT}:
        return []
    exact = {Kind.INT_LITERAL} if kinds <= {Kind.INT_LITERAL, Kind.OTHER} else {Kind.INT_LITERAL, Kind.OTHER}
    return [index for index, arm in enumerate(arms) if kind_of(arm) in exact]
