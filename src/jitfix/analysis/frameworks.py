"""What the finder knows of frameworks that call a user's function for them: a flax linen
module's ``apply``/``init`` runs its ``__call__`` (or the ``method=`` named), a haiku
``transform``'s ``apply``/``init`` runs the transformed function."""

from __future__ import annotations

import ast
from typing import Protocol

from jitfix.analysis.catalogue import FLAX_MODULES, HAIKU_TRANSFORMS
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.scopes import Bound, Scopes


class Finder(Protocol):
    """What the adapters read of the traced-function finder."""

    tree: ast.Module
    imports: ImportTable
    scopes: Scopes

    def function_argument(self, scope: ast.AST, expr: ast.AST, line: int | None = None,
                          depth: int = 0) -> Bound | None: ...


def flax_apply(finder: Finder, scope: ast.AST, model: ast.AST, call: ast.Call) -> Bound | None:
    """``MLP(...).apply(variables, x)`` (or ``model.apply`` of ``model = MLP(...)``, and
    ``init(rng, x)``) of a flax linen module of this module: its ``__call__`` (or the
    ``method=`` named) runs with ``x``."""
    if isinstance(model, ast.Name):
        model = finder.scopes.assignment_before(scope, model.id, call.lineno) or \
            finder.scopes.assignment_before(finder.tree, model.id, 10**9)  # type: ignore[assignment]
    if isinstance(model, ast.Call) and finder.imports.resolve(model.func) in HAIKU_TRANSFORMS:
        return haiku_apply(finder, scope, model, call)
    if not (isinstance(model, ast.Call) and isinstance(model.func, ast.Name)):
        return None
    klass = finder.scopes.lookup_class(scope, model.func.id)
    if klass is None or not any(finder.imports.resolve(base) in FLAX_MODULES for base in klass.bases):
        return None
    chosen = next((k.value for k in call.keywords if k.arg == "method"), None)
    name = chosen.value if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str) else \
        chosen.attr if isinstance(chosen, ast.Attribute) else "__call__" if chosen is None else None
    method = finder.scopes.defs.get(klass, {}).get(name) if name else None
    return Bound(method, 1, skipped=1) if method is not None else None


def haiku_apply(finder: Finder, scope: ast.AST, transformed: ast.Call, call: ast.Call) -> Bound | None:
    """``hk.transform(f).apply(params, rng, x)`` (``transform_with_state``: ``params,
    state, rng``; ``without_apply_rng``: no ``rng``) and ``.init(rng, x)``: ``f`` runs
    with ``x``."""
    takes_rng = True
    if finder.imports.resolve(transformed.func) == "haiku.without_apply_rng" and transformed.args:
        inner = transformed.args[0]
        if not (isinstance(inner, ast.Call) and finder.imports.resolve(inner.func) in HAIKU_TRANSFORMS):
            return None
        transformed, takes_rng = inner, False
    transform = finder.imports.resolve(transformed.func)
    if transform not in ("haiku.transform", "haiku.transform_with_state") or not transformed.args:
        return None
    assert isinstance(call.func, ast.Attribute)
    if call.func.attr == "apply":
        skipped = (2 if transform == "haiku.transform_with_state" else 1) + takes_rng
    else:
        skipped = 1  # init(rng, x)
    bound = finder.function_argument(scope, transformed.args[0], transformed.lineno)
    return Bound(bound.function, bound.positional, bound.keywords, skipped) if bound is not None else None
