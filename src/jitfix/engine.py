"""Run the rules over files: decide cheaply, edit only what changes, never emit broken code.

Per file: a text prefilter (no mention of jax: nothing to do) -> stdlib ``ast`` parse ->
find traced functions -> rules yield findings (and fixes as position-targeted edits) ->
only if a fix is to be applied: libcst parse, apply the edits, add imports -> re-parse
the result. Fixes are applied until nothing more changes, so ``fix`` is idempotent.
Many files run in parallel worker processes.
"""

from __future__ import annotations

import ast
import difflib
import multiprocessing
import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider

from jitfix.analysis.imports import ImportTable
from jitfix.analysis.traced import find_traced_functions
from jitfix.config import Settings
from jitfix.files import InputError, SourceFile, decode_source, read_source
from jitfix.findings import Edit, EditContext, EditError, Finding, Replacement, Safety
from jitfix.rules import selected_rules
from jitfix.rules.base import ModuleContext
from jitfix.suppress import all_functions, filter_suppressed

# Words a file must contain to possibly hold traced code.
PREFILTER_WORDS = ("jax", "equinox")
MAX_FIX_ROUNDS = 8
# How a missing import is added, for paths that read better imported by name.
PREFERRED_IMPORTS = {
    "jax.lax": ("jax", "lax"),
    "functools.partial": ("functools", "partial"),
}
# Modules imported under their conventional alias when the module lacks them.
ALIASED_IMPORTS = {"jax.numpy": "jnp"}


@dataclass(frozen=True)
class Options:
    apply_fixes: bool = False  # compute the fixed text (fix, diff)
    fix_diffs: bool = False  # attach each finding's own fix as a diff (json, sarif)
    unsafe_fixes: bool = False
    # Functions (top-level names) whose rewrites are held back: validation found them wrong.
    hold: frozenset[str] = frozenset()


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)  # left in the final text
    fixed: list[Finding] = field(default_factory=list)  # fixed by new_text
    source: SourceFile | None = None
    new_text: str | None = None
    error: InputError | None = None
    internal_error: str | None = None
    parsed: bool = False
    # Lines of the original the first round of fixes rewrote, with the rule's code.
    rewritten_lines: dict[int, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.new_text is not None and self.source is not None and self.new_text != self.source.text


class InternalError(Exception):
    """A rule produced code that does not parse; the file is left as it was."""


def _mentions_jax(text: str) -> bool:
    return any(word in text for word in PREFILTER_WORDS)


def analyse(path: str, text: str, settings: Settings) -> tuple[list[Finding], ast.Module | None]:
    """Findings for one module's text (suppressions applied). Raises InputError on bad syntax."""
    if not _mentions_jax(text):
        return [], None
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        raise InputError(path, f"syntax error: {error.msg}", line=error.lineno, col=error.offset) from None
    except ValueError as error:  # e.g. source with NUL bytes
        raise InputError(path, f"cannot parse: {error}") from None
    imports = ImportTable(tree)
    if not (imports.mentions("jax") or imports.mentions("equinox")):
        return [], tree
    traced = find_traced_functions(tree, imports)
    if not traced:
        return [], tree
    module = ModuleContext(path, text, tree, imports, traced, settings)
    findings: list[Finding] = []
    for rule in selected_rules(lambda code: settings.is_enabled(code, path)):
        findings.extend(rule.check(module))
    if findings:
        findings = filter_suppressed(findings, text, all_functions(tree))
    findings.sort(key=Finding.sort_key)
    return findings, tree


def _combined(edits: list[Edit]) -> dict[tuple, Edit]:
    """One edit per node: duplicates (the same fix reached twice) collapse, and edits that
    know how to merge (one per finding, of one function) are merged. Edits of one node by
    different rules do not mix: the first rule's is applied, the others are found again on
    the next round, against the rewritten code."""
    grouped: dict[tuple, list[Edit]] = {}
    for edit in edits:
        end = (edit.end.line, edit.end.col) if edit.end else None
        grouped.setdefault((edit.start.line, edit.start.col, edit.node_type, end), []).append(edit)
    combined: dict[tuple, Edit] = {}
    for key, group in grouped.items():
        kind = type(group[0].replace)
        same = [edit for edit in group if type(edit.replace) is kind]
        combined[key] = same[0].merge(same) if same[0].merge and len(same) > 1 else same[-1]
    return combined


class _ApplyEdits(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, edits: list[Edit], context: EditContext):
        super().__init__()
        self.pending = _combined(edits)
        self.types = tuple({edit.node_type for edit in edits})
        self.context = context

    def _anchor(self, original: cst.CSTNode):
        # A def is found by its name: the node itself starts at its first decorator.
        anchor = original.name if isinstance(original, cst.FunctionDef) else original
        return self.get_metadata(PositionProvider, anchor)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        if isinstance(original, self.types):
            where = self._anchor(original)
            start, end = where.start, where.end
            key = (start.line, start.column, type(original))
            edit = self.pending.pop((*key, (end.line, end.column)), None) or self.pending.pop((*key, None), None)
            if edit is not None:
                self.context.column = self.get_metadata(PositionProvider, original).start.column
                return edit.replace(updated, self.context)
        return updated


def _direct_alias(imports: ImportTable, module: str) -> str | None:
    """The name the module is imported under itself (``lax``), not reached through a parent."""
    local = imports.local_name(module)
    return local if local is not None and "." not in local else None


def _spelling(imports: ImportTable, dotted: str, context: CodemodContext) -> str:
    """How one path is spelled, adding the import the module lacks: ``jax.lax`` and
    ``jax.numpy`` read best under their conventional names (``lax.cond``, ``jnp.where``)."""
    for module, (parent, name) in PREFERRED_IMPORTS.items():
        if dotted == module or dotted.startswith(module + "."):
            local = _direct_alias(imports, module)
            if local is None and name not in imports.aliases:
                AddImportsVisitor.add_needed_import(context, parent, name)
                local = name
            if local is not None:
                return local + dotted[len(module):]
    for module, alias in ALIASED_IMPORTS.items():
        if dotted == module or dotted.startswith(module + "."):
            local = _direct_alias(imports, module)
            if local is None and alias not in imports.aliases:
                AddImportsVisitor.add_needed_import(context, module, asname=alias)
                local = alias
            if local is not None:
                return local + dotted[len(module):]
    local = imports.local_name(dotted)
    if local is not None:
        return local
    AddImportsVisitor.add_needed_import(context, dotted.split(".")[0])
    return dotted


def _spellings(imports: ImportTable, needed: Iterable[str], context: CodemodContext) -> dict[str, str]:
    """How each needed path is spelled, adding the imports the module lacks."""
    return {dotted: _spelling(imports, dotted, context) for dotted in needed}


def apply_edits(text: str, edits: list[Edit], imports: ImportTable) -> str:
    module = cst.parse_module(text)
    context = CodemodContext()
    needed = dict.fromkeys(path for edit in edits for path in edit.imports)
    edit_context = EditContext(_spellings(imports, needed, context))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    transformer = _ApplyEdits(edits, edit_context)
    try:
        module = wrapper.visit(transformer)
    except EditError as error:
        raise InternalError(f"could not apply a fix: {error}") from None
    if transformer.pending:
        missing = ", ".join(f"{line}:{col}" for line, col, _, _ in transformer.pending)
        raise InternalError(f"could not locate the code to edit at {missing}")
    if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        module = AddImportsVisitor(context).transform_module(module)
    return module.code


def _held(finding: Finding, options: Options) -> bool:
    return finding.function is not None and finding.function.split(".")[0] in options.hold


def _applicable(findings: list[Finding], options: Options) -> list[Finding]:
    return [
        finding for finding in findings
        if finding.fix is not None and finding.fix.edits
        and (finding.fix.safety is Safety.SAFE or options.unsafe_fixes)
        and not _held(finding, options)
    ]


def _checked(path: str, new_text: str, codes: Iterable[str]) -> str:
    try:
        ast.parse(new_text)
    except SyntaxError as error:
        rules = ", ".join(sorted(set(codes)))
        raise InternalError(f"fix by {rules} produced code that does not parse ({error.msg}, line {error.lineno})")
    return new_text


def unified_diff(path: str, old: str, new: str) -> str:
    """A git-style unified diff (``--- a/path`` / ``+++ b/path``)."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    for lines in (old_lines, new_lines):
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n\\ No newline at end of file\n"
    name = path.lstrip("./") if path != "-" else "-"
    return "".join(difflib.unified_diff(old_lines, new_lines, fromfile=f"a/{name}", tofile=f"b/{name}"))


def replacements(old: str, new: str) -> list[Replacement]:
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    return [
        Replacement(start_line=i1 + 1, end_line=i2 + 1, text="".join(new_lines[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _attach_fix_diffs(path: str, text: str, tree: ast.Module, findings: list[Finding]) -> None:
    imports = ImportTable(tree)
    for finding in findings:
        if finding.fix is None or not finding.fix.edits:
            continue
        fixed = _checked(path, apply_edits(text, finding.fix.edits, imports), [finding.code])
        finding.fix.diff = unified_diff(path, text, fixed)
        finding.fix.replacements = replacements(text, fixed)


def process_text(path: str, text: str, settings: Settings, options: Options) -> FileResult:
    """Everything for one module's text. Raises InputError for input that cannot be read."""
    result = FileResult(path=path)
    findings, tree = analyse(path, text, settings)
    result.parsed = tree is not None
    if options.fix_diffs and tree is not None:
        _attach_fix_diffs(path, text, tree, findings)
    if not options.apply_fixes:
        result.findings = findings
        return result
    current = text
    for _ in range(MAX_FIX_ROUNDS):
        to_apply = _applicable(findings, options)
        if not to_apply or tree is None:
            break
        edits = [edit for finding in to_apply for edit in finding.fix.edits]
        current = _checked(path, apply_edits(current, edits, ImportTable(tree)), [f.code for f in to_apply])
        if not result.fixed:
            result.rewritten_lines = {finding.line: finding.code for finding in to_apply}
        result.fixed.extend(to_apply)
        findings, tree = analyse(path, current, settings)
    result.findings = findings
    result.new_text = current
    return result


def process_source(source: SourceFile, settings: Settings, options: Options) -> FileResult:
    try:
        result = process_text(source.path, source.text, settings, options)
    except InputError as error:
        return FileResult(path=source.path, source=source, error=error)
    except InternalError as error:
        return FileResult(path=source.path, source=source, internal_error=str(error))
    result.source = source
    return result


def process_path(path: str, settings: Settings, options: Options) -> FileResult:
    try:
        source = read_source(path)
    except InputError as error:
        return FileResult(path=path, error=error)
    result = process_source(source, settings, options)
    return _portable(result)


def process_bytes(path: str, data: bytes, settings: Settings, options: Options) -> FileResult:
    try:
        source = decode_source(data, path)
    except InputError as error:
        return FileResult(path=path, error=error)
    return process_source(source, settings, options)


def _portable(result: FileResult) -> FileResult:
    """Strip the edit callbacks so the result can be sent back from a worker process."""
    result.findings = [finding.without_edits() for finding in result.findings]
    result.fixed = [finding.without_edits() for finding in result.fixed]
    return result


# -- many files --------------------------------------------------------------------------------

_worker_state: tuple[Settings, Options] | None = None


def _init_worker(settings: Settings, options: Options) -> None:
    global _worker_state
    _worker_state = (settings, options)


def _work(path: str) -> FileResult:
    assert _worker_state is not None
    settings, options = _worker_state
    return process_path(path, settings, options)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _start_method() -> str:
    """fork is fastest, but unsafe once a threaded library such as JAX is loaded (jitfix
    itself never imports it; a program embedding jitfix may have)."""
    if not hasattr(os, "fork"):
        return "spawn"
    return "forkserver" if "jax" in sys.modules else "fork"


def run_paths(
    paths: list[str],
    settings: Settings,
    options: Options,
    jobs: int | None = None,
) -> Iterator[FileResult]:
    """Process files, in parallel when there are enough to pay for the workers."""
    jobs = max(1, jobs or default_jobs())
    if jobs == 1 or len(paths) < 2 * jobs:
        for path in paths:
            yield process_path(path, settings, options)
        return
    context = multiprocessing.get_context(_start_method())
    chunksize = max(1, min(16, len(paths) // (jobs * 8)))
    with context.Pool(jobs, initializer=_init_worker, initargs=(settings, options)) as pool:
        yield from pool.imap(_work, paths, chunksize=chunksize)
