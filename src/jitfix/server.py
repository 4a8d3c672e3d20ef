"""``jitfix server``: the Language Server Protocol over stdio, for editors.

Diagnostics are published when a document opens, changes (debounced: after the typing
stops) and is saved; each fix is a quick-fix code action (safe ones preferred, unsafe ones
say so), made as text only when the editor asks for the actions at its place (making every
finding's fix took a minute on a long module), "Fix all jitfix problems" is a
``source.fixAll`` action, and hovering a finding shows its rule's documentation. Settings
are the [tool.jitfix] table of the document's nearest pyproject.toml, with the client's
``initializationOptions`` (or a ``workspace/didChangeConfiguration`` of ``{"jitfix":
{...}}``) over it: the same keys, plus ``unsafe-fixes`` (offer unsafe fixes in "fix all")
and ``debounce-ms``.

Calls into the workspace's other modules are followed as on the command line; the document
itself is analysed as the editor holds it, saved or not.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from jitfix import __version__, api
from jitfix.analysis.project import Project
from jitfix.config import Settings
from jitfix.pyproject import ConfigError, load_settings, with_table
from jitfix.engine import FileResult, Superseded, superseded
from jitfix.findings import Finding, Replacement, Safety

FIX_ALL = "source.fixAll.jitfix"
DEFAULT_DEBOUNCE_MS = 300
CLIENT_ONLY_OPTIONS = ("unsafe-fixes", "debounce-ms")  # not [tool.jitfix] options

log = logging.getLogger(__name__)


@dataclass
class Analysed:
    """A document's result, for the version of it that was analysed."""

    version: int | None
    text: str
    result: FileResult


@dataclass
class ClientOptions:
    table: dict = field(default_factory=dict)  # [tool.jitfix] keys, over each pyproject's
    unsafe_fixes: bool = False
    debounce: float = DEFAULT_DEBOUNCE_MS / 1000

    @classmethod
    def read(cls, options: object) -> ClientOptions:
        if not isinstance(options, dict):
            return cls()
        options = options.get("jitfix", options)  # {"jitfix": {...}} or the table itself
        if not isinstance(options, dict):
            return cls()
        table = {key: value for key, value in options.items() if key not in CLIENT_ONLY_OPTIONS}
        debounce = options.get("debounce-ms", DEFAULT_DEBOUNCE_MS)
        if isinstance(debounce, bool) or not isinstance(debounce, (int, float)) or debounce < 0:
            debounce = DEFAULT_DEBOUNCE_MS
        return cls(table, bool(options.get("unsafe-fixes", False)), debounce / 1000)


class JitfixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("jitfix", __version__)
        self.options = ClientOptions()
        self.analysed: dict[str, Analysed] = {}
        self.pending: dict[str, asyncio.Task] = {}
        # Per settings root: the workspace's modules, and what the analysis read of them (the
        # programs of the modules a document calls into), kept until a file is saved.
        self._projects: dict[str, Project] = {}
        self._analysing = threading.Lock()  # one analysis at a time: they share the projects

    # -- settings and analysis -----------------------------------------------------------------

    def settings_for(self, path: str) -> Settings:
        """The document's [tool.jitfix], with the client's options over it. A configuration
        error is shown to the user and the defaults are used."""
        folder = Path(path).parent if path else Path(".")
        try:
            settings = load_settings(folder if folder.exists() else Path("."))
            return with_table(settings, self.options.table, "initializationOptions", Path(settings.root))
        except ConfigError as error:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                             f"jitfix: configuration error: {error}"))
            return Settings()

    def project_for(self, settings: Settings) -> Project:
        """The workspace's Python files, for following calls into the other modules, with
        what was read of them: made once per configuration root, and anew once a file is
        saved (the others are read as saved; the document itself as the editor holds it)."""
        root = settings.root
        if root not in self._projects:
            files, _ = api.files_to_process([root], settings)
            self._projects[root] = Project(files, settings.max_file_bytes)
        return self._projects[root]

    def forget_projects(self) -> None:
        with self._analysing:
            self._projects.clear()

    def analyse(self, document: TextDocument) -> Analysed:
        """The document's findings, their fixes not yet made as text (``quick_fixes`` makes
        those the editor asks for). Raises ``Superseded`` as soon as a newer version of the
        document has arrived: that version's analysis publishes."""
        path = document.path
        settings = self.settings_for(path)
        uri, version = document.uri, document.version
        token = superseded.set(lambda: version is not None and self.version_of(uri) != version)
        try:
            with self._analysing:
                project = self.project_for(settings)
                try:
                    result = api.check_document(path, document.source, settings, project)
                finally:
                    project.forget_notes()
        finally:
            superseded.reset(token)
        return Analysed(document.version, document.source, result)

    def version_of(self, uri: str) -> int | None:
        document = self.workspace.text_documents.get(uri)
        return document.version if document is not None else None

    def current(self, uri: str) -> Analysed:
        """The analysis of the document as it is now (made now if it is out of date)."""
        document = self.workspace.get_text_document(uri)
        known = self.analysed.get(uri)
        if known is None or known.version != document.version or known.text != document.source:
            known = self.analysed[uri] = self.analyse(document)
        return known

    async def refresh(self, uri: str, delay: float) -> None:
        """Analyse after ``delay`` (a newer change cancels this one) and publish."""
        await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        with collector_paused():
            try:
                analysed = await asyncio.to_thread(self.analyse, document)
            except Superseded:
                return  # typed on meanwhile: the newer change publishes
        latest = self.workspace.get_text_document(uri)
        if latest.version != analysed.version:
            return  # typed on meanwhile: the newer change publishes
        self.analysed[uri] = analysed
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=analysed.version, diagnostics=diagnostics(latest, analysed.result)))

    def schedule(self, uri: str, delay: float) -> None:
        earlier = self.pending.pop(uri, None)
        if earlier is not None:
            earlier.cancel()
        task = asyncio.get_running_loop().create_task(self.refresh(uri, delay))
        self.pending[uri] = task
        task.add_done_callback(lambda done: self._finished(uri, done))

    def _finished(self, uri: str, task: asyncio.Task) -> None:
        if self.pending.get(uri) is task:
            del self.pending[uri]
        if not task.cancelled() and task.exception() is not None:
            log.error("jitfix could not analyse %s: %r", uri, task.exception())


_paused = 0  # analyses running with the cycle collector paused
IDLE_COLLECTION_S = 1.0  # after the last analysis, the collector runs if none has started since


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a document is analysed, and run when the server
    has been idle a moment: run during an analysis (which makes many objects and frees them
    at its end), it took a fifth of the time an edit's diagnostics wait for. Only the
    server's event loop enters this, so the count needs no lock."""
    global _paused
    _paused += 1
    gc.disable()
    try:
        yield
    finally:
        _paused -= 1
        if not _paused:
            gc.enable()
            asyncio.get_running_loop().call_later(IDLE_COLLECTION_S, _collect_if_idle)


def _collect_if_idle() -> None:
    if not _paused:
        gc.collect()


# -- what the editor shows ----------------------------------------------------------------------

# The last text split into lines: pygls's ``TextDocument.lines`` splits the whole text on
# every access, which its conversions of positions make (330 findings: 330 splits).
_last_split: tuple[str, Sequence[str]] = ("", ())


def _lines_of(document: TextDocument) -> Sequence[str]:
    global _last_split
    source = document.source
    if _last_split[0] is not source:
        _last_split = (source, document.lines)
    return _last_split[1]


def _range(document: TextDocument, line: int, col: int, end_line: int, end_col: int) -> types.Range:
    """A range from 1-based lines and columns in characters, in the client's units."""
    server = ServerTextRange(ServerTextPosition(max(line - 1, 0), max(col - 1, 0)),
                             ServerTextPosition(max(end_line - 1, 0), max(end_col - 1, 0)))
    return document.position_codec.range_to_client_units(_lines_of(document), server)


def finding_range(document: TextDocument, finding: Finding) -> types.Range:
    return _range(document, finding.line, finding.col, finding.end_line, finding.end_col)


def diagnostics(document: TextDocument, result: FileResult) -> list[types.Diagnostic]:
    if result.error is not None:  # a syntax error: shown where it is, never a crash
        line = result.error.line or 1
        col = result.error.col or 1
        return [types.Diagnostic(range=_range(document, line, col, line, col + 1), message=result.error.message,
                                 severity=types.DiagnosticSeverity.Error, source="jitfix")]
    if result.internal_error is not None:
        return [types.Diagnostic(range=_range(document, 1, 1, 1, 1), severity=types.DiagnosticSeverity.Error,
                                 source="jitfix",
                                 message=f"jitfix internal error: {result.internal_error}. Please report this.")]
    return [diagnostic(document, finding) for finding in result.findings]


def diagnostic(document: TextDocument, finding: Finding) -> types.Diagnostic:
    return types.Diagnostic(
        range=finding_range(document, finding), message=finding.message, severity=types.DiagnosticSeverity.Warning,
        code=finding.code, source="jitfix", data={"fixable": finding.fix is not None})


def text_edits(document: TextDocument, replacements: list[Replacement]) -> list[types.TextEdit]:
    """Line replacements (1-based, end exclusive) as LSP edits; the line after the last one
    is the end of the document."""
    return [types.TextEdit(range=types.Range(_line_start(document, part.start_line),
                                             _line_start(document, part.end_line)), new_text=part.text)
            for part in replacements]


def _line_start(document: TextDocument, line: int) -> types.Position:
    lines = _lines_of(document)
    if line - 1 < len(lines):
        return types.Position(line=line - 1, character=0)
    if lines and not lines[-1].endswith(("\n", "\r")):  # no final newline: the end of the last line
        last = ServerTextPosition(len(lines) - 1, len(lines[-1]))
        return document.position_codec.position_to_client_units(lines, last)
    return types.Position(line=len(lines), character=0)


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(position: types.Position) -> tuple[int, int]:
        return position.line, position.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def quick_fixes(document: TextDocument, uri: str, analysed: Analysed, wanted: types.Range) -> list[types.CodeAction]:
    """The fixes of the findings in ``wanted``, made as text now (once per version: they are
    kept on the findings of the analysis)."""
    shown = [finding for finding in analysed.result.findings
             if finding.fix is not None and _overlaps(finding_range(document, finding), wanted)]
    api.render_fixes(document.path, analysed.text, shown)
    actions = []
    for finding in shown:
        if finding.fix is None or not finding.fix.replacements:
            continue
        safe = finding.fix.safety is Safety.SAFE
        actions.append(types.CodeAction(
            title=f"{'Fix' if safe else 'Unsafe fix'} {finding.code}: {finding.fix.description}",
            kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic(document, finding)], is_preferred=safe,
            edit=types.WorkspaceEdit(changes={uri: text_edits(document, finding.fix.replacements)})))
    return actions


server = JitfixServer()


@server.feature(types.INITIALIZE)
def initialize(ls: JitfixServer, params: types.InitializeParams) -> None:
    ls.options = ClientOptions.read(params.initialization_options)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def configuration_changed(ls: JitfixServer, params: types.DidChangeConfigurationParams) -> None:
    if isinstance(params.settings, dict) and params.settings:
        ls.options = ClientOptions.read(params.settings)
    ls.analysed.clear()
    ls.forget_projects()
    for uri in list(ls.workspace.text_documents):
        ls.schedule(uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: JitfixServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: JitfixServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.options.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: JitfixServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.forget_projects()  # a module saved (or a new one) is read anew
    ls.schedule(params.text_document.uri, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JitfixServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.analysed.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL]))
def code_action(ls: JitfixServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    analysed = ls.current(uri)
    only = params.context.only
    actions = []
    if not only or types.CodeActionKind.QuickFix in only:
        actions += quick_fixes(document, uri, analysed, params.range)
    if not only or any(FIX_ALL.startswith(kind) for kind in only):
        actions += fix_all(ls, document, uri)
    return actions


def fix_all(ls: JitfixServer, document: TextDocument, uri: str) -> list[types.CodeAction]:
    settings = ls.settings_for(document.path)
    fixed = api.fix_document(document.path, document.source, settings, ls.options.unsafe_fixes,
                             ls.project_for(settings))
    if not fixed.changed:
        return []
    assert fixed.new_text is not None  # it changed
    edit = types.TextEdit(range=types.Range(types.Position(0, 0), _line_start(document, len(_lines_of(document)) + 1)),
                          new_text=fixed.new_text)
    return [types.CodeAction(title="Fix all jitfix problems", kind=FIX_ALL,
                             edit=types.WorkspaceEdit(changes={uri: [edit]}))]


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: JitfixServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    analysed = ls.current(uri)
    at = types.Range(params.position, params.position)
    from jitfix.rules import RULES_BY_CODE

    shown = [finding for finding in analysed.result.findings if _overlaps(finding_range(document, finding), at)]
    if not shown:
        return None
    texts = [f"**{finding.code}** {finding.message}\n\n{RULES_BY_CODE[finding.code].explanation()}"
             for finding in shown if finding.code in RULES_BY_CODE]
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(texts)))


def serve() -> None:
    server.start_io()
