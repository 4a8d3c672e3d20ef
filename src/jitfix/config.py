"""Settings: ``[tool.jitfix]`` in the nearest pyproject.toml, then command-line flags.

```toml
[tool.jitfix]
select = ["JF"]              # codes or prefixes to report
ignore = ["JF401"]           # codes or prefixes to skip
exclude = ["legacy/*"]       # extra paths (glob) not to walk into
per-file-ignores = { "tests/*" = ["JF4"] }
loop-strategy = "auto"       # traced range loops: "lax" (fori_loop), "static" (static_argnames),
                             # "auto" (static where the function is differentiated)
scan-static-loops = false    # also turn loops over the rows of an array into lax.scan
max-file-size = 33554432     # bytes; larger files are named and skipped

[tool.jitfix.validate]       # used by --validate (which runs your code)
examples = "tests/jitfix_examples.py"   # EXAMPLES = {"pkg.mod:function": [(args, kwargs), ...]}
record = "pytest tests/"     # a command whose calls of the rewritten functions become inputs
timeout = 300                # seconds per module
```
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from jitfix.files import DEFAULT_MAX_FILE_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


LOOP_STRATEGIES = ("auto", "lax", "static")
DEFAULT_VALIDATE_TIMEOUT = 300.0  # seconds per module


class ConfigError(Exception):
    """A pyproject.toml whose [tool.jitfix] table cannot be used."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("JF",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    config_path: str | None = None
    root: str = "."
    loop_strategy: str = "auto"
    scan_static_loops: bool = False
    validate_examples: str | None = None
    validate_record: str | None = None
    validate_timeout: float | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def with_overrides(self, **overrides: object) -> Settings:
        """Command-line values win over the file; None means "not given"."""
        given = {key: value for key, value in overrides.items() if value is not None}
        return replace(self, **given)

    def is_enabled(self, code: str, path: str | None = None) -> bool:
        if not _matches(code, self.select) or _matches(code, self.ignore):
            return False
        if path is not None:
            for pattern, codes in self.per_file_ignores:
                if _path_matches(path, pattern, self.root) and _matches(code, codes):
                    return False
        return True


def _matches(code: str, selectors: tuple[str, ...]) -> bool:
    return any(code.startswith(selector) for selector in selectors)


def _path_matches(path: str, pattern: str, root: str) -> bool:
    absolute = Path(path).resolve()
    try:
        relative = absolute.relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        relative = Path(path).as_posix()
    return fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(absolute.name, pattern)


def find_pyproject(start: Path) -> Path | None:
    folder = start.resolve()
    if folder.is_file():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            return pyproject
    return None


def _string_list(table: dict, key: str, path: Path) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: [tool.jitfix] {key} must be a list of strings")
    return tuple(value)


def load_settings(start: Path) -> Settings:
    """Settings from the nearest pyproject.toml at or above start (defaults if none)."""
    pyproject = find_pyproject(start)
    if pyproject is None:
        return Settings(root=str(start.resolve() if start.is_dir() else start.resolve().parent))
    try:
        document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{pyproject}: {error}") from None
    tool = document.get("tool", {})
    table = tool.get("jitfix", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.jitfix] must be a table")
    known = {"select", "ignore", "exclude", "extend-exclude", "per-file-ignores", "loop-strategy",
             "scan-static-loops", "validate", "max-file-size"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{pyproject}: unknown [tool.jitfix] option(s): {', '.join(unknown)}")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{pyproject}: [tool.jitfix] per-file-ignores must be a table")
    per_file_ignores = tuple(
        (pattern, _string_list(per_file, pattern, pyproject) or ()) for pattern in per_file
    )
    excludes = (_string_list(table, "exclude", pyproject) or ()) + (
        _string_list(table, "extend-exclude", pyproject) or ()
    )
    strategy = table.get("loop-strategy", "auto")
    if strategy not in LOOP_STRATEGIES:
        raise ConfigError(f"{pyproject}: [tool.jitfix] loop-strategy must be one of {', '.join(LOOP_STRATEGIES)}")
    scan = table.get("scan-static-loops", False)
    if not isinstance(scan, bool):
        raise ConfigError(f"{pyproject}: [tool.jitfix] scan-static-loops must be true or false")
    max_bytes = table.get("max-file-size", DEFAULT_MAX_FILE_BYTES)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ConfigError(f"{pyproject}: [tool.jitfix] max-file-size must be a positive number of bytes")
    examples, record, timeout = _validate_table(table.get("validate", {}), pyproject)
    settings = Settings(
        validate_examples=examples,
        validate_record=record,
        validate_timeout=timeout,
        loop_strategy=strategy,
        scan_static_loops=scan,
        max_file_bytes=max_bytes,
        exclude=excludes,
        per_file_ignores=per_file_ignores,
        config_path=str(pyproject),
        root=str(pyproject.parent),
    )
    return settings.with_overrides(
        select=_string_list(table, "select", pyproject),
        ignore=_string_list(table, "ignore", pyproject),
    )


def _validate_table(table: object, path: Path) -> tuple[str | None, str | None, float | None]:
    """[tool.jitfix.validate]: (examples file, resolved against the pyproject's folder;
    record command; timeout in seconds)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jitfix.validate] must be a table")
    unknown = sorted(set(table) - {"examples", "record", "timeout"})
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.jitfix.validate] option(s): {', '.join(unknown)}")
    examples, record, timeout = table.get("examples"), table.get("record"), table.get("timeout")
    for key, value in (("examples", examples), ("record", record)):
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{path}: [tool.jitfix.validate] {key} must be a string")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or not 0 < timeout < float("inf")):
        raise ConfigError(f"{path}: [tool.jitfix.validate] timeout must be a positive number of seconds")
    if examples is not None:
        examples = str(path.parent / examples)
    return examples, record, float(timeout) if timeout is not None else None
