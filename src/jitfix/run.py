"""``jitfix run -- COMMAND``: let the program say what breaks under jit, fix that, and prove it
by running it again.

The project folder is copied to a scratch folder, and the command runs there with a start-up
hook (``run_hook.py`` as ``sitecustomize``) that records each JAX error of a traced value
used as a Python value: file, line, function, and which locals held tracers. Each record
is evidence -- that function is traced, those parameters are tracers -- given to the
analysis (``Settings.observed``), which then plans the rewrite as ``fix`` would, also where
the static analysis alone could not prove the value traced. The fixed files replace their
scratch copies and the command runs again, until it exits as it does with jit disabled, no
new failure is seen, or the rounds run out. Nothing outside the scratch folder changes; the
caller decides what to write.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from jitfix.analysis.traced import Observation
from jitfix.config import Settings
from jitfix.engine import Options, process_text
from jitfix.files import InputError, read_source
from jitfix.profile import FunctionProfile, read_profile
from jitfix.validate.compare import first_line_difference
from jitfix.validate.process import environment
from jitfix.validate.process import run as run_process

HOOK = Path(__file__).with_name("run_hook.py")
# Not copied to the scratch folder: version control, environments, caches.
SKIPPED = shutil.ignore_patterns(".git", ".hg", ".venv", "venv", "env", "__pycache__", "*.egg-info", "node_modules",
                                 ".jitfix_cache", ".mypy_cache", ".pytest_cache", ".ruff_cache")


@dataclass
class Round:
    number: int
    returncode: int | None
    failures: list[Observation]
    fixed: dict[str, list[str]] = field(default_factory=dict)  # relative path -> codes of what was fixed
    # Where each failure is in the project's file as it was (earlier rounds moved lines).
    original_lines: dict[Observation, int] = field(default_factory=dict)


@dataclass
class RunResult:
    reference: int | None  # the command's exit status with jit disabled
    rounds: list[Round]
    changed: dict[str, tuple[str, str]]  # relative path -> (original text, fixed text)
    final: int | None  # the last run's exit status
    output: str  # the last run's stdout and stderr
    reference_stdout: str = ""
    final_stdout: str = ""
    # The jitted functions of the last run: calls, compiles and why they recompiled.
    compiled: list[FunctionProfile] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        """The last run exits as the reference does -- or succeeds where even the reference
        failed (code that fails without jit too, such as `x[i] = v` on a JAX array)."""
        return self.final == self.reference or self.final == 0

    @property
    def unfixed(self) -> list[Observation]:
        """Failures the last run showed that no fix removed."""
        last = self.rounds[-1] if self.rounds else None
        return last.failures if last is not None and not last.fixed else []

    def stdout_difference(self) -> str | None:
        """The first line where the last run printed otherwise than the eager run."""
        return first_line_difference(self.reference_stdout, self.final_stdout, "with jit disabled")


def run_and_fix(command: list[str], root: str, settings: Settings, *, max_rounds: int = 10,
                timeout: float = 600.0, pass_env: tuple[str, ...] = (), unsafe_fixes: bool = False) -> RunResult:
    """Run ``command`` in a scratch copy of ``root`` until its jit failures are fixed."""
    root_path = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="jitfix-run-") as scratch_name:
        scratch = Path(scratch_name) / root_path.name
        shutil.copytree(root_path, scratch, ignore=SKIPPED, symlinks=True)
        hook = Path(scratch_name) / "hook"
        hook.mkdir()
        shutil.copyfile(HOOK, hook / "sitecustomize.py")
        log = Path(scratch_name) / "failures.jsonl"
        profile_log = Path(scratch_name) / "profile.jsonl"
        eager = _run(command, scratch, hook, log, timeout, pass_env, disable_jit=True)
        reference = eager.returncode
        evidence: list[Observation] = []
        originals: dict[str, str] = {}
        rounds: list[Round] = []
        outcome = None
        for number in range(1, max_rounds + 1):
            log.unlink(missing_ok=True)
            profile_log.unlink(missing_ok=True)
            outcome = _run(command, scratch, hook, log, timeout, pass_env, disable_jit=False, profile_log=profile_log)
            failures = [seen for seen in _read_log(log, scratch) if seen not in evidence]
            current = Round(number, outcome.returncode, failures,
                            original_lines={seen: _original_line(scratch, seen, originals) for seen in failures})
            rounds.append(current)
            if not failures:  # nothing more to learn (the exit status is judged against the reference)
                break
            evidence += failures
            current.fixed = _fix(scratch, settings, evidence, {seen.path for seen in failures}, originals,
                                 Options(apply_fixes=True, unsafe_fixes=unsafe_fixes))
            if not current.fixed:
                break  # the failures seen have no fix: running again would show them again
        changed = {}
        for relative, original in originals.items():
            text = (scratch / relative).read_text(encoding="utf-8")
            if text != original:
                changed[relative] = (original, text)
        return RunResult(reference, rounds, changed, outcome.returncode if outcome else None,
                         (outcome.stdout + outcome.stderr) if outcome else "", eager.stdout,
                         outcome.stdout if outcome else "", read_profile(profile_log, scratch)[0])


def _run(command: list[str], cwd: Path, hook: Path, log: Path, timeout: float, pass_env: tuple[str, ...],
         disable_jit: bool, profile_log: Path | None = None):
    python_path = os.pathsep.join(filter(None, [str(hook), str(cwd), os.environ.get("PYTHONPATH")]))
    extra = {"JITFIX_RUN_LOG": str(log), "JITFIX_RUN_ROOT": str(cwd), "PYTHONPATH": python_path}
    if disable_jit:
        extra["JAX_DISABLE_JIT"] = "1"
    if profile_log is not None:  # how each jitted function compiled (see jitfix.profile)
        extra["JITFIX_PROFILE_LOG"] = str(profile_log)
    return run_process(command, timeout=timeout, env=environment(extra, pass_env), cwd=str(cwd))


def _original_line(scratch: Path, seen: Observation, originals: dict[str, str]) -> int:
    """The failure's line in the file as the project has it: earlier rounds' fixes move lines,
    and a line the fixes kept maps to where it was."""
    original = originals.get(str(Path(seen.path).relative_to(scratch.resolve())))
    if original is None:
        return seen.line
    current = Path(seen.path).read_text(encoding="utf-8").splitlines()
    matcher = difflib.SequenceMatcher(None, original.splitlines(), current, autojunk=False)
    for old_start, new_start, size in matcher.get_matching_blocks():
        if new_start < seen.line <= new_start + size:
            return old_start + seen.line - new_start
    return seen.line


def _read_log(log: Path, scratch: Path) -> list[Observation]:
    """The failures a run recorded, each once, in the order they happened."""
    seen: list[Observation] = []
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        try:
            entry = json.loads(line)
            observation = Observation(os.path.realpath(entry["path"]), entry["function"], int(entry["first_line"]),
                                      int(entry["line"]), entry["error"], tuple(entry["traced"]))
        except (ValueError, KeyError, TypeError):
            continue
        if observation not in seen and Path(observation.path).is_relative_to(scratch.resolve()):
            seen.append(observation)
    return seen


def _fix(scratch: Path, settings: Settings, evidence: list[Observation], paths: set[str],
         originals: dict[str, str], options: Options) -> dict[str, list[str]]:
    """Fix the modules the failures were in, with all the evidence so far; what was fixed."""
    fixed: dict[str, list[str]] = {}
    with_evidence = replace(settings, observed=tuple(evidence))
    for path in sorted(paths):
        relative = str(Path(path).relative_to(scratch.resolve()))
        try:
            source = read_source(path)
        except InputError:
            continue
        result = process_text(path, source.text, with_evidence, options)
        if result.new_text is not None and result.new_text != source.text:
            originals.setdefault(relative, source.text)
            Path(path).write_text(result.new_text, encoding="utf-8")
            fixed[relative] = [finding.code for finding in result.fixed]
    return fixed
