"""Results of unchanged files, kept between runs under ``.jitfix_cache/``.

One index per jitfix version, settings and run options (any change to those is another
index) maps each file to its size, modification time, content hash and findings. A file
whose size and time are unchanged is answered without being read; one that was touched is
read and answered if its content hash is unchanged; anything else is processed again.
Only results that need nothing written are kept (a file ``fix`` would change is processed
every time). The index is written by the main process only, atomically, at the end of a
run. One that cannot be read -- truncated, from another version of Python, edited by
hand -- counts as empty, never as an error; a read-only checkout simply runs uncached.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import astuple, dataclass
from pathlib import Path

from jitfix import __version__
from jitfix.files import file_digest

FOLDER = ".jitfix_cache"
GITIGNORE = "# Created by jitfix: the cache is local to this checkout.\n*\n"


@dataclass(frozen=True)
class Stamp:
    """What identifies a file's content: size and modification time (cheap), and hash."""

    size: int
    mtime_ns: int
    digest: str


@dataclass
class Cache:
    folder: Path  # .jitfix_cache/<key of version, settings and options>
    entries: dict[str, tuple[Stamp, list]] | None = None
    changed: bool = False

    @classmethod
    def at(cls, root: str, settings: object, options: object) -> Cache:
        key = hashlib.blake2b(repr((__version__, astuple(settings), astuple(options))).encode(),
                              digest_size=12).hexdigest()
        return cls(Path(root) / FOLDER / key)

    def _index(self) -> dict[str, tuple[Stamp, list]]:
        if self.entries is None:
            try:
                entries = pickle.loads((self.folder / "index").read_bytes())
            except Exception:  # missing, corrupt or foreign: start empty
                entries = {}
            self.entries = entries if isinstance(entries, dict) else {}
        return self.entries

    def lookup(self, path: str) -> list | None:
        """The findings stored for ``path`` if its content is unchanged, else None."""
        entry = self._index().get(path)
        if not (isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], Stamp)):
            return None
        stamp, findings = entry
        try:
            status = os.stat(path)
        except OSError:
            return None
        if (status.st_size, status.st_mtime_ns) == (stamp.size, stamp.mtime_ns):
            return findings
        try:
            with open(path, "rb") as handle:
                digest = file_digest(handle.read())
        except OSError:
            return None
        if digest != stamp.digest:
            return None
        self.remember(path, Stamp(status.st_size, status.st_mtime_ns, digest), findings)  # touched only
        return findings

    def remember(self, path: str, stamp: Stamp, findings: list) -> None:
        self._index()[path] = (stamp, findings)
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text(GITIGNORE, encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".index-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(pickle.dumps(self.entries, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(temp, self.folder / "index")
            self.changed = False
        except OSError:
            pass
