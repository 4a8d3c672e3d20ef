"""Findings as text, JSON, GitHub workflow commands, SARIF 2.1.0 and statistics."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from jitfix import __version__
from jitfix.findings import Finding
from jitfix.rules import ALL_RULES, RULES_BY_CODE

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text_line(finding: Finding) -> str:
    marker = " [*]" if finding.fixable else ""
    return f"{finding.path}:{finding.line}:{finding.col}: {finding.code}{marker} {finding.message}"


def to_json(findings: list[Finding]) -> str:
    records = []
    for finding in findings:
        fix = None
        if finding.fix is not None:
            fix = {
                "safety": finding.fix.safety.value,
                "message": finding.fix.description,
                "diff": finding.fix.diff,
            }
        records.append(
            {
                "code": finding.code,
                "name": finding.name,
                "path": finding.path,
                "line": finding.line,
                "col": finding.col,
                "end_line": finding.end_line,
                "end_col": finding.end_col,
                "message": finding.message,
                "function": finding.function,
                "fixable": finding.fixable,
                "fix": fix,
            }
        )
    return json.dumps(records, indent=2)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(finding: Finding) -> str:
    """A GitHub Actions workflow command that annotates the line in the pull request."""
    properties = ",".join(
        f"{key}={_escape_property(str(value))}"
        for key, value in (
            ("file", finding.path),
            ("line", finding.line),
            ("col", finding.col),
            ("endLine", finding.end_line),
            ("endColumn", finding.end_col),
            ("title", f"{finding.code} {finding.name}"),
        )
    )
    return f"::warning {properties}::{_escape_data(f'{finding.code} {finding.message}')}"


def _artifact_uri(path: str) -> str:
    return Path(path).as_posix().removeprefix("./")


def _sarif_fix(finding: Finding) -> dict | None:
    if finding.fix is None or not finding.fix.replacements:
        return None
    replacements = [
        {
            "deletedRegion": {"startLine": part.start_line, "startColumn": 1, "endLine": part.end_line,
                              "endColumn": 1},
            "insertedContent": {"text": part.text},
        }
        for part in finding.fix.replacements
    ]
    return {
        "description": {"text": finding.fix.description},
        "artifactChanges": [
            {"artifactLocation": {"uri": _artifact_uri(finding.path)}, "replacements": replacements}
        ],
    }


def to_sarif(findings: list[Finding]) -> str:
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": f"{rule.doc.what} {rule.doc.why}"},
            "help": {"text": rule.doc.safety},
            "properties": {"fixable": rule.fixable},
        }
        for rule in ALL_RULES
    ]
    index = {rule.code: position for position, rule in enumerate(ALL_RULES)}
    results = []
    for finding in findings:
        result = {
            "ruleId": finding.code,
            "ruleIndex": index.get(finding.code, 0),
            "level": "warning",
            "message": {"text": finding.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _artifact_uri(finding.path)},
                        "region": {
                            "startLine": finding.line,
                            "startColumn": finding.col,
                            "endLine": finding.end_line,
                            "endColumn": finding.end_col,
                        },
                    }
                }
            ],
        }
        fix = _sarif_fix(finding)
        if fix is not None:
            result["fixes"] = [fix]
        results.append(result)
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jitfix",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2)


def statistics(findings: list[Finding]) -> list[str]:
    counts = Counter(finding.code for finding in findings)
    fixable = Counter(finding.code for finding in findings if finding.fixable)
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = RULES_BY_CODE.get(code)
        name = rule.name if rule else ""
        mark = f" ({fixable[code]} fixable)" if fixable[code] else ""
        lines.append(f"{count:5d}  {code}  {name}{mark}")
    return lines


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("s", "x", "sh", "ch")) else f"{count} {word}s"
