"""The source text of a node: ``ast.get_source_segment``, with each text split into lines once.

``ast.get_source_segment`` splits the whole text on every call, so asking for the segments
of a module's nodes cost a split of the module each: in a long module, a cost that grows with
the square of its length (2,000 lines: 2.8 s of the 3.4 s a check took)."""

from __future__ import annotations

import ast
import io

# The last text split and its lines: a module's segments are asked for one text at a time.
_last_split: tuple[str, list[str]] = ("", [])


def _lines(text: str) -> list[str]:
    """The text's lines, ends kept, as Python's parser counts them (``\\n``, ``\\r\\n``, ``\\r``)."""
    global _last_split
    if _last_split[0] is not text:
        _last_split = (text, io.StringIO(text, newline="").readlines())
    return _last_split[1]


def source_segment(text: str, node: ast.AST, padded: bool = False) -> str | None:
    """What ``ast.get_source_segment(text, node, padded=padded)`` gives: the node's source,
    None where the node has no position (or one past the text's end)."""
    try:
        first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # no position, or an end of None
        return None
    lines = _lines(text)
    if end is None or last >= len(lines):
        return None
    if first == last:
        return lines[first].encode()[start:end].decode(errors="replace")
    before = lines[first].encode()[:start].decode(errors="replace")
    padding = "".join(character if character in "\f\t" else " " for character in before) if padded else ""
    head = padding + lines[first].encode()[start:].decode(errors="replace")
    tail = lines[last].encode()[:end].decode(errors="replace")
    return "".join([head, *lines[first + 1:last], tail])
