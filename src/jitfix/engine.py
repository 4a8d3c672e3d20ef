"""Run the rules over files: decide cheaply, edit only what changes, never emit broken code.

Per file: a text prefilter (no mention of jax: nothing to do; no name of a transform: only
Python's syntax check, as no code in it can be traced) -> stdlib ``ast`` parse ->
find traced functions -> rules yield findings (and fixes as position-targeted edits) ->
only if a fix is to be applied: libcst parse, apply the edits, add imports -> re-parse
the result. Fixes are applied until nothing more changes, so ``fix`` is idempotent.
Many files run in parallel worker processes.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import gc
import os
import signal
import symtable
import sys
import threading
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, Iterable, Iterator

from jitfix.analysis.imports import ImportTable
from jitfix.analysis.observations import Observation
from jitfix.analysis.project import Project
from jitfix.cache import Cache
from jitfix.config import Settings
from jitfix.files import InputError, InvalidSyntax, SourceFile, Stamp, decode_source, read_source
from jitfix.findings import EditError, Finding, Replacement, Safety
from jitfix.paths import real_path
from jitfix.control_flow.lowering_checks import LoweringChecks, checking_lowered, lowering_checks
from jitfix.suppress import filter_suppressed

# Words a file must contain to possibly hold traced code.
PREFILTER_WORDS = ("jax", "equinox")
MAX_FIX_ROUNDS = 8
# Modules deep that evidence of a traced call into another module of the run is followed.
EVIDENCE_ROUNDS = 3
@dataclass(frozen=True)
class Options:
    apply_fixes: bool = False  # compute the fixed text (fix, diff)
    fix_diffs: bool = False  # attach each finding's own fix as a diff (json, sarif)
    unsafe_fixes: bool = False
    # Functions (qualified names) whose rewrites are held back: validation did not prove them.
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
    cached: bool = False  # taken from the cache: not parsed this run
    stamp: Stamp | None = None  # of the file as read, for the cache
    # Other modules of the run whose functions the analysis summarised, as read: the cached
    # result holds only while they are unchanged too.
    dependencies: dict[str, Stamp] = field(default_factory=dict)
    # A notebook's code cells before and after, as Python (what `diff` shows).
    review: tuple[str, str] | None = None
    # Lines of the original the first round of fixes rewrote, with the rule's code.
    rewritten_lines: dict[int, str] = field(default_factory=dict)
    # Calls from the file's traced code into other modules of the run, with tracers: evidence
    # that the functions called are traced (see ``_with_calls_between_modules``).
    calls_out: list[Observation] = field(default_factory=list)
    # (function, def line) -> traced parameters of each function the file's own analysis
    # found staged: evidence from elsewhere that says no more changes nothing.
    traced_here: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.new_text is not None and self.source is not None and self.new_text != self.source.text


class InternalError(Exception):
    """A rule produced code that does not parse; the file is left as it was."""


def _mentions_jax(text: str) -> bool:
    return any(word in text for word in PREFILTER_WORDS)


def _mentions_a_transform(text: str) -> bool:
    """No name of a transform that traces a function (``jit``, ``vmap``, ``scan``, ...; even
    an aliased import spells it once) means no traced code: the tree need not be walked."""
    from jitfix.analysis.catalogue import mentions_a_transform

    return mentions_a_transform(text)


# Whether a tree just parsed is put out of the cycle collector's reach (``_parsed``): in a
# batch run (``run_paths`` and its workers), not in the editor's long-lived server, where
# objects frozen with the tree that later become garbage would never be freed.
_freezing_trees = False


def _parsed(path: str, text: str) -> ast.Module:
    with _syntax_errors_named(path):
        if not _freezing_trees:
            return ast.parse(text, filename=path)
        # A module's tree is its largest part and holds no cycles (reference counting frees
        # it): frozen as it is made, the collector never walks its nodes (a tenth of a run
        # went there). What is garbage before it is collected first, not frozen with it.
        gc.collect()
        gc.disable()
        try:
            return ast.parse(text, filename=path)
        finally:
            gc.freeze()
            gc.enable()


def _syntax_checked(path: str, text: str) -> None:
    """Python's own check that the text compiles, without the syntax tree: ``symtable``
    parses and resolves scopes in C (a third cheaper than ``ast.parse``, which builds a
    Python object per node), and also rejects what only the compiler rejects, such as a
    repeated parameter name."""
    with _syntax_errors_named(path):
        symtable.symtable(text, path, "exec")


@contextlib.contextmanager
def _syntax_errors_named(path: str) -> Iterator[None]:
    try:
        yield
    except SyntaxError as error:  # (an indentation error is no newer syntax: it is not put down to the Python)
        if isinstance(error, IndentationError):
            raise InputError(path, f"indentation error: {error.msg}", line=error.lineno, col=error.offset) from None
        raise InvalidSyntax(path, f"syntax error: {error.msg}", line=error.lineno, col=error.offset) from None
    except ValueError as error:  # e.g. source with NUL bytes
        raise InputError(path, f"cannot parse: {error}") from None
    except (MemoryError, RecursionError):  # what CPython's parser raises for nesting past its limits
        raise InputError(path, "Python's own parser cannot read it: it nests deeper than Python allows "
                               "(python itself fails on this file with MemoryError or RecursionError)") from None


def analyse(path: str, text: str, settings: Settings,
            project: Project | None = None) -> tuple[list[Finding], ast.Module | None]:
    """Findings for one module's text (suppressions applied); with the run's ``project``,
    calls into its other modules are summarised from their source. Raises InputError on bad
    syntax (saying so when the code's target Python is newer than the one running)."""
    try:
        return _analysed(path, text, settings, project)
    except InvalidSyntax as error:
        target = settings.target_version
        if target is None or target <= sys.version_info[:2]:
            raise
        running = "{}.{}".format(*sys.version_info[:2])
        raise InputError(error.path, f"{error.message} (the code targets Python {target[0]}.{target[1]}; jitfix "
                         f"runs on Python {running}, whose parser cannot read newer syntax: run jitfix with "
                         f"Python {target[0]}.{target[1]})", line=error.line, col=error.col) from None


def _analysed(path: str, text: str, settings: Settings,
              project: Project | None) -> tuple[list[Finding], ast.Module | None]:
    real = real_path(path) if settings.observed else path
    observed = [seen for seen in settings.observed if seen.path == real]  # what a run saw traced here
    if not observed and not _mentions_jax(text):
        return [], None
    if not observed and not _mentions_a_transform(text):
        _syntax_checked(path, text)
        return [], None
    loaded = project.loaded(path, text) if project is not None else None
    tree = loaded.tree if loaded is not None else _parsed(path, text)
    imports = loaded.imports if loaded is not None else ImportTable(tree, text)
    if not observed and not (imports.mentions("jax") or imports.mentions("equinox")):
        return [], tree
    from jitfix.analysis.traced import find_traced_functions# loaded once a file needs analysis

    traced = find_traced_functions(tree, imports, text, path, project, loaded.scopes if loaded is not None else None,
                                   observed)
    if project is not None and traced.program is not None:
        traced.program.note_calls_out(traced.values())  # evidence for the modules it calls into
    if not traced and not traced.traces_lambdas:
        return [], tree
    from jitfix.rules import selected_rules  # the rules (and libcst) load only when needed
    from jitfix.rules.base import ModuleContext

    module = ModuleContext(path, text, tree, imports, traced, settings, fixed=partial(_fixed_text, path, settings))
    findings: list[Finding] = []
    for rule in selected_rules(lambda code: settings.is_enabled(code, path)):
        raise_if_superseded()
        findings.extend(rule.check(module))
    findings = [finding for finding in findings if not traced.unentered(finding.function, finding.line)]
    if findings:
        findings = filter_suppressed(findings, text, traced.functions)  # every def, from the finder's walk
    findings.sort(key=Finding.sort_key)
    return findings, tree


class Superseded(Exception):
    """The text being analysed is no longer the one wanted (an editor's newer version)."""


# Asked between the rules of an analysis: whether its text has been superseded (an editor's
# server sets it in the thread analysing a document; a command-line run never is).
superseded: ContextVar[Callable[[], bool] | None] = ContextVar("superseded", default=None)


def raise_if_superseded() -> None:
    ask = superseded.get()
    if ask is not None and ask():
        raise Superseded


def _held(finding: Finding, options: Options) -> bool:
    """Whether the finding is in a function validation held back (or nested in one)."""
    function = finding.function
    return function is not None and any(function == name or function.startswith(name + ".")
                                        for name in options.hold)


def _applicable(findings: list[Finding], options: Options) -> list[Finding]:
    """The fixes this round applies: safe ones (or all, with ``--unsafe-fixes``) outside
    held functions; inside code another fix of the round restructures, none that assumes a
    value is static."""
    chosen = [
        finding for finding in findings
        if finding.fix is not None and finding.fix.edits
        and (finding.fix.safety is Safety.SAFE or options.unsafe_fixes)
        and not _held(finding, options)
    ]
    restructured = [finding.fix.restructures for finding in chosen if finding.fix and finding.fix.restructures]
    return [finding for finding in chosen
            if not (finding.fix and finding.fix.assumes_static)
            or not any(first <= finding.line <= last for first, last in restructured)]


def _one_restructuring_per_function(findings: list[Finding]) -> list[Finding]:
    """The findings without those that replace statements of a function another finding's
    fix restructures: for a round whose edits did not apply together. A restructuring and a
    lax rewrite of the function each rewrite statements paired with the ast their plans
    were made on; one applied inside the other may find more statements than were planned.
    The later waits for the next round, where it is found again against the restructured
    code; edits of expressions (a call renamed) compose with either, and go on."""
    from jitfix.edits import replaces_statements  # libcst: only a round that applies fixes

    restructurings: list[Finding] = []
    for finding in findings:
        if finding.fix is not None and finding.fix.restructures is not None \
                and not any(_nested(finding.function, other.function) for other in restructurings):
            restructurings.append(finding)
    return [finding for finding in findings if finding in restructurings
            or not any(replaces_statements(edit) for edit in (finding.fix.edits if finding.fix else []))
            or not any(_nested(finding.function, other.function) for other in restructurings)]


def _applied_apart(text: str, findings: list[Finding], tree: ast.Module,
                   error: InternalError) -> tuple[list[Finding], str]:
    """The findings a round applies, and the text, when their fixes did not apply together
    (``error``): one restructuring per function; failing that, the first fix alone (a lax
    rewrite of a branch and a statement another fix removes inside it, each planned on the
    same ast). The others wait for the next round, where they are found again against the
    rewritten code."""
    fewer = _one_restructuring_per_function(findings)
    if fewer != findings:
        try:
            return fewer, _edited(text, fewer, tree)
        except InternalError:
            pass
    if len(findings) == 1:
        raise error
    return findings[:1], _edited(text, findings[:1], tree)


def _nested(first: str | None, second: str | None) -> bool:
    """Whether one of two functions (qualified names) is, or holds, the other: a rewrite of
    a function rewrites the defs nested in it too."""
    if first is None or second is None:
        return first == second
    return first == second or first.startswith(second + ".") or second.startswith(first + ".")


def _compatible(findings: list[Finding]) -> list[Finding]:
    """The findings whose fixes one round applies together. Edits of one node by different
    rules do not mix (``edits._combined`` applies the first); a fix that has an edit of a node
    an earlier fix edits otherwise waits, whole, for the next round, where it is found again
    against the rewritten code: applied in part, it would leave the code half changed (a
    renamed attribute without the method that was to replace it)."""
    claimed: dict[tuple, type] = {}
    kept = []
    for finding in findings:
        edits = finding.fix.edits if finding.fix else []
        if any(claimed.get(edit.target, type(edit.replace)) is not type(edit.replace) for edit in edits):
            continue
        for edit in edits:
            claimed.setdefault(edit.target, type(edit.replace))
        kept.append(finding)
    return kept


def _edited(text: str, findings: list[Finding], tree: ast.Module) -> str:
    """``text`` with the findings' fixes applied."""
    edits = [edit for finding in findings if finding.fix is not None for edit in finding.fix.edits]
    return apply_edits(text, edits, ImportTable(tree), tree)


def apply_edits(text: str, edits: list, imports: ImportTable, tree: ast.Module | None = None) -> str:
    from jitfix.edits import apply  # libcst loads only when code changes

    try:
        return apply(text, edits, imports, tree)
    except EditError as error:
        raise InternalError(str(error)) from None


def _checked(path: str, new_text: str, codes: Iterable[str]) -> str:
    """The fixed text, if Python compiles it (``ast.parse`` alone accepts code that
    ``compile`` rejects, such as a repeated parameter name)."""
    try:
        compile(new_text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        rules = ", ".join(sorted(set(codes)))
        raise InternalError(f"fix by {rules} produced code that Python does not compile ({error.msg}, line {error.lineno})")
    return new_text


def source_lines(text: str) -> list[str]:
    """Lines as git counts them: ended by ``\n`` only (``str.splitlines`` would also split on
    a form feed or ``\u2028`` inside a line, and the patch would not apply)."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def unified_diff(path: str, old: str, new: str) -> str:
    """A git-style unified diff (``--- a/path`` / ``+++ b/path``)."""
    old_lines = source_lines(old)
    new_lines = source_lines(new)
    for lines in (old_lines, new_lines):
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += "\n\\ No newline at end of file\n"
    name = path.removeprefix("./").lstrip("/") if path != "-" else "-"
    return "".join(difflib.unified_diff(old_lines, new_lines, fromfile=f"a/{name}", tofile=f"b/{name}"))


def replacements(old: str, new: str) -> list[Replacement]:
    old_lines = source_lines(old)
    new_lines = source_lines(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    return [
        Replacement(start_line=i1 + 1, end_line=i2 + 1, text="".join(new_lines[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def attach_fix_diffs(path: str, text: str, tree: ast.Module, findings: list[Finding]) -> None:
    """Each finding's own fix as a diff. A fix that cannot be rendered loses its fix (the
    finding stays, reported as not auto-fixable), never the file's other findings."""
    imports = ImportTable(tree)
    for finding in findings:
        if finding.fix is None or not finding.fix.edits:
            continue
        try:
            fixed = _checked(path, apply_edits(text, finding.fix.edits, imports, tree), [finding.code])
        except InternalError as error:
            finding.message += f"; not auto-fixable: jitfix could not render its fix ({error})"
            finding.fix = None
            continue
        finding.fix.diff = unified_diff(path, text, fixed)
        finding.fix.replacements = replacements(text, fixed)


def _fixed_text(path: str, settings: Settings, text: str) -> FileResult | None:
    """What ``fix`` makes of another text of the module at ``path`` (None where it cannot)."""
    try:
        return process_text(path, text, settings, Options(apply_fixes=True))
    except (InternalError, InputError):
        return None


def process_text(path: str, text: str, settings: Settings, options: Options,
                 project: Project | None = None) -> FileResult:
    """Everything for one module's text. Raises InputError for input that cannot be read."""
    token = lowering_checks.set(LoweringChecks()) if lowering_checks.get() is None else None
    # Old Mac line ends (`\r` alone): worked on as `\n`, which Python reads the same, and
    # given back as they were.
    carriage_returns = "\r" in text and "\n" not in text
    try:
        result = _process_text(path, text.replace("\r", "\n") if carriage_returns else text, settings, options,
                               project)
    finally:
        if token is not None:
            lowering_checks.reset(token)
    if carriage_returns and result.new_text is not None:
        result.new_text = result.new_text.replace("\n", "\r")
    return result


def _new_round_of_checks() -> None:
    """Each round of fixes of the text a run was given may check as many restructurings
    again: a round's restructured code holds problems (a returning `if` now in a branch
    function) that no earlier check could see. Nested checks share the round's."""
    checks = lowering_checks.get()
    if checks is not None and not checking_lowered.get():
        checks.used.clear()


def _process_text(path: str, text: str, settings: Settings, options: Options, project: Project | None) -> FileResult:
    result = FileResult(path=path)
    findings, tree = analyse(path, text, settings, project)
    result.parsed = _mentions_jax(text)  # parsed, or at least syntax-checked
    if options.fix_diffs and tree is not None:
        attach_fix_diffs(path, text, tree, findings)
    if not options.apply_fixes:
        result.findings = findings
        return result
    current = text
    for _ in range(MAX_FIX_ROUNDS):
        to_apply = _compatible(_applicable(findings, options))
        if not to_apply or tree is None:
            break
        try:
            edited = _edited(current, to_apply, tree)
        except InternalError as error:
            to_apply, edited = _applied_apart(current, to_apply, tree, error)
        current = _checked(path, edited, [f"{f.code} (line {f.line})" for f in to_apply])
        if not result.fixed:
            result.rewritten_lines = {finding.line: finding.code for finding in to_apply}
        result.fixed.extend(to_apply)
        _new_round_of_checks()
        findings, tree = analyse(path, current, settings, project)
    result.findings = findings
    result.new_text = current
    return result


def process_notebook(path: str, text: str, settings: Settings, options: Options,
                     project: Project | None = None) -> FileResult:
    """A notebook's code cells, checked and fixed as one module; findings name cell and line."""
    from jitfix import notebooks

    document = notebooks.read(text, path)
    view = notebooks.code_view(document)
    try:
        inner = process_text(path, view.text, settings, options, project)
    except InputError as error:
        cell, line = notebooks.locate(view, view.text, error.line or 1)
        raise InputError(f"{path}:cell {cell + 1}", error.message, line=line, col=error.col) from None
    final = inner.new_text if inner.new_text is not None else view.text
    result = FileResult(path=path, parsed=inner.parsed)
    result.findings = notebooks.relocate(view, inner.findings, final)
    result.fixed = notebooks.relocate(view, inner.fixed, view.text)
    if inner.new_text is not None:
        result.new_text = text
        if inner.new_text != view.text:
            sources = notebooks.cell_sources(view, inner.new_text)
            result.new_text = notebooks.write(text, document, sources, path)
            result.review = (view.readable(view.text), view.readable(inner.new_text))
    return result


def process_source(source: SourceFile, settings: Settings, options: Options,
                   project: Project | None = None) -> FileResult:
    process = process_notebook if source.path.endswith(".ipynb") else process_text
    try:
        result = process(source.path, source.text, settings, options, project)
    except InputError as error:
        return FileResult(path=source.path, source=source, error=error)
    except InternalError as error:
        return FileResult(path=source.path, source=source, internal_error=str(error))
    result.source = source
    return result


def process_path(path: str, settings: Settings, options: Options, project: Project | None = None) -> FileResult:
    try:
        source = read_source(path, settings.max_file_bytes)
    except InputError as error:
        return FileResult(path=path, error=error)
    if project is not None:
        project.consulted()  # what earlier files read and called is theirs
        project.calls_out()
        project.traced_here()
    result = process_source(source, settings, options, project)
    result.stamp = source.stamp
    if project is not None:
        result.dependencies = project.consulted()
        result.calls_out = project.calls_out()
        result.traced_here = project.traced_here()
    return _portable(result)


def process_bytes(path: str, data: bytes, settings: Settings, options: Options) -> FileResult:
    try:
        source = decode_source(data, path)
    except InputError as error:
        return FileResult(path=path, error=error)
    return _guarded_call(path, lambda: process_source(source, settings, options))


def _portable(result: FileResult) -> FileResult:
    """Strip what cannot or need not travel back from a worker process: the edit callbacks,
    and the text of a file that does not change (most of them; nothing reads it again)."""
    result.findings = [finding.without_edits() for finding in result.findings]
    result.fixed = [finding.without_edits() for finding in result.fixed]
    if not result.changed:
        result.source = result.new_text = None
    return result


# -- many files --------------------------------------------------------------------------------

_worker_state: tuple[Settings, Options, Project] | None = None


def collect_garbage_rarely() -> None:
    """The analysis allocates millions of small syntax-tree objects that hold no reference
    cycles (reference counting frees them): Python's cycle collector, run every 700
    allocations, would scan them again and again for nothing (about 7% of a run). It runs
    rarely instead, and never over what is already loaded (the modules, frozen)."""
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def _init_worker(settings: Settings, options: Options, files: list[str]) -> None:
    global _worker_state, _freezing_trees
    # Ctrl-C reaches every process of the terminal's group: the main one stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (not the command line's handler, if forked)
    _die_with_parent()
    collect_garbage_rarely()
    _freezing_trees = True
    _worker_state = (settings, options, Project(files, settings.max_file_bytes))


def _die_with_parent() -> None:
    """On Linux, have the kernel end this worker when the process that started it ends, even
    by SIGKILL: no worker outlives its run holding the caller's pipes."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _work(paths: list[str]) -> list[FileResult]:
    assert _worker_state is not None
    return [_guarded(path, *_worker_state) for path in paths]


def _guarded(path: str, settings: Settings, options: Options, project: Project | None = None) -> FileResult:
    return _guarded_call(path, lambda: process_path(path, settings, options, project))


def _guarded_call(path: str, process) -> FileResult:
    """``process()`` that never raises: whatever escapes becomes an internal error of the
    file (with where it happened), so one bad file cannot stop or hang the run."""
    try:
        try:
            return process()
        except RecursionError:  # code Python compiles (90 nested `if`s) may still nest past the default
            return _with_deep_stack(process)
    except RecursionError:
        return FileResult(path=path, error=InputError(path, "too deeply nested to analyse (an expression or "
                                                            f"block nests past {DEEP_RECURSION_LIMIT} calls)"))
    except MemoryError:
        return FileResult(path=path, internal_error="ran out of memory while analysing the file")
    except Exception as error:  # noqa: BLE001 - reported, never swallowed
        return FileResult(path=path, internal_error=describe_exception(error))


# A file that nests past Python's default recursion limit is processed again on a thread of
# its own with these: the stack is virtual memory, touched only as deep as the code goes.
DEEP_RECURSION_LIMIT = 50_000
DEEP_STACK_BYTES = 1 << 30


def _with_deep_stack(process: Callable[[], FileResult]) -> FileResult:
    """``process()`` on a thread with a deep stack and a high recursion limit."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = process()
        except BaseException as error:  # noqa: BLE001 - raised again on the caller's thread
            outcome["error"] = error

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, DEEP_RECURSION_LIMIT))
    try:
        stack = threading.stack_size(DEEP_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="jitfix-deep", daemon=True)
            thread.start()
        finally:
            threading.stack_size(stack)
        while thread.is_alive():  # (a join with a timeout lets Ctrl-C through)
            thread.join(0.2)
    finally:
        sys.setrecursionlimit(limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]


def describe_exception(error: BaseException) -> str:
    """``ValueError: ... (at jitfix/rules/x.py:12)``: the type, the text and jitfix's last frame."""
    import traceback

    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if "jitfix" in frame.filename]
    where = ""
    if frames:
        frame = frames[-1]
        where = f" (at {frame.filename.rpartition('jitfix/')[2] or frame.filename}:{frame.lineno})"
    return f"{type(error).__name__}: {error}{where}"


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
    cache: Cache | None = None,
    finished: Callable[[FileResult], None] | None = None,
) -> Iterator[FileResult]:
    """Process files, yielding results in the order of ``paths``; in parallel when there are
    enough to pay for the workers. Files the cache answers are not sent to a worker at all;
    what the workers find is added to the cache, which is saved at the end. ``finished``
    hears of each file as it is done (a progress bar), in whatever order that is."""
    global _freezing_trees
    _freezing_trees = True
    try:
        yield from _run_paths(paths, settings, options, jobs, cache, finished)
    finally:
        _freezing_trees = False


def _run_paths(paths: list[str], settings: Settings, options: Options, jobs: int | None, cache: Cache | None,
               finished: Callable[[FileResult], None] | None) -> Iterator[FileResult]:
    results: dict[str, FileResult] = {}
    if cache is not None:
        for path in paths:
            entry = cache.lookup(path)
            if entry is not None:
                results[path] = FileResult(path=path, findings=entry.findings, cached=True, calls_out=entry.calls_out)
                if finished is not None:
                    finished(results[path])
    # In one process, the modules the files' analyses read stay parsed for the analyses again
    # with evidence from other modules (``_with_calls_between_modules``).
    project = Project(paths, settings.max_file_bytes)
    for result in _processed([path for path in paths if path not in results], settings, options, jobs, project):
        if finished is not None:
            finished(result)
        if cache is not None and result.stamp is not None and _cacheable(result):
            cache.remember(result.path, result.stamp, result.findings, result.dependencies, result.calls_out)
        results[result.path] = result
    if cache is not None:
        cache.save()
    if len(paths) > 1:
        _with_calls_between_modules(results, paths, settings, options, jobs, project)
    for path in paths:
        yield results[path]


def _with_calls_between_modules(results: dict[str, FileResult], paths: list[str], settings: Settings,
                                options: Options, jobs: int | None, project: Project) -> None:
    """Analyse again, with the evidence, the modules that traced code elsewhere in the run
    calls with tracers (a helper module, called from a training script's jitted step): their
    functions are traced. What those analyses find called in turn is followed too, a few
    modules deep. Such results are not cached: they depend on the callers."""
    known = {real_path(path): path for path in paths}
    evidence: list[Observation] = []
    for _ in range(EVIDENCE_ROUNDS):
        new = [seen for result in results.values() for seen in result.calls_out
               if seen.path in known and seen not in evidence and not _known_there(seen, results[known[seen.path]])]
        if not new:
            return
        evidence += new
        with_evidence = replace(settings, observed=tuple(settings.observed) + tuple(evidence))
        again = sorted({known[seen.path] for seen in new})
        for result in _processed(again, with_evidence, options, jobs, project):
            results[result.path] = result


def _known_there(seen: Observation, callee: FileResult) -> bool:
    """The called module's own analysis already has the function staged with (at least) the
    parameters the call traces: the evidence adds nothing."""
    here = callee.traced_here.get((seen.function, seen.line))
    return here is not None and set(seen.traced) <= set(here)


def _cacheable(result: FileResult) -> bool:
    return (result.stamp is not None and result.error is None and result.internal_error is None
            and not result.changed)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _processed(paths: list[str], settings: Settings, options: Options, jobs: int | None,
               project: Project) -> Iterator[FileResult]:
    """Results in any order; ``project`` holds every file of the run (calls into them are
    summarised; in parallel each worker has a project of its own). In parallel, the largest files go first and work is handed out a
    few files at a time, so no worker is left with a long file while the other is idle.

    A worker that dies (a crash in a C extension, the kernel's OOM killer) breaks the pool:
    the files it may have held are then run again one at a time in a pool of their own, and
    a file that kills that one too is reported as an internal error."""
    # More workers than files or cores only costs memory and start-up.
    jobs = min(max(1, jobs or default_jobs()), len(paths) or 1, max(default_jobs(), os.cpu_count() or 1))
    if jobs == 1 or len(paths) < 2 * jobs:
        for path in paths:
            yield _guarded(path, settings, options, project)
        return
    largest_first = sorted(paths, key=_size, reverse=True)
    size = max(1, min(4, len(paths) // (jobs * 16)))
    chunks = [largest_first[start:start + size] for start in range(0, len(largest_first), size)]
    suspects: list[str] = []
    project_files = sorted(project.files)
    for chunk, results in _pool_map(chunks, settings, options, jobs, project_files):
        if results is None:
            suspects.extend(chunk)
        else:
            yield from results
    for path in suspects:
        [(_, results)] = list(_pool_map([[path]], settings, options, 1, project_files))
        yield from results or [FileResult(path=path, internal_error="the worker process died while analysing "
                                                                    "this file")]


def _pool_map(chunks: list[list[str]], settings: Settings, options: Options, jobs: int,
              project_files: list[str]) -> Iterator[tuple[list[str], list[FileResult] | None]]:
    """Each chunk with its results, or with None when the pool broke before it finished."""
    import multiprocessing  # only here: a run on one core never loads it
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context(_start_method())
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_init_worker,
                               initargs=(settings, options, project_files))
    try:
        futures = {pool.submit(_work, chunk): chunk for chunk in chunks}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except BrokenProcessPool:
                yield futures[future], None
    except BaseException:  # Ctrl-C, SIGTERM, a caller that stops early: the workers stop now
        _stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _stop_workers(pool) -> None:
    """End a pool's worker processes without waiting for the work they hold (they write
    nothing: results come back to this process, which writes)."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # (the executor keeps no public list)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    for process in workers:
        process.join(timeout=1)
        if process.is_alive():
            process.kill()
