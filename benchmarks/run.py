"""Benchmark jitfix on pinned corpora of real JAX libraries, against Python's own floors.

    python benchmarks/run.py [--runs 3] [--corpus DIR] [--set tuned|unseen|both|none] [--no-libcst]
                             [--no-correctness] [--folder DIR ...]

Two corpora, each downloaded once from the package index as pinned wheels (pure Python)
into ``benchmarks/.corpus/<set>/`` (never committed): ``tuned`` -- jax, flax, optax, equinox,
chex, the libraries jitfix was first tried on -- and ``unseen`` -- numpyro, dm-haiku,
blackjax, diffrax, optimistix, lineax, distrax, which no rule was tuned on. For each it
measures, in one run, each figure the median of ``--runs`` runs:

- files and lines; ``jitfix check`` (cold: ``--no-cache``) on 1 core and on every core, and
  with the cache warm; peak memory on half the corpus and on all of it;
- the floors: stdlib ``ast.parse`` of the same files, libcst ``parse_module``, and libcst
  parse + ``ScopeProvider`` (what a naive codemod pays), each in one process on one core;
- the ratios jitfix / ``ast.parse`` and libcst+scope / jitfix.

jitfix's own modules are byte-compiled first, as installing it does.

Then, unless ``--no-correctness``: ``jitfix fix`` over a copy of the corpus -- crashes,
outputs that do not parse, a second ``fix`` that still changes something, and every change
made, listed for review (these are correct libraries: the goal is none).

Every finding the correctness pass reports must be listed, judged, in
``benchmarks/judged_findings.tsv`` (file, line, rule, true/false positive, why); one that is
not is printed as ``unjudged``. The last line is ``jitfix check: N lines/s, X.X×
ast.parse, Y.Y× faster than libcst+scope, warm cache Z%``.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

CORPORA = {
    "tuned": (("jax", "0.10.2"), ("flax", "0.12.8"), ("optax", "0.2.8"), ("equinox", "0.13.8"), ("chex", "0.1.92")),
    "unseen": (("numpyro", "0.22.0"), ("dm-haiku", "0.0.17"), ("blackjax", "1.7.1"), ("diffrax", "0.7.2"),
               ("optimistix", "0.1.0"), ("lineax", "0.1.1"), ("distrax", "0.1.9")),
}
HERE = Path(__file__).parent
JUDGED = HERE / "judged_findings.tsv"


# -- the corpus --------------------------------------------------------------------------------

def fetch_corpus(folder: Path, corpus=CORPORA["tuned"]) -> Path:
    """The corpus's Python files under ``folder/src``, downloaded once."""
    source = folder / "src"
    done = folder / "complete"
    pins = "\n".join(f"{name}=={version}" for name, version in corpus)
    if done.is_file() and done.read_text() == pins:
        return source
    wheels = folder / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for name, version in corpus:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        f"{name}=={version}", "-d", str(wheels)], check=True)
    shutil.rmtree(source, ignore_errors=True)
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".py"):
                    archive.extract(member, source / wheel.stem)
    done.write_text(pins)
    return source


def python_files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


# -- timing ------------------------------------------------------------------------------------

def median_seconds(action, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def floor_ast(files: list[Path]) -> None:
    for file in files:
        ast.parse(file.read_bytes())


def floor_libcst(files: list[Path]) -> None:
    import libcst

    for file in files:
        try:
            libcst.parse_module(file.read_bytes())
        except libcst.ParserSyntaxError:
            pass


def floor_libcst_scope(files: list[Path]) -> None:
    import libcst
    from libcst.metadata import MetadataWrapper, ScopeProvider

    for file in files:
        try:
            MetadataWrapper(libcst.parse_module(file.read_bytes())).resolve(ScopeProvider)
        except libcst.ParserSyntaxError:
            pass


def compile_jitfix() -> None:
    """Byte-compile jitfix's modules, as installing a package does: where
    ``PYTHONDONTWRITEBYTECODE`` is set (or after an edit), every timed process would
    otherwise compile them from source again (0.1 s of a 0.25 s start-up), which no user
    of an installed jitfix pays."""
    import jitfix

    compileall.compile_dir(Path(jitfix.__file__).parent, quiet=1)


def jitfix(*args: str, cwd: Path | None = None) -> tuple[float, int, subprocess.CompletedProcess | None]:
    """(seconds, peak RSS in KB, outcome) of one `python -m jitfix ...` process."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "jitfix", *args], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    out, err = process.stdout.read(), process.stderr.read()
    process.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_maxrss, subprocess.CompletedProcess(process.args, process.returncode, out, err)


def median_jitfix(runs: int, *args: str, cwd: Path | None = None) -> float:
    return statistics.median(jitfix(*args, cwd=cwd)[0] for _ in range(runs))


# -- correctness -------------------------------------------------------------------------------

def judged() -> set[tuple[str, str, str]]:
    """(path inside the corpus, line, rule) of every finding judged in ``JUDGED``."""
    if not JUDGED.exists():
        return set()
    rows = [line.split("\t") for line in JUDGED.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    return {(row[0], row[1], row[2]) for row in rows if len(row) >= 3}


def correctness(source: Path) -> list[str]:
    """Fix a copy of the corpus twice; report crashes, broken outputs, non-idempotence, changes,
    and findings nobody judged."""
    import json

    lines = []
    with tempfile.TemporaryDirectory(prefix="jitfix-corpus-") as folder:
        copy = Path(folder) / "src"
        shutil.copytree(source, copy)
        before = {path: path.read_bytes() for path in python_files(copy)}
        _, _, check = jitfix("check", "--no-cache", "--exit-zero", "--output-format", "json", str(copy))
        _, _, first = jitfix("fix", "--no-cache", "--unsafe-fixes", str(copy))
        after = {path: path.read_bytes() for path in python_files(copy)}
        _, _, second = jitfix("fix", "--no-cache", "--unsafe-fixes", str(copy))
        again = {path: path.read_bytes() for path in python_files(copy)}
        crashes = [line for line in (check.stderr + first.stderr).splitlines() if "internal error" in line]
        changed = [path for path in before if before[path] != after[path]]
        unparseable = []
        for path in changed:
            try:
                ast.parse(after[path])
            except SyntaxError:
                unparseable.append(path)
        not_idempotent = [path for path in after if after[path] != again[path]]
        findings = json.loads(check.stdout or "[]")
        known = judged()
        unjudged = [f for f in findings
                    if (str(Path(f["path"]).relative_to(copy)), str(f["line"]), f["code"]) not in known]
        lines += [
            f"correctness: {len(before)} files, {len(findings)} findings ({len(unjudged)} unjudged), "
            f"{len(crashes)} crashes, {len(changed)} changed by fix, {len(unparseable)} unparseable, "
            f"{len(not_idempotent)} not idempotent",
        ]
        lines += [f"  crash: {line}" for line in crashes]
        lines += [f"  unjudged: {Path(f['path']).relative_to(copy)}:{f['line']}: {f['code']} {f['message']}"
                  for f in unjudged]
        for path in changed:
            lines.append(f"  changed: {path.relative_to(copy)}")
    return lines


# -- the table ---------------------------------------------------------------------------------

def measure(name: str, source: Path, runs: int, libcst: bool, check_correctness: bool) -> str:
    files = python_files(source)
    lines = sum(file.read_bytes().count(b"\n") for file in files)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    what = ", ".join(f"{n} {v}" for n, v in CORPORA[name]) if name in CORPORA else str(source)
    print(f"\n## {name}: {what}: {len(files)} files, {lines:,} lines; "
          f"{cores} cores; median of {runs} runs", flush=True)
    floor = median_seconds(lambda: floor_ast(files), runs)
    one = median_jitfix(runs, "check", "--no-cache", "--exit-zero", "-q", "-j", "1", str(source))
    every = median_jitfix(runs, "check", "--no-cache", "--exit-zero", "-q", "-j", str(cores), str(source))
    with tempfile.TemporaryDirectory(prefix="jitfix-cache-") as home:
        jitfix("check", "--exit-zero", "-q", str(source), cwd=Path(home))  # fills the cache
        warm = median_jitfix(runs, "check", "--exit-zero", "-q", str(source), cwd=Path(home))
    half = files[: len(files) // 2]
    with tempfile.TemporaryDirectory(prefix="jitfix-half-") as folder:
        for file in half:
            target = Path(folder) / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, target)
        memory_half = jitfix("check", "--no-cache", "--exit-zero", "-q", "-j", "1", folder)[1]
    memory_all = jitfix("check", "--no-cache", "--exit-zero", "-q", "-j", "1", str(source))[1]
    rows = [("ast.parse (floor)", floor)]
    scope_floor = None
    if libcst:
        rows.append(("libcst parse_module", median_seconds(lambda: floor_libcst(files), runs)))
        scope_floor = median_seconds(lambda: floor_libcst_scope(files), runs)
        rows.append(("libcst + ScopeProvider (naive codemod)", scope_floor))
    rows += [("jitfix check, 1 core", one), (f"jitfix check, {cores} cores", every), ("jitfix check, warm cache", warm)]
    print(f"\n{'':40} {'seconds':>8} {'lines/s':>10} {'vs ast.parse':>13}")
    for row, seconds in rows:
        print(f"{row:40} {seconds:8.2f} {lines / seconds:10,.0f} {seconds / floor:12.2f}×")
    print(f"\nspeed-up on {cores} cores: {one / every:.2f}× (jitfix 1 core / {cores} cores)")
    print(f"jitfix / ast.parse (1 core): {one / floor:.2f}×")
    print(f"warm cache: {100 * warm / one:.1f}% of a cold 1-core run, {100 * warm / every:.1f}% of a cold "
          f"{cores}-core run")
    print(f"peak memory (1 core): {memory_half / 1024:.0f} MB for {len(half)} files, "
          f"{memory_all / 1024:.0f} MB for {len(files)} files ({memory_all / memory_half:.2f}×)")
    if check_correctness:
        print()
        for line in correctness(source):
            print(line)
    faster = f", {scope_floor / one:.1f}× faster than libcst+scope" if scope_floor else ""
    return (f"jitfix check ({name}): {lines / every:,.0f} lines/s, {one / floor:.1f}× ast.parse{faster}, "
            f"warm cache {100 * warm / one:.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (the median is shown)")
    parser.add_argument("--corpus", type=Path, default=HERE / ".corpus", help="where the corpora are downloaded")
    parser.add_argument("--set", choices=("tuned", "unseen", "both", "none"), default="both",
                        help="which pinned corpus (none: only the --folder ones)")
    parser.add_argument("--no-libcst", action="store_true", help="skip the (slow) libcst floors")
    parser.add_argument("--no-correctness", action="store_true", help="skip the fix-the-corpus check")
    parser.add_argument("--folder", type=Path, action="append", default=[],
                        help="measure on this folder of Python files too (a project fetched by hand); repeatable")
    options = parser.parse_args()
    names = ("tuned", "unseen") if options.set == "both" else () if options.set == "none" else (options.set,)
    compile_jitfix()
    summaries = []
    for name in names:
        source = fetch_corpus(options.corpus / name, CORPORA[name])
        summaries.append(measure(name, source, options.runs, not options.no_libcst, not options.no_correctness))
    for folder in options.folder:
        summaries.append(measure(folder.name, folder, options.runs, not options.no_libcst, not options.no_correctness))
    print()
    for line in summaries:
        print(line)


if __name__ == "__main__":
    main()
