"""JF503's fix (a static argument made traced) and the proofs behind JF503's and JF504's fixes,
run: the fixed code under jit equals the original run eagerly, and what must stay static or
unpadded is left with the reason."""

from __future__ import annotations

import ast

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from fixture_support import exec_module
from jitfix.analysis.elementwise import row_wise, traceable
from jitfix.analysis.imports import ImportTable
from jitfix.config import Settings
from jitfix.engine import Options, process_text

STATIC_PER_PASS = '''
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="k")
def decay(x, k):
    rate = 0.5 ** k
    rate += 1
    return x * rate + jnp.sin(k * 0.25), k > 2


def _shift(x, k, m):
    return (x + k) * m


shift = jax.jit(_shift, static_argnums=(1, 2))


def run(x, n):
    flags = []
    for k in range(n):
        x, flag = decay(x, k)
        flags.append(flag)
        x = shift(x, k, 2.0)
    return x, flags
'''


def test_a_static_argument_that_only_enters_arithmetic_is_traced_and_computes_the_same() -> None:
    result = process_text("m.py", STATIC_PER_PASS, Settings(), Options(apply_fixes=True, unsafe_fixes=True))
    fixed = result.new_text
    assert fixed is not None
    assert "@jax.jit\ndef decay" in fixed and "from functools import partial" not in fixed
    assert "shift = jax.jit(_shift, static_argnums=(2,))" in fixed  # m is not the loop's: it stays
    safe_only = process_text("m.py", STATIC_PER_PASS, Settings(), Options(apply_fixes=True)).new_text
    assert safe_only in (None, STATIC_PER_PASS)  # the fix is unsafe: not applied by default
    original, rewritten = exec_module(STATIC_PER_PASS, "static_original"), exec_module(fixed, "static_fixed")
    for n in (0, 1, 4):
        x = jnp.linspace(-1.0, 1.0, 3)
        with jax.disable_jit():
            want = original.run(x, n)
        got = rewritten.run(x, n)
        assert jax.tree.structure(want) == jax.tree.structure(got)
        for a, b in zip(jax.tree.leaves(want), jax.tree.leaves(got)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    assert rewritten.decay._cache_size() == 1  # one compilation served every value of k


def _function(source: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    function = tree.body[-1]
    assert isinstance(function, ast.FunctionDef)
    return function


def _imports(source: str) -> ImportTable:
    return ImportTable(ast.parse(source))


HEADER = "import jax\nimport jax.numpy as jnp\n"


@pytest.mark.parametrize(("body", "reason"), [
    ("return jnp.zeros(k) + x", "jnp.zeros(k)"),  # a shape
    ("if k > 2:\n        return x\n    return -x", "`if` statement"),  # a Python branch
    ("return x[:k]", "x[:k]"),  # a slice bound
    ("return helper(x, k)", "helper(x, k)"),  # code jitfix does not know
    ("return x * float(k)", "float(k)"),  # a Python conversion
    ("return [x] == k", "[x]"),  # `==` of a list answers otherwise than of an array
    ("return jnp.sum(x, axis=k)", "jnp.sum"),  # a static parameter of a JAX function
    ("y = [k]\n    return x + y[0]", "[k]"),  # held in a container
    ("return x + m", None),  # never reads k: nothing changes
    ("return x * k ** 2 - jnp.maximum(k, 1.0)", None),
])
def test_what_keeps_a_static_argument_static(body: str, reason: str | None) -> None:
    source = HEADER + f"def f(x, k, m):\n    {body}\n"
    function = _function(source)

    def traced_operand(node: ast.expr, statement: ast.stmt, must_be_array: bool) -> bool:
        return isinstance(node, ast.Name) and node.id == "x" and not must_be_array

    why = traceable(function, "k", _imports(source), traced_operand)
    if reason is None:
        assert why is None
    else:
        assert why is not None and reason in why, why


@pytest.mark.parametrize(("body", "padded"), [
    ("return jnp.tanh(x) * 2.0 - 1 / (1.0 + x ** 2)", True),
    ("y = x * 3\n    y -= 1\n    return jnp.where(y > 0, y, 0.0)", False),  # where: not in the catalogue's list
    ("return x.sum()", False),  # a reduction sees the padding
    ("return jnp.cumsum(x)", False),  # each row reads the rows before it
    ("return x @ x.T", False),
    ("return x * SCALE", False),  # a name whose value jitfix does not know: maybe a vector
    ("return (x, x)", False),
])
def test_what_computes_row_by_row(body: str, padded: bool) -> None:
    source = HEADER + f"def f(x):\n    {body}\n"
    assert (row_wise(_function(source), "x", _imports(source)) is None) == padded


def test_a_run_that_saw_a_static_argument_change_is_evidence_without_a_loop(tmp_path) -> None:
    """`jitfix profile --fix` passes what the run saw (Settings.recompiled_static): the static
    argument is reported at its jit, and made traced where the function allows it."""
    source = ("from functools import partial\n\nimport jax\n\n\n@partial(jax.jit, static_argnames=\"k\")\n"
              "def decay(x, k):\n    return x * 0.9**k\n")
    path = tmp_path / "model.py"
    path.write_text(source, encoding="utf-8")
    assert not process_text(str(path), source, Settings(), Options()).findings  # no loop here: nothing to say
    seen = Settings(recompiled_static=((str(path.resolve()), 6, "decay", "k", 7),))
    result = process_text(str(path), source, seen, Options(apply_fixes=True, unsafe_fixes=True))
    assert [f.code for f in result.fixed] == ["JF503"]
    assert "compiled again for each new value of its static argument `k` in a run (7 values)" in result.fixed[0].message
    assert "@jax.jit\ndef decay(x, k):" in (result.new_text or "")
    other = Settings(recompiled_static=((str(path.resolve()), 6, "decay", "x", 7),))  # not a static argument
    assert not process_text(str(path), source, other, Options()).findings
