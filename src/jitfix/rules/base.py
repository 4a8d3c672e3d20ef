"""The shape every rule has: a code, a name, documentation, and a check that yields findings."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Iterator, Mapping, Protocol, TypeVar

from jitfix.analysis.blocks import assigned_names, nodes_of, parents_in
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.traced_function import TracedFunction, TracedFunctions, is_lambda_body
from jitfix.config import Settings
from jitfix.cst_text import cst
from jitfix.files import source_lines
from jitfix.findings import Edit, EditContext, Finding, Fix, Position
from jitfix.segments import source_segment

if TYPE_CHECKING:
    from jitfix.engine import FileResult


T = TypeVar("T")


class CacheKey(Generic[T]):
    """A typed key of ``ModuleContext.cached``, declared beside the analysis it keeps."""

    def __init__(self, name: str):
        self.name = name  # (for a reader's repr only: keys compare by identity)

    def __repr__(self) -> str:
        return f"CacheKey({self.name!r})"


@dataclass(frozen=True)
class RuleDoc:
    """ruff-style documentation, printed by ``jitfix explain CODE``."""

    what: str
    why: str
    example: str
    fixed: str
    safety: str


class Source(Protocol):
    """A module's syntax tree and imports: the module checked (a ``ModuleContext``), or another
    module of the run (a ``ModuleProgram``) whose code a call reaches."""

    @property
    def tree(self) -> ast.Module: ...

    @property
    def imports(self) -> ImportTable: ...


class ModuleContext:
    """One parsed module and its analysis, shared by every rule that checks it."""

    def __init__(self, path: str, text: str, tree: ast.Module, imports: ImportTable,
                 traced: TracedFunctions, settings: Settings | None = None,
                 fixed: Callable[[str], FileResult | None] | None = None):
        self.path = path
        # What `fix` makes of another text of this module (None where it cannot): a
        # restructuring is offered only where the rewrite then takes it all. The engine gives
        # it; rules never call the engine themselves.
        self.fixed: Callable[[str], FileResult | None] = fixed or (lambda text: None)
        self.settings = settings or Settings()
        self.text = text
        self.tree = tree
        self.imports = imports
        self.traced = traced
        self._cached: dict[CacheKey[Any], Any] = {}
        self._lines: list[str] | None = None

    def cached(self, key: CacheKey[T], make: Callable[[], T]) -> T:
        """The analysis under ``key``, made once per module (several rules share it)."""
        if key not in self._cached:
            self._cached[key] = make()
        return self._cached[key]

    @property
    def lines(self) -> list[str]:
        if self._lines is None:
            self._lines = source_lines(self.text)
        return self._lines

    def char_col(self, line: int, byte_col: int) -> int:
        """ast counts columns in UTF-8 bytes; libcst and people count characters."""
        if line - 1 >= len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def start_of(self, node: ast.AST) -> Position:
        line, col, _, _ = located(node)
        return Position(line, self.char_col(line, col))

    def span_of(self, node: ast.AST) -> tuple[Position, Position]:
        """Where the node starts and ends, in characters."""
        _, _, end_line, end_col = located(node)
        return self.start_of(node), Position(end_line, self.char_col(end_line, end_col))

    def segment(self, node: ast.AST) -> str:
        """The node's source, as ``ast.get_source_segment`` gives it ("" where it has none)."""
        return source_segment(self.text, node) or ""


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # "always", "sometimes" or "never"
    fixable: ClassVar[str]
    doc: ClassVar[RuleDoc]

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        raise NotImplementedError

    def explanation(self) -> str:
        """The rule's documentation as ``jitfix explain`` and an editor's hover show it."""
        doc = self.doc
        return "\n\n".join([
            f"{self.code} ({self.name})",
            f"Fixable: {self.fixable}",
            f"## What it does\n{doc.what}",
            f"## Why it breaks under jit\n{doc.why}",
            f"## Example\n{_indented(doc.example)}",
            f"## Fixed\n{_indented(doc.fixed)}",
            f"## Fix safety\n{doc.safety}",
        ])

    def finding(self, module: ModuleContext, node: ast.AST, message: str, fix: Fix | None = None,
                function: TracedFunction | None = None, end: ast.AST | None = None) -> Finding:
        """A finding spanning ``node`` (or from ``node`` to the end of ``end``). In a traced
        lambda's body only a fix that rewrites expressions inside it is kept: one that adds
        statements or changes a def is written for a def's body."""
        if function is not None and fix is not None and is_lambda_body(function.node) \
                and not _inside_the_expression(module, fix, function.node):
            fix = None
            message += "; not auto-fixable: in a lambda, whose body holds no statements (write it as a def)"
        start = module.start_of(node)
        _, _, end_line, end_byte = located(end or node)
        end_col = module.char_col(end_line, end_byte)
        return Finding(
            code=self.code,
            name=self.name,
            message=message,
            path=module.path,
            line=start.line,
            col=start.col + 1,
            end_line=end_line,
            end_col=end_col + 1,
            fix=fix,
            function=function.qualname if function else None,
        )


def _inside_the_expression(module: ModuleContext, fix: Fix, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether every edit of ``fix`` replaces an expression within the body of the lambda
    ``function`` was made from (``lambda_as_function``: its one statement returns the body)."""
    body = function.body[0]
    first = module.start_of(body)
    last = (body.end_lineno or body.lineno, module.char_col(body.end_lineno or body.lineno, body.end_col_offset or 0))
    return fix.restructures is None and all(
        issubclass(edit.node_type, cst.BaseExpression)
        and (first.line, first.col) <= (edit.start.line, edit.start.col) < last for edit in fix.edits)


def located(node: ast.AST) -> tuple[int, int, int, int]:
    """(line, column, end line, end column), ast's columns in UTF-8 bytes: every node a rule
    points at has them (the ast stubs do not say so for ``ast.AST``)."""
    line: int = getattr(node, "lineno")
    col: int = getattr(node, "col_offset")
    end_line = getattr(node, "end_lineno", None) or line
    end_col = getattr(node, "end_col_offset", None)
    return line, col, end_line, col if end_col is None else end_col


def _indented(code: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in code.rstrip("\n").splitlines())


def inlined_at(binding: ast.Assign, use: ast.AST, function: ast.AST, parents: Mapping[int, ast.AST],
              module: ModuleContext) -> bool:
    """Whether ``binding``'s value means the same where ``use`` is, so a rewrite can read it
    there and the binding can go (``inlined_edits``): both in one block, the binding first, on
    a line of its own, the use in a simple statement of the block, and no statement between
    them rebinds a name the value reads."""
    block = next((body for node in nodes_of(function) for field in ("body", "orelse", "finalbody")
                  if isinstance(body := getattr(node, field, None), list) and binding in body), None)
    if block is None:
        return False
    holder: ast.AST | None = use
    while holder is not None and holder not in block:
        holder = parents.get(id(holder))
    if not isinstance(holder, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return | ast.Expr):
        return False  # (in a loop or a branch it may run again, or after what rebinds the mask's names)
    first, last = block.index(binding), block.index(holder)
    if first >= last:
        return False
    before = block[first - 1] if first else None
    if before is not None and (before.end_lineno or before.lineno) >= binding.lineno \
            or (block[first + 1].lineno <= (binding.end_lineno or binding.lineno)):
        return False  # (a `;` shares its line)
    if any("#" in module.lines[line - 1] for line in range(binding.lineno, binding.end_lineno or binding.lineno)):
        return False  # (a comment inside a statement of several lines would go with it)
    read = {node.id for node in ast.walk(binding.value) if isinstance(node, ast.Name)}
    return not read & assigned_names(block[first + 1:last])


def inlined_edits(module: ModuleContext, binding: ast.stmt, use: ast.AST, function: ast.AST) -> list[Edit]:
    """The edits that remove a binding a rewrite inlined at ``use`` (``inlined_at``): the
    binding goes, and the lines above it that are its own (comments, blank lines: libcst's
    leading lines) and the comment on its line go above the statement that now reads its
    value, which they describe -- but a tool's directive for that line (``# noqa``,
    ``# type: ignore``), which meant that line alone."""
    if not _commented(module, binding):
        return [removal_edit(module, binding)]
    carried: list[cst.EmptyLine] = []  # what the removal left, for the statement after it

    def removed(node: cst.CSTNode, context: EditContext) -> cst.RemovalSentinel:
        assert isinstance(node, cst.SimpleStatementLine)
        comment = node.trailing_whitespace.comment
        kept = [cst.EmptyLine(comment=comment)] if comment is not None and not _LINE_DIRECTIVE.match(comment.value) \
            else []
        carried[:] = [*node.leading_lines, *kept]  # (set, not added to: a second pass over the module sees it again)
        return cst.RemovalSentinel.REMOVE

    def with_comments(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.SimpleStatementLine)
        return node.with_changes(leading_lines=[*carried, *node.leading_lines]) if carried else node

    parents = parents_in(function)
    holder: ast.AST | None = use
    while holder is not None and not isinstance(holder, ast.stmt):
        holder = parents.get(id(holder))
    assert holder is not None
    # (libcst leaves the binding before the statement after it: `carried` is filled by then)
    return [Edit(module.start_of(binding), cst.SimpleStatementLine, removed),
            Edit(module.start_of(holder), cst.SimpleStatementLine, with_comments)]


# A comment that directs a tool for its own line only.
_LINE_DIRECTIVE = re.compile(r"#\s*(noqa\b|type:\s*ignore|pylint:|pyright:|mypy:|fmt:|isort:|nosec\b)")


def _commented(module: ModuleContext, statement: ast.stmt) -> bool:
    """Whether a comment is on the statement's (last) line, or on a line between it and the
    code above it (which libcst gives the statement as its leading lines)."""
    line = statement.lineno - 1
    while line >= 1 and (not module.lines[line - 1].strip() or module.lines[line - 1].lstrip().startswith("#")):
        if module.lines[line - 1].lstrip().startswith("#"):
            return True
        line -= 1
    end_line = statement.end_lineno or statement.lineno
    return "#" in module.lines[end_line - 1][module.char_col(end_line, statement.end_col_offset or 0):]


def removal_edit(module: ModuleContext, statement: ast.stmt) -> Edit:
    """The edit that removes ``statement``, a line of its own (a binding a rewrite made unused,
    a statement moved elsewhere)."""
    return Edit(module.start_of(statement), cst.SimpleStatementLine, _removed)


def _removed(node: cst.CSTNode, context: EditContext) -> cst.RemovalSentinel:
    return cst.RemovalSentinel.REMOVE
