"""What the code alone proves of arrays' ranks and dtypes (analysis/static_arrays.py)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jitfix.analysis.imports import ImportTable
from jitfix.analysis.scopes import Scopes
from jitfix.analysis.static_arrays import StaticArrays
from jitfix.analysis.values import ArrayEvidence


def facts_of(source: str, public_callers: bool = False) -> tuple[StaticArrays, ast.Module]:
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    evidence: dict[int, ArrayEvidence] = {}
    facts = StaticArrays(Scopes(tree, source), ImportTable(tree, source),
                         lambda function: evidence.setdefault(id(function), ArrayEvidence(function)).bindings,
                         public_callers)
    return facts, tree


def returned(tree: ast.Module, name: str) -> tuple[ast.expr, ast.FunctionDef]:
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name)
    value = next(node for node in ast.walk(function) if isinstance(node, ast.Return)).value
    assert value is not None
    return value, function


@pytest.mark.parametrize("expression, rank", [
    ("x", ("x", 0)), ("x[0]", ("x", -1)), ("x[:, None]", ("x", 1)), ("x[..., 0] > 1", ("x", -1)),
    ("jnp.zeros((3, 4))", (None, 2)), ("jnp.ones(x.shape) * 2", ("x", 0)), ("x.reshape(-1, 4)", (None, 2)),
    ("x.ravel()", (None, 1)), ("x.sum(axis=1)", ("x", -1)), ("x.sum()", (None, 0)), ("x + y", None),
    ("jnp.arange(5)[None, :] < 3", (None, 2)), ("x[y]", None), ("x @ x", None),
])
def test_rank_of_an_expression(expression: str, rank) -> None:
    facts, tree = facts_of(f"import jax.numpy as jnp\n\ndef f(x, y):\n    return {expression}\n")
    assert facts.rank(*returned(tree, "f")) == rank


def test_a_name_holds_what_either_arm_of_an_if_bound_last() -> None:
    facts, tree = facts_of("""
        import jax.numpy as jnp

        def f(x, flag):
            if flag:
                x = jnp.repeat(x, 3)
            else:
                x = x.reshape(-1)
            return x

        def g(x, flag):
            if flag:
                x = x[0]
            return x
        """)
    assert facts.rank(*returned(tree, "f")) == (None, 1)
    assert facts.rank(*returned(tree, "g")) is None  # the parameter itself, or one axis fewer


def test_a_private_helper_takes_what_every_call_gives_a_public_one_only_when_asked() -> None:
    source = """
        import jax.numpy as jnp

        def _helper(x, value):
            return x

        def helper(x, value):
            return x

        def _fill(value):
            return value

        def fill(value):
            return value

        def caller(q):
            scores = q / 2.0
            return _helper(scores.reshape(-1, 3), -1e6), helper(scores.reshape(-1, 3), -1e6), _fill(-1e6), fill(-1e6)
        """
    facts, tree = facts_of(source)
    for name, known in (("_helper", True), ("helper", False)):
        value, function = returned(tree, name)
        assert (facts.rank(value, function) == (None, 2)) is known
        assert facts.inexact(value, function) is known
        number = facts.number(*returned(tree, name.replace("helper", "fill")))
        assert (number is not None and number.value == 1e6) is known
    public, tree = facts_of(source, public_callers=True)
    assert public.rank(*returned(tree, "helper")) == (None, 2)


@pytest.mark.parametrize("expression, inexact", [
    ("x / 2", True), ("x * 0.5", True), ("jnp.std(x)", True), ("jnp.zeros(3)", True), ("x + 1", False),
    ("jnp.zeros(3, dtype=jnp.int32)", False), ("x // 2", False), ("x.mean()", True), ("jnp.abs(x / 3)", True),
])
def test_what_is_certainly_inexact(expression: str, inexact: bool) -> None:
    facts, tree = facts_of(f"import jax.numpy as jnp\n\ndef f(x):\n    return {expression}\n")
    assert facts.inexact(*returned(tree, "f")) is inexact
