"""`jitfix run` against `jitfix fix` on the suite's fixtures turned into scripts.

Each fixture whose SAMPLES are plain calls becomes a two-file project: the fixture as
``model.py`` and a ``main.py`` that makes each sample call and prints its result. Two forms:

- *as written*: the fixture's own jit decorators stay, so `fix` sees what it always sees;
- *jit from a table*: a plain ``@jax.jit`` on a sampled function is taken off, and
  ``main.py`` applies ``jax.jit`` through a dict lookup, so no analysis of the source can tell
  the function is traced -- only a run can.

For each, the fixtures `fix` rewrites and the ones `jitfix run` rewrites into a program that
exits and prints as the eager run does are counted, with the rounds, reruns and seconds.

    python benchmarks/run_fixtures.py [--limit N] [--jobs J]
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
OUTPUT_MARKER = "# output\n"
PLAIN_JIT = re.compile(r"^@(?:jax\.)?jit\n(?=def (\w+))", re.MULTILINE)


@dataclass
class Outcome:
    fixture: str
    form: str
    fix_changed: bool
    run_changed: bool
    run_agrees: bool
    rounds: int
    seconds: float


def _plain_calls(source: str) -> list[str] | None:
    """The functions SAMPLES calls, when every entry is a ("name", args, kwargs) tuple."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "SAMPLES" for t in node.targets):
            if not isinstance(node.value, ast.List):
                return None
            names = []
            for entry in node.value.elts:
                if not (isinstance(entry, ast.Tuple) and entry.elts and isinstance(entry.elts[0], ast.Constant)):
                    return None
                names.append(entry.elts[0].value)
            return names
    return None


# Results printed as values (a Python bool and a JAX bool array print alike).
MAIN = """import jax
import numpy

import model

TABLE = {{name: getattr(model, name) for name in {names!r}}}
for name, args, kwargs in model.SAMPLES:
    function = jax.jit(TABLE[name]) if name in {tabled!r} else TABLE[name]
    print(name, jax.tree.map(lambda value: numpy.asarray(value).tolist(), function(*args, **kwargs)))
"""


def _project(folder: Path, source: str, form: str) -> bool:
    """Write the project of one form; False when the form changes nothing."""
    names = _plain_calls(source)
    tabled: list[str] = []
    if form == "table":
        tabled = [name for name in PLAIN_JIT.findall(source) if name in names]
        if not tabled:
            return False
        source = PLAIN_JIT.sub(lambda match: "" if match.group(1) in tabled else match.group(0), source)
    (folder / "model.py").write_text(source)
    (folder / "main.py").write_text(MAIN.format(names=sorted(set(names)), tabled=tabled))
    return True


def _jitfix(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jitfix", *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def measure(path: Path, form: str) -> Outcome | None:
    source = path.read_text().split(OUTPUT_MARKER, 1)[0]
    if "jitfix-config" in source or _plain_calls(source) is None:
        return None
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if not _project(folder, source, form):
            return None
        fixed = _jitfix("diff", "--no-cache", "--unsafe-fixes", "model.py", cwd=folder)
        started = time.perf_counter()
        run = _jitfix("run", "--diff", "--no-validate", "--unsafe-fixes", "--no-color", "--", sys.executable,
                      "main.py", cwd=folder)
        seconds = time.perf_counter() - started
    rounds = len(re.findall(r"^round \d+:", run.stderr, re.MULTILINE))
    return Outcome(f"{path.parent.name}/{path.stem}", form, "+++ " in fixed.stdout, "+++ " in run.stdout,
                   run.returncode == 0 and "output differs" not in run.stderr, rounds, seconds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="fixtures to try (0: all)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    paths = sorted(FIXTURES.glob("*/*.py"))
    if args.limit:
        paths = paths[:: max(len(paths) // args.limit, 1)][: args.limit]
    started = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        outcomes = [o for o in pool.map(lambda job: measure(*job), [(p, f) for f in ("written", "table")
                                                                   for p in paths]) if o is not None]
    for form in ("written", "table"):
        of_form = [o for o in outcomes if o.form == form]
        if not of_form:
            continue
        fix = sum(o.fix_changed for o in of_form)
        run = sum(o.run_changed and o.run_agrees for o in of_form)
        only_fix = [o.fixture for o in of_form if o.fix_changed and not (o.run_changed and o.run_agrees)]
        rounds = sum(o.rounds for o in of_form)
        seconds = sum(o.seconds for o in of_form)
        print(f"{form}: {len(of_form)} fixtures; fix rewrites {fix}, run rewrites and agrees {run}; "
              f"{rounds} jitted runs, {seconds:.0f} s of `jitfix run` ({seconds / len(of_form):.1f} s each)")
        for name in only_fix:
            print(f"  fixed by fix, not by run: {name}")
    print(f"total {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
