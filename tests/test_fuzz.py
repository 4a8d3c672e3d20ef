"""A short run of the fuzzer (benchmarks/fuzz.py): generated programs with traced and static
conditionals, early returns, ternaries, boolean operators, range and while loops and
break/continue guards; each rewrite must equal the eager original or be declined."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))

import fuzz  # noqa: E402


def test_generated_programs_are_rewritten_faithfully_or_declined() -> None:
    tally = fuzz.fuzz(count=25, seed=7)
    assert tally.miscompiled == 0, "\n\n".join(tally.failures[:2])
    assert tally.rewritten >= 10  # the generator exercises the rewrites, not only the refusals


def test_the_generator_makes_programs_that_run_eagerly() -> None:
    code = fuzz.ProgramGenerator(random.Random(3)).program()
    compile(code, "<fuzzed>", "exec")
    assert "def f(x, y, n):" in code and "return a, b, c" in code
