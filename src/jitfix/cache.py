"""Results of unchanged files, kept between runs under ``.jitfix_cache/``.

An entry is keyed by the file's content hash, jitfix's version, the settings and the run's
options, so any change to one of them misses. Only results that need nothing written are
stored (a file ``fix`` would change is processed again). An entry that cannot be read --
truncated, from another version of Python, edited by hand -- is a miss, never an error,
and writing one is best effort (a read-only checkout simply runs uncached).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from dataclasses import astuple, dataclass
from pathlib import Path

from jitfix import __version__

FOLDER = ".jitfix_cache"
GITIGNORE = "# Created by jitfix: the cache is local to this checkout.\n*\n"


@dataclass(frozen=True)
class Cache:
    folder: Path  # .jitfix_cache/<key of version, settings and options>

    @classmethod
    def at(cls, root: str, settings: object, options: object) -> Cache:
        key = hashlib.blake2b(repr((__version__, astuple(settings), astuple(options))).encode(),
                              digest_size=12).hexdigest()
        return cls(Path(root) / FOLDER / key)

    def _entry(self, path: str, digest: str) -> Path:
        # The path is part of the key: findings and their fix diffs name the file.
        name = hashlib.blake2b(f"{path}\0{digest}".encode(), digest_size=16).hexdigest()
        return self.folder / name[:2] / name

    def load(self, path: str, digest: str):
        """The stored findings of this file with this content hash, or None."""
        try:
            data = self._entry(path, digest).read_bytes()
        except OSError:
            return None
        try:
            findings = pickle.loads(data)
        except Exception:  # a corrupt or foreign entry is a miss
            return None
        return findings if isinstance(findings, list) else None

    def store(self, path: str, digest: str, findings: list) -> None:
        entry = self._entry(path, digest)
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text(GITIGNORE, encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(pickle.dumps(findings, protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(temp, entry)
        except OSError:
            pass
