"""A module's index: its defs and classes by scope, the calls that may trace a function, and
where the module's code changes a name -- built in one walk of the tree and read by every
part of the analysis (``scope_index``)."""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass
from itertools import chain
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from jitfix.analysis.blocks import FunctionNode, method_changes, non_leaf_children, walk_tree
from jitfix.analysis.catalogue import MUTATING_METHODS, RECEIVERS, TRACING_CALL_NAMES, may_trace
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import parameter_names, positional_names
from jitfix.analysis.words import LineIndex

class Change(NamedTuple):
    """Where the module's code changes a name."""

    scope: ast.AST
    name: str
    how: str  # in words, for findings: "changed in place (`.a = ...`)"
    attribute: str | None  # the attribute written (only reads of it go stale), or None
    declared_global: bool = False  # `global name` in a function: it may rebind the name


def _bound_by(statement: ast.AST) -> Iterator[str]:
    """The names one statement binds itself (not those of the statements inside it)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield statement.name
        return
    if isinstance(statement, ast.Import | ast.ImportFrom):
        for alias in statement.names:
            yield (alias.asname or alias.name).split(".")[0]
        return
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign | ast.For | ast.AsyncFor):
        targets = [statement.target]
    elif isinstance(statement, ast.With | ast.AsyncWith):
        targets = [item.optional_vars for item in statement.items if item.optional_vars is not None]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                yield node.id


_STATEMENT_LIKE = (ast.stmt, ast.excepthandler, ast.match_case)
# The fields of compound statements that hold statements (handlers and match cases count),
# rather than expressions.
_STATEMENT_BLOCKS: dict[type, tuple[str, ...]] = {
    kind: tuple(name for name in ("body", "orelse", "handlers", "finalbody", "cases") if name in kind._fields)
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
                 ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try), ast.Match,
                 ast.ExceptHandler, ast.match_case)
}


def _spans_a_line(node: ast.AST, lines: list[int] | None) -> bool:
    """Whether one of ``lines`` falls within the node's lines (True when either is unknown:
    ``ast.arguments`` and ``withitem`` carry no position)."""
    first = getattr(node, "lineno", None)
    if lines is None or first is None:
        return True
    at = bisect.bisect_left(lines, first)
    return at < len(lines) and lines[at] <= (node.end_lineno or first)  # type: ignore[attr-defined]


_ASSIGNING = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith})


class _Lines:
    """Sorted line numbers (None: unknown, every line counts), asked whether a node spans
    one of them -- in the hot loop: most nodes take one line, and a set answers for those."""

    def __init__(self, lines: list[int] | None):
        self.lines = lines
        self._set = set(lines) if lines is not None else None

    def spanned_by(self, node: ast.AST) -> bool:
        first = getattr(node, "lineno", None)
        if first is not None and self._set is not None and first == node.end_lineno:  # type: ignore[attr-defined]
            return first in self._set
        return _spans_a_line(node, self.lines)


def _targets(statement: ast.AST) -> list[ast.AST]:
    """The targets a statement assigns to (where an in-place change can be spelled)."""
    kind = type(statement)
    if kind is ast.Assign:
        return statement.targets  # type: ignore[attr-defined]
    if kind is ast.AugAssign or kind is ast.AnnAssign or kind is ast.For or kind is ast.AsyncFor:
        return [statement.target]  # type: ignore[attr-defined]
    if kind is ast.With or kind is ast.AsyncWith:
        return [item.optional_vars for item in statement.items if item.optional_vars is not None]  # type: ignore[attr-defined]
    return []


def _own_expression_nodes(statement: ast.AST) -> Iterator[ast.AST]:
    """Every node of the expressions a statement holds itself (not those of its blocks)."""
    stack = [child for child in reversed(non_leaf_children(statement)) if not isinstance(child, _STATEMENT_LIKE)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(non_leaf_children(node)))


def _callee_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None


@dataclass(frozen=True)
class Bound:
    """A def reached through ``partial``: how many leading positional parameters, and which
    keyword parameters, already hold the bound (Python) values."""

    function: FunctionNode
    positional: int = 0
    keywords: frozenset[str] = frozenset()
    # Leading arguments of the call that do not reach the function (flax's
    # `model.apply(variables, x)`: `x` is `__call__`'s first argument after `self`).
    skipped: int = 0

    def free_positional(self) -> list[str]:
        names = positional_names(self.function)
        return [name for name in names[self.positional:] if name not in self.keywords]


@dataclass(frozen=True)
class CalledAs:
    """The name a traced function's callers use, and the scope whose binding of it a call
    must see to be a call of this function: the def's own scope for a decorated def, the
    scope of `g = jax.jit(f)`; for `self.step = jax.jit(...)` (an ``attribute``), the class
    whose methods call `self.step(...)`."""

    name: str
    scope: ast.AST
    attribute: bool = False


class Scopes:
    """Function definitions by scope, so a name used in a body resolves to its def; and, from
    the same single walk of the tree, every call that may trace a function.

    The walk visits every statement but only the expressions whose lines spell the name of
    a transform: a call's name is one token on one line, so the other expressions hold no
    call that may trace a function, and most of a module is expressions no rule asks about.
    Calls by name and in-place changes are found on demand the same way (``calls_to``,
    ``changes_of``)."""

    def __init__(self, tree: ast.Module, text: str | None = None, aliases: Iterable[str] = ()):
        self.parent: dict[ast.AST, ast.AST] = {}
        self.defs: dict[ast.AST, dict[str, FunctionNode]] = {}
        # (scope, name) -> every def of a name defined more than once there, in source order.
        self.redefined: dict[tuple[ast.AST, str], list[FunctionNode]] = {}
        self._parameters: dict[ast.AST, frozenset[str]] = {}
        self.qualnames: dict[FunctionNode, str] = {}
        self.functions: list[FunctionNode] = []
        self.calls: list[tuple[ast.AST, ast.Call]] = []  # (scope, call) of possible transforms
        # (scope, name) -> [(line, value)] of plain assignments, to see `f = partial(f, ...)`.
        self.assignments: dict[tuple[ast.AST, str], list[tuple[int, ast.AST]]] = {}
        self.global_names: set[str] = set()  # declared `global` in some function
        # (position, (scope, name, how, attribute)) for `global name`, `name[...] = v` and
        # `name.a = v` (attribute: only reads of it go stale); `name.append(...)` is found on
        # demand (see ``changes_of``).
        self._changes: list[tuple[tuple[int, int], Change]] = []
        # A call assigned to one name (`g = jax.jit(f)`, `self.step = jax.jit(...)`): that name,
        # and whether it is an attribute.
        self.assigned_to: dict[int, tuple[str, bool]] = {}
        self.classes: dict[ast.AST, dict[str, ast.ClassDef]] = {}
        self.class_list: list[ast.ClassDef] = []
        self._lines = LineIndex(text)
        # Every statement (handlers and match cases count), with its scope, in source order.
        self._statements: list[tuple[ast.AST, ast.AST]] = []
        self._calls_to: dict[str, list[tuple[ast.Call, ast.AST]]] = {}
        # For the searches of statements by line: each statement's place in source order,
        # and each block's first lines (by the block's ``id``).
        self._order: dict[int, int] | None = None
        self._block_starts: dict[int, list[int] | None] = {}
        self._scope_names: dict[ast.AST, set[str]] | None = None
        # The calls of a mutating method (`.append(`): every search for in-place changes reads them.
        self._mutating_calls: list[tuple[ast.Call, ast.AST]] | None = None
        # Local names of imported transforms (`from jax import jit as J`) spell a call too.
        # `partial` itself traces nothing: `partial(jax.jit, ...)(f)` spells `jit` as well.
        self._indexed_words = {*TRACING_CALL_NAMES, *aliases} - {"partial"}
        self.tree = tree
        self._module_bindings: dict[str, int] | None = None
        self._name_stores: dict[str, int] | None = None
        self._attribute_values: dict[tuple[ast.ClassDef, str, str], ast.AST | None] = {}
        self._index(tree)

    def _index(self, tree: ast.Module) -> None:
        """One pre-order walk of the module's statements (the hot loop of the analysis:
        written out by hand), entering the expressions of those that may hold a transform."""
        indexed = _Lines(self._lines.spelling(self._indexed_words))
        # (node, scope, qualname prefix); nodes are told apart by `type(node) is`, which is
        # faster than isinstance here and which mypy does not narrow: they are `Any`.
        stack: list[tuple[Any, ast.AST, str]] = [(statement, tree, "") for statement in reversed(tree.body)]
        statements = self._statements
        while stack:
            node, scope, prefix = stack.pop()
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                defined = self.defs.setdefault(scope, {})
                if node.name in defined:
                    self.redefined.setdefault((scope, node.name), [defined[node.name]]).append(node)
                defined[node.name] = node
                self.parent[node] = scope
                self.qualnames[node] = prefix + node.name
                self.functions.append(node)
                scope, prefix = node, f"{prefix}{node.name}."
            elif kind is ast.ClassDef:
                self.parent[node] = scope
                self.classes.setdefault(scope, {})[node.name] = node
                self.class_list.append(node)
                scope, prefix = node, f"{prefix}{node.name}."
            elif kind is ast.Global:
                self.global_names.update(node.names)
                self._changes.extend(((node.lineno, node.col_offset),
                                      Change(scope, name, "declared `global`", None, declared_global=True))
                                     for name in node.names)
            elif kind is ast.Assign:
                self._index_assignment(node, scope)
            if kind in _ASSIGNING:
                for target in _targets(node):
                    self._index_store(target, scope)
            statements.append((node, scope))
            if indexed.spanned_by(node):
                self._index_calls(node, scope, indexed)
            blocks = _STATEMENT_BLOCKS.get(kind)
            if blocks:
                for name in reversed(blocks):
                    stack.extend([(child, scope, prefix) for child in reversed(getattr(node, name))])

    def _index_assignment(self, node: ast.Assign, scope: ast.AST) -> None:
        for target in node.targets:
            if type(target) is ast.Name:
                self.assignments.setdefault((scope, target.id), []).append((node.lineno, node.value))
        if len(node.targets) == 1 and type(node.value) is ast.Call:
            target = node.targets[0]
            name = target.id if type(target) is ast.Name else \
                target.attr if type(target) is ast.Attribute else None
            if name is not None:
                self.assigned_to[id(node.value)] = (name, type(target) is ast.Attribute)

    def _index_store(self, target: Any, scope: ast.AST) -> None:
        """``name[...] = v`` and ``name.attr = v`` change ``name`` in place (``target``: an
        ast target, told apart by ``type(target) is``)."""
        kind = type(target)
        if kind is ast.Tuple or kind is ast.List:
            for element in target.elts:
                self._index_store(element, scope)
        elif kind is ast.Starred:
            self._index_store(target.value, scope)
        elif (kind is ast.Subscript or kind is ast.Attribute) and type(target.value) is ast.Name:
            attribute = target.attr if kind is ast.Attribute else None
            how = f"changed in place (`.{attribute} = ...`)" if attribute else "changed in place"
            self._changes.append(((target.lineno, target.col_offset),
                                  Change(scope, target.value.id, how, attribute)))

    def _index_calls(self, statement: ast.AST, scope: ast.AST, indexed: _Lines) -> None:
        """The calls in a statement's own expressions that may trace a function, entering
        only the expressions whose lines spell the name of one (a long statement has few)."""
        stack = [child for child in reversed(non_leaf_children(statement)) if not isinstance(child, _STATEMENT_LIKE)]
        while stack:
            node = stack.pop()
            if not indexed.spanned_by(node):
                continue
            if type(node) is ast.Call and may_trace(node):
                self.calls.append((scope, node))
            stack.extend(reversed(non_leaf_children(node)))

    def _statements_spelling(self, names: Iterable[str]) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(statement, scope) of every statement whose lines spell one of ``names``."""
        names = set(names)
        if not names:
            return
        lines = self._lines.spelling(names)
        if lines is None:
            yield from self._statements
            return
        order = self._statement_order()
        found: set[int] = set()
        for line in lines:
            self._spanning(self.tree.body, line, order, found)
        for index in sorted(found):
            yield self._statements[index]

    def _statement_order(self) -> dict[int, int]:
        """Each statement's place in source order (by ``id``), made on first use."""
        if self._order is None:
            self._order = {id(statement): index for index, (statement, _) in enumerate(self._statements)}
        return self._order

    def _spanning(self, block: Sequence[ast.AST], line: int, order: dict[int, int], found: set[int]) -> None:
        """Add to ``found`` the places of the statements of ``block``, and of the blocks
        inside them, whose lines span ``line``: a bisection per level, so a search costs the
        depth of the code, not its length (siblings' lines overlap at most at their ends)."""
        if id(block) not in self._block_starts:
            positions: list[int] = [getattr(node, "lineno", -1) for node in block]
            # Match cases carry no position: each is looked at.
            self._block_starts[id(block)] = None if -1 in positions else positions
        starts = self._block_starts[id(block)]
        candidates: Iterable[ast.AST] = block
        if starts is not None:
            at = bisect.bisect_right(starts, line)
            candidates = []
            while at > 0 and (getattr(block[at - 1], "end_lineno", None) or starts[at - 1]) >= line:
                at -= 1
                candidates.append(block[at])
        for statement in candidates:
            if not _spans_a_line(statement, [line]):
                continue
            found.add(order[id(statement)])
            for name in _STATEMENT_BLOCKS.get(type(statement), ()):
                self._spanning(getattr(statement, name), line, order, found)

    def calls_to(self, name: str) -> list[tuple[ast.Call, ast.AST]]:
        """Every call of ``name`` in the module, ``name(...)`` and ``obj.name(...)``, with the
        scope it is made in."""
        found = self._calls_to.get(name)
        if found is None:
            found = self._calls_to[name] = [
                (node, scope) for statement, scope in self._statements_spelling([name])
                for node in _own_expression_nodes(statement) if type(node) is ast.Call and _callee_name(node) == name]
        return found

    def only_called(self, name: str, home: ast.AST) -> bool:
        """Whether every read of ``name`` that is ``home``'s binding of it calls it
        (``name(...)``): it is never handed on as a value (``map(name, xs)``, ``f = name``), so
        its calls are every way in."""
        for statement, scope in self._statements_spelling([name]):
            if self.binding_scope(scope, name) is not home:
                continue
            stack = [child for child in ast.iter_child_nodes(statement) if not isinstance(child, _STATEMENT_LIKE)]
            called: set[int] = set()
            while stack:
                node = stack.pop()
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                    called.add(id(node.func))
                elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                        and id(node) not in called:
                    return False
                stack.extend(reversed(list(ast.iter_child_nodes(node))))
        return True

    def calls_of(self, called_as: CalledAs, any_receiver: bool = False) -> Iterator[ast.Call]:
        """The calls of the function ``called_as`` names: by a name that, where the call is
        made, is the binding ``called_as`` made (another function's `f` is another function);
        as a method, on `self` or `cls` in the class, or, with ``any_receiver``, on anything
        (`obj.step(...)` may be this method, or another class's)."""
        for call, scope in self.calls_to(called_as.name):
            func = call.func
            if isinstance(func, ast.Name):
                if not called_as.attribute and self.binding_scope(scope, func.id) is called_as.scope:
                    yield call
            elif any_receiver or (isinstance(called_as.scope, ast.ClassDef) and isinstance(func, ast.Attribute)
                                  and isinstance(func.value, ast.Name) and func.value.id in RECEIVERS
                                  and self.enclosing_class(scope) is called_as.scope):
                yield call

    def binding_scope(self, scope: ast.AST, name: str) -> ast.AST | None:
        """The scope whose binding of ``name`` code in ``scope`` reads, as Python resolves it:
        the scope itself, then the functions around it (not class bodies), then the module."""
        current: ast.AST | None = scope
        while current is not None:
            if (current is scope or not isinstance(current, ast.ClassDef)) and name in self._names_bound_in(current):
                return current
            current = self.parent.get(current) if current is not self.tree else None
        return None

    def _names_bound_in(self, scope: ast.AST) -> set[str]:
        """The names a scope binds: its defs and classes, its parameters, and what its own
        statements assign, import or loop over (computed for every scope at once)."""
        if self._scope_names is None:
            names: dict[ast.AST, set[str]] = {}
            for statement, own_scope in self._statements:
                if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.setdefault(self.parent.get(statement, self.tree), set()).add(statement.name)
                    if not isinstance(statement, ast.ClassDef):
                        names.setdefault(statement, set()).update(parameter_names(statement))
                else:
                    names.setdefault(own_scope, set()).update(_bound_by(statement))
            self._scope_names = names
        return self._scope_names.get(scope, set())

    def changes_of(self, names: Iterable[str]) -> list[Change]:
        """Where the module's code rebinds (``global``) or changes in place (``name[k] = v``,
        ``name.a = v``, ``name.append(...)``) one of ``names``, in source order."""
        names = set(names)
        if not names:
            return []
        found = [(at, change) for at, change in self._changes if change.name in names]
        for node, scope in self._mutating_method_calls():
            func = node.func
            if func.value.id in names:  # type: ignore[attr-defined]
                found.append(((node.lineno, node.col_offset),
                              Change(scope, func.value.id, f"changed with `.{func.attr}()`", None)))  # type: ignore[attr-defined]
        return [change for _, change in sorted(found, key=lambda item: item[0])]

    def _mutating_method_calls(self) -> list[tuple[ast.Call, ast.AST]]:
        """(call, scope) of every ``name.append(...)`` and the like (``MUTATING_METHODS``)."""
        if self._mutating_calls is None:
            self._mutating_calls = [
                (call, scope) for statement, scope in self._statements_spelling(MUTATING_METHODS)  # `.append(` spells one
                for node in chain((statement,), _own_expression_nodes(statement)) for call in method_changes(node)
                if not may_trace(call) and type(call.func.value) is ast.Name]  # type: ignore[attr-defined]
        return self._mutating_calls

    def assignment_before(self, scope: ast.AST, name: str, line: int | None) -> ast.AST | None:
        """The value ``name`` was last assigned in ``scope`` before ``line`` (not its def)."""
        if line is None:
            return None
        earlier = [(at, value) for at, value in self.assignments.get((scope, name), []) if at < line]
        return max(earlier, key=lambda item: item[0])[1] if earlier else None

    def module_value(self, scope: ast.AST, name: str) -> ast.AST | None:
        """The value a name that code in ``scope`` reads from the module is bound to, when
        the module binds it once and nothing rebinds it (a module's `layer = Layer(2.0)`,
        read in a function that runs later: no function declares it `global`)."""
        current: ast.AST | None = scope
        while current is not None and current is not self.tree:
            if self._binds_otherwise(current, name) or (current, name) in self.assignments:
                return None  # a local (or an enclosing function's) name, not the module's
            current = self.parent.get(current)
        values = self.assignments.get((self.tree, name), [])
        if len(values) != 1 or name in self.global_names or self.module_bindings().get(name, 0) != 1:
            return None
        return values[0][1]

    def module_bindings(self) -> dict[str, int]:
        """How many statements at module level bind each name (any kind of binding)."""
        if self._module_bindings is None:
            counts: dict[str, int] = {}
            for statement, scope in self._statements:
                if scope is self.tree:
                    for name in _bound_by(statement):
                        counts[name] = counts.get(name, 0) + 1
            self._module_bindings = counts
        return self._module_bindings

    def name_stores(self) -> dict[str, int]:
        """How many times each name is bound anywhere in the module, in any scope (a store or
        delete of the name, or a parameter of that name): one walk, on demand."""
        if self._name_stores is None:
            counts: dict[str, int] = {}
            for node in walk_tree(self.tree):
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                    counts[node.id] = counts.get(node.id, 0) + 1
                elif isinstance(node, ast.arg):
                    counts[node.arg] = counts.get(node.arg, 0) + 1
            self._name_stores = counts
        return self._name_stores

    def lookup(self, scope: ast.AST, name: str, line: int | None = None) -> FunctionNode | None:
        """Resolve a bare name as Python would from code in scope (class bodies are skipped).
        A name defined more than once (a notebook's cells, a script) is, for code at ``line``
        of the scope that defines it, the last def before that line: code there runs in order.
        Code in a function that runs later sees the last def."""
        current: ast.AST | None = scope
        first = True
        while current is not None:
            if first or not isinstance(current, ast.ClassDef):
                found = self.defs.get(current, {}).get(name)
                if found is not None:
                    if first and line is not None and (current, name) in self.redefined:
                        before = [node for node in self.redefined[current, name] if node.lineno <= line]
                        return before[-1] if before else found
                    return found
                if self._binds_otherwise(current, name):
                    return None  # `def hessian(f): ... jit(f)`: the parameter, not a module's `f`
            first = False
            current = self.parent.get(current)
        return None

    def _binds_otherwise(self, scope: ast.AST, name: str) -> bool:
        """Whether a function binds ``name`` as a parameter or by assignment (not a def)."""
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return False
        params = self._parameters.get(scope)
        if params is None:
            params = self._parameters[scope] = frozenset(parameter_names(scope))
        return name in params or (scope, name) in self.assignments

    def lookup_class(self, scope: ast.AST, name: str) -> ast.ClassDef | None:
        current: ast.AST | None = scope
        while current is not None:
            found = self.classes.get(current, {}).get(name)
            if found is not None:
                return found
            current = self.parent.get(current)
        return None

    def instance_class(self, scope: ast.AST, expr: ast.AST, line: int | None, depth: int = 0) -> ast.ClassDef | None:
        """The module's class ``expr`` is an instance of, where the code says so in one place:
        a name assigned ``Model(...)`` earlier in the scope or once at module level, or an
        attribute of ``self`` its class assigns ``Layer(...)`` once, in whichever method
        (``self.linear = Linear(4)`` in ``__init__``); or a call of a method of such an
        instance whose every ``return`` makes one class (``cell.branch(0)``, ``branch``
        returning ``Compartment(self, index)``). None when anything else may be there."""
        if isinstance(expr, ast.Name) and expr.id not in RECEIVERS:
            value = self.assignment_before(scope, expr.id, line)
            if value is None:
                value = self.module_value(scope, expr.id)
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in RECEIVERS:
            value = self._attribute_value(scope, expr.value.id, expr.attr)
        elif isinstance(expr, ast.Call):
            value = expr
        else:
            return None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and depth < 4:
            return self._returned_instance(scope, value, line, depth)
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        return self.lookup_class(scope, value.func.id)

    def _returned_instance(self, scope: ast.AST, call: ast.Call, line: int | None, depth: int) -> ast.ClassDef | None:
        """The class every ``return`` of the method ``call`` runs makes (``obj.method(...)``
        of an instance of the module's class)."""
        assert isinstance(call.func, ast.Attribute)
        owner = self.instance_class(scope, call.func.value, line, depth + 1)
        method = self.defs.get(owner, {}).get(call.func.attr) if owner is not None else None
        if method is None or method.decorator_list:
            return None
        made = {self.lookup_class(method, node.value.func.id)
                if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) else None
                for node in ast.walk(method) if isinstance(node, ast.Return)}
        return made.pop() if len(made) == 1 else None

    def _attribute_value(self, scope: ast.AST, receiver: str, attribute: str) -> ast.AST | None:
        """The value of the one assignment to ``self.<attribute>`` in the class around
        ``scope`` (in any of its methods); None when there is none, or more than one."""
        klass = self.enclosing_class(scope)
        if klass is None:
            return None
        key = (klass, receiver, attribute)
        if key not in self._attribute_values:
            self._attribute_values[key] = self._assigned_attribute(klass, receiver, attribute)
        return self._attribute_values[key]

    @staticmethod
    def _assigned_attribute(klass: ast.ClassDef, receiver: str, attribute: str) -> ast.AST | None:
        found: list[ast.AST | None] = []
        for node in ast.walk(klass):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value if len(node.targets) == 1 else None
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets, value = [node.target], None
            else:
                continue
            for target in targets:
                if any(isinstance(part, ast.Attribute) and part.attr == attribute and isinstance(part.value, ast.Name)
                       and part.value.id == receiver for part in ast.walk(target)):
                    found.append(value if isinstance(target, ast.Attribute) else None)
        return found[0] if len(found) == 1 else None

    def enclosing_class(self, scope: ast.AST) -> ast.ClassDef | None:
        current: ast.AST | None = scope
        while current is not None and not isinstance(current, ast.ClassDef):
            current = self.parent.get(current)
        return current

    def method(self, scope: ast.AST, name: str) -> FunctionNode | None:
        klass = self.enclosing_class(scope)
        return self.defs.get(klass, {}).get(name) if klass is not None else None


def scope_index(tree: ast.Module, imports: ImportTable, text: str | None) -> Scopes:
    """The module's defs, classes and transform calls (local names of imported transforms,
    ``from jax import jit as J``, spell a call too)."""
    transforms = [local for local, target in imports.aliases.items() if target.rpartition(".")[2] in TRACING_CALL_NAMES]
    return Scopes(tree, text, transforms)


