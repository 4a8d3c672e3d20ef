"""--validate, --record and `jitfix validate`, used as a user would: through the command line,
on real files, with real validation processes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import invoke

EXAMPLES = Path(__file__).parent.parent / "examples"

TWO_FUNCTIONS = '''import jax
import jax.numpy as jnp


@jax.jit
def relu_or_square(x):
    if x.sum() > 0:
        y = x
    else:
        y = x ** 2
    return y


@jax.jit
def total_if_positive(x):
    if x.sum() > 0:
        y = x.sum()
    else:
        y = x
    return y
'''


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_fix_validate_examples_passes_with_full_coverage_from_synthesized_inputs(tmp_path: Path) -> None:
    # The examples of code that fails or misbehaves under jit (the recompilation example is
    # the profiler's, tested in test_profile.py).
    shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns("recompiles.py"))
    result = invoke("check", "--validate", "--output-format", "json", str(tmp_path / "examples"))
    records = json.loads(result.stdout)
    validations = {r["function"]: r["validation"] for r in records}
    assert set(validations) == {"train_step", "make_grid", "scaled", "relu_or_square", "power"}
    for function, validation in validations.items():
        assert validation["status"] == "passed", (function, validation)
        assert validation["branches"]["missed"] == [], function
        assert validation["sources"]["synthesized"] == validation["inputs"] >= 3
        assert validation["before"].startswith(("raised", "differed")), validation["before"]
    assert len(validations["relu_or_square"]["branches"]["reached"]) == 2  # true and false arms
    assert len(validations["power"]["branches"]["reached"]) == 3  # 0, 1 and many trips

    result = invoke("fix", "--validate", str(tmp_path / "examples"))
    assert result.exit_code == 0, result.stderr
    assert "Validation: 5 passed, 0 failed, 0 skipped" in result.stderr
    assert "relu_or_square passed (4 inputs, branches 2/2)" in result.stderr
    assert "lax.cond" in (tmp_path / "examples" / "traced_if.py").read_text()


def _sabotaged(tmp_path: Path, example: str, old: str, new: str) -> tuple[Path, Path]:
    original = tmp_path / f"{example}.py"
    shutil.copy(EXAMPLES / f"{example}.py", original)
    fixed = subprocess.run([sys.executable, "-m", "jitfix", "fix", "-"], input=original.read_text(),
                           capture_output=True, text=True).stdout
    assert old in fixed
    wrong = write(tmp_path, "wrong.py", fixed.replace(old, new))
    return original, wrong


@pytest.mark.parametrize("example, old, new, shows", [
    ("traced_if", "lax.cond(x.sum() > 0, _if_x_sum_positive, _if_x_sum_non_positive)",
     "lax.cond(x.sum() > 0, _if_x_sum_non_positive, _if_x_sum_positive)", "values differ"),
    ("traced_loop", "lax.fori_loop(0, n, ", "lax.fori_loop(1, n, ", "values differ"),
    ("stale_global", "_scaled(x, SCALE=SCALE)", "_scaled(x, SCALE=1.0)", "after changing a global"),
    ("print_in_jit", 'jax.debug.print("loss = {loss:.4f}", loss=loss)', "pass", "printed ''"),
], ids=["swapped-branches", "off-by-one-loop", "stale-global", "dropped-print"])
def test_validate_fails_a_wrong_rewrite_and_names_the_input(tmp_path: Path, example, old, new, shows) -> None:
    original, wrong = _sabotaged(tmp_path, example, old, new)
    result = invoke("validate", str(original), str(wrong))
    assert result.exit_code == 1, result.stdout
    line = next(line for line in result.stdout.splitlines() if " failed (" in line)
    assert shows in line
    function = line.split(": ")[1].split()[0]
    assert f"{function}(" in line  # the input that shows the difference, as a call
    # The correct rewrite passes.
    right = write(tmp_path, "right.py", subprocess.run(
        [sys.executable, "-m", "jitfix", "fix", "-"], input=original.read_text(), capture_output=True, text=True).stdout)
    assert invoke("validate", str(original), str(right)).exit_code == 0


def test_validate_json(tmp_path: Path) -> None:
    original, wrong = _sabotaged(tmp_path, "traced_loop", "lax.fori_loop(0, n, ", "lax.fori_loop(1, n, ")
    document = json.loads(invoke("validate", "--output-format", "json", str(original), str(wrong)).stdout)
    (function,) = document["modules"][0]["functions"]
    assert function["function"] == "power" and function["status"] == "failed"
    assert function["failure"]["input"].startswith("(") and "values differ" in function["failure"]["reason"]
    assert function["tolerances"] == {"rtol": 1e-5, "atol": 1e-6}
    assert document["seconds"] > 0


def test_a_failed_rewrite_is_not_written_and_the_others_are(tmp_path: Path) -> None:
    module = write(tmp_path, "mixed.py", TWO_FUNCTIONS)
    # A scalar in one branch and the array in the other: lax.cond rejects the shapes.
    examples = write(tmp_path, "examples.py", '''
        import jax.numpy as jnp
        EXAMPLES = {
            "mixed:total_if_positive": [((jnp.array([1, 2]),), {}), ((jnp.array([-1, -2]),), {})],
        }
        ''')
    report = tmp_path / "report.md"
    result = invoke("fix", "--examples", str(examples), "--report", str(report), str(module))
    assert result.exit_code == 1
    assert "total_if_positive failed (total_if_positive(i32[2] [1 2]): raised TypeError" in result.stderr
    assert "not written: the rewrites of total_if_positive" in result.stderr
    text = module.read_text()
    assert "def relu_or_square(x):\n    def _if_x_sum_positive" in text  # rewritten
    assert "def total_if_positive(x):\n    if x.sum() > 0:" in text  # left as it was
    markdown = report.read_text()
    assert markdown.startswith("# jitfix migration report\n")
    assert "| `" + str(module) + "` | 1 | 1 passed, 1 failed | 1 |" in markdown
    assert "- `relu_or_square` (line 6): passed" in markdown
    assert "  - original under jit: raised TracerBoolConversionError" in markdown
    assert "not written: the rewrites of `total_if_positive`" in markdown
    left = markdown.split("Left for a person:\n")[1]
    assert left.startswith("- line ") and ": JF101 " in left and "total_if_positive" in left


def test_record_uses_the_arguments_of_a_real_pytest_run(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/ops.py", '''
        import jax
        import jax.numpy as jnp


        @jax.jit
        def clipped_total(x, limit):
            total = x.sum()
            if total > limit:
                total = limit * jnp.ones_like(total)
            return total
        ''')
    write(tmp_path, "tests/test_ops.py", '''
        import jax.numpy as jnp
        from pkg.ops import clipped_total


        def test_small():
            clipped_total(jnp.ones((4, 5)), 100.0)


        def test_clipped():
            clipped_total(jnp.ones((7,)), 2.0)
        ''')
    write(tmp_path, "pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["."]\n')
    monkeypatch.chdir(tmp_path)  # the command runs where the user runs jitfix
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
    result = invoke("check", "--record", command, "--output-format", "json", "pkg")
    assert "recorded 2 calls from" in result.stderr
    (record,) = json.loads(result.stdout)
    validation = record["validation"]
    assert validation["status"] == "passed"
    assert validation["sources"]["recorded"] == 2
    assert validation["branches"]["missed"] == []


def test_modules_that_fail_to_import_hang_or_crash_do_not_stop_the_others(tmp_path: Path) -> None:
    body = "\n\n@jax.jit\ndef f(x):\n    if x.sum() > 0:\n        x = -x\n    return x\n"
    write(tmp_path, "a_missing.py", "import jax\nimport not_a_real_module\n" + body)
    write(tmp_path, "b_hangs.py", "import time\nimport jax\ntime.sleep(60)\n" + body)
    write(tmp_path, "c_crashes.py", "import os\nimport jax\nos._exit(3)\n" + body)
    write(tmp_path, "d_fine.py", "import jax\n" + body)
    result = invoke("diff", "--validate", "--validate-timeout", "8", str(tmp_path))
    assert "a_missing.py: validation could not run: importing the module failed: " \
           "ModuleNotFoundError: No module named 'not_a_real_module'" in result.stderr
    assert "b_hangs.py: validation could not run: timed out after 8 s" in result.stderr
    assert "c_crashes.py: validation could not run: the validation process crashed (exit code 3)" in result.stderr
    assert "d_fine.py:5: f passed" in result.stderr
    assert result.exit_code == 1


def test_user_output_only_under_verbose_and_nothing_runs_without_validate(tmp_path: Path) -> None:
    module = write(tmp_path, "noisy.py", '''
        import pathlib
        import jax

        print("HELLO FROM THE USER'S MODULE")
        pathlib.Path(__file__).with_name("ran.txt").write_text("imported")


        @jax.jit
        def f(x):
            if x.sum() > 0:
                x = -x
            return x
        ''')
    invoke("diff", str(module))
    invoke("check", str(module))
    assert not (tmp_path / "ran.txt").exists()  # never run unless asked
    quiet = invoke("diff", "--validate", str(module))
    assert "HELLO" not in quiet.stderr
    assert "f passed" in quiet.stderr
    loud = invoke("diff", "--validate", "--verbose", str(module))
    assert "HELLO FROM THE USER'S MODULE" in loud.stderr
    assert "original under jit: raised TracerBoolConversionError" in loud.stderr
    assert not list(tmp_path.rglob("__pycache__"))  # validation writes no bytecode


def test_examples_from_pyproject(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.jitfix.validate]\nexamples = "inputs.py"\ntimeout = 120\n')
    write(tmp_path, "mixed.py", TWO_FUNCTIONS)
    write(tmp_path, "inputs.py", 'import jax.numpy as jnp\nEXAMPLES = {"mixed:total_if_positive": [(jnp.arange(3),)]}\n')
    result = invoke("check", "--validate", str(tmp_path / "mixed.py"))
    assert "total_if_positive failed (total_if_positive(i32[3] [0 1 2]): raised TypeError" in result.stderr
    write(tmp_path, "pyproject.toml", '[tool.jitfix.validate]\ntimeout = "soon"\n')
    assert invoke("check", "--validate", str(tmp_path / "mixed.py")).exit_code == 2


# Rewrites validation holds back: `ramp` returns a string, which no jitted function can;
# `shift` and `grow` call the user's own `lax.cond` and `lax.fori_loop`, whose branches (or
# carry) differ in type for an int argument (see inputs.MAX_ONE_INT): they fail under jit as
# written too, and jitfix does not change those calls. The list only shrinks.
KNOWN_FAILURES = [
    "arrays_conversion_for_shape_made_static:ramp",
    "conditionals_closure_flag_in_and:grow",
    "conditionals_helper_of_the_enclosing_function_in_a_branch:shift",
]


# Validation runs a child process per module: the fixtures are validated in shards, which
# xdist spreads over the cores.
SHARDS = 8


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_fixture_rewrite_validates(tmp_path: Path, tmp_path_factory, shard: int) -> None:
    """Validation over every fixture's original: no rewrite fails but the KNOWN_FAILURES,
    and, over all the shards, most pass outright (checked by whichever shard ends last)."""
    from fixture_support import all_fixtures

    rewritten = [fixture for fixture in all_fixtures() if fixture.expected != fixture.source]
    for fixture in rewritten[shard::SHARDS]:
        (tmp_path / f"{fixture.path.parent.name}_{fixture.path.stem}.py").write_text(fixture.source)
    result = invoke("check", "--validate", "--output-format", "json", "--quiet", str(tmp_path))
    validations = {(r["path"], r["validation"]["function"]): r["validation"]
                   for r in json.loads(result.stdout) if r.get("validation")}
    assert validations
    failed = sorted(f"{Path(path).stem}:{function}" for (path, function), v in validations.items()
                    if v["status"] == "failed")
    written = {path.stem for path in tmp_path.glob("*.py")}
    known = [failure for failure in KNOWN_FAILURES if failure.split(":")[0] in written]
    assert failed == known, (failed, [v["failure"] for v in validations.values() if v["status"] == "failed"])
    passed = [v for v in validations.values() if v["status"] == "passed"]
    counts = {"validated": len(validations), "failed": len(failed), "passed": len(passed),
              "full": len([v for v in passed if not v["branches"]["missed"]])}
    # The shards of one session (each xdist worker's temporary folder is under one root).
    shards = tmp_path_factory.getbasetemp().parent / "validated-shards"
    shards.mkdir(exist_ok=True)
    (shards / f"{shard}.tmp").write_text(json.dumps(counts))
    (shards / f"{shard}.tmp").replace(shards / f"{shard}.json")
    done = [json.loads(path.read_text()) for path in shards.glob("*.json")]
    if len(done) == SHARDS:
        total = {key: sum(counts[key] for counts in done) for key in counts}
        assert total["passed"] + total["failed"] >= 0.9 * total["validated"], total  # few are skipped
        assert total["full"] >= 0.9 * total["passed"], total


def test_a_function_that_returns_a_function_is_skipped_not_failed(tmp_path: Path) -> None:
    """A schedule factory returns a closure: two closures are never equal by value, so its
    validation says why it cannot compare them, and does not call the rewrite wrong."""
    original = write(tmp_path, "schedule.py", (
        "import jax\nimport jax.numpy as jnp\n\n\ndef make_schedule(base_lr: float, top: int):\n"
        "    def learning_rate_fn(step):\n        if step < top:\n            return base_lr * step / top\n"
        "        return base_lr\n\n    return jax.jit(learning_rate_fn)\n"))
    fixed = write(tmp_path, "fixed.py", subprocess.run(
        [sys.executable, "-m", "jitfix", "fix", "-"], input=original.read_text(), capture_output=True, text=True).stdout)
    assert "lax.cond" in fixed.read_text()
    result = invoke("validate", str(original), str(fixed))
    assert "make_schedule skipped (it returns a function" in result.stdout, result.stdout
    assert " failed (" not in result.stdout


def test_a_pytree_class_of_the_module_is_the_same_structure_in_the_rewrite(tmp_path: Path) -> None:
    """The original and the rewrite are imported apart, each with its own `State` class: a
    result of the module's NamedTuple compares by its structure, not by the class object."""
    original = write(tmp_path, "state.py", (
        "from typing import NamedTuple\n\nimport jax\nimport jax.numpy as jnp\n\n\n"
        "class State(NamedTuple):\n    params: jnp.ndarray\n    step: jnp.ndarray\n\n\n"
        "@jax.jit\ndef advance(state: State, x: jax.Array) -> State:\n    if x.sum() > 0:\n"
        "        return State(state.params + x, state.step + 1)\n    return State(state.params - x, state.step + 1)\n"))
    fixed = write(tmp_path, "fixed.py", subprocess.run(
        [sys.executable, "-m", "jitfix", "fix", "-"], input=original.read_text(), capture_output=True, text=True).stdout)
    assert "lax.cond" in fixed.read_text()
    examples = write(tmp_path, "examples.py", (
        "import jax.numpy as jnp\n\nfrom state import State\n\n"
        "EXAMPLES = {'state:advance': [((State(jnp.zeros(2), jnp.array(0)), jnp.ones(2)), {}),\n"
        "                              ((State(jnp.ones(2), jnp.array(3)), -jnp.ones(2)), {})]}\n"))
    result = invoke("validate", "--examples", str(examples), str(original), str(fixed))
    assert "advance passed (2 inputs" in result.stdout, result.stdout


def test_elapsed_times_a_program_prints_are_never_a_difference() -> None:
    from jitfix.validate.compare import first_line_difference

    # Two eager runs may agree on a rounded timing by chance: it is still no jit difference.
    assert first_line_difference("ok\n1 passed in 1.90s\n", "ok\n1 passed in 2.27s\n", "eager") is None
    assert first_line_difference("took 0.001234 ms\n", "took 0.5 ms\n", "eager") is None
    assert first_line_difference("loss 1.5\n", "loss 2.5\n", "eager") == "line 1: 'loss 2.5', eager 'loss 1.5'"
    assert first_line_difference("3 steps\n", "4 steps\n", "eager") is not None


def test_a_host_draw_passed_in_validates_draw_for_draw(tmp_path: Path) -> None:
    """A draw from Python's generator that the rewrite makes at each call, outside the trace,
    is compared with the eager original's: both sides start each call from one generator
    state, so they draw the same number (before, the rewrite drew the next one and failed)."""
    original = write(tmp_path, "jitter.py", (
        "import random\n\nimport jax\nimport jax.numpy as jnp\n\nrandom.seed(0)\n\n\n@jax.jit\n"
        "def jitter(x: jax.Array):\n    return x + random.random()\n"))
    fixed = write(tmp_path, "fixed.py", subprocess.run(
        [sys.executable, "-m", "jitfix", "fix", "-"], input=original.read_text(), capture_output=True, text=True).stdout)
    assert "random_value=random.random()" in fixed.read_text()
    result = invoke("validate", str(original), str(fixed))
    assert " failed (" not in result.stdout, result.stdout
    assert "jitter" in result.stdout and "passed" in result.stdout, result.stdout


def test_draws_of_generator_objects_passed_in_validate_draw_for_draw(tmp_path: Path) -> None:
    """A draw from a generator object -- one the module holds, one a caller passes as a static
    argument -- made at each call by the rewrite is compared with the eager original's: each
    call starts from one state of the module's generator and gets its own copy of a generator
    argument, so both sides draw the same numbers (the gradient check too)."""
    original = write(tmp_path, "bootstrap.py", (
        "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n\n"
        "RNG = np.random.default_rng(7)\n\n\n"
        "@partial(jax.jit, static_argnames=('rng',))\ndef resampled_mean(data, rng):\n"
        "    n = data.shape[0]\n    idx = rng.integers(0, n, size=(4, n))\n    return data[idx].mean()\n\n\n"
        "@jax.jit\ndef jitter(x):\n    return (x + RNG.normal(size=x.shape)).sum()\n\n\n"
        "def main():\n    data = jnp.arange(6.0)\n"
        "    return resampled_mean(data, np.random.default_rng(1)), jitter(data)\n"))
    fixed = write(tmp_path, "fixed.py", subprocess.run(
        [sys.executable, "-m", "jitfix", "fix", "-"], input=original.read_text(), capture_output=True, text=True).stdout)
    assert "idx=rng.integers(0, n, size=(4, n))" in fixed.read_text()
    assert "normal=RNG.normal(size=x.shape)" in fixed.read_text()
    examples = write(tmp_path, "examples.py", (
        "import jax.numpy as jnp\nimport numpy as np\n\n"
        "EXAMPLES = {'resampled_mean': [((jnp.arange(6.0), np.random.default_rng(1)), {})],\n"
        "            'jitter': [((jnp.arange(3.0),), {})]}\n"))
    result = invoke("validate", "--examples", str(examples), str(original), str(fixed))
    assert " failed (" not in result.stdout, result.stdout
    assert "resampled_mean passed" in result.stdout and "jitter passed" in result.stdout, result.stdout
