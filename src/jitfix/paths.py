"""A file's real path, the key that tells two spellings of one file apart."""

from __future__ import annotations

import functools
import os


@functools.lru_cache(maxsize=4096)
def _real_folder(folder: str) -> str:
    return os.path.realpath(folder)


def real_path(path: str) -> str:
    """``os.path.realpath``, resolving each folder once: the files of a run share a few
    folders, and ``realpath`` pays one ``lstat`` per component of every path (a tenth of a
    check of a corpus). Only the file's own name is looked at each time. A folder re-linked
    while an editor's server runs keeps its old target until 4096 others were resolved."""
    folder, name = os.path.split(os.path.join(os.getcwd(), path))  # not normalised: `link/..` is resolved
    if name in ("", ".", "..") or os.path.islink(path):
        return os.path.realpath(path)
    return os.path.join(_real_folder(folder), name)
