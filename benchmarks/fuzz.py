"""Fuzz jitfix's rewrites: generated JAX functions, eager original vs jitted rewrite.

Each program is a small function of traced ``x``, ``y`` (floats) and ``n`` (an int) with a
random nesting of traced and static ``if``/``elif``/``else``, early returns, conditional
expressions, ``and``/``or``/``not`` and chained comparisons, ``range`` and ``while`` loops,
``break``/``continue`` guards and tuple assignments. The eager original (under
``jax.disable_jit()``) is the reference; ``jitfix fix`` must either produce code whose jitted
results equal it on every input, or decline with a finding. A rewrite that runs and differs,
or that fails to run under jit while claiming nothing is left to fix, is a miscompilation.

    python benchmarks/fuzz.py --n 2000 [--seed 0]

Programs are drawn by hypothesis (``st.randoms``: every choice the generator makes is
hypothesis's, so a miscompiled program is shrunk to a minimal one before it is shown).

The last line is ``fuzz: tried N, rewritten R, declined D, miscompiled M``.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import types
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from jitfix.config import Settings
from jitfix.engine import InternalError, Options, process_text

INPUTS = [(x, y, n) for x, y in ((-1.5, 0.5), (0.5, 2.0), (2.0, -0.25)) for n in (0, 1, 3)]
NAMES = ("a", "b", "c")


class ProgramGenerator:
    """Random programs; ``depth`` bounds nesting so every program is small."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def program(self) -> str:
        body = ["a = x", "b = y", "c = x * 0.0"] + self.block(depth=2, in_loop=False)
        body.append("return a, b, c")
        lines = "\n".join("    " + line for statement in body for line in statement.split("\n"))
        return f"import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x, y, n):\n{lines}\n"

    def block(self, depth: int, in_loop: bool) -> list[str]:
        return [self.statement(depth, in_loop) for _ in range(self.rng.randint(1, 3))]

    def statement(self, depth: int, in_loop: bool) -> str:
        choices = ["assign", "assign", "tuple"]
        if depth > 0:
            choices += ["if", "if", "static_if", "for", "while"]
        if in_loop:
            choices += ["guard"]
        kind = self.rng.choice(choices)
        if kind == "assign":
            return f"{self.rng.choice(NAMES)} = {self.expression()}"
        if kind == "tuple":
            first, second = self.rng.sample(NAMES, 2)
            return f"{first}, {second} = {second}, {first} + {self.atom()}"
        if kind == "guard":
            return f"if {self.condition()}:\n    {self.rng.choice(['break', 'continue'])}"
        if kind == "static_if":
            inner = self.indent(self.block(depth - 1, in_loop))
            return f"if x.ndim == 0:\n{inner}\nelse:\n    c = c + 100.0"
        if kind == "if":
            text = f"if {self.condition()}:\n{self.indent(self.block(depth - 1, in_loop))}"
            if self.rng.random() < 0.3:
                text += f"\nelif {self.condition()}:\n{self.indent(self.block(depth - 1, in_loop))}"
            if self.rng.random() < 0.6:
                text += f"\nelse:\n{self.indent(self.block(depth - 1, in_loop))}"
            return text
        if kind == "for":
            start = self.rng.choice(["", "1, "])
            step = self.rng.choice(["", ", 2"]) if start else ""
            body = self.block(depth - 1, in_loop=True) + ["c = c + i * 0.5"]
            self.rng.shuffle(body)
            return f"for i in range({start}n{step}):\n{self.indent(body)}"
        # while: bounded by its own counter (one per nesting level) so it always ends
        body = self.block(depth - 1, in_loop=True)
        counter = f"k{depth}"
        return (f"{counter} = 0\nwhile {counter} < n and ({self.condition()}):\n"
                f"{self.indent([f'{counter} = {counter} + 1', *body])}")

    def condition(self) -> str:
        kind = self.rng.choice(["compare", "compare", "and", "or", "not", "chain"])
        if kind == "compare":
            return f"{self.atom()} {self.rng.choice(['>', '<', '>=', '<='])} {self.atom()}"
        if kind == "and":
            return f"{self.atom()} > 0 and {self.atom()} < 1"
        if kind == "or":
            return f"{self.atom()} < 0 or {self.atom()} > 1"
        if kind == "not":
            return f"not {self.atom()} > 0.5"
        return f"-1 < {self.atom()} < 1"

    def expression(self) -> str:
        kind = self.rng.choice(["arith", "arith", "ternary", "call"])
        if kind == "ternary":
            return f"{self.atom()} if {self.condition()} else {self.atom()}"
        if kind == "call":
            return f"jnp.tanh({self.atom()}) + {self.atom()}"
        return f"{self.atom()} {self.rng.choice(['+', '-', '*'])} {self.atom()}"

    def atom(self) -> str:
        return self.rng.choice([*NAMES, "x", "y", "0.5", "2.0", "1.0"])

    @staticmethod
    def indent(statements: list[str]) -> str:
        return "\n".join("    " + line for statement in statements for line in statement.split("\n"))


@dataclass
class Tally:
    tried: int = 0
    rewritten: int = 0
    declined: int = 0
    miscompiled: int = 0
    skipped: int = 0  # the original itself fails eagerly on some input
    failures: list[str] = field(default_factory=list)


def _load(code: str) -> types.ModuleType:
    module = types.ModuleType("fuzzed")
    exec(compile(code, "<fuzzed>", "exec"), module.__dict__)
    return module


def _same(want, got) -> bool:
    want_leaves, got_leaves = jax.tree.leaves(want), jax.tree.leaves(got)
    if len(want_leaves) != len(got_leaves):
        return False
    return all(np.allclose(np.asarray(w, dtype=np.float64), np.asarray(g, dtype=np.float64), rtol=1e-5, atol=1e-5,
                           equal_nan=True) for w, g in zip(want_leaves, got_leaves))


class _TimedOut(BaseException):  # not caught by the programs' own `except Exception`
    pass


def _alarm(signum, frame):
    raise _TimedOut()


def check_program(code: str, tally: Tally, seconds: int = 60) -> None:
    """Compare one program; a run longer than ``seconds`` (a loop that never ends) fails."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        _check_program(code, tally)
    except _TimedOut:
        tally.miscompiled += 1
        tally.failures.append(f"{code}\n--- did not finish in {seconds} s")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _check_program(code: str, tally: Tally) -> None:
    tally.tried += 1
    try:
        with jax.disable_jit():
            original = _load(code)
            reference = [original.f(jnp.float32(x), jnp.float32(y), n) for x, y, n in INPUTS]
    except Exception:  # noqa: BLE001 - e.g. a name bound in a loop that ran zero times
        tally.skipped += 1
        return
    try:
        result = process_text("fuzzed.py", code, Settings(), Options(apply_fixes=True))
    except InternalError as error:  # nothing written, but a bug: counted as a failure
        tally.miscompiled += 1
        tally.failures.append(f"{code}\n--- internal error: {error}")
        return
    if result.findings:
        tally.declined += 1
        return
    tally.rewritten += 1
    try:
        rewritten = _load(result.new_text or code)
        outputs = [rewritten.f(jnp.float32(x), jnp.float32(y), n) for x, y, n in INPUTS]
    except Exception as error:  # noqa: BLE001 - a rewrite that does not run is a failure
        tally.miscompiled += 1
        tally.failures.append(f"{code}\n--- rewrite raised {type(error).__name__}: {error}\n{result.new_text}")
        return
    for inputs, want, got in zip(INPUTS, reference, outputs):
        if not _same(want, got):
            tally.miscompiled += 1
            tally.failures.append(f"{code}\n--- inputs {inputs}: eager {want} != jit {got}\n{result.new_text}")
            return


class Miscompiled(AssertionError):
    pass


def fuzz(count: int, seed: int) -> Tally:
    """Try ``count`` programs drawn by hypothesis; stop at the first miscompilation, shrunk."""
    from hypothesis import HealthCheck, Phase, given, settings, strategies
    from hypothesis import seed as hypothesis_seed

    tally = Tally()
    shrinking = False

    @hypothesis_seed(seed)
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
              suppress_health_check=list(HealthCheck))
    @given(strategies.randoms(use_true_random=False))
    def one_program(rng: random.Random) -> None:
        nonlocal shrinking
        code = ProgramGenerator(rng).program()
        seen = Tally() if shrinking else tally  # shrink attempts are not counted
        check_program(code, seen)
        if seen.miscompiled:
            shrinking = True
            raise Miscompiled(seen.failures[-1])

    try:
        one_program()
    except Miscompiled as failure:
        tally.failures.append(f"(shrunk by hypothesis)\n{failure}")
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="programs to try")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="miscompiled programs to print")
    args = parser.parse_args(argv)
    tally = fuzz(args.n, args.seed)
    for failure in tally.failures[: args.show]:
        print(failure, end="\n\n")
    print(f"skipped {tally.skipped} programs whose original fails eagerly on some input")
    print(f"fuzz: tried {tally.tried}, rewritten {tally.rewritten}, declined {tally.declined}, "
          f"miscompiled {tally.miscompiled}")
    return 1 if tally.miscompiled else 0


if __name__ == "__main__":
    sys.exit(main())
