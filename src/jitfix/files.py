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
import shutil
import stat
import subprocess
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from jitfix.paths import real_path

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

    def __reduce__(self):
        # Rebuilt from its fields in another process: the default (from ``args``, the one
        # described text) cannot call ``__init__`` and would leave a worker pool waiting.
        return (type(self), (self.path, self.message, self.line, self.col))

    def describe(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        return f"{where}: {self.message}"


class InvalidSyntax(InputError):
    """Code Python's parser rejects (not an indentation error): perhaps syntax of a newer Python."""


class FileChangedError(InputError):
    """The file on disk is no longer what was read, so it is not overwritten."""


@dataclass(frozen=True)
class Stamp:
    """What identifies a file's content: size and times (cheap), and hash."""

    size: int
    mtime_ns: int
    ctime_ns: int
    digest: str


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
    ctime_ns: int | None = None  # cannot be set back by hand (``touch -r`` sets mtime only)

    @property
    def stamp(self) -> Stamp | None:
        """What the cache checks before reading the file again (None for text not read from disk)."""
        if self.size is None or self.mtime_ns is None or self.ctime_ns is None:
            return None
        return Stamp(self.size, self.mtime_ns, self.ctime_ns, self.digest)

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


def discover(paths: list[str], excludes: tuple[str, ...] = (), respect_gitignore: bool = False,
             force_exclude: bool = False) -> tuple[list[str], list[InputError]]:
    """Expand files and folders into the Python files to process, in a stable order.

    Files named explicitly are always taken (as ruff and black do) unless ``force_exclude``;
    folders are walked, skipping VCS and cache folders, virtualenvs, build output, configured
    excludes and (with ``respect_gitignore``) what git ignores there.
    """
    found: list[str] = []
    errors: list[InputError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_symlink() and not path.exists():
            errors.append(InputError(raw, "broken symbolic link"))
        elif path.is_file():
            if not (force_exclude and _excluded(path, excludes)):
                found.append(raw)
        elif path.is_dir():
            walked = _walk(path, excludes, errors)
            if respect_gitignore:
                ignored = git_ignored(path, walked)
                walked = [file for file in walked if file not in ignored]
            if not walked:
                errors.append(InputError(raw, "no Python files found in this folder"))
            found.extend(walked)
        elif path.exists():
            errors.append(InputError(raw, "not a regular file (a FIFO, socket or device is never read)"))
        else:
            errors.append(InputError(raw, "no such file or folder"))
    # One entry per file, however it was named (`a.py`, `./a.py`, a folder holding it).
    unique = list({real_path(path): path for path in reversed(found)}.values())[::-1]
    return unique, errors


GIT_TIMEOUT = 30  # seconds; a git that does not answer is as good as no git


def git_ignored(folder: Path, files: list[str]) -> set[str]:
    """Which of ``files`` (inside ``folder``) git ignores there (``.gitignore``,
    ``.git/info/exclude``, the global excludes). Outside a git work tree, without git, or in a
    folder that git ignores as a whole (named on the command line, so wanted), nothing is."""
    if not files:
        return set()
    names = [os.path.relpath(file, folder) for file in files]
    try:
        answer = subprocess.run(["git", "-C", str(folder), "check-ignore", "--stdin", "-z"],
                                input="\0".join([".", *names]).encode(),
                                capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if answer.returncode not in (0, 1):  # 128: not a git work tree
        return set()
    ignored = set(answer.stdout.decode(errors="surrogateescape").split("\0"))
    if "." in ignored:
        return set()  # the folder named is itself ignored: it was asked for, so all of it is read
    return {file for file, name in zip(files, names) if name in ignored}


def _walk(root: Path, excludes: tuple[str, ...], errors: list[InputError]) -> list[str]:
    results: list[str] = []

    def unreadable(error: OSError) -> None:
        errors.append(InputError(error.filename or str(root), f"cannot read folder: {error.strerror or error}"))

    for folder, dirnames, filenames in os.walk(root, onerror=unreadable):
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
            if name.endswith((".py", ".pyi", ".ipynb")) and not _excluded(candidate, excludes) \
                    and candidate.is_file():  # not a FIFO or a link to a device
                results.append(str(candidate))
    return results


def source_lines(text: str) -> list[str]:
    """A module's lines as Python's parser numbers them, without their ends: split at
    ``\r\n``, ``\r`` and ``\n`` only (``str.splitlines`` splits at a form feed too, and at
    other separators Python reads as spaces, which would number every later line wrong)."""
    lines = io.StringIO(text, newline="").readlines()
    return [line.rstrip("\r\n") for line in lines]


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
    except LookupError:  # `# coding: rot13` names a codec, but not a text encoding
        raise InputError(path, f"unsupported encoding declaration: {encoding}", line=1) from None
    except UnicodeDecodeError as error:
        line = body[: error.start].count(b"\n") + 1
        col = error.start - (body.rfind(b"\n", 0, error.start) + 1) + 1
        raise InputError(
            path, f"cannot decode byte {body[error.start]:#04x} as {encoding}", line=line, col=col
        ) from None
    return SourceFile(path=path, text=text, encoding=encoding, bom=bom, digest=file_digest(data))


# Larger files are refused: a generated module of this size is no one's hand-written JAX.
DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024


def _read_up_to(fd: int, size: int) -> bytes:
    """Up to ``size`` bytes, fewer only at the end of the file (``os.read`` may return less)."""
    parts = []
    while size > 0:
        part = os.read(fd, size)
        if not part:
            break
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def read_source(path: str, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> SourceFile:
    """Read a regular file (never a FIFO or a device: they can block or never end)."""
    data, status = read_regular_file(path, max_bytes)
    source = decode_source(data, path)
    return SourceFile(
        path=path, text=source.text, encoding=source.encoding, bom=source.bom, digest=source.digest,
        mode=status.st_mode, size=status.st_size, mtime_ns=status.st_mtime_ns, ctime_ns=status.st_ctime_ns,
    )


def read_regular_file(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file of at most ``max_bytes`` and its status as it was opened;
    InputError for anything else (a FIFO would block, a device never end: never read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a file") from None
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}") from None
    try:
        status = os.fstat(fd)  # before reading: a later change shows as a new time
        if stat.S_ISDIR(status.st_mode):
            raise InputError(path, "is a folder, not a file")
        if not stat.S_ISREG(status.st_mode):
            raise InputError(path, "not a regular file (a FIFO, socket or device is never read)")
        if status.st_size > max_bytes:
            raise InputError(path, f"not read: {status.st_size:,} bytes is over the limit of {max_bytes:,} "
                                   "(max-file-size in [tool.jitfix])")
        # Sized by the file, not the limit: a read of the limit allocates that much each time.
        data = _read_up_to(fd, min(status.st_size, max_bytes) + 1)
        if len(data) > status.st_size:  # it grew while being read
            data += _read_up_to(fd, max_bytes + 1 - len(data))
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise InputError(path, f"not read: it grew past the limit of {max_bytes:,} bytes while being read")
    return data, status


TEMP_SUFFIX = ".jitfix-tmp"


def write_source(source: SourceFile, new_text: str) -> None:
    """Replace the file with ``new_text``, unless it changed since it was read.

    The target is locked (``fcntl``, advisory) and read again right before the change, so a
    concurrent writer is detected instead of overwritten. A file with one link is replaced
    atomically by a temporary file beside its real target (same file system), with the
    original's mode, owner and group; a file with several hard links is rewritten in place,
    so every link keeps seeing it, all or nothing (``_write_in_place``). Read-only files are
    refused.
    """
    try:
        data = source.encode(new_text)
    except UnicodeEncodeError as error:
        line = new_text[: error.start].count("\n") + 1
        raise InputError(source.path, f"not written: the fix uses {new_text[error.start]!r}, which the "
                                      f"file's encoding ({source.encoding}) cannot hold", line=line) from None
    target = Path(os.path.realpath(source.path))
    try:
        fd = os.open(target, os.O_RDWR)
    except PermissionError:
        raise InputError(source.path, "not written: the file is read-only (or not writable by you)") from None
    except OSError as error:
        raise FileChangedError(source.path, f"not written: cannot open it again ({error.strerror})") from None
    try:
        status = os.fstat(fd)
        if not status.st_mode & 0o222:
            raise InputError(source.path, "not written: the file is read-only")
        _lock(fd, source.path)
        original = _read_all(fd)
        if file_digest(original) != source.digest:
            raise FileChangedError(source.path, "not written: the file changed on disk since it was read")
        if status.st_nlink > 1:
            _write_in_place(fd, data, original, target.parent)
        else:
            _replace(target, data, status, fd, source)
    except OSError as error:
        raise InputError(source.path, f"not written: {error.strerror or error}") from None
    finally:
        os.close(fd)  # releases the lock


def _lock(fd: int, path: str) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise FileChangedError(path, "not written: another program holds a lock on the file") from None


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_in_place(fd: int, data: bytes, original: bytes, folder: Path) -> None:
    """Rewrite a file with several hard links through its descriptor (each link keeps seeing
    it), all or nothing: the new bytes are first written whole to a file beside it (a full
    disk or a file-size limit fails there, before the file is touched), and should the
    rewrite still fail part-way, the original bytes go back (their blocks are the file's)."""
    temp_fd, temp_name = tempfile.mkstemp(prefix=".jitfix-space.", suffix=TEMP_SUFFIX, dir=folder)
    try:
        _overwrite(temp_fd, data)
    finally:
        os.close(temp_fd)
        os.unlink(temp_name)
    try:
        _overwrite(fd, data)
    except OSError:
        _overwrite(fd, original)
        raise


def _overwrite(fd: int, data: bytes) -> None:
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.ftruncate(fd, len(data))
    os.fsync(fd)


def _replace(target: Path, data: bytes, status: os.stat_result, fd: int, source: SourceFile) -> None:
    temp_fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=TEMP_SUFFIX,
                                          dir=target.parent)
    try:
        with os.fdopen(temp_fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp_name, stat.S_IMODE(status.st_mode))
        if hasattr(os, "chown") and (status.st_uid, status.st_gid) != (os.getuid(), os.getgid()):
            try:
                os.chown(temp_name, status.st_uid, status.st_gid)
            except PermissionError:
                pass  # not ours to give away: the file becomes ours, as any editor would leave it
        # Last look before the rename: a write that raced in since the check above is kept.
        if file_digest(_read_all(fd)) != source.digest:
            raise FileChangedError(source.path, "not written: the file changed on disk while being written")
        os.replace(temp_name, target)
    except BaseException:
        try:
            os.unlink(temp_name)
        except OSError:
            pass
        raise


def remove_stale_temporaries(folder: Path) -> None:
    """Delete temporary files that a killed jitfix run left in ``folder`` (their process,
    named in the file name, is gone)."""
    try:
        names = [name for name in os.listdir(folder) if name.endswith(TEMP_SUFFIX) and name.startswith(".")]
    except OSError:
        return
    for name in names:
        parts = name.split(".")
        pid = parts[-3] if len(parts) >= 4 else ""
        if pid.isdigit() and not process_alive(int(pid)):
            try:
                os.unlink(folder / name)
            except OSError:
                pass


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid != 0


# Not copied when `run` and `profile` copy a project to a scratch folder: version control, environments, caches.
SKIPPED = shutil.ignore_patterns(".git", ".hg", ".venv", "venv", "env", "__pycache__", "*.egg-info", "node_modules",
                                 ".jitfix_cache", ".mypy_cache", ".pytest_cache", ".ruff_cache")
