"""Results of unchanged files, kept between runs under ``.jitfix_cache/``.

One index per jitfix version, settings and run options (any change to those is another
index; so is any change to jitfix's own files, as in a checkout installed for development,
whose version stays the same while its code changes) maps each file to its size, modification and change times, content hash and
findings. A file whose size and both times are unchanged is answered without being read
(the change time cannot be set back by hand, so ``touch -r`` after an edit does not fool
it); one that was touched is read and answered if its content hash is unchanged; anything
else is processed again. Only results that need nothing written are kept. The index is
JSON -- data only, checked field by field on reading, never code -- written by the main
process only, atomically, at the end of a run. One that cannot be read or does not check
out counts as empty, never as an error; a read-only checkout simply runs uncached.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import astuple, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from jitfix import __version__
from jitfix.analysis.observations import CALLED, Observation
from jitfix.files import InputError, Stamp, file_digest, process_alive, read_regular_file
from jitfix.findings import Finding, Fix, Replacement, Safety

if TYPE_CHECKING:
    from jitfix.config import Settings
    from jitfix.engine import Options

FOLDER = ".jitfix_cache"
GITIGNORE = "# Created by jitfix: the cache is local to this checkout.\n*\n"
FORMAT = 4  # of the index file
MAX_INDEX_BYTES = 512 * 1024 * 1024  # an index this large is not one jitfix wrote: not read


@dataclass(frozen=True)
class Entry:
    """A file's findings, the stamp of the file they were found in, and the stamps of the
    run's other modules whose functions the analysis summarised."""

    stamp: Stamp
    findings: list[Finding]
    dependencies: dict[str, Stamp]
    # Calls from the file's traced code into other modules of the run (evidence about them).
    calls_out: list[Observation] = field(default_factory=list)


class _Malformed(Exception):
    pass


def _field(data: dict, key: str, kind: type | tuple[type, ...], optional: bool = False):
    value = data.get(key)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise _Malformed(key)
    return value


def _finding_to_json(finding: Finding) -> dict:
    data = {key: getattr(finding, key) for key in
            ("code", "name", "message", "path", "line", "col", "end_line", "end_col", "function", "cell")}
    if finding.fix is not None:
        data["fix"] = {"safety": finding.fix.safety.value, "description": finding.fix.description,
                       "diff": finding.fix.diff,
                       "replacements": [[r.start_line, r.end_line, r.text] for r in finding.fix.replacements]}
    return data


def _finding_from_json(data: object) -> Finding:
    if not isinstance(data, dict):
        raise _Malformed("finding")
    fix = None
    if data.get("fix") is not None:
        raw = _field(data, "fix", dict)
        replacements = []
        for item in _field(raw, "replacements", list):
            if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], int)
                    and isinstance(item[1], int) and isinstance(item[2], str)):
                raise _Malformed("replacement")
            replacements.append(Replacement(*item))
        try:
            safety = Safety(_field(raw, "safety", str))
        except ValueError:
            raise _Malformed("safety") from None
        fix = Fix(safety, _field(raw, "description", str), diff=_field(raw, "diff", str, optional=True),
                  replacements=replacements)
    return Finding(
        code=_field(data, "code", str), name=_field(data, "name", str), message=_field(data, "message", str),
        path=_field(data, "path", str), line=_field(data, "line", int), col=_field(data, "col", int),
        end_line=_field(data, "end_line", int), end_col=_field(data, "end_col", int), fix=fix,
        function=_field(data, "function", str, optional=True), cell=_field(data, "cell", int, optional=True),
    )


def _stamp_from_json(data: object) -> Stamp:
    if not isinstance(data, dict):
        raise _Malformed("stamp")
    return Stamp(_field(data, "size", int), _field(data, "mtime_ns", int), _field(data, "ctime_ns", int),
                 _field(data, "digest", str))


def _stamp_to_json(stamp: Stamp) -> dict:
    return {"size": stamp.size, "mtime_ns": stamp.mtime_ns, "ctime_ns": stamp.ctime_ns, "digest": stamp.digest}


def _call_to_json(seen: Observation) -> dict:
    return {"path": seen.path, "function": seen.function, "line": seen.line, "traced": list(seen.traced),
            "static": list(seen.static), "via": seen.via, "defaults": list(seen.defaults)}


def _call_from_json(data: object) -> Observation:
    if not isinstance(data, dict) or not all(isinstance(name, str) for key in ("traced", "static", "defaults")
                                             for name in _field(data, key, list)):
        raise _Malformed("call")
    line = _field(data, "line", int)
    return Observation(_field(data, "path", str), _field(data, "function", str), line, line, CALLED,
                       tuple(data["traced"]), static=tuple(data["static"]), via=_field(data, "via", str),
                       defaults=tuple(data["defaults"]))


def _entry_from_json(data: object) -> Entry:
    if not isinstance(data, dict):
        raise _Malformed("entry")
    dependencies = {path: _stamp_from_json(stamp) for path, stamp in _field(data, "dependencies", dict).items()}
    return Entry(_stamp_from_json(data), [_finding_from_json(item) for item in _field(data, "findings", list)],
                 dependencies, [_call_from_json(item) for item in _field(data, "calls_out", list)])


def _current(path: str, known: Stamp) -> Stamp | None:
    """The file's stamp now if its content is what ``known`` describes, else None: equal size
    and times answer without reading it; otherwise its content hash decides."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    if (status.st_size, status.st_mtime_ns, status.st_ctime_ns) == (known.size, known.mtime_ns, known.ctime_ns):
        return known
    try:
        with open(path, "rb") as handle:
            digest = file_digest(handle.read())
    except OSError:
        return None
    return Stamp(status.st_size, status.st_mtime_ns, status.st_ctime_ns, digest) if digest == known.digest else None


def _load(data: bytes) -> dict[str, Entry]:
    try:
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            return {}
        files = _field(document, "files", dict)
        return {path: _entry_from_json(entry) for path, entry in files.items()}
    except (ValueError, _Malformed, TypeError, RecursionError):  # (JSON nested past Python's limit)
        return {}


def _dump(entries: dict[str, Entry]) -> bytes:
    files = {
        path: {**_stamp_to_json(entry.stamp), "findings": [_finding_to_json(finding) for finding in entry.findings],
               "dependencies": {other: _stamp_to_json(stamp) for other, stamp in entry.dependencies.items()},
               "calls_out": [_call_to_json(seen) for seen in entry.calls_out]}
        for path, entry in entries.items()
    }
    return json.dumps({"format": FORMAT, "version": __version__, "files": files}).encode()


def _code_stamp() -> tuple[tuple[str, int, int], ...]:
    """The size and modification time of each of jitfix's own source files."""
    package = Path(__file__).parent
    stamps = []
    for path in sorted(package.rglob("*.py")):
        status = path.stat()
        stamps.append((str(path.relative_to(package)), status.st_size, status.st_mtime_ns))
    return tuple(stamps)


@dataclass
class Cache:
    folder: Path  # .jitfix_cache/<key of version, settings and options>
    entries: dict[str, Entry] | None = None
    changed: bool = False

    @classmethod
    def at(cls, root: str, settings: Settings, options: Options) -> Cache:
        key = hashlib.blake2b(repr((__version__, _code_stamp(), astuple(settings), astuple(options))).encode(),
                              digest_size=12).hexdigest()
        return cls(Path(root) / FOLDER / key)

    def _index(self) -> dict[str, Entry]:
        if self.entries is None:
            try:  # (a FIFO, a link to a device or a huge file there is not read: start empty)
                self.entries = _load(read_regular_file(str(self.folder / "index.json"), MAX_INDEX_BYTES)[0])
            except InputError:  # missing or unreadable: start empty
                self.entries = {}
        return self.entries

    def lookup(self, path: str) -> Entry | None:
        """What is stored for ``path`` if its content, and that of every module its analysis
        read, is unchanged; else None."""
        entry = self._index().get(path)
        if entry is None:
            return None
        stamp = _current(path, entry.stamp)
        if stamp is None or any(_current(other, known) is None for other, known in entry.dependencies.items()):
            return None
        if stamp != entry.stamp:
            self.remember(path, stamp, entry.findings, entry.dependencies, entry.calls_out)
        return self._index()[path]

    def remember(self, path: str, stamp: Stamp, findings: list[Finding],
                 dependencies: dict[str, Stamp] | None = None, calls_out: list[Observation] | None = None) -> None:
        self._index()[path] = Entry(stamp, findings, dict(dependencies or {}), list(calls_out or []))
        self.changed = True

    def save(self) -> None:
        if not self.changed or self.entries is None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text(GITIGNORE, encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=f".index-{os.getpid()}-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(_dump(self.entries))
                os.replace(temp, self.folder / "index.json")
            except BaseException:
                os.unlink(temp)
                raise
            self.changed = False
        except OSError:
            pass
        self._remove_leftovers()

    def _remove_leftovers(self) -> None:
        """Temporary index files of runs that were killed before their rename."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        for name in names:
            parts = name.split("-")
            if name.startswith(".index-") and len(parts) >= 3 and parts[1].isdigit() \
                    and not process_alive(int(parts[1])):
                try:
                    os.unlink(self.folder / name)
                except OSError:
                    pass
