"""What a rule reports: a finding at a place, and perhaps a fix for it."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Callable

from jitfix.segments import source_segment

if TYPE_CHECKING:
    from typing import TypeAlias

    import libcst as cst

    # What an edit's replacement gives for the node: a node, several statements, or nothing.
    Replaced: TypeAlias = cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel


class Safety(str, Enum):
    """As in ruff: a safe fix keeps the code's meaning; an unsafe one may change it."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True)
class Position:
    """1-based line, 0-based column counted in characters (libcst's convention)."""

    line: int
    col: int


@dataclass
class Edit:
    """Replace the libcst node of ``node_type`` that starts at ``start``.

    ``replace`` receives the original node and an :class:`EditContext` and returns its
    replacement. The engine finds the node with libcst's position metadata, so rules can
    decide what to change with the fast stdlib ``ast`` and only edit with libcst.
    A function definition is found by the position of its name (its decorators come first).
    """

    start: Position
    node_type: type[cst.CSTNode]
    replace: Callable[[cst.CSTNode, "EditContext"], Replaced]
    # Import paths the replacement needs, e.g. ("jax",) or ("functools.partial",).
    imports: tuple[str, ...] = ()
    # Where the node ends, when nodes of one type start at the same place (`a and b and c`).
    end: Position | None = None
    # Several edits of one node (one per finding) are combined by this, if given.
    merge: Callable[[list["Edit"]], "Edit"] | None = None
    # The comment lines right above a module-level statement reach ``replace`` as its leading
    # lines (else they stay where they are, above whatever the edit puts first).
    with_comments_above: bool = False

    @property
    def target(self) -> tuple[int, int, type, tuple[int, int] | None]:
        """The node it replaces: edits with one target replace one node."""
        return (self.start.line, self.start.col, self.node_type, (self.end.line, self.end.col) if self.end else None)


class EditError(Exception):
    """A fix could not be applied (a rule's replacement did not fit the tree it was given,
    or its node was not found); the file is left alone, the message says why."""


MAX_LINE_LENGTH = 88  # black's default: where a generated call is split over lines


def _split_lambda(argument: str, column: int) -> str:
    """An argument on a line of its own at ``column``: a lambda returning a tuple display
    (`lambda a, b: (a, jnp.asarray(b, d))`) that does not fit split as black splits it, one
    item a line; anything else as it is."""
    if column + len(argument) + 1 <= MAX_LINE_LENGTH or "\n" in argument:
        return argument
    lambda_ = ast.parse(argument, mode="eval").body
    if not (isinstance(lambda_, ast.Lambda) and isinstance(lambda_.body, ast.Tuple)):
        return argument
    body = _segment(argument, lambda_.body)
    if not (body.startswith("(") and argument.endswith(body)):
        return argument
    items = "".join(f"    {_segment(argument, item)},\n" for item in lambda_.body.elts)
    return f"{argument[:-len(body)]}(\n{items})"


def _segment(text: str, node: ast.AST) -> str:
    found = source_segment(text, node)
    assert found is not None
    return found


@dataclass
class EditContext:
    """How the module spells the names a replacement uses (``jax`` may be ``J``), and
    where the node being replaced sits, so generated code can be laid out to fit."""

    spellings: dict[str, str]
    column: int = 0  # of the node being replaced
    indent: int | None = None  # of the statement it starts, where a renderer knows it

    def name(self, dotted: str) -> str:
        return self.spellings.get(dotted, dotted)

    def call_source(self, function: str, args: list[str]) -> str:
        """``f(a, b)`` on one line if it fits, else black-style: one argument a line (an
        argument already split over lines is indented one more level)."""
        flat = f"{function}({', '.join(args)})"
        multiline = "\n" in flat
        if not multiline and self.column + len(flat) <= MAX_LINE_LENGTH:
            return flat
        if multiline and any('"""' in arg or "'''" in arg for arg in args):
            return flat  # re-indenting would change a triple-quoted string
        # libcst re-indents continuation lines to the enclosing block, so these are relative.
        if self.indent is not None:
            args = [_split_lambda(arg, self.indent + 4) for arg in args]
        lines = "".join("    " + arg.replace("\n", "\n    ") + ",\n" for arg in args)
        return f"{function}(\n{lines})"

    def return_source(self, value: str) -> str:
        """``return value`` on one line if it fits, else black-style: the values of ``return
        a, b`` (or the items of the one display returned, ``{**st, "k": v}``) one a line
        between its brackets."""
        flat = f"return {value}"
        if self.column + len(flat) <= MAX_LINE_LENGTH or "\n" in value:
            return flat
        returned = ast.parse(value, mode="eval").body
        if not isinstance(returned, ast.Tuple | ast.List | ast.Dict):
            return flat
        if isinstance(returned, ast.Dict):
            items = [f"**{_segment(value, item)}" if key is None else f"{_segment(value, key)}: {_segment(value, item)}"
                     for key, item in zip(returned.keys, returned.values)]
        else:
            items = [_segment(value, item) for item in returned.elts]
        opening, closing = "{}" if isinstance(returned, ast.Dict) else "[]" if isinstance(returned, ast.List) else "()"
        lines = "".join(f"    {item},\n" for item in items)
        return f"return {opening}\n{lines}{closing}"


@dataclass
class Fix:
    safety: Safety
    description: str
    edits: list[Edit] = field(default_factory=list, repr=False, compare=False)
    # For a fix that restructures code in plain Python for the next rounds to rewrite: the
    # lines (first, last) it restructures.
    restructures: tuple[int, int] | None = None
    # The fix relies on a value being static (a print formats it in Python). Inside code
    # another fix of the round restructures it waits for the next round: the lax rewrite
    # that follows may make the value an operand, a tracer. (What is traced stays traced, so
    # fixes relying on that need not wait.)
    assumes_static: bool = False
    # Filled by the engine: the unified diff of this fix alone, and where it applies.
    diff: str | None = None
    replacements: list["Replacement"] = field(default_factory=list)


@dataclass(frozen=True)
class Replacement:
    """Part of a fix as text: lines start..end (1-based; end exclusive) become ``text``."""

    start_line: int
    end_line: int
    text: str


@dataclass
class Finding:
    code: str
    name: str
    message: str
    path: str
    line: int
    col: int  # 1-based, in characters
    end_line: int
    end_col: int
    fix: Fix | None = None
    function: str | None = None
    cell: int | None = None  # in a notebook: the cell (1-based); line and columns are in that cell

    @property
    def where(self) -> str:
        """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col}"

    @property
    def line_label(self) -> str:
        """``line 5``, or ``cell 3, line 5`` in a notebook."""
        return f"cell {self.cell}, line {self.line}" if self.cell is not None else f"line {self.line}"

    @property
    def fixable(self) -> bool:
        """Whether ``jitfix fix`` fixes it as asked by default: a safe fix (ruff's ``[*]``)."""
        return self.fix is not None and self.fix.safety is Safety.SAFE

    @property
    def hidden_fix(self) -> bool:
        """Whether only ``--unsafe-fixes`` fixes it."""
        return self.fix is not None and self.fix.safety is not Safety.SAFE

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.col, self.code)

    def without_edits(self) -> Finding:
        """A copy that can cross a process boundary (edits hold functions)."""
        if self.fix is None:
            return self
        return replace(self, fix=replace(self.fix, edits=[]))
