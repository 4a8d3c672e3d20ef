"""Which expressions the analysis knows to be one value, not a container of values (what a
cast `jnp.asarray(v, dtype)` keeps as it is): what a function uses as an operand of
arithmetic, and, since a list or tuple plus a number or an array raises, a side of `+` whose
other side is one value."""

from __future__ import annotations

import ast

from jitfix.analysis.values import ArrayEvidence


def _evidence(source: str) -> ArrayEvidence:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return ArrayEvidence(function)


def _one(evidence: ArrayEvidence, text: str) -> bool:
    return evidence.one_value(ast.parse(text, mode="eval").body)


def test_a_side_of_a_sum_with_one_value_is_one_value_in_any_order() -> None:
    # `t[1]` is known through `t[0]`, which is known through `c` only further down.
    evidence = _evidence("def f(t, c, u):\n    total = t[0] + t[1]\n    shifted = t[0] + c\n"
                         "    ok = c < 1\n    more = u + 1\n    return total, shifted, ok, more\n")
    assert all(_one(evidence, text) for text in ("t[0]", "t[1]", "c", "u"))


def test_a_sum_with_a_string_or_an_unknown_side_says_nothing() -> None:
    evidence = _evidence("def f(name, a, b):\n    label = name + '_x'\n    joined = a + b\n"
                         "    return label, joined\n")
    assert not any(_one(evidence, text) for text in ("name", "a", "b"))
