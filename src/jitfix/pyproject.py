"""Settings as read: ``[tool.jitfix]`` in the nearest pyproject.toml, then command-line flags (and
``--config "key = value"``, which takes any option below).

```toml
[tool.jitfix]
select = ["JF"]              # codes or prefixes to report (extend-select adds to it)
ignore = ["JF401"]           # codes or prefixes to skip (extend-ignore adds to it)
exclude = ["legacy/*"]       # extra paths (glob) not to walk into (extend-exclude adds to it)
per-file-ignores = { "tests/*" = ["JF4"] }
respect-gitignore = true     # walking a folder skips what git ignores
force-exclude = false        # exclude also files named on the command line (pre-commit, editors)
target-version = "py311"     # the Python the code runs on (named when it cannot be parsed;
                             # default: the lower bound of [project] requires-python)
loop-strategy = "auto"       # traced range loops: "lax" (fori_loop), "static" (static_argnames),
                             # "auto" (static where the function is differentiated)
scan-static-loops = false    # also turn loops over the rows of an array into lax.scan
stale-global-fix = "auto"    # JF301: "parameter" (passed at every call), "wrapper" (same-signature
                             # wrapper), "auto" (parameter in scripts, notebooks and private names)
max-file-size = 33554432     # bytes; larger files are named and skipped

[tool.jitfix.validate]       # used by --validate (which runs your code)
examples = "tests/jitfix_examples.py"   # EXAMPLES = {"pkg.mod:function": [(args, kwargs), ...]}
record = "pytest tests/"     # a command whose calls of the rewritten functions become inputs
timeout = 300                # seconds per module
```
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from jitfix.config import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

LOOP_STRATEGIES = ("auto", "lax", "static")
STALE_GLOBAL_FIXES = ("auto", "parameter", "wrapper")
KNOWN_OPTIONS = frozenset({
    "select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude", "per-file-ignores",
    "respect-gitignore", "force-exclude", "target-version", "loop-strategy", "scan-static-loops", "validate",
    "max-file-size", "stale-global-fix"})


class ConfigError(Exception):
    """A pyproject.toml whose [tool.jitfix] table cannot be used."""


def find_pyproject(start: Path) -> Path | None:
    folder = start.resolve()
    if folder.is_file():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            return pyproject
    return None


def _string_list(table: dict, key: str, where: str) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: [tool.jitfix] {key} must be a list of strings")
    return tuple(value)


def load_settings(start: Path) -> Settings:
    """Settings from the nearest pyproject.toml at or above start (defaults if none)."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Settings(root=str(start.resolve() if start.is_dir() else start.resolve().parent))
    return load_config_file(pyproject)


def load_config_file(path: Path) -> Settings:
    """Settings from a named TOML file (``--config FILE``): its ``[tool.jitfix]`` table, as in a
    pyproject.toml; or, in a file of jitfix's options alone (``jitfix.toml``, as ruff reads a
    ``ruff.toml``), its top level. Paths in it are relative to its folder."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as error:
        raise ConfigError(f"{path}: {error}") from None
    tool = document.get("tool", {})
    if isinstance(tool, dict) and "jitfix" in tool or path.name == "pyproject.toml":
        table = tool.get("jitfix", {}) if isinstance(tool, dict) else {}
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.jitfix] must be a table")
    else:
        table = document
    base = Settings(config_path=str(path), root=str(path.resolve().parent),
                    target_version=_required_python(document.get("project")))
    return with_table(base, table, str(path), path.resolve().parent)


def _required_python(project: object) -> tuple[int, int] | None:
    """The oldest Python a `[project]` table's `requires-python` admits (`">=3.12"` -> (3,
    12)), which the code may be written for where [tool.jitfix] names no target-version
    (as ruff reads it); None when it names no lower bound."""
    required = project.get("requires-python") if isinstance(project, dict) else None
    if not isinstance(required, str):
        return None
    bounds = [(3, int(minor)) for minor in re.findall(r"(?:>=|~=|==)\s*3\.(\d+)", required)]
    return max(bounds) if bounds else None


def with_override(settings: Settings, assignment: str) -> Settings:
    """``--config "KEY = VALUE"``: one [tool.jitfix] option in TOML, over what the file says."""
    try:
        table = tomllib.loads(assignment)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"--config {assignment!r}: not a TOML `key = value` ({error})") from None
    return with_table(settings, table, f"--config {assignment!r}", Path(settings.root))


def with_table(settings: Settings, table: dict, where: str, folder: Path) -> Settings:
    """``settings`` with the options of a [tool.jitfix] table (read from ``where``) over them."""
    unknown = sorted(set(table) - KNOWN_OPTIONS)
    if unknown:
        raise ConfigError(f"{where}: unknown [tool.jitfix] option(s): {', '.join(unknown)}")
    changes: dict[str, Any] = {}
    per_file = table.get("per-file-ignores")
    if per_file is not None:
        if not isinstance(per_file, dict):
            raise ConfigError(f"{where}: [tool.jitfix] per-file-ignores must be a table")
        changes["per_file_ignores"] = tuple(
            (pattern, _string_list(per_file, pattern, where) or ()) for pattern in per_file)
    for key, attribute in (("select", "select"), ("ignore", "ignore"), ("exclude", "exclude")):
        value = _string_list(table, key, where)
        if value is not None:
            changes[attribute] = value
    for key, attribute in (("extend-select", "select"), ("extend-ignore", "ignore"), ("extend-exclude", "exclude")):
        value = _string_list(table, key, where)
        if value is not None:
            changes[attribute] = changes.get(attribute, getattr(settings, attribute)) + value
    if "loop-strategy" in table:
        if table["loop-strategy"] not in LOOP_STRATEGIES:
            raise ConfigError(f"{where}: [tool.jitfix] loop-strategy must be one of {', '.join(LOOP_STRATEGIES)}")
        changes["loop_strategy"] = table["loop-strategy"]
    if "stale-global-fix" in table:
        if table["stale-global-fix"] not in STALE_GLOBAL_FIXES:
            raise ConfigError(f"{where}: [tool.jitfix] stale-global-fix must be one of {', '.join(STALE_GLOBAL_FIXES)}")
        changes["stale_global_fix"] = table["stale-global-fix"]
    for key in ("scan-static-loops", "respect-gitignore", "force-exclude"):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"{where}: [tool.jitfix] {key} must be true or false")
            changes[key.replace("-", "_")] = table[key]
    if "max-file-size" in table:
        max_bytes = table["max-file-size"]
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise ConfigError(f"{where}: [tool.jitfix] max-file-size must be a positive number of bytes")
        changes["max_file_bytes"] = max_bytes
    if "target-version" in table:
        changes["target_version"] = parse_target_version(table["target-version"], where)
    if "validate" in table:
        examples, record, timeout = _validate_table(table["validate"], where, folder)
        changes.update(validate_examples=examples, validate_record=record, validate_timeout=timeout)
    for selector in changes.get("select", ()) + changes.get("ignore", ()):
        check_selector(selector, where)
    return replace(settings, **changes)


def parse_target_version(value: object, where: str) -> tuple[int, int]:
    """``"py311"`` -> (3, 11)."""
    match = re.fullmatch(r"py3(\d{1,2})", value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(f"{where}: target-version must be written like \"py311\", not {value!r}")
    return 3, int(match[1])


def check_selector(selector: str, where: str) -> None:
    """A rule code or a prefix of one (``JF``, ``JF4``, ``JF401``); else the error names the
    nearest codes."""
    from jitfix.rules import ALL_RULES, nearest

    codes = [rule.code for rule in ALL_RULES]
    if any(code.startswith(selector) for code in codes):
        return
    near = nearest(selector, codes, at_least=0.8)  # one character off (`JF410`: JF401), not `JF999`: JF509
    hint = f"; did you mean {' or '.join(near)}?" if near else \
        f"; the codes run from {min(codes)} to {max(codes)} (`jitfix rules` lists them)"
    raise ConfigError(f"{where}: {selector!r} is not a rule code or the prefix of one{hint}")


def _validate_table(table: object, where: str, folder: Path) -> tuple[str | None, str | None, float | None]:
    """[tool.jitfix.validate]: (examples file, resolved against the pyproject's folder;
    record command; timeout in seconds)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [tool.jitfix.validate] must be a table")
    unknown = sorted(set(table) - {"examples", "record", "timeout"})
    if unknown:
        raise ConfigError(f"{where}: unknown [tool.jitfix.validate] option(s): {', '.join(unknown)}")
    examples, record, timeout = table.get("examples"), table.get("record"), table.get("timeout")
    for key, value in (("examples", examples), ("record", record)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{where}: [tool.jitfix.validate] {key} must be a string")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not 0 < timeout < float("inf")):
        raise ConfigError(f"{where}: [tool.jitfix.validate] timeout must be a positive number of seconds")
    if examples is not None:
        examples = str(folder / examples)
    return examples, record, float(timeout) if timeout is not None else None
