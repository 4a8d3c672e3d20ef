"""`jitfix run` against the runs it cannot avoid: the seconds of ``jitfix run --write`` on a
script with four pitfalls (``programs/four_pitfalls.py``: a traced `if`, a `print` of a
tracer, a loop bounded by a traced value, a size that must be static), against one run of it
with jit disabled plus one jitted run of what `jitfix run` wrote (the goal: at most 3x).

    python benchmarks/run_speed.py [--runs 3] [--program PATH]

Each figure is the median of ``--runs``; the phases of the last `jitfix run` (its
``--verbose`` report) are printed after them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def timed(command: list[str], cwd: Path, **environment: str) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env={**os.environ, **environment})
    return time.perf_counter() - started, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--program", type=Path, default=HERE / "programs" / "four_pitfalls.py")
    options = parser.parse_args()
    eager, jitted, fixing = [], [], []
    report = ""
    for _ in range(options.runs):
        with tempfile.TemporaryDirectory(prefix="jitfix-run-speed-") as folder:
            project = Path(folder)
            script = project / options.program.name
            shutil.copyfile(options.program, script)
            seconds, _ = timed([sys.executable, script.name], project, JAX_DISABLE_JIT="1")
            eager.append(seconds)
            seconds, done = timed([sys.executable, "-m", "jitfix", "run", "--write", "--verbose", "--no-color", "--",
                                   sys.executable, script.name], project)
            fixing.append(seconds)
            report = done.stderr
            seconds, done = timed([sys.executable, script.name], project)
            assert done.returncode == 0, done.stderr[-2000:]
            jitted.append(seconds)
    floor = statistics.median(eager) + statistics.median(jitted)
    print(f"with jit disabled {statistics.median(eager):.2f} s + jitted (fixed) {statistics.median(jitted):.2f} s "
          f"= {floor:.2f} s; jitfix run {statistics.median(fixing):.2f} s = {statistics.median(fixing) / floor:.1f}x")
    print("\n".join(line for line in report.splitlines() if line.startswith(("time:", "  "))
                    and (" s  " in line or line.startswith("time:"))))


if __name__ == "__main__":
    main()
