"""loop-strategy: "lax" converts traced range loops, "static" makes their bounds static
arguments of the jit instead, "auto" does that where the function is differentiated."""

from __future__ import annotations

import textwrap
from pathlib import Path

from fixture_support import assert_same_results, exec_module, run_samples
from helpers import invoke

MODULE = textwrap.dedent(
    """
    from functools import partial

    import jax
    import jax.numpy as jnp


    @jax.jit
    def power(x, n):
        result = jnp.ones_like(x)
        for i in range(n):
            result = result * x
        return result


    @partial(jax.jit, static_argnames="mode")
    def shifted(x, n, mode):
        for i in range(1, n):
            x = x + i
        return x


    def loss(w, n):
        total = 0.0
        for i in range(n):
            total = total + w * i
        return total


    grad_loss = jax.jit(jax.grad(loss))

    SAMPLES = [("power", (jnp.array(2.0), 3), {}), ("shifted", (jnp.array(0.0), 4, "a"), {}),
               ("grad_loss", (jnp.array(1.5), 4), {})]
    """
)


def _fix(tmp_path: Path, strategy: str | None, *flags: str) -> str:
    if strategy:
        (tmp_path / "pyproject.toml").write_text(f'[tool.jitfix]\nloop-strategy = "{strategy}"\n')
    path = tmp_path / "model.py"
    path.write_text(MODULE)
    invoke("fix", *flags, str(path))
    return path.read_text()


def test_static_strategy_adds_static_argnames_and_keeps_the_loops(tmp_path: Path) -> None:
    fixed = _fix(tmp_path, "static")
    assert '@partial(jax.jit, static_argnames=("n",))\ndef power' in fixed
    assert '@partial(jax.jit, static_argnames=("n", "mode"))\ndef shifted' in fixed
    assert 'grad_loss = jax.jit(jax.grad(loss), static_argnames=("n",))' in fixed
    assert "fori_loop" not in fixed and fixed.count("for i in range(") == 3
    _assert_runs_like_the_original(fixed)


def test_lax_strategy_converts_every_loop_it_can(tmp_path: Path) -> None:
    fixed = _fix(tmp_path, "lax")
    assert fixed.count("lax.fori_loop(") == 3 and "static_argnames=(" not in fixed


def test_auto_strategy_makes_differentiated_bounds_static_only_as_an_unsafe_fix(tmp_path: Path) -> None:
    fixed = _fix(tmp_path, None)
    assert fixed.count("lax.fori_loop(") == 2  # power and shifted are not differentiated
    assert "jax.jit(jax.grad(loss))" in fixed  # the static fix for loss needs --unsafe-fixes
    unsafe = _fix(tmp_path, None, "--unsafe-fixes")
    assert 'jax.jit(jax.grad(loss), static_argnames=("n",))' in unsafe
    _assert_runs_like_the_original(unsafe)


def test_unknown_strategy_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jitfix]\nloop-strategy = "fast"\n')
    (tmp_path / "m.py").write_text("import jax\n")
    result = invoke("check", str(tmp_path / "m.py"))
    assert result.exit_code == 2 and "loop-strategy must be one of auto, lax, static" in result.stderr


def _assert_runs_like_the_original(fixed: str) -> None:
    reference = run_samples(exec_module(MODULE, "original", eager=True), eager=True)
    rewritten = run_samples(exec_module(fixed, "rewritten"), eager=False)
    for index, ((want, _), (got, _)) in enumerate(zip(reference, rewritten)):
        assert_same_results(want, got, f"sample {index}")
