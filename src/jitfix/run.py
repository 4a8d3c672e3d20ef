"""``jitfix run -- COMMAND``: let the program say what breaks under jit, fix that, and prove it
by running it again.

The project folder is copied to a scratch folder, and the command runs there with a start-up
hook (``run_hook.py`` as ``sitecustomize``) that records each JAX error of a traced value
used as a Python value: file, line, function, and which locals held tracers. Each record
is evidence -- that function is traced, those parameters are tracers -- given to the
analysis (``Settings.observed``), which then plans the rewrite as ``fix`` would, also where
the static analysis alone could not prove the value traced. The fixed files replace their
scratch copies and the command runs again, until it exits as it does with jit disabled, no
new failure is seen, or the rounds run out. Every function ``jax.jit`` was applied to in a
run is evidence too (its parameters but the static ones are traced), and the project files
the run imported get the safe fixes ``fix`` makes, so what runs but computes otherwise under
jit (a ``print``, a stale global) is fixed as well. When the program still prints otherwise
than with jit disabled, the prints in traced code whose fix ``fix`` holds back as unsafe (no
printed value is known to be traced) are rewritten, and kept when the next run prints as the
eager run does. A command that fails with jit disabled
too has no jit failure to fix: the run stops and says so.

At the end each rewritten function is validated as ``--validate`` does, with the arguments
the functions were called with in the eager run as inputs. Nothing outside the scratch folder
changes; the caller decides what to write.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from jitfix.analysis.failure_sites import EXPLAINED_ERRORS, MISSING, WANTED, sites_on_line
from jitfix.analysis.observations import CHANGED, JITTED, ON_PATH, STAGED, STATIC, Observation
from jitfix.analysis.project import Project
from jitfix.config import Settings
from jitfix.engine import Options, process_source
from jitfix.files import SKIPPED, InputError, discover, read_source
from jitfix.findings import Finding
from jitfix.profile import FunctionProfile, read_profile
from jitfix.silent import STALE, SilentDifference, silent_differences, unstable
from jitfix.validate.compare import first_line_difference, unstable_lines
from jitfix.validate.process import environment
from jitfix.validate.process import run as run_process
from jitfix.validate.runner import FunctionResult, ModuleJob, ValidationOptions

HOOK = Path(__file__).with_name("run_hook.py")
RECORDER_HOOK = Path(__file__).with_name("validate") / "recorder_hook.py"
# Arguments of these kinds on every call (as the hook writes them: `int 3`) may be made static
# where a failure needs their values, if the calls gave no more distinct values than this.
PYTHON_SCALARS = ("int ", "bool ", "float ", "str ", "NoneType ")
STATIC_VALUES_AT_MOST = 4


@dataclass
class Round:
    number: int
    returncode: int | None  # None: the command ran past --timeout
    failures: list[Observation]
    fixed: dict[str, list[str]] = field(default_factory=dict)  # relative path -> codes of what was fixed
    # relative path -> the functions (qualified names) the round rewrote, and the file's text before.
    rewrote: dict[str, set[str]] = field(default_factory=dict)
    before: dict[str, str] = field(default_factory=dict)
    # Where each failure is in the project's file as it was (earlier rounds moved lines):
    # its line, or a notebook's ``cell N:LINE``.
    places: dict[Observation, str] = field(default_factory=dict)
    # Why a failure had no fix: the finding the analysis left on its line, with its reason.
    reasons: dict[Observation, str] = field(default_factory=dict)
    # The silent failures this round's fixes removed (a stale global passed in).
    silent: list[SilentDifference] = field(default_factory=list)


@dataclass
class RunResult:
    reference: int | None  # the command's exit status with jit disabled (None: it timed out)
    rounds: list[Round]
    changed: dict[str, tuple[str, str]]  # relative path -> (original text, fixed text)
    final: int | None  # the last run's exit status
    output: str  # the last run's stdout and stderr
    reference_stdout: str = ""
    final_stdout: str = ""
    # The jitted functions of the last run: calls, compiles and why they recompiled.
    compiled: list[FunctionProfile] = field(default_factory=list)
    # Why nothing was fixed: the command fails (or hangs) with jit disabled too.
    refused: str | None = None
    # relative path -> each rewritten function's validation with the run's recorded arguments.
    validation: dict[str, list[FunctionResult]] = field(default_factory=dict)
    backends: str = ""  # the platforms the validation children ran on (`cpu`, `tpu`)
    # relative path -> why its fixes must not be written (a validation failed).
    held: dict[str, str] = field(default_factory=dict)
    # relative path -> why its validation could not run (a script whose import is the program
    # that failed under jit): the rerun is then the only proof, and the fixes stand on it.
    unvalidated: dict[str, str] = field(default_factory=dict)
    # Lines of the output that differ between two runs with jit disabled (a timing, a date).
    unstable: frozenset[int] = frozenset()
    # Rewrites taken back: each only moved the failure (the program then failed otherwise, in
    # the code rewritten), with what it failed with.
    moved: list[str] = field(default_factory=list)
    # Jitted functions that returned otherwise under jit than with jit disabled, nothing raised.
    silent: list[SilentDifference] = field(default_factory=list)
    # Where the time went, in order: each run of the command, each round's fixing, the
    # recording of arguments and the validation (what it was, seconds).
    phases: list[tuple[str, float]] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        """The last run exits as the reference does -- or succeeds where even the reference
        failed (code that fails without jit too, such as `x[i] = v` on a JAX array)."""
        return self.refused is None and (self.final == self.reference or self.final == 0)

    @property
    def unfixed(self) -> list[Observation]:
        """Failures the last run showed that no fix removed."""
        last = self.rounds[-1] if self.rounds else None
        return last.failures if last is not None and not last.fixed else []

    @property
    def writable(self) -> dict[str, tuple[str, str]]:
        return {relative: texts for relative, texts in self.changed.items() if relative not in self.held}

    def stdout_difference(self) -> str | None:
        """The first line where the last run printed otherwise than the eager run."""
        return first_line_difference(self.reference_stdout, self.final_stdout, "with jit disabled", self.unstable)

    def removed_by(self, relative: str, function: str) -> list[str]:
        """The failures the rewrite of ``function`` in ``relative`` removed: ``error at line N``."""
        return sorted({f"{seen.error} at line {current.places.get(seen, seen.line)}"
                       for current in self.rounds if current.fixed.get(relative) for seen in current.failures
                       if seen.function == function.rsplit(".", 1)[-1] and seen.path.endswith(os.sep + relative)})


@dataclass
class _Scratch:
    """The scratch copy of the project and the logs of the command's runs in it."""

    folder: Path
    project: Path
    command: list[str]
    timeout: float
    pass_env: tuple[str, ...]
    phases: list[tuple[str, float]] = field(default_factory=list)
    # (file, function) of the jitted functions whose arguments the reference run saved.
    recorded: set[tuple[str, str]] = field(default_factory=set)

    @property
    def calls(self) -> Path:
        """Where the concrete arguments of calls are saved, for validation."""
        return self.folder / "recorded" / "calls"

    @contextlib.contextmanager
    def phase(self, what: str) -> Iterator[None]:
        """Time what is done inside as one phase of the run (``RunResult.phases``)."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.phases.append((what, time.monotonic() - started))

    @property
    def log(self) -> Path:
        return self.folder / "failures.jsonl"

    @property
    def profile_log(self) -> Path:
        return self.folder / "profile.jsonl"

    @property
    def eager_profile_log(self) -> Path:
        """The calls of the jitted functions in the run with jit disabled, with their arguments."""
        return self.folder / "eager-profile.jsonl"

    def run(self, disable_jit: bool, why: str, record: bool = False):
        """Run the command (``record``: saving the arguments of the jitted functions' calls)."""
        self.log.unlink(missing_ok=True)
        profile_log = self.eager_profile_log if disable_jit else self.profile_log
        profile_log.unlink(missing_ok=True)
        if record:
            self.calls.mkdir(parents=True, exist_ok=True)
        with self.phase(f"{why}: the command, {'jit disabled' if disable_jit else 'jitted'}"):
            return _run(self.command, self.project, self.folder / "hook", self.log, self.timeout, self.pass_env,
                        disable_jit, profile_log, self.calls if record else None)


def notebook_command(notebook: str) -> list[str]:
    """The command that runs a notebook's code cells in order (``jitfix run NB.ipynb``)."""
    return [sys.executable, "-m", "jitfix.run_notebook", notebook]


def run_and_fix(command: list[str], root: str, settings: Settings, *, max_rounds: int = 10,
                timeout: float = 600.0, pass_env: tuple[str, ...] = (), unsafe_fixes: bool = False,
                validate: bool = True) -> RunResult:
    """Run ``command`` in a scratch copy of ``root`` until its jit failures are fixed."""
    root_path = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="jitfix-run-") as scratch_name:
        scratch = _Scratch(Path(scratch_name), Path(scratch_name) / root_path.name, command, timeout, pass_env)
        shutil.copytree(root_path, scratch.project, ignore=SKIPPED, symlinks=True)
        (scratch.folder / "hook").mkdir()
        shutil.copyfile(HOOK, scratch.folder / "hook" / "sitecustomize.py")
        shutil.copyfile(RECORDER_HOOK, scratch.folder / "hook" / "jitfix_recorder.py")
        eager = scratch.run(disable_jit=True, why="reference", record=validate)
        reference_log = _log_entries(scratch.eager_profile_log)
        scratch.recorded = {(entry["file"], entry["function"]) for entry in reference_log
                            if entry.get("kind") == "recorded"}
        touched = _project_files(scratch.log, scratch.project, command)
        python_valued = _python_valued(scratch.eager_profile_log, scratch.project)
        evidence: list[Observation] = []
        originals: dict[str, str] = {}
        rounds: list[Round] = []
        outcome = None
        for number in range(1, max_rounds + 1):
            outcome = scratch.run(disable_jit=False, why=f"round {number}")
            failures = [seen for seen in _read_log(scratch.log, scratch.project) if seen not in evidence]
            current = Round(number, outcome.returncode, failures,
                            places={seen: _place(scratch.project, seen, originals) for seen in failures})
            rounds.append(current)
            refused = _refusal(eager, failures) if number == 1 else None
            if refused:
                return RunResult(eager.returncode, rounds, {}, outcome.returncode, outcome.stdout + outcome.stderr,
                                 eager.stdout, outcome.stdout, refused=refused, phases=scratch.phases)
            jitted = [seen for seen in _jitted(scratch.profile_log, scratch.project) if seen not in evidence]
            static = [seen for seen in _static_evidence(scratch.log, scratch.project, python_valued)
                      if seen not in evidence]
            callers = [seen for seen in _read_log(scratch.log, scratch.project, "path") if seen not in evidence]
            staged = [seen for seen in _staged_evidence(scratch.log, scratch.project) if seen not in evidence]
            if not failures and not jitted and number > 1:
                break  # nothing more to learn (the exit status is judged against the reference)
            evidence += failures + jitted + static + callers + staged
            paths = {seen.path for seen in failures + jitted + static + callers + staged} \
                | (touched if number == 1 else set())
            with scratch.phase(f"round {number}: fixing"):
                current.fixed, left = _fix(scratch.project, settings, evidence, paths, originals,
                                           Options(apply_fixes=True, unsafe_fixes=unsafe_fixes), current)
            current.reasons = {seen: _reason(seen, left.get(seen.path, [])) for seen in failures
                               if str(Path(seen.path).relative_to(scratch.project.resolve())) not in current.fixed}
            if not current.fixed:
                break  # the failures seen have no fix: running again would show them again
        if outcome is not None and outcome.returncode == eager.returncode and not unsafe_fixes \
                and first_line_difference(eager.stdout, outcome.stdout, "", frozenset()) is not None:
            paths = touched | {seen.path for seen in evidence}
            outcome = _prints_proven(scratch, settings, evidence, paths, originals, rounds, eager.stdout) or outcome
        moved: list[str] = []
        if outcome is not None and outcome.returncode not in (eager.returncode, 0):
            last = rounds[-1]
            taken_back = _take_back_moved(scratch.project, rounds, outcome.stderr) if not last.failures else \
                _take_back_unfinished(scratch.project, rounds) if not last.fixed else None
            if taken_back is not None:
                moved.append(taken_back)
                outcome = scratch.run(disable_jit=False, why="after taking a rewrite back")
        silent: list[SilentDifference] = []
        if outcome is not None:
            outcome, silent = _silent_failures(scratch, settings, evidence, originals, rounds, reference_log, outcome)
        changed = {}
        for relative, original in originals.items():
            text = (scratch.project / relative).read_text(encoding="utf-8")
            if text != original:
                changed[relative] = (original, text)
        result = RunResult(eager.returncode, rounds, changed, outcome.returncode if outcome else None,
                           (outcome.stdout + outcome.stderr) if outcome else "", eager.stdout,
                           outcome.stdout if outcome else "", read_profile(scratch.profile_log, scratch.project)[0])
        result.moved = moved
        if result.stdout_difference() is not None or silent:
            again = _second_reference(scratch, result)
            result.unstable = unstable_lines(result.reference_stdout, again.stdout)
            result.silent = _in_project(unstable(silent, reference_log, _log_entries(scratch.eager_profile_log)),
                                        scratch.project)
        if validate and changed:
            _validate(scratch, result, settings)
        result.phases = scratch.phases
        return result


def _prints_proven(scratch: _Scratch, settings: Settings, evidence: list[Observation], paths: set[str],
                   originals: dict[str, str], rounds: list[Round], reference_stdout: str):
    """The program prints otherwise under jit than with jit disabled: the prints in traced code
    whose fix is unsafe only because no printed value is known to be traced (a trace-time log
    may be intended) are rewritten, and kept when the next run prints as the eager run does --
    the run's proof that they were meant to print on every call. That run (None: nothing to
    rewrite, or the output still differs, and the files are as they were)."""
    before = {path: Path(path).read_text(encoding="utf-8") for path in paths if Path(path).is_file()}
    prints_only = replace(settings, select=("JF401",))
    fixed, _ = _fix(scratch.project, prints_only, evidence, set(before), originals,
                    Options(apply_fixes=True, unsafe_fixes=True))
    if not fixed:
        return None
    again = scratch.run(disable_jit=False, why="prints rewritten")
    if again.returncode == rounds[-1].returncode \
            and first_line_difference(reference_stdout, again.stdout, "", frozenset()) is None:
        rounds.append(Round(len(rounds) + 1, again.returncode, [], fixed=fixed))
        return again
    for path, text in before.items():
        Path(path).write_text(text, encoding="utf-8")
    return None


def _silent_failures(scratch: _Scratch, settings: Settings, evidence: list[Observation], originals: dict[str, str],
                     rounds: list[Round], reference_log: list[dict], outcome):
    """The jitted functions of the last run that return otherwise than with jit disabled, and
    the run after the ones a stale global explains are fixed (``_stale_globals_passed``)."""
    def original_text(path: str) -> str | None:
        return _original_text(scratch.project, path, originals)

    def compared(jitted_log: list[dict]) -> list[SilentDifference]:
        return silent_differences(reference_log, jitted_log, original_text)

    silent = compared(_log_entries(scratch.profile_log))
    passed = _stale_globals_passed(scratch, settings, evidence, originals, rounds, silent, outcome.returncode,
                                   compared) if silent else None
    return passed if passed is not None else (outcome, silent)


def _in_project(found: list[SilentDifference], project: Path) -> list[SilentDifference]:
    """``found`` with each path relative to the project (what the user's files are called)."""
    root = project.resolve()
    return [replace(difference, path=str(Path(difference.path).relative_to(root)))
            for difference in found if Path(difference.path).is_relative_to(root)]


def _stale_globals_passed(scratch: _Scratch, settings: Settings, evidence: list[Observation],
                          originals: dict[str, str], rounds: list[Round], silent: list[SilentDifference],
                          returncode: int | None, compared: Callable[[list[dict]], list[SilentDifference]]):
    """Silent failures explained by a module global that changed after the trace: with the run's
    observation that it changes (``CHANGED``), JF301 passes it in at each call -- also where the
    change is made from another module, which the analysis alone cannot see. Kept when the next
    run exits as the last did and those functions return what they return with jit disabled.
    That run and the silent failures left (None: nothing to rewrite, or it did not help, and
    the files are as they were)."""
    explained = [difference for difference in silent
                 if any(cause.kind == STALE and cause.module_global for cause in difference.causes)]
    seen = [Observation(difference.path, difference.function, difference.line, cause.line, CHANGED, (cause.path,))
            for difference in explained for cause in difference.causes if cause.kind == STALE and cause.module_global]
    if not seen:
        return None
    before = {path: Path(path).read_text(encoding="utf-8") for path in {observation.path for observation in seen}}
    fixed, _ = _fix(scratch.project, settings, evidence + seen, set(before), originals, Options(apply_fixes=True))
    if not fixed:
        return None
    again = scratch.run(disable_jit=False, why="stale globals passed in")
    left = compared(_log_entries(scratch.profile_log))
    still = {(difference.path, difference.function) for difference in left}
    if again.returncode == returncode and not still & {(each.path, each.function) for each in explained}:
        rounds.append(Round(len(rounds) + 1, again.returncode, [], fixed=fixed,
                            silent=_in_project(explained, scratch.project)))
        evidence += seen
        return again, left
    for path, text in before.items():
        Path(path).write_text(text, encoding="utf-8")
    return None


def _second_reference(scratch: _Scratch, result: RunResult):
    """The original run once more with jit disabled: what it prints or returns otherwise from
    one run to the next is not jit's doing. Leaves the originals in the scratch copy."""
    for relative, (original, _) in result.changed.items():
        (scratch.project / relative).write_text(original, encoding="utf-8")
    return scratch.run(disable_jit=True, why="what changes between runs")


def _original_text(project: Path, path: str, originals: dict[str, str]) -> str | None:
    """A project file's text as the user has it (before any round's rewrite)."""
    try:
        relative = str(Path(path).relative_to(project.resolve()))
        return originals.get(relative) or (project / relative).read_text(encoding="utf-8")
    except (ValueError, OSError, UnicodeDecodeError):
        return None


def _refusal(eager, failures: list[Observation]) -> str | None:
    """Why the run stops before fixing anything: the command hangs or fails with jit
    disabled too, and under jit it shows no jit failure (so whatever breaks it is not jit)."""
    if failures:
        return None
    if eager.returncode is None:
        return "the command runs past --timeout even with jit disabled"
    if eager.returncode != 0:
        tail = (eager.stdout + eager.stderr).strip().splitlines()[-1:] or ["(no output)"]
        return f"the command fails with jit disabled too (exit {eager.returncode}: {tail[0]}); that is not a jit failure"
    return None


def _validate(scratch: _Scratch, result: RunResult, settings: Settings) -> None:
    """Validate every rewritten function of the changed modules, with the arguments the
    functions were called with in an eager run of the original project as inputs; a module
    whose validation fails is held back."""
    from jitfix.api import analyse
    from jitfix.validate.record import record_calls
    from jitfix.validate.runner import platforms_of, validate_modules
    from jitfix.validate.session import recording_targets

    jobs: dict[str, ModuleJob] = {}
    for relative, (original, fixed) in result.changed.items():
        path = scratch.project / relative
        path.write_text(original, encoding="utf-8")  # the calls are recorded as the original makes them
        if path.suffix == ".py":  # notebooks are reviewed, not imported (as with `fix --validate`)
            findings, _ = analyse(str(path), original, settings)
            jobs[relative] = ModuleJob(str(path), original, fixed, {finding.line: finding.code for finding in findings})
    targets = recording_targets(list(jobs.values()))
    if not all((os.path.realpath(path), name) in scratch.recorded for path, names in targets.items() for name in names):
        # A rewritten function that is not itself jitted (a helper): its calls are recorded
        # in a run of their own (with those the reference run saved, as the original made them).
        with scratch.phase("recording the arguments: the command, jit disabled"):
            record_calls(shlex.join(scratch.command), targets, str(scratch.calls.parent), scratch.timeout,
                         scratch.pass_env, cwd=str(scratch.project),
                         extra_env={"JAX_DISABLE_JIT": "1", "PYTHONPATH": str(scratch.project)})
    options = ValidationOptions(recorded=str(scratch.calls), timeout=scratch.timeout, pass_env=scratch.pass_env)
    with scratch.phase("validating the rewritten functions"):
        modules = validate_modules(list(jobs.values()), options)
    result.backends = platforms_of(modules)
    for relative, module in zip(jobs, modules):
        result.validation[relative] = module.functions
        if module.error:
            result.unvalidated[relative] = module.error.splitlines()[0]
        elif module.failed:
            result.held[relative] = "the validation of " + ", ".join(f.function for f in module.failed) + " failed"


def _run(command: list[str], cwd: Path, hook: Path, log: Path, timeout: float, pass_env: tuple[str, ...],
         disable_jit: bool, profile_log: Path | None = None, calls: Path | None = None):
    python_path = os.pathsep.join(filter(None, [str(hook), str(cwd), os.environ.get("PYTHONPATH")]))
    extra = {"JITFIX_RUN_LOG": str(log), "JITFIX_RUN_ROOT": str(cwd), "PYTHONPATH": python_path}
    if calls is not None:  # the arguments of the jitted functions' calls, saved for validation
        extra["JITFIX_RECORD_CALLS"] = str(calls)
    if disable_jit:  # no compiles to log: only the jitted functions' calls and their arguments
        extra.update(JAX_DISABLE_JIT="1", JITFIX_PROFILE_CALLS_ONLY="1")
    if profile_log is not None:  # how each jitted function compiled (see jitfix.profile), what it returned
        extra.update(JITFIX_PROFILE_LOG=str(profile_log), JITFIX_WATCH_RESULTS="1")
    return run_process(command, timeout=timeout, env=environment(extra, pass_env), cwd=str(cwd))


def _place(scratch: Path, seen: Observation, originals: dict[str, str]) -> str:
    """The failure's line in the file as the project has it: earlier rounds' fixes move lines,
    and a line the fixes kept maps to where it was. In a notebook: its cell and line there."""
    if seen.path.endswith(".ipynb"):
        from jitfix import notebooks

        try:
            text = Path(seen.path).read_text(encoding="utf-8")
            view = notebooks.code_view(notebooks.read(text, seen.path))
        except (OSError, InputError):
            return str(seen.line)
        cell, line = notebooks.locate(view, view.text, seen.line)
        return f"cell {cell + 1}:{line}"
    original = originals.get(str(Path(seen.path).relative_to(scratch.resolve())))
    if original is None:
        return str(seen.line)
    current = Path(seen.path).read_text(encoding="utf-8").splitlines()
    matcher = difflib.SequenceMatcher(None, original.splitlines(), current, autojunk=False)
    for old_start, new_start, size in matcher.get_matching_blocks():
        if new_start < seen.line <= new_start + size:
            return str(old_start + seen.line - new_start)
    return str(seen.line)


def _log_entries(log: Path) -> list[dict]:
    entries = []
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries


def _project_files(log: Path, scratch: Path, command: list[str]) -> set[str]:
    """The project's files the run imported (its modules, the script), and a notebook it ran."""
    paths = {path for entry in _log_entries(log) if entry.get("kind") == "modules" for path in entry["paths"]}
    paths |= {os.path.realpath(scratch / argument) for argument in command if argument.endswith(".ipynb")}
    return {path for path in paths if Path(path).is_relative_to(scratch.resolve()) and Path(path).is_file()}


def _jitted(profile_log: Path, scratch: Path) -> list[Observation]:
    """Every function of the project ``jax.jit`` was applied to in the run: its parameters
    other than the static ones are traced."""
    jitted = []
    for entry in _log_entries(profile_log):
        if entry.get("kind") != "jit" or not entry.get("file"):
            continue
        path = os.path.realpath(entry["file"])
        if Path(path).is_relative_to(scratch.resolve()):
            traced = tuple(name for name in entry["parameters"] if name not in entry["static"])
            seen = Observation(path, entry["function"], int(entry["line"]), int(entry["line"]), JITTED, traced)
            if seen not in jitted:
                jitted.append(seen)
    return jitted


def _python_valued(profile_log: Path, scratch: Path) -> dict[tuple[str, int, str], dict[str, str]]:
    """For each jitted function of the project (real path, first line, name): its parameters
    every call gave a Python scalar, with the values given -- few, as each would compile once
    if the parameter were static."""
    found: dict[tuple[str, int, str], dict[str, str]] = {}
    for function in read_profile(profile_log)[0]:
        path = os.path.realpath(function.file)
        if not function.file or not Path(path).is_relative_to(scratch.resolve()):
            continue
        found[(path, function.line, function.name)] = {
            name: ", ".join(kinds) for name, kinds in function.arguments.items()
            if 0 < len(kinds) <= STATIC_VALUES_AT_MOST and all(kind.startswith(PYTHON_SCALARS) for kind in kinds)}
    return found


def _static_evidence(log: Path, scratch: Path, python_valued: dict[tuple[str, int, str], dict[str, str]]
                     ) -> list[Observation]:
    """Parameters of a jitted function to make static: a value that failed under jit depends
    on them alone (JAX says which arguments it depends on), and the run with jit disabled gave
    them a Python value on every call."""
    found: list[Observation] = []
    for entry in _log_entries(log):
        origin, depends = entry.get("traced_by"), entry.get("depends_on")
        if not isinstance(origin, dict) or origin.get("for") != "jit" or not depends:
            continue
        try:
            key = (os.path.realpath(origin["file"]), int(origin["line"]), str(origin["function"]))
            line = int(entry["line"]) if os.path.realpath(entry["path"]) == key[0] else key[1]
        except (KeyError, TypeError, ValueError):
            continue
        given = python_valued.get(key, {})
        if Path(key[0]).is_relative_to(scratch.resolve()) and all(name in given for name in depends):
            seen = Observation(key[0], key[2], key[1], line, STATIC, (),
                               tuple((name, given[name]) for name in depends), static=tuple(depends))
            if seen not in found:
                found.append(seen)
    return found


def _staged_evidence(log: Path, scratch: Path) -> list[Observation]:
    """Where a value that failed under jit was made from constants alone (JAX says it depends
    on no argument of the jitted function): each line of the project's code that computed it
    with jnp, or brought a constant of it into the trace -- a trace-time constant, there --
    and each array made before tracing that it read, by what held it (``failing``)."""
    found: list[Observation] = []
    for entry in _log_entries(log):
        if entry.get("kind") is not None or not entry.get("made_at"):
            continue
        try:
            failed_at = os.path.realpath(entry["path"])
            via = f"{Path(failed_at).relative_to(scratch.resolve())}:{int(entry['line'])} ({entry['error']})"
            for site in entry["made_at"]:
                path = os.path.realpath(site["path"])
                seen = Observation(path, str(site["function"]), int(site["first_line"]), int(site["line"]), STAGED, (),
                                   via=via, made=tuple(str(dtype) for dtype in site["dtypes"]))
                if Path(path).is_relative_to(scratch.resolve()) and seen not in found:
                    found.append(seen)
            # An array made before tracing that the value read, held by the failing code
            # (`self.split_idxs`): where the failing function reads it from.
            for held in entry.get("held_constants", ()):
                seen = Observation(failed_at, str(entry["function"]), int(entry["first_line"]), int(entry["line"]),
                                   STAGED, (), failing=str(held["holder"]), via=via, made=(str(held["dtype"]),))
                if Path(failed_at).is_relative_to(scratch.resolve()) and seen not in found:
                    found.append(seen)
        except (KeyError, TypeError, ValueError):
            continue
    return found


def _read_log(log: Path, scratch: Path, kind: str | None = None) -> list[Observation]:
    """The failures a run recorded (with ``kind="path"``: the frames on their paths), each
    once, in the order they happened."""
    seen: list[Observation] = []
    for entry in _log_entries(log):
        if entry.get("kind") != kind:
            continue
        try:
            error = ON_PATH if kind == "path" else entry["error"]
            # A tracer of constants alone (jnp staged it) is no argument's value: a parameter of
            # that name (rebound to it: `n = jnp.asarray(n)`) is not shown traced by it.
            traced = tuple(name for name in entry["traced"] if name not in entry.get("constants", ()))
            observation = Observation(os.path.realpath(entry["path"]), entry["function"], int(entry["first_line"]),
                                      int(entry["line"]), error, traced,
                                      tuple(sorted(entry.get("types", {}).items())),
                                      host=tuple(sorted(entry.get("host", {}).items())),
                                      failing=str(entry.get("failing", "")))
        except (ValueError, KeyError, TypeError):
            continue
        if observation not in seen and Path(observation.path).is_relative_to(scratch.resolve()):
            seen.append(observation)
    return seen


def _fix(scratch: Path, settings: Settings, evidence: list[Observation], paths: set[str],
         originals: dict[str, str], options: Options,
         current: Round | None = None) -> tuple[dict[str, list[str]], dict[str, list[Finding]]]:
    """Fix the modules the failures were in, with all the evidence so far: the codes fixed in
    each changed file (relative path), and the findings left in each file (real path); in
    ``current``, the functions each file's rewrite changed and its text before."""
    fixed: dict[str, list[str]] = {}
    left: dict[str, list[Finding]] = {}
    with_evidence = replace(settings, observed=tuple(evidence))
    # The project's other modules, read where a call reaches them (as `jitfix fix` of the
    # folder does): a jitted function's helper in another module, a global stream it advances.
    project = Project(discover([str(scratch)], settings.exclude)[0], settings.max_file_bytes)
    for path in sorted(paths):
        relative = str(Path(path).relative_to(scratch.resolve()))
        try:
            source = read_source(path)
        except InputError:
            continue
        result = process_source(source, with_evidence, options, project)
        left[path] = result.findings
        if result.new_text is not None and result.new_text != source.text:
            originals.setdefault(relative, source.text)
            Path(path).write_text(result.new_text, encoding="utf-8")
            fixed[relative] = [finding.code for finding in result.fixed]
            if current is not None:
                current.before[relative] = source.text
                current.rewrote[relative] = {finding.function for finding in result.fixed if finding.function}
    return fixed, left


# `  File "/path/to/module.py", line 23, in compute` and the exception's own last line.
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\s*$')
_RAISED = re.compile(r"^(?P<error>[A-Za-z_][\w.]*(Error|Exception))(: (?P<message>.*))?$")


def _take_back(project: Path, rounds: list[Round], current: Round, relative: str) -> str:
    """Put ``relative`` back as it was before ``current`` rewrote it (and forget that round's
    and later rounds' fixes of it); the codes of what that round fixed there."""
    codes = ", ".join(sorted(set(current.fixed.get(relative, []))))
    (project / relative).write_text(current.before[relative], encoding="utf-8")
    for later in rounds[rounds.index(current):]:
        later.fixed.pop(relative, None)
    return codes


def _take_back_unfinished(project: Path, rounds: list[Round]) -> str | None:
    """A rewrite whose function still fails: the last run's failure, which no rule fixes, is
    inside a function an earlier round rewrote (in code that rewrite wrote, a lambda of its
    `lax.cond`, or in what it left). That round's rewrite of the file is taken back, and what
    failed is returned to be said; None when the failures are elsewhere."""
    for seen in rounds[-1].failures:
        relative = str(Path(seen.path).relative_to(project.resolve()))
        try:
            tree = ast.parse((project / relative).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        holding = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                   and node.lineno <= seen.line <= (node.end_lineno or node.lineno)}
        for current in rounds[:-1]:
            rewritten = {name.rsplit(".", 1)[-1] for name in current.rewrote.get(relative, set())}
            if rewritten & holding:
                function = sorted(rewritten & holding)[0]
                codes = _take_back(project, rounds, current, relative)
                return (f"{relative}: the rewrite of `{function}` ({codes}) left it failing: the program then raised "
                        f"{seen.error} at line {seen.line} of the rewritten code, which no rule fixes; taken back")
    return None


def _take_back_moved(project: Path, rounds: list[Round], stderr: str) -> str | None:
    """A rewrite that only moved the failure: the last run failed with an error no round saw
    (a library refusing a tracer where it needs a Python value: `trans=` of `lu_solve`), in a
    function a round rewrote. That round's rewrite of the file is taken back, and what it
    failed with is returned to be said; None when the failure is elsewhere."""
    frames = [match for line in stderr.splitlines() if (match := _FRAME.match(line))
              and Path(os.path.realpath(match["path"])).is_relative_to(project.resolve())]
    raised = [match for line in stderr.splitlines() if (match := _RAISED.match(line.strip()))]
    if not frames or not raised:
        return None
    frame, error = frames[-1], raised[-1]
    relative = str(Path(os.path.realpath(frame["path"])).relative_to(project.resolve()))
    for current in rounds:
        rewritten = current.rewrote.get(relative, set())
        if any(name.rsplit(".", 1)[-1] == frame["function"] for name in rewritten):
            codes = _take_back(project, rounds, current, relative)
            message = (error["message"] or "")[:160]
            return (f"{relative}: the rewrite of `{frame['function']}` ({codes}) only moved the failure: the "
                    f"program then raised {error['error']} at line {frame['line']}"
                    f"{': ' + message if message else ''}; taken back")
    return None


def _reason(seen: Observation, findings: list[Finding]) -> str:
    """Why the failure has no fix: the message of a finding on its line, else that no rule
    rewrites what failed there."""
    on_line = [finding for finding in findings if finding.line == seen.line]
    if on_line:
        return f"{on_line[0].code} {on_line[0].message}"
    sites = _failure_sites(seen)
    if len(sites) > 1 and seen.error in EXPLAINED_ERRORS:
        listed = ", ".join(f"`{text}`" for text in sites)
        return (f"Python asked a tracer for {WANTED[seen.error]} in one of {listed}; the failure does not say "
                "which, so none is rewritten")
    missing = MISSING.get(seen.error)
    if missing is None:
        return "no rule rewrites what failed on this line"
    where = f" at `{sites[0]}`" if len(sites) == 1 else ""
    return f"no rule rewrites what failed on this line{where}: {missing}"


def _failure_sites(seen: Observation) -> list[str]:
    """The source of each expression on the failing line where Python may have done what the
    error says it did with a tracer (`analysis/failure_sites.py`)."""
    if seen.error not in WANTED:
        return []
    try:
        text = Path(seen.path).read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return []
    return [ast.get_source_segment(text, site) or "" for site in sites_on_line(tree, seen.line, seen.error)]
