"""``# jitfix: ignore``, ``# jitfix: ignore[JF401]``, ``# noqa: JF401`` and bare ``# noqa`` comments.

On a line, a comment suppresses the findings that start (or end) on that line; on a
``def`` line (or one of its decorators), it suppresses every finding in the function.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import TYPE_CHECKING

from jitfix.files import source_lines
from jitfix.findings import Finding

if TYPE_CHECKING:
    from jitfix.analysis.blocks import FunctionNode

_IGNORE = re.compile(r"#\s*jitfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>JF\d*(?:[\s,]+JF\d*)*)", re.IGNORECASE)
_BARE_NOQA = re.compile(r"#\s*noqa\b(?!\s*:)", re.IGNORECASE)  # every code, as for ruff and flake8

ALL = frozenset({"JF"})  # a bare "# jitfix: ignore" matches every code by prefix


def _codes(text: str) -> frozenset[str]:
    return frozenset(code.strip().upper() for code in re.split(r"[\s,]+", text) if code.strip())


def line_suppressions(text: str) -> dict[int, frozenset[str]]:
    """Line number -> code prefixes suppressed there. Cheap: only lines that mention it."""
    if "jitfix" not in text and "noqa" not in text.lower():
        return {}
    result: dict[int, frozenset[str]] = {}
    for number, line in enumerate(source_lines(text), start=1):
        if "#" not in line:
            continue
        codes: set[str] = set()
        for match in _IGNORE.finditer(line):
            codes |= _codes(match["codes"]) if match["codes"] else ALL
        for match in _NOQA.finditer(line):
            codes |= _codes(match["codes"])
        if _BARE_NOQA.search(line):
            codes |= ALL
        if codes:
            result[number] = frozenset(codes)
    return result


def _matches(code: str, prefixes: frozenset[str]) -> bool:
    return any(code.startswith(prefix) for prefix in prefixes)


def filter_suppressed(findings: list[Finding], text: str, functions: list[FunctionNode]) -> list[Finding]:
    by_line = line_suppressions(text)
    if not by_line:
        return findings
    # A function's header spans its decorators through the line that ends the signature.
    ranges: list[tuple[int, int, frozenset[str]]] = []
    for function in functions:
        first = min([function.lineno] + [decorator.lineno for decorator in function.decorator_list])
        header_end = function.body[0].lineno - 1 if function.body else function.lineno
        for line in range(first, max(header_end, function.lineno) + 1):
            if line in by_line:
                ranges.append((function.lineno, function.end_lineno or function.lineno, by_line[line]))
    kept = []
    for finding in findings:
        codes = by_line.get(finding.line, frozenset()) | by_line.get(finding.end_line, frozenset())
        if _matches(finding.code, codes):
            continue
        if any(start <= finding.line <= end and _matches(finding.code, prefixes) for start, end, prefixes in ranges):
            continue
        kept.append(finding)
    return kept


# -- writing suppressions (check --add-ignore) -------------------------------------------------

def _lines_without_room(text: str) -> set[int]:
    """Lines a trailing comment would break: inside a multi-line string, or continued by ``\\``."""
    blocked = {number for number, line in enumerate(source_lines(text), start=1) if line.rstrip().endswith("\\")}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] != token.end[0] and token.type not in (tokenize.NL, tokenize.NEWLINE):
                blocked.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        pass
    return blocked


def add_ignores(text: str, findings: list[Finding]) -> tuple[str, list[Finding]]:
    """``text`` with a ``# jitfix: ignore[...]`` comment for each finding (on its first line,
    else its last), merged into one already there; and the findings no line could take."""
    blocked = _lines_without_room(text)
    lines = text.splitlines(keepends=True)
    wanted: dict[int, set[str]] = {}
    left = []
    for finding in findings:
        line = next((n for n in (finding.line, finding.end_line) if n not in blocked and 0 < n <= len(lines)), None)
        if line is None:
            left.append(finding)
        else:
            wanted.setdefault(line, set()).add(finding.code)
    for number, codes in wanted.items():
        lines[number - 1] = _with_ignore(lines[number - 1], codes)
    return "".join(lines), left


def _with_ignore(line: str, codes: set[str]) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body):]
    existing = _IGNORE.search(body)
    if existing and existing["codes"] is None:
        return line  # a bare ignore already covers every code
    if existing:
        merged = sorted(_codes(existing["codes"]) | codes)
        return body[:existing.start()] + f"# jitfix: ignore[{', '.join(merged)}]" + body[existing.end():] + ending
    return f"{body.rstrip()}  # jitfix: ignore[{', '.join(sorted(codes))}]{ending}"
