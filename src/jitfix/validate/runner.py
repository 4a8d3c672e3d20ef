"""Validation from jitfix's side: one process per module, modules in parallel.

The process (``jitfix.validate.child``) imports the user's code, so nothing here runs
unless the user asked for validation. Its own stdout and stderr are kept apart from
jitfix's output (the caller shows them under ``--verbose``); a module that fails to
import, crashes the interpreter or runs past the time limit gets a message saying so,
and the other modules are validated all the same.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from jitfix.config import DEFAULT_VALIDATE_TIMEOUT
from jitfix.validate.process import accelerator_in_reach, default_memory_limit, environment, run
from jitfix.validate.targets import Target, module_identity, plan_targets


@dataclass
class FunctionResult:
    function: str
    line: int
    status: str  # "passed", "failed" or "skipped"
    inputs: int = 0
    reached: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)
    before: str | None = None  # the original under jit: its error, or how it differed
    failure: dict | None = None  # input, reason, expected
    reason: str | None = None  # why skipped
    notes: list[str] = field(default_factory=list)
    tolerances: dict[str, float] = field(default_factory=dict)

    @property
    def branches(self) -> str:
        total = len(self.reached) + len(self.missed)
        return f"{len(self.reached)}/{total}"

    def summary(self) -> str:
        """``passed (4 inputs, branches 2/2)``, ``failed (...)``, ``skipped (...)``."""
        return f"{self.status} ({self.outcome()})"

    def outcome(self) -> str:
        """What the summary says in brackets after the status."""
        if self.status == "skipped":
            return self.reason or ""
        counts = f"{self.inputs} input{'s' if self.inputs != 1 else ''}"
        if self.reached or self.missed:
            counts += f", branches {self.branches}"
        if self.status == "passed":
            return counts
        failure = self.failure or {}
        where = f"{self.function}{failure['input']}: " if failure.get("input") else ""
        return f"{where}{failure.get('reason', '')}"  # (the reason shows both sides of what differs)

    def to_json(self) -> dict:
        return {
            "function": self.function, "line": self.line, "status": self.status, "inputs": self.inputs,
            "branches": {"reached": self.reached, "missed": self.missed}, "sources": self.sources,
            "before": self.before, "failure": self.failure, "reason": self.reason, "notes": self.notes,
            "tolerances": self.tolerances,
        }

    @classmethod
    def from_child(cls, record: dict) -> FunctionResult:
        coverage = record.get("coverage", {})
        return cls(function=record["function"], line=record["line"], status=record["status"],
                   inputs=record.get("inputs", 0), reached=coverage.get("reached", []),
                   missed=coverage.get("missed", []), sources=record.get("sources", {}),
                   before=record.get("before"), failure=record.get("failure"), reason=record.get("reason"),
                   notes=record.get("notes", []), tolerances=record.get("tolerances", {}))


@dataclass
class ModuleResult:
    path: str
    functions: list[FunctionResult] = field(default_factory=list)
    error: str | None = None  # the module could not be validated at all
    seconds: float = 0.0
    output: str = ""  # what the user's code printed (shown under --verbose)
    backend: str = ""  # the platform the child ran on (`cpu`, `gpu`, `tpu`)

    @property
    def failed(self) -> list[FunctionResult]:
        return [f for f in self.functions if f.status == "failed"]

    def to_json(self) -> dict:
        return {"path": self.path, "error": self.error, "seconds": round(self.seconds, 3), "backend": self.backend,
                "functions": [f.to_json() for f in self.functions]}


@dataclass(frozen=True)
class ValidationOptions:
    examples: str | None = None  # a Python file defining EXAMPLES
    recorded: str | None = None  # a folder of calls recorded by --record
    timeout: float = DEFAULT_VALIDATE_TIMEOUT
    jobs: int = 1
    seed: int = 0
    pass_env: tuple[str, ...] = ()  # environment variables passed on to the user's code
    memory_limit: int | None = field(default_factory=lambda: default_memory_limit())
    allow_unvalidated: bool = False  # fix --validate: also write what could not be validated


@dataclass
class ModuleJob:
    path: str
    old_text: str
    new_text: str
    finding_lines: dict[int, str]  # line of the original -> code of the rule that rewrote it


def _job_document(job: ModuleJob, targets: list[Target], options: ValidationOptions) -> dict:
    module, package, root = module_identity(job.path)
    filename = str(Path(job.path).resolve()) if Path(job.path).is_file() else job.path
    return {
        "path": job.path, "module": module, "package": package, "root": root,
        "old_filename": filename, "new_filename": f"{filename} (rewritten by jitfix)",
        "old_text": job.old_text, "new_text": job.new_text,
        "targets": [target.to_json() for target in targets if target.skip is None],
        "examples": options.examples, "recorded": options.recorded, "seed": options.seed,
    }


# Targets are planned one module at a time: `ast.parse` in two threads at once can fail in
# CPython 3.11 ("AST constructor recursion depth mismatch": the depth it counts is shared), and
# the analysis holds the GIL anyway. Only the child processes run side by side.
_PLANNING = threading.Lock()


def validate_module(job: ModuleJob, options: ValidationOptions) -> ModuleResult:
    started = time.perf_counter()
    result = ModuleResult(job.path)
    try:
        with _PLANNING:
            targets = plan_targets(job.old_text, job.new_text, job.finding_lines, path=job.path)
    except SyntaxError as error:
        result.error = f"cannot parse: {error.msg} (line {error.lineno})"
        return result
    skipped = [FunctionResult(t.name, t.line, "skipped", reason=t.skip) for t in targets if t.skip]
    if not any(target.skip is None for target in targets):
        result.functions = skipped
        return result
    with tempfile.TemporaryDirectory(prefix="jitfix-validate-") as folder:
        job_file, result_file = Path(folder, "job.json"), Path(folder, "result.json")
        job_file.write_text(json.dumps(_job_document(job, targets, options)), encoding="utf-8")
        command = [sys.executable, "-m", "jitfix.validate.child", str(job_file), str(result_file)]
        process = run(command, timeout=options.timeout, env=environment(_jitfix_path(), options.pass_env),
                      memory_limit=options.memory_limit)
        result.output = process.stdout + process.stderr
        if process.returncode is None:
            result.error = f"timed out after {options.timeout:g} s (raise it with --validate-timeout)"
            result.seconds = time.perf_counter() - started
            return result
        result.seconds = time.perf_counter() - started
        if not result_file.is_file():
            last = process.stderr.strip().splitlines()[-1:] or [""]
            result.error = f"the validation process crashed (exit code {process.returncode}) {last[0]}".strip()
            return result
        document = json.loads(result_file.read_text(encoding="utf-8"))
    if document.get("error"):
        result.error = document["error"]
        result.output += document.get("traceback", "")
        return result
    result.backend = document.get("backend", "")
    by_name = {record["function"]: FunctionResult.from_child(record) for record in document["functions"]}
    result.functions = sorted(skipped + list(by_name.values()), key=lambda f: f.line)
    return result


def platforms_of(modules: list[ModuleResult]) -> str:
    """`cpu` (or `tpu`, `cpu and tpu`): the platforms the validation children ran on."""
    return " and ".join(sorted({module.backend for module in modules if module.backend}))


def _jitfix_path() -> dict[str, str]:
    """The child runs ``python -m jitfix.validate.child``: jitfix must be importable there."""
    import jitfix

    here = str(Path(jitfix.__file__).resolve().parents[1])
    paths = [here, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def validate_modules(jobs: list[ModuleJob], options: ValidationOptions) -> list[ModuleResult]:
    """Each module in its own process, ``options.jobs`` at a time (one at a time where an
    accelerator is in reach: each child would hold it); results in the jobs' order."""
    if not jobs:
        return []
    workers = 1 if accelerator_in_reach() else max(1, min(options.jobs, len(jobs)))  # one holds the device
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda job: validate_module(job, options), jobs))
