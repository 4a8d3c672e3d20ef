"""Measure jitfix on the real-failure corpus: jit failures users reported, made runnable.

    python benchmarks/reports.py [--mode fix|run|both] [-k SUBSTR] [-j N] [--no-cache] [--json FILE]
    python benchmarks/reports.py --check [-k SUBSTR]      # are the cases themselves valid?

The corpus is ``benchmarks/reports/``: one folder per category, one module per case (or a
package folder for a case across modules). Each case's docstring names its report
(``Source: <URL>``), what fails (``Fails:``) and how a careful person fixed it (``Fix:``); its
``main()`` exercises the code and returns values, and ``EXPECT_STDOUT = True`` says printed
output matters too. Beside each case, ``NAME.fixed.py`` (or the folder ``NAME.fixed/``) is
that careful person's fix, which proves the case has one. ``no_static_form/`` holds failures
with no static form (a ``Category:`` line says which family): the right answer there is a
precise finding. ``clean/`` holds correct library code of each category's shape: jitfix must
leave it byte-identical and report nothing.

Per case, each step in a fresh process (so a stale global is seen as a user sees it):

- the **reference**: ``main()`` under ``jax.disable_jit()``;
- the **original** under jit must raise or differ from the reference;
- ``fix`` mode: ``jitfix fix`` on a copy; ``run`` mode: ``jitfix run --write -- python -c
  'import CASE; CASE.main()'`` on a copy; then the **rewrite** under jit must equal the
  reference (results ``allclose``, printed lines where asked), the functions the original
  jitted must still be jitted, and a second ``jitfix fix`` must change nothing.

Outcomes: ``fixed``; ``declined`` (jitfix left a finding: which); ``no finding`` (jitfix saw
nothing); ``wrong rewrite`` (it changed the code, and the rewrite still fails, differs, is no
longer jitted or is not idempotent, with no finding left to say so); ``crash`` (jitfix itself
failed or timed out). In ``no_static_form/`` a case whose failing line carries a finding counts
as fixed: that finding is the right answer.

Results are cached by the case's content, jitfix's source and the mode in
``benchmarks/.reports_cache/`` (references by the case alone), so a rerun after a change is
quick. The last line is ``reports: N cases, fix F (P%), run R (Q%)``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "reports"
CACHE = HERE / ".reports_cache"
SOURCE_TREE = HERE.parent / "src" / "jitfix"
NO_STATIC_FORM = "no_static_form"
CLEAN = "clean"
FIXED_SUFFIX = ".fixed"
STEP_TIMEOUT = 180.0  # seconds for one run of a case's main()
JITFIX_TIMEOUT = 600.0  # seconds for one jitfix command
OUTCOMES = ("fixed", "declined", "no finding", "wrong rewrite", "crash")
# Transforms whose call or decoration makes a function traced: the rewrite must keep every one.
TRACING_TRANSFORMS = frozenset({"jit", "filter_jit", "pjit", "pmap", "vmap", "filter_vmap"})


# -- the cases ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One runnable report: a module ``NAME.py`` or a package folder ``NAME/``."""

    path: Path
    category: str
    source: str
    fails: str
    fix: str
    expect_stdout: bool
    no_static_form: bool
    # A recompilation case: at most this many compiles of each named jitted function.
    max_compiles: dict[str, int] = field(default_factory=dict, hash=False)

    @property
    def name(self) -> str:
        return self.path.stem if self.path.is_file() else self.path.name

    @property
    def key(self) -> str:
        return str(self.path.relative_to(CORPUS))

    @property
    def fixed_path(self) -> Path:
        if self.path.is_file():
            return self.path.with_name(self.name + FIXED_SUFFIX + ".py")
        return self.path.with_name(self.name + FIXED_SUFFIX)

    @property
    def entry(self) -> Path:
        """The file holding the docstring and ``main()``."""
        return self.path if self.path.is_file() else self.path / "__init__.py"


def header(entry: Path) -> dict[str, str]:
    """The ``Key: value`` lines of a module's docstring (a value may continue on indented lines)."""
    tree = ast.parse(entry.read_text(encoding="utf-8"))
    fields: dict[str, str] = {}
    last = None
    for line in (ast.get_docstring(tree) or "").splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() and " " not in key.strip() and not line.startswith(" "):
            last = key.strip().lower()
            fields[last] = value.strip()
        elif last and line.startswith(" ") and line.strip():
            fields[last] += " " + line.strip()
        else:
            last = None
    for node in tree.body:
        for target in node.targets if isinstance(node, ast.Assign) else ():
            if isinstance(target, ast.Name) and target.id in ("EXPECT_STDOUT", "MAX_COMPILES"):
                fields[target.id.lower()] = repr(ast.literal_eval(node.value))
    return fields


def _is_case(path: Path) -> bool:
    name = path.name if path.is_dir() else path.stem
    if name.startswith(("_", ".")) or FIXED_SUFFIX in name or name == "__pycache__":
        return False
    return (path.is_file() and path.suffix == ".py") or (path.is_dir() and (path / "__init__.py").is_file())


def load_case(path: Path) -> Case:
    entry = path if path.is_file() else path / "__init__.py"
    fields = header(entry)
    folder = path.parent.name
    no_static = folder == NO_STATIC_FORM
    category = fields.get("category", "") if no_static or folder == CLEAN else folder
    return Case(path, category, fields.get("source", ""), fields.get("fails", ""), fields.get("fix", ""),
                fields.get("expect_stdout") == "True", no_static,
                ast.literal_eval(fields.get("max_compiles", "{}")))


def discover(selector: str | None = None, *, clean: bool = False) -> list[Case]:
    """The corpus's cases (or, with ``clean``, its clean twins), ``selector`` a substring of the key."""
    cases = []
    for folder in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        if (folder.name == CLEAN) != clean:
            continue
        for path in sorted(folder.iterdir()):
            if _is_case(path):
                case = load_case(path)
                if selector is None or selector in case.key:
                    cases.append(case)
    return cases


# -- running a case's main() in a process of its own -------------------------------------------

def _child(mode: str, folder: str, name: str, out: str) -> int:
    """In a fresh process: import ``name`` from ``folder`` and run its ``main()``, eagerly
    (``mode == "eager"``) or as written (``"jit"``); pickle the flattened result or the error."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.path.insert(0, folder)
    sys.dont_write_bytecode = True
    import jax
    import numpy as np

    def run():
        module = __import__(name)
        return module.main()

    record: dict = {"compiles": _count_compiles(jax)}
    try:
        context = jax.disable_jit() if mode == "eager" else contextlib.nullcontext()
        with context:
            result = run()
        leaves, treedef = jax.tree_util.tree_flatten(result)
        record["treedef"] = str(treedef)
        record["leaves"] = [np.asarray(leaf) if hasattr(leaf, "shape") or isinstance(leaf, (int, float, complex))
                            else repr(leaf) for leaf in leaves]
    except BaseException as error:  # noqa: BLE001 -- the case's failure is the measurement
        record["error"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
        record["traceback"] = traceback.format_exc()[-3000:]
    sys.stdout.flush()
    with open(out, "wb") as handle:
        pickle.dump(record, handle)
    return 0


def _count_compiles(jax) -> Counter:
    """Compiles of each jitted function from now on, by name (JAX logs ``Compiling jit(NAME)``)."""
    import logging
    import re

    counts: Counter = Counter()
    pattern = re.compile(r"Compiling (?:jit|pmap)\((\S+?)\)")

    class Counting(logging.Handler):
        def emit(self, record):
            found = pattern.match(record.getMessage())
            if found:
                counts[found.group(1)] += 1

    jax.config.update("jax_log_compiles", True)
    logger = logging.getLogger("jax")
    logger.addHandler(Counting(logging.DEBUG))
    logger.propagate = False  # counted, not printed
    return counts


@dataclass
class Execution:
    """What one run of ``main()`` gave."""

    error: str | None = None
    treedef: str = ""
    leaves: list = field(default_factory=list)
    stdout: str = ""
    traceback: str = ""
    compiles: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        return f"raises {self.error}" if self.error else "returns"


def execute(case_path: Path, name: str, mode: str, *, timeout: float = STEP_TIMEOUT) -> Execution:
    """Run the case at ``case_path`` (a module or package, copied in as ``name``) in a child."""
    with tempfile.TemporaryDirectory(prefix="jitfix-report-") as scratch:
        target = Path(scratch) / (name + ".py" if case_path.is_file() else name)
        (shutil.copyfile if case_path.is_file() else shutil.copytree)(case_path, target)
        out = Path(scratch) / "result.pickle"
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "_child", mode, scratch, name,
                                   str(out)], capture_output=True, text=True, timeout=timeout, cwd=scratch, env=env)
        except subprocess.TimeoutExpired:
            return Execution(error=f"timed out after {timeout:.0f} s")
        if not out.exists():
            return Execution(error=f"the process died ({done.returncode}): {done.stderr.strip()[-300:]}",
                             stdout=done.stdout)
        record = pickle.loads(out.read_bytes())
        return Execution(record.get("error"), record.get("treedef", ""), record.get("leaves", []), done.stdout,
                         record.get("traceback", ""), dict(record.get("compiles", {})))


def difference(reference: Execution, other: Execution, *, compare_stdout: bool,
               max_compiles: dict[str, int] | None = None) -> str | None:
    """How ``other`` differs from ``reference`` (None: it agrees)."""
    import numpy as np

    if other.error:
        return f"raises {other.error}"
    for name, most in (max_compiles or {}).items():
        if other.compiles.get(name, 0) > most:
            return f"compiles {name} {other.compiles[name]} times (at most {most})"
    if reference.treedef != other.treedef:
        return f"returns {other.treedef}, expected {reference.treedef}"
    for index, (want, got) in enumerate(zip(reference.leaves, other.leaves)):
        if isinstance(want, str) or isinstance(got, str):
            if want != got:
                return f"result {index}: {got!r}, expected {want!r}"
            continue
        if want.shape != got.shape:
            return f"result {index}: shape {got.shape}, expected {want.shape}"
        try:
            close = np.allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                                rtol=1e-5, atol=1e-6, equal_nan=True)
        except (TypeError, ValueError):
            close = np.array_equal(got, want)
        if not close:
            return f"result {index}: {np.array2string(got, threshold=8)}, expected {np.array2string(want, threshold=8)}"
    if compare_stdout and reference.stdout.strip() != other.stdout.strip():
        want, got = reference.stdout.strip().splitlines(), other.stdout.strip().splitlines()
        for line, (a, b) in enumerate(zip(want + [""] * len(got), got + [""] * len(want)), 1):
            if a != b:
                return f"printed line {line}: {b!r}, expected {a!r}"
    return None


# -- is the case valid? --------------------------------------------------------------------------

def check_case(case: Case) -> list[str]:
    """What is wrong with the case itself (empty: it is valid)."""
    problems = []
    if not case.source.startswith("https://"):
        problems.append("no `Source: https://...` line in the docstring")
    if not case.fails or (not case.fix and not case.no_static_form):
        problems.append("the docstring needs `Fails:` and `Fix:` lines")
    if not case.category:
        problems.append("no category (a `Category:` line in no_static_form/ and clean/)")
    if not case.name.isidentifier():
        problems.append(f"{case.name!r} is not importable")
    if problems:
        return problems
    reference = execute(case.path, case.name, "eager")
    if reference.error:
        return [f"the reference (jit disabled) raises {reference.error}\n{reference.traceback}"]
    original = execute(case.path, case.name, "jit")
    if difference(reference, original, compare_stdout=case.expect_stdout, max_compiles=case.max_compiles) is None:
        problems.append("the original agrees with the reference under jit: nothing fails")
    if case.no_static_form:
        return problems
    if not case.fixed_path.exists():
        return problems + [f"no hand fix at {case.fixed_path.name}"]
    fixed = execute(case.fixed_path, case.name, "jit")
    differs = difference(reference, fixed, compare_stdout=case.expect_stdout, max_compiles=case.max_compiles)
    if differs:
        problems.append(f"the hand fix under jit {differs}\n{fixed.traceback}")
    lost = jitted_names(case.path) - jitted_names(case.fixed_path)
    if lost:
        problems.append(f"the hand fix no longer jits {sorted(lost)}")
    return problems


def python_files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.rglob("*.py"))


def jitted_names(path: Path) -> set[str]:
    """Functions decorated with, or passed to, a tracing transform (``jax.jit``, ``filter_jit``,
    ``vmap``...), by ``file:function`` (the file relative to a package case; ``.`` for a module)."""
    names = set()
    for file in python_files(path):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        module = str(file.relative_to(path)) if path.is_dir() else "."
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(_transform_name(d) for d in node.decorator_list):
                    names.add(f"{module}:{node.name}")
            elif isinstance(node, ast.Call) and _transform_name(node.func):
                for argument in node.args[:1]:
                    if isinstance(argument, ast.Name):
                        names.add(f"{module}:{argument.id}")
                    elif isinstance(argument, ast.Attribute):
                        names.add(f"{module}:{argument.attr}")
    return names


def _transform_name(node: ast.expr) -> bool:
    """``jax.jit``, ``jit``, ``jax.jit(static_argnames=...)``, ``partial(jax.jit, ...)``."""
    if isinstance(node, ast.Call):
        if _dotted_end(node.func) == "partial":
            return bool(node.args) and _transform_name(node.args[0])
        return _transform_name(node.func)
    return _dotted_end(node) in TRACING_TRANSFORMS


def _dotted_end(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        return _child(*argv[1:5])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("fix", "run", "both"), default="both")
    parser.add_argument("-k", dest="selector", help="only cases whose path contains this")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--check", action="store_true", help="check that the cases themselves are valid")
    arguments = parser.parse_args(argv)
    if arguments.check:
        return check_corpus(arguments.selector, arguments.jobs)
    raise SystemExit("not yet")


def check_corpus(selector: str | None, jobs: int) -> int:
    cases = discover(selector)
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        results = list(pool.map(check_case, cases))
    bad = 0
    for case, problems in zip(cases, results):
        if problems:
            bad += 1
            print(f"INVALID {case.key}:")
            for problem in problems:
                print("    " + problem.replace("\n", "\n    "))
        else:
            print(f"ok      {case.key}")
    print(f"check: {len(cases)} cases, {len(cases) - bad} valid, {bad} invalid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
