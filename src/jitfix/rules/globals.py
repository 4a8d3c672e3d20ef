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
from dataclasses import dataclass
from typing import Iterator, Mapping

from jitfix.analysis.blocks import (
    assigned_names,
    free_names_when_called,
    local_names,
    nodes_of,
    walk_body,
)
from jitfix.analysis.observations import CHANGED
from jitfix.analysis.project import Project
from jitfix.analysis.stale_globals import (GlobalChange, called_across_a_rebinding, changed_inside, changing_globals, free_reads,
                                           is_config, may_change, module_attribute_reads, module_level_names,
                                           outermost_function, passable, read_attributes, used_as_registry)
from jitfix.analysis.summaries import ModuleProgram
from jitfix.analysis.traced_function import TracedFunction, is_lambda_body
from jitfix.cst_text import code, cst, with_keywords
from jitfix.findings import Edit, EditContext, Finding, Fix, Position, Safety
from jitfix.naming import unique_name
from jitfix.paths import real_path
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import name_position
from jitfix.rules.static_arguments import names_source, static_argnames_edit


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
        outermost = outermost_function(traced.node, parents)
        if outermost is not traced.node and isinstance(outermost, ast.FunctionDef) \
                and outermost in module.tree.body and outermost in module.traced:
            nested.append((traced.node, outermost))
        elif is_lambda_body(traced.node) and outermost is not traced.node:
            continue  # a lambda jitted inside a function that is not traced is made anew by each
            # call, and each trace reads the global afresh (JF502 reports the recompilations)
        else:
            reads[traced.node] = free_reads(traced.node, parents, bound)
    for inner, outer in nested:
        if outer not in reads:
            reads[outer] = free_reads(outer, parents, bound)
        known = reads[outer]
        known += [name for name in free_reads(inner, parents, bound) if name not in known]
    return reads


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
        "they trace it again at every call, so it reads the global's value of the moment. The same "
        "for a closure: a def jitted in the function around it (`grad = jax.jit(jax.grad(loss))`) "
        "that reads a number of that function rebound after the jit, with the jitted name called "
        "again after the rebinding.",
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
        "`*args`/`**kwargs` behind a wrapper, other decorators, and globals the function also writes "
        "(JF402 passes those in and returns them). A stale closure becomes a keyword-only parameter "
        "of the def, passed at each call of the jitted name (`grad(x, a=a)`; grad and checkpoint "
        "pass keywords through), where every use of the jitted name in the function is a call and "
        "the name is only ever bound to numbers; left alone otherwise.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        yield from self._own_globals(module)
        yield from self._imported_globals(module)
        yield from self._stale_closures(module)

    def _stale_closures(self, module: ModuleContext) -> Iterator[Finding]:
        """A def jitted where it is defined (``grad = jax.jit(jax.grad(loss))`` in the function
        around it) reads a name of that function which is rebound after the jit, and the jitted
        function is called again after the rebinding: it still sees the value it was traced
        with. The name becomes a keyword-only parameter, passed at each call."""
        for traced in module.traced.values():
            closure = _stale_closure(module, traced)
            if closure is None:
                continue
            inner, outer, jitted, stale, calls = closure
            listed = ", ".join(f"`{name}`" for name in stale)
            first_read = min((node for node in ast.walk(inner) if isinstance(node, ast.Name)
                              and isinstance(node.ctx, ast.Load) and node.id in stale),
                             key=lambda node: (node.lineno, node.col_offset))
            edits = [Edit(name_position(module, inner), cst.FunctionDef, _WithKeywordParameters(stale))]
            for call in calls:
                end = Position(call.end_lineno, module.char_col(call.end_lineno, call.end_col_offset))  # type: ignore[arg-type]
                edits.append(Edit(module.start_of(call), cst.Call, _WithKeywordArguments(stale), end=end))
            parameters = "parameters" if len(stale) > 1 else "a parameter"
            fix = Fix(Safety.SAFE, f"make {listed} {parameters} of `{inner.name}`, passed at each call of "
                      f"`{jitted}`", edits)
            yield self.finding(module, first_read, f"`{traced.qualname}` reads {listed} of `{outer.name}` at trace "
                               f"time only ({listed} {'are' if len(stale) > 1 else 'is'} rebound after `{jitted}` "
                               f"jits it, and `{jitted}` is called again); pass {'them' if len(stale) > 1 else 'it'} in",
                               fix, function=traced)

    def _own_globals(self, module: ModuleContext) -> Iterator[Finding]:
        module_names, rebound = module_level_names(module.tree)
        changes = module.traced.changes_of(module_names)
        seen_changing = _seen_changing(module) & module_names
        if not rebound and not changes and not seen_changing:
            return  # no module-level name ever changes: no global can go stale
        parents = module.traced.parents
        reads = _reads_by_traced_function(module, parents)
        candidates = {name for names in reads.values() for name in names} - set(module.imports.aliases)
        attributes_read = read_attributes(list(reads), candidates) if candidates else {}
        changing = changing_globals(module.tree, candidates, changes, attributes_read) if candidates else {}
        for name in sorted(seen_changing & candidates):  # changed where this module cannot see (another module)
            changing.setdefault(name, GlobalChange("changed between calls in the run of `jitfix run`, and the "
                                                   "jitted results did not follow it"))
        if not changing:
            return
        for traced in module.traced.values():
            if traced.node not in reads or _traced_anew_each_call(traced, parents.get(traced.node)):
                continue
            stale = [name for name in reads[traced.node] if name in changing]
            stale = [name for name in stale if name not in module.imports.aliases
                     and not used_as_registry(traced.node, name)
                     and (not changing[name].at_module_level
                          or called_across_a_rebinding(module.tree, module.imports, traced.node, name,
                                                        importable=not module.path.endswith(".ipynb")))]
            if not stale:
                continue
            listed = ", ".join(f"`{name}`" for name in stale)
            hows = "; ".join(f"`{name}` is {changing[name].how}" for name in stale)
            where = f"`{traced.qualname}` reads {listed} at trace time only ({hows})"
            if changed_inside(traced.node, stale):
                continue  # the function changes the global itself: JF402 says so
            problem = _why_not_fixable(traced, module.tree)
            first_read = min((node for node in nodes_of(traced.node) if isinstance(node, ast.Name)
                              and isinstance(node.ctx, ast.Load) and node.id in stale),
                             key=lambda node: (node.lineno, node.col_offset))
            if problem:
                yield self.finding(module, first_read, f"{where}; not auto-fixable: {problem}", function=traced)
                continue
            opaque = [name for name in stale if not passable(module.tree, module.imports, name)]
            if opaque:
                listed_opaque = ", ".join(f"`{name}`" for name in opaque)
                yield self.finding(module, first_read, f"{where}; not auto-fixable: {listed_opaque} may hold "
                                   "a function or an object, which jit cannot take as an argument; pass what "
                                   "it computes instead", function=traced)
                continue
            static = [name for name in stale if is_config(module.tree, name)]
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
            for read in module_attribute_reads(traced.node, module.imports):
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


def _seen_changing(module: ModuleContext) -> set[str]:
    """The module's globals a run saw change between the calls of a jitted function whose results
    under jit did not follow them (``Observation`` ``CHANGED``)."""
    observed = module.settings.observed
    if not observed:
        return set()
    path = real_path(module.path)
    return {name for seen in observed if seen.error == CHANGED and seen.path == path for name in seen.traced}


def _stale_closure(module: ModuleContext, traced: TracedFunction
                   ) -> tuple[ast.FunctionDef, ast.FunctionDef, str, list[str], list[ast.Call]] | None:
    """(the def, the function around it, the name its jit is bound to, the stale names, every
    call of the jitted name) for a def jitted once in the function around it, by
    ``jitted = jax.jit(def)`` (through transforms that pass keywords on: grad, checkpoint),
    that reads numbers of that function rebound after the jit and before a later call."""
    inner = traced.node
    outer = module.traced.parents.get(inner)
    if not isinstance(inner, ast.FunctionDef) or not isinstance(outer, ast.FunctionDef) \
            or len(traced.jit_sites) != 1 or inner.decorator_list or traced.bound_jit_sites:
        return None
    site = traced.jit_sites[0]
    assignment = next((statement for statement in outer.body if isinstance(statement, ast.Assign)
                       and statement.value is site and len(statement.targets) == 1
                       and isinstance(statement.targets[0], ast.Name)), None)
    if assignment is None or not isinstance(site, ast.Call) or not site.args \
            or not (isinstance(wrapped := _through_transparent_transforms(module, site.args[0]), ast.Name)
                    and wrapped.id == inner.name):
        return None
    jitted = assignment.targets[0].id  # type: ignore[attr-defined]
    uses = [node for node in ast.walk(outer) if isinstance(node, ast.Name) and node.id in (jitted, inner.name)
            and node is not wrapped and node is not assignment.targets[0]]
    parents = {id(child): node for node in ast.walk(outer) for child in ast.iter_child_nodes(node)}
    calls = [call for node in uses if isinstance(call := parents[id(node)], ast.Call) and call.func is node
             and node.id == jitted]
    if len(calls) != len(uses) or not calls:
        return None  # the def or the jit is used otherwise than called: its callers are not all in sight
    free = set(free_names_when_called(inner)) & local_names(outer)
    stale = []
    for name in sorted(free - {jitted, inner.name}):
        rebinds = [node for node in ast.walk(outer) if isinstance(node, ast.Name) and node.id == name
                   and isinstance(node.ctx, ast.Store) and node.lineno > assignment.lineno]
        if not rebinds or not any(call.lineno > min(node.lineno for node in rebinds) for call in calls):
            continue
        values = [statement.value for statement in ast.walk(outer) if isinstance(statement, ast.Assign)
                  and any(isinstance(target, ast.Name) and target.id == name for target in statement.targets)]
        if len(values) != len([node for node in ast.walk(outer) if isinstance(node, ast.Name) and node.id == name
                               and isinstance(node.ctx, ast.Store)]) or not all(_number(value) for value in values):
            return None  # bound otherwise (a loop, unpacking) or to what jit may not take
        stale.append(name)
    if not stale or any(_rebound_around(call, outer, stale, parents) for call in calls):
        return None
    return inner, outer, jitted, stale, calls


def _rebound_around(call: ast.AST, outer: ast.FunctionDef, names: list[str], parents: dict[int, ast.AST]) -> bool:
    """Whether a def, lambda or comprehension between ``outer`` and the call binds one of the
    names (the call would pass that one, not ``outer``'s)."""
    scope = parents.get(id(call))
    while scope is not None and scope is not outer:
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and local_names(scope) & set(names):
            return True
        if isinstance(scope, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) and {
                node.id for generator in scope.generators for node in ast.walk(generator.target)
                if isinstance(node, ast.Name)} & set(names):
            return True
        scope = parents.get(id(scope))
    return False


def _number(value: ast.AST) -> bool:
    """A number literal, or arithmetic of them: what jit takes as a traced argument."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, int | float) and not isinstance(value.value, bool)
    if isinstance(value, ast.UnaryOp):
        return _number(value.operand)
    if isinstance(value, ast.BinOp):
        return _number(value.left) and _number(value.right)
    return False


def _changing_in_its_module(program: ModuleProgram, project: Project, path: str,
                            read: ast.Attribute) -> tuple[str, bool] | None:
    """How ``config.LR`` changes in ``config``, a module of the run (rebound by `global` in a
    function, or changed in place), and whether it is configuration (static); None if it
    does not, or holds what jit cannot take."""
    relative = program.imports.resolve_relative(read.value)
    level, dotted = relative if relative else (0, program.imports.resolve(read.value))
    found = project.module_file(path, dotted, level) if dotted else None
    text = project.text(found) if found is not None else None
    if found is None or text is None or not may_change(text, read.attr):
        return None  # (read cheaply first: most attributes of a module are its functions)
    owner = ModuleProgram.at(project, found)
    if owner is None:
        return None
    change = changing_globals(owner.tree, {read.attr}, owner.scopes.changes_of([read.attr])).get(read.attr)
    if change is None or change.at_module_level or not passable(owner.tree, owner.imports, read.attr):
        return None  # (a module's own top level runs once, when it is imported: before any trace)
    return f"{change.how} of {os.path.basename(owner.path or '')}", is_config(owner.tree, read.attr)


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


def _docstring(node: cst.FunctionDef) -> str:
    """The function's docstring line(s), indented for the wrapper (which callers see)."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) \
            and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString):
        return f"    {code(first.body[0].value)}\n"
    return ""


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
            edits.append(Edit(module.start_of(wrapped), cst.Name, Renamed(body_name)))
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


class Renamed:
    """An edit's replacement: a name, spelled as another."""

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


def _traced_anew_each_call(traced: TracedFunction, definer: ast.AST | None) -> bool:
    """A def jitted by its decorator where a function (``definer``) defines it, and called there
    once, not in a loop, nor handed on: each call of that function makes and traces it anew,
    reading the globals as they are then -- nothing goes stale."""
    function = traced.node
    if not isinstance(definer, ast.FunctionDef | ast.AsyncFunctionDef) or not isinstance(function, ast.FunctionDef) \
            or not any(decorator in traced.jit_sites for decorator in function.decorator_list):
        return False
    reads = [node for node in walk_body(definer) if isinstance(node, ast.Name) and node.id == function.name
             and isinstance(node.ctx, ast.Load)]
    calls = [node for node in walk_body(definer) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
             and node.func.id == function.name]
    if len(reads) != 1 or len(calls) != 1:
        return False
    loops = [node for node in walk_body(definer) if isinstance(node, _REPEATING)]
    return not any(loop.lineno <= calls[0].lineno <= (loop.end_lineno or loop.lineno) for loop in loops)


_REPEATING = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
