"""The modules of one run, as one program: a call into another module of the run is
summarised from that module's source.

``from .utils import is_array`` (or ``from mypkg.utils import ...``, ``import mypkg.utils as
u``) names a function the analysis can read when ``utils.py`` is one of the files the run was
given; any module outside the run stays unknown. Modules are loaded on demand, parsed once
per process, and every module a file's analysis consulted is recorded, so that a cached
result is reused only while those modules are unchanged too.

The other way round, a call from traced code into another module of the run, with tracers
as arguments, is evidence about that module: the called function is traced. Each file's
analysis hands the calls it saw on (``calls_out``); the engine analyses the called modules
again with them (``Settings.observed``).
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Callable, Iterable

from jitfix.analysis.observations import CALLED, Observation
from jitfix.files import InputError, Stamp, read_source
from jitfix.paths import real_path

if TYPE_CHECKING:
    from jitfix.analysis.summaries import ModuleProgram

# How a module's tree and text become its program (``summaries.ModuleProgram.at`` passes it:
# the program is what the summaries read, and this file only finds, reads and keeps modules).
ProgramBuilder = Callable[[ast.Module, str], "ModuleProgram"]

MAX_MODULES = 256  # loaded per process: beyond this, calls into further modules are unknown


def _module_paths(folder: str, dotted: str) -> list[str]:
    """The files ``dotted`` can be, imported from ``folder``: ``a/b.py`` or ``a/b/__init__.py``."""
    base = os.path.join(folder, *dotted.split(".")) if dotted else folder
    return [base + ".py", os.path.join(base, "__init__.py")] if dotted else [os.path.join(base, "__init__.py")]


def import_roots(path: str) -> list[str]:
    """Where an absolute import in the file at ``path`` looks: the file's own folder (a
    script's ``sys.path[0]``), and the folder above its outermost package."""
    folder = os.path.dirname(os.path.abspath(path))
    top = folder
    while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    return [folder] if top == folder else [folder, top]


class Project:
    """The Python files of a run, and the programs of those a file's analysis calls into."""

    def __init__(self, files: Iterable[str], max_file_bytes: int | None = None):
        self.files = frozenset(real_path(path) for path in files if path.endswith(".py"))
        self.max_file_bytes = max_file_bytes
        self._programs: dict[str, ModuleProgram | None] = {}
        self._module_files: dict[tuple[str, str, int], str | None] = {}
        self._stamps: dict[str, Stamp] = {}
        self._consulted: dict[str, Stamp] = {}
        self._calls_out: list[Observation] = []
        self._traced_here: dict[tuple[str, int], tuple[str, ...]] = {}
        self._texts: dict[str, str | None] = {}

    # -- which file an import names --------------------------------------------------------------

    def module_file(self, importer: str, dotted: str, level: int) -> str | None:
        """The file of the run that ``from <level dots><dotted> import ...`` in ``importer``
        reads, if it is one."""
        key = (os.path.dirname(importer), dotted, level)
        if key not in self._module_files:
            self._module_files[key] = self._find_module_file(importer, dotted, level)
        return self._module_files[key]

    def _find_module_file(self, importer: str, dotted: str, level: int) -> str | None:
        if level > 0:
            folder = os.path.dirname(os.path.abspath(importer))
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            folders = [folder]
        else:
            folders = import_roots(importer)
        for folder in folders:
            for candidate in _module_paths(folder, dotted):
                real = real_path(candidate)
                if real in self.files:
                    return real
        return None

    # -- the program of a module -----------------------------------------------------------------

    def program(self, path: str, build: ProgramBuilder) -> ModuleProgram | None:
        """The module at ``path`` as the program ``build`` makes of its tree and text, made
        once (None when it cannot be read or parsed)."""
        if path not in self._programs:
            self._programs[path] = self._load(path, build) if len(self._programs) < MAX_MODULES else None
        if path in self._stamps:
            self._consulted[path] = self._stamps[path]
        return self._programs[path]

    def _load(self, path: str, build: ProgramBuilder) -> ModuleProgram | None:
        try:
            source = read_source(path, self.max_file_bytes) if self.max_file_bytes else read_source(path)
            tree = ast.parse(source.text, filename=path)
        except (InputError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if source.stamp is not None:
            self._stamps[path] = source.stamp
        program = build(tree, source.text)
        program.text = source.text
        return program

    def loaded(self, path: str, text: str) -> ModuleProgram | None:
        """The program of ``path`` if it was loaded as another file's dependency from this
        very text (most imported modules are also analysed themselves: one parse and one
        scope walk serve both)."""
        if not self._programs:
            return None
        program = self._programs.get(real_path(path))
        return program if program is not None and program.text == text else None

    def note_traced_call(self, path: str, function: ast.FunctionDef | ast.AsyncFunctionDef, traced: Iterable[str],
                         static: Iterable[str], via: str, defaults: Iterable[str] = ()) -> None:
        """Traced code calls ``function`` of the module at ``path`` with tracers for ``traced``
        and Python values for ``static`` (literals, ``defaults`` it keeps)."""
        seen = Observation(path, function.name, function.lineno, function.lineno, CALLED, tuple(sorted(traced)),
                           static=tuple(sorted(static)), via=via, defaults=tuple(sorted(defaults)))
        if seen.traced and seen not in self._calls_out:
            self._calls_out.append(seen)

    def text(self, path: str) -> str | None:
        """The source of a file of the run, read once (None if it cannot be read)."""
        if path not in self._texts:
            try:
                self._texts[path] = read_source(path, self.max_file_bytes).text if self.max_file_bytes \
                    else read_source(path).text
            except InputError:
                self._texts[path] = None
        return self._texts[path]

    def note_traced_here(self, function: ast.FunctionDef | ast.AsyncFunctionDef, traced: Iterable[str]) -> None:
        """The module's own analysis found ``function`` staged, with ``traced`` parameters:
        evidence from elsewhere that says no more needs no second analysis."""
        self._traced_here[(function.name, function.lineno)] = tuple(sorted(traced))

    def traced_here(self) -> dict[tuple[str, int], tuple[str, ...]]:
        """The staged functions noted since the last call; forgets them."""
        found, self._traced_here = self._traced_here, {}
        return found

    def calls_out(self) -> list[Observation]:
        """The calls into other modules noted since the last call; forgets them."""
        found, self._calls_out = self._calls_out, []
        return found

    def forget_notes(self) -> None:
        """Forget what the last analysis noted for the run's next steps (its calls out, the
        functions it traced, the modules it read): an editor's analysis has no next file."""
        self.calls_out(), self.traced_here(), self.consulted()

    def consulted(self) -> dict[str, Stamp]:
        """The modules read since the last call, with their stamps (for the cache); forgets them."""
        found, self._consulted = self._consulted, {}
        return found
