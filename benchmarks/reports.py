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
failed or timed out). A rewrite that computes the right values but still compiles more often
than ``MAX_COMPILES`` did not go far enough, it is not wrong: ``declined`` (or ``no finding``, when no
finding is left). In ``no_static_form/`` a case whose failing line carries a finding counts as
fixed: that finding is the right answer.

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
BASELINE = CORPUS / "baseline.json"  # the outcome of each case in each mode, as last measured
FIXED_SUFFIX = ".fixed"
STEP_TIMEOUT = 180.0  # seconds for one run of a case's main()
JITFIX_TIMEOUT = 600.0  # seconds for one jitfix command
OUTCOMES = ("fixed", "declined", "no finding", "wrong rewrite", "crash")
# Transforms whose call or decoration makes a function traced: the rewrite must keep every one.
TRACING_TRANSFORMS = frozenset({"jit", "filter_jit", "pjit", "pmap", "vmap", "filter_vmap"})
# Transforms whose result is the function they are given, changed: jitting it compiles that function
# (`_checkified` is the `checkify.checkify` jitfix's staged checks write, keeping the signature).
FUNCTION_TRANSFORMS = TRACING_TRANSFORMS | {"checkify", "_checkified", "grad", "value_and_grad", "jacfwd", "jacrev",
                                            "remat", "checkpoint"}


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
    # A case with no static form is its own category in the figures; its family (`Category:`) says
    # what kind of failure it is. A clean twin's `Category:` names the category it mirrors.
    category = fields.get("category", "") if folder == CLEAN else folder
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
        wide = np.complex128 if np.iscomplexobj(got) or np.iscomplexobj(want) else np.float64
        try:
            close = np.allclose(np.asarray(got, dtype=wide), np.asarray(want, dtype=wide),
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
    if not case.category or case.no_static_form and not header(case.entry).get("category"):
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


def jitted_names(path: Path, wrappers: bool = False) -> set[str]:
    """Functions decorated with, or passed to, a tracing transform (``jax.jit``, ``filter_jit``,
    ``vmap``...), by ``file:function`` (the file relative to a package case; ``.`` for a module).
    With ``wrappers`` (read of a rewrite), also a def of the file's top level, or a method,
    that calls one of those by name (``_f(...)``, ``self._f(...)``): a def a rewrite left with
    the old name and parameters around the jitted work it moved (state passed in and stored
    back, a global passed as a parameter) keeps its work compiled."""
    names = set()
    for file in python_files(path):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        module = str(file.relative_to(path)) if path.is_dir() else "."
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(_transform_name(d) for d in node.decorator_list):
                    found.add(node.name)
            elif isinstance(node, ast.Call) and _dotted_end(node.func) in TRACING_TRANSFORMS:  # jax.jit(f)
                for argument in node.args[:1]:
                    while isinstance(argument, ast.Call) and _dotted_end(argument.func) in FUNCTION_TRANSFORMS \
                            and argument.args:
                        argument = argument.args[0]  # jax.jit(checkify.checkify(f)) compiles f
                    if isinstance(argument, ast.Name):
                        found.add(argument.id)
                    elif isinstance(argument, ast.Attribute):
                        found.add(argument.attr)
        names.update(f"{module}:{name}" for name in found)
        if wrappers:
            defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)] + [
                method for node in tree.body if isinstance(node, ast.ClassDef)
                for method in node.body if isinstance(method, ast.FunctionDef)]
            names.update(f"{module}:{node.name}" for node in defs if any(
                isinstance(call, ast.Call) and _dotted_end(call.func) in found - {node.name}
                for call in ast.walk(node)))
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


def check_corpus(selector: str | None, jobs: int) -> int:
    """``--check``: say of each case whether it is valid (see ``check_case``)."""
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


# -- judging jitfix on a case ----------------------------------------------------------------------

@dataclass
class Outcome:
    """How jitfix did on one case in one mode."""

    case: str
    category: str
    mode: str
    outcome: str  # one of OUTCOMES, or "invalid" (the case itself is broken)
    detail: str = ""  # the findings, the difference, the crash
    reason: str = ""  # the kind of ``detail``, counted across the corpus
    findings: list[str] = field(default_factory=list)  # codes jitfix reported on the original


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(hashlib.sha256(part).digest())
    return hasher.hexdigest()[:24]


def _tree_bytes(path: Path) -> bytes:
    return b"".join(str(file.relative_to(path.parent)).encode() + b"\0" + file.read_bytes()
                    for file in python_files(path))


def jitfix_digest() -> str:
    """jitfix's own source and this runner: a change to either makes every judgment stale."""
    return _digest(_tree_bytes(SOURCE_TREE), Path(__file__).read_bytes())


def _cached(key: str, compute):
    """``compute()``, pickled under ``key`` in the cache (unless caching is off)."""
    entry = CACHE / f"{key}.pickle"
    if USE_CACHE and entry.exists():
        with contextlib.suppress(Exception):
            return pickle.loads(entry.read_bytes())
    value = compute()
    if USE_CACHE:
        CACHE.mkdir(exist_ok=True)
        temporary = entry.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_bytes(pickle.dumps(value))
        temporary.replace(entry)
    return value


USE_CACHE = True


def reference_and_original(case: Case) -> tuple[Execution, Execution]:
    """The case's main() with jit disabled and as written, cached by the case's content."""
    key = _digest(_tree_bytes(case.path), Path(__file__).read_bytes())
    return _cached(f"runs-{key}", lambda: (execute(case.path, case.name, "eager"),
                                           execute(case.path, case.name, "jit")))


def _jitfix(*arguments: str, cwd: Path, timeout: float = JITFIX_TIMEOUT) -> subprocess.CompletedProcess | None:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        return subprocess.run([sys.executable, "-m", "jitfix", *arguments], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None


def _findings(target: Path, cwd: Path) -> list[dict]:
    done = _jitfix("check", "--no-cache", "--output-format", "json", str(target), cwd=cwd)
    if done is None or done.returncode not in (0, 1):
        return []
    with contextlib.suppress(json.JSONDecodeError):
        return json.loads(done.stdout)
    return []


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(file.relative_to(path.parent)): file.read_bytes() for file in python_files(path)}


def _failing_line(case: Case, original: Execution) -> int | None:
    """The last line of the case's own code in the traceback of the original under jit."""
    line = None
    for frame in original.traceback.splitlines():
        if f"{case.name}.py" in frame or f"{os.sep}{case.name}{os.sep}" in frame:
            with contextlib.suppress(ValueError, IndexError):
                line = int(frame.split(", line ")[1].split(",")[0])
    return line


def judge(case: Case, mode: str) -> Outcome:
    """Run jitfix on a copy of ``case`` in ``mode`` and judge the rewrite."""
    reference, original = reference_and_original(case)
    outcome = Outcome(case.key, case.category, mode, "invalid")
    if reference.error:
        outcome.detail = f"the reference raises {reference.error}"
        return outcome
    original_difference = difference(reference, original, compare_stdout=case.expect_stdout,
                                     max_compiles=case.max_compiles)
    if original_difference is None:
        outcome.detail = "the original agrees with the reference under jit"
        return outcome
    with tempfile.TemporaryDirectory(prefix="jitfix-report-") as scratch_name:
        work = Path(scratch_name) / "work"
        work.mkdir()
        target = work / (case.name + ".py" if case.path.is_file() else case.name)
        (shutil.copyfile if case.path.is_file() else shutil.copytree)(case.path, target)
        before = _snapshot(target)
        found = _findings(target, work)
        outcome.findings = sorted({finding["code"] for finding in found})
        done = _apply(mode, case, target, work)
        if done is None or done.returncode not in (0, 1):
            outcome.outcome = "crash"
            what = "timed out" if done is None else f"exit {done.returncode}"
            outcome.detail = f"jitfix {mode} {what}: {(done.stderr if done else '').strip()[-400:]}"
            outcome.reason = f"crash: jitfix {mode} {what}"
            return outcome
        if _snapshot(target) == before:
            return _unchanged(case, outcome, found, original)
        return _judge_rewrite(case, outcome, target, reference, original, original_difference)


def _apply(mode: str, case: Case, target: Path, work: Path) -> subprocess.CompletedProcess | None:
    if mode == "fix":
        return _jitfix("fix", "--no-cache", str(target), cwd=work)
    program = f"import {case.name}; {case.name}.main()"
    return _jitfix("run", "--write", "--no-color", "--root", str(work), "--", sys.executable, "-c", program, cwd=work)


def _unchanged(case: Case, outcome: Outcome, found: list[dict], original: Execution) -> Outcome:
    if case.no_static_form:
        line = _failing_line(case, original)
        precise = [f for f in found if line is None or f["line"] == line]
        outcome.outcome = "fixed" if precise else "no finding"
        outcome.detail = "; ".join(f"{f['code']} at line {f['line']}" for f in precise) or \
            f"no finding at line {line} ({original.summary()})"
        outcome.reason = "no static form: the finding is the answer" if precise else \
            f"no finding: {_error_kind(original)}"
        return outcome
    if found:
        outcome.outcome = "declined"
        outcome.detail = "; ".join(f"{f['code']} at line {f['line']}: {f['message']}" for f in found)
        outcome.reason = "declined: " + ", ".join(sorted({f"{f['code']} {f['name']}" for f in found}))
    else:
        outcome.outcome = "no finding"
        outcome.detail = f"nothing found; under jit the original {original.summary()}"
        outcome.reason = f"no finding: {_error_kind(original)}"
    return outcome


def _error_kind(execution: Execution) -> str:
    if not execution.error:
        return "a silent difference"
    return execution.error.split(":")[0]


def _judge_rewrite(case: Case, outcome: Outcome, target: Path, reference: Execution, original: Execution,
                   original_difference: str) -> Outcome:
    rewritten = execute(target, case.name, "jit")
    differs = difference(reference, rewritten, compare_stdout=case.expect_stdout, max_compiles=case.max_compiles)
    lost = jitted_names(case.path) - jitted_names(target, wrappers=True)
    left = _findings(target, target.parent)
    if lost:
        outcome.outcome, outcome.reason = "wrong rewrite", "wrong rewrite: no longer jitted"
        outcome.detail = f"the rewrite no longer jits {sorted(lost)}"
        return outcome
    if differs is None:
        again = _idempotence(target)
        if again:
            outcome.outcome, outcome.reason, outcome.detail = "wrong rewrite", "wrong rewrite: not idempotent", again
            return outcome
        outcome.outcome, outcome.reason = "fixed", "fixed"
        outcome.detail = f"the rewrite agrees ({original_difference} before)"
        return outcome
    if difference(reference, rewritten, compare_stdout=case.expect_stdout) is None:
        # Right values, too many compiles: a rewrite that did not go far enough, not a wrong one.
        outcome.outcome = "declined" if left else "no finding"
        outcome.reason = "partly fixed: still recompiles"
        outcome.detail = f"partly fixed; the rewrite {differs} (the original: {original_difference})"
        return outcome
    as_before = rewritten.error is not None or difference(original, rewritten, compare_stdout=case.expect_stdout) \
        is None
    if left and as_before:
        outcome.outcome = "declined"
        outcome.detail = f"partly fixed; the rewrite {differs}; left: " + "; ".join(
            f"{f['code']} at line {f['line']}: {f['message']}" for f in left)
        outcome.reason = "declined: " + ", ".join(sorted({f"{f['code']} {f['name']}" for f in left}))
        return outcome
    outcome.outcome = "wrong rewrite"
    outcome.detail = f"the rewrite {differs}"
    outcome.reason = f"wrong rewrite: {'raises ' + _error_kind(rewritten) if rewritten.error else 'differs'}"
    return outcome


def _idempotence(target: Path) -> str | None:
    """Why a second ``jitfix fix`` of the rewrite is not a no-op (None: it changes nothing)."""
    with tempfile.TemporaryDirectory(prefix="jitfix-report-again-") as again_name:
        again = Path(again_name) / target.name
        (shutil.copyfile if target.is_file() else shutil.copytree)(target, again)
        done = _jitfix("fix", "--no-cache", str(again), cwd=Path(again_name))
        if done is None or done.returncode not in (0, 1):
            return "a second jitfix fix crashed"
        if _snapshot(again) != _snapshot(target):
            return "a second jitfix fix changes the rewrite again"
    return None


def judge_cached(case: Case, mode: str, digest: str) -> Outcome:
    key = _digest(_tree_bytes(case.path), digest.encode(), mode.encode())
    return _cached(f"judge-{key}", lambda: judge(case, mode))


# -- clean twins --------------------------------------------------------------------------------

def judge_clean(case: Case, digest: str) -> Outcome:
    """A clean twin: ``jitfix fix`` must change nothing and ``check`` report nothing."""

    def compute() -> Outcome:
        outcome = Outcome(case.key, case.category, "clean", "fixed", reason="untouched")
        with tempfile.TemporaryDirectory(prefix="jitfix-report-clean-") as scratch_name:
            work = Path(scratch_name)
            target = work / (case.name + ".py" if case.path.is_file() else case.name)
            (shutil.copyfile if case.path.is_file() else shutil.copytree)(case.path, target)
            found = _findings(target, work)
            done = _jitfix("fix", "--no-cache", "--unsafe-fixes", str(target), cwd=work)
            changed = _snapshot(target) != _snapshot(case.path)
        if done is None or done.returncode not in (0, 1):
            outcome.outcome, outcome.reason = "crash", "crash"
        elif found or changed:
            outcome.outcome, outcome.reason = "wrong rewrite" if changed else "declined", "false positive"
            outcome.findings = sorted({finding["code"] for finding in found})
            outcome.detail = ("changed by fix --unsafe-fixes; " if changed else "") + "; ".join(
                f"{f['code']} at line {f['line']}: {f['message']}" for f in found)
        return outcome

    return _cached(f"clean-{_digest(_tree_bytes(case.path), digest.encode())}", compute)


# -- the report ---------------------------------------------------------------------------------

def report(outcomes: list[Outcome], clean: list[Outcome], modes: list[str], markdown: Path | None) -> str:
    """The per-category table, the outcomes, the commonest reasons and the last line."""
    lines = []
    scored = [o for o in outcomes if o.outcome != "invalid"]
    categories = sorted({o.category for o in scored})
    header_cells = ["category", "cases"] + [f"{mode} fixed" for mode in modes]
    rows = []
    for category in categories + ["all"]:
        mine = [o for o in scored if category in ("all", o.category)]
        count = len({o.case for o in mine})
        cells = [category, str(count)]
        for mode in modes:
            fixed = sum(1 for o in mine if o.mode == mode and o.outcome == "fixed")
            cells.append(f"{fixed} ({100 * fixed / count:.0f}%)" if count else "-")
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows + [header_cells]) for i in range(len(header_cells))]
    for row in [header_cells] + rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    lines.append("")
    for mode in modes:
        counts = Counter(o.outcome for o in scored if o.mode == mode)
        lines.append(f"{mode}: " + ", ".join(f"{name} {counts.get(name, 0)}" for name in OUTCOMES))
    invalid = sorted({o.case for o in outcomes if o.outcome == "invalid"})
    if invalid:
        lines.append(f"invalid cases (not counted): {', '.join(invalid)}")
    reasons = Counter(o.reason for o in scored if o.outcome != "fixed")
    lines.append("")
    lines.append("commonest reasons for no fix (both modes):")
    for reason, count in reasons.most_common(10):
        lines.append(f"  {count:4d}  {reason}")
    if clean:
        bad = [o for o in clean if o.outcome != "fixed"]
        lines.append("")
        lines.append(f"clean twins: {len(clean)}, untouched {len(clean) - len(bad)}")
        for o in bad:
            lines.append(f"  {o.case}: {o.outcome}: {o.detail[:200]}")
    count = len({o.case for o in scored})
    summary = [f"reports: {count} cases"]
    for mode in modes:
        fixed = sum(1 for o in scored if o.mode == mode and o.outcome == "fixed")
        summary.append(f"{mode} {fixed} ({100 * fixed / count:.0f}%)" if count else f"{mode} 0")
    lines.append("")
    lines.append(", ".join(summary))
    if markdown:
        markdown.write_text(_markdown(scored, clean, modes, categories), encoding="utf-8")
    return "\n".join(lines)


def _markdown(scored: list[Outcome], clean: list[Outcome], modes: list[str], categories: list[str]) -> str:
    out = ["| category | cases | " + " | ".join(f"{m} fixed | {m} declined | {m} no finding | {m} wrong | {m} crash"
                                                 for m in modes) + " |",
           "|---|---|" + "---|" * (5 * len(modes))]
    for category in categories + ["**all**"]:
        mine = [o for o in scored if category in ("**all**", o.category)]
        count = len({o.case for o in mine})
        cells = []
        for mode in modes:
            counts = Counter(o.outcome for o in mine if o.mode == mode)
            cells += [f"{counts.get('fixed', 0)} ({100 * counts.get('fixed', 0) / count:.0f}%)"] + \
                [str(counts.get(name, 0)) for name in OUTCOMES[1:]]
        out.append(f"| {category} | {count} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("| reason for no fix | cases |")
    out.append("|---|---|")
    for reason, count in Counter(o.reason for o in scored if o.outcome != "fixed").most_common(10):
        out.append(f"| {reason} | {count} |")
    if clean:
        out.append("")
        out.append(f"Clean twins: {len(clean)}, untouched {sum(o.outcome == 'fixed' for o in clean)}.")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    global USE_CACHE
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        return _child(*argv[1:5])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("fix", "run", "both"), default="both")
    parser.add_argument("-k", dest="selector", help="only cases whose path contains this")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--check", action="store_true", help="check that the cases themselves are valid")
    parser.add_argument("--no-cache", action="store_true", help="judge every case anew")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    parser.add_argument("--markdown", type=Path, help="write the tables as markdown to this file")
    parser.add_argument("--write-baseline", action="store_true",
                        help=f"record each outcome in {BASELINE.relative_to(HERE.parent)} (the test suite's sample "
                             "must not fall below it)")
    arguments = parser.parse_args(argv)
    USE_CACHE = not arguments.no_cache
    if arguments.check:
        return check_corpus(arguments.selector, arguments.jobs)
    modes = ["fix", "run"] if arguments.mode == "both" else [arguments.mode]
    cases = discover(arguments.selector)
    twins = discover(arguments.selector, clean=True)
    digest = jitfix_digest()
    jobs = [(case, mode) for case in cases for mode in modes]
    outcomes: list[Outcome] = []
    with ThreadPoolExecutor(max(1, arguments.jobs)) as pool:
        for (case, mode), outcome in zip(jobs, pool.map(lambda job: judge_cached(job[0], job[1], digest), jobs)):
            outcomes.append(outcome)
            print(f"{outcome.outcome:13} {mode:3}  {case.key}: {outcome.detail[:160]}", flush=True)
        clean = list(pool.map(lambda twin: judge_clean(twin, digest), twins))
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(o) for o in outcomes + clean], indent=1), encoding="utf-8")
    if arguments.write_baseline:
        write_baseline(outcomes + clean)
    print()
    print(report(outcomes, clean, modes, arguments.markdown))
    return 0


def read_baseline() -> dict[str, dict[str, str]]:
    return json.loads(BASELINE.read_text(encoding="utf-8")) if BASELINE.exists() else {}


def write_baseline(outcomes: list[Outcome]) -> None:
    """Record ``outcomes`` over the baseline's (cases not judged this time keep theirs)."""
    baseline = read_baseline()
    for outcome in outcomes:
        baseline.setdefault(outcome.case, {})[outcome.mode] = outcome.outcome
    BASELINE.write_text(json.dumps(dict(sorted(baseline.items())), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
