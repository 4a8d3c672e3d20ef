"""Pinned findings, in the style of ruff's snapshots: what ``jitfix check`` reports on each
fixture's source -- position, code, fixability and message, as users read them -- is kept
in one ``findings.snap`` per fixture folder, a section per fixture. A test compares; with
``pytest --update-snapshots`` it writes the current findings instead (review the diff)."""

from __future__ import annotations

from pathlib import Path

SNAPSHOT_NAME = "findings.snap"
HEADER = ("# What `jitfix check` reports on each fixture's source: line:col code [*] message.\n"
          "# Regenerate with `pytest tests/test_fixtures.py --update-snapshots` and review the diff.\n")


def render(findings) -> list[str]:
    """One line per finding: ``[*]`` marks a safe fix, ``[unsafe]`` a fix for --unsafe-fixes."""
    from jitfix.findings import Safety

    def mark(finding) -> str:
        if finding.fix is None:
            return ""
        return " [*]" if finding.fix.safety is Safety.SAFE else " [unsafe]"

    return [f"{f.line}:{f.col} {f.code}{mark(f)} {f.message}" for f in findings] or ["(no findings)"]


def read(folder: Path) -> dict[str, list[str]]:
    """Sections by fixture name."""
    path = folder / SNAPSHOT_NAME
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        if line.startswith("## "):
            current = sections.setdefault(line[3:], [])
        elif current is not None and line:
            current.append(line)
    return sections


def write(folder: Path, name: str, lines: list[str]) -> None:
    sections = read(folder)
    sections[name] = lines
    body = "".join(f"\n## {key}\n" + "".join(f"{line}\n" for line in sections[key]) for key in sorted(sections))
    (folder / SNAPSHOT_NAME).write_text(HEADER + body, encoding="utf-8")
