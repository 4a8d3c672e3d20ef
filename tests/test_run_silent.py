"""`jitfix run` sees silent failures: a jitted function that returns otherwise under jit than
with jit disabled, with nothing raised, found by comparing the two runs call by call -- and
the value it reads that explains the difference (jitfix/silent.py, run_hook._Watch)."""

from __future__ import annotations

import sys
from pathlib import Path

from typer.testing import CliRunner

from jitfix.cli import app
from jitfix.silent import LOST, STALE, same, silent_differences, unstable

# Three silent failures of real code's shapes: a bound method jitted whose instance changes
# after the trace, a global PRNG key split in a helper reached through a table (the split
# leaks a tracer), and a NumPy
# generator passed as a static argument (it draws once, at trace time).
STATEFUL = '''import functools

import jax
import jax.numpy as jnp
import numpy as np

_KEY = None


class Scaler:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, y):
        return self.scale * jnp.sin(y)


def next_key():
    global _KEY
    if _KEY is None:
        _KEY = jax.random.PRNGKey(0)
    _KEY, subkey = jax.random.split(_KEY)
    return subkey


def normal(shape):
    return jax.random.normal(next_key(), shape)


SAMPLERS = {"normal": normal}


@jax.jit
def noise():
    return SAMPLERS["normal"]((3,))


@functools.partial(jax.jit, static_argnames=("rng",))
def resampled_mean(data, rng):
    return data[rng.integers(0, data.shape[0], size=4)].mean()


def main():
    scaler = Scaler(1.0)
    apply = jax.jit(scaler.apply)
    y = jnp.linspace(0.0, 1.0, 4)
    outputs = [apply(y)]
    scaler.scale = 3.0
    outputs.append(apply(y))
    outputs.append(scaler.apply(2 * y))  # (called with arguments eagerly too: its body stays unjitted)
    outputs += [noise(), noise()]
    rng = np.random.default_rng(0)
    data = jnp.arange(8.0)
    outputs += [resampled_mean(data, rng), resampled_mean(data, rng)]
    return outputs


main()
'''


def run(root: Path, script: str):
    return CliRunner().invoke(app, ["run", "--no-color", "--no-validate", "--root", str(root), "--",
                                    sys.executable, script])


def test_silent_failures_are_found_by_comparison_with_their_causes(tmp_path: Path) -> None:
    (tmp_path / "stateful.py").write_text(STATEFUL)
    result = run(tmp_path, "stateful.py")
    assert result.exit_code == 1, result.output  # nothing raised, yet the program computes otherwise
    assert "2 jitted function(s) compute otherwise under jit, with nothing raised:" in result.stderr, result.output
    assert ("stateful.py:14: `apply` returns otherwise under jit than with jit disabled, first at its call 2 "
            "([0, 0.3272, 0.6184, ...] (sum 1.78704) under jit, [0, 0.9816, 1.855, ...] (sum 5.36111) with jit "
            "disabled); it reads `self.scale` at line 15, which changed after jit traced it (1 at call 1, 3 at "
            "call 2)") in result.stderr
    assert ("stateful.py:33: `noise` returns otherwise under jit than with jit disabled, first at its call 2"
            in result.stderr)
    assert "`_KEY`, read at line 20, holds a tracer before call 2 under jit" in result.stderr
    # The generator's draw is not only found: it is drawn at each call and passed in (JF402).
    assert "return _resampled_mean(data, rng, integers=rng.integers(0, data.shape[0], size=4))" in result.output
    assert (tmp_path / "stateful.py").read_text() == STATEFUL


# The twin: the same shapes, correct under jit. The instance is passed in as a pytree leaf's
# value, the key is threaded, the global is a constant; the program also draws from an
# unseeded generator outside jit (its output differs from run to run, with jit or without).
CORRECT = '''import jax
import jax.numpy as jnp
import numpy as np

SCALE = 2.0


@jax.jit
def apply(scale, y):
    return scale * jnp.sin(y) + SCALE


@jax.jit
def noise(key):
    key, subkey = jax.random.split(key)
    return key, jax.random.normal(subkey, (3,))


@jax.jit
def summed(x):
    return (x * 0.1).sum() / 3.0


def main():
    y = jnp.linspace(0.0, 1.0, 4)
    outputs = [apply(1.0, y), apply(3.0, y)]
    key = jax.random.PRNGKey(0)
    for _ in range(3):
        key, drawn = noise(key)
        outputs.append(drawn)
    outputs.append(summed(jnp.asarray(np.random.default_rng().normal(size=1000), dtype=jnp.float32)))
    return outputs


main()
'''


def test_correct_stateful_code_shows_no_silent_failure(tmp_path: Path) -> None:
    (tmp_path / "correct.py").write_text(CORRECT)
    result = run(tmp_path, "correct.py")
    assert result.exit_code == 0, result.output
    assert "compute otherwise" not in result.stderr


def entry(call: int, result: list, reads: dict, function: str = "f", line: int = 3) -> dict:
    return {"kind": "result", "file": "/project/model.py", "line": line, "function": function, "call": call,
            "result": result, "reads": reads}


def number(value: float) -> list:
    return ["number", [], [value], value, abs(value)]


SOURCE = '''import jax

step = 0


@jax.jit
def f(x):
    return x * WEIGHT


for step in range(3):
    f(step)
'''


def test_a_changed_value_is_a_cause_only_where_the_source_reads_it() -> None:
    eager = [entry(0, [number(1.0)], {"WEIGHT": number(1.0), "step": number(0.0)}, line=6),
             entry(1, [number(2.0)], {"WEIGHT": number(2.0), "step": number(1.0)}, line=6)]
    jitted = [entry(0, [number(1.0)], {"WEIGHT": number(1.0), "step": number(0.0)}, line=6),
              entry(1, [number(1.0)], {"WEIGHT": number(2.0), "step": number(1.0)}, line=6)]
    [found] = silent_differences(eager, jitted, lambda path: SOURCE)
    assert found.call == 1 and found.difference == "1 under jit, 2 with jit disabled"
    # `step` changed too, but only the module's own loop reads it: not the trace's doing.
    assert [(cause.kind, cause.path, cause.line) for cause in found.causes] == [(STALE, "WEIGHT", 8)]


def test_a_value_that_differs_between_the_runs_before_the_call_is_lost_state() -> None:
    source = "class Counter:\n    @jax.jit\n    def count(self):\n        self.n += 1\n        return self.n\n"
    eager = [entry(0, [number(1.0)], {"self.n": number(0.0)}, "count", 2),
             entry(1, [number(2.0)], {"self.n": number(1.0)}, "count", 2)]
    jitted = [entry(0, [number(1.0)], {"self.n": number(0.0)}, "count", 2),
              entry(1, [number(1.0)], {"self.n": ["tracer", "int32[]"]}, "count", 2)]
    [found] = silent_differences(eager, jitted, lambda path: source)
    assert [(cause.kind, cause.path, cause.then) for cause in found.causes] == [(LOST, "self.n", "a tracer")]


def test_results_within_the_tolerance_of_float_reassociation_are_the_same() -> None:
    assert same(["number", [3], [0.1, 0.2, 0.3], 0.6, 0.6], ["number", [3], [0.1, 0.2, 0.30000003], 0.60000004, 0.6])
    assert not same(["number", [3], [0.1, 0.2, 0.3], 0.6, 0.6], ["number", [3], [0.1, 0.2, 0.4], 0.7, 0.7])
    assert not same(number(1.0), ["tracer", "float32[]"])
    assert same(["number", [], [float("nan")], float("nan"), float("nan")], number(float("nan")))


def test_a_function_whose_results_differ_between_two_eager_runs_is_not_reported() -> None:
    eager = [entry(0, [number(0.3)], {})]
    again = [entry(0, [number(0.7)], {})]
    jitted = [entry(0, [number(0.5)], {})]
    found = silent_differences(eager, jitted, lambda path: None)
    assert len(found) == 1 and unstable(found, eager, again) == []


def test_a_global_changed_from_another_module_is_passed_in_once_the_run_sees_it_go_stale(tmp_path: Path) -> None:
    """`check` cannot see `main.py` change `model.SCALE`; the run sees `scaled` return the same
    after the change, and the value that changed: JF301 then passes it in, and the rerun agrees."""
    (tmp_path / "model.py").write_text("import jax\n\nSCALE = 1.0\n\n\n@jax.jit\ndef scaled(x):\n    return x * SCALE\n")
    (tmp_path / "main.py").write_text("import jax.numpy as jnp\n\nimport model\n\nx = jnp.ones(2)\n"
                                      "print(model.scaled(x))\nmodel.SCALE = 2.0\nprint(model.scaled(x))\n")
    assert CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path)]).exit_code == 0  # nothing provable
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert "  model.py:6 `scaled` computed otherwise under jit (it read `SCALE` as it was when traced) -> JF301\n" \
        in result.stderr
    assert "model.py: scaled passed (1 input)" in result.stderr
    assert "compute otherwise" not in result.stderr and "output differs" not in result.stderr
    assert (tmp_path / "model.py").read_text() == (
        "import jax\n\nSCALE = 1.0\n\n\n@jax.jit\ndef _scaled(x, *, SCALE):\n    return x * SCALE\n\n\n"
        "def scaled(x):\n    return _scaled(x, SCALE=SCALE)\n")


CHECKED = '''import jax
import jax.numpy as jnp


@jax.jit
def update(w, g, lr):
    assert jnp.all(jnp.isfinite(g)), f"non-finite gradient: {g}"
    return w - lr * g


w = jnp.ones(3)
for step in range(3):
    w = update(w, jnp.full(3, 0.5), 0.1)
print(w)
'''


def test_a_checkified_jit_is_compared_by_what_its_callers_get(tmp_path: Path) -> None:
    """A check staged with checkify: the jitted function returns `(error, result)` and the
    helper that raises the error returns `result`, which is what the eager run's function
    returned: no silent difference is claimed."""
    (tmp_path / "train.py").write_text(CHECKED)
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "train.py"])
    assert result.exit_code == 0, result.output
    assert "-> JF105" in result.stderr
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "compute otherwise under jit" not in result.stderr
