"""Applying findings' edits with libcst, and adding the imports they need.

Kept apart from the engine so that libcst is imported only by runs that change code: a
check of clean files (or one answered from the cache) never pays for it.
"""

from __future__ import annotations

import ast
import difflib
import sys
from dataclasses import replace
from typing import Iterable

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, PositionProvider

from jitfix.analysis.imports import ImportTable
from jitfix.cst_text import code
from jitfix.findings import Edit, EditContext, EditError, Position

# How a missing import is added, for paths that read better imported by name.
PREFERRED_IMPORTS = {
    "jax.lax": ("jax", "lax"),
    "functools.partial": ("functools", "partial"),
    "jax.experimental.checkify": ("jax.experimental", "checkify"),
    "functools.wraps": ("functools", "wraps"),
}
# Modules imported under their conventional alias when the module lacks them.
ALIASED_IMPORTS = {"jax.numpy": "jnp", "numpy": "np"}


def _combined(edits: list[Edit]) -> dict[tuple, Edit]:
    """One edit per node: duplicates (the same fix reached twice) collapse, and edits that
    know how to merge (one per finding, of one function) are merged. Edits of one node by
    different rules do not mix: the first rule's is applied, the others are found again on
    the next round, against the rewritten code."""
    grouped: dict[tuple, list[Edit]] = {}
    for edit in edits:
        grouped.setdefault(edit.target, []).append(edit)
    combined: dict[tuple, Edit] = {}
    for key, group in grouped.items():
        kind = type(group[0].replace)
        same = [edit for edit in group if type(edit.replace) is kind]
        combined[key] = same[0].merge(same) if same[0].merge and len(same) > 1 else same[-1]
    return combined


class _ApplyEdits(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, edits: list[Edit], context: EditContext, lines: list[str], only_around_edits: bool = True):
        super().__init__()
        self.pending = _combined(edits)
        self.only_around_edits = only_around_edits
        self.types = tuple({edit.node_type for edit in edits})
        self.context = context
        self.lines = lines  # of the module being edited
        self.statements: list[int] = []  # the column of each statement the visit is inside

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Only the nodes around an edit are rebuilt: libcst remakes every node it visits,
        # which for a large function cost most of a fix's time.
        where = self.get_metadata(PositionProvider, node, None)
        if isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
            self.statements.append(where.start.column if where is not None else 0)
        if where is None or not self.only_around_edits:
            return True
        decorators = getattr(node, "decorators", ())  # a def's or class's range starts after them
        first = self.get_metadata(PositionProvider, decorators[0]).start if decorators else where.start
        start, end = (first.line, first.column), (where.end.line, where.end.column)
        return any(start <= (line, column) <= end for line, column, *_ in self.pending)

    def _anchor(self, original: cst.CSTNode):
        # A def is found by its name: the node itself starts at its first decorator.
        anchor = original.name if isinstance(original, cst.FunctionDef) else original
        return self.get_metadata(PositionProvider, anchor)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        if isinstance(original, cst.SimpleStatementLine | cst.BaseCompoundStatement) and self.statements:
            self.statements.pop()
        if isinstance(original, self.types):
            where = self._anchor(original)
            start, end = where.start, where.end
            key = (start.line, start.column, type(original))
            edit = self.pending.pop((*key, (end.line, end.column)), None) or self.pending.pop((*key, None), None)
            if edit is not None:
                self.context.column = self.get_metadata(PositionProvider, original).start.column
                replaced = edit.replace(updated, self.context)
                return self._indented_as_its_line(replaced, start.line)
        return updated

    def _indented_as_its_line(self, replaced, line: int):
        """An expression split over lines is laid out relative to its statement (libcst indents
        continuation lines to the enclosing block); one that starts on a continuation line indented
        deeper (an argument of a call already split) is shifted by as much, to sit under it."""
        if not isinstance(replaced, cst.BaseExpression) or not self.statements or not 0 < line <= len(self.lines):
            return replaced
        source = code(replaced)
        text = self.lines[line - 1]
        extra = len(text) - len(text.lstrip()) - self.statements[-1]
        if extra <= 0 or "\n" not in source or '"""' in source or "'''" in source or "\\\n" in source:
            return replaced
        return cst.parse_expression(source.replace("\n", "\n" + " " * extra))


def replaces_statements(edit: Edit) -> bool:
    """Whether the edit replaces a statement (which may become several), not an expression."""
    return issubclass(edit.node_type, cst.BaseStatement | cst.BaseSmallStatement)


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
            if local is None and parent == "functools":  # `functools.partial` where `import functools` is
                local = imports.local_name(module)
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


def apply(text: str, edits: list[Edit], imports: ImportTable, tree: ast.Module | None = None) -> str:
    """``text`` with the edits applied, the imports they need added, and the imports they
    made unused removed."""
    return _without_imports_made_unused(text, _applied(text, edits, imports, tree))


def _without_imports_made_unused(before: str, after: str) -> str:
    """``after`` without the one-name import statements (``import numpy as np``) whose name
    the code used before the edits and no longer uses -- a fix that replaced the last ``np.``
    call leaves no unused import behind -- nor those the edits added for a name nothing reads
    (an edit that asked for it lost its place to an overlapping fix). Imports that were
    unused already are the user's."""
    try:
        old, new = ast.parse(before), ast.parse(after)
    except SyntaxError:
        return after
    used_before, used_after = _names_read(old), _names_read(new)
    imported_before = {ast.dump(statement) for statement in old.body if isinstance(statement, ast.Import | ast.ImportFrom)}
    lines = after.split("\n")
    drop = set()
    for statement in new.body:
        if isinstance(statement, ast.Import | ast.ImportFrom) and len(statement.names) == 1 \
                and statement.lineno == statement.end_lineno:
            alias = statement.names[0]
            name = alias.asname or alias.name.split(".")[0]
            line = lines[statement.lineno - 1]
            added = ast.dump(statement) not in imported_before
            if (name in used_before or added) and name not in used_after and ";" not in line and name != "*":
                drop.add(statement.lineno - 1)
    for index in sorted(drop):  # the last line of its group: the blank line that ended the group goes too
        following = index + 1
        if not _kept_before(lines, drop, index).strip() and following < len(lines) and following not in drop \
                and not lines[following].strip():
            drop.add(following)
    return "\n".join(line for index, line in enumerate(lines) if index not in drop) if drop else after


def _kept_before(lines: list[str], drop: set[int], index: int) -> str:
    """The nearest line before ``index`` that is kept ("" at the top of the file)."""
    earlier = index - 1
    while earlier >= 0 and earlier in drop:
        earlier -= 1
    return lines[earlier] if earlier >= 0 else ""


def _names_read(tree: ast.Module) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _applied(text: str, edits: list[Edit], imports: ImportTable, tree: ast.Module | None = None) -> str:
    """``text`` with the edits applied and the imports they need added.

    libcst costs ~50 times what the stdlib parser does, and most of a large module is not
    edited: given the stdlib ``tree``, only the top-level statements that hold an edit (and
    the leading import block, if imports are added) go through libcst; every other line is
    kept as it is. Edits that do not sit inside one top-level statement of their own fall
    back to the whole module."""
    context = CodemodContext()
    needed = dict.fromkeys(path for edit in edits for path in edit.imports)
    edit_context = EditContext(_spellings(imports, needed, context))
    segments = _segments(text, edits, tree) if tree is not None else None
    if segments is None:
        module = _edited(cst.parse_module(text), edits, edit_context)
        if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
            return _in_isort_order(module.code, AddImportsVisitor(context).transform_module(module).code)
        return module.code
    lines = text.split("\n")
    pieces: list[tuple[int, int, str]] = []  # (first line, last line, new text), 1-based, inclusive
    for (first, last), group in segments.items():
        original = "\n".join(lines[first - 1:last]) + ("\n" if last < len(lines) else "")  # a last line may lack one
        shifted = [replace(edit, start=_shift(edit.start, first), end=edit.end and _shift(edit.end, first))
                   for edit in group]
        pieces.append((first, last, _edited(_header_as_leading_lines(cst.parse_module(original)), shifted,
                                            edit_context).code))
    if context.scratch.get(AddImportsVisitor.CONTEXT_KEY):
        header_end = _header_end(tree)  # type: ignore[arg-type]
        if not header_end or any(first <= header_end for first, _, _ in pieces):
            # No import block (where do new imports go? after any leading comments: libcst
            # knows), or an edit inside it: do the whole module.
            return _applied(text, edits, imports)
        header = "\n".join(lines[:header_end]) + "\n"
        added = AddImportsVisitor(context).transform_module(cst.parse_module(header)).code
        pieces.append((1, header_end, _in_isort_order(header, added)))
    out: list[str] = []
    position = 1  # next original line to copy
    for first, last, new_text in sorted(pieces):
        out.append("".join(line + "\n" for line in lines[position - 1:first - 1]))
        out.append(new_text)
        position = last + 1
    out.append("\n".join(lines[position - 1:]))
    return "".join(out)


def _edited(module: cst.Module, edits: list[Edit], edit_context: EditContext,
            only_around_edits: bool = True) -> cst.Module:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    transformer = _ApplyEdits(edits, edit_context, module.code.split("\n"), only_around_edits)
    try:
        edited = wrapper.visit(transformer)
    except EditError as error:
        raise EditError(f"could not apply a fix: {error}") from None
    except Exception as error:  # a bug in a rule's rendering: the file is left as it was, the rest go on
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise EditError(f"a fix failed to render ({type(error).__name__}: {message})") from None
    if transformer.pending and only_around_edits:  # a node outside the range of one holding it: look everywhere
        return _edited(module, edits, edit_context, only_around_edits=False)
    if transformer.pending:
        missing = ", ".join(f"{line}:{col}" for line, col, _, _ in transformer.pending)
        raise EditError(f"could not locate the code to edit at {missing}")
    return edited


def _shift(position: Position, first: int) -> Position:
    return Position(position.line - first + 1, position.col)


def _statement_lines(statement: ast.stmt) -> tuple[int, int]:
    decorators = getattr(statement, "decorator_list", [])
    first = min([statement.lineno, *(decorator.lineno for decorator in decorators)])
    return first, statement.end_lineno or statement.lineno


def _segments(text: str, edits: list[Edit], tree: ast.Module) -> dict[tuple[int, int], list[Edit]] | None:
    """The edits grouped by the top-level statement (its line span) that holds them, or None
    when that cannot be done cleanly (a carriage-return file, statements sharing a line,
    an edit outside every statement)."""
    if "\r" in text or not tree.body:
        return None
    spans = [_statement_lines(statement) for statement in tree.body]
    for (_, last), (first, _) in zip(spans, spans[1:]):
        if first <= last:
            return None  # `a = 1; b = 2`, or a statement ending where the next starts
    groups: dict[tuple[int, int], list[Edit]] = {}
    for edit in edits:
        end_line = edit.end.line if edit.end else edit.start.line
        span = next((span for span in spans if span[0] <= edit.start.line and end_line <= span[1]), None)
        if span is None:
            return None
        groups.setdefault(span, []).append(edit)
    if not any(edit.with_comments_above for edit in edits):
        return groups
    lines = text.split("\n")
    in_strings = {line for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    return {(_comments_from(lines, first, in_strings) if any(edit.with_comments_above for edit in group) else first,
             last): group for (first, last), group in groups.items()}


def _header_as_leading_lines(segment: cst.Module) -> cst.Module:
    """A segment that starts with comment lines (``Edit.with_comments_above``): libcst reads them
    as the module's header; they are the leading lines of its statement."""
    if not segment.header or not segment.body:
        return segment
    first = segment.body[0]
    return segment.with_changes(header=[], body=[first.with_changes(leading_lines=[*segment.header,
                                                                                    *first.leading_lines]),
                                                 *segment.body[1:]])


def _comments_from(lines: list[str], first: int, in_strings: set[int]) -> int:
    """The first of the comment lines (at the left margin, not inside a string) right above
    line ``first``."""
    while first > 1 and lines[first - 2].startswith("#") and first - 1 not in in_strings:
        first -= 1
    return first


def _in_isort_order(before: str, after: str) -> str:
    """``after`` with the import statements libcst appended (lines ``before`` lacks) moved
    to where isort -- and ruff's ``I`` rules -- put them: in their section (``__future__``,
    the standard library, third-party, relative), straight imports before ``from`` imports,
    by module name; a section the file lacks gets a block of its own."""
    old = set(before.split("\n"))
    lines = after.split("\n")
    # A `from m import a` libcst gave another name stays where it is, names in isort's order.
    widened = {line: _names_in_isort_order(line, old) for line in lines if line not in old
               and _widens_an_import(line, old, set(lines))}
    lines = [widened.get(line, line) for line in lines]
    added = [line for line in lines if line not in old and line not in widened.values()
             and line.startswith(("import ", "from "))]
    if not added:
        return "\n".join(lines)
    lines = _without_added_blank_lines(before.split("\n"), [line for line in lines if line not in added])
    for line in added:
        lines = _with_import(lines, _names_in_isort_order(line, old))
    return "\n".join(lines)


def _widens_an_import(line: str, old: set[str], now: set[str]) -> bool:
    """Whether ``line`` (``from m import a, b``) is the one ``from m import`` line of ``old``
    that is gone from the text ``now``, with names added: the same statement, widened."""
    statement = _parsed_import(line)
    if not isinstance(statement, ast.ImportFrom) or statement.level:
        return False
    prefix = f"from {statement.module} import "
    gone = [text for text in old if text.startswith(prefix) and text not in now]
    return len(gone) == 1 and "(" not in gone[0]


def _names_in_isort_order(line: str, old: set[str]) -> str:
    """``from jax import lax, Array`` (libcst puts a name it adds to a ``from`` import first) as
    isort writes it, ``from jax import Array, lax`` -- where the names the file had there were
    in isort's order already (a user's own order is theirs)."""
    try:
        statement = ast.parse(line).body[0]
    except SyntaxError:
        return line
    if not isinstance(statement, ast.ImportFrom) or statement.level or len(statement.names) < 2:
        return line
    had = next((before.names for text in old if text.startswith(f"from {statement.module} import ")
                and isinstance(before := _parsed_import(text), ast.ImportFrom) and before.module == statement.module),
               None)
    names = [alias.name for alias in statement.names]
    if had is None or [alias.name for alias in had] != sorted((alias.name for alias in had), key=_isort_name_key) \
            or names == sorted(names, key=_isort_name_key):
        return line
    spelled = [f"{alias.name} as {alias.asname}" if alias.asname else alias.name
               for alias in sorted(statement.names, key=lambda alias: _isort_name_key(alias.name))]
    return f"from {statement.module} import {', '.join(spelled)}"


def _parsed_import(text: str) -> ast.stmt | None:
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return None
    return body[0] if body else None


def _isort_name_key(name: str) -> tuple[int, str]:
    """isort's (and ruff's) order of the names of a ``from`` import, by type: CONSTANTS,
    Classes, then the rest, each case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _without_added_blank_lines(before: list[str], after: list[str]) -> list[str]:
    """``after`` without the blank lines libcst put around the imports it appended (after a
    module's leading comment, say): every other line of it is one of ``before``'s."""
    kept: list[str] = []
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
        if tag == "insert" and not any(line.strip() for line in after[j1:j2]):
            continue
        kept.extend(after[j1:j2])
    return kept


def _with_import(lines: list[str], line: str) -> list[str]:
    try:
        statements = [node for node in ast.parse("\n".join(lines)).body if isinstance(node, ast.Import | ast.ImportFrom)]
        new = _import_key(ast.parse(line).body[0])  # type: ignore[arg-type]
    except SyntaxError:
        return lines + [line]
    # In its section where the file has it (in order there, even where the user's sections
    # are not), else where the sections' order puts a block of its own.
    same = [statement for statement in statements if _import_key(statement)[0] == new[0]]
    later = next((statement for statement in same if _import_key(statement) > new), None)
    if later is not None:
        return lines[:later.lineno - 1] + [line] + lines[later.lineno - 1:]
    if same:
        at = same[-1].end_lineno or same[-1].lineno
        return lines[:at] + [line] + lines[at:]
    for statement in statements:
        if _import_key(statement) > new:
            at = statement.lineno - 1
            return lines[:at] + [line, ""] + lines[at:]
    if not statements:
        return _as_first_import(lines, line)
    last = statements[-1]
    at = last.end_lineno or last.lineno
    block = [line] if _import_key(last)[0] == new[0] else ["", line]
    return lines[:at] + block + lines[at:]


def _as_first_import(lines: list[str], line: str) -> list[str]:
    """``lines``, which import nothing, with ``line`` where isort puts a module's imports:
    after its docstring (and any comments above its first statement), a blank line above,
    two below before a def or a class (one before anything else)."""
    body = ast.parse("\n".join(lines)).body
    docstring = body[0] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else None
    rest = body[1:] if docstring is not None else body
    if docstring is not None:
        at = docstring.end_lineno or docstring.lineno
    elif rest:
        first = rest[0]
        decorators = getattr(first, "decorator_list", [])
        at = min([first.lineno, *(decorator.lineno for decorator in decorators)]) - 1
    else:
        at = len(lines)
    head, tail = lines[:at], lines[at:]
    while tail and not tail[0].strip():
        tail = tail[1:]
    above = [""] if head and head[-1].strip() and docstring is not None else []
    below = [""] * (2 if rest and isinstance(rest[0], ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else 1)
    return head + above + [line] + (below + tail if tail else [""])


def _import_key(statement: ast.Import | ast.ImportFrom) -> tuple[int, int, str]:
    """(section, straight before from, module) as isort orders imports."""
    if isinstance(statement, ast.ImportFrom):
        module = statement.module or ""
        if statement.level:
            return 4, 1, module.lower()
        kind = 1
    else:
        module, kind = statement.names[0].name, 0
    top = module.split(".")[0]
    section = 0 if top == "__future__" else 1 if top in sys.stdlib_module_names else 2
    return section, kind, module.lower()


def _header_end(tree: ast.Module) -> int:
    """The last line of the module's leading docstring and imports (0 when there are none)."""
    end = 0
    for index, statement in enumerate(tree.body):
        docstring = index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
            and isinstance(statement.value.value, str)
        if not (docstring or isinstance(statement, ast.Import | ast.ImportFrom)):
            break
        end = statement.end_lineno or statement.lineno
    return end
