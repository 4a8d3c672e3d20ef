"""What `check --show-unknown` says: where Python asks for a value's truth, an `int` or a
Python number in a traced function, and the analysis cannot tell whether the value is a
tracer or a Python value (a solver's output, an attribute of an object it cannot follow, a
value from an unknown library). Nothing is reported there by default -- a finding is made only
where the value is proven traced --; this says where proof was missing and why, so a user can
run the program (`jitfix run`, whose observation is proof) or annotate. Opt-in: these are not
findings, and change no count or exit status.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from jitfix.analysis.blocks import walk_body
from jitfix.analysis.values import UNKNOWN_KIND, Verdict

# Python's uses of a value that a tracer cannot serve, by what they ask of it.
_CONVERSIONS = {"int": "an `int`", "float": "a Python number", "bool": "its truth", "range": "an `int`"}


@dataclass(frozen=True)
class UnknownSite:
    path: str
    line: int
    col: int
    function: str
    source: str  # the expression, as written
    wanted: str  # what Python asks of it: "its truth", "an `int`"
    why: str  # why its kind is not known

    def text(self) -> str:
        return (f"{self.path}:{self.line}:{self.col + 1}: unknown: `{self.source}` in `{self.function}` "
                f"(Python needs {self.wanted}): not known to be traced or a Python value: {self.why}")


def unknown_sites(path: str, text: str, settings) -> list[UnknownSite]:
    """The places of the module's traced functions where Python needs a concrete value and
    the analysis cannot tell what the value is (empty for code it does not analyse)."""
    from jitfix.analysis.imports import ImportTable
    from jitfix.analysis.traced import find_traced_functions
    from jitfix.rules.base import ModuleContext
    from jitfix.rules.function_context import function_contexts

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    imports = ImportTable(tree, text)
    if not imports.mentions("jax"):
        return []
    traced = find_traced_functions(tree, imports, text, path)
    module = ModuleContext(path, text, tree, imports, traced, settings)
    found = []
    for entry in function_contexts(module):
        for statement, expr, wanted in _python_uses(entry.traced.node):
            verdict = entry.values_at(statement).verdict(expr)
            if verdict.kind is UNKNOWN_KIND:
                source = module.segment(expr).splitlines()[0] if module.segment(expr) else ast.unparse(expr)
                found.append(UnknownSite(path, expr.lineno, expr.col_offset, entry.traced.qualname,
                                         source[:80], wanted, _reason(verdict)))
    return sorted(set(found), key=lambda site: (site.line, site.col))


def _python_uses(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.stmt, ast.expr, str]]:
    """(statement, value, what Python asks of it) for the tests of ``if``/``while``/``assert``
    and the arguments of ``int``/``float``/``bool``/``range`` in the function's own body."""
    statement: ast.stmt | None = None
    for node in walk_body(function):
        if isinstance(node, ast.stmt):
            statement = node
        if isinstance(node, ast.If | ast.While | ast.Assert):
            yield node, node.test, "its truth"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS \
                and statement is not None and not node.keywords:
            for argument in node.args:
                if not isinstance(argument, ast.Starred):
                    yield statement, argument, _CONVERSIONS[node.func.id]


def _reason(verdict: Verdict) -> str:
    """The first unknown link of the verdict's evidence chain: where the trail went cold."""
    while verdict.via is not None and verdict.via.kind is UNKNOWN_KIND:
        verdict = verdict.via
    return verdict.why
