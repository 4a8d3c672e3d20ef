"""JF5xx — code that makes jit trace and compile again and again.

JF502 a jitted function made inside a loop (or a function called in a loop) from a callable
made there (``jax.jit(lambda x: ...)``, ``jax.jit(partial(f, a=1))``, ``jax.jit(jax.grad(f))``,
a def jitted where a function called more than once defines it): jit's cache is keyed on the
function object, and each pass makes a new one, so every pass traces and compiles again
-> made once, before the loop (at module level), when nothing it captures changes.
JF503 a jitted function called in a loop with a static argument the loop changes (or that a
run saw change): one trace and compilation per value -> traced, where the function only does
elementwise arithmetic with it; else reported, with the alternatives.
JF504 a jitted function called in a loop with an array whose shape the loop changes (``x[:i]``,
a buffer grown with ``jnp.append``) -> called through a helper padding it to a power-of-two
length, where the function computes row by row; else reported: pad and pass a mask.
JF505 a jitted function called with an int literal in one place and a float literal in
another for the same argument: two weak types, two compilations -> reported.
"""

from __future__ import annotations

import ast
import bisect
import builtins
import re
import symtable
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from jitfix.analysis.blocks import (
    assigned_names,
    child_nodes,
    literal_int,
    nodes_of,
    own_nodes,
    shape_growth,
    upward_exposed,
    walk_tree,
)
from jitfix.analysis.elementwise import row_wise, traceable
from jitfix.analysis.catalogue import GRAD_TRANSFORMS, PARTIAL, TRACING_TRANSFORMS, is_range
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import positional_names
from jitfix.analysis.words import LineIndex
from jitfix.cst_text import cst, leading_lines
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.naming import unique_name
from jitfix.rules.base import CacheKey, ModuleContext, Rule, RuleDoc, removal_edit
from jitfix.rules.function_context import name_position
from jitfix.rules.static_arguments import static_removed_edit

# Transforms whose compiled functions are cached by the function object they wrap.
CACHING_JITS = frozenset({"jax.jit", "jax.pjit", "jax.experimental.pjit.pjit", "jax.pmap", "equinox.filter_jit",
                          "equinox.filter_pmap"})
# Transforms that return a new function object at each call (`jax.grad(f) is not jax.grad(f)`).
WRAPPING_TRANSFORMS = (TRACING_TRANSFORMS | GRAD_TRANSFORMS) - CACHING_JITS
_LOOPS = (ast.For, ast.While)
# Scopes of their own: a comprehension's targets are not the loop's names (a lambda made in
# one may capture them), so what is made inside one is left alone.
_NEW_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
               ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class _Rebuilt:
    """One ``jax.jit(<callable made here>)`` in a scope that runs many times -- a loop's body
    (each pass) or a function's (each call) -- and how its result is used."""

    scope: ast.For | ast.While | ast.FunctionDef
    call: ast.Call  # the jit call
    made: ast.AST  # the lambda, partial(...) or jax.grad(...) it wraps
    assignment: ast.Assign | None  # `g = jax.jit(...)` directly in the scope's body, then `g(...)`
    loop: ast.For | ast.While | None = None  # the loop it is made in, when the scope is the function around it

    @property
    def in_loop(self) -> bool:
        return isinstance(self.scope, _LOOPS)


class JitRebuiltInLoop(Rule):
    code = "JF502"
    name = "jit-rebuilt-in-loop"
    summary = "`jax.jit` of a lambda, `partial` or `jax.grad(f)` made in a loop compiles on every pass; jit it once"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds `jax.jit` (and `pmap`, `equinox.filter_jit`) applied inside a loop -- or inside a "
        "function the module calls in a loop -- to a callable made there, a `lambda`, "
        "`functools.partial(...)` or a transform of a function (`jax.grad(loss)`, `jax.vmap(f)`), "
        "and called there; makes the jitted function once, before the loop (or at module level, "
        "before the function; also for a loop in a function the module calls more than once, when "
        "the callable captures none of the function's names). Also a def jitted where a function "
        "the module calls more than once defines it (`@jax.jit` on the nested def, or `g = "
        "jax.jit(inner)` beside it) and calls it: the def moves to module level, before the "
        "function, with its comments.",
        why="jit caches what it compiled by the function object it wraps. A lambda, a partial or "
        "`jax.grad(loss)` made on each pass is a new object each time, so every pass traces and "
        "compiles again: a jitted loop slower than plain Python. (`jax.jit(f)` of a function "
        "defined once is cached and is not reported.)",
        example="for x in batches:\n    y = jax.jit(lambda v: v * 2.0)(x)\n",
        fixed="jitted = jax.jit(lambda v: v * 2.0)\nfor x in batches:\n    y = jitted(x)\n",
        safety="Safe when what the callable captures is the same on every pass or call: the lambda's "
        "free names and the partial's or transform's arguments (names, attributes and literals "
        "only) are not assigned in the loop (or the function: its parameters and locals), and no "
        "global among them is bound again or changed in place anywhere in the module -- a jitted "
        "function made once keeps the values its first trace saw. `g = jax.jit(...)` in a loop "
        "moves before it as it is. Reported, not fixed: a callable that captures what changes "
        "(pass it as an argument of the jitted function instead, so one compilation serves every "
        "pass), partial or transform arguments that call something or that name what the module "
        "binds only after the function. A function called once (a `main`) compiles once and is "
        "left alone. A nested jitted def is reported only where Python's symbol table shows it "
        "closes over none of the function's names and no global it reads is changed by the module "
        "(else each call may be meant to compile a new configuration, as a factory returning it "
        "is); it moves where its name is bound nowhere else at module level and its decorators "
        "and defaults read only what is bound before the function.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        taken: set[str] | None = None
        for found in _rebuilt_jits(module):
            what = _described(module, found.made)
            jit = module.segment(found.call.func)
            if found.in_loop:
                where = (f"`{jit}` of {what} made in the loop at line {found.scope.lineno} traces and compiles again "
                         "on every pass")
                place, before = "before the loop", "before the loop"
            else:
                name = found.scope.name  # type: ignore[union-attr]
                made_in = f"the loop at line {found.loop.lineno} of `{name}`" if found.loop else f"`{name}`"
                again = "every pass and every call" if found.loop else f"every call of `{name}`"
                where = f"`{jit}` of {what} made in {made_in} traces and compiles again on {again}"
                place, before = f"at module level, before `{name}`", "at module level"
            if found.in_loop and _each_pass_a_configuration(module, found):
                continue  # each configuration needs its own compilation: nothing to save
            why_not = _why_not_hoisted(module, found, before)
            if why_not is not None:
                yield self.finding(module, found.call, f"{where}; not auto-fixable: {why_not}")
                continue
            if taken is None:
                taken = {node.id for node in ast.walk(module.tree) if isinstance(node, ast.Name)}
            fix = Fix(Safety.SAFE, f"jit it once, {place}", _hoist_edits(module, found, taken))
            yield self.finding(module, found.call, f"{where}; jit it once, {place}", fix)
        nested_defs = [nested for nested in _jitted_nested_defs(module) if not _made_per_configuration(module, nested)]
        names = Counter(nested.inner.name for nested in nested_defs)
        for nested in nested_defs:
            where = (f"`{nested.inner.name}`, jitted where `{nested.outer.name}` defines it, is a new function on each "
                     f"call of `{nested.outer.name}`: it traces and compiles again on every call")
            why_not = _why_not_moved(module, nested) if names[nested.inner.name] == 1 else \
                f"another function defines a jitted `{nested.inner.name}` too: moved, they would share one name"
            if why_not is not None:
                yield self.finding(module, nested.inner, f"{where}; not auto-fixable: {why_not}")
                continue
            fix = Fix(Safety.SAFE, f"define it once, at module level, before `{nested.outer.name}`",
                      [_moved_out_edit(module, nested)])
            yield self.finding(module, nested.inner, f"{where}; define it once, at module level, before "
                               f"`{nested.outer.name}`", fix)


def _why_not_hoisted(module: ModuleContext, found: _Rebuilt, before: str) -> str | None:
    """Why the jitted function cannot be made once, before its scope, computing what each
    pass or call's did; None when it can."""
    captured = _captured(found.made)
    changing = sorted(captured & _changed_in(found.scope))
    if changing:
        listed = ", ".join(f"`{name}`" for name in changing)
        where = "the loop changes" if found.in_loop else f"`{found.scope.name}` binds on each call"  # type: ignore[union-attr]
        functions = _functions_made_in(found.scope) & set(changing)
        advice = ("functions made on each pass close over that pass's values: pass those values as arguments of "
                  "one jitted function instead") if functions else \
            "pass it as an argument of the jitted function instead, so one compilation serves every pass"
        return f"it captures {listed}, which {where}; {advice}"
    rebound = [(name, places) for name in sorted(captured) if (places := _module_changes(module, name))]
    if rebound:
        name, places = rebound[0]
        return (f"it reads `{name}`, which the module changes ({places[0]}): made once, it would keep the value its "
                "first trace saw; pass it as an argument of the jitted function instead")
    if not isinstance(found.made, ast.Call):
        return None
    arguments = f"the arguments of `{module.segment(found.made.func)}`"
    if not _plain_arguments(module, found.made):
        return f"{arguments} call something, which would then run {before}"
    if found.in_loop and not _on_every_pass(found.call, found.scope):  # type: ignore[arg-type]
        return f"it is made only on some passes, and {arguments} may not exist before the loop"
    if not found.in_loop and not _bound_before(module, captured, found.scope):  # type: ignore[arg-type]
        return f"{arguments} name what the module binds only after the function"
    return None


def _each_pass_a_configuration(module: ModuleContext, found: _Rebuilt) -> bool:
    """Whether what the callable captures that the loop changes is only the loop's variable,
    taking values a jitted function can only hold static: strings, None, bools, functions,
    containers of them (``for fields in (["a", "b"], ["b"]): jax.jit(lambda y: f(y, fields))``).
    Each pass is another program, and each needs its compilation."""
    loop = found.scope
    changing = _captured(found.made) & _changed_in(loop)
    if not changing or not isinstance(loop, ast.For) \
            or not isinstance(loop.iter, ast.Tuple | ast.List | ast.Set):
        return False
    targets = loop.target.elts if isinstance(loop.target, ast.Tuple | ast.List) else [loop.target]
    if changing - {target.id for target in targets if isinstance(target, ast.Name)}:
        return False  # the body rebinds it (or it is unpacked deeper): not a configuration
    for value in loop.iter.elts:
        items = [value] if len(targets) == 1 else value.elts if isinstance(value, ast.Tuple | ast.List) \
            and len(value.elts) == len(targets) else None
        if items is None:
            return False
        if not all(_configuration(module, item) for target, item in zip(targets, items)
                   if isinstance(target, ast.Name) and target.id in changing):
            return False
    return True


def _configuration(module: ModuleContext, value: ast.expr) -> bool:
    """A value jit cannot trace, only hold static: a string, None, a bool, a function or class
    (by name), or a container of those. Numbers are not: they can be passed as arguments."""
    if isinstance(value, ast.Constant):
        return value.value is None or isinstance(value.value, str | bytes | bool)
    if isinstance(value, ast.Tuple | ast.List | ast.Set):
        return all(_configuration(module, item) for item in value.elts)
    if isinstance(value, ast.Dict):
        return all(item is not None and _configuration(module, item) for item in (*value.keys, *value.values))
    if isinstance(value, ast.Name):
        return any(isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                   and statement.name == value.id for statement in module.tree.body) \
            or module.imports.resolve(value) is not None
    return isinstance(value, ast.Attribute) and module.imports.resolve(value) is not None


def _module_bindings(tree: ast.Module) -> dict[str, list[int]]:
    """The lines of the module-level statements that bind each name."""
    bindings: dict[str, list[int]] = {}
    for statement in tree.body:
        for bound in assigned_names([statement]):
            bindings.setdefault(bound, []).append(statement.lineno)
    return bindings


def _module_changes(module: ModuleContext, name: str) -> list[str]:
    """Where the module binds ``name`` again after its first binding at module level, or a
    function rebinds (``global``) or changes it in place: a value a jitted function made once
    would see frozen at its first trace."""
    bindings = module.cached(MODULE_BINDINGS, lambda: _module_bindings(module.tree))
    places = [f"line {line}" for line in bindings.get(name, [])[1:]]
    for change in module.traced.changes_of([name]):
        scope = change.scope
        where = f"in `{scope.name}`" if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) else "at module level"
        places.append(f"{where}, {change.how}" if change.declared_global else f"{where}: {change.how}")
    return places


def _bound_before(module: ModuleContext, names: set[str], function: ast.FunctionDef) -> bool:
    """Whether every one of ``names`` the module binds is bound at module level before the
    function's def (what a statement put before the def may read)."""
    earlier = assigned_names([statement for statement in module.tree.body if statement.lineno < function.lineno])
    everything = assigned_names(module.tree.body)
    return all(name in earlier or name not in everything for name in names)


LINE_STARTS: CacheKey[list[int]] = CacheKey("where each line of the text starts")
WORD_LINES: CacheKey[LineIndex] = CacheKey("the lines of the text that spell a word")
MODULE_BINDINGS: CacheKey[dict[str, list[int]]] = CacheKey("module-level bindings")
JITTED_CALLABLES: CacheKey[dict[str, TracedFunction]] = CacheKey("jitted callables")
JITTED_CALLS: CacheKey[set[int] | None] = CacheKey("calls of jitted callables")
BUCKETED_HELPERS: CacheKey[dict[str, str]] = CacheKey("bucketed helper names")
TAKEN_NAMES: CacheKey[set[str]] = CacheKey("names the module uses")
SYMBOL_TABLE: CacheKey[symtable.SymbolTable] = CacheKey("Python's symbol table of the module")


def _loops(module: ModuleContext, lines: list[int]) -> Iterator[ast.For | ast.While]:
    """The module's loops spanning one of ``lines`` (``_scoped_loops``)."""
    return (loop for loop, _ in _scoped_loops(module, lines))


Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef


def _scoped_loops(module: ModuleContext, lines: list[int]) -> Iterator[tuple[ast.For | ast.While, Scope]]:
    """(loop, the function or module it runs in) for the module's loops spanning one of
    ``lines`` (sorted; those that spell what is looked for, a cheap test on the text first:
    most loops call no jitted function), found by walking statements only. A loop in a function that jit stages runs while it is
    traced, once per compilation of it, not on every call: what the loop compiles, it
    compiles into that one compilation."""
    if not lines:
        return
    stack: list[tuple[ast.AST, Scope]] = [(statement, module.tree) for statement in module.tree.body]
    while stack:
        statement, scope = stack.pop()
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            traced = module.traced.get(statement)
            if traced is not None and traced.staged:
                continue
        if isinstance(statement, _LOOPS) and _spans_one_of(statement, lines):
            yield statement, scope
        inner = statement if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) else scope
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(statement, name, None)
            if isinstance(block, list):
                stack.extend((child, inner) for child in block
                             if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case))


def _rebuilt_jits(module: ModuleContext) -> Iterator[_Rebuilt]:
    """Every jit of a lambda or partial whose result is called where it is made: in a loop
    (reported for the innermost loop holding it), or in a module-level function the module
    calls in a loop and that is not itself traced (inside a traced function an inner jit is
    traced once with it; a function called once, a `main`, compiles once)."""
    repeated: set[str] | None = None
    spelling = _lines_spelling(module, ("jit", "pmap"))
    for loop, scope in _scoped_loops(module, spelling):
        for found in _rebuilt_in(module, loop, loop.body):
            # In a module-level function called more than once, a callable that captures none
            # of the function's names is the same on every call too: made once at module level.
            if isinstance(scope, ast.FunctionDef) and scope in module.tree.body \
                    and not _captured(found.made) & _changed_in(scope):
                repeated = _called_more_than_once(module) if repeated is None else repeated
                if scope.name in repeated:
                    found = _Rebuilt(scope, found.call, found.made, found.assignment, loop)
            yield found
    if not spelling:
        return
    functions = [statement for statement in module.tree.body if isinstance(statement, ast.FunctionDef)
                 and statement not in module.traced and _spans_one_of(statement, spelling)]
    if functions:
        repeated = _called_in_loops(module, {function.name for function in functions})
        for function in functions:
            if function.name in repeated:
                yield from _rebuilt_in(module, function, function.body)


@dataclass(frozen=True)
class _JittedNestedDef:
    """``@jax.jit def inner`` (or ``g = jax.jit(inner)``) in the body of ``outer``, a
    module-level function the module calls more than once, and called there: each call of
    ``outer`` makes a new function object, which jit's cache has not seen."""

    outer: ast.FunctionDef
    inner: ast.FunctionDef
    jitted_by: ast.Assign | None  # `g = jax.jit(inner, ...)` right in outer's body; None: a decorator


def _jitted_nested_defs(module: ModuleContext) -> Iterator[_JittedNestedDef]:
    outers = [statement for statement in module.tree.body if isinstance(statement, ast.FunctionDef)
              and any(isinstance(inner, ast.FunctionDef) for inner in statement.body)]
    outers = [outer for outer in outers if not ((traced := module.traced.get(outer)) is not None and traced.staged)]
    if not outers:
        return
    repeated = _called_more_than_once(module)
    for outer in outers:
        if outer.name not in repeated:
            continue
        called = {node.func.id for node in _own_nodes(outer.body)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        for inner in outer.body:
            if not isinstance(inner, ast.FunctionDef):
                continue
            if any(_caching_jit(module, decorator) for decorator in inner.decorator_list) and inner.name in called:
                yield _JittedNestedDef(outer, inner, None)
                continue
            for statement in outer.body:
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                        and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id in called \
                        and isinstance(statement.value, ast.Call) and statement.value.args \
                        and module.imports.resolve(statement.value.func) in CACHING_JITS \
                        and isinstance(statement.value.args[0], ast.Name) and statement.value.args[0].id == inner.name:
                    yield _JittedNestedDef(outer, inner, statement)


def _caching_jit(module: ModuleContext, decorator: ast.expr) -> bool:
    """``@jax.jit``, ``@partial(jax.jit, static_argnums=...)``, ``@jax.jit(static_argnames=...)``."""
    if module.imports.resolve(decorator) in CACHING_JITS:
        return True
    if not isinstance(decorator, ast.Call):
        return False
    called = module.imports.resolve(decorator.func)
    if called == PARTIAL:
        return bool(decorator.args) and module.imports.resolve(decorator.args[0]) in CACHING_JITS
    return called in CACHING_JITS and not decorator.args


def _made_per_configuration(module: ModuleContext, nested: _JittedNestedDef) -> bool:
    """Whether each call of ``outer`` may mean a new program: the jitted def closes over
    ``outer``'s names (by Python's own symbol table: an optimizer, a loss, a step count the
    caller passes), or its decorators, defaults or jit read them, or it reads a global the
    module changes (each new trace sees its new value). Compiling per call may then be the
    point; nothing is said."""
    table = _symbol_table(module, nested.outer, nested.inner)
    if not isinstance(table, symtable.Function) or table.get_frees():  # (a def in it passes its frees through it)
        return True
    outer_locals = _changed_in(nested.outer)
    at_definition = _read_at_definition(module, nested)
    if at_definition & outer_locals:
        return True
    return any(_module_changes(module, name) or not _bound_plainly_once(module, name)
               for name in _globals_below(table) | at_definition)


def _read_at_definition(module: ModuleContext, nested: _JittedNestedDef) -> set[str]:
    """The names ``outer`` evaluates when it makes the jitted def: its decorators, defaults and
    annotations (unless the module postpones them), and the jit's arguments."""
    inner = nested.inner
    parts: list[ast.AST] = [*inner.decorator_list, *inner.args.defaults,
                            *(default for default in inner.args.kw_defaults if default is not None)]
    if not _postponed_annotations(module):
        parts += [arg.annotation for arg in ast.walk(inner.args) if isinstance(arg, ast.arg) and arg.annotation]
        parts += [inner.returns] if inner.returns is not None else []
    if nested.jitted_by is not None:
        parts.append(nested.jitted_by.value)
    return {node.id for part in parts for node in ast.walk(part) if isinstance(node, ast.Name)} - {inner.name}


def _postponed_annotations(module: ModuleContext) -> bool:
    return any(isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
               and any(alias.name == "annotations" for alias in statement.names) for statement in module.tree.body)


def _bound_plainly_once(module: ModuleContext, name: str) -> bool:
    """Whether the module binds ``name`` at most once at its top level, by a statement of its
    own (an assignment, a def, a class, an import): not in a loop, a branch, a ``with`` or a
    ``try``, whose bindings may come one after another."""
    binding = [statement for statement in module.tree.body if name in assigned_names([statement])]
    return not binding or len(binding) == 1 and isinstance(binding[0], _PLAIN_BINDINGS)


_PLAIN_BINDINGS = (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import,
                   ast.ImportFrom)


def _why_not_moved(module: ModuleContext, nested: _JittedNestedDef) -> str | None:
    """Why the jitted def, which closes over nothing that changes, cannot move to module
    level; None when it can: the names it and its ``g = jax.jit(inner)`` bind are bound once
    in ``outer``, nowhere at module level (nor declared ``global`` anywhere), and are no
    builtin's; what its decorators, defaults and jit read is bound before ``outer``."""
    outer, inner = nested.outer, nested.inner
    names = [inner.name] + ([nested.jitted_by.targets[0].id] if nested.jitted_by is not None else [])  # type: ignore[attr-defined]
    declared = {name for node in ast.walk(module.tree) if isinstance(node, ast.Global | ast.Nonlocal)
                for name in node.names}
    for name in names:
        if name in _BUILTINS:
            return f"`{name}` would hide the builtin of that name at module level"
        if _bindings_in(outer, name) != 1 or name in assigned_names(module.tree.body) or name in declared:
            return f"the module binds `{name}` elsewhere too"
    if not _bound_before(module, _read_at_definition(module, nested), outer):
        return "its decorators, defaults or annotations name what the module binds only after the function"
    if nested.jitted_by is not None and isinstance(nested.jitted_by.value, ast.Call) \
            and not _plain_arguments(module, nested.jitted_by.value):
        return f"the arguments of `{module.segment(nested.jitted_by.value.func)}` call something"
    return None


_BUILTINS = frozenset(dir(builtins))


def _bindings_in(function: ast.FunctionDef, name: str) -> int:
    """How many times the function's own code binds ``name``: a def or class, an assignment
    or loop target, an import."""
    count = 0
    for node in own_nodes(function.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name \
                or isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            count += 1
        elif isinstance(node, ast.Import | ast.ImportFrom):
            count += sum((alias.asname or alias.name.split(".")[0]) == name for alias in node.names)
    return count


def _symbol_table(module: ModuleContext, outer: ast.FunctionDef, inner: ast.FunctionDef) -> symtable.SymbolTable | None:
    """Python's symbol table of ``inner`` (nested in ``outer``, at module level)."""
    try:
        top = module.cached(SYMBOL_TABLE, lambda: symtable.symtable(module.text, module.path, "exec"))
    except (SyntaxError, ValueError):
        return None
    for table in top.get_children():
        if table.get_name() == outer.name and table.get_lineno() == outer.lineno:
            for child in table.get_children():
                if child.get_name() == inner.name and child.get_lineno() == inner.lineno:
                    return child
    return None


def _globals_below(table: symtable.SymbolTable) -> set[str]:
    """The global names ``table`` and the scopes nested in it read."""
    found = {symbol.get_name() for symbol in table.get_symbols() if symbol.is_global() and symbol.is_referenced()}
    for child in table.get_children():
        found |= _globals_below(child)
    return found


def _moved_out_edit(module: ModuleContext, nested: _JittedNestedDef) -> Edit:
    """The edit of ``outer`` that takes the jitted def (and its ``g = jax.jit(inner)``) out of
    its body and puts them before it, at module level, with their comments; the edits of
    several in one ``outer`` merge, keeping their order."""
    names = frozenset({nested.inner.name} | ({nested.jitted_by.targets[0].id}  # type: ignore[attr-defined]
                                             if nested.jitted_by is not None else set()))
    position = name_position(module, nested.outer)

    def merge(edits: list[Edit]) -> Edit:
        together = frozenset().union(*(edit.replace.names for edit in edits))  # type: ignore[attr-defined]
        return Edit(position, cst.FunctionDef, _MovedOut(together), merge=merge, with_comments_above=True)

    return Edit(position, cst.FunctionDef, _MovedOut(names), merge=merge, with_comments_above=True)


class _MovedOut:
    """``outer`` with the defs and assignments of ``names`` in its body put before it."""

    def __init__(self, names: frozenset[str]):
        self.names = names

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock)
        moved: list[cst.BaseStatement] = []
        kept: list[cst.BaseStatement] = []
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in self.names \
                    or any(_assigns(statement, name) for name in self.names):
                moved.append(statement)
            else:
                if not kept and moved:  # the body's new first statement: no blank lines above it
                    statement = statement.with_changes(leading_lines=[
                        line for line in leading_lines(statement) if line.comment is not None])
                kept.append(statement)
        lines = list(node.leading_lines)
        split = next((at for at, line in enumerate(lines) if line.comment is not None), len(lines))
        blank, comments = lines[:split], lines[split:]  # the comments above `outer` stay with it
        moved = [statement.with_changes(leading_lines=[  # laid out at module level as black does
            *(blank if index == 0 else [cst.EmptyLine(indent=False)] * 2),
            *(line for line in leading_lines(statement) if line.comment is not None)])
            for index, statement in enumerate(moved)]
        after = node.with_changes(body=node.body.with_changes(body=kept),
                                  leading_lines=[cst.EmptyLine(indent=False)] * 2 + list(comments))
        return cst.FlattenSentinel([*moved, after])  # type: ignore[return-value]


def _assigns(statement: cst.BaseStatement, name: str) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
        and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
        and isinstance(statement.body[0].targets[0].target, cst.Name) \
        and statement.body[0].targets[0].target.value == name


def _called_more_than_once(module: ModuleContext) -> set[str]:
    """The module-level functions the module calls at two places or more, or in a loop."""
    counts: dict[str, int] = {}
    for node in walk_tree(module.tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            counts[node.func.id] = counts.get(node.func.id, 0) + 1
    names = {name for name, count in counts.items() if count > 1}
    return names | _called_in_loops(module, set(counts) - names) if counts else names


def _lines_spelling(module: ModuleContext, words: tuple[str, ...]) -> list[int]:
    """The (sorted) numbers of the lines whose text holds one of ``words`` (found with
    ``str.find`` over the text: most modules are long and spell none of them)."""
    found: set[int] = set()
    for word in words:
        at = module.text.find(word)
        while at != -1:
            found.add(_line_of(module, at))
            at = module.text.find(word, at + len(word))
    return sorted(found)


def _line_of(module: ModuleContext, offset: int) -> int:
    """The number of the line holding ``offset`` of the module's text."""
    starts = module.cached(LINE_STARTS, lambda: [0] + [match.end() for match in re.finditer("\n", module.text)])
    return bisect.bisect_right(starts, offset)


def _lines_naming(module: ModuleContext, names: Iterable[str]) -> list[int]:
    """The (sorted) numbers of the lines that spell one of ``names`` as a word."""
    return module.cached(WORD_LINES, lambda: LineIndex(module.text)).spelling(names) or []


def _spans_one_of(statement: ast.stmt, lines: list[int]) -> bool:
    at = bisect.bisect_left(lines, statement.lineno)
    return at < len(lines) and lines[at] <= (statement.end_lineno or statement.lineno)


def _called_in_loops(module: ModuleContext, names: set[str]) -> set[str]:
    """Which of ``names`` the module calls inside a loop or a comprehension."""
    spelled = {match[1] for match in re.finditer(r"(?<![\w.])(" + "|".join(map(re.escape, names)) + r")\s*\(",
                                                 module.text)}
    names = names & spelled  # most modules never call these functions themselves: no walk
    called: set[str] = set()
    if not names:
        return called
    lines = _lines_naming(module, names)
    for loop in _loops(module, lines):
        called |= {node.func.id for node in walk_tree(loop) if isinstance(node, ast.Call)
                   and isinstance(node.func, ast.Name) and node.func.id in names}
    for node in _nodes_spanning(module.tree, lines):
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            called |= {call.func.id for call in walk_tree(node) if isinstance(call, ast.Call)
                       and isinstance(call.func, ast.Name) and call.func.id in names}
    return called


def _nodes_spanning(tree: ast.AST, lines: list[int]) -> Iterator[ast.AST]:
    """The nodes of ``tree`` on one of ``lines`` (sorted), entering only what spans one."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in child_nodes(node)
                     if not hasattr(child, "lineno") or _spans_one_of(child, lines))  # type: ignore[arg-type]


def _rebuilt_in(module: ModuleContext, scope: ast.For | ast.While | ast.FunctionDef,
                body: list[ast.stmt]) -> Iterator[_Rebuilt]:
    nodes = list(_own_nodes(body))
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    called_names = {node.func.id for node in nodes if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assignments = {id(statement.value): statement for statement in body
                   if isinstance(statement, ast.Assign) and len(statement.targets) == 1
                   and isinstance(statement.targets[0], ast.Name)}
    for node in nodes:
        if not (isinstance(node, ast.Call) and node.args and module.imports.resolve(node.func) in CACHING_JITS):
            continue
        made = node.args[0]
        if not _makes_a_function(module, made):
            continue
        assignment = assignments.get(id(node))
        if id(node) in called:
            yield _Rebuilt(scope, node, made, None)
        elif assignment is not None and assignment.targets[0].id in called_names:  # type: ignore[attr-defined]
            yield _Rebuilt(scope, node, made, assignment)


def _makes_a_function(module: ModuleContext, made: ast.AST) -> bool:
    """A lambda, a ``functools.partial(...)``, or a transform of a function (``jax.grad(loss)``,
    ``jax.vmap(jax.grad(loss))``): each evaluation makes a new function object."""
    if isinstance(made, ast.Lambda):
        return True
    if not isinstance(made, ast.Call) or not made.args:
        return False
    called = module.imports.resolve(made.func)
    if called == PARTIAL:
        return True
    wrapped = made.args[0]
    return called in WRAPPING_TRANSFORMS and (isinstance(wrapped, ast.Name | ast.Attribute)
                                              or _makes_a_function(module, wrapped))


def _described(module: ModuleContext, made: ast.AST) -> str:
    if isinstance(made, ast.Lambda):
        return "a lambda"
    called = module.imports.resolve(made.func)  # type: ignore[attr-defined]
    if called == PARTIAL:
        return "a `partial`"
    spelled = module.segment(made)
    if len(spelled) <= 40 and "\n" not in spelled:
        return f"`{spelled}`"
    return f"a `{module.segment(made.func)}(...)`"  # type: ignore[attr-defined]


def _own_nodes(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes a loop's body evaluates on each pass itself: not those of nested loops
    (reported for them), nor those inside the functions, classes, lambdas and comprehensions
    it makes."""
    stack: list[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        yield node
        for child in reversed(child_nodes(node)):
            if isinstance(child, _LOOPS) or isinstance(node, _NEW_SCOPES):
                continue
            stack.append(child)


def _changed_in(scope: ast.For | ast.While | ast.FunctionDef) -> set[str]:
    """What takes a new value on each pass of a loop (or call of a function: its parameters
    and locals)."""
    names = assigned_names(scope.body)
    if isinstance(scope, ast.For):
        names |= {node.id for node in ast.walk(scope.target) if isinstance(node, ast.Name)}
    elif isinstance(scope, ast.FunctionDef):
        names |= {arg.arg for arg in ast.walk(scope.args) if isinstance(arg, ast.arg)}
    return names


def _functions_made_in(scope: ast.For | ast.While | ast.FunctionDef) -> set[str]:
    """Names the loop's (or function's) body binds to a def or a lambda."""
    names = set()
    for node in _own_nodes(scope.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return names


def _captured(made: ast.AST) -> set[str]:
    """The names a lambda reads from around it, or a partial's arguments read."""
    if isinstance(made, ast.Lambda):
        params = {arg.arg for arg in ast.walk(made.args) if isinstance(arg, ast.arg)}
        return {node.id for node in ast.walk(made.body) if isinstance(node, ast.Name)} - params
    return {node.id for node in ast.walk(made) if isinstance(node, ast.Name)}


def _on_every_pass(call: ast.Call, loop: ast.For | ast.While) -> bool:
    """Whether the call sits in a simple statement of the loop's body (not under an `if`,
    `try` or `with` there): made on every pass, from names bound before the loop."""
    return any(not hasattr(statement, "body") and any(node is call for node in ast.walk(statement))
               for statement in loop.body)


def _plain_arguments(module: ModuleContext, made: ast.Call) -> bool:
    """A partial or transform whose arguments are names, attributes, literals and operators of
    them (and the function it wraps, a name or one made the same way)."""
    wrapped = made.args[0] if made.args else None
    if isinstance(wrapped, ast.Call) and not (_makes_a_function(module, wrapped)
                                              and _plain_arguments(module, wrapped)):
        return False
    return not any(isinstance(node, ast.Call | ast.Await | ast.Yield | ast.NamedExpr)
                   for argument in [*made.args[1:], *(k.value for k in made.keywords)]
                   for node in ast.walk(argument))


def _hoist_edits(module: ModuleContext, found: _Rebuilt, taken: set[str]) -> list[Edit]:
    """The statement made before the loop (or the function), and the use of its name."""
    if found.assignment is not None and found.in_loop:  # `g = jax.jit(...)` moves out as it is,
        moved = _comments_above(module, found.assignment) + module.segment(found.assignment)  # its comments too
        return [_insert_before(module, found.scope, moved),  # type: ignore[arg-type]
                removal_edit(module, found.assignment)]
    if found.assignment is not None and found.loop is not None \
            and _only_binding(module, found.assignment, found.scope):  # type: ignore[arg-type]
        moved = _comments_above(module, found.assignment) + module.segment(found.assignment)
        return [_insert_before_function(module, found.scope, moved),  # type: ignore[arg-type]
                removal_edit(module, found.assignment)]
    named = _name_for(module, found.made)
    if not found.in_loop and named == "jitted":  # at module level, named for the function it served
        named = f"{found.scope.name}_jitted"  # type: ignore[union-attr]
    name = unique_name(named, taken)
    start, end = module.span_of(found.call)
    use = Edit(start, cst.Call, lambda node, context: cst.Name(name), end=end)
    made = f"{name} = {module.segment(found.call)}"
    if found.in_loop:
        return [_insert_before(module, found.scope, made), use]  # type: ignore[arg-type]
    return [_insert_before_function(module, found.scope, made), use]  # type: ignore[arg-type]


def _only_binding(module: ModuleContext, assignment: ast.Assign, function: ast.FunctionDef) -> bool:
    """Whether ``g = jax.jit(...)`` may move to module level as it is: ``g`` is bound nowhere
    else in the function, nor at module level, so the function's reads of it find it there."""
    target = assignment.targets[0]
    assert isinstance(target, ast.Name)
    in_function = [node for node in nodes_of(function) if isinstance(node, ast.Name) and node.id == target.id
                   and isinstance(node.ctx, ast.Store | ast.Del)]
    declared = any(isinstance(node, ast.Global | ast.Nonlocal) and target.id in node.names for node in nodes_of(function))
    parameters = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    return len(in_function) == 1 and not declared and target.id not in parameters \
        and target.id not in assigned_names(module.tree.body)


def _comments_above(module: ModuleContext, statement: ast.stmt) -> str:
    """The comment lines right above ``statement`` (they go where it goes), each ending in a newline."""
    lines = module.lines
    first = statement.lineno - 1
    while first > 0 and lines[first - 1].strip().startswith("#"):
        first -= 1
    return "".join(line.strip() + "\n" for line in lines[first:statement.lineno - 1])


def _name_for(module: ModuleContext, made: ast.AST) -> str:
    """``step_jit`` for ``partial(step, ...)``, ``grad_loss_jit`` for ``jax.grad(loss)``;
    ``jitted`` for a lambda."""
    parts = []
    while isinstance(made, ast.Call) and made.args:
        called = module.imports.resolve(made.func) or ""
        if called != PARTIAL:
            parts.append(called.rsplit(".", 1)[-1])
        made = made.args[0]
    if not isinstance(made, ast.Name | ast.Attribute):
        return "jitted"
    return "_".join([*parts, made.id if isinstance(made, ast.Name) else made.attr, "jit"])


def _insert_before(module: ModuleContext, loop: ast.For | ast.While, statement: str) -> Edit:
    node_type = cst.For if isinstance(loop, ast.For) else cst.While

    def merge(edits: list[Edit]) -> Edit:
        statements = [line for edit in edits for line in edit.replace.statements]  # type: ignore[attr-defined]
        return Edit(module.start_of(loop), node_type, _InsertBefore(statements), merge=merge)

    return Edit(module.start_of(loop), node_type, _InsertBefore([statement]), merge=merge)


def _insert_before_function(module: ModuleContext, function: ast.FunctionDef, statement: str) -> Edit:
    def merge(edits: list[Edit]) -> Edit:
        statements = [line for edit in edits for line in edit.replace.statements]  # type: ignore[attr-defined]
        return Edit(name_position(module, function), cst.FunctionDef, _InsertBefore(statements, 2), merge=merge)

    return Edit(name_position(module, function), cst.FunctionDef, _InsertBefore([statement], 2), merge=merge)


class _InsertBefore:
    """A loop or def with statements put before it (its leading comments and blank lines
    first, then ``blank_lines`` between them and it: two before a module-level def)."""

    def __init__(self, statements: list[str], blank_lines: int = 0):
        self.statements = statements
        self.blank_lines = blank_lines

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.For | cst.While | cst.FunctionDef)
        made = [cst.parse_statement(statement + "\n") for statement in self.statements]
        made[0] = made[0].with_changes(leading_lines=[*node.leading_lines, *made[0].leading_lines])
        after = node.with_changes(leading_lines=[cst.EmptyLine(indent=False)] * self.blank_lines)
        return cst.FlattenSentinel([*made, after])  # type: ignore[return-value]



# A literal range of at most this many values compiles a handful of variants: intended.
FEW_VALUES = 8


class StaticArgumentPerPass(Rule):
    code = "JF503"
    name = "static-argument-per-pass"
    summary = "a static argument that changes on every pass of a loop compiles the jitted function again each time"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls, inside a loop, of a function jitted with `static_argnames`/`static_argnums` "
        "whose static argument the loop changes on each pass (`step(x, i)` with `i` the loop "
        "index and static); with `jitfix profile --fix`, also a static argument the run saw take a "
        "new value call after call. Where the function only does elementwise arithmetic with "
        "it, the fix makes it a traced argument.",
        why="jit compiles once per distinct value of a static argument: a static loop index "
        "traces and compiles the function on every pass, which can cost more than the work.",
        example="def shift(x, k):\n    return x + k\n\nfast_shift = jax.jit(shift, static_argnames=(\"k\",))\n\n"
        "def run(x, n):\n    for k in range(n):\n        x = fast_shift(x, k)\n    return x\n",
        fixed="def shift(x, k):\n    return x + k\n\nfast_shift = jax.jit(shift)\n\n"
        "def run(x, n):\n    for k in range(n):\n        x = fast_shift(x, k)\n    return x\n",
        safety="The fix takes the argument out of `static_argnames`/`static_argnums` at every jit "
        "of the function, only when every use of it in the function -- and of each name "
        "computed from it -- is arithmetic, a comparison or an elementwise JAX function "
        "(`jnp.sin`, `jnp.maximum`: the catalogue's list, found by running them) on numbers or "
        "tracers, assigned or returned: those compute the same with a tracer as with a Python "
        "number, and one compilation serves every value. It is unsafe because callers this "
        "module does not show may pass what is no number (`None`, a string): jit would then "
        "refuse it; `jitfix profile --fix` applies it where the run saw only numbers and then "
        "runs the command again. Reported, not fixed: an argument that sets a shape, a "
        "`range`, a Python branch or goes into code jitfix does not know -- keep its values few "
        "(round up to a bucket, pad) or move the loop inside the jitted function. Only loop "
        "counters are reported (the index of `range` or `enumerate`, what a `while` loop "
        "steps): a loop over configurations (`for n in (8, 16, 32)`, `for cfg in sweep`) "
        "compiles one variant per value on purpose, as does a `range` of a few values (literals, or "
        "names the function binds once to one: `num_viz = 3`).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        jitted = {name: traced for name, traced in _jitted_callables(module).items() if traced.static_params}
        if not jitted:
            return
        reported: set[tuple[int, str]] = set()
        constants: dict[int, dict[str, int]] = {}
        for loop, scope in _scoped_loops(module, _lines_naming(module, jitted)):
            if id(scope) not in constants:
                constants[id(scope)] = _constant_ints(scope)
            changed = _counters(loop, constants[id(scope)])
            if not changed:
                continue
            for call in _own_nodes(loop.body):
                if not isinstance(call, ast.Call) or (name := _jitted_name(module, call, jitted)) is None:
                    continue
                traced = jitted[name]
                for param, argument in _arguments(traced, call, static=True):
                    moving = sorted({n.id for n in ast.walk(argument) if isinstance(n, ast.Name)} & changed)
                    if moving:
                        reported.add((id(traced.node), param))
                        fix, why_not = _traced_instead(module, traced, param)
                        yield self.finding(
                            module, argument, f"`{name}` is called with its static argument `{param}` "
                            f"= `{module.segment(argument)}`, which the loop at line {loop.lineno} changes: it traces "
                            f"and compiles again for every new value; {_advice(param, fix, why_not)}",
                            fix, function=traced)
        yield from self._seen_in_a_run(module, jitted, reported)

    def _seen_in_a_run(self, module: ModuleContext, jitted: dict[str, TracedFunction],
                       reported: set[tuple[int, str]]) -> Iterator[Finding]:
        """Static arguments a run saw take a new value call after call (``jitfix profile``'s
        evidence, ``Settings.recompiled_static``), reported at the jit."""
        seen = module.settings.recompiled_static
        if not seen:
            return
        here = str(Path(module.path).resolve())
        for name, traced in jitted.items():
            node = traced.node
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            for path, line, function, param, values in seen:
                if (path, function) != (here, node.name) or not first <= line <= node.lineno \
                        or param not in traced.static_params or (id(node), param) in reported:
                    continue
                reported.add((id(node), param))
                fix, why_not = _traced_instead(module, traced, param)
                site = traced.jit_sites[0] if traced.jit_sites else node
                yield self.finding(
                    module, site, f"`{name}` compiled again for each new value of its static argument `{param}` "
                    f"in a run ({values} values); {_advice(param, fix, why_not)}", fix, function=traced)


def _advice(param: str, fix: Fix | None, why_not: str) -> str:
    if fix is not None:
        return f"it only enters elementwise arithmetic: make `{param}` a traced argument"
    return (f"not auto-fixable: {why_not}; if it sets no shape, `range` or Python branch, drop it from the static "
            "arguments, else keep its values few")


def _traced_instead(module: ModuleContext, traced: TracedFunction, param: str) -> tuple[Fix | None, str]:
    """The fix that makes the static ``param`` traced at every jit of the function, or why
    there is none."""
    sites = traced.jit_sites
    if traced.bound_jit_sites or not sites or not all(isinstance(site, ast.Call) for site in sites):
        return None, "the function is jitted where jitfix cannot change its static arguments"
    flow = traced.flow(module.imports)

    def traced_operand(node: ast.expr, statement: ast.stmt, must_be_array: bool) -> bool:
        verdict = flow.at(statement).verdict(node)
        return verdict.traced and (verdict.array or not must_be_array)

    why = traceable(traced.node, param, module.imports, traced_operand)
    if why is not None:
        return None, f"`{param}` must stay a Python value ({why})"
    edits = [static_removed_edit(module, site, [param], traced.node) for site in sites]  # type: ignore[arg-type]
    if any(edit is None for edit in edits):
        return None, "its static arguments are not written as literals"
    return Fix(Safety.UNSAFE, f"make `{param}` a traced argument", edits), ""  # type: ignore[arg-type]


def _jitted_callables(module: ModuleContext) -> dict[str, TracedFunction]:
    """Names that call a jitted function: a decorated def's own name, and ``g`` of a
    module-level ``g = jax.jit(f, ...)`` (found once per module, for JF503-JF505)."""
    return module.cached(JITTED_CALLABLES, lambda: _find_jitted_callables(module))


def _find_jitted_callables(module: ModuleContext) -> dict[str, TracedFunction]:
    assigned = {id(statement.value): statement.targets[0].id for statement in module.tree.body
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)}
    found: dict[str, TracedFunction] = {}
    for traced in module.traced.values():
        decorators = getattr(traced.node, "decorator_list", ())
        for site in traced.jit_sites:
            if site in decorators:
                found[traced.node.name] = traced
            elif id(site) in assigned:
                found[assigned[id(site)]] = traced
    return found


def _jitted_name(module: ModuleContext, call: ast.Call, jitted: Mapping[str, TracedFunction]) -> str | None:
    """``name`` where ``call`` is ``name(...)`` and ``name`` is, in the call's scope, the jitted
    callable of that name (a `def f` jitted in one test method is not the `f` another method
    binds: dm-haiku's tests); None otherwise."""
    if not (isinstance(call.func, ast.Name) and call.func.id in jitted):
        return None
    resolving = module.cached(JITTED_CALLS, lambda: _find_jitted_calls(module))
    return call.func.id if resolving is None or id(call) in resolving else None


def _find_jitted_calls(module: ModuleContext) -> set[int] | None:
    program = module.traced.program
    if program is None:
        return None
    scopes = program.scopes
    found: set[int] = set()
    for name, traced in _jitted_callables(module).items():
        home = scopes.parent.get(traced.node) if traced.node.name == name else scopes.tree
        for call, scope in scopes.calls_to(name):
            if not isinstance(call.func, ast.Name):
                continue
            if traced.node.name == name and any(site in getattr(traced.node, "decorator_list", ())
                                                for site in traced.jit_sites):
                # (as Python resolves it: a loop target, `with ... as f` or an import of the
                # name in between is another `f`)
                if scopes.lookup(scope, name, call.lineno) is traced.node \
                        and scopes.binding_scope(scope, name) in (home, None):
                    found.add(id(call))
            elif scopes.binding_scope(scope, name) in (home, None):
                found.add(id(call))
    return found


def _arguments(traced: TracedFunction, call: ast.Call, static: bool) -> Iterator[tuple[str, ast.expr]]:
    """(parameter, argument) for each parameter the call passes that is static (or, with
    ``static=False``, that is not)."""
    positional = positional_names(traced.node)
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return
        if index < len(positional) and (positional[index] in traced.static_params) == static:
            yield positional[index], argument
    for keyword in call.keywords:
        if keyword.arg is not None and (keyword.arg in traced.static_params) == static:
            yield keyword.arg, keyword.value


def _counters(loop: ast.For | ast.While, constants: dict[str, int] | None = None) -> set[str]:
    """The names that take a new value on every pass: the index of ``for i in range(n)``
    (unless a range of literals, or of names the scope binds once to one (``constants``), has
    a few values) or of ``enumerate``, and what a ``while`` loop
    steps (``i += 1``, ``i = i + 1``). A loop over configurations (``for n in sizes``) picks
    its values on purpose: compiling one variant per value is what it asks for."""
    if isinstance(loop, ast.While):
        return {node.target.id for node in _own_nodes(loop.body) if isinstance(node, ast.AugAssign)
                and isinstance(node.target, ast.Name)} | {
            node.targets[0].id for node in _own_nodes(loop.body) if isinstance(node, ast.Assign)
            and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.BinOp)
            and isinstance(node.value.left, ast.Name) and node.value.left.id == node.targets[0].id}
    iterable, target = loop.iter, loop.target
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.args):
        return set()
    if is_range(iterable) and isinstance(target, ast.Name):
        constants = constants or {}
        bounds = [constants.get(argument.id) if isinstance(argument, ast.Name) else literal_int(argument)
                  for argument in iterable.args]
        few = None not in bounds and len(range(*bounds)) <= FEW_VALUES  # type: ignore[arg-type]
        return set() if few else {target.id}
    if iterable.func.id == "enumerate" and isinstance(target, ast.Tuple) and isinstance(target.elts[0], ast.Name):
        return {target.elts[0].id}
    return set()


def _constant_ints(scope: Scope) -> dict[str, int]:
    """The names the scope binds once, to an int literal (``num_viz = 3``), and never again."""
    values: dict[str, int] = {}
    bindings: dict[str, int] = {}
    for node in own_nodes(scope.body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bindings[node.id] = bindings.get(node.id, 0) + 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bindings.update((name, 2) for name in node.names)  # bound elsewhere too
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = literal_int(node.value)
            if value is not None:
                values[node.targets[0].id] = value
    return {name: value for name, value in values.items() if bindings.get(name) == 1}


class GrowingShapeArgument(Rule):
    code = "JF504"
    name = "growing-shape-argument"
    summary = "a jitted function called in a loop with an array whose shape the loop changes compiles on every pass"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls, inside a loop, of a jitted function with an argument whose shape changes on "
        "each pass: a slice bounded by the loop counter (`x[:i]`, `x[i:]`), or an array the loop "
        "grows (`buf = jnp.append(buf, v)`, `np.concatenate`, `buf = buf[1:]`). When the function "
        "computes its result row by row, the call pads the argument to a power-of-two length.",
        why="jit compiles once per input shape: an argument one element longer on each pass traces and "
        "compiles the function on every pass, and the compiled cache grows with it.",
        example="@jax.jit\ndef soft(x):\n    return x / (1.0 + jnp.abs(x))\n\n\n"
        "def prefixes(xs, n):\n    out = []\n    for i in range(n):\n        out.append(soft(xs[:i]))\n"
        "    return out\n",
        fixed="@jax.jit\ndef soft(x):\n    return x / (1.0 + jnp.abs(x))\n\n\n"
        "def soft_bucketed(x):\n"
        '    """`soft` of `x` padded with zero rows to a power-of-two length, cut back to its\n'
        "    length: one compilation per power of two instead of one per length (`soft` computes\n"
        '    each row of its result from the same row of `x`, so the padding changes no other row)."""\n'
        "    x = jnp.asarray(x)\n    length = x.shape[0]\n    bucket = 1 << max(length - 1, 0).bit_length()\n"
        "    padded = jnp.pad(x, [(0, bucket - length)] + [(0, 0)] * (x.ndim - 1))\n"
        "    return soft(padded)[:length]\n\n\n"
        "def prefixes(xs, n):\n    out = []\n    for i in range(n):\n        out.append(soft_bucketed(xs[:i]))\n"
        "    return out\n",
        safety="Fixed (safely) when the function has one parameter and returns an expression of it built "
        "only from arithmetic, comparisons, number literals and elementwise JAX functions (the "
        "catalogue's list, found by running them): each row of the result then depends on the same "
        "row of the argument alone, so a helper added after the function pads the argument with zero "
        "rows to the next power of two, calls it and cuts the result back to the argument's length "
        "-- the same values, with one compilation per power of two instead of one per length. "
        "Anything else is reported: a reduction, a matrix product or a second argument sees the "
        "padding, so the function must be told which part is real (pass a fixed-size array and a "
        "mask, `jnp.where(mask, x, 0).sum()`), which changes its code and its callers. `jitfix "
        "profile` shows the shapes seen and the buckets that cover them. A literal `range` of a few "
        "values is left alone (a handful of compilations).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        jitted = _jitted_callables(module)
        if not jitted:
            return
        for loop in _loops(module, _lines_naming(module, jitted)):
            counters = _moving_with(_counters(loop), loop)
            for call in _own_nodes(loop.body):
                if not isinstance(call, ast.Call) or (name := _jitted_name(module, call, jitted)) is None:
                    continue
                traced = jitted[name]
                for param, argument in _arguments(traced, call, static=False):
                    how = _shape_changing(argument, call, counters, loop, module)
                    if not how:
                        continue
                    where = (f"`{name}` is called in the loop at line {loop.lineno} with `{param}` = "
                             f"`{module.segment(argument)}`, {how}: it traces and compiles again for every new shape")
                    fix, why_not = _bucketed_call(module, call, traced)
                    if fix is not None:
                        yield self.finding(module, argument, f"{where}; it computes row by row: pad the argument to "
                                           "a power-of-two length", fix, function=traced)
                    else:
                        yield self.finding(module, argument, f"{where}; not auto-fixable: {why_not}; pass a "
                                           "fixed-size array and a mask (or pad to a few bucket sizes)",
                                           function=traced)


def _bucketed_call(module: ModuleContext, call: ast.Call, traced: TracedFunction) -> tuple[Fix | None, str]:
    """The fix that calls the jitted function through a helper padding its one argument to a
    power-of-two length (the helper added after the function), or why there is none."""
    function = traced.node
    params = function.args
    if call.keywords or len(call.args) != 1 or isinstance(call.args[0], ast.Starred) \
            or len(positional_names(function)) != 1 or params.vararg or params.kwarg or params.kwonlyargs:
        return None, "it takes more than the one argument whose shape changes"
    why = row_wise(function, positional_names(function)[0], module.imports)
    if why is not None:
        return None, f"padding would change its result ({why})"
    jitted_name = call.func.id  # type: ignore[attr-defined]
    anchor = _definition_of(module, jitted_name, traced)
    if anchor is None:
        return None, f"jitfix cannot tell where `{jitted_name}` is defined to add a helper next to it"
    helper = _helper_name(module, jitted_name)
    start, end = module.span_of(call)
    use = Edit(start, cst.Call, _CalledThrough(helper), end=end)
    return Fix(Safety.SAFE, f"call `{jitted_name}` through `{helper}`, which pads to a power-of-two length",
               [_helper_after(module, anchor, helper, jitted_name, positional_names(function)[0]), use]), ""


def _definition_of(module: ModuleContext, name: str, traced: TracedFunction) -> ast.stmt | None:
    """The statement that makes ``name`` the jitted function: its decorated def, or a
    module-level ``name = jax.jit(...)``."""
    if getattr(traced.node, "name", None) == name and any(site in traced.node.decorator_list
                                                          for site in traced.jit_sites):
        return traced.node
    return next((statement for statement in module.tree.body if isinstance(statement, ast.Assign)
                 and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
                 and statement.targets[0].id == name and statement.value in traced.jit_sites), None)


def _helper_name(module: ModuleContext, jitted_name: str) -> str:
    """One helper name per jitted function and module, unused there."""
    names = module.cached(BUCKETED_HELPERS, dict)
    if jitted_name not in names:
        taken = module.cached(TAKEN_NAMES, lambda: {node.id for node in ast.walk(module.tree)
                                                    if isinstance(node, ast.Name)} | {
            node.name for node in ast.walk(module.tree) if isinstance(node, ast.FunctionDef | ast.ClassDef)})
        names[jitted_name] = unique_name(f"{jitted_name}_bucketed", taken)
    return names[jitted_name]


def _helper_after(module: ModuleContext, anchor: ast.stmt, helper: str, jitted_name: str, param: str) -> Edit:
    """The edit that adds the padding helper after the statement defining the function."""
    added = _AddAfter(helper, jitted_name, param, blank_lines=2 if anchor.col_offset == 0 else 1)
    if isinstance(anchor, ast.FunctionDef | ast.AsyncFunctionDef):
        return Edit(name_position(module, anchor), cst.FunctionDef, added, imports=("jax.numpy",),
                    merge=lambda edits: edits[0])
    return Edit(module.start_of(anchor), cst.SimpleStatementLine, added, imports=("jax.numpy",),
                merge=lambda edits: edits[0])


class _AddAfter:
    """The statement, then the helper that calls the jitted function on padded rows."""

    def __init__(self, helper: str, jitted_name: str, param: str, blank_lines: int):
        self.helper, self.jitted_name, self.param = helper, jitted_name, param
        self.blank_lines = blank_lines  # as black puts them: two at module level, one inside

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        jnp, x, name = context.name("jax.numpy"), self.param, self.jitted_name
        source = (
            f"def {self.helper}({x}):\n"
            f'    """`{name}` of `{x}` padded with zero rows to a power-of-two length, cut back to its\n'
            f"    length: one compilation per power of two instead of one per length (`{name}` computes\n"
            f'    each row of its result from the same row of `{x}`, so the padding changes no other row)."""\n'
            f"    {x} = {jnp}.asarray({x})\n"
            f"    length = {x}.shape[0]\n"
            f"    bucket = 1 << max(length - 1, 0).bit_length()\n"
            f"    padded = {jnp}.pad({x}, [(0, bucket - length)] + [(0, 0)] * ({x}.ndim - 1))\n"
            f"    return {name}(padded)[:length]\n")
        helper = cst.parse_statement(source).with_changes(
            leading_lines=[cst.EmptyLine(indent=False)] * self.blank_lines)
        return cst.FlattenSentinel([node, helper])  # type: ignore[return-value]


class _CalledThrough:
    def __init__(self, helper: str):
        self.helper = helper

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return node.with_changes(func=cst.Name(self.helper))


def _shape_changing(argument: ast.expr, call: ast.Call, counters: set[str], loop: ast.For | ast.While,
                    module: ModuleContext) -> str | None:
    """How the argument's shape changes from pass to pass, if the code shows it."""
    if isinstance(argument, ast.Subscript):
        for part in ast.walk(argument.slice):
            if not isinstance(part, ast.Slice):
                continue
            moving = [_names_in(bound) & counters for bound in (part.lower, part.upper)]
            # One end moves with the counter: the length does. (Both ends moving, `x[i:i + 2]`,
            # is a window of one length.)
            if bool(moving[0]) != bool(moving[1]):
                return f"a slice bounded by `{sorted(moving[0] | moving[1])[0]}`, which the loop steps"
    if isinstance(argument, ast.Name) and _carried_to(argument.id, call, loop):
        growth = shape_growth(argument.id, loop.body, module.imports, modules=("jax.numpy.", "numpy."))
        if growth is not None:
            return f"which the loop gives a new shape on every pass ({growth[1]}, line {getattr(growth[0], 'lineno', '?')})"
    return None


def _carried_to(name: str, call: ast.Call, loop: ast.For | ast.While) -> bool:
    """Whether the value ``name`` has at the call may be one an earlier pass left: read there
    (or before) without this pass certainly binding it anew first. Only then can what a pass
    does to its shape reach the next pass's call."""
    for index, statement in enumerate(loop.body):
        if any(node is call for node in walk_tree(statement)):
            return name in upward_exposed(loop.body[:index + 1])
    return True


def _moving_with(counters: set[str], loop: ast.For | ast.While) -> set[str]:
    """The counters and the names the loop's body computes from them (``end = start + size``):
    a slice between two of them (``x[start:end]``) is a window that moves, not one that grows."""
    moving = set(counters)
    grown = bool(moving)
    while grown:
        grown = False
        for node in _own_nodes(loop.body):
            if isinstance(node, ast.Assign) and _names_in(node.value) & moving:
                for target in node.targets:
                    new = {name.id for name in ast.walk(target) if isinstance(name, ast.Name)} - moving
                    if new:
                        moving |= new
                        grown = True
    return moving


def _names_in(node: ast.AST | None) -> set[str]:
    return {name.id for name in ast.walk(node) if isinstance(name, ast.Name)} if node is not None else set()


# Python literals by the weak type jit gives them (bool is its own kind: `True` is not 1 here).
_LITERAL_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}


class WeakTypeFlip(Rule):
    code = "JF505"
    name = "weak-type-flip"
    summary = "a jitted function given an int literal in one call and a float literal in another compiles twice"
    fixable = "never"
    doc = RuleDoc(
        what="Finds a jitted function that the module calls with Python number literals of different "
        "kinds for the same argument (`step(x, 1)` here, `step(x, 0.5)` there).",
        why="jit treats a Python number as a weakly typed scalar of its kind: an `int` and a `float` "
        "are different input types, so each kind traces and compiles the function again (and their "
        "results may differ in dtype).",
        example="@jax.jit\ndef scale(x, factor):\n    return x * factor\n\n\n"
        "def both(x):\n    return scale(x, 2), scale(x, 0.5)\n",
        fixed="@jax.jit\ndef scale(x, factor):\n    return x * factor\n\n\n"
        "def both(x):\n    return scale(x, 2.0), scale(x, 0.5)\n",
        safety="Reported, not fixed: writing `2` as `2.0` changes the result's dtype when the other "
        "operands are integers; choose the kind the function means, or pass an array of a fixed dtype.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        jitted = _jitted_callables(module)
        if not jitted:
            return
        # A flip needs two calls of one name: found in the text first (most modules have none).
        spelled = [(match[1], match.start()) for match in
                   re.finditer(r"(?<![\w.])(" + "|".join(map(re.escape, jitted)) + r")\s*\(", module.text)]
        names = [name for name, _ in spelled]
        twice = {name for name, count in Counter(names).items() if count > 1}
        if not twice:
            return
        lines = sorted({_line_of(module, at) for name, at in spelled if name in twice})
        seen: dict[tuple[str, str], dict[str, ast.expr]] = {}  # (function, parameter) -> kind -> first literal
        for call in _calls_on_lines(module, lines):
            name = _jitted_name(module, call, jitted)
            if name is None or name not in twice:
                continue
            for param, argument in _arguments(jitted[name], call, static=False):
                kind = _literal_kind(argument)
                if kind is None:
                    continue
                kinds = seen.setdefault((name, param), {})
                if kind not in kinds and kinds:
                    other_kind, other = next(iter(kinds.items()))
                    yield self.finding(
                        module, argument, f"`{name}` gets `{param}` = `{module.segment(argument)}`, a Python "
                        f"{kind}, here and `{module.segment(other)}`, a Python {other_kind}, at line {other.lineno}: "
                        "two weak types, so it compiles once for each; not auto-fixable: pass one kind",
                        function=jitted[name])
                kinds.setdefault(kind, argument)


def _calls_on_lines(module: ModuleContext, lines: list[int]) -> Iterator[ast.Call]:
    """The calls in the statements that span one of ``lines`` (sorted), in source order."""
    stack: list[ast.AST] = list(reversed(module.tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            at = bisect.bisect_left(lines, node.lineno)
            if at == len(lines) or lines[at] > (node.end_lineno or node.lineno):
                continue  # no line of it names a jitted function
        if isinstance(node, ast.Call):
            yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _literal_kind(argument: ast.expr) -> str | None:
    value = argument.operand if isinstance(argument, ast.UnaryOp) and isinstance(argument.op, ast.USub | ast.UAdd) \
        else argument
    if isinstance(value, ast.Constant):
        return _LITERAL_KINDS.get(type(value.value))
    return None
