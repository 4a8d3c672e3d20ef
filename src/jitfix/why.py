"""``jitfix why FILE:LINE``: the analysis's reasoning about one line, as evidence chains.

For the function that holds the line: whether it is traced and how, whether JAX operations
in it are staged, and the kind of each parameter with its reason; then, for each value the
line's statement tests, iterates, converts or passes on, its kind and the chain of reasons
that proves it (``traced <- `.sum()` of a traced array <- `x` is a traced argument of ...``).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import ValueAnalysis

if TYPE_CHECKING:
    from jitfix.analysis.observations import Observation
    from jitfix.analysis.project import Project


def _statements_at(tree: ast.Module, line: int) -> list[ast.stmt]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.stmt) and node.lineno == line]


def _judged_parts(statement: ast.stmt) -> list[ast.AST]:
    """The values of a statement that decide whether it works under jit."""
    if isinstance(statement, ast.If | ast.While):
        return [statement.test]
    if isinstance(statement, ast.For | ast.AsyncFor):
        return [statement.iter]
    if isinstance(statement, ast.Return):
        return [statement.value] if statement.value is not None else []
    if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr):
        value = statement.value
        if value is None:
            return []
        parts: list[ast.AST] = [value]
        if isinstance(value, ast.Call):
            parts += [*value.args, *(keyword.value for keyword in value.keywords)]
        return parts
    return []


def _innermost(functions, line: int):
    holding = [entry for entry in functions if entry.node.lineno <= line <= (entry.node.end_lineno or line)]
    return max(holding, key=lambda entry: entry.node.lineno) if holding else None


def explain(path: str, text: str, line: int, project: Project | None = None,
            evidence: Sequence[Observation] = ()) -> str:
    """The reasoning about ``line``; with the ``project`` a check of the folder would read and
    the ``evidence`` its other modules gave (traced calls into this one), the same answer as
    that check's."""
    tree = ast.parse(text, filename=path)
    imports = ImportTable(tree, text)
    from jitfix.analysis.traced import find_traced_functions

    traced = find_traced_functions(tree, imports, text, path if project is not None else None, project, None,
                                   evidence)
    out: list[str] = []
    entry = _innermost(traced.values(), line)
    if entry is None:
        defs = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.lineno <= line <= (node.end_lineno or line)]
        where = f"`{defs[-1].name}`" if defs else "module level"
        return (f"{path}:{line}: {where} is not traced: no jit, vmap, pmap or lax body reaches it in this "
                "module, so nothing on this line is a tracer (nothing is reported or rewritten).\n")
    out.append(f"{path}:{line}: in `{entry.qualname}`, traced: {entry.how}")
    out.append("  JAX operations here are " + ("staged (under jit every one is a tracer)" if entry.staged
                                                else "not staged (a tracer only where a traced value feeds them)"))
    for name, found in entry.param_verdicts().items():
        out.append(f"  parameter `{name}`: {found.kind.label} -- {found.why}")
    if traced.unentered(entry.qualname, line):
        kept = ", ".join(f"`{name}`" for name in sorted(entry.kept_defaults or ()))
        out.append(f"  tracing never enters this line: a test of parameters every traced call leaves at their "
                   f"defaults ({kept}) skips it (nothing here is reported or rewritten)")
    flow = entry.flow(imports)
    statements = _statements_at(tree, line)
    if not statements:
        out.append(f"  line {line} starts no statement")
    for statement in statements:
        values: ValueAnalysis = flow.at(statement)
        if values.uncertain:
            out.append(f"  this line may not run under tracing: {values.uncertain}")
        for part in _judged_parts(statement):
            found = values.verdict(part)
            out.append(f"  `{ast.unparse(part)}` is {found.kind.label}:")
            out.extend(f"      {'<- ' if index else ''}{reason}" for index, reason in enumerate(found.chain()))
    return "\n".join(out) + "\n"


PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_folder(path: str) -> Path:
    """The folder a check would be run on for ``path``: the nearest one above it that holds
    a pyproject.toml, setup.py, setup.cfg or .git, else the working folder when the file is
    in it, else the file's own folder."""
    file = Path(path).resolve()
    for folder in file.parents:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    here = Path.cwd().resolve()
    return here if here in file.parents else file.parent
