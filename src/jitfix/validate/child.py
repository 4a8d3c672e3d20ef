"""The validation process: imports the original and the rewritten module and runs them.

``python -m jitfix.validate.child JOB RESULT`` reads the job (JSON, from ``runner``) and
writes the result (JSON) to RESULT; the user's own output goes to this process's stdout
and stderr, which jitfix shows only when asked. For every target function and input:

- the reference: the original under ``jax.disable_jit()``;
- before: the original under jit (its error, or how its result differs, is the evidence
  that the fix was needed);
- after: the rewrite under jit, which must equal the reference.

A module global that the module changes is changed between two calls of one input, so a
value frozen at trace time shows. Which rewritten branches and loop bodies the reference
runs reach is measured by tracing the original's lines.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import signal
import sys
import time
import traceback
import types
from dataclasses import dataclass

from jitfix.validate.compare import ATOL, RTOL, brief, difference, printed_difference
from jitfix.validate.inputs import Input, examples_for, recorded_for, synthesized

MAX_CANDIDATES = 300  # synthesized inputs tried per function
SEARCH_SECONDS = 20.0  # time for finding inputs, per function
MAX_INPUTS = 12  # inputs kept per function
MIN_INPUTS = 3
# An eager call taking longer is given up (a loop that never ends). Eager code compiles op by
# op, so a whole program's `main` takes seconds on a slow machine (12 s seen for the
# recompilation example's): well over that, and well inside the module's time limit.
REFERENCE_SECONDS = 30.0


class CallTimedOut(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Interrupt Python code running longer than ``seconds`` (not a compiled computation)."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def interrupt(signum, frame):
        raise CallTimedOut(f"the call ran longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Raised:
    """A call that raised, kept as the exception's type and first line."""

    def __init__(self, error: BaseException):
        self.kind = type(error).__name__
        self.message = str(error).strip().splitlines()[0] if str(error).strip() else ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" if self.message else self.kind


# -- loading -----------------------------------------------------------------------------------

def load_module(text: str, filename: str, name: str, package: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = filename
    module.__package__ = package
    sys.modules[name] = module  # dataclasses and pickling look classes up here
    exec(compile(text, filename, "exec"), module.__dict__)
    _module_states[name] = _state_of(module)
    _imported_states[name] = [other.__name__ for other in _project_modules(module)]
    for other in _project_modules(module):
        _module_states.setdefault(other.__name__, _state_of(other))  # as their first import left them
    return module


def _project_modules(module: types.ModuleType) -> list[types.ModuleType]:
    """The modules of the user's package that ``module`` imports, or imports names from
    (``from . import rng``, ``from .rng import next_key``): a global stream there is state
    the module's functions change too."""
    root = _package_root(os.path.dirname(os.path.abspath(module.__file__ or "")))
    found: dict[str, types.ModuleType] = {}
    for value in list(module.__dict__.values()):
        home = value if isinstance(value, types.ModuleType) else sys.modules.get(getattr(value, "__module__", None) or "")
        file = getattr(home, "__file__", None)
        if home is not None and home is not module and file and os.path.abspath(file).startswith(root + os.sep):
            found[home.__name__] = home
    return list(found.values())


def _package_root(folder: str) -> str:
    """The folder above the outermost package that holds ``folder`` (``folder`` itself outside one)."""
    while os.path.exists(os.path.join(folder, "__init__.py")) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


# Each module's state as its import left it: what its globals are bound to, and the attributes
# of the module's own objects among them (a key sequence, a generator, a model holding arrays).
_module_states: dict[str, dict[str, tuple[object, dict | None]]] = {}
_imported_states: dict[str, list[str]] = {}  # each loaded module's project modules (their states too)


def _state_of(module: types.ModuleType) -> dict[str, tuple[object, dict | None]]:
    own = {name: value for name, value in module.__dict__.items() if not name.startswith("__")
           and not isinstance(value, type | types.ModuleType | types.FunctionType)}
    return {name: (value, dict(vars(value)) if type(value).__module__ == module.__name__
                   and hasattr(value, "__dict__") else None) for name, value in own.items()}


def restore_module_state(module: types.ModuleType) -> None:
    """Put the module back as its import left it, and the modules of the user's package it
    imports: a function whose calls change module state (a counter it rebinds, a key its
    object splits, a global stream of another module) is then compared call for call with the
    rewrite, whatever ran before -- the reference's input search, the original under jit, which
    may even leave a tracer in that state."""
    for home in [module.__name__, *_imported_states.get(module.__name__, [])]:
        namespace = module.__dict__ if home == module.__name__ else getattr(sys.modules.get(home), "__dict__", None)
        if namespace is None:
            continue
        for name, (value, attributes) in _module_states.get(home, {}).items():
            namespace[name] = value
            if attributes is not None:
                vars(value).clear()
                vars(value).update(attributes)


# -- line coverage -----------------------------------------------------------------------------

class LineEntries:
    """Counts how often execution enters each watched statement of one file (coming from
    outside the statement: a statement over several lines may report its first line twice)."""

    def __init__(self, filename: str, spans: dict[int, int]):
        self.filename = filename
        self.spans = spans
        self.counts: dict[int, int] = {}
        self._previous: dict[int, int] = {}

    def __enter__(self) -> LineEntries:
        self._old = sys.gettrace()
        sys.settrace(self._call)
        return self

    def __exit__(self, *exc) -> None:
        sys.settrace(self._old)

    def _call(self, frame, event, arg):
        if frame.f_code.co_filename != self.filename:
            return None
        return self._line

    def _line(self, frame, event, arg):
        if event == "line":
            line, key = frame.f_lineno, id(frame)
            end = self.spans.get(line)
            previous = self._previous.get(key)
            if end is not None and not (previous is not None and line <= previous <= end):
                self.counts[line] = self.counts.get(line, 0) + 1
            self._previous[key] = line
        elif event == "return":
            self._previous.pop(id(frame), None)
        return self._line


def reached(sites: list[dict], counts: dict[int, int]) -> set[str]:
    """The branch arms and loop trip counts (0, 1, many) one call reached."""
    labels = set()
    for site in sites:
        if site["kind"] == "loop":
            if counts.get(site["header"][0], 0) == 0:
                continue
            trips = counts.get(site["body"][0], 0)
            labels.add(f"line {site['line']} loop {'0' if trips == 0 else '1' if trips == 1 else 'many'}")
            continue
        for arm in site["arms"]:
            if "enter" in arm and counts.get(arm["enter"][0], 0):
                labels.add(arm["label"])
            elif "pass" in arm and counts.get(arm["pass"][0], 0) > counts.get(arm["body"][0], 0):
                labels.add(arm["label"])
    return labels


def all_labels(sites: list[dict]) -> list[str]:
    labels = []
    for site in sites:
        if site["kind"] == "loop":
            labels += [f"line {site['line']} loop {trips}" for trips in ("0", "1", "many")]
        else:
            labels += [arm["label"] for arm in site["arms"]]
    return labels


# -- calling -----------------------------------------------------------------------------------

class Runner:
    """Calls one target function of one module, varying its changing globals between calls."""

    def __init__(self, function, module: types.ModuleType, globals_: list[str]):
        self.function = function
        self.module = module
        self.globals = [name for name in globals_ if name in module.__dict__]

    def run(self, given: Input, eager: bool) -> list[tuple[object, str]]:
        """(result or Raised, stdout) of each call: one, then one after each global changes,
        from the module's state as its import left it."""
        restore_module_state(self.module)
        outcomes = [self._call(given, eager)]
        saved = {name: self.module.__dict__[name] for name in self.globals}
        try:
            for name in self.globals:
                changed = perturbed(saved[name])
                if changed is not None:
                    self.module.__dict__[name] = changed
                    outcomes.append(self._call(given, eager))
        finally:
            self.module.__dict__.update(saved)
        return outcomes

    def _call(self, given: Input, eager: bool) -> tuple[object, str]:
        import jax

        buffer = io.StringIO()
        args, kwargs = _fresh((given.args, given.kwargs))
        _replay_host_generators(self.module)
        with contextlib.redirect_stdout(buffer):
            try:
                with jax.disable_jit() if eager else contextlib.nullcontext(), \
                        time_limit(REFERENCE_SECONDS if eager else None):
                    result = jax.block_until_ready(self.function(*args, **kwargs))
            except Exception as error:  # the outcome is the error: it is reported, not raised
                result = Raised(error)
            jax.effects_barrier()
        return result, buffer.getvalue()


_host_generators: tuple | None = None  # Python's and NumPy's global generator states, first seen
_module_generators: dict[int, tuple[object, object]] = {}  # id -> (a module's generator object, its first state)


def _replay_host_generators(module=None) -> None:
    """Every call starts from the same state of Python's and NumPy's global generators, and
    of the generator objects the module holds (``RNG = np.random.default_rng(0)``): the
    reference and the rewrite then draw the same numbers where they draw in the same order (a
    draw a rewrite makes at each call, outside the trace, as the eager code does)."""
    global _host_generators
    import random

    import numpy as np

    if _host_generators is None:
        _host_generators = (random.getstate(), np.random.get_state())
    random.setstate(_host_generators[0])
    np.random.set_state(_host_generators[1])
    for value in list(vars(module).values()) if module is not None else ():
        if _is_generator(value) and id(value) not in _module_generators:
            _module_generators[id(value)] = (value, _generator_state(value))
    for generator, state in _module_generators.values():
        _set_generator_state(generator, state)


def _is_generator(value) -> bool:
    import random

    import numpy as np

    return isinstance(value, np.random.Generator | np.random.RandomState | random.Random)


def _generator_state(generator):
    import numpy as np

    if isinstance(generator, np.random.Generator):
        return generator.bit_generator.state
    return generator.get_state() if isinstance(generator, np.random.RandomState) else generator.getstate()


def _set_generator_state(generator, state) -> None:
    import numpy as np

    if isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    elif isinstance(generator, np.random.RandomState):
        generator.set_state(state)
    else:
        generator.setstate(state)


def _fresh(arguments):
    """The arguments with new containers (dicts, lists, tuples), NumPy buffers and generator
    objects: a call that writes into what it is given (eagerly, `state["n"] += 1` changes the
    caller's dict) or draws from it leaves the input the next call gets as it was."""
    import copy

    import jax
    import numpy as np

    def fresh(leaf):
        if isinstance(leaf, np.ndarray):
            return leaf.copy()
        return copy.deepcopy(leaf) if _is_generator(leaf) else leaf

    return jax.tree_util.tree_map(fresh, arguments)


def perturbed(value):
    """A different value of the same kind, or None when there is no obvious one."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value * 2 + 1
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return value * 2 + 1
    return None


def _holds_function(result) -> bool:
    """Whether a result is, or holds, a function: what it computes shows only when called."""
    import jax

    return any(callable(leaf) and not hasattr(leaf, "shape") for leaf in jax.tree.leaves(result))


# The tolerance results are held to where a platform's default matmul precision is reduced
# (TPU: bfloat16 passes for float32), where op-by-op and fused code round differently.
REDUCED_PRECISION = (2e-2, 1e-3)


def _platform() -> str:
    import jax

    return jax.default_backend()


def _reduced_matmul_precision() -> bool:
    """Whether float32 matmuls run at reduced precision by default here (a TPU, with
    ``jax_default_matmul_precision`` not raised)."""
    import jax

    return _platform() == "tpu" and jax.config.jax_default_matmul_precision in (None, "default", "bfloat16")


def outcome_difference(expected: list, actual: list, compare_stdout: bool, promoted: bool = True,
                       tolerance: tuple[float, float] = (RTOL, ATOL)) -> str | None:
    """Why the outcomes differ, or None. ``promoted`` accepts a result in a wider dtype than the
    eager one: a ``lax.cond`` or carry has one type where eager Python gives each branch or pass
    its own (an int in one arm, a float in the other), and the rewrite casts to the type
    that holds both."""
    for index, ((want, want_out), (got, got_out)) in enumerate(zip(expected, actual)):
        call = "" if index == 0 else f"after changing a global (call {index + 1}): "
        if isinstance(got, Raised):
            return f"{call}raised {got}"
        reason = difference(want, got, promoted=promoted, rtol=tolerance[0], atol=tolerance[1])
        if reason is not None:
            return f"{call}{reason}"
        printed = printed_difference(want_out, got_out, *tolerance) if compare_stdout else None
        if printed is not None:
            return f"{call}{printed}"
    return None


# -- one function ------------------------------------------------------------------------------

def _jitted(function, static: list[str]):
    """``function`` under ``jax.jit`` -- checkified where its module uses checkify (a check a
    rewrite staged in it, or in what it calls, runs only so), the error raised after the call
    as the module's own jits do."""
    import jax

    checkify = sys.modules.get("jax.experimental.checkify")
    if checkify is None or checkify not in getattr(function, "__globals__", {}).values():
        return jax.jit(function, static_argnames=tuple(static)) if static else jax.jit(function)
    checked = jax.jit(checkify.checkify(function), static_argnames=tuple(static))

    def call(*args, **kwargs):
        error, result = checked(*args, **kwargs)
        error.throw()
        return result

    return call


def _passing_globals(function, module: types.ModuleType, names: list[str]):
    """The rewritten function called as its module's callers call it: with the current value
    of each global it now takes as a keyword parameter."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        return function(*args, **kwargs, **{name: module.__dict__[name] for name in names})

    return call


def validate_target(target: dict, old: types.ModuleType, new: types.ModuleType, filename: str,
                    given: list[Input], seed: int) -> dict:
    result = {"function": target["name"], "line": target["line"], "tolerances": {"rtol": RTOL, "atol": ATOL}}
    called = target.get("entry") or target["name"]
    old_function, new_function = getattr(old, called, None), getattr(new, called, None)
    if not callable(old_function) or not callable(new_function):
        return {**result, "status": "skipped", "reason": "not a function once the module is imported"}
    if target["mode"] == "wrap":
        before_function = _jitted(old_function, target["before_static"])
        after_function = _jitted(new_function, target["after_static"])
    else:
        before_function, after_function = old_function, new_function
    if target["passed_globals"]:  # read at each call, outside the compiled function
        after_function = _passing_globals(after_function, new, target["passed_globals"])
    reference = Runner(old_function, old, target["globals"])
    inputs, first_error = _choose_inputs(target, reference, filename, given, seed)
    wanted = all_labels(target["sites"])
    covered = set().union(*(i.labels for i in inputs)) if inputs else set()
    result["inputs"] = len(inputs)
    result["sources"] = {source: sum(1 for i in inputs if i.source == source)
                         for source in ("examples", "recorded", "synthesized")}
    result["coverage"] = {"reached": [label for label in wanted if label in covered],
                          "missed": [label for label in wanted if label not in covered]}
    if not inputs:
        why = f"the original raised on every input tried (first: {first_error})" if first_error else "no inputs"
        return {**result, "status": "skipped",
                "reason": f"{why}; give some with --examples FILE or --record COMMAND"}
    if any(_holds_function(want) for chosen in inputs for want, _ in chosen.reference):
        return {**result, "status": "skipped",
                "reason": "it returns a function (a schedule, a closure), which cannot be compared by value; "
                          "call what it returns in your tests, or give --examples of the returned function"}
    before = Runner(before_function, old, target["globals"])
    after = Runner(after_function, new, target["globals"])
    evidence, agreed, failures = None, [], []
    widened: str | None = None  # the first result in a wider dtype than the eager one
    reduced: str | None = None  # the first result that agrees only at the platform's reduced precision
    for chosen in inputs:
        expected = chosen.reference
        before_outcomes = before.run(chosen, eager=False)
        evidence = evidence or _before_evidence(expected, before_outcomes)
        after_outcomes = after.run(chosen, eager=False)
        reason = outcome_difference(expected, after_outcomes, target["compare_stdout"])
        if reason is not None and _reduced_matmul_precision() and outcome_difference(
                expected, after_outcomes, target["compare_stdout"], tolerance=REDUCED_PRECISION) is None:
            reduced = reduced or reason
            reason = None
        if reason is None:
            agreed.append(chosen)
            widened = widened or outcome_difference(expected, after_outcomes, False, promoted=False)
        else:
            failures.append(Mismatch(chosen, reason, _raised(after_outcomes), _raised(before_outcomes)))
    result["before"] = evidence or "agreed with the reference on every input"
    if failures and all(f.still_raises for f in failures):
        first = failures[0]
        return {**result, "status": "skipped", "inputs": len(agreed),
                "reason": f"the rewrite still raises under jit, as the original does ({first.after_raised}); "
                          "what is left in this function needs a person"}
    # A synthesized input may fit only the code the original ran for it (a scalar where a
    # loop that ran 0 times would index): the rewrite traces every branch and loop body, so
    # it can raise where the original did not. Such inputs are dropped -- when others agree.
    # An input with an int where the original took a float is there to find types the
    # rewrite gets wrong: its failure always counts.
    real = [f for f in failures
            if not (f.chosen.source == "synthesized" and not f.chosen.one_int and f.after_raised and agreed)]
    if real:
        first = real[0]
        return {**result, "status": "failed", "failure": {
            "input": first.chosen.describe(), "source": first.chosen.source, "reason": first.reason,
            "expected": _shown(first.chosen.reference)}}
    result["inputs"] = len(agreed)
    notes = [f"{len(failures)} synthesized input(s) dropped: the rewrite traces code the original skipped for "
             f"them, and it does not fit them ({failures[0].after_raised})"] if failures else []
    if widened:
        notes.append(f"a result comes back in a wider dtype than eagerly ({widened}): the compiled code "
                     "has one type for what eager Python typed per branch or pass")
    if reduced:
        notes.append(f"agrees only at reduced precision ({reduced} at rtol {RTOL:g}): on {_platform()} a float32 "
                     "matmul runs in bfloat16 passes by default, and the compiled code fuses what eager code "
                     "rounds op by op")
    gradient_note, failed_gradient = _gradient_check(reference, after, agreed, target)
    result["notes"] = notes + [gradient_note] if gradient_note else notes
    if failed_gradient:
        result["failure"] = {"input": "", "source": "", "reason": failed_gradient, "expected": ""}
    return {**result, "status": "failed" if failed_gradient else "passed"}


@dataclass
class Mismatch:
    chosen: Input
    reason: str
    after_raised: Raised | None
    before_raised: Raised | None

    @property
    def still_raises(self) -> bool:
        return (self.after_raised is not None and self.before_raised is not None
                and self.after_raised.kind == self.before_raised.kind)


def _raised(outcomes: list) -> Raised | None:
    return next((value for value, _ in outcomes if isinstance(value, Raised)), None)


def _shown(outcomes: list) -> str:
    return "; ".join(brief(value) + (f" printing {out.strip()!r}" if out.strip() else "") for value, out in outcomes)


def _before_evidence(expected: list, outcomes: list) -> str | None:
    raised = _raised(outcomes)
    if raised is not None:
        return f"raised {raised}"
    reason = outcome_difference(expected, outcomes, compare_stdout=True)
    return f"differed: {reason}" if reason else None


def _choose_inputs(target: dict, reference: Runner, filename: str, given: list[Input],
                   seed: int) -> tuple[list[Input], str | None]:
    """The user's inputs first, then synthesized ones that reach branches not yet reached."""
    wanted = set(all_labels(target["sites"]))
    spans = {int(line): end for line, end in target["spans"].items()}
    chosen: list[Input] = []
    covered: set[str] = set()
    first_error = None
    deadline = time.perf_counter() + SEARCH_SECONDS

    def attempt(candidate: Input) -> bool:
        nonlocal first_error
        with LineEntries(filename, spans) as entries:
            outcomes = reference.run(candidate, eager=True)
        failed = next((value for value, _ in outcomes if isinstance(value, Raised)), None)
        if failed is not None:
            first_error = first_error or str(failed)
            return False
        candidate.expected = outcomes
        candidate.labels = reached(target["sites"], entries.counts)
        return True

    for candidate in given:
        if len(chosen) < MAX_INPUTS and attempt(candidate):
            chosen.append(candidate)
            covered |= candidate.labels
    if chosen and covered >= wanted:
        return chosen, first_error
    for tried, candidate in enumerate(synthesized(target, seed)):
        if tried >= MAX_CANDIDATES or time.perf_counter() > deadline or len(chosen) >= MAX_INPUTS:
            break
        if not attempt(candidate):
            continue
        if candidate.one_int or candidate.labels - covered or len(chosen) < MIN_INPUTS:
            chosen.append(candidate)
            covered |= candidate.labels
        if covered >= wanted and len(chosen) >= MIN_INPUTS:
            break
    return chosen, first_error


def _gradient_check(reference: Runner, after: Runner, inputs: list[Input], target: dict) -> tuple[str, str | None]:
    """Where the function returns a float scalar, its gradient by the first float argument
    must agree too (checked on the first input where that applies), each side from its
    module's state as its import left it."""
    import jax
    import numpy as np

    reference_function, after_function = reference.function, after.function

    for chosen in inputs:
        value = chosen.reference[0][0]
        if not isinstance(value, float) and not (hasattr(value, "dtype") and value.ndim == 0
                                                 and np.dtype(value.dtype).kind == "f"):
            continue
        position = next((i for i, arg in enumerate(chosen.args)
                         if not isinstance(arg, bool) and (isinstance(arg, float) or (
                             hasattr(arg, "dtype") and np.asarray(arg).dtype.kind == "f"))), None)
        if position is None or target["parameters"][position]["name"] in target["before_static"]:
            continue
        try:
            restore_module_state(reference.module)
            args, kwargs = _fresh((chosen.args, chosen.kwargs))
            _replay_host_generators(reference.module)
            with jax.disable_jit():
                want = jax.grad(reference_function, argnums=position)(*args, **kwargs)
        except Exception:  # the original itself is not differentiable here: nothing to compare
            return "", None
        try:
            restore_module_state(after.module)
            args, kwargs = _fresh((chosen.args, chosen.kwargs))
            _replay_host_generators(after.module)
            got = jax.grad(after_function, argnums=position)(*args, **kwargs)
        except Exception as error:
            return f"gradient not compared: the rewrite is not differentiable here ({Raised(error)})", None
        reason = difference(want, got)
        if reason is not None:
            failed = f"gradient differs at input {chosen.describe()}: {reason}"
            return failed, failed
        return f"gradient by argument {position + 1} agrees", None
    return "", None


# -- the module --------------------------------------------------------------------------------

def run_job(job: dict) -> dict:
    started = time.perf_counter()
    sys.path.insert(0, job["root"])
    try:
        old = load_module(job["old_text"], job["old_filename"], "__jitfix_original__", job["package"])
        new = load_module(job["new_text"], job["new_filename"], "__jitfix_rewrite__", job["package"])
    except BaseException as error:  # SystemExit and KeyboardInterrupt from module code count too
        return {"error": f"importing the module failed: {type(error).__name__}: {error}",
                "traceback": traceback.format_exc(), "seconds": time.perf_counter() - started}
    keys = [job["module"], job["module"].rpartition(".")[2], job["path"], job["old_filename"]]
    try:
        examples = examples_for(job.get("examples"), keys)
    except BaseException as error:
        return {"error": f"reading the examples file failed: {type(error).__name__}: {error}",
                "traceback": traceback.format_exc(), "seconds": time.perf_counter() - started}
    recorded = recorded_for(job.get("recorded"), job["old_filename"])
    functions = []
    for target in job["targets"]:
        given = examples.get(target["name"], []) + recorded.get(target["name"], [])
        try:
            functions.append(validate_target(target, old, new, job["old_filename"], given, job.get("seed", 0)))
        except Exception as error:  # a bug of ours or an odd function: report it, go on
            functions.append({"function": target["name"], "line": target["line"], "status": "skipped",
                              "reason": f"validation could not run it: {type(error).__name__}: {error}"})
    return {"functions": functions, "seconds": time.perf_counter() - started, "backend": _backend()}


def _backend() -> str:
    """The platform JAX ran the comparisons on (`cpu`, `gpu`, `tpu`)."""
    try:
        import jax

        return jax.default_backend()
    except Exception:  # noqa: BLE001  (no jax, no device: nothing to tell)
        return ""


def main() -> None:
    job_path, result_path = sys.argv[1], sys.argv[2]
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    result = run_job(job)
    with open(result_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
