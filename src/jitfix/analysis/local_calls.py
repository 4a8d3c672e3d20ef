"""What the calls of a function defined in a traced function pass it.

A helper defined in a traced function and only ever called there (a generated branch of
``lax.cond``, a continuation ``_after_if``, a user's nested ``step``) has parameters whose
values only its calls give: where every call passes an array (or one value, not a
container), so does the parameter. This is what keeps the evidence of a function through
the helpers jitfix's own rewrites make of it.
"""

from __future__ import annotations

import ast
from typing import Iterator

from jitfix.analysis.blocks import walk_body
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import ArrayEvidence, positional_names

Evidence = dict[ast.AST, ArrayEvidence]  # by function node, shared by a module's functions


def array_evidence(traced: TracedFunction, found: Evidence) -> ArrayEvidence:
    """What the function's own bindings, and those of the traced functions around it (for
    the names it closes over), prove to be arrays; and, for a function defined in a traced
    function and only ever called there, the parameters every call passes an array (or one
    value). ``found``: the evidence of the module's functions so far (nested ones share it)."""
    outer = array_evidence(traced.enclosing, found) if traced.enclosing is not None else None
    evidence = _evidence(traced.node, outer, traced.imports, found)
    if not traced.known_arrays <= evidence.known:
        evidence = found[traced.node] = evidence.knowing(traced.known_arrays)
    return evidence


def _evidence(function: ast.FunctionDef | ast.AsyncFunctionDef, outer: ArrayEvidence | None,
              imports: ImportTable | None, found: Evidence) -> ArrayEvidence:
    evidence = found.get(function)
    if evidence is not None:
        return evidence
    # While its calls are read, a call in the function itself proves nothing of it.
    found[function] = ArrayEvidence(function, outer)
    arrays, single = _passed(function, outer, imports, found) if outer is not None else (frozenset(), frozenset())
    evidence = found[function] = ArrayEvidence(function, outer, arrays, single)
    return evidence


def _passed(function: ast.FunctionDef | ast.AsyncFunctionDef, definer: ArrayEvidence, imports: ImportTable | None,
            found: Evidence) -> tuple[frozenset[str], frozenset[str]]:
    """The parameters of ``function`` (a def in ``definer``'s function) that every call
    passes a value certainly an array, and those it passes one value (an operand of
    arithmetic, say: `jnp.asarray` keeps it as it is), when the name is only ever called, or
    made a branch of ``lax.cond``/``lax.switch`` (which calls it with the operands): a
    function handed on elsewhere may get anything."""
    nothing = (frozenset[str](), frozenset[str]())
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or function.args.vararg or function.args.kwarg:
        return nothing
    if not any(node is function for node in walk_body(definer.function)):
        return nothing  # defined in a function that is not traced
    positional = positional_names(function)
    arrays: set[str] | None = None
    single: set[str] | None = None
    for call, caller in _calls_in(definer.function, function, definer, imports, found):
        if call is None:
            return nothing  # the name is read other than as a call, or bound again
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
            return nothing
        passed = {**dict(zip(positional, call.args)), **{k.arg: k.value for k in call.keywords if k.arg}}
        certain = {name for name, value in passed.items() if caller.certain(value, calls=False)}
        one = {name for name, value in passed.items() if caller.one_value(value)}
        arrays = certain if arrays is None else arrays & certain
        single = one if single is None else single & one
    return frozenset(arrays or ()), frozenset(single or ())


def _calls_in(function: ast.FunctionDef | ast.AsyncFunctionDef, target: ast.FunctionDef | ast.AsyncFunctionDef,
              evidence: ArrayEvidence, imports: ImportTable | None,
              found: Evidence) -> Iterator[tuple[ast.Call | None, ArrayEvidence]]:
    """Each read of ``target``'s name in ``function`` and the defs in it, as the call it makes,
    with the array evidence of the function the call is in; None for a read that is not a
    call's function, or another binding of the name."""
    name = target.name
    nodes = list(walk_body(function))
    called = {id(node.func): node for node in nodes if isinstance(node, ast.Call)}
    if imports is not None:
        called.update(_branch_calls(nodes, imports))
    for node in nodes:
        if isinstance(node, ast.Name) and node.id == name:
            call = called.get(id(node)) if isinstance(node.ctx, ast.Load) else None
            yield call, evidence
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name == name and node is not target:
                yield None, evidence  # another function of the same name
            if any(isinstance(child, ast.Name) and child.id == name for child in ast.walk(node)):
                yield from _calls_in(node, target, _evidence(node, evidence, imports, found), imports, found)
        elif isinstance(node, ast.Lambda | ast.ClassDef) and any(
                isinstance(child, ast.Name) and child.id == name for child in ast.walk(node)):
            yield None, evidence  # read where the evidence is not followed


def _branch_calls(nodes: list[ast.AST], imports: ImportTable) -> dict[int, ast.Call]:
    """The call each branch function named in a ``lax.cond(p, f, g, *operands)`` or
    ``lax.switch(i, [f, g], *operands)`` makes, by the id of the name: ``f(*operands)``."""
    found: dict[int, ast.Call] = {}
    for node in nodes:
        if not isinstance(node, ast.Call) or node.keywords or len(node.args) < 2:
            continue
        function = imports.resolve(node.func)
        if function == "jax.lax.cond" and len(node.args) >= 3:
            branches, operands = node.args[1:3], node.args[3:]
        elif function == "jax.lax.switch" and isinstance(node.args[1], ast.List | ast.Tuple):
            branches, operands = node.args[1].elts, node.args[2:]
        else:
            continue
        for branch in branches:
            if isinstance(branch, ast.Name):
                found[id(branch)] = ast.Call(func=branch, args=list(operands), keywords=[])
    return found
