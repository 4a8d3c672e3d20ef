"""Validation of a whole run: record calls if asked, validate every changed module, and hold
back the rewrites of any function that failed, recomputing the file without them."""

from __future__ import annotations

import ast
import tempfile
import time
from dataclasses import dataclass, field, replace

from jitfix.config import Settings
from jitfix.engine import FileResult, Options, process_source
from jitfix.validate.record import Recording, record_calls
from jitfix.validate.runner import ModuleJob, ModuleResult, ValidationOptions, platforms_of, validate_modules
from jitfix.validate.targets import changed_functions


@dataclass
class ValidationRun:
    modules: list[ModuleResult] = field(default_factory=list)
    recording: Recording | None = None
    seconds: float = 0.0
    # path -> functions whose rewrites were held back (not written): failed, or not validated
    held: dict[str, list[str]] = field(default_factory=dict)
    # path -> why no rewrite of the file was written (its validation could not run)
    held_files: dict[str, str] = field(default_factory=dict)

    @property
    def platforms(self) -> str:
        return platforms_of(self.modules)

    @property
    def failed(self) -> int:
        return sum(len(module.failed) for module in self.modules) + sum(1 for m in self.modules if m.error)

    def counts(self) -> dict[str, int]:
        counts = {"passed": 0, "failed": 0, "skipped": 0}
        for module in self.modules:
            for function in module.functions:
                counts[function.status] += 1
        return counts

    def for_path(self, path: str) -> ModuleResult | None:
        return next((module for module in self.modules if module.path == path), None)


def _job(result: FileResult) -> ModuleJob:
    assert result.source is not None and result.new_text is not None  # only changed files are validated
    return ModuleJob(result.path, result.source.text, result.new_text, result.rewritten_lines)


def validate_jobs(jobs: list[ModuleJob], validation: ValidationOptions, record: str | None = None) -> ValidationRun:
    """Validate each module; with ``record``, first run that command to capture inputs."""
    started = time.perf_counter()
    run = ValidationRun()
    with tempfile.TemporaryDirectory(prefix="jitfix-record-") as folder:
        if record and jobs:
            run.recording = record_calls(record, recording_targets(jobs), folder, validation.timeout, validation.pass_env,
                                         validation.memory_limit)
            validation = replace(validation, recorded=run.recording.folder)
        run.modules = validate_modules(jobs, validation)
    run.seconds = time.perf_counter() - started
    return run


def recording_targets(jobs: list[ModuleJob]) -> dict[str, list[str]]:
    """The functions whose calls a recording saves: each module's rewritten top-level functions."""
    return {job.path: [name for name, _, _ in changed_functions(ast.parse(job.old_text), ast.parse(job.new_text))
                       if "." not in name]
            for job in jobs}


def validate_results(results: list[FileResult], settings: Settings, options: Options,
                     validation: ValidationOptions, record: str | None = None) -> ValidationRun:
    """Validate the changed files of ``results``; the rewrites of a function that failed, or
    that could not be validated (skipped; the module did not import or timed out), are taken
    out of its file's ``new_text`` (the result is updated in place), unless
    ``allow_unvalidated`` says to keep what was not proven wrong."""
    # Notebooks are not importable modules: their rewrites are reviewed, not validated.
    changed = [result for result in results
               if result.changed and result.path != "-" and not result.path.endswith(".ipynb")]
    run = validate_jobs([_job(result) for result in changed], validation, record)
    for result, module in zip(changed, run.modules):
        if module.error and not validation.allow_unvalidated:
            _hold_file(result)
            run.held_files[result.path] = module.error
            continue
        held = [function.function for function in module.functions
                if function.status == "failed" or (function.status == "skipped" and not validation.allow_unvalidated)]
        if held:
            _hold(result, held, settings, options)
            run.held[result.path] = held
    return run


def _hold_file(result: FileResult) -> None:
    assert result.source is not None
    result.new_text = result.source.text
    result.findings = result.findings + result.fixed
    result.fixed = []


def _hold(result: FileResult, functions: list[str], settings: Settings, options: Options) -> None:
    """Recompute the file without the rewrites of ``functions``; if they still change (another
    rule's edit reached them), the file is not rewritten at all."""
    assert result.source is not None
    again = process_source(result.source, settings, replace(options, hold=frozenset(functions)))
    if again.new_text is not None and not _touches(result.source.text, again.new_text, functions):
        result.new_text = again.new_text
        result.fixed = again.fixed
        result.findings = again.findings
    else:
        _hold_file(result)


def _touches(old: str, new: str, functions: list[str]) -> bool:
    changed = {name for name, _, _ in changed_functions(ast.parse(old), ast.parse(new))}
    return bool(changed & set(functions))
