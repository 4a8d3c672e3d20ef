"""JF3xx — module state read by traced code.

JF301 a module-level name read by a jitted function and rebound or mutated elsewhere in the
module: the compiled function keeps the value it had when traced. (JF302, the same for state
on ``self``, is in ``attributes.py``.)

Where every caller is in the module (a script, a notebook, a private name), the global
becomes a keyword-only parameter of the jitted function and every call passes it: the
function stays jitted. Elsewhere the fix keeps the function's signature for every caller, in
this module or not: the jitted body moves to ``_name`` and takes the global as an explicit
keyword-only parameter, and ``name`` -- same parameters as before -- calls it with the
global's current value. Either way each call sees the value the global has then, as the
eager code does. ``stale-global-fix`` chooses one of the two for every function.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Iterator, Mapping

from jitfix.analysis.blocks import (
    assigned_names,
    declared_names,
    definitely_assigned,
    kept_on_node,
    local_names,
    method_changes,
    walk_body,
    walk_tree,
)
from jitfix.analysis.catalogue import ARRAY, ONE_ARRAY, function_category
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.project import Project
from jitfix.analysis.summaries import ModuleProgram
from jitfix.analysis.catalogue import GRAD_TRANSFORMS, JIT_TRANSFORMS, TRACING_TRANSFORMS
from jitfix.analysis.scopes import Change
from jitfix.analysis.traced_function import TracedFunction, is_lambda_body
from jitfix.cst_text import code, cst, with_keywords
from jitfix.findings import Edit, EditContext, Finding, Fix, Position, Safety
from jitfix.naming import unique_name
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import name_position
from jitfix.rules.static_arguments import names_source, static_argnames_edit


@dataclass(frozen=True)
class GlobalChange:
    """How a module-level name changes after it is first bound."""

    how: str  # in words, for the finding: "rebound by `global` in `train`"
    at_module_level: bool = False  # rebound by the module's own top-level code only


def changing_globals(tree: ast.Module, candidates: set[str], changes: list[Change],
                     read_attributes: dict[str, set[str | None]] | None = None) -> dict[str, GlobalChange]:
    """Which of the ``candidates`` (module-level names traced code reads) change after they are
    first bound, with how. ``changes`` are the rebinding/mutation sites of the candidates
    (``TracedFunctions.changes_of``). With ``read_attributes`` (how each name is read:
    the attributes, None for a bare read), an attribute write (``FLAGS.verbose = True``)
    counts only for code that reads that attribute or the whole object."""
    counts: dict[str, int] = {}
    definitions: set[str] = set()
    for statement in _module_statements(tree):
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions.add(statement.name)
        elif not isinstance(statement, ast.Import | ast.ImportFrom):
            for name in assigned_names([statement]) & candidates:
                counts[name] = counts.get(name, 0) + (2 if isinstance(statement, ast.AugAssign) else 1)
    changed = {name: GlobalChange("rebound at module level", at_module_level=True)
               for name, count in counts.items() if count > 1}
    # In-place changes count inside functions: at module level they are import-time set-up
    # (registries, primitive attributes) done before anything is called.
    scopes: dict[ast.AST, tuple[set[str], set[str]]] = {}
    for change in changes:
        scope, name, attribute = change.scope, change.name, change.attribute
        if name not in candidates or not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if attribute is not None and read_attributes is not None \
                and not read_attributes.get(name, {None}) & {None, attribute}:
            continue
        if scope not in scopes:
            scopes[scope] = (
                {n for child in walk_body(scope) if isinstance(child, ast.Global) for n in child.names},
                assigned_names(scope.body) | {arg.arg for arg in ast.walk(scope.args) if isinstance(arg, ast.arg)},
            )
        declared, local = scopes[scope]
        if change.declared_global:
            if name in local:
                changed.setdefault(name, GlobalChange(f"rebound by `global` in `{scope.name}`"))
        elif name not in local or name in declared:
            changed.setdefault(name, GlobalChange(f"{change.how} in `{scope.name}`"))
    return {name: how for name, how in changed.items() if name in counts and name not in definitions}


def _module_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Statements that run at module level, inside if/for/with/try blocks too."""
    stack = list(tree.body)
    while stack:
        statement = stack.pop()
        yield statement
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for field_name in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(statement, field_name, None)
                if isinstance(block, list):
                    stack.extend(item for item in block if isinstance(item, ast.stmt))
                    for handler in block:
                        if isinstance(handler, ast.ExceptHandler):
                            stack.extend(handler.body)


def _module_level_names(tree: ast.Module) -> tuple[set[str], bool]:
    """The names the module's own statements assign, and whether one is assigned twice."""
    seen: set[str] = set()
    rebound = False
    for statement in _module_statements(tree):
        if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for name in assigned_names([statement]):
                rebound = rebound or name in seen or isinstance(statement, ast.AugAssign)
                seen.add(name)
    return seen, rebound


def _free_reads(function: ast.FunctionDef | ast.AsyncFunctionDef, parents: Mapping[ast.AST, ast.AST],
                bound: dict[ast.AST, set[str]]) -> list[str]:
    """Names the function reads that are bound neither in it nor in a function around it
    (a closure's names are the enclosing call's, not globals), in order. A name it declares
    `global` (or `nonlocal`) is not among them: it writes it too, which JF402 reports.
    ``bound``: each function's own names, as far as computed (nested functions share them)."""
    local: set[str] = set()
    scope: ast.AST | None = function
    while scope is not None:
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            if scope not in bound:
                bound[scope] = local_names(scope) | declared_names(scope)
            local |= bound[scope]
        scope = parents.get(scope)
    order: list[str] = []
    for node in walk_body(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local \
                and node.id not in order:
            order.append(node.id)
    return order


def _reads_by_traced_function(module: ModuleContext, parents: Mapping[ast.AST, ast.AST]
                              ) -> dict[ast.FunctionDef, list[str]]:
    """The globals each traced function reads. What a def nested in a traced module-level
    function reads counts as that function's: it runs in that function's trace, and a
    parameter of that function is what it then reads (a closure), so the fix goes there."""
    reads: dict[ast.FunctionDef, list[str]] = {}
    nested: list[tuple[ast.FunctionDef, ast.FunctionDef]] = []
    bound: dict[ast.AST, set[str]] = {}
    for traced in module.traced.values():
        if not isinstance(traced.node, ast.FunctionDef) or traced.from_elsewhere:
            continue  # traced only by another module's call: whether that call is jitted, and
            # cached across the change, is not known here (a switch read while tracing is common)
        if not traced.staged:
            continue  # grad, vmap or jacfwd alone trace again at every call: each reads the global anew
        outermost = _outermost_function(traced.node, parents)
        if outermost is not traced.node and isinstance(outermost, ast.FunctionDef) \
                and outermost in module.tree.body and outermost in module.traced:
            nested.append((traced.node, outermost))
        elif is_lambda_body(traced.node) and outermost is not traced.node:
            continue  # a lambda jitted inside a function that is not traced is made anew by each
            # call, and each trace reads the global afresh (JF502 reports the recompilations)
        else:
            reads[traced.node] = _free_reads(traced.node, parents, bound)
    for inner, outer in nested:
        if outer not in reads:
            reads[outer] = _free_reads(outer, parents, bound)
        known = reads[outer]
        known += [name for name in _free_reads(inner, parents, bound) if name not in known]
    return reads


def _outermost_function(function: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> ast.AST:
    """The outermost def around ``function`` (itself, if none is)."""
    outermost, scope = function, parents.get(function)
    while scope is not None:
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            outermost = scope
        scope = parents.get(scope)
    return outermost


class StaleGlobal(Rule):
    code = "JF301"
    name = "stale-global"
    summary = "a global that changes is frozen into a jitted function at trace time; pass it in"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds module-level names that a jitted function reads and that the module rebinds "
        "(`global x; x = ...`, or at module level after the function was used) or changes in place (`CFG['k'] = ...`, "
        "`.append`, attribute writes), and passes them to the compiled code as arguments. The same for "
        "a global of another module of the run read as `config.LR` when that module rebinds it (a "
        "setter with `global LR`) or changes it in place; a def nested in the jitted function reads "
        "for it. A function only `jax.grad`, `jax.jacfwd` or `jax.vmap` traces is not reported: "
        "they trace it again at every call, so it reads the global's value of the moment.",
        why="`jax.jit` reads a global once, while tracing, and bakes its value into the compiled "
        "function. Later changes are silently ignored (until something forces a retrace).",
        example="SCALE = 1.0\n\n@jax.jit\ndef scaled(x):\n    return x * SCALE\n\ndef set_scale(value):\n"
        "    global SCALE\n    SCALE = value\n",
        fixed="SCALE = 1.0\n\n@jax.jit\ndef _scaled(x, *, SCALE):\n    return x * SCALE\n\n\ndef scaled(x):\n"
        "    return _scaled(x, SCALE=SCALE)\n\ndef set_scale(value):\n    global SCALE\n    SCALE = value\n",
        safety="Safe: `scaled` keeps its parameters, so no caller anywhere changes, and it reads the "
        "global at each call, as the eager code does. Where every caller is in the module (a "
        "script with `if __name__ == \"__main__\":`, a notebook, a private `_name`), the global "
        "instead becomes a keyword-only parameter of the jitted function itself (`def "
        "scaled(x, *, SCALE)`) and every call passes it (`scaled(x, SCALE=SCALE)`), also for "
        "functions jitted by assignment (`f = jax.jit(_f)`, `jax.jit(jax.grad(_f))`); "
        "`stale-global-fix = \"parameter\"` or `\"wrapper\"` chooses one way everywhere. A call "
        "where the global's name is a local, or a use of the function other than a call, keeps "
        "the wrapper (or the finding). A number or array is passed traced; a "
        "string, bool or tuple (configuration that picks code paths) is passed as a static "
        "argument (one compilation per value). Names that never change (constants, modules, "
        "functions) are left alone. A function jitted by assignment under a name other modules may "
        "call (`fast = jax.jit(_scaled)`) gets the same kind of wrapper: `_fast_jitted = "
        "jax.jit(_scaled)` and `def fast(x): return _fast_jitted(x, SCALE=SCALE)` (a public def "
        "wrapped that way keeps its own signature too). Not fixed, with a finding: helpers that are "
        "not jitted themselves, jits other than a decorator or a module-level assignment, "
        "`*args`/`**kwargs` behind a wrapper, other decorators, and globals the function also writes.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        yield from self._own_globals(module)
        yield from self._imported_globals(module)

    def _own_globals(self, module: ModuleContext) -> Iterator[Finding]:
        module_names, rebound = _module_level_names(module.tree)
        changes = module.traced.changes_of(module_names)
        if not rebound and not changes:
            return  # no module-level name ever changes: no global can go stale
        parents = module.traced.parents
        reads = _reads_by_traced_function(module, parents)
        candidates = {name for names in reads.values() for name in names} - set(module.imports.aliases)
        read_attributes = _read_attributes(list(reads), candidates) if candidates else {}
        changing = changing_globals(module.tree, candidates, changes, read_attributes) if candidates else {}
        if not changing:
            return
        for traced in module.traced.values():
            if traced.node not in reads:
                continue
            stale = [name for name in reads[traced.node] if name in changing]
            stale = [name for name in stale if name not in module.imports.aliases
                     and not _used_as_registry(traced.node, name)
                     and (not changing[name].at_module_level
                          or _called_across_a_rebinding(module.tree, module.imports, traced.node, name,
                                                        importable=not module.path.endswith(".ipynb")))]
            if not stale:
                continue
            listed = ", ".join(f"`{name}`" for name in stale)
            hows = "; ".join(f"`{name}` is {changing[name].how}" for name in stale)
            where = f"`{traced.qualname}` reads {listed} at trace time only ({hows})"
            if _changed_inside(traced.node, stale):
                continue  # the function changes the global itself: JF402 says so
            problem = _why_not_fixable(traced, module.tree)
            first_read = min((node for node in ast.walk(traced.node) if isinstance(node, ast.Name)
                              and isinstance(node.ctx, ast.Load) and node.id in stale),
                             key=lambda node: (node.lineno, node.col_offset))
            if problem:
                yield self.finding(module, first_read, f"{where}; not auto-fixable: {problem}", function=traced)
                continue
            opaque = [name for name in stale if not _passable(module.tree, module.imports, name)]
            if opaque:
                listed_opaque = ", ".join(f"`{name}`" for name in opaque)
                yield self.finding(module, first_read, f"{where}; not auto-fixable: {listed_opaque} may hold "
                                   "a function or an object, which jit cannot take as an argument; pass what "
                                   "it computes instead", function=traced)
                continue
            static = [name for name in stale if _is_config(module.tree, name)]
            callers = _callers(module, traced, stale)
            if isinstance(callers, _Callers) and _passes_parameters(module, callers):
                edits = _parameter_edits(module, traced, callers, stale, static)
                if edits is not None:
                    count = len(callers.calls)
                    parameters = "parameters" if len(stale) > 1 else "a parameter"
                    fix = Fix(Safety.SAFE, f"make {listed} {parameters} of `{traced.node.name}`, passed at "
                              f"{'its call' if count == 1 else f'each of its {count} calls'}", edits)
                    yield self.finding(module, first_read, f"{where}; pass {'them' if len(stale) > 1 else 'it'} in",
                                       fix, function=traced)
                    continue
            split = _split_edits(module, traced, callers, stale, static)
            if isinstance(split, str):
                yield self.finding(module, first_read, f"{where}; not auto-fixable: {split}", function=traced)
                continue
            fix = Fix(Safety.SAFE, f"pass {listed} to the compiled function at each call", split)
            yield self.finding(module, first_read, f"{where}; pass {'them' if len(stale) > 1 else 'it'} in",
                               fix, function=traced)


    def _imported_globals(self, module: ModuleContext) -> Iterator[Finding]:
        """Globals of another module of the run that traced code here reads as `config.LR`,
        and that their module rebinds (`global LR` in a function) or changes in place: each
        becomes a parameter, passed as `config.LR` at every call, where the callers are all
        in this module (a script, a notebook, a private name); reported otherwise."""
        program = module.traced.program
        if program is None or program.project is None or program.path is None:
            return
        checked: dict[tuple[str, str], tuple[str, bool] | None] = {}  # each `config.LR` once
        for traced in module.traced.values():
            if not isinstance(traced.node, ast.FunctionDef) or traced.node not in module.tree.body \
                    or traced.from_elsewhere:
                continue
            # (the module's local name, attribute) -> how it changes, and whether it is configuration
            stale: dict[tuple[str, str], tuple[str, bool]] = {}
            reads: list[ast.Attribute] = []
            for read in _module_attribute_reads(traced.node, module.imports):
                key = (read.value.id, read.attr)  # type: ignore[attr-defined]
                if key not in checked:
                    checked[key] = _changing_in_its_module(program, program.project, program.path, read)
                if checked[key] is not None:
                    stale[key] = checked[key]  # type: ignore[assignment]
                    reads.append(read)
            if stale:
                yield self._imported_finding(module, traced, stale, reads)

    def _imported_finding(self, module: ModuleContext, traced: TracedFunction,
                          stale: dict[tuple[str, str], tuple[str, bool]], reads: list[ast.Attribute]) -> Finding:
        listed = ", ".join(f"`{owner}.{name}`" for owner, name in stale)
        hows = "; ".join(f"`{name}` is {how}" for (_, name), (how, _) in stale.items())
        where = f"`{traced.qualname}` reads {listed} at trace time only ({hows})"
        first_read = min(reads, key=lambda node: (node.lineno, node.col_offset))
        problem = _why_not_fixable(traced, module.tree)
        callers = _callers(module, traced, sorted({owner for owner, _ in stale}))
        if problem is None and isinstance(callers, str):
            problem = callers
        if problem is None and not _passes_parameters(module, callers):  # type: ignore[arg-type]
            problem = (f"{' and '.join(f'`{name}`' for name in sorted(callers.names))} may be called by other "  # type: ignore[union-attr]
                       "modules (stale-global-fix = \"parameter\" passes it at every call in this module)")
        if problem is not None:
            return self.finding(module, first_read, f"{where}; not auto-fixable: {problem}", function=traced)
        assert isinstance(callers, _Callers)
        taken = {node.id for node in ast.walk(module.tree) if isinstance(node, ast.Name)}
        parameters = {key: unique_name(key[1], taken) for key in stale}
        edits = [Edit(name_position(module, traced.node), cst.FunctionDef, _ReadsPassedIn(parameters))]
        static = [parameters[key] for key, (_, config) in stale.items() if config]  # strings, bools: static
        for site in traced.jit_sites if static else ():
            static_edit = static_argnames_edit(module, site, static, traced.node)
            if static_edit is None:
                return self.finding(module, first_read, f"{where}; not auto-fixable: the jit's static arguments "
                                    "are not literal", function=traced)
            edits.append(static_edit)
        passed = [(parameter, f"{owner}.{name}") for (owner, name), parameter in parameters.items()]
        for call in callers.calls:
            end = Position(call.end_lineno, module.char_col(call.end_lineno, call.end_col_offset))  # type: ignore[arg-type]
            edits.append(Edit(module.start_of(call), cst.Call, _WithKeywordArguments(passed), end=end))
        count = len(callers.calls)
        fix = Fix(Safety.SAFE, f"make {listed} {'parameters' if len(stale) > 1 else 'a parameter'} of "
                  f"`{traced.node.name}`, passed at {'its call' if count == 1 else f'each of its {count} calls'}", edits)
        return self.finding(module, first_read, f"{where}; pass {'them' if len(stale) > 1 else 'it'} in", fix,
                            function=traced)


def _module_attribute_reads(function: ast.FunctionDef, imports: ImportTable) -> Iterator[ast.Attribute]:
    """``config.LR`` read as a value in the function (or a def in it), ``config`` an imported
    name (``lax.add(x, y)`` calls a function: not a setting)."""
    nodes = list(walk_tree(function))
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    modules = imports.aliases.keys() | imports.relative.keys()
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and id(node) not in called and node.value.id in modules:
            yield node


def _changing_in_its_module(program: ModuleProgram, project: Project, path: str,
                            read: ast.Attribute) -> tuple[str, bool] | None:
    """How ``config.LR`` changes in ``config``, a module of the run (rebound by `global` in a
    function, or changed in place), and whether it is configuration (static); None if it
    does not, or holds what jit cannot take."""
    relative = program.imports.resolve_relative(read.value)
    level, dotted = relative if relative else (0, program.imports.resolve(read.value))
    found = project.module_file(path, dotted, level) if dotted else None
    text = project.text(found) if found is not None else None
    if found is None or text is None or not _may_change(text, read.attr):
        return None  # (read cheaply first: most attributes of a module are its functions)
    owner = ModuleProgram.at(project, found)
    if owner is None:
        return None
    change = changing_globals(owner.tree, {read.attr}, owner.scopes.changes_of([read.attr])).get(read.attr)
    if change is None or change.at_module_level or not _passable(owner.tree, owner.imports, read.attr):
        return None  # (a module's own top level runs once, when it is imported: before any trace)
    return f"{change.how} of {os.path.basename(owner.path or '')}", _is_config(owner.tree, read.attr)


def _may_change(text: str, name: str) -> bool:
    """Whether a module's text could rebind ``name`` from a function (`global name`) or change
    it in place (`name[k] = v`, `name.a = v`, `name.append(v)`): what ``changing_globals``
    looks for, spelled."""
    spelled = re.escape(name)
    return re.search(rf"\bglobal\b[^\n]*\b{spelled}\b|\b{spelled}\s*(\[[^\n]*\]|\.\w+)\s*(=[^=]|\()", text) is not None


class _ReadsPassedIn:
    """``def f(x): ... config.LR ...`` -> ``def f(x, *, LR): ... LR ...``."""

    def __init__(self, parameters: dict[tuple[str, str], str]):
        self.parameters = parameters

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        with_parameters = _WithKeywordParameters(list(self.parameters.values()))(node, context)
        assert isinstance(with_parameters, cst.FunctionDef)
        from jitfix.rules.transformers import AttributeReads

        return with_parameters.with_changes(body=node.body.visit(AttributeReads(self.parameters)))


def _read_attributes(functions: list[ast.FunctionDef], names: set[str]) -> dict[str, set[str | None]]:
    """How traced code reads each name: ``name.attr`` gives ``attr``; any other use, None."""
    found: dict[str, set[str | None]] = {}
    for function in functions:
        attributes = {id(node.value): node.attr for node in walk_body(function)
                      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
        for node in walk_body(function):
            if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                found.setdefault(node.id, set()).add(attributes.get(id(node)))
    return found


def _docstring(node: cst.FunctionDef) -> str:
    """The function's docstring line(s), indented for the wrapper (which callers see)."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) \
            and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString):
        return f"    {code(first.body[0].value)}\n"
    return ""


def _used_as_registry(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """``REGISTRY[key](...)`` or ``REGISTRY.get(key)``, or a table read only by a key the
    code computes (``type(x) in REGISTRY``, ``REGISTRY[node_type]``): a table of code or types
    looked up while tracing, which is what picking code at trace time means, filled by
    registration functions. (Settings are read by a literal key: ``CONFIG["lr"]``.)"""
    parents = {id(child): node for node in walk_body(function) for child in ast.iter_child_nodes(node)}
    reads = [node for node in walk_body(function) if isinstance(node, ast.Name) and node.id == name
             and isinstance(node.ctx, ast.Load)]
    kinds = [_registry_use(read, parents) for read in reads]
    return "call" in kinds or bool(kinds) and all(kinds)


def _registry_use(read: ast.Name, parents: dict[int, ast.AST]) -> str | None:
    """How a read of a table looks it up: ``"call"`` (``T[key](...)``, ``T.get(key)``),
    ``"lookup"`` (by a computed key, or ``key in T``), or None (any other use)."""
    parent = parents.get(id(read))
    if isinstance(parent, ast.Subscript) and parent.value is read:
        if isinstance(parents.get(id(parent)), ast.Call) and parents[id(parent)].func is parent:  # type: ignore[attr-defined]
            return "call"
        return "lookup" if not isinstance(parent.slice, ast.Constant) else None
    if isinstance(parent, ast.Attribute) and parent.attr == "get":
        return "call"
    if isinstance(parent, ast.Compare) and read in parent.comparators \
            and isinstance(parent.ops[parent.comparators.index(read)], ast.In | ast.NotIn):
        return "lookup"
    return None


def _why_not_fixable(traced: TracedFunction, tree: ast.Module) -> str | None:
    """Why neither fix applies, whoever calls the function."""
    function = traced.node
    if function not in tree.body:
        return "only a module-level function is given the global as a parameter"
    if function.decorator_list and (len(function.decorator_list) != 1 or len(traced.jit_sites) != 1):
        return "other decorators or jits would have to be split between two functions"
    if any(isinstance(node, ast.Global) for node in walk_body(function)):
        return "the function writes the global too"
    return None


def _split_edits(module: ModuleContext, traced: TracedFunction, callers: _Callers | str, stale: list[str],
                 static: list[str]) -> list[Edit] | str:
    """The edits that keep every name's signature for every caller while the jitted code
    takes the globals as keyword-only parameters, or why there are none."""
    function = traced.node
    if function.args.vararg or function.args.kwarg:
        return "`*args`/`**kwargs` cannot be forwarded faithfully by a generated wrapper"
    if function.decorator_list:
        return [_split_edit(module, traced, stale, static)]
    assignments = _assignment_jits(module, traced)
    if assignments is None:
        return "the function is not jitted by its own decorator or a module-level assignment here; pass the " \
            "value as an argument"
    if not function.name.startswith("_"):  # other modules may call the def itself: it keeps its signature too
        return [_split_edit(module, traced, stale, []), *_assignment_split_edits(module, traced, assignments, stale,
                                                                                  static)]
    if isinstance(callers, str):
        return callers
    edits = [Edit(name_position(module, function), cst.FunctionDef, _WithKeywordParameters(stale))]
    for call in callers.calls:  # the module's own eager calls of the private def
        if isinstance(call.func, ast.Name) and call.func.id == function.name:
            end = Position(call.end_lineno, module.char_col(call.end_lineno, call.end_col_offset))  # type: ignore[arg-type]
            edits.append(Edit(module.start_of(call), cst.Call, _WithKeywordArguments(stale), end=end))
    return [*edits, *_assignment_split_edits(module, traced, assignments, stale, static)]


def _assignment_jits(module: ModuleContext, traced: TracedFunction) -> list[ast.Assign] | None:
    """The module-level ``step = jax.jit(_step, ...)`` (through grad and the like) that jit
    the function, if every jit of it is one."""
    assignments = []
    for site in traced.jit_sites:
        if not isinstance(site, ast.Call) or not site.args:
            return None
        inner = _through_transparent_transforms(module, site.args[0])
        if _assigned_to(module.tree, site) is None or not (isinstance(inner, ast.Name)
                                                           and inner.id == traced.node.name):
            return None
        assignments += [statement for statement in module.tree.body
                        if isinstance(statement, ast.Assign) and statement.value is site]
    return assignments or None


def _assignment_split_edits(module: ModuleContext, traced: TracedFunction, assignments: list[ast.Assign],
                            stale: list[str], static: list[str]) -> list[Edit]:
    """``f = jax.jit(g)`` -> ``_f_jitted = jax.jit(g)`` and ``def f(x): return
    _f_jitted(x, G=G)`` (``g`` is the def taking ``G``: the def itself if private, else the
    ``_g`` that ``_split_edit`` moves its body to)."""
    function = traced.node
    private = function.name.startswith("_")
    body_name = function.name if private else _split_name(module, function)
    taken = _taken_names(module) | {body_name}
    edits = []
    for assignment in assignments:
        site = assignment.value
        assert isinstance(site, ast.Call)
        if static:
            static_edit = static_argnames_edit(module, site, static, function)
            assert static_edit is not None  # a call site always takes static_argnames
            edits.append(static_edit)
        if not private:
            wrapped = _through_transparent_transforms(module, site.args[0])
            edits.append(Edit(module.start_of(wrapped), cst.Name, _Renamed(body_name)))
        target = assignment.targets[0]
        assert isinstance(target, ast.Name)
        jitted = unique_name(f"_{target.id.lstrip('_')}_jitted", taken)
        taken.add(jitted)
        # No docstring: the name never had the def's own (jit and grad describe what they wrap).
        wrapper = (f"def {target.id}({ast.unparse(function.args)}):\n"
                   f"    return {_forwarding_call(jitted, function.args, stale)}\n")
        edits.append(Edit(module.start_of(assignment), cst.SimpleStatementLine,
                          _RenamedWithWrapper(jitted, wrapper, _blank_lines_after(module.tree, assignment))))
    return edits


class _Renamed:
    """A name, spelled as another."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Name)
        return node.with_changes(value=self.name)


def _blank_lines_after(tree: ast.Module, statement: ast.stmt) -> int:
    """How many lines separate the statement from the next one at module level (2 if none
    follows)."""
    index = tree.body.index(statement)
    if index + 1 == len(tree.body):
        return 2
    following = tree.body[index + 1]
    start = min([following.lineno, *(decorator.lineno for decorator in getattr(following, "decorator_list", []))])
    return start - statement.end_lineno - 1


def _forwarding_call(callee: str, parameters: ast.arguments, stale: list[str]) -> str:
    """``callee(a, b, k=k, G=G)``: every parameter passed on as it was taken, and the globals."""
    positional = [parameter.arg for parameter in [*parameters.posonlyargs, *parameters.args]]
    keywords = [f"{name}={name}" for name in [parameter.arg for parameter in parameters.kwonlyargs] + stale]
    return f"{callee}({', '.join([*positional, *keywords])})"


class _RenamedWithWrapper:
    """``f = jax.jit(_f)`` -> ``_f_jitted = jax.jit(_f)`` followed by the wrapper ``def f``."""

    def __init__(self, jitted: str, wrapper: str, blank_lines_after: int):
        self.jitted, self.wrapper, self.blank_lines_after = jitted, wrapper, blank_lines_after

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.SimpleStatementLine) and isinstance(node.body[0], cst.Assign)
        assignment = node.body[0]
        renamed = assignment.with_changes(targets=[assignment.targets[0].with_changes(target=cst.Name(self.jitted))])
        blank = cst.EmptyLine(indent=False)
        wrapper = cst.parse_statement(self.wrapper)
        assert isinstance(wrapper, cst.FunctionDef) and isinstance(wrapper.body, cst.IndentedBlock)
        # Two blank lines around the new def, as around the user's (the next statement's own
        # blank lines count).
        footer = [blank] * max(0, 2 - self.blank_lines_after)
        wrapper = wrapper.with_changes(leading_lines=[blank, blank], body=wrapper.body.with_changes(footer=footer))
        return cst.FlattenSentinel([node.with_changes(body=[renamed]), wrapper])  # type: ignore[return-value]


# -- the seed's fix: the global becomes a parameter, passed at every call ---------------------

# Transforms a jitted function may be wrapped in before jit (`jax.jit(jax.grad(loss))`) that
# pass keyword arguments through untouched (vmap would map them over an axis).
KEYWORD_TRANSPARENT = frozenset({"jax.grad", "jax.value_and_grad", "jax.checkpoint", "jax.remat"})


@dataclass
class _Callers:
    """The names a jitted function is called by in its module (its own, and the one its jit is
    assigned to), and every call of them."""

    names: set[str]
    calls: list[ast.Call]


def _callers(module: ModuleContext, traced: TracedFunction, stale: list[str]) -> _Callers | str:
    """Every call of the jitted function in the module, or why they cannot all be changed:
    the name is used as a value (passed, stored, rebound), or a global is a local name where
    a call is made (the call would pass the local)."""
    function = traced.node
    if not traced.jit_sites:  # a helper of traced code: it may also build closures run later
        return "the function is not jitted itself here; pass the value as an argument"
    parents = {id(child): node for node in ast.walk(module.tree) for child in ast.iter_child_nodes(node)}
    names, wrapped, assigned = {function.name}, set(), set()
    calls: list[ast.Call] = []
    for site in traced.jit_sites:
        if site in function.decorator_list:
            continue
        target = _assigned_to(module.tree, site)
        inner = _through_transparent_transforms(module, site.args[0]) if isinstance(site, ast.Call) and site.args \
            else None
        called = parents.get(id(site))
        if not (isinstance(inner, ast.Name) and inner.id == function.name):
            return "the function is jitted inside an expression whose callers jitfix cannot follow"
        if target is not None:  # step = jax.jit(_step)
            names.add(target.id)
            assigned.add(id(target))
        elif isinstance(called, ast.Call) and called.func is site:  # jax.jit(f)(x)
            calls.append(called)
        else:
            return "the function is jitted inside an expression whose callers jitfix cannot follow"
        wrapped.add(id(inner))
    for node in ast.walk(module.tree):
        if not isinstance(node, ast.Name) or node.id not in names or id(node) in wrapped | assigned:
            continue
        parent = parents.get(id(node))
        if not isinstance(node.ctx, ast.Load):
            return f"`{node.id}` is rebound at line {node.lineno}"
        if not (isinstance(parent, ast.Call) and parent.func is node):
            return f"`{node.id}` is used as a value at line {node.lineno}, not only called"
        calls.append(parent)
    for call in calls:
        shadowed = _local_where(call, stale, parents)
        if shadowed:
            return f"`{shadowed}` is a local name where `{function.name}` is called at line {call.lineno}"
    return _Callers(names, calls)


def _assigned_to(tree: ast.Module, value: ast.AST) -> ast.Name | None:
    """The name a module-level ``name = value`` binds."""
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and statement.value is value and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name):
            return statement.targets[0]
    return None


def _through_transparent_transforms(module: ModuleContext, node: ast.AST) -> ast.AST:
    """``jax.grad(loss)`` -> ``loss``: what the transforms that keep keyword arguments wrap."""
    while isinstance(node, ast.Call) and node.args and module.imports.resolve(node.func) in KEYWORD_TRANSPARENT:
        node = node.args[0]
    return node


def _local_where(call: ast.Call, names: list[str], parents: dict[int, ast.AST]) -> str | None:
    """One of ``names`` that a scope around ``call`` binds (so it is not the global there)."""
    scope = parents.get(id(call))
    while scope is not None:
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            declared = set() if isinstance(scope, ast.Lambda) else {  # a lambda holds no `global`
                name for node in walk_body(scope) if isinstance(node, ast.Global) for name in node.names}
            bound = (local_names(scope) - declared) & set(names)
            if bound:
                return sorted(bound)[0]
        elif isinstance(scope, ast.ClassDef):
            bound = assigned_names(scope.body) & set(names)
            if bound:
                return sorted(bound)[0]
        elif isinstance(scope, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            bound = {node.id for generator in scope.generators for node in ast.walk(generator.target)
                     if isinstance(node, ast.Name)} & set(names)
            if bound:
                return sorted(bound)[0]
        scope = parents.get(id(scope))
    return None


def _passes_parameters(module: ModuleContext, callers: _Callers) -> bool:
    """Whether the global becomes a parameter passed by the callers (else a same-signature
    wrapper passes it): chosen by ``stale-global-fix``; by default where every caller is in
    this module -- a script, a notebook, or names private to the module. A module without a
    ``__main__`` guard that computes at import may still be imported by code jitfix does not
    see (a test): the wrapper is right for it either way."""
    choice = module.settings.stale_global_fix
    if choice != "auto":
        return choice == "parameter"
    return _is_script(module) or all(name.startswith("_") for name in callers.names)


def _is_script(module: ModuleContext) -> bool:
    """A notebook, or a module that runs as a program (``if __name__ == "__main__":``)."""
    if module.path.endswith(".ipynb"):
        return True
    return any(isinstance(statement, ast.If) and isinstance(statement.test, ast.Compare)
               and isinstance(statement.test.left, ast.Name) and statement.test.left.id == "__name__"
               for statement in module.tree.body)


def _parameter_edits(module: ModuleContext, traced: TracedFunction, callers: _Callers, stale: list[str],
                     static: list[str]) -> list[Edit] | None:
    """``def f(x)`` -> ``def f(x, *, G)`` (static at its jit where ``G`` is configuration),
    and every call ``f(a)`` -> ``f(a, G=G)``. None where the jit's static arguments cannot
    be added to."""
    function = traced.node
    edits = [Edit(name_position(module, function), cst.FunctionDef, _WithKeywordParameters(stale))]
    for site in traced.jit_sites if static else ():
        static_edit = static_argnames_edit(module, site, static, function)
        if static_edit is None:
            return None
        edits.append(static_edit)
    for call in callers.calls:
        end = Position(call.end_lineno, module.char_col(call.end_lineno, call.end_col_offset))  # type: ignore[arg-type]
        edits.append(Edit(module.start_of(call), cst.Call, _WithKeywordArguments(stale), end=end))
    return edits


class _WithKeywordParameters:
    """``def f(a, b=1)`` -> ``def f(a, b=1, *, G)``."""

    def __init__(self, names: list[str]):
        self.names = names

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        params = node.params
        star = params.star_arg if isinstance(params.star_arg, cst.Param | cst.ParamStar) else cst.ParamStar()
        extra = [cst.Param(name=cst.Name(name)) for name in self.names]
        return node.with_changes(params=params.with_changes(star_arg=star,
                                                            kwonly_params=[*params.kwonly_params, *extra]))


class _WithKeywordArguments:
    """``f(a)`` -> ``f(a, G=G)`` (or ``f(a, LR=config.LR)``: each keyword with its value)."""

    def __init__(self, passed: list[str] | list[tuple[str, str]]):
        self.passed = [(item, item) if isinstance(item, str) else item for item in passed]

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return with_keywords(node, [(name, cst.parse_expression(value)) for name, value in self.passed])


def _changed_inside(function: ast.FunctionDef, names: list[str]) -> str | None:
    """A global the function (or a def in it) changes itself (``seen.append(x)``): passing a
    copy in would hide the change from everyone else."""
    for node in ast.walk(function):
        targets = [call.func.value for call in method_changes(node)]  # type: ignore[attr-defined]
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store):
            targets.append(node.value)
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names:
                return target.id
    return None


def _called_across_a_rebinding(tree: ast.Module, imports: ImportTable, function: ast.AST, name: str,
                               importable: bool = True) -> bool:
    """For a global only the module's own statements rebind (a script, a notebook): whether
    the jitted function is traced with a value that a later statement replaces -- some
    top-level statement uses it (directly, or through a function or name that refers to it
    when the statement runs) before a rebinding, or one statement both rebinds and uses it
    (a loop). Every call after that (this module's or an importer's) sees the old value. A
    module that only rebinds before its first use (set-up, then work) reads no stale value.
    Where nothing leads to the function once the module has run (a later notebook cell's
    ``def step_fn`` is another function, and so is a caller defined anew), or in a notebook
    (which nothing imports), a stale read needs a use after the rebinding."""
    start = next((index for index, statement in enumerate(tree.body)
                  if any(node is function for node in ast.walk(statement))), -1)
    timeline = _reach_over_time(tree.body, imports, function, start)
    uses, binds = [], []
    for index, statement in enumerate(tree.body):
        if name in assigned_names([statement]) and not isinstance(statement, ast.FunctionDef | ast.ClassDef):
            binds.append(index)
        if index > start and _traces(statement, *timeline[index], imports):
            uses.append(index)
    if set(uses) & set(binds[1:]):
        return True
    reachable_after = bool(timeline[-1][0])
    if not (importable and reachable_after):  # a stale read needs a use after the rebinding
        return any(binds[0] < use < rebind < later for use in uses for rebind in binds[1:] for later in uses)
    return any(binds[0] < use < rebind for use in uses for rebind in binds[1:])


def _reach_over_time(body: list[ast.stmt], imports: ImportTable, function: ast.AST,
                     start: int) -> list[tuple[set[str], set[str]]]:
    """Before each top-level statement, and after the last: the module-level names that lead
    to the function then (`_names_reaching`), and the factories among them. ``start``: the
    statement that makes the function. A def reads the names it calls when it runs, so what it
    leads to follows their current bindings; a name bound to a value (``g = jax.jit(f)``)
    keeps what it held when it was bound. A name bound anew to something else (a later
    cell's ``def opt_step``) no longer leads to it."""
    own = getattr(function, "name", "")
    made_by: set[str] = set()  # what the statement that makes the function binds, while it holds
    defs: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = {}  # current def of each name
    held: set[str] = set()  # names bound to the function (or a transform of it) when bound
    reaching: set[str] = set()
    factories: set[str] = set()
    timeline = []
    for index, statement in enumerate(body):
        timeline.append((reaching, factories))
        bound = _top_level_bindings(statement)
        value = statement.value if isinstance(statement, ast.Assign | ast.AnnAssign) else None
        rewrapped = value is not None and _mentions(value, bound & reaching)  # `step = wrap(step)`
        for name in bound:
            defs.pop(name, None)
            held.discard(name)
        if bound & made_by and not rewrapped:  # `def dynamics` again: another function of the same name
            held.discard(own)
            made_by = set()
        if index == start:
            held.add(own)
            made_by = bound
        leads = index == start
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[statement.name] = statement
            leads = leads or not reaching.isdisjoint(_reads_from_outside(statement))
        elif value is not None and (rewrapped or _wraps(value, reaching, imports, factories)):
            held |= bound
            leads = True
        if leads or bound & reaching:
            reaching, factories = _names_reaching(defs, held, imports, body[start] if made_by else None)
    timeline.append((reaching, factories))
    return timeline


def _top_level_bindings(statement: ast.stmt) -> set[str]:
    """The names a top-level statement surely binds anew: a def, a class, an assignment, an
    import, a loop's target. Names bound only inside a block (an ``if``, a ``try``) may keep
    what they held, and are not counted."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Import | ast.ImportFrom):
        return assigned_names([statement])
    if isinstance(statement, ast.For | ast.AsyncFor):  # (and its body's, when a pass certainly runs)
        return assigned_names([statement.target]) | definitely_assigned([statement])
    return set()


def _names_reaching(defs: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef], held: set[str],
                    imports: ImportTable, maker: ast.stmt | None) -> tuple[set[str], set[str]]:
    """The module-level names that lead to the function: ``held`` (its own name, ``g =
    jax.jit(f)``, ``loss = make_loss(data)`` of a factory that returns it), and the ``defs``
    and classes that call one; and the factories among those defs (calling one makes the
    function, it traces nothing). A name bound to what the function computes (``state =
    lax.while_loop(cond, step, state)``) holds data, not a way to call it. ``maker``: the def
    the function is nested in (a factory), which leads to it by making it."""
    reaching = set(held)
    factories: set[str] = set()
    grown = True
    while grown:
        grown = False
        for name, definition in defs.items():
            if definition is not maker and reaching.isdisjoint(_reads_from_outside(definition)):
                continue
            if name not in reaching:
                reaching.add(name)
                grown = True
            if name not in factories and not isinstance(definition, ast.ClassDef) \
                    and _returns_a_way_to_call(definition, reaching, imports):
                factories.add(name)
                grown = True
    return reaching, factories


def _reads_from_outside(definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> frozenset[str]:
    """The names a def or class reads that its own code does not bind: a nested ``def update``
    returned by a factory is not the module's ``update``."""
    def compute() -> frozenset[str]:
        read = {node.id for node in ast.walk(definition) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        if isinstance(definition, ast.ClassDef):
            return frozenset(read)
        return frozenset(read - local_names(definition))
    return kept_on_node(definition, "reads_from_outside", compute)


def _returns_a_way_to_call(definition: ast.FunctionDef | ast.AsyncFunctionDef, reaching: set[str],
                           imports: ImportTable) -> bool:
    """Whether the def returns one of ``reaching``, a def of its own that leads to one, or a
    transform of those (``return jax.jit(loss)``): a factory."""
    inner = set(reaching)
    nested = [node for node in ast.walk(definition)
              if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not definition]
    grown = True
    while grown:
        grown = False
        for node in nested:
            if node.name not in inner and _mentions(node, inner):
                inner.add(node.name)
                grown = True
    return any(isinstance(node, ast.Return) and node.value is not None and _wraps(node.value, inner, imports)
               for node in walk_body(definition))


def _traces(statement: ast.stmt, reaching: set[str], factories: set[str], imports: ImportTable) -> bool:
    """Whether a top-level statement may call the function (and so trace it): it mentions a
    name that leads to it, other than in a definition, in a name bound to a transform of one
    (``grad_fn = jax.grad(loss)``) or in a factory's call (which makes the function)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return False
    if isinstance(statement, ast.Assign) and _wraps(statement.value, reaching, imports, factories):
        return False
    reaching = reaching - _defined_before_read(statement)
    return _mentions(statement, reaching - factories) or _calls_what_it_makes(statement, factories)


def _defined_before_read(statement: ast.stmt) -> set[str]:
    """Names a compound statement defines anew (``def step`` in a loop's body) before any of
    its reads of them: what it then calls by that name is its own definition, not the
    function the name held before."""
    defined: dict[str, tuple[int, int]] = {}
    for node in ast.walk(statement):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node is not statement:
            place = (node.lineno, node.col_offset)
            defined[node.name] = min(defined.get(node.name, place), place)
    if not defined:
        return set()
    first_read: dict[str, tuple[int, int]] = {}
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defined:
            place = (node.lineno, node.col_offset)
            first_read[node.id] = min(first_read.get(node.id, place), place)
    return {name for name, place in defined.items() if name not in first_read or place < first_read[name]}


def _calls_what_it_makes(statement: ast.AST, factories: set[str]) -> bool:
    """``make_loss(data)(params)``: a factory's function made and called at once."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Call)
               and isinstance(node.func.func, ast.Name) and node.func.func.id in factories
               for node in ast.walk(statement))


# Calls that return a function made from the one they are given.
WRAPPING = JIT_TRANSFORMS | TRACING_TRANSFORMS | GRAD_TRANSFORMS | {"functools.partial"}


def _wraps(value: ast.AST, names: set[str], imports: ImportTable, factories: Collection[str] = ()) -> bool:
    """Whether ``value`` is one of the names, a transform of one (``jax.jit(f)``,
    ``partial(f, 2)``, ``jax.jit(jax.grad(f))``), or what one of ``factories`` makes."""
    if isinstance(value, ast.Name):
        return value.id in names
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id in factories:
        return True
    return bool(value.args) and imports.resolve(value.func) in WRAPPING \
        and _wraps(value.args[0], names, imports, factories)


def _mentions(statement: ast.AST, names: set[str]) -> bool:
    return not names.isdisjoint(kept_on_node(statement, "names_read", lambda: frozenset(
        node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load))))


def _bindings(body: list[ast.stmt], name: str) -> list[ast.AST | None]:
    """Every value ``name`` is bound to by these statements (None where it is not a plain
    value: unpacking, ``for``, ``with``)."""
    values: list[ast.AST | None] = []
    for statement in _module_statements(ast.Module(body=body, type_ignores=[])):
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    values.append(statement.value)
                elif any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(target)):
                    values.append(None)
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign) and isinstance(statement.target, ast.Name) \
                and statement.target.id == name:
            values.append(statement.value)
        elif isinstance(statement, ast.For | ast.With) and name in assigned_names([statement]) - \
                assigned_names(statement.body):
            values.append(None)
    return values


def _passable(tree: ast.Module, imports: ImportTable, name: str) -> bool:
    """Whether the global holds what jit takes as an argument. Its module-level values must
    show it: numbers, arrays made by NumPy or JAX, arithmetic of those, dicts and lists of
    them, configuration (strings, bools, tuples). A function that rebinds it (`global SCALE; SCALE = value`)
    may use any value but a function or an object made by code jitfix cannot see."""
    def literal_value(node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int | float | complex | str | bool) or node.value is None
        if isinstance(node, ast.UnaryOp):
            return literal_value(node.operand)
        if isinstance(node, ast.BinOp):
            return literal_value(node.left) and literal_value(node.right)
        if isinstance(node, ast.Tuple | ast.List):
            return all(literal_value(element) for element in node.elts)
        if isinstance(node, ast.Dict):  # a pytree of numbers
            return all(key is not None and literal_value(key) and literal_value(item)
                       for key, item in zip(node.keys, node.values))
        if isinstance(node, ast.Call):
            called = imports.resolve(node.func) or ""
            return function_category(called) in (ARRAY, ONE_ARRAY) or called.startswith("numpy.")
        return isinstance(node, ast.Name) and node.id == name  # `x = x + 1` keeps its kind

    def rebound_value(node: ast.AST | None) -> bool:
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
            return True
        if isinstance(node, ast.BinOp):
            return rebound_value(node.left) and rebound_value(node.right)
        return literal_value(node)

    at_module_level = _bindings(tree.body, name)
    in_functions = [value for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and any(isinstance(inner, ast.Global) and name in inner.names for inner in ast.walk(node))
                    for value in _bindings(node.body, name)]
    return bool(at_module_level) and all(literal_value(value) for value in at_module_level) \
        and all(rebound_value(value) for value in in_functions)


def _is_config(tree: ast.Module, name: str) -> bool:
    """Bound only to strings, bools or tuples of them: configuration, passed as static."""
    values = [statement.value for statement in _module_statements(tree)
              if isinstance(statement, ast.Assign) and any(
                  isinstance(target, ast.Name) and target.id == name for target in statement.targets)]

    def hashable_literal(value: ast.AST) -> bool:
        if isinstance(value, ast.Constant):
            return isinstance(value.value, str | bool) or value.value is None
        if isinstance(value, ast.Tuple):
            return all(hashable_literal(element) for element in value.elts)
        return False

    return bool(values) and all(hashable_literal(value) for value in values)


def _taken_names(module: ModuleContext) -> set[str]:
    return {node.id for node in ast.walk(module.tree) if isinstance(node, ast.Name)} | {
        node.name for node in ast.walk(module.tree) if isinstance(node, ast.FunctionDef | ast.ClassDef)}


def _split_name(module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The name the body of ``f`` moves to: ``_f``."""
    return unique_name(f"_{function.name.lstrip('_')}", _taken_names(module))


def _split_edit(module: ModuleContext, traced: TracedFunction, stale: list[str], static: list[str]) -> Edit:
    """The def split into the body taking the globals and a same-signature wrapper passing them."""
    function = traced.node
    inner = _split_name(module, function)
    imports = ("functools.partial",) if static else ()
    call = _forwarding_call(inner, function.args, stale)
    return Edit(name_position(module, function), cst.FunctionDef, _SplitFunction(inner, call, stale, static),
                imports=imports)


class _SplitFunction:
    """``@jit def f(a, b=1): body`` -> ``@jit def _f(a, b=1, *, G): body`` and
    ``def f(a, b=1): return _f(a, b, G=G)``."""

    def __init__(self, inner: str, call: str, stale: list[str], static: list[str]):
        self.inner, self.call, self.stale, self.static = inner, call, stale, static

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        params = node.params
        extra = [cst.Param(name=cst.Name(name)) for name in self.stale]
        star = params.star_arg if params.kwonly_params else cst.ParamStar()
        inner_params = params.with_changes(star_arg=star, kwonly_params=[*params.kwonly_params, *extra])
        decorators = list(node.decorators)  # the jit, or none (jitted by an assignment)
        if self.static:
            wrapped = (f"{context.name('functools.partial')}({code(decorators[0].decorator)}, "
                       f"static_argnames={names_source(self.static)})")
            decorators[0] = decorators[0].with_changes(decorator=cst.parse_expression(wrapped))
        inner = node.with_changes(name=cst.Name(self.inner), params=inner_params, decorators=decorators)
        docstring = _docstring(node)
        wrapper_source = f"def {node.name.value}({code(params)}):\n{docstring}    return {self.call}\n"
        wrapper = cst.parse_statement(wrapper_source)
        blank = cst.EmptyLine(indent=False)
        wrapper = wrapper.with_changes(leading_lines=[blank, blank])
        return cst.FlattenSentinel([inner, wrapper])  # type: ignore[return-value]
