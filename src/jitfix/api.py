"""What the command line and the language server both do, with no printing: process paths
(or one document's text), write the fixes, add ignore comments, validate. Problems come back
as values (:class:`InputError`, messages) for the caller to show its own way."""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jitfix.analysis.project import Project
from jitfix.cache import Cache
from jitfix.config import Settings
from jitfix.engine import (
    FileResult,
    Options,
    analyse,
    attach_fix_diffs,
    process_bytes,
    process_source,
    run_paths,
)
from jitfix.files import InputError, SourceFile, discover, read_source, remove_stale_temporaries, write_source
from jitfix.findings import Finding, Safety
from jitfix.suppress import add_ignores

if TYPE_CHECKING:  # validation is loaded only when asked for
    from jitfix.validate.runner import ValidationOptions
    from jitfix.validate.session import ValidationRun


@dataclass
class Results:
    files: list[FileResult]
    stdin: FileResult | None = None  # code read from "-"
    unfound: list[InputError] = field(default_factory=list)  # paths that named nothing to process

    @property
    def all(self) -> list[FileResult]:
        return ([self.stdin] if self.stdin else []) + self.files

    @property
    def failed(self) -> int:
        return len(self.unfound) + sum(1 for r in self.all if r.error is not None or r.internal_error is not None)

    @property
    def internal_failure(self) -> bool:
        """Whether jitfix itself failed on a file (a bug), not on input it could not take."""
        return any(r.internal_error is not None for r in self.all)

    def findings(self) -> list[Finding]:
        return sorted((f for result in self.all for f in result.findings), key=Finding.sort_key)

    def changed(self) -> list[FileResult]:
        return [result for result in self.all if result.changed]

    def findings_as_read(self) -> list[Finding]:
        """The findings left by the fixes, at the lines of each file as it was read: what a
        dry run (``diff``) reports, since the file on disk is not changed."""
        return sorted((f for result in self.all for f in _at_lines_read(result)), key=Finding.sort_key)


def _at_lines_read(result: FileResult) -> list[Finding]:
    """A result's findings (in its fixed text) moved to the lines of the text it was read
    as: a line the fixes kept is found where it was; one they wrote, at the start of what
    they replaced. (A notebook's findings are placed in their cells: left as they are.)"""
    if not result.changed or result.source is None or result.new_text is None \
            or any(finding.cell is not None for finding in result.findings):
        return result.findings
    read, fixed = result.source.text.split("\n"), result.new_text.split("\n")
    where: dict[int, int] = {}  # line of the fixed text -> line as read (both 1-based)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=read, b=fixed, autojunk=False).get_opcodes():
        for offset, line in enumerate(range(j1, j2)):
            where[line + 1] = (i1 + offset if tag == "equal" else i1) + 1

    def moved(finding: Finding) -> Finding:
        line, end_line = where.get(finding.line, finding.line), where.get(finding.end_line, finding.end_line)
        return replace(finding, line=line, end_line=max(line, end_line))

    return [moved(finding) for finding in result.findings]


def files_to_process(paths: list[str], settings: Settings) -> tuple[list[str], list[InputError]]:
    """The files a run over ``paths`` reads ("-" aside), and the paths that name none."""
    return discover([p for p in paths if p != "-"], settings.exclude, settings.respect_gitignore,
                    settings.force_exclude)


def process(paths: list[str], settings: Settings, options: Options, *, jobs: int | None = None,
            use_cache: bool = True, stdin: bytes | None = None, stdin_name: str | None = None,
            started: Callable[[int], None] | None = None, finished: Callable[[FileResult], None] | None = None,
            ) -> Results:
    """Process every path (a file's error is in its result; the other files are still
    processed). ``started`` hears how many files there are, ``finished`` each as it is done."""
    files, unfound = files_to_process(paths, settings)
    stdin_result = None
    if "-" in paths:
        stdin_result = process_bytes(stdin_name or "-", stdin or b"", settings, options)
    if started is not None:
        started(len(files))
    # Next to the pyproject.toml that configures the run, else in the working folder.
    cache_root = str(Path(settings.config_path).parent) if settings.config_path else "."
    cache = Cache.at(cache_root, settings, options) if use_cache else None
    results = list(run_paths(files, settings, options, jobs, cache, finished))
    return Results(results, stdin_result, unfound)


@dataclass
class Written:
    files: list[FileResult] = field(default_factory=list)  # written with their fixes
    errors: list[InputError] = field(default_factory=list)  # could not be written


def write_fixes(results: Results) -> Written:
    """Write every changed file in place (atomically; a file changed since it was read is
    not overwritten: that is an error of its own)."""
    written = Written()
    cleaned: set[Path] = set()
    for result in results.files:
        if not result.changed:
            continue
        folder = Path(result.path).resolve().parent
        if folder not in cleaned:
            remove_stale_temporaries(folder)
            cleaned.add(folder)
        assert result.source is not None and result.new_text is not None  # it changed
        try:
            write_source(result.source, result.new_text)
        except InputError as error:
            written.errors.append(error)
            continue
        written.files.append(result)
    return written


@dataclass
class IgnoresAdded:
    comments: int = 0
    files: int = 0
    problems: list[str] = field(default_factory=list)  # one line each, naming the file


def _left_by_fix(finding: Finding) -> bool:
    """What `jitfix fix` does not fix: no fix, or one that is unsafe."""
    return finding.fix is None or finding.fix.safety is Safety.UNSAFE


def add_ignore_comments(results: Results, settings: Settings) -> IgnoresAdded:
    """Suppress in place every finding `jitfix fix` leaves (no fix, or an unsafe one);
    ``results`` keep only what is left."""
    outcome = IgnoresAdded()
    for result in results.files:
        manual = [finding for finding in result.findings if _left_by_fix(finding)]
        if not manual:
            continue
        if result.path.endswith(".ipynb"):
            outcome.problems.append(f"{result.path}: ignore comments are not added to notebooks; add them in the cells")
            continue
        try:
            result.source = result.source or read_source(result.path)  # workers do not send it back
        except InputError as error:
            outcome.problems.append(error.describe())
            continue
        new_text, skipped = add_ignores(result.source.text, manual)
        try:
            after, _ = analyse(result.path, new_text, settings)
        except InputError:
            after = None
        if after is None or any(_left_by_fix(f) for f in after if f not in skipped and _same_place(f, manual)):
            outcome.problems.append(f"{result.path}: could not add ignore comments; the file was left unchanged")
            continue
        try:
            write_source(result.source, new_text)
        except InputError as error:
            outcome.problems.append(error.describe())
            continue
        outcome.comments += len(manual) - len(skipped)
        outcome.files += 1
        result.findings = after
    return outcome


def _same_place(finding: Finding, others: list[Finding]) -> bool:
    return any((finding.code, finding.line) == (other.code, other.line) for other in others)


def validate(results: Results, settings: Settings, options: Options, validation: ValidationOptions,
             record: str | None) -> ValidationRun:
    """Validate every changed file, holding back (in ``results``) the rewrites that fail."""
    from jitfix.validate.session import validate_results

    return validate_results(results.files, settings, options, validation, record)


def validate_paths(paths: list[str], settings: Settings, validation: ValidationOptions, record: str | None, *,
                   jobs: int | None = None, use_cache: bool = True) -> ValidationRun:
    """What ``check --validate`` proves without writing: the fixes ``fix`` would make to
    ``paths``, each rewritten function run before and after."""
    options = Options(apply_fixes=True)
    return validate(process(paths, settings, options, jobs=jobs, use_cache=use_cache), settings, options,
                    validation, record)


def validate_versions(old_path: str, old_text: str, new_text: str, settings: Settings,
                      validation: ValidationOptions, record: str | None) -> ValidationRun:
    """Validate a rewrite made elsewhere: every function that differs between two texts of
    one module. Raises InputError when the original cannot be analysed."""
    from jitfix.validate.runner import ModuleJob
    from jitfix.validate.session import validate_jobs

    findings, _ = analyse(old_path, old_text, settings)
    job = ModuleJob(old_path, old_text, new_text, {finding.line: finding.code for finding in findings})
    return validate_jobs([job], validation, record)


def check_document(path: str, text: str, settings: Settings, project: Project | None = None) -> FileResult:
    """One document's findings (an editor's view of a file it holds, saved or not); calls
    into the other files of ``project`` are followed. A finding's fix is made as text only
    when asked (``render_fixes``): making each one's text takes far longer than finding them."""
    return process_source(_document(path, text), settings, Options(), project)


def render_fixes(path: str, text: str, findings: list[Finding]) -> None:
    """Give each of ``findings`` (of ``text``) that has a fix not yet made as text its diff
    and line replacements; a fix that cannot be made is dropped and its finding says so."""
    wanted = [finding for finding in findings
              if finding.fix is not None and finding.fix.edits and finding.fix.diff is None]
    if wanted:
        attach_fix_diffs(path, text, ast.parse(text, filename=path), wanted)


def fix_document(path: str, text: str, settings: Settings, unsafe_fixes: bool = False,
                 project: Project | None = None) -> FileResult:
    """One document with every fix applied (``new_text``) and the findings left in it."""
    options = Options(apply_fixes=True, unsafe_fixes=unsafe_fixes)
    return process_source(_document(path, text), settings, options, project)


def _document(path: str, text: str) -> SourceFile:
    return SourceFile(path=path, text=text, encoding="utf-8", bom=False, digest="")  # never written


def diff_stat(patch: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff."""
    lines = patch.split("\n")
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return added, removed
