"""Names for generated helpers, read from the code they stand for.

``if x.sum() > 0:`` gives ``_if_x_sum_positive`` and ``_if_x_sum_non_positive``;
``if jnp.linalg.norm(g) > max_norm:`` gives ``_if_norm_g_gt_max_norm`` and
``_if_norm_g_le_max_norm``. Predicates too long to read as a name fall back to
``_if_true`` / ``_if_false``.
"""

from __future__ import annotations

import ast
import keyword
import re

MODULE_WORDS = frozenset({"jnp", "np", "jax", "lax", "numpy", "onp", "self", "linalg", "math"})
MAX_WORDS = 6
COMPARISON_WORDS = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
NEGATED = {ast.Gt: ast.LtE, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.LtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
# `x > 0` reads better as "x positive" than as "x gt 0".
SIGN_WORDS = {ast.Gt: "positive", ast.Lt: "negative", ast.GtE: "non_negative", ast.LtE: "non_positive",
              ast.Eq: "zero", ast.NotEq: "nonzero"}


def _words(expr: ast.AST) -> list[str]:
    if isinstance(expr, ast.Name):
        return [] if expr.id in MODULE_WORDS else [expr.id]
    if isinstance(expr, ast.Attribute):
        words = _words(expr.value)
        return words if expr.attr in MODULE_WORDS else [*words, expr.attr]
    if isinstance(expr, ast.Call):
        function = _words(expr.func)
        if isinstance(expr.func, ast.Attribute) and not _is_module(expr.func.value):
            return function  # a method: x.sum() -> x_sum
        first = _words(expr.args[0]) if expr.args else []
        return [*function[-1:], *first]  # jnp.linalg.norm(g) -> norm_g
    if isinstance(expr, ast.Subscript):
        return [*_words(expr.value), *_words(expr.slice)]
    if isinstance(expr, ast.Constant):
        if isinstance(expr.value, bool) or expr.value is None:
            return [str(expr.value).lower()]
        if isinstance(expr.value, int | float):
            return [str(expr.value).replace(".", "_").replace("-", "minus_")]
        return []
    if isinstance(expr, ast.UnaryOp):
        operand = _words(expr.operand)
        if isinstance(expr.op, ast.USub):
            return ["minus", *operand]
        if isinstance(expr.op, ast.Not):
            return ["not", *operand]
        return operand
    if isinstance(expr, ast.BinOp):
        return [*_words(expr.left), *_words(expr.right)]
    if isinstance(expr, ast.BoolOp):
        joiner = "and" if isinstance(expr.op, ast.And) else "or"
        words: list[str] = []
        for index, value in enumerate(expr.values):
            words.extend(([joiner] if index else []) + describe(value))
        return words
    if isinstance(expr, ast.Compare):
        return describe(expr)
    return []


def _is_module(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Name) and expr.id in MODULE_WORDS


def _is_zero(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value == 0 and not isinstance(expr.value, bool)


def describe(test: ast.AST, negate: bool = False) -> list[str]:
    """Words for a predicate (or its negation)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in COMPARISON_WORDS:
        op = type(test.ops[0])
        if negate:
            op = NEGATED[op]
        if _is_zero(test.comparators[0]):
            return [*_words(test.left), SIGN_WORDS[op]]
        return [*_words(test.left), COMPARISON_WORDS[op], *_words(test.comparators[0])]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return describe(test.operand, not negate)
    words = _words(test)
    return ["not", *words] if negate else words


def branch_name(test: ast.AST, negate: bool, taken: set[str]) -> str:
    """``_if_<predicate>``, unique among ``taken`` (which it is added to)."""
    words = [word for word in describe(test, negate) if word]
    if not words or len(words) > MAX_WORDS:
        words = ["false" if negate else "true"]
    return unique_name("_if_" + "_".join(words), taken)


def unique_name(name: str, taken: set[str]) -> str:
    name = re.sub(r"\W+", "_", name)
    name = re.sub(r"_{2,}", "_", name[1:])
    name = "_" + name.strip("_")
    if keyword.iskeyword(name):
        name += "_"
    candidate, number = name, 2
    while candidate in taken:
        candidate = f"{name}_{number}"
        number += 1
    taken.add(candidate)
    return candidate
