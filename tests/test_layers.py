"""The rooms of jitfix and which may import which (docs/architecture.md): every import
statement under src/ -- those inside functions too, which run later but still tie the
modules together; not those under ``if TYPE_CHECKING:``, which never run -- goes down or
sideways, and no modules import each other in a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src"

# Bottom to top: a module may import its own room and the rooms below it. A module is in the
# room of the longest prefix listed.
ROOMS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("jitfix", "jitfix.paths", "jitfix.lazy", "jitfix.naming", "jitfix.findings", "jitfix.files",
                    "jitfix.notebooks", "jitfix.config")),
    ("analysis", ("jitfix.analysis",)),
    ("edits and cache", ("jitfix.cst_text", "jitfix.edits", "jitfix.cache")),
    ("control flow", ("jitfix.control_flow",)),
    ("rules", ("jitfix.rules",)),
    ("engine", ("jitfix.engine", "jitfix.suppress", "jitfix.report", "jitfix.why", "jitfix.unknowns")),
    ("validation", ("jitfix.validate",)),
    ("api", ("jitfix.api",)),
    ("front ends", ("jitfix.cli", "jitfix.cli_options", "jitfix.pyproject", "jitfix.server", "jitfix.run",
                    "jitfix.profile", "jitfix.run_notebook", "jitfix.__main__")),
]
# Loaded into the user's own process before anything else: they import nothing of jitfix.
STANDALONE = ("jitfix.run_hook", "jitfix.validate.recorder_hook")


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SOURCE / "jitfix").rglob("*.py")):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return skipped


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    """The jitfix modules an import statement loads (``from jitfix.x import y`` names the
    module ``jitfix.x.y`` where that is a module, else ``jitfix.x``)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name.split(".")[0] == "jitfix"}
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
    if base.split(".")[0] != "jitfix":
        return set()
    return {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names}


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _type_checking_only(tree)
        graph[module] = {
            target
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
            for target in _imported(module, path.name == "__init__.py", node, known)
            if target in known and target != module
        }
    return graph


def room_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, room index)
    for index, (_, prefixes) in enumerate(ROOMS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_every_module_has_a_room() -> None:
    homeless = [module for module in import_graph() if room_of(module) is None and module not in STANDALONE]
    assert not homeless, f"add these to ROOMS here and to the table in docs/architecture.md: {homeless}"


def test_no_import_goes_up() -> None:
    graph = import_graph()
    upward = [
        f"{module} ({ROOMS[room_of(module)][0]}) imports {target} ({ROOMS[room_of(target)][0]})"  # type: ignore[index]
        for module, targets in sorted(graph.items()) if module not in STANDALONE
        for target in sorted(targets)
        if room_of(target) is not None and room_of(target) > room_of(module)  # type: ignore[operator]
    ]
    assert not upward, "\n".join(upward)


def test_no_modules_import_each_other_in_a_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_hooks_loaded_into_the_users_process_import_nothing_of_jitfix() -> None:
    graph = import_graph()
    assert {module: graph[module] for module in STANDALONE} == {module: set() for module in STANDALONE}


def test_the_check_sees_imports_inside_functions_and_skips_type_checking_ones() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from jitfix.engine import Options\n"
                     "def f():\n    from jitfix.rules import ALL_RULES\n")
    skipped = _type_checking_only(tree)
    known = {"jitfix.engine": Path(), "jitfix.rules": Path()}
    loaded = {target for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and id(node) not in skipped
              for target in _imported("jitfix.config", False, node, known)}
    assert loaded == {"jitfix.rules"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
