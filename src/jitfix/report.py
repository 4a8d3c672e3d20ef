"""Findings as text (concise or full), JSON and JSON lines, GitHub workflow commands, SARIF
2.1.0, JUnit XML, GitLab code quality, markdown, and statistics."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

from jitfix import __version__
from jitfix.findings import Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text_line(finding: Finding) -> str:
    marker = " [*]" if finding.fixable else ""
    return f"{finding.where}: {finding.code}{marker} {finding.message}"


HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,(?P<count>\d+))? \+\d+(?:,\d+)? @@")


def annotated_diff(patch: str, fixed: list[Finding]) -> str:
    """The diff with each hunk header naming the rules whose fixes it holds and what they do
    (``@@ -6,5 +6,5 @@ JF401 print-in-traced-code: replace with jax.debug.print``); a hunk that
    only adds imports says so. The text after a hunk header is free (git shows a function
    name there), so the patch still applies."""
    lines = patch.splitlines(keepends=True)
    for index, line in enumerate(lines):
        match = HUNK.match(line)
        if match is None:
            continue
        start = int(match["start"])
        end = start + max(int(match["count"] if match["count"] is not None else 1), 1)
        inside = [f for f in fixed if start <= f.line < end]
        label = hunk_label(inside)
        if not label and fixed and _only_adds_imports(lines[index + 1:]):
            label = "imports the fixes below use"
        if label:
            lines[index] = match.group(0) + " " + label + line[match.end():].rstrip("\r\n") + "\n"
    return "".join(lines)


def hunk_label(fixed: list[Finding]) -> str:
    """One rule's fix says what it does (``JF401 print-in-traced-code: replace with
    jax.debug.print``); several are listed by code (``JF202, JF602 ×3``)."""
    if not fixed:
        return ""
    descriptions = {f"{f.code} {f.name}: {f.fix.description if f.fix else f.message}" for f in fixed}
    if len(descriptions) == 1:
        return descriptions.pop()
    counts = Counter(finding.code for finding in fixed)
    return ", ".join(code if count == 1 else f"{code} \u00d7{count}" for code, count in sorted(counts.items()))


def _only_adds_imports(hunk: list[str]) -> bool:
    changed = []
    for line in hunk:
        if line.startswith(("@@", "--- ", "+++ ")):
            break
        if line.startswith(("+", "-")):
            changed.append(line)
    return bool(changed) and all(line.startswith("+") and (line[1:].strip() == "" or line[1:].lstrip().startswith(
        ("import ", "from "))) for line in changed)


def full_text(finding: Finding, lines: list[str]) -> str:
    """The finding, the source line(s) it is on with its columns underlined, and its fix
    (what it does, how safe, and the diff) -- ruff's ``full`` format."""
    header = text_line(finding)
    if not lines or finding.cell is not None or not 0 < finding.line <= len(lines):
        return header
    last = min(finding.end_line, finding.line + 3, len(lines))
    width = len(str(last))
    gutter = " " * width + " |"
    shown = [header, gutter]
    for number in range(finding.line, last + 1):
        text = lines[number - 1].rstrip("\r\n")
        shown.append(f"{number:>{width}} | {text}")
        first = finding.col - 1 if number == finding.line else len(text) - len(text.lstrip())
        end = finding.end_col - 1 if number == finding.end_line else len(text)
        shown.append(f"{gutter} {' ' * first}{'^' * max(1, end - first)}")
    if finding.fix is not None:
        shown.append(f"{gutter}")
        shown.append(f"{' ' * width} = help: {finding.fix.description} ({finding.fix.safety.value} fix)")
        if finding.fix.diff:
            shown += ["    " + line for line in finding.fix.diff.rstrip("\n").split("\n")]
    return "\n".join(shown) + "\n"


def to_json(findings: list[Finding], validation=None) -> str:
    """Findings as JSON; with a validation run, each finding of a validated function carries
    that function's validation result."""
    return json.dumps(json_records(findings, validation), indent=2)


def to_json_lines(findings: list[Finding]) -> list[str]:
    """One JSON object per finding, one per line."""
    return [json.dumps(record) for record in json_records(findings)]


def json_records(findings: list[Finding], validation=None) -> list[dict]:
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
                "cell": finding.cell,
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
        if validation is not None:
            records[-1]["validation"] = _validation_of(validation, finding)
    return records


def to_junit(findings: list[Finding]) -> str:
    """JUnit XML: one test suite per file, one failed test case per finding (CI systems
    that read test reports show them)."""
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="jitfix" tests="{max(len(findings), 1)}" failures="{len(findings)}">']
    if not findings:
        lines += ['  <testsuite name="jitfix" tests="1" failures="0">',
                  '    <testcase name="No findings" classname="jitfix"/>', "  </testsuite>"]
    for path, found in by_path.items():
        lines.append(f'  <testsuite name={quoteattr(path)} tests="{len(found)}" failures="{len(found)}">')
        for finding in found:
            name = f"{finding.code} at {finding.where}"
            lines += [f"    <testcase name={quoteattr(name)} classname={quoteattr(path)} line=\"{finding.line}\">",
                      f"      <failure message={quoteattr(finding.message)}>{_xml_text(text_line(finding))}</failure>",
                      "    </testcase>"]
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines)


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def quoteattr(text: str) -> str:
    """An XML attribute value in double quotes (xml.sax.saxutils' own would import urllib)."""
    escaped = _xml_text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
    return f'"{escaped.replace(chr(9), "&#9;")}"'


def to_gitlab(findings: list[Finding]) -> str:
    """GitLab's code quality report. A fingerprint names the finding, not its line, so a
    finding moved by an edit above it is still the same one."""
    seen: Counter[tuple[str, str, str]] = Counter()
    records = []
    for finding in findings:
        key = (finding.path, finding.code, finding.message)
        seen[key] += 1
        fingerprint = hashlib.sha256("\0".join((*key, str(seen[key]))).encode()).hexdigest()[:32]
        records.append({
            "description": f"{finding.code} {finding.message}",
            "check_name": f"{finding.code} {finding.name}",
            "fingerprint": fingerprint,
            "severity": "major",
            "location": {"path": _artifact_uri(finding.path),
                         "lines": {"begin": finding.line, "end": finding.end_line}},
        })
    return json.dumps(records, indent=2)


def _validation_of(validation, finding: Finding) -> dict | None:
    module = validation.for_path(finding.path)
    if module is None or finding.function is None:
        return None
    name = finding.function.split(".")[0]
    function = next((f for f in module.functions if f.function == name), None)
    return function.to_json() if function is not None else None


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(finding: Finding) -> str:
    """A GitHub Actions workflow command that annotates the line in the pull request (a
    notebook's finding annotates the file, naming cell and line: its JSON has no such line)."""
    place = [("line", finding.line), ("col", finding.col), ("endLine", finding.end_line),
             ("endColumn", finding.end_col)] if finding.cell is None else []
    properties = ",".join(
        f"{key}={_escape_property(str(value))}"
        for key, value in (("file", finding.path), *place, ("title", f"{finding.code} {finding.name}"))
    )
    prefix = f"{finding.line_label}: " if finding.cell is not None else ""
    return f"::warning {properties}::{_escape_data(f'{finding.code} {prefix}{finding.message}')}"


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
    from jitfix.rules import ALL_RULES

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
        location: dict[str, object] = {"artifactLocation": {"uri": _artifact_uri(finding.path)}}
        if finding.cell is None:
            location["region"] = {"startLine": finding.line, "startColumn": finding.col,
                                  "endLine": finding.end_line, "endColumn": finding.end_col}
        message = finding.message if finding.cell is None else f"{finding.line_label}: {finding.message}"
        result = {
            "ruleId": finding.code,
            "ruleIndex": index.get(finding.code, 0),
            "level": "warning",
            "message": {"text": message},
            "locations": [{"physicalLocation": location}],
        }
        fix = _sarif_fix(finding) if finding.cell is None else None  # a notebook's fix is not in JSON lines
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


def statistics(findings: list[Finding]) -> list[dict]:
    """Per rule, most found first: code, name, count, and how many ``fix`` fixes."""
    from jitfix.rules import RULES_BY_CODE

    counts = Counter(finding.code for finding in findings)
    fixable = Counter(finding.code for finding in findings if finding.fixable)
    return [{"code": code, "name": RULES_BY_CODE[code].name if code in RULES_BY_CODE else "", "count": count,
             "fixable": fixable[code]}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def statistics_lines(findings: list[Finding]) -> list[str]:
    lines = []
    for row in statistics(findings):
        mark = f" ({row['fixable']} fixable)" if row["fixable"] else ""
        lines.append(f"{row['count']:5d}  {row['code']}  {row['name']}{mark}")
    return lines


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("s", "x", "sh", "ch")) else f"{count} {word}s"


# -- pull-request comment (markdown) ----------------------------------------------------------

def to_markdown(findings: list[Finding], validation=None) -> str:
    """A pull-request comment: a table of findings per rule, then per file a collapsible
    section listing each finding with its rule, its fix as a diff and its validation."""
    from jitfix.rules import RULES_BY_CODE

    if not findings:
        return "### jitfix\n\nNo findings: this code runs under `jax.jit` as written.\n"
    fixable = sum(1 for finding in findings if finding.fixable)
    lines = ["### jitfix", "",
             f"{plural(len(findings), 'finding')}, {fixable} fixable with `jitfix fix`.", "",
             "| Rule | Name | Findings | Fixable |", "|---|---|---|---|"]
    counts = Counter(finding.code for finding in findings)
    for code in sorted(counts):
        rule = RULES_BY_CODE.get(code)
        fixes = sum(1 for finding in findings if finding.code == code and finding.fixable)
        lines.append(f"| {code} | {rule.name if rule else ''} | {counts[code]} | {fixes} |")
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for path, found in by_path.items():
        fixes = sum(1 for finding in found if finding.fixable)
        lines += ["", "<details>", f"<summary><code>{path}</code>: {plural(len(found), 'finding')}, "
                  f"{fixes} fixable</summary>", ""]
        for finding in found:
            lines.append(f"- **{finding.code}** {finding.name}, {finding.line_label}: {_cell(finding.message)}")
            status = _validation_of(validation, finding) if validation is not None else None
            if status is not None:
                lines.append(f"  - validation: {status['status']}" + (f" ({status['reason']})" if status.get("reason") else ""))
            if finding.fix is not None and finding.fix.diff:
                lines += ["", "  ```diff", *[f"  {line}" for line in finding.fix.diff.rstrip("\n").splitlines()],
                          "  ```", ""]
        lines += ["</details>"]
    return "\n".join(lines) + "\n"


# -- migration report (markdown) ---------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def validation_summary(validation) -> str:
    if validation is None:
        return "not run (add `--validate` to run each rewritten function before and after)"
    if not validation.modules:
        return "nothing to validate (no function changed)"
    counts = validation.counts()
    errors = sum(1 for module in validation.modules if module.error)
    text = f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
    if errors:
        text += f", {plural(errors, 'module')} could not be run"
    return text + f" in {validation.seconds:.1f} s" + (f" on {validation.platforms}" if validation.platforms else "")


def migration_report(files, left: list[Finding], validation=None, applied: bool = True) -> str:
    """Every file, every rewrite with its rule and validation evidence, and every finding left
    for a person. ``files`` are engine results; ``applied`` says whether they were written."""
    changed = [result for result in files if result.changed]
    rewrites = sum(len(result.fixed) for result in changed)
    lines = [
        "# jitfix migration report",
        "",
        f"jitfix {__version__}: {plural(len(files), 'file')} processed, {plural(len(changed), 'file')} "
        f"{'changed' if applied else 'to change'}, {plural(rewrites, 'rewrite')}, "
        f"{plural(len(left), 'finding')} left for a person.",
        "",
        f"Validation: {validation_summary(validation)}.",
    ]
    if validation is not None and validation.modules:
        tolerances = next((f.tolerances for m in validation.modules for f in m.functions if f.tolerances), None)
        if tolerances:
            lines.append(f"Values compared with `allclose(rtol={tolerances['rtol']:g}, atol={tolerances['atol']:g})`; "
                         "the reference is the original under `jax.disable_jit()`.")
    lines += ["", "| File | Rewrites | Validation | Left |", "|---|---|---|---|"]
    by_path: dict[str, list[Finding]] = {}
    for finding in left:
        by_path.setdefault(finding.path, []).append(finding)
    shown = [result for result in files if result.changed or result.path in by_path]
    for result in shown:
        module = validation.for_path(result.path) if validation else None
        lines.append(f"| `{result.path}` | {len(result.fixed) if result.changed else 0} | "
                     f"{_module_status(module)} | {len(by_path.get(result.path, []))} |")
    for result in shown:
        lines += ["", f"## `{result.path}`"]
        module = validation.for_path(result.path) if validation else None
        if result.changed and result.fixed:
            lines += ["", "| Line | Rule | Function | Rewrite |", "|---|---|---|---|"]
            for finding in result.fixed:
                description = finding.fix.description if finding.fix else finding.message
                lines.append(f"| {finding.line_label.removeprefix('line ')} | {finding.code} {finding.name} | `{finding.function or ''}` | "
                             f"{_cell(description)} |")
        if module is not None:
            lines += ["", "Validation:"]
            if module.error:
                lines.append(f"- could not run: {module.error}")
            for function in module.functions:
                lines.append(f"- `{function.function}` (line {function.line}): {function.summary()}")
                if function.before:
                    lines.append(f"  - original under jit: {function.before}")
                if function.missed:
                    lines.append(f"  - not reached: {', '.join(function.missed)}")
                for note in function.notes:
                    lines.append(f"  - {note}")
            held = validation.held.get(result.path)
            if held:
                lines.append(f"- not written: the rewrites of {', '.join(f'`{name}`' for name in held)} "
                             "(validation failed or could not prove them)")
            if result.path in validation.held_files:
                lines.append(f"- not written: validation could not run ({validation.held_files[result.path]})")
        if by_path.get(result.path):
            lines += ["", "Left for a person:"]
            lines += [f"- {f.line_label}: {f.code} {f.message}" for f in by_path[result.path]]
    return "\n".join(lines) + "\n"


def _module_status(module) -> str:
    if module is None:
        return "not run"
    if module.error:
        return "error"
    counts = {status: sum(1 for f in module.functions if f.status == status) for status in ("passed", "failed", "skipped")}
    return ", ".join(f"{count} {status}" for status, count in counts.items() if count) or "nothing to run"
