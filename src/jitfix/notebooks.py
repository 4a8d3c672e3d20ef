"""Jupyter notebooks: the code cells are checked and fixed as one module, as the notebook
runs them top to bottom (a jit in one cell, the function it compiles in another, a global
rebound in a third are all seen together).

The notebook is read with nbformat (which knows every format version and says clearly what
is wrong with a broken file). IPython syntax -- line magics, shell escapes, ``x = !cmd``,
``obj?`` -- is swapped for a placeholder call while the rules run and put back after; a
cell that starts with a cell magic (``%%bash``) is not Python and is left out. A cell whose
first line is indented is read as IPython runs it, without that indent, and given it back. Only the
``source`` of a fixed cell changes: outputs, metadata and ids are untouched, and the JSON is
written back in the layout it was read in (Jupyter's own), so every other byte is the same.
"""

from __future__ import annotations

import difflib
import json
import re
import secrets
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

from jitfix.files import InputError

# Each cell starts after a marker line naming it (1-based, as findings name cells) and a
# nonce drawn for this view, so no text inside a cell can pass for a boundary.
MARKER = "# %% jitfix cell {} {}"
PLACEHOLDER = "__jitfix_magic__({})"
# At the top level a magic becomes a comment, so that imports after it still count as the
# module's import block (where added imports go); in a block it must be a statement.
PLACEHOLDER_CALL = re.compile(r"(?:# )?__jitfix_magic__\((\d+)\)")
# `%timeit f(x)`, `!pip install jax`, `files = !ls`, `x = %env HOME`, `jnp.where?`
LINE_MAGIC = re.compile(r"^(?P<indent>\s*)(?P<target>[\w.,\s]+=\s*)?(?P<magic>[%!].*|[\w.]+\?\??)\s*$")


@dataclass
class CodeView:
    """The code cells as one module (each after a marker line naming its cell), and the
    IPython text each placeholder stands for."""

    text: str
    cells: list[int]  # notebook index of each code cell in the view, in order
    magics: list[str]  # placeholder number -> the IPython text it stands for
    nonce: str = ""
    tails: dict[int, str] = field(default_factory=dict)  # the newlines each cell ended with
    # Cells whose first line is indented: the indent IPython takes off, and their lines as read.
    indents: dict[int, tuple[str, list[str]]] = field(default_factory=dict)

    def restored(self, text: str) -> str:
        return PLACEHOLDER_CALL.sub(lambda match: self.magics[int(match.group(1))], text)

    def readable(self, text: str) -> str:
        """The view as a person reads it: magics back, cell markers without the nonce."""
        return self.restored(text).replace(f" {self.nonce}\n", "\n")

    @property
    def marker_line(self) -> re.Pattern:
        return re.compile(rf"^# %% jitfix cell (\d+) {self.nonce}$", re.MULTILINE)


def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _hide_magics(source: str, magics: list[str]) -> str:
    lines = []
    for line in source.split("\n"):
        match = LINE_MAGIC.match(line)
        if match and not line.lstrip().startswith("#"):
            magics.append(match["magic"])
            placeholder = PLACEHOLDER.format(len(magics) - 1)
            if not match["indent"] and not match["target"]:
                placeholder = "# " + placeholder
            line = f"{match['indent']}{match['target'] or ''}{placeholder}"
        lines.append(line)
    return "\n".join(lines)


def code_view(document: dict) -> CodeView:
    parts: list[str] = []
    cells: list[int] = []
    magics: list[str] = []
    tails: dict[int, str] = {}
    indents: dict[int, tuple[str, list[str]]] = {}
    nonce = secrets.token_hex(8)
    for index, cell in enumerate(document.get("cells", [])):
        source = _cell_source(cell)
        if cell.get("cell_type") != "code" or source.lstrip().startswith("%%"):
            continue
        body = _hide_magics(source, magics)
        indent = _leading_indent(body)
        if indent:
            lines = body.split("\n")
            indents[index] = (indent, lines)
            body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines)
        stripped = body.rstrip("\n")
        tails[index] = body[len(stripped):]
        parts.append(MARKER.format(index + 1, nonce) + "\n" + stripped + "\n")
        cells.append(index)
    return CodeView("".join(parts), cells, magics, nonce, tails, indents)


def _leading_indent(body: str) -> str:
    """The indent of a cell's first line that is not blank, which IPython takes off every line
    that starts with it before it runs the cell (its ``leading_indent`` transform)."""
    first = next((line for line in body.split("\n") if line.strip()), "")
    return first[:len(first) - len(first.lstrip(" \t"))]


def _indented_again(view: CodeView, index: int, body: str) -> str:
    """A cell's body (as the rules saw it) with the indent IPython took off given back: the
    lines as they were read where they are unchanged, the indent on every other line."""
    if index not in view.indents:
        return body
    indent, original = view.indents[index]
    read = [line[len(indent):] if line.startswith(indent) else line for line in original]
    lines = body.split("\n")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=read, b=lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(original[i1:i2])
        else:
            out.extend(indent + line if line.strip() else line for line in lines[j1:j2])
    return "\n".join(out)


def cell_sources(view: CodeView, text: str) -> dict[int, str]:
    """Each code cell's source in a (fixed) view, ending as it ended; imports the fixes
    added above the first cell go into that cell."""
    head, sources = _cell_bodies(view, text)
    sources = {index: body + view.tails.get(index, "") for index, body in sources.items()}
    if head.strip() and view.cells:
        first = view.cells[0]
        sources[first] = head.rstrip("\n") + "\n" + sources.get(first, "")
    return sources


def _cell_bodies(view: CodeView, text: str) -> tuple[str, dict[int, str]]:
    """(the text above the first cell, each code cell's source in the view without the
    newlines it ended with)."""
    pieces = view.marker_line.split(text)
    bodies: dict[int, str] = {}
    for number, body in zip(pieces[1::2], pieces[2::2]):
        index = int(number) - 1
        body = body[1:] if body.startswith("\n") else body
        bodies[index] = view.restored(_indented_again(view, index, body.rstrip("\n")))
    return pieces[0], bodies


def locate(view: CodeView, text: str, line: int) -> tuple[int, int]:
    """(notebook cell index, line within the cell) of a line of a view's text."""
    marker = view.marker_line
    cell, start = 0, 1
    for number, content in enumerate(text.split("\n"), start=1):
        if number > line:
            break
        match = marker.match(content)
        if match:
            cell, start = int(match.group(1)) - 1, number + 1
    return cell, max(line - start + 1, 1)


def read(text: str, path: str) -> dict:
    import nbformat

    try:
        with warnings.catch_warnings():  # nbformat's advice (cells without ids: normalize them)
            warnings.simplefilter("ignore")  # is for code that writes notebooks through it
            notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except Exception as error:  # nbformat raises several kinds for a file that is not a notebook
        raise InputError(path, f"not a readable notebook: {error}") from None
    if notebook.get("nbformat", 0) < 4:
        raise InputError(path, f"notebook format {notebook.get('nbformat')} is too old (open and save it in Jupyter)")
    return json.loads(text)


def _layout(text: str) -> dict | None:
    """The json.dumps arguments that reproduce the file byte for byte, or None: Jupyter's own
    layout (indent 1, sorted keys, non-ASCII kept), and any other indent, key order or
    escaping a tool writes (keys in file order, ``ensure_ascii``, one line)."""
    match = re.search(r"^\{\n( +)\"", text)
    indents = [len(match.group(1))] if match else [None]
    ending = "\n" if text.endswith("\n") else ""
    original = json.loads(text)
    for indent in indents:
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                layout: dict[str, Any] = {"indent": indent, "ensure_ascii": ensure_ascii, "sort_keys": sort_keys}
                if json.dumps(original, **layout) + ending == text:
                    return layout
                compact = {**layout, "separators": (",", ":")}
                if indent is None and json.dumps(original, **compact) + ending == text:
                    return compact
    return None


def write(text: str, document: dict, sources: dict[int, str], path: str) -> str:
    """The notebook's JSON with the given cells' sources replaced and nothing else changed."""
    layout = _layout(text)
    ending = "\n" if text.endswith("\n") else ""
    if layout is None:
        raise InputError(path, "not rewritten: jitfix cannot write the notebook's JSON back in its own "
                               "layout (open and save it in Jupyter first)")
    for index, source in sources.items():
        cell = document["cells"][index]
        if _cell_source(cell) == source:
            continue
        if isinstance(cell.get("source"), list):
            cell["source"] = source.splitlines(keepends=True)
        else:
            cell["source"] = source
    return json.dumps(document, **layout) + ending


def relocate(view: CodeView, findings: list, text: str) -> list:
    """Findings of a view's text, placed at their cell (1-based) and the line within it (and
    the column, in a cell whose indent IPython takes off, on a line given it back)."""
    placed = []
    bodies: dict[int, str] | None = None
    for finding in findings:
        cell, line = locate(view, text, finding.line)
        _, end_line = locate(view, text, finding.end_line)
        col, end_col = finding.col, finding.end_col
        if cell in view.indents:
            bodies = bodies if bodies is not None else _cell_bodies(view, text)[1]
            indent = view.indents[cell][0]
            lines = bodies[cell].split("\n")
            col += len(indent) if line <= len(lines) and lines[line - 1].startswith(indent) else 0
            end_col += len(indent) if end_line <= len(lines) and lines[end_line - 1].startswith(indent) else 0
        message = _lines_placed(view, text, finding.message, cell)
        placed.append(replace(finding, message=message, cell=cell + 1, line=line, end_line=end_line, col=col,
                              end_col=end_col))
    return placed


def _lines_placed(view: CodeView, text: str, message: str, cell: int) -> str:
    """A message's references to lines of the view's text (`wrapped by jax.jit at line
    335`) as the notebook shows them: the line within its cell, and the cell where it is
    another one (`at cell 12, line 3`)."""
    def placed(match: re.Match[str]) -> str:
        other, line = locate(view, text, int(match[1]))
        return f"line {line}" if other == cell else f"cell {other + 1}, line {line}"

    return re.sub(r"\bline (\d+)\b", placed, message)
