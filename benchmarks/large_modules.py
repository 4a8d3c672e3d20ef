"""How `jitfix check` grows with one module's length: seconds and peak memory on a generated
module of N jitted functions (each with a traced `if` and a `print`) and of 5 N, and on a
real-size module made of a folder's Python files put one after another (``--folder``), once
and ten times over.

    python benchmarks/large_modules.py [--functions 1000] [--runs 3] [--folder DIR]

Each figure is the median of ``--runs`` runs of ``jitfix check --no-cache`` in its own
process; the ratios are the large module's over the small one's (5x the code: the goal is
at most 6x the time, and memory growing no faster than the file).
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def jitted_functions(count: int) -> str:
    return "import jax\nimport jax.numpy as jnp\n" + "".join(f"""
@jax.jit
def f{number}(x, y):
    z = x * {number} + y
    if z.sum() > 0:
        z = z - 1
    print(z)
    return z
""" for number in range(count))


def concatenated(folder: Path, limit: int = 1_400_000) -> str:
    """The folder's Python files that parse, one after another, up to ``limit`` characters
    (``from __future__`` lines dropped: they must come first)."""
    parts, size = [], 0
    for path in sorted(folder.rglob("*.py")):
        text = "\n".join(line for line in path.read_text(errors="replace").splitlines()
                         if not line.startswith("from __future__"))
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        parts.append(text)
        size += len(text)
        if size > limit:
            break
    return "\n".join(parts) + "\n"


def check(path: Path) -> tuple[float, int]:
    """(seconds, peak RSS in MB) of one `jitfix check --no-cache` of ``path``."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "jitfix", "check", "--no-cache", "-q", "--exit-zero", str(path)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss // 1024


def compare(name: str, small: str, large: str, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="jitfix-large-") as folder:
        figures = []
        for label, text in (("small", small), ("large", large)):
            path = Path(folder) / f"{label}.py"
            path.write_text(text)
            measured = [check(path) for _ in range(runs)]
            figures.append((len(text.splitlines()), statistics.median(s for s, _ in measured),
                            statistics.median(m for _, m in measured)))
    (lines, seconds, memory), (lines5, seconds5, memory5) = figures
    print(f"{name}: {lines:,} lines {seconds:.2f} s {memory} MB; {lines5:,} lines {seconds5:.2f} s {memory5} MB; "
          f"{lines5 / lines:.1f}x the code: {seconds5 / seconds:.1f}x the time, {memory5 / memory:.1f}x the memory")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--folder", type=Path, help="a folder of Python files to make a real-size module of")
    options = parser.parse_args()
    compare("generated", jitted_functions(options.functions), jitted_functions(5 * options.functions), options.runs)
    if options.folder:
        text = concatenated(options.folder)
        compare(f"{options.folder.name}, concatenated", text, text * 10, options.runs)


if __name__ == "__main__":
    main()
