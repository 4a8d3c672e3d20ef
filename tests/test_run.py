"""`jitfix run -- COMMAND`: failures a run shows are fixed, also where the static analysis
alone cannot prove the values traced, and the command is run again to prove it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jitfix.analysis.observations import Observation
from jitfix.cli import app
from jitfix.run import _reason

MODEL = '''import jax.numpy as jnp


def relu_or_leak(x, slope):
    if x.mean() > 0:
        return jnp.maximum(x, 0.0)
    return x * slope


def count_steps(x):
    n = 0
    while x.sum() > 1.0:
        x = x / 2
        n += 1
    return n
'''
# The jit is applied through a dict lookup: no analysis of the source can tell what it traces.
MAIN = '''import jax
import jax.numpy as jnp

import model

REGISTRY = {"act": model.relu_or_leak, "steps": model.count_steps}


def compiled(name):
    return jax.jit(REGISTRY[name])


if __name__ == "__main__":
    x = jnp.array([1.0, -2.0, 3.0])
    print(compiled("act")(x, 0.1))
    print(compiled("act")(-x, 0.1))
    print(compiled("steps")(x * 8))
'''


def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "main.py").write_text(MAIN)
    return tmp_path


def test_failures_seen_in_a_run_are_fixed_and_the_run_then_agrees(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert CliRunner().invoke(app, ["check", "--no-cache", str(root)]).exit_code == 0  # nothing provable

    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(root), "--", sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert "model.py:5 TracerBoolConversionError in relu_or_leak (slope: float32[], x: float32[3]) -> JF101" in result.stderr
    assert "model.py:12 TracerBoolConversionError in count_steps (x: float32[3]) -> JF202" in result.stderr
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "+    return lax.cond(x.mean() > 0" in result.stdout
    # Each rewrite validated with the arguments of the eager run, and the failure it removed.
    assert "model.py: relu_or_leak passed (1 input); removed TracerBoolConversionError at line 5" in result.stderr
    assert "model.py: count_steps passed (1 input); removed TracerBoolConversionError at line 12" in result.stderr
    assert (root / "model.py").read_text() == MODEL  # nothing written without --write
    # How the jitted functions of the last run compiled (jitting one function twice reuses
    # its compilation: jit caches by the function jitted). Lines are of the fixed files.
    # What each was given: arrays as jit sees them, Python values as passed.
    assert "relu_or_leak (model.py:5): 2 calls, 1 compiles; given x: float32[3]; slope: float 0.1\n" in result.stderr
    assert "count_steps (model.py:17): 1 calls, 1 compiles; given x: float32[3]\n" in result.stderr


def test_write_puts_the_proven_fixes_in_place(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = CliRunner().invoke(app, ["run", "--write", "--no-validate", "--no-color", "--root", str(root), "--",
                                      sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    fixed = (root / "model.py").read_text()
    assert "lax.while_loop" in fixed and "lax.cond" in fixed
    namespace: dict = {}
    exec(compile(fixed, "model.py", "exec"), namespace)
    import jax
    import jax.numpy as jnp

    x = jnp.array([1.0, -2.0, 3.0])
    assert float(jax.jit(namespace["count_steps"])(x * 8)) == 4


def test_an_in_place_update_seen_in_a_run_is_fixed_with_unsafe_fixes(tmp_path: Path) -> None:
    (tmp_path / "bump.py").write_text("def bump(x, i):\n    x[i] = x[i] + 1.0\n    return x\n")
    (tmp_path / "main.py").write_text("import jax\nimport jax.numpy as jnp\n\nimport bump\n\n"
                                      "f = {'bump': bump.bump}['bump']\nprint(jax.jit(f)(jnp.ones(3), 1))\n")
    arguments = ["run", "--no-color", "--no-validate", "--root", str(tmp_path), "--", sys.executable, "main.py"]
    safe_only = CliRunner().invoke(app, arguments)
    assert "bump.py:2 TypeError (JAX arrays are immutable) in bump (i: int32[], x: float32[3]) -> no fix" in safe_only.stderr
    assert safe_only.exit_code == 1
    result = CliRunner().invoke(app, [arguments[0], "--unsafe-fixes", *arguments[1:]])
    assert "-> JF603" in result.stderr and "now succeeds" in result.stderr, result.output
    assert "+    x = x.at[i].set(x[i] + 1.0)" in result.stdout
    assert result.exit_code == 0


def test_a_command_that_fails_with_jit_disabled_too_is_refused(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text("import jax.numpy as jnp\n\nraise SystemExit(3)\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "--",
                                      sys.executable, "boom.py"])
    assert result.exit_code == 2
    assert "reference (JAX_DISABLE_JIT=1): exit 3" in result.stderr
    assert "the command fails with jit disabled too (exit 3" in result.stderr
    assert "nothing fixed, nothing written" in result.stderr
    assert CliRunner().invoke(app, ["run", "--root", str(tmp_path)]).exit_code == 2  # no command


def test_a_command_that_hangs_is_stopped(tmp_path: Path) -> None:
    (tmp_path / "hang.py").write_text("import time\n\ntime.sleep(120)\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--timeout", "3", "--root", str(tmp_path), "--",
                                      sys.executable, "hang.py"])
    assert result.exit_code == 2
    assert "reference (JAX_DISABLE_JIT=1): stopped after --timeout 3 s" in result.stderr
    assert "runs past --timeout even with jit disabled" in result.stderr


# Jitted through a table: only the run shows that `step` is traced, and its print then runs
# once, at trace time, printing a tracer instead of each step's loss.
PRINTING_MODEL = '''import jax.numpy as jnp


def step(x):
    loss = jnp.sum(x**2)
    print("loss", loss)
    return x - 0.25 * x
'''
PRINTING_MAIN = '''import jax
import jax.numpy as jnp

import model

TABLE = {"step": model.step}
update = jax.jit(TABLE["step"])
x = jnp.ones(3)
for _ in range(3):
    x = update(x)
print(x)
'''


def test_what_prints_otherwise_under_jit_is_fixed_in_the_functions_the_run_jitted(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(PRINTING_MODEL)
    (tmp_path / "main.py").write_text(PRINTING_MAIN)
    assert CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path)]).exit_code == 0  # nothing provable
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert '+    jax.debug.print("loss {loss!s}", loss=loss)' in result.stdout
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "output differs" not in result.stderr  # each step's loss, as the eager run prints it
    assert "model.py: step passed" in result.stderr


def test_static_arguments_of_a_jit_the_run_saw_stay_python_values(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("def scale(x, n):\n    if n > 2:\n        return x * n\n    return x\n")
    (tmp_path / "main.py").write_text("import jax\nimport jax.numpy as jnp\n\nimport model\n\n"
                                      "f = jax.jit({'s': model.scale}['s'], static_argnums=1)\n"
                                      "print(f(jnp.ones(2), 3), f(jnp.ones(2), 1))\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert "0 file(s) fixed" in result.stderr and result.stdout == ""


SMOOTH = '''import jax
import jax.numpy as jnp


@jax.jit
def smooth(x, passes):
    for _ in range(passes):
        x = (x + jnp.roll(x, 1)) / 2
    if passes > 2:
        x = x * 2
    return x
'''


@pytest.mark.parametrize(("values", "fixed"), [
    ((0, 1, 3), '@partial(jax.jit, static_argnames=("passes",))\n'),  # always a Python int, few values: static
    (tuple(range(6)), "lax.fori_loop(0, passes, _loop_body, jnp.asarray(x, x_dtype))"),  # a new value each call: staged
])
def test_an_argument_the_run_saw_always_a_python_value_is_made_static(tmp_path: Path, values: tuple[int, ...],
                                                                       fixed: str) -> None:
    (tmp_path / "model.py").write_text(SMOOTH)
    (tmp_path / "main.py").write_text(f"import jax.numpy as jnp\nfrom model import smooth\n\n"
                                      f"for passes in {values}:\n    print(smooth(jnp.arange(4.0), passes))\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-validate", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert "model.py:7 TracerIntegerConversionError in smooth (passes: int32[], x: float32[4])" in result.stderr
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "output differs" not in result.stderr  # every value, every branch, as the eager run printed it
    written = (tmp_path / "model.py").read_text()
    assert fixed in written
    assert ("lax.cond" in written) == ("fori_loop" in written)  # `if passes > 2` follows the same choice
    assert "passes: " + ", ".join(f"int {value}" for value in values[:4]) in result.stderr


def test_a_notebook_runs_cell_by_cell_and_its_cells_are_fixed(tmp_path: Path) -> None:
    import json

    cells = [("import jax\nimport jax.numpy as jnp", None),
             ("def clip_or_keep(x):\n    if x.max() > 1.0:\n        return jnp.clip(x, 0.0, 1.0)\n    return x", None),
             ("%matplotlib inline\nTABLE = {'clip': clip_or_keep}\nf = jax.jit(TABLE['clip'])\n"
              "print(f(jnp.array([0.5, 2.0])), f(jnp.array([0.5, 0.25])))", None)]
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
                           "outputs": [], "source": source} for i, (source, _) in enumerate(cells)],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook, indent=1) + "\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "nb.ipynb"])
    assert result.exit_code == 0, result.output
    assert "nb.ipynb:cell 2:2 TracerBoolConversionError in clip_or_keep (x: float32[2]) -> JF101" in result.stderr
    fixed = json.loads((tmp_path / "nb.ipynb").read_text())
    assert "lax.cond(x.max() > 1.0" in "".join(fixed["cells"][1]["source"])
    assert "%matplotlib inline" in "".join(fixed["cells"][2]["source"])


def test_a_tracer_leaked_out_of_a_jitted_function_is_reported_at_the_line_that_meets_it(tmp_path: Path) -> None:
    (tmp_path / "leak.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\nSEEN = []\n\n\n@jax.jit\ndef keep(x):\n    SEEN.append(x)\n"
        "    return x + 1\n\n\nkeep(jnp.ones(2))\nprint(SEEN[0] + 1)\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "leak.py"])
    assert "leak.py:14 UnexpectedTracerError in <module> -> no fix" in result.stderr, result.output
    assert result.exit_code == 1


def test_a_failure_with_no_rewrite_is_reported_at_its_line_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "store.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\nSTORE = {}\n\n\ndef keep(x):\n    if x.sum() > 0:\n"
        "        STORE['last'] = x\n    return x * 2\n\n\nf = {'keep': keep}['keep']\nprint(jax.jit(f)(jnp.ones(2)))\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "store.py"])
    assert result.exit_code == 1
    assert ("store.py:8 TracerBoolConversionError in keep (x: float32[2]) -> no fix: JF101 `if x.sum() > 0` tests a traced value"
            in result.stderr), result.output
    assert "writes into an object" in result.stderr and "0 file(s) fixed" in result.stderr


def test_a_test_command_is_run_and_output_that_differs_from_run_to_run_is_not_a_difference(tmp_path: Path) -> None:
    (tmp_path / "ops.py").write_text("def normalise(x):\n    total = x.sum()\n    if total == 0:\n"
                                     "        return x\n    return x / total\n")
    (tmp_path / "test_ops.py").write_text(
        "import time\n\nimport jax\nimport jax.numpy as jnp\n\nimport ops\n\n"
        "JITTED = {'normalise': jax.jit(ops.normalise)}\n\n\ndef test_normalise():\n"
        "    started = time.perf_counter()\n"
        "    assert jnp.allclose(JITTED['normalise'](jnp.array([1.0, 3.0])), jnp.array([0.25, 0.75]))\n"
        "    assert jnp.allclose(JITTED['normalise'](jnp.zeros(2)), jnp.zeros(2))\n"
        "    print(f'took {time.perf_counter() - started:.6f} s')\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--no-validate", "--root", str(tmp_path), "--",
                                      sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                                      "test_ops.py"])
    assert "ops.py:3 TracerBoolConversionError in normalise (total: float32[], x: float32[2]) -> JF101" in result.stderr, result.output
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "output differs" not in result.stderr  # the timing and pytest's own differ between eager runs too
    assert result.exit_code == 0


# One function per class of jit failure; each is jitted through a table, so only a run shows it.
CLASSES_MODEL = '''import numpy as np


def total(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i]
    return s


def squashed(x):
    return np.tanh(x)


def scaled(x):
    return x * float(x.sum())
'''
CLASSES_MAIN = '''import sys

import jax
import jax.numpy as jnp

import model

name = sys.argv[1]
arguments = (jnp.array([1.0, 2.0, 4.0]), 2) if name == "total" else (jnp.array([1.0, 2.0, 4.0]),)
print(jax.jit({"f": getattr(model, name)}["f"])(*arguments))
'''


@pytest.mark.parametrize(("name", "seen"), [
    ("total", "model.py:6 TracerIntegerConversionError in total (n: int32[], x: float32[3]) -> JF201"),
    ("squashed", "model.py:12 TracerArrayConversionError in squashed (x: float32[3]) -> JF602"),
    ("scaled", "model.py:16 ConcretizationTypeError in scaled (x: float32[3]) -> JF601"),
])
def test_each_class_of_jit_failure_is_seen_and_fixed(tmp_path: Path, name: str, seen: str) -> None:
    (tmp_path / "model.py").write_text(CLASSES_MODEL)
    (tmp_path / "main.py").write_text(CLASSES_MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--no-validate", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py", name])
    assert seen in result.stderr, result.output
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "output differs" not in result.stderr
    assert result.exit_code == 0


# A write through a boolean mask in a helper: only a run shows that the mask is traced, that
# it has the array's shape, and that the value is a Python number.
MASKED_MODEL = '''import jax.numpy as jnp


def at_set(x, idx, value):
    return x.at[idx].set(value)


def whiten(obs):
    std_dev = jnp.std(obs, axis=0)
    return obs / at_set(std_dev, std_dev == 0, 1.0)


def widen(x, mask, fill):
    return x.at[mask].set(fill)
'''
MASKED_MAIN = '''import jax
import jax.numpy as jnp

import model

JITTED = {"whiten": jax.jit(model.whiten), "widen": jax.jit(model.widen)}
print(JITTED["whiten"](jnp.array([[1.0, 2.0], [3.0, 2.0]])))
print(JITTED["widen"](jnp.zeros((2, 3)), jnp.array([True, False]), 1))
'''


def test_a_write_through_a_mask_the_run_saw_is_selected_with_where(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MASKED_MODEL)
    (tmp_path / "main.py").write_text(MASKED_MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert "NonConcreteBooleanIndexError in at_set (idx: bool[2], x: float32[2]) -> JF506" in result.stderr, \
        result.output
    fixed = (tmp_path / "model.py").read_text()
    assert "    return jnp.where(idx, value, x)\n" in fixed
    # A row mask of a matrix selects whole rows (`jnp.where` broadcasts it, `mask[:, None]`), but
    # an int array written into a float one is cast by `.at[]`, promoted by `jnp.where`: no fix.
    assert "    return x.at[mask].set(fill)\n" in fixed
    assert "widen (fill: int32[], mask: bool[2], x: float32[2,3]) -> no fix: JF506" in result.stderr
    assert "`fill` may not be a scalar of `x`'s dtype" in result.stderr
    assert result.exit_code == 1


# A NumPy table a helper is given, indexed with a traced index: only a run shows the table is
# a NumPy array (a caller could pass a jax array, which a traced index takes).
TABLE_MODEL = '''import numpy as np

XP = np.linspace(0.0, 3.0, 7)


def lookup(xp, x):
    i = (x * 2).astype(int)
    return xp[i] + xp[0]


def scaled(x):
    return lookup(XP, x) * 2
'''
TABLE_MAIN = '''import jax
import jax.numpy as jnp

import model

print({"f": jax.jit(model.scaled)}["f"](jnp.array([0.2, 1.4])))
'''


def test_a_numpy_table_the_run_saw_indexed_by_a_tracer_is_indexed_as_a_jnp_array(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(TABLE_MODEL)
    (tmp_path / "main.py").write_text(TABLE_MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert "model.py:8 TracerArrayConversionError in lookup (i: int32[2], x: float32[2]) -> JF602" in result.stderr, \
        result.output
    assert "    return jnp.asarray(xp)[i] + xp[0]\n" in (tmp_path / "model.py").read_text()
    assert "import jax.numpy as jnp\n" in (tmp_path / "model.py").read_text()
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert result.exit_code == 0


# A print of a value no analysis can call traced (a helper's pytree): its fix is unsafe in
# `fix` (a trace-time log may be intended), but the run shows the output differ under jit.
PRINTS_MODEL = '''import jax

OPS = {"unpack": lambda state: state["params"]}


@jax.jit
def update(state):
    params = OPS["unpack"](state)
    print("params", params)
    return {"params": params * 0.5}
'''
PRINTS_MAIN = '''import jax.numpy as jnp

import model

state = {"params": jnp.array([1.0, 2.0])}
for _ in range(3):
    state = model.update(state)
print(state["params"])
'''


def test_prints_that_print_otherwise_under_jit_are_rewritten_when_the_rerun_then_agrees(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(PRINTS_MODEL)
    (tmp_path / "main.py").write_text(PRINTS_MAIN)
    unsafe_only = CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path / "model.py")])
    assert "hidden fix can be enabled with `--unsafe-fixes`" in unsafe_only.stdout, unsafe_only.output
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert '    jax.debug.print("params {params!s}", params=params)\n' in (tmp_path / "model.py").read_text(), \
        result.output
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert "output differs" not in result.stderr
    assert result.exit_code == 0


# NumPy on an attribute of an object the jitted function builds (a property reading it): no
# analysis of the source can call it traced; the run sees NumPy convert a tracer on that line.
OBJECT_MODEL = '''import jax
import jax.numpy as jnp
import numpy as np


class Point:
    def __init__(self, coordinates, index):
        self.coordinates = coordinates
        self.index = index

    @property
    def xyz(self):
        return self.coordinates[self.index]

    def distance(self, other):
        return np.sqrt(np.sum((self.xyz - other.xyz) ** 2))


@jax.jit
def spread(coordinates, scale):
    stretched = coordinates * scale
    return jnp.stack([Point(stretched, 0).distance(Point(stretched, i)) for i in range(1, 3)])
'''
OBJECT_MAIN = '''import jax.numpy as jnp

import model

print(model.spread(jnp.arange(9.0).reshape(3, 3), 2.0))
'''


def test_numpy_on_values_only_the_run_saw_traced_becomes_jnp_on_that_line(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(OBJECT_MODEL)
    (tmp_path / "main.py").write_text(OBJECT_MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert "        return jnp.sqrt(jnp.sum((self.xyz - other.xyz) ** 2))\n" in (tmp_path / "model.py").read_text(), \
        result.output
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert result.exit_code == 0


def test_the_summary_counts_the_files_it_writes_not_those_validation_held_back(tmp_path: Path, monkeypatch) -> None:
    # `session` binds `validate_modules` when it is imported: imported before the patch, it keeps
    # the real one for the tests after this (imported during it, it would keep the fake).
    from jitfix.validate import runner, session  # noqa: F401

    def failing(jobs, options):
        return [runner.ModuleResult(job.path, [runner.FunctionResult("schedule", 7, "failed", failure={
            "input": "", "source": "recorded", "reason": "values differ", "expected": ""})]) for job in jobs]

    monkeypatch.setattr(runner, "validate_modules", failing)
    (tmp_path / "model.py").write_text("import jax\n\n\n@jax.jit\ndef schedule(x, t):\n    if t > 0.5:\n"
                                       "        return x * t\n    return x - t\n")
    (tmp_path / "main.py").write_text("import jax.numpy as jnp\n\nimport model\n\n"
                                      "print(model.schedule(jnp.arange(3.0), 0.7))\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert "0 file(s) fixed (1 more held back by validation: not written)" in result.stderr, result.output
    assert "@jax.jit\n" in (tmp_path / "model.py").read_text()  # nothing written
    assert result.exit_code == 1


COUNTER_MODEL = '''import jax


def count(a, b):
    total = 0.0
    i = 0
    while i < a + 1:
        total += i * b
        i += 1
    return total


jit_count = jax.jit(count)
'''


def test_a_parameter_the_run_makes_static_is_validated_with_python_values(tmp_path: Path) -> None:
    """`a` has a Python int on every call, so the run makes it static at `jax.jit(count)`;
    validation must give it Python values too (an array is unhashable as a static argument)."""
    (tmp_path / "model.py").write_text(COUNTER_MODEL)
    (tmp_path / "main.py").write_text("import model\n\nprint([float(model.jit_count(a, 2.0)) for a in (-1, 0, 3)])\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert "model.py: count passed" in result.stderr, result.output
    assert 'jit_count = jax.jit(count, static_argnames=("a",))' in (tmp_path / "model.py").read_text()
    assert result.exit_code == 0


def test_a_call_from_inside_a_jitted_function_is_no_evidence_of_a_python_value(tmp_path: Path) -> None:
    """`f` gets Python ints from the eager run's calls, but `apply_layer` calls it too: under jit
    that argument is a tracer, so `idx` must not become static: the list it indexes, which the
    run saw, becomes an array a traced index can gather from."""
    (tmp_path / "model.py").write_text("import jax.numpy as jnp\nfrom jax import jit\n\n\n@jit\ndef f(idx, table):\n"
                                       "    return table[idx]\n\n\n@jit\ndef apply_layer(idx, table, x):\n"
                                       "    return jnp.tanh(f(idx, table) @ x)\n")
    (tmp_path / "main.py").write_text("import jax.numpy as jnp\n\nimport model\n\ntable = [jnp.eye(2), 2 * jnp.eye(2)]\n"
                                      "print(model.f(0, table), model.apply_layer(1, table, jnp.ones(2)))\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    fixed = (tmp_path / "model.py").read_text()
    assert "static_argnames" not in fixed, result.output
    assert "    return jnp.asarray(table)[idx]\n" in fixed
    assert "1 file(s) fixed" in result.stderr


def run_project(tmp_path: Path, files: dict[str, str]):
    """`jitfix run --write` of `python main.py` in a project made of ``files``: the result and root."""
    root = tmp_path / "project"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text)
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(root), "--", sys.executable,
                                      "main.py"])
    return result, root


CHECKED = '''import equinox as eqx
import jax.numpy as jnp


def errorif(cond, err=ValueError, msg=""):
    if cond:
        raise err(msg)


def prepare(x):
    x = jnp.asarray(x, dtype=float)
    errorif(x.ndim != 1, ValueError, "x must be a vector")
    errorif(jnp.any(jnp.diff(x) <= 0), ValueError, "x must increase")
    return x


class Knots(eqx.Module):
    x: jnp.ndarray

    def __init__(self, x):
        self.x = prepare(x)
'''


def test_a_check_called_from_code_the_run_saw_on_the_failures_path_is_staged_at_the_call(tmp_path: Path) -> None:
    # `jax.jit(Knots)` traces `prepare` through a class the analysis does not follow: the run
    # saw the failure in `errorif`, and `prepare` on its path holding the tracer `x`.
    main = (
        "import jax\nimport jax.numpy as jnp\n\nimport knots\n\n"
        "print(jax.jit(knots.Knots)(jnp.array([0.0, 1.0, 3.0])).x)\n"
    )
    result, root = run_project(tmp_path, {"knots.py": CHECKED, "main.py": main})
    assert result.exit_code == 0, result.output
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    fixed = (root / "knots.py").read_text()
    assert '    x = eqx.error_if(x, jnp.any(jnp.diff(x) <= 0), "x must increase")\n' in fixed
    assert '    errorif(x.ndim != 1, ValueError, "x must be a vector")\n' in fixed  # static: kept


CENTROIDS = '''import jax
import jax.numpy as jnp


def kmeans_step(X, centroids, n_clusters=3):
    labels = jnp.argmin(jnp.sum((X[:, None, :] - centroids[None]) ** 2, axis=-1), axis=1)
    for j in range(n_clusters):
        centroids = centroids.at[j].set(X[labels == j].mean(axis=0))
    spread = jnp.sum(X[labels == 0])
    return centroids, spread


step = jax.jit(kmeans_step, static_argnames="n_clusters")
'''


def test_a_mask_the_run_saw_select_rows_is_reduced_with_where_broadcast_over_them(tmp_path: Path) -> None:
    # The run saw `labels == j` of shape (6,) select rows of X (6, 2): the mean over the selected
    # rows is the mean over axis 0 where the mask, broadcast over the columns, holds. Validation
    # calls `kmeans_step` with the arguments the eager run gave `step`, the jit assigned to a name.
    main = (
        "import jax.numpy as jnp\n\nimport kmeans\n\n"
        "X = jnp.array([[0.0, 0.0], [0.5, 0.0], [5.0, 5.0], [5.5, 5.0], [0.0, 6.0], [0.5, 6.0]])\n"
        "print(kmeans.step(X, X[jnp.array([0, 2, 4])]))\n"
    )
    result, root = run_project(tmp_path, {"kmeans.py": CENTROIDS, "main.py": main})
    assert result.exit_code == 0, result.output
    assert "kmeans.py: kmeans_step passed (1 input)" in result.stderr
    fixed = (root / "kmeans.py").read_text()
    assert "centroids.at[j].set(X.mean(axis=0, where=(labels == j)[:, None]))" in fixed
    assert "spread = jnp.sum(X, where=(labels == 0)[:, None])" in fixed


ROW_WRITES = '''import jax
import jax.numpy as jnp


@jax.jit
def zero_even_columns(x):
    return x.at[:4, jnp.mod(x[0], 2) == 0].set(0)


@jax.jit
def sequence_mask(X, valid_len, value=0.0):
    mask = jnp.arange(X.shape[1])[None, :] < valid_len[:, None]
    return X.at[~mask].set(value)
'''


def test_writes_through_masks_the_run_saw_cover_some_axes_are_selected_with_where(tmp_path: Path) -> None:
    # After slices, the mask covers the next axis (`x.at[:4, m]`); a mask of the leading axes
    # selects whole rows (`X` (2, 3, 2), `mask` (2, 3)): each is broadcast over the axes after it.
    main = (
        "import jax.numpy as jnp\n\nimport writes\n\n"
        "print(writes.zero_even_columns(jnp.arange(36).reshape(6, 6)))\n"
        "print(writes.sequence_mask(jnp.ones((2, 3, 2)), jnp.array([1, 2])))\n"
    )
    result, root = run_project(tmp_path, {"writes.py": ROW_WRITES, "main.py": main})
    assert result.exit_code == 0, result.output
    fixed = (root / "writes.py").read_text()
    assert "return x.at[:4].set(jnp.where(jnp.mod(x[0], 2) == 0, 0, x[:4]))" in fixed
    assert "return jnp.where((~mask)[..., None], value, X)" in fixed, fixed


PADDING_MASK = '''import jax
import jax.numpy as jnp


def padding_mask(Dataset):
    ax1, ax2 = jnp.where(~Dataset[:, 0].any(axis=2))
    mask = jnp.ones(Dataset[:, 0].shape)
    mask = mask.at[ax1, ax2].set(0)  # equivalent to mask[ax1, ax2] = 0
    return mask


@jax.jit
def masked_loss(Dataset, reconstruction):
    mask = padding_mask(Dataset)
    return jnp.sum((reconstruction - Dataset[:, 0]) ** 2 * mask) / jnp.sum(mask)
'''


def test_a_write_into_an_array_made_from_what_the_run_saw_is_selected_with_where(tmp_path: Path) -> None:
    # jax#4418: the run saw `Dataset` (3, 2, 4, 2) where the helper failed, at `jnp.where`; the
    # array written (`mask`, made of `Dataset[:, 0].shape` a line later) is (3, 4, 2) and the
    # mask the indices come from (`.any(axis=2)`) (3, 4): it selects rows, and is broadcast.
    main = (
        "import jax.numpy as jnp\n\nimport loss\n\n"
        "x = jnp.stack([jnp.ones((3, 4, 2)), jnp.zeros((3, 4, 2))], axis=1).at[1, :, 2:].set(0.0)\n"
        "print(loss.masked_loss(x, jnp.full((3, 4, 2), 0.5)))\n"
    )
    result, root = run_project(tmp_path, {"loss.py": PADDING_MASK, "main.py": main})
    assert result.exit_code == 0, result.output
    fixed = (root / "loss.py").read_text()
    assert "mask = jnp.where((~Dataset[:, 0].any(axis=2))[..., None], 0, mask)" in fixed, fixed
    assert "ax1, ax2 = " not in fixed


GLOBAL_STREAM = '''from jax import jit, random

import rng


def init():
    return random.normal(rng.next_key(), (3,))


init = jit(init)
'''

RNG_MODULE = '''from jax import random

key = random.PRNGKey(0)


def next_key():
    global key
    key, subkey = random.split(key)
    return subkey
'''


def test_a_global_stream_of_another_module_is_drawn_at_each_call(tmp_path: Path) -> None:
    # jax#5206: the run fails in `rng.py` (the key holds a tracer); the fix is in `model.py`,
    # whose jitted `init` advances the stream of another module: `run` reads the project's
    # other modules as `fix` of the folder does, and validation puts that module's state back
    # between the original's calls and the rewrite's.
    main = "import model\nimport rng\n\nprint([model.init() for _ in range(3)], rng.next_key())\n"
    result, root = run_project(tmp_path, {"model.py": GLOBAL_STREAM, "rng.py": RNG_MODULE, "main.py": main})
    assert result.exit_code == 0, result.output
    assert "return _init(next_key=rng.next_key())" in (root / "model.py").read_text()
    assert "init passed" in result.stderr, result.stderr


FLAGGED_SOLVE = '''import jax
import jax.numpy as jnp
from jax.scipy.linalg import lu_factor, lu_solve


class LU:
    def compute(self, state, vector):
        lu_and_piv, transpose = state
        trans = 1 if transpose else 0
        return lu_solve(lu_and_piv, vector, trans=trans)


solver = LU()


@jax.jit
def solve(state, vector):
    return solver.compute(state, vector)
'''


def test_a_rewrite_that_only_moves_the_failure_is_taken_back(tmp_path: Path) -> None:
    # The run saw `transpose` (unpacked from a pytree) traced at the ternary: `lax.cond` makes
    # `trans` a tracer, which `lu_solve` needs static; the program then fails otherwise, in the
    # function rewritten. That rewrite is taken back and said, and nothing is written.
    main = (
        "import jax.numpy as jnp\nfrom jax.scipy.linalg import lu_factor\n\nimport solver\n\n"
        "m = jnp.array([[4.0, 1.0], [2.0, 3.0]])\n"
        "print(solver.solve((lu_factor(m), False), jnp.array([1.0, 2.0])))\n"
    )
    result, root = run_project(tmp_path, {"solver.py": FLAGGED_SOLVE, "main.py": main})
    assert result.exit_code == 1, result.output
    assert "solver.py: the rewrite of `compute` (JF102) only moved the failure: the program then raised" \
        in result.stderr
    assert "0 file(s) fixed" in result.stderr
    assert (root / "solver.py").read_text() == FLAGGED_SOLVE


HALF_FIXED = '''from typing import NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    error: jax.Array
    failed: jax.Array


class Solver:
    def __init__(self, strict):
        self.strict = strict

    def keep_going(self, inputs):
        _, state = inputs
        going = state.error > 1e-3
        return going and (not self.strict or state.failed not in (True,))


solver = Solver(True)


@jax.jit
def step(x, state):
    return jnp.where(solver.keep_going((x, state)), x / 2, x)
'''


def test_a_rewrite_that_leaves_its_function_failing_is_taken_back(tmp_path: Path) -> None:
    # `going and (...)` is rewritten, but `failed not in (True,)` inside it still takes a
    # tracer's truth (of `failed == True`, which `not in` asks): the next run fails in the
    # function the rewrite changed, where no rule fixes what failed.
    main = ("import jax.numpy as jnp\n\nimport solver\n\n"
            "print(solver.step(jnp.array(0.5), solver.State(jnp.array(0.5), jnp.array(False))))\n")
    result, root = run_project(tmp_path, {"solver.py": HALF_FIXED, "main.py": main})
    assert result.exit_code == 1, result.output
    assert "solver.py: the rewrite of `keep_going` (JF103) " in result.stderr, result.output
    assert "; taken back" in result.stderr
    assert (root / "solver.py").read_text() == HALF_FIXED


def test_the_reference_run_saves_the_jitted_functions_arguments_for_validation(tmp_path: Path) -> None:
    # Every rewritten function is one the program jits: the arguments the run with jit
    # disabled gave them are its validation's inputs, and no run of its own records them.
    root = project(tmp_path)
    result = CliRunner().invoke(app, ["run", "--verbose", "--no-color", "--root", str(root), "--", sys.executable,
                                      "main.py"])
    assert result.exit_code == 0, result.output
    assert "model.py: relu_or_leak passed (1 input)" in result.stderr
    assert "running the command (4 runs)" in result.stderr, result.stderr  # the reference and three rounds
    assert "reference: the command, jit disabled" in result.stderr
    assert "recording the arguments" not in result.stderr


def test_a_rewritten_helper_has_its_arguments_recorded_in_a_run_of_their_own(tmp_path: Path) -> None:
    # `clipped` is called by the jitted step, not jitted itself: its calls are recorded apart.
    example = (Path(__file__).resolve().parents[1] / "examples" / "train.py").read_text()
    (tmp_path / "train.py").write_text(example)
    result = CliRunner().invoke(app, ["run", "--verbose", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "train.py"])
    assert result.exit_code == 0, result.output
    assert "recording the arguments: the command, jit disabled" in result.stderr
    assert "train.py: clipped passed" in result.stderr, result.stderr


def test_the_reference_run_does_not_save_arguments_too_large_to_keep(tmp_path: Path) -> None:
    # A model's parameters, given to every jitted function of a long program, are not pickled
    # by the run that only serves as the reference: a rewrite of such a function records them
    # in a run of its own.
    import numpy as np

    from jitfix import run_hook
    from jitfix.validate import recorder_hook

    recorder = recorder_hook._Recorder({"folder": str(tmp_path), "targets": {}})
    profiler = run_hook._Profiler(str(tmp_path / "profile.jsonl"), calls_only=True, recorder=recorder)
    big = np.zeros(profiler.MOST_BYTES_SAVED // 8 + 1)
    profiler._record("model.py", "step", (big,), {})
    profiler._record("model.py", "small", (np.zeros(3),), {})
    assert [path.name.endswith(".pkl") for path in tmp_path.glob("*.pkl")] == [True]
    assert recorder.full("model.py", "step") is False and ("model.py", "small") in recorder.seen
    assert '"function": "small"' in (tmp_path / "profile.jsonl").read_text()


# What only the failure proves traced: a method of an object the analysis does not know, the
# result of a callable parameter given functions of another module. (`while_loop`'s test, the
# lambda its one caller in the module gives it, `fix` proves too.) `both` takes the truth of
# two such results: its failure does not say which was the tracer, so it is left as it is.
OBSERVED_MODEL = '''def while_loop(cond_fun, body_fun, init_val):
    val = init_val
    while cond_fun(val):
        val = body_fun(val)
    return val


def halve_until_small(x, limit):
    return while_loop(lambda v: v.sum() > limit, lambda v: v / 2, x)


def choose(x, rule):
    y = x * 2 if rule.applies(x) else x
    return y


def both(x, first, second):
    if first(x) and second(x):
        return x + 1
    return x


def total(*values):
    return sum(float(v) for v in values)


def pick(layers, i):
    return layers[i]
'''
OBSERVED_MAIN = '''import sys

import jax
import jax.numpy as jnp

import model


class Positive:
    def applies(self, x):
        return x.sum() > 0


def above_one(x):
    return x.sum() > 1


x = jnp.array([1.0, 2.0, 3.0])
print(model.while_loop(lambda n: n < 5, lambda n: n + 1, 0))  # Python values: a plain loop
FUNCTIONS = {"halve": jax.jit(model.halve_until_small), "choose": jax.jit(model.choose, static_argnums=1),
             "both": jax.jit(model.both, static_argnums=(1, 2)), "total": jax.jit(lambda x: model.total(*x)),
             "pick": jax.jit(model.pick)}
if sys.argv[1] == "halve":
    print(FUNCTIONS["halve"](x * 8, 1.0), FUNCTIONS["halve"](x / 100, 1.0))
elif sys.argv[1] == "choose":
    print(FUNCTIONS["choose"](x, Positive()), FUNCTIONS["choose"](-x, Positive()))
elif sys.argv[1] == "total":
    print(FUNCTIONS["total"](x))
elif sys.argv[1] == "pick":
    print(FUNCTIONS["pick"]([x, 2 * x, 3 * x], 2))
else:
    print(FUNCTIONS["both"](x, above_one, above_one))
'''


@pytest.mark.parametrize(("name", "seen", "rewritten", "imported"), [
    ("halve", "model.py:3 TracerBoolConversionError in while_loop", "val = lax.while_loop(", "from jax import lax"),
    ("choose", "model.py:13 TracerBoolConversionError in choose",
     "y = lax.cond(rule.applies(x), lambda: x * 2, lambda: x)", "from jax import lax"),
    # (the failure is seen in the generator expression's own code object: it runs in `total`)
    ("total", "model.py:24 ConcretizationTypeError in <genexpr>", "return sum(jnp.asarray(v, dtype=float) for v in values)",
     "import jax.numpy as jnp"),
    # (what the index reads is the run's: a list it saw the function given)
    ("pick", "model.py:28 TracerIntegerConversionError in pick", "return jnp.asarray(layers)[i]",
     "import jax.numpy as jnp"),
])
def test_the_expression_a_failure_proves_traced_is_rewritten_as_a_traced_one(tmp_path: Path, name: str, seen: str,
                                                                             rewritten: str, imported: str) -> None:
    (tmp_path / "model.py").write_text(OBSERVED_MODEL)
    (tmp_path / "main.py").write_text(OBSERVED_MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--write", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py", name])
    assert seen in result.stderr and "-> JF" in result.stderr, result.output
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert result.exit_code == 0
    fixed = (tmp_path / "model.py").read_text()
    assert rewritten in fixed
    # (the import the rewrite needs heads the module; `while_loop`, whose test `fix` proves
    # traced through the lambda `halve_until_small` gives it, is rewritten on every run)
    header, _, _ = fixed.partition("\n\n\ndef while_loop(")
    assert imported in header.splitlines() and "val = lax.while_loop(" in fixed
    assert "if first(x) and second(x):" in fixed  # not seen failing: not touched


def test_a_failure_that_does_not_say_which_of_two_tests_was_traced_is_not_rewritten(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(OBSERVED_MODEL)
    (tmp_path / "main.py").write_text(OBSERVED_MAIN)
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py", "both"])
    assert "model.py:18 TracerBoolConversionError in both" in result.stderr, result.output
    assert ("-> no fix: Python asked a tracer for its truth in one of `first(x)`, `second(x)`; the failure does not "
            "say which, so none is rewritten") in result.stderr
    assert result.exit_code == 1


def test_a_list_index_the_run_makes_static_is_not_also_made_an_array(tmp_path: Path) -> None:
    """`label` is a Python int on every call and the failure depends on it alone: the run makes
    it static, so the list takes it as it is (one fix for one failure, not two)."""
    (tmp_path / "train.py").write_text(
        "import jax\n\nCLASS_WEIGHTS = [1.0, 2.0, 0.5]\n\n\n@jax.jit\ndef weighted(x, label):\n"
        "    return x * CLASS_WEIGHTS[label]\n\n\nprint(weighted(1.0, 1), weighted(2.0, 2))\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "train.py"])
    fixed = (tmp_path / "train.py").read_text()
    assert '@partial(jax.jit, static_argnames=("label",))' in fixed, result.output
    assert "    return x * CLASS_WEIGHTS[label]\n" in fixed
    assert result.exit_code == 0


def test_a_fix_of_how_a_function_is_jitted_alone_says_the_rerun_is_its_proof(tmp_path: Path) -> None:
    """JF501 changes the jit call, not a function's body: validation has nothing to run, and
    the summary says so rather than print an empty list."""
    (tmp_path / "model.py").write_text("import jax\nimport jax.numpy as jnp\n\n\ndef padded(x, length):\n"
                                       "    return jnp.zeros(length).at[: x.shape[0]].set(x)\n\n\n"
                                       "padded_jit = jax.jit(padded)\n")
    (tmp_path / "main.py").write_text("import jax.numpy as jnp\n\nimport model\n\n"
                                      "print(model.padded_jit(jnp.ones(2), 4))\n")
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "main.py"])
    assert "validation (the arguments of an eager run as inputs):\n  model.py: no function body was rewritten (only " \
           "how it is jitted); the rerun is its proof\n" in result.stderr, result.output
    assert result.exit_code == 0


def test_an_optional_argument_or_its_default_keeps_the_none_test_in_python(tmp_path: Path) -> None:
    """`scale or default` (jax#16430): the run proves `scale` a tracer where it is given; where a
    call leaves it out it is None, static under jit, so the rewrite tests for None in Python and
    chooses between the given scale and the default with lax.cond only when it is given."""
    (tmp_path / "model.py").write_text("import jax.numpy as jnp\n\n\ndef logits(q, scale=None):\n"
                                       "    scale = scale or 1.0 / jnp.sqrt(q.shape[-1])\n    return q * scale\n")
    (tmp_path / "main.py").write_text("import jax\nimport jax.numpy as jnp\n\nimport model\n\n"
                                      "JITTED = {'logits': jax.jit(model.logits)}\nq = jnp.ones(4)\n"
                                      "print(JITTED['logits'](q), JITTED['logits'](q, 0.25), JITTED['logits'](q, 0.0))\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert "model.py:5 TracerBoolConversionError in logits (q: float32[4], scale: float32[]) -> JF103" in result.stderr
    assert "model.py: logits passed" in result.stderr
    assert "    scale = 1.0 / jnp.sqrt(q.shape[-1]) if scale is None else lax.cond(\n" \
        in (tmp_path / "model.py").read_text()


SOLVER = '''import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    step: jnp.ndarray
    error: jnp.ndarray
    failed: jnp.ndarray


@dataclasses.dataclass(eq=False)
class Solver:
    tol: float = 1e-3
    stop_if_failed: bool = False

    def _cond_fun(self, state):
        keep_going = (state.step < 5) & (state.error > self.tol)
        return keep_going and (not self.stop_if_failed or not state.failed)

    def run(self, x):
        state = self.initial_state()
        body = lambda s: State(s.step + 1, s.error * x, s.step >= 2)
        return jax.lax.while_loop(self._cond_fun, body, state).step

    def initial_state(self):  # (what the static analysis does not follow: the run shows it)
        return State._make([jnp.asarray(0), jnp.asarray(1.0), jnp.asarray(False)])
'''


def test_the_name_that_held_the_failing_tracer_picks_the_candidate(tmp_path: Path) -> None:
    """After `keep_going and ...` is rewritten, the truth of `state.failed` (a field of the loop
    state) fails beside that of `self.stop_if_failed` (a Python bool): the run finds which of the
    frame's names held the tracer, and that candidate is the one rewritten (jaxopt#350)."""
    (tmp_path / "solver.py").write_text(SOLVER)
    (tmp_path / "main.py").write_text("import jax\n\nfrom solver import Solver\n\n"
                                      "print([int(jax.jit(Solver(stop_if_failed=flag).run)(0.5)) for flag in (True, False)])\n")
    result = CliRunner().invoke(app, ["run", "--write", "--no-color", "--root", str(tmp_path), "--",
                                      sys.executable, "main.py"])
    assert result.exit_code == 0, result.output
    assert "solver.py:21 TracerBoolConversionError in _cond_fun" in result.stderr
    assert "round 2: exit 1\n  solver.py:21 TracerBoolConversionError in _cond_fun (keep_going: bool[]) -> JF103\n" \
        in result.stderr  # the same line, another tracer: new evidence
    assert ("        return jnp.logical_and(keep_going, jnp.logical_or(\n"
            "            jnp.logical_not(self.stop_if_failed),\n            jnp.logical_not(state.failed),\n"
            "        ))\n") in (tmp_path / "solver.py").read_text()


def test_without_write_the_summary_says_the_files_are_fixable_not_fixed(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = CliRunner().invoke(app, ["run", "--no-validate", "--no-color", "--root", str(root), "--",
                                      sys.executable, "main.py"])
    assert "1 file(s) fixable (the diff above; --write writes them); the command exits as with jit disabled" \
        in result.stderr, result.output
    assert (root / "model.py").read_text() == MODEL


@pytest.mark.parametrize("command", ["run", "profile"])
def test_an_option_jitfix_does_not_know_is_said_not_run(command, tmp_path):
    """`jitfix run --ignore JF105 -- python x.py`: the command's own options pass through, so an
    option jitfix lacks arrives first in the command; it is a typo, not a program to run."""
    result = CliRunner().invoke(app, [command, "--no-color", "--ignore", "JF105", "--", sys.executable, "-c", "1"])
    assert result.exit_code == 2
    assert f"jitfix {command}: no such option: --ignore" in result.output
    assert "internal error" not in result.output


FORMATTED_PRINT = '''from typing import NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    error: jax.Array


def cond(carry):
    _, state = carry
    print(f"error: {state.error:.3f}")
    return state.error > 0.1


def body(carry):
    x, state = carry
    return x / 2, State(state.error / 2)


@jax.jit
def solve(x):
    return jax.lax.while_loop(cond, body, (x, State(jnp.abs(x).sum())))[0]


print(solve(jnp.array([0.4, 0.2])))
'''


def test_a_tracer_formatted_in_a_print_is_seen_and_the_print_made_per_call(tmp_path: Path) -> None:
    """`f"{state.error:.3f}"` of a tracer raises TypeError (a tracer takes no format spec):
    the run records it where it is formatted, which proves the printed value traced, so the
    print becomes `jax.debug.print` (unsafe to `check`, which cannot tell: the value comes
    out of an unpacked carry) and prints as the eager run does."""
    (tmp_path / "solver.py").write_text(FORMATTED_PRINT)
    result = CliRunner().invoke(app, ["run", "--no-color", "--root", str(tmp_path), "--", sys.executable, "solver.py"])
    assert result.exit_code == 0, result.output
    assert "solver.py:13 TypeError (a tracer formatted) in cond" in result.stderr
    assert "-> JF401" in result.stderr
    assert "the command exits as with jit disabled (exit 0)" in result.stderr
    assert '+    jax.debug.print("error: {state_error:.3f}", state_error=state.error' in result.stdout
    assert "its output differs" not in result.stderr


def test_a_failure_no_rule_rewrites_says_what_was_missing_and_where(tmp_path: Path) -> None:
    # A failure with no finding on its line still names the construct (the one candidate
    # expression of the error's kind on the line) and what the error says was missing.
    path = tmp_path / "objective.py"
    path.write_text("def compute(self, B_mn):\n    return B_mn[self._idx] / B_mn[0]\n")
    masked = Observation(str(path), "compute", 1, 2, "NonConcreteBooleanIndexError", ("B_mn",))
    reason = _reason(masked, [])
    assert "at `B_mn[self._idx]`" in reason and "boolean mask" in reason, reason
    leaked = Observation(str(path), "compute", 1, 2, "UnexpectedTracerError", ("B_mn",))
    assert "state kept between calls" in _reason(leaked, [])
    unknown = Observation(str(path), "compute", 1, 2, "SomeOtherError", ("B_mn",))
    assert _reason(unknown, []) == "no rule rewrites what failed on this line"


SPEC = '''import jax
import jax.numpy as jnp


class ActionSpec:
    def __init__(self, num_actions, dtype=jnp.int32):
        num_actions = jnp.asarray(num_actions, dtype=jnp.int32)  # one count per action dimension
        if (num_actions <= 0).any():
            raise ValueError(f"num_actions must be positive, got {num_actions}")
        self.shape = num_actions.shape
        self.maximum = num_actions - 1


class Env:
    def __init__(self, num_actions):
        self.num_actions = num_actions

    def spec(self):
        return ActionSpec(self.num_actions)


def make_step(env):
    @jax.jit
    def step(key, total):
        spec = env.spec()
        key, sub = jax.random.split(key)
        action = jax.random.randint(sub, spec.shape, 0, spec.maximum + 1)
        return key, total + action.sum()

    return step
'''

SPEC_MAIN = '''import jax
import jax.numpy as jnp

import envs

for env in (envs.Env(3), envs.Env([2, 4])):
    step = envs.make_step(env)
    key, total = jax.random.PRNGKey(0), jnp.int32(0)
    for _ in range(3):
        key, total = step(key, total)
    print(total)
try:
    envs.make_step(envs.Env(0))(jax.random.PRNGKey(0), jnp.int32(0))
except ValueError as error:
    print("rejected:", error)
'''


def test_a_spec_built_with_jnp_from_settings_inside_a_jitted_step_is_built_with_numpy(tmp_path: Path) -> None:
    # jit_env#36: the spec's count is made from a setting with `jnp.asarray` while the jitted step
    # is traced (the environment is a closure), so its check takes a tracer's truth. The run
    # sees the failing value depends on no argument of `step`, and where it was made.
    result, root = run_project(tmp_path, {"envs.py": SPEC, "main.py": SPEC_MAIN})
    assert result.exit_code == 0, result.output
    fixed = (root / "envs.py").read_text()
    assert "num_actions = np.asarray(num_actions, dtype=np.int32)  # one count per action dimension" in fixed, fixed
    assert fixed.startswith("import jax\nimport jax.numpy as jnp\nimport numpy as np\n"), fixed
    assert fixed.count("np.") == 2 + fixed.count("jnp."), fixed  # nothing else rewritten
    assert "JF509" in result.output


GRAPH = '''import jax
import jax.numpy as jnp


def funcify_make_vector(dtype):
    def make_vector(*dims):
        return jnp.array(dims, dtype=dtype)

    return make_vector


def funcify_reshape():
    def reshape(x, shape):
        return jnp.reshape(x, shape)

    return reshape


def compile_graph(dims):
    make_vector = funcify_make_vector("int32")
    reshape = funcify_reshape()

    def graph(x):
        return jnp.exp(reshape(x, make_vector(*dims)))

    return jax.jit(graph)
'''


def test_a_shape_a_helper_builds_with_jnp_from_constants_is_built_with_numpy(tmp_path: Path) -> None:
    # aesara#43: the shape vector is built by one closure and used by another; the run sees the
    # value `jnp.reshape` needed made, from constants alone, in `make_vector`.
    main = ("import numpy as np\n\nimport graph\n\nx = np.linspace(0.0, 1.0, 6)\n"
            "print(graph.compile_graph((2, 3))(x), graph.compile_graph((6,))(x))\n")
    result, root = run_project(tmp_path, {"graph.py": GRAPH, "main.py": main})
    assert result.exit_code == 0, result.output
    fixed = (root / "graph.py").read_text()
    assert "        return np.array(dims, dtype=dtype)\n" in fixed, fixed
    assert "return jnp.reshape(x, shape)" in fixed and "jnp.exp(" in fixed


def test_a_failing_value_made_from_a_traced_argument_is_not_built_with_numpy(tmp_path: Path) -> None:
    # The twin: the value that fails is made with jnp from the jitted function's argument (JAX
    # says it depends on `x`): no constant, so JF509 rewrites nothing (the `if` is JF101's).
    model = ('import jax\nimport jax.numpy as jnp\n\n\ndef peak(x):\n    return jnp.asarray(x.max(), dtype=jnp.int32)\n'
             '\n\n@jax.jit\ndef clipped(x):\n    limit = peak(x)\n    if limit > 1:\n        return jnp.minimum(x, limit)\n'
             '    return x\n')
    main = "import jax.numpy as jnp\n\nimport model\n\nprint(model.clipped(jnp.arange(3)), model.clipped(jnp.arange(2)))\n"
    result, root = run_project(tmp_path, {"model.py": model, "main.py": main})
    assert "numpy as np" not in (root / "model.py").read_text()
    assert "JF509" not in result.output, result.output


GRID_MODEL = '''import jax.numpy as jnp


class Model:
    def __init__(self, T=600.0, delta_t=15.0, grid=(4, 5)):
        self.T = T
        self.delta_t = delta_t
        self.grid = grid

    def n_steps(self):
        return int(jnp.ceil(self.T / self.delta_t))

    def n_cells(self):
        return int(jnp.prod(jnp.array(self.grid)))

    def field(self, m1):
        return jnp.zeros(self.n_cells()) + m1

    def waveform(self, m1, m2):
        times = jnp.arange(self.n_steps()) * self.delta_t
        return jnp.sin(times * m1 / m2)
'''


def test_a_size_a_method_computes_with_jnp_from_settings_is_computed_in_python(tmp_path: Path) -> None:
    # phentax#28: the bound method is jitted in another module, so nothing shows `n_cells`
    # traced but the run; the value `int()` needed was made of the model's settings alone, of
    # integers: it is computed with NumPy (JF509), not converted to a traced array (JF601's
    # fix of a traced value, which would only move the failure to `jnp.zeros`). The float one,
    # `jnp.ceil(T / dt)`, is not computed in Python: jnp rounds the quotient to float32 before
    # `ceil` (2.1 / 0.3 is 7.000000000000001 in float64, 7 in float32), so `math.ceil` may
    # count one more (JF601 converts it with jnp, which here only moves the failure).
    main = ("import jax\nimport jax.numpy as jnp\n\nfrom wave import Model\n\nfor grid in ((4, 5), (2, 3)):\n"
            "    print(jax.jit(Model(grid=grid).field)(jnp.float32(1.0)).sum())\n"
            "try:\n    jax.jit(Model().waveform)(jnp.float32(1.0), jnp.float32(2.0))\n"
            "except Exception as error:\n    print(type(error).__name__)\n")
    result, root = run_project(tmp_path, {"wave.py": GRID_MODEL, "main.py": main})
    fixed = (root / "wave.py").read_text()
    assert "        return int(np.prod(np.array(self.grid)))\n" in fixed, result.output
    assert "math" not in fixed and fixed.startswith("import jax.numpy as jnp\nimport numpy as np\n"), fixed


SPLITTER = '''import jax
import jax.numpy as jnp

# where each block of the feature vector ends
BLOCK_ENDS = jnp.array([2, 5])


class Blocks:
    def __init__(self, widths):
        self.widths = widths
        self.offsets = jnp.cumsum(jnp.array(widths[:-1]))  # start of every block but the first

    def norms(self, x):
        return jnp.stack([jnp.linalg.norm(part) for part in jnp.split(x, self.offsets)])


@jax.jit
def block_sums(x):
    return jnp.stack([part.sum() for part in jnp.split(x, BLOCK_ENDS)])
'''


def test_split_points_made_with_jnp_before_tracing_are_made_with_numpy(tmp_path: Path) -> None:
    # flowjax#132: split points made with jnp in `__init__` (or at module level) are a jax array,
    # which jit takes for a constant of the trace -- a tracer where `jnp.split` needs a concrete
    # value. The run sees the failing value read that array, and what held it.
    main = ("import jax\nimport jax.numpy as jnp\n\nimport blocks\n\nx = jnp.arange(7.0)\n"
            "print(blocks.block_sums(x))\nprint(jax.jit(blocks.Blocks([3, 4]).norms)(x))\n")
    result, root = run_project(tmp_path, {"blocks.py": SPLITTER, "main.py": main})
    assert result.exit_code == 0, result.output
    fixed = (root / "blocks.py").read_text()
    assert "# where each block of the feature vector ends\nBLOCK_ENDS = np.array([2, 5])\n" in fixed, fixed
    assert ("self.offsets = np.cumsum(np.array(widths[:-1]))  # start of every block but the first"
            in fixed), fixed
    assert fixed.count("np.") - fixed.count("jnp.") == 3, fixed


def test_a_host_callback_of_constants_is_no_constant_to_build_with_numpy(tmp_path: Path) -> None:
    # klujax#34: the failing handle comes back from `jax.pure_callback` of arrays made before
    # tracing; it depends on no argument, but a callback's result is a tracer whatever it is
    # given: making `PATTERN` with NumPy would fix nothing, so JF509 leaves it.
    module = ('import jax\nimport jax.numpy as jnp\nimport numpy as np\n\nPATTERN = jnp.array([0, 2, 1])\n\n\n'
              'def host_count(pattern):\n    return np.int32(len(set(np.asarray(pattern).tolist())))\n\n\n'
              '@jax.jit\ndef solve(x):\n    handle = jax.pure_callback(host_count, jax.ShapeDtypeStruct((), jnp.int32), '
              'PATTERN)\n    return x * int(handle)\n')
    main = "import jax.numpy as jnp\n\nimport solver\n\nprint(solver.solve(jnp.float32(2.0)))\n"
    result, root = run_project(tmp_path, {"solver.py": module, "main.py": main})
    assert "PATTERN = jnp.array([0, 2, 1])\n" in (root / "solver.py").read_text(), result.output
    assert "JF509" not in result.output, result.output
