"""Finding source files, and reading and writing them without losing anything.

A source file is read as bytes and decoded the way Python itself would (UTF-8 BOM,
then a PEP 263 coding cookie, then UTF-8). The text keeps its own line endings, so
libcst round-trips them; writing encodes with the same codec, puts the BOM back,
and replaces the file atomically — and only if it is still what was read.
"""

from __future__ import annotations

import codecs
import fnmatch
import hashlib
import io
import os
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".jitfix_cache",
        ".ipynb_checkpoints",
        "build",
        "dist",
        "node_modules",
        "site-packages",
    }
)


class InputError(Exception):
    """A file that cannot be processed; the message names the file (and line)."""

    def __init__(self, path: str, message: str, line: int | None = None, col: int | None = None):
        self.path = path
        self.message = message
        self.line = line
        self.col = col
        super().__init__(self.describe())

    def describe(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: {self.message}"


class FileChangedError(InputError):
    """The file on disk is no longer what was read, so it is not overwritten."""


@dataclass(frozen=True)
class SourceFile:
    """The decoded text of a file and everything needed to write it back the same way."""

    path: str
    text: str
    encoding: str
    bom: bool
    digest: str
    mode: int | None = None
    size: int | None = None  # as read: with mtime_ns, what the cache checks before reading again
    mtime_ns: int | None = None

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def _is_virtualenv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file()


def _excluded(path: Path, excludes: tuple[str, ...]) -> bool:
    text = path.as_posix()
    return any(
        fnmatch.fnmatch(text, pattern)
        or fnmatch.fnmatch(path.name, pattern)
        or fnmatch.fnmatch(text, f"*/{pattern}")
        or fnmatch.fnmatch(text, f"{pattern.rstrip('/')}/*")
        or fnmatch.fnmatch(text, f"*/{pattern.rstrip('/')}/*")
        for pattern in excludes
    )


def discover(paths: list[str], excludes: tuple[str, ...] = ()) -> tuple[list[str], list[InputError]]:
    """Expand files and folders into the Python files to process, in a stable order.

    Files named explicitly are always taken (as ruff and black do); folders are walked,
    skipping VCS and cache folders, virtualenvs, build output and configured excludes.
    """
    found: list[str] = []
    errors: list[InputError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_symlink() and not path.exists():
            errors.append(InputError(raw, "broken symbolic link"))
        elif path.is_file():
            found.append(raw)
        elif path.is_dir():
            before = len(found)
            found.extend(_walk(path, excludes))
            if len(found) == before:
                errors.append(InputError(raw, "no Python files found in this folder"))
        else:
            errors.append(InputError(raw, "no such file or folder"))
    unique = list(dict.fromkeys(found))
    return unique, errors


def _walk(root: Path, excludes: tuple[str, ...]) -> list[str]:
    results: list[str] = []
    for folder, dirnames, filenames in os.walk(root):
        here = Path(folder)
        dirnames[:] = sorted(
            name
            for name in dirnames
            if name not in SKIPPED_DIRS
            and not name.endswith(".egg-info")
            and not _is_virtualenv(here / name)
            and not _excluded(here / name, excludes)
        )
        for name in sorted(filenames):
            candidate = here / name
            if name.endswith((".py", ".pyi", ".ipynb")) and not _excluded(candidate, excludes):
                results.append(str(candidate))
    return results


def file_digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode_source(data: bytes, path: str) -> SourceFile:
    """Decode bytes as Python would; raise InputError naming the line of a bad byte."""
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise InputError(path, f"invalid encoding declaration: {error}", line=1) from None
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = data[len(codecs.BOM_UTF8) :] if bom else data
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as error:
        line = body[: error.start].count(b"\n") + 1
        col = error.start - (body.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(
            path, f"cannot decode byte {body[error.start]:#04x} as {encoding}", line=line, col=col
        ) from None
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, digest=file_digest(data))


def read_source(path: str) -> SourceFile:
    try:
        with open(path, "rb") as handle:
            status = os.fstat(handle.fileno())  # before reading: a later change shows as a new time
            data = handle.read()
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a file") from None
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}") from None
    source = decode_source(data, path)
    return SourceFile(
        path=path, text=source.text, encoding=source.encoding, bom=source.bom, digest=source.digest,
        mode=status.st_mode, size=status.st_size, mtime_ns=status.st_mtime_ns,
    )


def write_source(source: SourceFile, new_text: str) -> None:
    """Replace the file with new_text atomically, unless it changed since it was read."""
    data = source.encode(new_text)
    try:
        with open(source.path, "rb") as handle:
            current = handle.read()
    except OSError as error:
        raise FileChangedError(source.path, f"not written: cannot read it again ({error.strerror})") from None
    if file_digest(current) != source.digest:
        raise FileChangedError(source.path, "not written: the file changed on disk since it was read")
    target = Path(source.path)
    # Write next to the target so the final rename stays on one file system (atomic).
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".jitfix-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if source.mode is not None:
            os.chmod(temp_name, source.mode & 0o7777)
        os.replace(temp_name, target.resolve())
    except BaseException:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise
