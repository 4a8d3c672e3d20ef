"""Settings: what one run is told to check and how to fix (``pyproject.py`` reads them
from ``[tool.jitfix]`` and the command line)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jitfix.files import DEFAULT_MAX_FILE_BYTES

DEFAULT_VALIDATE_TIMEOUT = 300.0  # seconds per module


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("JF",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    config_path: str | None = None
    root: str = "."
    loop_strategy: str = "auto"
    stale_global_fix: str = "auto"
    scan_static_loops: bool = False
    validate_examples: str | None = None
    validate_record: str | None = None
    validate_timeout: float | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    respect_gitignore: bool = True  # walking a folder skips what git ignores
    force_exclude: bool = False  # exclude applies to files named on the command line too
    target_version: tuple[int, int] | None = None  # the Python the code runs on
    # What `jitfix run` saw traced (jitfix.analysis.traced.Observation), as evidence.
    observed: tuple = ()
    # What `jitfix profile` saw recompile for a static argument's new values, as evidence:
    # (real path of the module, first line of the function's code, function, parameter,
    # how many values).
    recompiled_static: tuple[tuple[str, int, str, str, int], ...] = ()

    def with_overrides(self, **overrides: Any) -> Settings:
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


