"""What the renderers of ifs, loops and scans share while one function is written."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Callable, Sequence

from jitfix.cst_text import cst, separated
from jitfix.findings import MAX_LINE_LENGTH, EditContext
from jitfix.segments import source_segment

INDENT_WIDTH = 4

# Writes a block of statements with the plans inside it: (libcst statements, the ast
# statements they were analysed as, indentation depth) -> the new statements.
# (Quoted: libcst loads only when a fix is built.)
BlockRenderer = Callable[[Sequence["cst.BaseStatement"], list[ast.stmt], int], list["cst.BaseStatement"]]
StatementPairs = list[tuple["cst.BaseStatement", list[ast.stmt]]]


@dataclass
class RenderContext:
    """The module's text and spellings, and where the function being rewritten starts."""

    text: str  # the module's source, for expressions the plans hold as ast
    edit: EditContext
    base_column: int  # the column of the function's `def`

    def name(self, dotted: str) -> str:
        """How the module spells ``dotted`` (``jax.numpy`` may be ``jnp``)."""
        return self.edit.name(dotted)

    def source(self, node: ast.AST | None, default: str) -> str:
        if node is None:
            return default
        return source_segment(self.text, node) or ast.unparse(node)

    def with_copies(self, definitions: list[ast.stmt], body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """``body`` after the helper definitions, as written, made again inside a new function
        (a blank line after a ``def``, as black writes it)."""
        made: list[cst.BaseStatement] = []
        for definition in definitions:
            source = textwrap.dedent(source_segment(self.text, definition, padded=True) or "")
            made.append(cst.parse_statement(source.rstrip("\n") + "\n"))
        return [*made, *separated(body, after=bool(made) and isinstance(made[-1], cst.FunctionDef))]

    def fits(self, line: str, depth: int) -> bool:
        """Whether ``line`` fits at ``depth`` (within black's line length)."""
        return self.base_column + depth * INDENT_WIDTH + len(line) <= MAX_LINE_LENGTH

    def returned(self, value: str, depth: int) -> cst.BaseStatement:
        """``return value`` as a statement at ``depth``, split over lines as black would
        when it does not fit."""
        self.edit.column = self.base_column + depth * INDENT_WIDTH
        return cst.parse_statement(self.edit.return_source(value) + "\n")

    def call(self, prefix: str, function: str, arguments: list[str], depth: int) -> cst.BaseStatement:
        """``prefix + function(arguments...)`` as a statement at ``depth``, split over lines
        as black would when it does not fit."""
        self.edit.column = self.base_column + depth * INDENT_WIDTH + len(prefix)
        self.edit.indent = self.base_column + depth * INDENT_WIDTH
        try:
            return cst.parse_statement(prefix + self.edit.call_source(function, arguments) + "\n")
        finally:
            self.edit.indent = None
