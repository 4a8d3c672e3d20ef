"""Which module-level names traced code reads that change after the trace: rebound at module
level, rebound by `global` in a function, or changed in place -- and which of those changes a
traced function can see (it is called across the change), which are configuration, and which
are registries. JF301 (``rules/globals.py``) reports and fixes what this finds."""

from __future__ import annotations

import ast
import bisect
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
    nodes_of,
    walk_body,
    walk_tree,
)
from jitfix.analysis.catalogue import (ARRAY, GRAD_TRANSFORMS, HOST_GENERATORS, JIT_TRANSFORMS, ONE_ARRAY, PARTIAL,
                                       TRACING_TRANSFORMS, function_category, numpy_member)
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.scopes import Change


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


def module_level_names(tree: ast.Module) -> tuple[set[str], bool]:
    """The names the module's own statements assign, and whether one is assigned twice."""
    seen: set[str] = set()
    rebound = False
    for statement in _module_statements(tree):
        if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign):
            for name in assigned_names([statement]):
                rebound = rebound or name in seen or isinstance(statement, ast.AugAssign)
                seen.add(name)
    return seen, rebound


def free_reads(function: ast.FunctionDef | ast.AsyncFunctionDef, parents: Mapping[ast.AST, ast.AST],
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


def outermost_function(function: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> ast.AST:
    """The outermost def around ``function`` (itself, if none is)."""
    outermost, scope = function, parents.get(function)
    while scope is not None:
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            outermost = scope
        scope = parents.get(scope)
    return outermost


def module_attribute_reads(function: ast.FunctionDef, imports: ImportTable) -> Iterator[ast.Attribute]:
    """``config.LR`` read as a value in the function (or a def in it), ``config`` an imported
    name (``lax.add(x, y)`` calls a function: not a setting)."""
    nodes = list(walk_tree(function))
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    modules = imports.aliases.keys() | imports.relative.keys()
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and id(node) not in called and node.value.id in modules:
            yield node


def may_change(text: str, name: str) -> bool:
    """Whether a module's text could rebind ``name`` from a function (`global name`) or change
    it in place (`name[k] = v`, `name.a = v`, `name.append(v)`): what ``changing_globals``
    looks for, spelled."""
    spelled = re.escape(name)
    return re.search(rf"\bglobal\b[^\n]*\b{spelled}\b|\b{spelled}\s*(\[[^\n]*\]|\.\w+)\s*(=[^=]|\()", text) is not None


def read_attributes(functions: list[ast.FunctionDef], names: set[str]) -> dict[str, set[str | None]]:
    """How traced code reads each name: ``name.attr`` gives ``attr``; any other use, None."""
    found: dict[str, set[str | None]] = {}
    for function in functions:
        attributes = {id(node.value): node.attr for node in walk_body(function)
                      if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
        for node in walk_body(function):
            if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
                found.setdefault(node.id, set()).add(attributes.get(id(node)))
    return found


def used_as_registry(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
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


def changed_inside(function: ast.FunctionDef, names: list[str]) -> str | None:
    """A global the function (or a def in it) changes itself (``seen.append(x)``): passing a
    copy in would hide the change from everyone else."""
    for node in nodes_of(function):
        targets = [call.func.value for call in method_changes(node)]  # type: ignore[attr-defined]
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store):
            targets.append(node.value)
        for target in targets:
            if isinstance(target, ast.Name) and target.id in names:
                return target.id
    return None


def called_across_a_rebinding(tree: ast.Module, imports: ImportTable, function: ast.AST, name: str,
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
    timeline, uses = kept_on_node(function, "module_uses", lambda: _module_uses(tree, imports, function))
    binds = [index for index, statement in enumerate(tree.body)
             if not isinstance(statement, ast.FunctionDef | ast.ClassDef)
             and name in assigned_names([statement])]
    if set(uses) & set(binds[1:]):
        return True
    reachable_after = bool(timeline[-1][0])
    if not (importable and reachable_after):  # a stale read needs a use after the rebinding
        return any(binds[0] < use < rebind < later for use in uses for rebind in binds[1:] for later in uses)
    return any(binds[0] < use < rebind for use in uses for rebind in binds[1:])


def _module_uses(tree: ast.Module, imports: ImportTable,
                 function: ast.AST) -> tuple[list[tuple[set[str], set[str]]], list[int]]:
    """What leads to the function before each top-level statement (``_reach_over_time``), and
    the statements after the one that makes it that may trace it: the same for each global
    the function reads."""
    start = _top_level_index(tree, function)
    timeline = _reach_over_time(tree.body, imports, function, start)
    uses = [index for index, statement in enumerate(tree.body)
            if index > start and _traces(statement, *timeline[index], imports)]
    return timeline, uses


def _top_level_index(tree: ast.Module, node: ast.AST) -> int:
    """The index of the top-level statement holding ``node`` (-1: none), found by its lines."""
    line = getattr(node, "lineno", None)
    if line is not None:
        at = bisect.bisect_right([statement.lineno for statement in tree.body], line) - 1
        for index in range(at, -1, -1):  # a decorated def starts after its decorators' lines
            statement = tree.body[index]
            if (statement.end_lineno or statement.lineno) < line:
                break
            if any(inner is node for inner in ast.walk(statement)):
                return index
    return next((index for index, statement in enumerate(tree.body)
                 if any(inner is node for inner in ast.walk(statement))), -1)


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
    return kept_on_node(statement, "top_level_bindings", lambda: _find_top_level_bindings(statement))


def _find_top_level_bindings(statement: ast.stmt) -> set[str]:
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
    return kept_on_node(statement, "defined_before_read", lambda: _find_defined_before_read(statement))


def _find_defined_before_read(statement: ast.stmt) -> set[str]:
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
    if not factories:
        return False
    return not factories.isdisjoint(kept_on_node(statement, "made_and_called", lambda: frozenset(
        node.func.func.id for node in ast.walk(statement) if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Call) and isinstance(node.func.func, ast.Name))))


# Calls that return a function made from the one they are given.
WRAPPING = JIT_TRANSFORMS | TRACING_TRANSFORMS | GRAD_TRANSFORMS | {PARTIAL}


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


def passable(tree: ast.Module, imports: ImportTable, name: str, traced_writer: ast.AST | None = None) -> bool:
    """Whether the global holds what jit takes as an argument. Its module-level values must
    show it: numbers, arrays made by NumPy or JAX, arithmetic of those, dicts and lists of
    them, configuration (strings, bools, tuples). A function that rebinds it (`global SCALE; SCALE = value`)
    may use any value but a function or an object made by code jitfix cannot see. What
    ``traced_writer`` binds is not asked: a traced function's values are what jit gives back."""
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
            if called in HOST_GENERATORS:
                return False  # a generator object: no argument jit takes
            return function_category(called) in (ARRAY, ONE_ARRAY) or numpy_member(called) is not None
        return isinstance(node, ast.Name) and node.id == name  # `x = x + 1` keeps its kind

    def rebound_value(node: ast.AST | None) -> bool:
        if isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
            return True
        if isinstance(node, ast.BinOp):
            return rebound_value(node.left) and rebound_value(node.right)
        return literal_value(node)

    at_module_level = _bindings(tree.body, name)
    in_functions = [value for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and node is not traced_writer
                    and any(isinstance(inner, ast.Global) and name in inner.names for inner in ast.walk(node))
                    for value in _bindings(node.body, name)]
    return bool(at_module_level) and all(literal_value(value) for value in at_module_level) \
        and all(rebound_value(value) for value in in_functions)


def is_config(tree: ast.Module, name: str) -> bool:
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
