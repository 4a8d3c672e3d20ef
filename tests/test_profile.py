"""`jitfix profile -- COMMAND`: per jitted function, its calls and compiles, and why it recompiled."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from jitfix.profile import read_profile, shape_buckets

PROGRAM = '''
from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def scale(x):
    return x * 2


@partial(jax.jit, static_argnames="n")
def repeat(x, n):
    return x * n


for size in (3, 3, 5, 9):
    scale(jnp.ones(size))
scale(jnp.ones(3, jnp.int32))
for n in range(3):
    repeat(jnp.ones(2), n)
for _ in range(2):
    jax.jit(lambda x: x + 1)(jnp.ones(2))
print("done")
'''


def _profile(tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    (tmp_path / "train.py").write_text(PROGRAM, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "jitfix", "profile", *options, "--", sys.executable, "train.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_each_cause_of_recompiling_is_named_with_its_fix(tmp_path: Path) -> None:
    done = _profile(tmp_path, "--output-format", "json", "--chart", "compiles.svg", "--report", "profile.md")
    assert done.returncode == 1, done.stderr  # functions recompiled for causes it names
    report = json.loads(done.stdout)
    by_name = {f["function"]: f for f in report["functions"]}
    scale, repeat, made = by_name["scale"], by_name["repeat"], by_name["<lambda>"]
    assert (scale["calls"], scale["compiles"]) == (5, 4)  # sizes 3, 5, 9, then an int32 array
    assert [(r["cause"], r["argument"], r["before"], r["after"]) for r in scale["recompiles"]] == [
        ("shape", "x", "f32[3]", "f32[5]"), ("shape", "x", "f32[3]", "f32[9]"), ("dtype", "x", "f32[3]", "i32[3]")]
    assert any("lengths [4, 8, 16]" in s for s in scale["suggestions"])
    assert (repeat["calls"], repeat["compiles"]) == (3, 3)
    assert [(r["cause"], r["argument"], r["before"], r["after"]) for r in repeat["recompiles"]] == [
        ("static", "n", "0", "1"), ("static", "n", "0", "2")]
    assert (made["calls"], made["compiles"]) == (2, 2)
    assert [r["cause"] for r in made["recompiles"]] == ["new function"]
    assert all(r["callsite"].startswith("train.py:") or "/train.py:" in r["callsite"]
               for f in report["functions"] for r in f["recompiles"])  # the user's line, not the hook's
    assert "done" not in done.stdout  # the program's own output is not mixed into the report
    assert (tmp_path / "compiles.svg").read_text().startswith("<svg")
    assert "| `scale` |" in (tmp_path / "profile.md").read_text()


def test_a_program_that_compiles_each_function_once_exits_0(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef step(x):\n    return x + 1\n\n\n"
        "x = jnp.zeros(3)\nfor _ in range(5):\n    x = step(x)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "jitfix", "profile", "--", sys.executable, "train.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("step"))
    assert row.split()[2:4] == ["5", "1"]  # calls, compiles


def test_calls_count_when_the_program_is_a_module_imported_by_the_command(tmp_path: Path) -> None:
    """`python -c "import train; train.main()"`: the module's `from jax import jit` runs while
    the command's own import is under way, and its jit must already be the counting one."""
    (tmp_path / "train.py").write_text(
        "import jax.numpy as jnp\nfrom jax import jit\n\n\n@jit\ndef step(x):\n    return x + 1\n\n\n"
        "def main():\n    x = jnp.zeros(3)\n    for _ in range(4):\n        x = step(x)\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "jitfix", "profile", "--", sys.executable, "-c",
                           "import train; train.main()"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    row = next(line for line in done.stdout.splitlines() if line.startswith("step"))
    assert row.split()[2:4] == ["4", "1"], done.stdout + done.stderr  # calls, compiles


def test_a_log_with_jax_wording_it_does_not_know_keeps_jax_words(tmp_path: Path) -> None:
    log = tmp_path / "profile.jsonl"
    miss = ("TRACING CACHE MISS at m.py:9 (<module>):\n  for f defined at m.py:3\n  all previously seen cache keys "
            "differ. For the closest previous key:\n  Tracing context doesn't match, e.g. due to config.")
    entries = [{"kind": "jit", "file": "m.py", "line": 3, "function": "f", "parameters": ["x"], "static": []},
               {"kind": "log", "message": miss, "t": 1.0},
               {"kind": "log", "message": "Compiling jit(f) with global shapes", "t": 1.1},
               {"kind": "log", "message": "Finished XLA compilation of jit(f) in 0.5 sec", "t": 1.2},
               {"kind": "calls", "file": "m.py", "line": 3, "function": "f", "calls": 2, "seconds": 0.6}]
    log.write_text("\n".join(json.dumps(entry) for entry in entries) + "\nnot json\n", encoding="utf-8")
    functions, eager, _ = read_profile(log)
    assert eager == 0
    [f] = functions
    assert (f.calls, f.compiles, f.compile_seconds) == (2, 1, 0.5)
    assert [r.cause for r in f.recompiles] == ["Tracing context doesn't match, e.g. due to config."]


def test_shape_buckets_cover_the_lengths_seen_along_the_one_axis_that_varies() -> None:
    assert shape_buckets(["f32[3]", "f32[5]", "f32[9]"]) == [4, 8, 16]
    assert shape_buckets(["f32[2,7]", "f32[2,8]"]) == [8]
    assert shape_buckets(["f32[2,7]", "f32[3,8]"]) == []  # two axes vary: no single padding
    assert shape_buckets(["f32[3]", "f32[3,1]"]) == []


def test_fix_jits_once_what_a_loop_jitted_anew_and_shows_the_compiles_before_and_after(tmp_path: Path) -> None:
    program = ("import jax\nimport jax.numpy as jnp\n\nx = jnp.ones(3)\ntotal = 0.0\nfor step in range(4):\n"
               "    total = total + jax.jit(lambda v: (v * 2.0).sum())(x)\nprint(total)\n")
    # The interpreter named by a path relative to the project (`../env/python`, a virtualenv
    # beside it): the scratch copy the fix is profiled in has no such neighbour.
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (tmp_path / "env" / "python").chmod(0o755)
    tmp_path = tmp_path / "project"
    tmp_path.mkdir()
    (tmp_path / "loop.py").write_text(program, encoding="utf-8")
    command = [sys.executable, "-m", "jitfix", "profile", "--fix", "--", "../env/python", "loop.py"]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr  # after the fix nothing recompiles
    assert "+jitted = jax.jit(lambda v: (v * 2.0).sum())" in done.stdout
    assert "<lambda> (loop.py:7): 4 -> 1" in done.stderr
    assert (tmp_path / "loop.py").read_text(encoding="utf-8") == program  # shown, not written
    done = subprocess.run([*command[:4], "--write", *command[4:]], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert "jitted(x)" in (tmp_path / "loop.py").read_text(encoding="utf-8"), done.stderr


def test_fix_removes_each_cause_the_example_recompiles_for_and_prints_the_same(tmp_path: Path) -> None:
    """examples/recompiles.py compiles three functions on every pass (a new length, a new
    static value, a new lambda) and one twice (an int, then a float): after --fix the rerun
    compiles the first three a few times at most, and prints the same total."""
    example = Path(__file__).resolve().parents[1] / "examples" / "recompiles.py"
    (tmp_path / "recompiles.py").write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "jitfix", "profile", "--fix", "--output-format", "json", "--",
                           sys.executable, "recompiles.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    before = {f["function"]: f for f in json.loads(done.stdout)["functions"]}
    assert {name: (f["calls"], f["compiles"]) for name, f in before.items()} == {
        "squash": (16, 16), "decay": (16, 16), "<lambda>": (16, 16), "scale": (2, 2)}
    assert {r["cause"] for r in before["squash"]["recompiles"]} == {"shape"}
    assert {(r["cause"], r["argument"]) for r in before["decay"]["recompiles"]} == {("static", "step")}
    assert {r["cause"] for r in before["<lambda>"]["recompiles"]} == {"new function"}
    assert [(r["cause"], r["argument"]) for r in before["scale"]["recompiles"]] == [("dtype", "factor")]
    after = dict(re.findall(r"^  (\S+) \(recompiles\.py:\d+\): \d+ -> (\d+)$", done.stderr, re.MULTILINE))
    assert after == {"<lambda>": "1", "squash": "5", "decay": "1", "scale": "2"}, done.stderr  # 5: 1, 2, 4, 8, 16
    assert "the command printed the same with the fixes" in done.stderr
    fixes = json.loads(done.stdout)["fixes"]
    assert "+def squash_bucketed(x):" in fixes["diff"] and fixes["output_difference"] is None
    assert {row["function"].split()[0]: row["after"] for row in fixes["compiles"]} == {
        "<lambda>": 1, "squash": 5, "decay": 1, "scale": 2}
