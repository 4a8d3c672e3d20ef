"""A second fuzzer, drawn from the shapes of real code rather than from jitfix's rule list.

``benchmarks/fuzz.py`` draws the control flow jitfix was built to rewrite, so it keeps
finding nothing. This generator builds each program from the shapes the real-failure corpus
(``benchmarks/reports/``) and the libraries jitfix was tried on are made of: a name only one
branch binds, read after it; a helper that prints, called from a branch or a loop; a loop
over tuples mixing Python ints and arrays; a write into an array argument; a loop whose
index is needed as a Python int (a slice bound, a list index, a ``range`` bound); a
``try``/``except TypeError`` guard around a concretization; a bool parameter; a helper
given a static string argument; sizes computed with ``jnp`` from static values; boolean
masks; ``float()``, NumPy and ``max`` on tracers; traced ``while`` and ``range`` loops with
prints; ``assert`` and logging. Each program is a jitted ``f(x, n, flag)`` (``n`` and
``flag`` sometimes static), run eagerly (``jax.disable_jit()``, NumPy inputs) as the
reference, then fixed with ``jitfix fix`` and judged as ``fuzz.py`` judges: fixed,
declined, unchanged, or a failure -- silent miss, miscompiled, broken, internal, not
idempotent.

    python benchmarks/fuzz_real.py --n 5000 --seed 1 [--jobs 2] [--show 3]

The last line is ``fuzz_real: tried N, fixed F, declined D, unchanged U, silent S,
miscompiled M, broken B, internal I, not idempotent X``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import random
import sys
import types
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jax  # noqa: E402
import numpy as np  # noqa: E402

from fuzz import Harness, Tally, _counts, check_program, report  # noqa: E402

VECTORS = ([-1.5, 0.5, 2.0, -0.25], [0.5, 1.0, 2.0, 3.0], [-1.0, -2.0, -0.5, -3.0])  # mixed, all >0, all <0
INPUTS = [(vector, n, bool((i + n) % 2)) for i, vector in enumerate(VECTORS) for n in (0, 1, 3)]


@dataclass
class Fragment:
    feature: str
    lines: list[str]  # statements of f's body (4-space indented by the program)
    helpers: tuple[str, ...] = ()  # module-level definitions it needs
    imports: tuple[str, ...] = ()


def _indent(lines: list[str], depth: int = 1) -> list[str]:
    return ["    " * depth + line if line else line for line in lines]


class RealShapes:
    """Draws fragments; each reads and updates ``a`` (a scalar) and ``v`` (a vector of 4)."""

    def __init__(self, rng: random.Random, n_static: bool, flag_static: bool):
        self.rng = rng
        self.n_static = n_static
        self.flag_static = flag_static
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def constant(self) -> str:
        return self.rng.choice(["0.0", "0.5", "-0.5", "1.0", "2.0"])

    def fragment(self) -> Fragment:
        makers = [self.branch_local, self.branch_helper_print, self.helper_prints_value, self.mixed_tuples,
                  self.argument_write, self.python_int_index, self.try_guard, self.bool_parameter,
                  self.static_helper_argument, self.trace_time_constant, self.mask, self.conversion,
                  self.numpy_on_tracer, self.builtin_on_tracer, self.traced_while, self.range_with_print,
                  self.assertion, self.logging_call, self.dtype_read_of_branch_name]
        return self.rng.choice(makers)()

    # -- the shapes --------------------------------------------------------------------------

    def branch_local(self) -> Fragment:
        t = self.fresh("t")
        body = [f"{t} = v * {self.rng.choice(['2.0', '0.5', '-1.0'])}", f"a = a + {t}.sum()"]
        lines = [f"if a > {self.constant()}:", *_indent(body)]
        if self.rng.random() < 0.5:
            lines += ["else:", *_indent([f"a = a - {self.constant()}"])]
        return Fragment("branch_local", lines)

    def dtype_read_of_branch_name(self) -> Fragment:
        # (jnp.result_type(b + t, b) before the lax.cond read `t`, which only the branch binds)
        t = self.fresh("t")
        lines = [f"if v[0] > {self.constant()}:", *_indent([f"{t} = v[1] * 3", f"a = a + {t}"])]
        if self.rng.random() < 0.5:
            lines += ["else:", *_indent([f"{t} = v[2]", "a = a * 0.5"])]
        return Fragment("dtype_of_branch_name", lines)

    def branch_helper_print(self) -> Fragment:
        name = self.fresh("noisy")
        helper = f"def {name}(w):\n    print(\"{name} ran\")\n    return w * 2.0\n"
        return Fragment("helper_print_in_branch", [f"if a > {self.constant()}:", *_indent([f"a = {name}(a)"])],
                        (helper,))

    def helper_prints_value(self) -> Fragment:
        name = self.fresh("shout")
        helper = f"def {name}(w):\n    print(\"value\", w)\n    return w + 1.0\n"
        return Fragment("helper_prints_a_tracer", [f"a = {name}(a)"], (helper,))

    def mixed_tuples(self) -> Fragment:
        k, w = self.fresh("k"), self.fresh("w")
        return Fragment("tuple_items_of_mixed_kinds", [
            f"for {k}, {w} in [(0, v[0]), (2, v[-1])]:",
            *_indent([f"if {k} > 1:", *_indent([f"a = a + {w}"])])])

    def argument_write(self) -> Fragment:
        op = self.rng.choice(["+=", "-=", "*=", "="])
        return Fragment("write_into_an_argument", [f"x[{self.rng.randrange(4)}] {op} a", "a = a + x.sum()"])

    def python_int_index(self) -> Fragment:
        i = self.fresh("i")
        use = self.rng.choice([f"v[:{i}].sum()", f"WEIGHTS[{i}] * v[{i}]",
                               f"sum(v[c] for c in range({i}, 4))"])
        helper = "WEIGHTS = [1.0, 2.0, 3.0, 4.0]\n" if "WEIGHTS" in use else ""
        return Fragment("index_needed_as_python_int", [f"for {i} in range(n):", *_indent([f"a = a + {use}"])],
                        (helper,) if helper else ())

    def try_guard(self) -> Fragment:
        name = self.fresh("checked")
        helper = (f"def {name}(count):\n    try:\n        count = int(np.asarray(count))\n"
                  f"    except TypeError:\n        return\n    if count < 0:\n"
                  f"        raise ValueError(\"count must be >= 0\")\n")
        return Fragment("try_except_guard", [f"{name}(n)", "a = a + n"], (helper,))

    def bool_parameter(self) -> Fragment:
        if self.rng.random() < 0.5:
            return Fragment("bool_parameter", ["if flag:", *_indent([f"a = a * {self.constant()} + 1.0"])])
        return Fragment("bool_parameter", [f"a = a + 1.0 if flag else a - {self.constant()}"])

    def static_helper_argument(self) -> Fragment:
        name = self.fresh("scaled")
        helper = (f"def {name}(w, mode):\n    if mode == \"double\":\n        return w * 2.0\n"
                  f"    return w\n")
        mode = self.rng.choice(['"double"', '"same"'])
        return Fragment("helper_given_a_static_string", [f"a = {name}(a, {mode})"], (helper,))

    def trace_time_constant(self) -> Fragment:
        size = self.fresh("size")
        made = self.rng.choice([f"jnp.minimum(3, v.shape[0])", "jnp.array(2)", "jnp.ceil(v.shape[0] / 3).astype(int)"])
        return Fragment("size_computed_with_jnp", [f"{size} = {made}", f"a = a + jnp.ones({size}).sum()"])

    def mask(self) -> Fragment:
        shape = self.rng.choice([
            ["a = a + v[v > 0].sum()"],
            ["v = v.at[v < 0].set(0.0)"],
            ["a = a + jnp.nonzero(v > 0)[0].shape[0]"],
        ])
        return Fragment("boolean_mask", shape)

    def conversion(self) -> Fragment:
        return Fragment("python_conversion", [self.rng.choice(["a = a + float(v[0])", "a = a * float(a > 0)",
                                                               "a = a + int(v[1])"])])

    def numpy_on_tracer(self) -> Fragment:
        return Fragment("numpy_on_a_tracer", [self.rng.choice(["a = a + np.tanh(v).sum()",
                                                               "a = a + np.mean(v)", "v = np.abs(v)"])])

    def builtin_on_tracer(self) -> Fragment:
        return Fragment("builtin_on_a_tracer", [self.rng.choice(["a = max(a, 0.5)", "a = min(a, v[0])",
                                                                 "a = a + abs(v[1])"])])

    def traced_while(self) -> Fragment:
        i = self.fresh("j")
        return Fragment("while_on_a_counter", [f"{i} = 0", f"while {i} < n:",
                                               *_indent(["a = a * 0.5 + 1.0", f"{i} += 1"])])

    def range_with_print(self) -> Fragment:
        i = self.fresh("i")
        lines = [f"{i} = 0", f"for {i} in range(n):", *_indent([f"print(\"step\", {i})", f"a = a + {i}"])]
        if self.rng.random() < 0.5:
            lines.append(f"a = a + {i}")  # the index read after the loop
        return Fragment("range_loop_printing_its_index", lines)

    def assertion(self) -> Fragment:
        return Fragment("assert_on_a_tracer", ["assert v.shape[0] == 4", "assert a > -1000.0"])

    def logging_call(self) -> Fragment:
        return Fragment("logging", ["logger.debug(\"a is %s\", a)"], ("logger = logging.getLogger(__name__)\n",),
                        ("import logging",))


def program(rng: random.Random) -> tuple[str, set[str]]:
    n_static, flag_static = rng.random() < 0.3, rng.random() < 0.3
    shapes = RealShapes(rng, n_static, flag_static)
    fragments = [shapes.fragment() for _ in range(rng.randint(1, 4))]
    static = [name for name, is_static in (("n", n_static), ("flag", flag_static)) if is_static]
    imports = sorted({"import jax", "import jax.numpy as jnp", "import numpy as np",
                      *(line for fragment in fragments for line in fragment.imports)},
                     key=lambda line: line.split()[1])
    if static:
        decorator = f"@partial(jax.jit, static_argnames={tuple(static)!r})"
        imports = ["from functools import partial", ""] + imports
    else:
        decorator = "@jax.jit"
    helpers: list[str] = []
    for fragment in fragments:
        helpers += [helper for helper in fragment.helpers if helper not in helpers]
    body = ["a = x.sum()", "v = x * 1.0"] + [line for fragment in fragments for line in fragment.lines]
    text = "\n".join(imports) + "\n\n\n" + "\n\n".join(helpers) + ("\n\n" if helpers else "") \
        + f"{decorator}\ndef f(x, n, flag):\n" + "\n".join(_indent(body)) + "\n    return a, v\n"
    return text, {fragment.feature for fragment in fragments} | {f"static_{name}" for name in static}


def _run(module: types.ModuleType) -> list:
    """Each input's result and printed output; ``x`` a fresh NumPy array each call (the
    original may write into it, eagerly)."""
    results = []
    for vector, n, flag in INPUTS:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            result = module.f(np.asarray(vector, np.float32), n, flag)
            jax.block_until_ready(result)
            jax.effects_barrier()
        results.append((result, printed.getvalue()))
    return results


def _one(task: tuple[int, int]) -> Tally:
    seed, index = task
    rng = random.Random(seed * 1_000_003 + index)
    code, features = program(rng)
    tally = Tally()
    check_program(code, tally, features, harness=Harness(_run, INPUTS))
    return tally


def fuzz_real(count: int, seed: int, jobs: int = 1, progress: int = 0) -> Tally:
    total = Tally()
    tasks = [(seed, index) for index in range(count)]
    context = multiprocessing.get_context("fork")
    pool = context.Pool(jobs, maxtasksperchild=200) if jobs > 1 else None
    results = pool.imap(_one, tasks, chunksize=4) if pool else map(_one, tasks)
    try:
        for done, tally in enumerate(results, 1):
            total.merge(tally)
            if progress and done % progress == 0:
                print(_counts(total, "fuzz_real"), file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        total.interrupted = True
    finally:
        if pool:
            pool.terminate()
            pool.join()
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="programs to try")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--show", type=int, default=3, help="failures to print")
    parser.add_argument("--progress", type=int, default=0, metavar="K", help="print the counts every K programs")
    parser.add_argument("--print-program", type=int, metavar="INDEX", help="print program INDEX of the seed and stop")
    args = parser.parse_args(argv)
    if args.print_program is not None:
        print(program(random.Random(args.seed * 1_000_003 + args.print_program))[0])
        return 0
    tally = fuzz_real(args.n, args.seed, args.jobs, args.progress)
    return report(tally, args.n, args.show, "fuzz_real", "shape")

if __name__ == "__main__":
    sys.exit(main())
