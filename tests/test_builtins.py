"""JF604's unsafe fixes (jnp.maximum, jnp.max, jnp.min) still compute what the built-ins do."""

from __future__ import annotations

from fixture_support import FIXTURES, assert_same_results, exec_module, load, run_samples

from jitfix.config import Settings
from jitfix.engine import Options, process_text

SAMPLES = '\nSAMPLES = [("peak", (jnp.array([1.0, -2.0, 3.0]),), {}), ("peak", (jnp.array([-1.0, -2.0, -3.0]),), {})]\n'


def test_unsafe_reductions_run_like_the_builtins() -> None:
    fixture = load(FIXTURES / "arrays" / "builtin_reductions_unsafe.py")
    result = process_text("peak.py", fixture.source, Settings(), Options(apply_fixes=True, unsafe_fixes=True))
    assert result.findings == []
    assert "jnp.maximum(jnp.maximum(xs[0], xs[1]), 0.0)" in result.new_text
    assert "jnp.max(xs * 2) + jnp.min(jnp.stack([xs[0], xs[-1]]))" in result.new_text
    reference = run_samples(exec_module(fixture.source + SAMPLES, "original", eager=True), eager=True)
    rewritten = run_samples(exec_module(result.new_text + SAMPLES, "rewritten"), eager=False)
    assert len(reference) == len(rewritten) == 2
    for index, ((want, _), (got, _)) in enumerate(zip(reference, rewritten)):
        assert_same_results(want, got, f"peak sample {index}", False, False)
