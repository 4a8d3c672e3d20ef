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
from typing import AbstractSet, Iterable, Protocol

MODULE_WORDS = frozenset({"jnp", "np", "jax", "lax", "numpy", "onp", "self", "linalg", "math"})
MAX_WORDS = 8
COMPARISON_WORDS = {ast.Gt: "gt", ast.Lt: "lt", ast.GtE: "ge", ast.LtE: "le", ast.Eq: "eq", ast.NotEq: "ne"}
NEGATED = {ast.Gt: ast.LtE, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.LtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
# `i % 2` reads as "i mod 2"; `a + b` as "a b" (short names matter more than every operator).
OPERATOR_WORDS = {ast.Mod: ["mod"], ast.FloorDiv: ["div"], ast.Div: ["div"], ast.Sub: ["minus"]}
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
            return [_number_word(expr.value)]
        return []
    if isinstance(expr, ast.UnaryOp):
        operand = _words(expr.operand)
        if isinstance(expr.op, ast.USub):
            return ["minus", *operand]
        if isinstance(expr.op, ast.Not):
            return ["not", *operand]
        return operand
    if isinstance(expr, ast.BinOp):
        return [*_words(expr.left), *OPERATOR_WORDS.get(type(expr.op), []), *_words(expr.right)]
    if isinstance(expr, ast.BoolOp):
        joiner = "and" if isinstance(expr.op, ast.And) else "or"
        joined: list[str] = []
        for index, value in enumerate(expr.values):
            joined.extend(([joiner] if index else []) + describe(value))
        return joined
    if isinstance(expr, ast.Compare):
        if len(expr.ops) == 1:
            return describe(expr)
        words = _words(expr.left)
        for op, right in zip(expr.ops, expr.comparators):
            words += [COMPARISON_WORDS.get(type(op), "vs"), *_words(right)]
        return words
    if isinstance(expr, ast.NamedExpr):
        return _words(expr.target)
    return []


def _number_word(value: int | float) -> str:
    """1 -> "1", 1.0 -> "1", 0.5 -> "0_5", 1e-6 -> "1e_6"."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e6:
        value = int(value)
    text = repr(value).replace("-", "minus_")
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e_{exponent.lstrip('+').replace('minus_', '').lstrip('0')}"
    return text.replace(".", "_")


def _is_module(expr: ast.AST) -> bool:
    """``jnp`` or ``jnp.linalg``: a module path, not a value whose method is called."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in MODULE_WORDS and _is_module(expr.value)
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
    if isinstance(test, ast.BoolOp):
        # not (a or b) reads as "not a and not b"
        is_and = isinstance(test.op, ast.And) != negate
        words = []
        for index, value in enumerate(test.values):
            words.extend((["and" if is_and else "or"] if index else []) + describe(value, negate))
        return words
    words = _words(test)
    return ["not", *words] if negate else words


class NameSet(Protocol):
    """The names a new name must not be (a ``set[str]``, or ``TakenNames``); it is added."""

    def __contains__(self, name: object) -> bool: ...

    def add(self, name: str) -> None: ...


class TakenNames:
    """The names taken in a function: its own and those it adds, over the module's, which
    are shared by every function and never copied (a copy per function grows with the square
    of a module's length)."""

    def __init__(self, module: AbstractSet[str], own: Iterable[str]):
        self.module = module
        self.own = set(own)

    def __contains__(self, name: object) -> bool:
        return name in self.own or name in self.module

    def add(self, name: str) -> None:
        self.own.add(name)


def branch_name(test: ast.AST, negate: bool, taken: NameSet) -> str:
    """``_if_<predicate>``, unique among ``taken`` (which it is added to)."""
    words = [word for word in describe(test, negate) if word]
    if not words or len(words) > MAX_WORDS:
        words = ["not", "condition"] if negate else ["condition"]
    return unique_name("_if_" + "_".join(words), taken)


def case_name(selector: ast.expr, value: ast.expr, taken: NameSet) -> str:
    """A switch's branch for ``selector == value``: ``_if_kind_eq_0``."""
    return unique_name("_if_" + "_".join([*_selector_words(selector), "eq", *_words(value)]), taken)


def default_name(selector: ast.expr, taken: NameSet) -> str:
    """A switch's default branch, after its cases: ``_if_kind_other``."""
    return unique_name("_if_" + "_".join([*_selector_words(selector), "other"]), taken)


def _selector_words(selector: ast.expr) -> list[str]:
    """``kind``; ``case`` for a selector too long (or without words) to read as a name."""
    words = [word for word in _words(selector) if word]
    return words if 0 < len(words) < MAX_WORDS else ["case"]


def unique_name(name: str, taken: NameSet) -> str:
    """A valid identifier like ``name`` (leading underscore kept) not in ``taken``; added to it."""
    lead = "_" if name.startswith("_") else ""
    name = lead + re.sub(r"_{2,}", "_", re.sub(r"\W+", "_", name)).strip("_")
    if keyword.iskeyword(name) or not name.isidentifier():
        name += "_"
    candidate, number = name, 2
    while candidate in taken:
        candidate = f"{name}_{number}"
        number += 1
    taken.add(candidate)
    return candidate
