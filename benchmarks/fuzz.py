"""Fuzz jitfix's rewrites: generated JAX functions, eager original vs jitted rewrite.

Each program is a small function of traced ``x``, ``y`` (floats), ``n`` (an int, also a
trip count and a shape), ``m`` (an int that is not a trip count), ``flag: bool`` and
``v: jax.Array`` (a vector of 3, whose rows a loop may take), and a static ``s``, with dict
and tuple state (``st["p"]``, ``t``), a nested helper that closes over a local, a module global its setter rebinds before every call, a
NumPy buffer written element-wise, early returns at several depths, and a random nesting of
traced and static
``if``/``elif``/``else`` (chains of up to 5 arms, some of them cases of one int, ``m == 0``,
``m == 1``), conditional expressions,
``and``/``or``/``not`` and chained comparisons, ``range`` and ``while`` loops (a ``while not
stop:`` whose flag starts as Python ``False`` and is traced from the second pass; loop variables
``i`` reused by several loops and read after them, ``_``), ``break``/``continue`` guards (in
loops over ``v``'s rows too), early returns inside loops,
tuple assignments, ``+=``/``-=``/``*=``, ints bound where floats were (``a = m - 1``,
``k = k * 0.5``: branch and carry types that eager Python lets differ by path; off with
``--no-int-values``), an int counter and a bool flag carried through
branches and loops, calls of a module-level helper, and prints of carried and branch values
(what each call prints is compared line by line, numbers within float32's precision). The eager original (under
``jax.disable_jit()``) is the reference. Every program is classified:

- *fixed*: ``jitfix fix`` changed it, and the rewrite equals the reference on every input
  both under ``jax.jit`` and eagerly;
- *declined*: a finding says what is left, and what the other fixes rewrote still computes
  what the original does eagerly (nothing wrong was written); the most common reasons are
  printed;
- *unchanged*: no finding, no change, and the original already works under jit;
- *silent miss*: no finding, no change, but the original fails (or differs) under jit;
- *miscompiled*: the rewrite runs and differs from the reference (jitted or eager);
- *broken*: the rewrite fails to run;
- *internal*: jitfix raised an internal error;
- *not idempotent*: ``fix`` on the rewrite changes it again.

    python benchmarks/fuzz.py --n 2000 [--seed 0]

Programs are drawn by hypothesis (``st.randoms``: every choice the generator makes is
hypothesis's, so a miscompiled program is shrunk to a minimal one before it is shown).

Per feature, the share of the programs holding it that need a fix (all but *unchanged*)
that were fixed is printed. The last line
is ``fuzz: tried N, fixed F, declined D, unchanged U, silent S, miscompiled M, broken B,
internal I, not idempotent X``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import signal
import sys
import types
from dataclasses import dataclass, field
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jitfix.config import Settings
from jitfix.engine import InternalError, Options, process_text

INPUTS = [(x, y, n, m, flag) for x, y in ((-1.5, 0.5), (0.5, 2.0), (2.0, -0.25)) for n in (0, 1, 3) for m in (2,)
          for flag in (n != 1,)] + [(0.5, -1.0, 2, -1, True), (-0.25, 1.5, 3, 0, False)]
# What every exit of a program returns (its last statement and each early return).
RESULT = 'return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]'
# What an early return may return instead: a value of the same types computed otherwise.
OTHER_RESULT = 'return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]'
NESTED_HELPER = "def inner(w):\n    return w * 2.0 + a"
NAMES = ("a", "b", "c")
GLOBAL = "SCALE"  # a module global the module's setter rebinds before each call (``_run``)
SCALE_SETTER = f"""

{GLOBAL} = 1.0


def set_scale(value):
    global {GLOBAL}
    {GLOBAL} = value
"""
STATIC = 2  # the static argument `s` every call passes
HELPER = """

def scaled(v, w):
    return v * 0.5 + w
"""


class ProgramGenerator:
    """Random programs; ``depth`` bounds nesting so every program is small. ``features``
    names what the program holds (for the per-feature figures)."""

    def __init__(self, rng: random.Random, int_values: bool = True):
        self.rng = rng
        self.int_values = int_values  # draw ints where floats were (off: `--no-int-values`)
        self.features: set[str] = set()

    def program(self) -> str:
        start = ["a = x", "b = y", "c = x * 0.0", "k = 0", "ok = x > y", 'st = {"p": x * 0.0}', "t = (x, y)"]
        body = self.block(depth=2, in_loop=False)
        if "nested_helper" in self.features:
            start.append(NESTED_HELPER)
        body = [*start, *body, RESULT]
        lines = "\n".join("    " + line for statement in body for line in statement.split("\n"))
        helper = HELPER if "helper" in self.features else ""
        numpy = "import numpy as np\n" if "numpy_buffer" in self.features else ""
        scale = SCALE_SETTER if "global_rebound" in self.features else ""
        return (f"from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n{numpy}{helper}{scale}\n\n"
                f"@partial(jax.jit, static_argnames=(\"s\",))\ndef f(x, y, n, m, flag: bool, v: jax.Array, s):\n{lines}\n")

    def block(self, depth: int, in_loop: bool, nested: bool = False) -> list[str]:
        statements = [self.statement(depth, in_loop) for _ in range(self.rng.randint(1, 3))]
        if nested and self.rng.random() < 0.15:  # an early return ends the block
            self.features.add("loop_return" if in_loop else "early_return")
            other = self.rng.random() < 0.3
            if other:
                self.features.add("other_return")
            statements.append(OTHER_RESULT if other else RESULT)
        return statements

    def statement(self, depth: int, in_loop: bool) -> str:
        choices = ["assign", "assign", "tuple", "augmented", "counter", "flag", "helper", "print", "dict_state",
                   "tuple_state", "vector", "nested_helper", "static_argument", "shape_argument", "global_rebound",
                   "numpy_buffer", *(["int_value"] if self.int_values else [])]
        if depth > 0:
            choices += ["if", "if", "static_if", "for", "while", "elif_chain", "row_loop"]
        if in_loop:
            choices += ["guard"]
        kind = self.rng.choice(choices)
        if kind not in ("assign", "if"):
            self.features.add(kind)
        if kind == "assign":
            return f"{self.rng.choice(NAMES)} = {self.expression()}"
        if kind == "tuple":
            first, second = self.rng.sample(NAMES, 2)
            return f"{first}, {second} = {second}, {first} + {self.atom()}"
        if kind == "augmented":
            return f"{self.rng.choice(NAMES)} {self.rng.choice(['+=', '-=', '*='])} {self.atom()}"
        if kind == "counter":
            return "k = k + 1" if self.rng.random() < 0.5 else "k += m"
        if kind == "flag":
            return self.rng.choice(["ok = ok and a > 0", "ok = not ok", f"ok = {self.condition()}"])
        if kind == "helper":
            return f"{self.rng.choice(NAMES)} = scaled({self.atom()}, {self.atom()})"
        if kind == "dict_state":
            return self.rng.choice([f'st["p"] = st["p"] + {self.atom()}', f'st = {{"p": st["p"] * 0.5 + {self.atom()}}}'])
        if kind == "tuple_state":
            return self.rng.choice([f"t = (t[1], t[0] + {self.atom()})", f"t = (t[0] * 0.5, {self.atom()})"])
        if kind == "vector":
            return self.rng.choice([f"{self.rng.choice(NAMES)} = {self.atom()} + v.sum()",
                                    f"{self.rng.choice(NAMES)} = v[0] * {self.atom()}"])
        if kind == "static_argument":  # `s` is static: Python control flow on it stays as it is
            name = self.rng.choice(NAMES)
            return self.rng.choice([f"if s > 1:\n    {name} = {name} * 2.0", f"for j in range(s):\n    {name} = {name} + 0.5",
                                    f"{name} = {name} * s"])
        if kind == "shape_argument":  # a traced int setting a shape: it must become static
            return f"{self.rng.choice(NAMES)} = {self.atom()} + jnp.arange(n).sum() * 0.5"
        if kind == "global_rebound":  # read at trace time; the caller rebinds it between calls
            name = self.rng.choice(NAMES)
            return f"{name} = {name} * {GLOBAL}"
        if kind == "numpy_buffer":  # a NumPy buffer written element by element in traced code
            name = self.rng.choice(NAMES)
            return f"buf = np.zeros(3)\nbuf[1] = {self.atom()}\n{name} = {name} + buf.sum()"
        if kind == "int_value":  # an int where a float was: branch and carry types differ from Python's
            # (computed: a bare `a = m` of a name used nowhere as a number may be a pytree,
            # which has no one dtype; jitfix does not cast it, and says nothing.)
            name = self.rng.choice(NAMES)
            return self.rng.choice([f"{name} = m - 1", f"{name} = m * 2 + k", f"{name} = {name} * 0 + n", "k = k * 0.5",
                                    "t = (m - 1, t[1])"])
        if kind == "nested_helper":  # `inner` reads `a` when called, as it is then
            return f"{self.rng.choice(NAMES)} = inner({self.atom()})"
        if kind == "print":  # of carried and branch values: stdout is compared number by number
            name = self.rng.choice([*NAMES, "k"])
            return self.rng.choice([f'print(f"{name}={{{name}}}")', f'print("{name}", {name})',
                                    f'print("{name} and k:", {name}, k)'])
        if kind == "guard":
            return f"if {self.condition()}:\n    {self.rng.choice(['break', 'continue'])}"
        if kind == "row_loop":  # the rows of `v`, unrolled by Python: a traced test cannot leave it
            body = [f"if w > {self.atom()}:\n    {self.rng.choice(['break', 'continue'])}", "c = c + w * 0.5",
                    *self.block(depth - 1, in_loop=True)]
            self.rng.shuffle(body)
            return f"for w in v:\n{self.indent(body)}"
        if kind == "static_if":
            inner = self.indent(self.block(depth - 1, in_loop))
            return f"if x.ndim == 0:\n{inner}\nelse:\n    c = c + 100.0"
        if kind == "elif_chain":
            tests = self.cases(self.rng.randint(3, 5)) if self.rng.random() < 0.4 \
                else [self.condition() for _ in range(self.rng.randint(3, 5))]
            arms = [f"{'if' if index == 0 else 'elif'} {test}:\n{self.indent(self.block(depth - 1, in_loop, True))}"
                    for index, test in enumerate(tests)]
            if self.rng.random() < 0.7:
                arms.append(f"else:\n{self.indent(self.block(depth - 1, in_loop, True))}")
            return "\n".join(arms)
        if kind == "if":
            text = f"if {self.condition()}:\n{self.indent(self.block(depth - 1, in_loop, True))}"
            if self.rng.random() < 0.3:
                text += f"\nelif {self.condition()}:\n{self.indent(self.block(depth - 1, in_loop, True))}"
            if self.rng.random() < 0.6:
                text += f"\nelse:\n{self.indent(self.block(depth - 1, in_loop, True))}"
            return text
        if kind == "for":
            start = self.rng.choice(["", "1, "])
            step = self.rng.choice(["", ", 2"]) if start else ""
            variable = self.rng.choice(["i", "i", "_"])
            body = self.block(depth - 1, in_loop=True)
            if variable == "i":
                body.append("c = c + i * 0.5")
            self.rng.shuffle(body)
            loop = f"for {variable} in range({start}n{step}):\n{self.indent(body)}"
            if variable == "i" and self.rng.random() < 0.4:
                # `i` bound by an earlier loop that certainly runs, read after a traced one
                self.features.add("loop_variable_after")
                return f"for i in range(2):\n    c = c + i\n{loop}\nc = c + i"
            if variable == "_":
                self.features.add("underscore_loop")
            return loop
        # while: bounded by its own counter (one per nesting level) so it always ends
        body = self.block(depth - 1, in_loop=True)
        counter = f"k{depth}"
        if self.rng.random() < 0.3:
            # `stop = False` is Python before the loop; the body binds it to a tracer, so the
            # test is traced from the second pass on (as RL code writes `while not done:`).
            self.features.add("while_flag")
            flag = f"stop{depth}"
            # Its bound is set before the body, whose `continue` would skip what comes after.
            return (f"{counter} = 0\n{flag} = False\nwhile not {flag}:\n"
                    f"{self.indent([f'{counter} = {counter} + 1', f'{flag} = {counter} >= n', *body, f'{flag} = {flag} or ({self.condition()})'])}")
        return (f"{counter} = 0\nwhile {counter} < n and ({self.condition()}):\n"
                f"{self.indent([f'{counter} = {counter} + 1', *body])}")

    def cases(self, count: int) -> list[str]:
        """Tests of one int selector for equality with numbers in a row (a `lax.switch`)."""
        self.features.add("switch")
        selector = self.rng.choice(["m", "k", "n % 3", "m + k"])
        if "k" in selector:
            self.features.add("counter")
        first = self.rng.choice([-1, 0, 1])
        return [f"{selector} == {first + index}" for index in range(count)]

    def condition(self) -> str:
        kind = self.rng.choice(["compare", "compare", "and", "or", "not", "chain", "counter", "flag", "bool_argument",
                                "vector"])
        if kind == "compare":
            return f"{self.atom()} {self.rng.choice(['>', '<', '>=', '<='])} {self.atom()}"
        if kind == "and":
            return f"{self.atom()} > 0 and {self.atom()} < 1"
        if kind == "or":
            return f"{self.atom()} < 0 or {self.atom()} > 1"
        if kind == "not":
            return f"not {self.atom()} > 0.5"
        if kind == "counter":
            self.features.add("counter")
            return f"k > {self.rng.choice(['0', '1', 'm'])}"
        if kind == "flag":
            self.features.add("flag")
            return self.rng.choice(["ok", "not ok", "ok and a > 0"])
        if kind == "vector":
            self.features.add("vector")
            return self.rng.choice(["v.mean() > 0", f"v[1] < {self.atom()}", "(v > 0).any()"])
        if kind == "bool_argument":  # a traced bool parameter (`flag: bool`)
            self.features.add("bool_argument")
            return self.rng.choice(["flag", "not flag", "flag and a > 0", "b > 0 or flag"])
        return f"-1 < {self.atom()} < 1"

    def expression(self) -> str:
        kind = self.rng.choice(["arith", "arith", "ternary", "call", "int"])
        if kind == "ternary":
            self.features.add("ternary")
            return f"{self.atom()} if {self.condition()} else {self.atom()}"
        if kind == "call":
            return f"jnp.tanh({self.atom()}) + {self.atom()}"
        if kind == "int":  # an int argument in arithmetic: branch results of different types
            self.features.add("int_argument")
            return f"{self.atom()} * m"
        return f"{self.atom()} {self.rng.choice(['+', '-', '*'])} {self.atom()}"

    def atom(self) -> str:
        return self.rng.choice([*NAMES, "x", "y", "0.5", "2.0", "1.0"])

    @staticmethod
    def indent(statements: list[str]) -> str:
        return "\n".join("    " + line for statement in statements for line in statement.split("\n"))


OUTCOMES = ("fixed", "declined", "unchanged", "silent", "miscompiled", "broken", "internal", "not_idempotent")
FAILURES = ("silent", "miscompiled", "broken", "internal", "not_idempotent")


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    skipped: int = 0  # the original itself fails eagerly on some input
    failures: list[str] = field(default_factory=list)
    # feature -> (programs holding it, of those fixed)
    by_feature: dict[str, list[int]] = field(default_factory=dict)
    # why programs were declined: a finding's reason, its names and numbers blanked
    declines: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False  # stopped before every program was tried

    @property
    def tried(self) -> int:
        return sum(self.counts.values())

    @property
    def failed(self) -> int:
        return sum(self.counts[outcome] for outcome in FAILURES)

    def merge(self, other: Tally) -> None:
        """Add another run's counts (a worker's) to these."""
        for outcome, number in other.counts.items():
            self.counts[outcome] += number
        self.skipped += other.skipped
        self.failures += other.failures
        for reason, number in other.declines.items():
            self.declines[reason] = self.declines.get(reason, 0) + number
        for feature, (holding, fixed) in other.by_feature.items():
            seen = self.by_feature.setdefault(feature, [0, 0])
            seen[0] += holding
            seen[1] += fixed

    def add(self, outcome: str, features: set[str], detail: str | None = None) -> None:
        self.counts[outcome] += 1
        if outcome == "unchanged":
            return  # works under jit as written: needs no fix, counted in no feature's share
        for feature in features:
            seen = self.by_feature.setdefault(feature, [0, 0])
            seen[0] += 1
            seen[1] += outcome == "fixed"
        if detail is not None:
            self.failures.append(f"--- {outcome}: {detail}")


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


def _run(module: types.ModuleType) -> list:
    """Each input's result, and what the call printed (jax.debug.print's callbacks included)."""
    results = []
    for index, (x, y, n, m, flag) in enumerate(INPUTS):
        if hasattr(module, "set_scale"):
            module.set_scale(1.0 + 0.5 * index)  # a value a stale trace would not see
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            result = module.f(jnp.float32(x), jnp.float32(y), n, m, flag, jnp.array([x, y, 0.25], jnp.float32),
                              s=STATIC)
            jax.block_until_ready(result)
            jax.effects_barrier()
        results.append((result, printed.getvalue()))
    return results


NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|inf|nan)")


def _same_output(want: str, got: str) -> bool:
    """The same lines, words equal and numbers within float32's precision."""
    want_lines, got_lines = want.splitlines(), got.splitlines()
    if len(want_lines) != len(got_lines):
        return False
    for wanted, line in zip(want_lines, got_lines):
        if NUMBER.sub("#", wanted) != NUMBER.sub("#", line):
            return False
        numbers = zip(NUMBER.findall(wanted), NUMBER.findall(line))
        if not all(np.isclose(float(a), float(b), rtol=1e-5, atol=1e-5, equal_nan=True) for a, b in numbers):
            return False
    return True


def _same_run(want, got) -> bool:
    return _same(want[0], got[0]) and _same_output(want[1], got[1])


@dataclass(frozen=True)
class Harness:
    """How a generator's programs are called: ``run`` gives each input's (result, printed)
    for a loaded module, ``inputs`` says what they were (for messages)."""

    run: Callable[[types.ModuleType], list]
    inputs: list


class _TimedOut(BaseException):  # not caught by the programs' own `except Exception`
    pass


def _alarm(signum, frame):
    raise _TimedOut()


def check_program(code: str, tally: Tally, features: set[str] = frozenset(), seconds: int = 60,
                  harness: Harness | None = None) -> None:
    """Classify one program; one that runs longer than ``seconds`` of CPU time (a loop that
    never ends) is broken. CPU time, not the clock's: a busy machine, or a run paused and
    resumed (``kill -STOP``), does not make a program slow. A wait that uses no CPU is
    stopped by the clock, ten times later."""
    previous = signal.signal(signal.SIGPROF, _alarm), signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.alarm(10 * seconds)
    try:
        _check_program(code, tally, set(features), harness or Harness(_run, INPUTS))
    except _TimedOut:
        tally.add("broken", set(features),
                  f"did not finish in {seconds} s of CPU time (or {10 * seconds} s of waiting)\n{code}")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.alarm(0)
        signal.signal(signal.SIGPROF, previous[0])
        signal.signal(signal.SIGALRM, previous[1])


def _check_program(code: str, tally: Tally, features: set[str], harness: Harness) -> None:
    run, inputs = harness.run, harness.inputs
    try:
        with jax.disable_jit():
            reference = run(_load(code))
    except (Exception, _TimedOut):  # noqa: BLE001 - e.g. a name bound in a loop that ran zero times
        tally.skipped += 1  # (or a loop the original never leaves: nothing to compare with)
        return
    try:
        result = process_text("fuzzed.py", code, Settings(), Options(apply_fixes=True))
    except InternalError as error:  # nothing written, but a bug
        tally.add("internal", features, f"{error}\n{code}")
        return
    new_text = result.new_text or code
    if result.findings:
        if new_text != code and _partial_rewrite_failed(code, new_text, reference, tally, features, harness):
            return
        tally.add("declined", features)
        for reason in {_decline_reason(finding.code, finding.message) for finding in result.findings}:
            tally.declines[reason] = tally.declines.get(reason, 0) + 1
        return
    if new_text == code:
        try:
            as_is = run(_load(code))
        except Exception as error:  # noqa: BLE001
            tally.add("silent", features, f"no finding, but under jit: {type(error).__name__}: {error}\n{code}")
            return
        same = all(_same_run(want, got) for want, got in zip(reference, as_is))
        tally.add("unchanged" if same else "silent", features, None if same else f"differs under jit\n{code}")
        return
    try:
        rewritten = _load(new_text)
        jitted = run(rewritten)
        with jax.disable_jit():
            eager = run(rewritten)
    except Exception as error:  # noqa: BLE001 - a rewrite that does not run
        tally.add("broken", features, f"rewrite raised {type(error).__name__}: {error}\n{code}\n{new_text}")
        return
    for given, want, got, again in zip(inputs, reference, jitted, eager):
        if not (_same_run(want, got) and _same_run(want, again)):
            tally.add("miscompiled", features, f"inputs {given}: eager {want} != rewrite {got} (jit), "
                                               f"{again} (eager)\n{code}\n{new_text}")
            return
    second = process_text("fuzzed.py", new_text, Settings(), Options(apply_fixes=True))
    if second.new_text is not None and second.new_text != new_text:
        tally.add("not_idempotent", features, f"a second fix changes the rewrite\n{new_text}")
        return
    tally.add("fixed", features)


def _partial_rewrite_failed(code: str, new_text: str, reference: list, tally: Tally, features: set[str],
                            harness: Harness) -> bool:
    """A declined program whose other fixes were applied: the rewrite must still compute what
    the original does eagerly (under jit the finding left may still raise). Counts a failure."""
    try:
        with jax.disable_jit():
            eager = harness.run(_load(new_text))
    except Exception as error:  # noqa: BLE001
        tally.add("broken", features, f"partial rewrite raised eagerly {type(error).__name__}: {error}\n{code}\n"
                                      f"{new_text}")
        return True
    for given, want, again in zip(harness.inputs, reference, eager):
        if not _same_run(want, again):
            tally.add("miscompiled", features, f"inputs {given}: eager {want} != partial rewrite {again} (eager)\n"
                                               f"{code}\n{new_text}")
            return True
    return False


def _decline_reason(code: str, message: str) -> str:
    """A finding's reason in a form that groups: what follows "not auto-fixable" (or the whole
    message), with quoted names and numbers blanked."""
    reason = message.split("not auto-fixable: ", 1)[-1]
    reason = re.sub(r"`[^`]*`", "`_`", reason)
    reason = re.sub(r"\b\d+\b", "N", reason)
    return f"{code} {reason[:110]}"


class Miscompiled(AssertionError):
    pass


def fuzz(count: int, seed: int, keep_going: bool = False, progress: int = 0, int_values: bool = True) -> Tally:
    """Try ``count`` programs drawn by hypothesis; stop at the first miscompiled or broken
    rewrite, shrunk (the other failures are counted and shown, not shrunk). With
    ``keep_going``, every program is tried and every failure kept, unshrunk: the counts of a
    long run. ``progress``: print the counts to stderr every that many programs."""
    from hypothesis import HealthCheck, Phase, given, settings, strategies
    from hypothesis import seed as hypothesis_seed

    tally = Tally()
    shrinking = False
    phases = [Phase.generate] if keep_going else [Phase.generate, Phase.shrink]

    @hypothesis_seed(seed)
    @settings(max_examples=count, deadline=None, database=None, phases=phases,
              suppress_health_check=list(HealthCheck))
    @given(strategies.randoms(use_true_random=False))
    def one_program(rng: random.Random) -> None:
        nonlocal shrinking
        generator = ProgramGenerator(rng, int_values)
        code = generator.program()
        seen = Tally() if shrinking else tally  # shrink attempts are not counted
        failures = len(seen.failures)
        check_program(code, seen, generator.features)
        if progress and not shrinking:
            for failure in seen.failures[failures:]:
                print(failure, end="\n\n", file=sys.stderr, flush=True)  # a long run's failures, as found
            if tally.tried % progress == 0:
                print(_counts(tally), file=sys.stderr, flush=True)
        if seen.failed and not keep_going and (shrinking or seen.counts["miscompiled"] or seen.counts["broken"]):
            shrinking = True
            raise Miscompiled(seen.failures[-1])

    try:
        one_program()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (``main``): the counts of what was tried stand
        tally.interrupted = True
    except Miscompiled as failure:
        tally.failures.append(f"(shrunk by hypothesis)\n{failure}")
    except BaseExceptionGroup as group:  # hypothesis found several distinct failures
        _, rest = group.split(Miscompiled)
        if rest is not None:
            raise rest
        found, _ = group.split(Miscompiled)
        tally.failures.extend(f"(shrunk by hypothesis)\n{failure}" for failure in found.exceptions)
    return tally


def _counts(tally: Tally, name: str = "fuzz") -> str:
    return "{}: tried {}, {}".format(name, tally.tried, ", ".join(
        f"{outcome.replace('_', ' ')} {tally.counts[outcome]}" for outcome in OUTCOMES))


def report(tally: Tally, count: int, show: int, name: str = "fuzz", what: str = "feature") -> int:
    """Print a run's failures (the first ``show``), its shares fixed per feature, its commonest
    declines and its counts; the exit status: 1 when anything failed."""
    for failure in tally.failures[:show]:
        print(failure, end="\n\n")
    print(f"skipped {tally.skipped} programs whose original fails eagerly on some input, or does not finish")
    print(f"fixed, per {what} (programs holding it that need a fix):")
    width = max((len(feature) for feature in tally.by_feature), default=0) + 2
    for feature, (holding, fixed) in sorted(tally.by_feature.items()):
        print(f"  {feature:{width}} {fixed:5} of {holding:5}  {100 * fixed / holding:5.1f}%")
    print("declined, the most common reasons (programs):")
    for reason, number in sorted(tally.declines.items(), key=lambda item: -item[1])[:12]:
        print(f"  {number:5}  {reason}")
    if tally.interrupted:
        print(f"interrupted: {tally.tried} of {count} programs tried")
    print(_counts(tally, name))
    return 1 if tally.failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="programs to try")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--int-values", action=argparse.BooleanOptionalAction, default=True,
                        help="also bind ints where floats were (a = m - 1, k = k * 0.5): branch and carry "
                             "types that differ by path (default: on)")
    parser.add_argument("--show", type=int, default=3, help="miscompiled programs to print")
    parser.add_argument("--keep-going", action="store_true",
                        help="try every program and keep every failure, unshrunk (long runs)")
    parser.add_argument("--progress", type=int, default=0, metavar="K",
                        help="print the counts to stderr every K programs, and each failure as found")
    args = parser.parse_args(argv)
    # A long run stopped (Ctrl-C, or `kill` of a run in the background) still reports what it tried.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    tally = fuzz(args.n, args.seed, keep_going=args.keep_going, progress=args.progress, int_values=args.int_values)
    return report(tally, args.n, args.show)


if __name__ == "__main__":
    sys.exit(main())
