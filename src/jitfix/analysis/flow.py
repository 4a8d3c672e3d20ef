"""Flow-sensitive traced/static classification of a function's local names.

A forward pass over the body records, before every statement, what each local name holds:
``STATIC`` (a Python value known at trace time), ``TRACED`` (a tracer) or ``UNKNOWN``.
Where paths meet (after an ``if``, at a loop head) the kinds join upwards
(static < unknown < traced): a name that is a tracer on some path may be one there.

So ``n = x.shape[0]`` is static, ``x = x.sum(axis=1)`` inside ``if x.ndim == 2:`` leaves
``x`` traced, and a name that is static until the statement that rebinds it to a tracer is
static in the ``if`` tests before that statement.
"""

from __future__ import annotations

import ast
from typing import Iterable

from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import ValueAnalysis, parameter_names

STATIC, UNKNOWN, TRACED = 0, 1, 2
State = dict[str, int]
MAX_LOOP_PASSES = 5


class _KindView:
    """The names of a state that hold one kind, as a set-like for ValueAnalysis."""

    def __init__(self, state: State, kind: int):
        self.state = state
        self.kind = kind

    def __contains__(self, name: object) -> bool:
        return self.state.get(name) == self.kind  # type: ignore[arg-type]


def _join(first: State, second: State) -> State:
    """A name unbound on one path takes its kind from the other (reading it there fails)."""
    joined = dict(first)
    for name, kind in second.items():
        joined[name] = max(kind, joined.get(name, kind))
    return joined


def _names(target: ast.AST) -> Iterable[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _names(element)
    elif isinstance(target, ast.Starred):
        yield from _names(target.value)


def _pair(target: ast.AST) -> bool:
    return isinstance(target, ast.Tuple | ast.List) and len(target.elts) == 2 \
        and not any(isinstance(element, ast.Starred) for element in target.elts)


def module_static_names(tree: ast.Module, global_names: set[str]) -> frozenset[str]:
    """Module-level names that are constants: bound once, to a literal, and never declared
    ``global`` by a function (``global_names``); and defs and classes."""
    counts: dict[str, int] = {}
    literal: set[str] = set()
    definitions: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in _names(target):
                    counts[name.id] = counts.get(name.id, 0) + 1
                    if _is_literal(node.value):
                        literal.add(name.id)
        elif isinstance(node, ast.AugAssign):
            for name in _names(node.target):
                counts[name.id] = counts.get(name.id, 0) + 2
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions.add(node.name)
    constants = {name for name in literal if counts[name] == 1}
    return frozenset((constants | definitions) - global_names)


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _is_literal(node.operand)
    if isinstance(node, ast.Tuple):
        return all(_is_literal(element) for element in node.elts)
    return False


class FlowAnalysis:
    """Kinds of names before each statement of one function."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable,
                 traced_params: frozenset[str], static_params: frozenset[str],
                 outer: State | None = None):
        self.imports = imports
        self.before: dict[int, State] = {}
        state: State = dict(outer or {})
        for name in parameter_names(function):
            state[name] = TRACED if name in traced_params else STATIC if name in static_params else UNKNOWN
        self.entry = dict(state)
        self.exit = self._block(function.body, state)
        self._summary: ValueAnalysis | None = None

    # -- queries -----------------------------------------------------------------------------

    def at(self, statement: ast.stmt, also_traced: frozenset[str] = frozenset()) -> ValueAnalysis:
        """Traced/static classification of expressions evaluated by ``statement``.

        ``also_traced`` names are tracers there whatever the code says: the carry of a loop
        that is being rewritten into a lax loop is traced inside its body.
        """
        state = self.before.get(id(statement), self.entry)
        if also_traced:
            state = {**state, **dict.fromkeys(also_traced, TRACED)}
        return self._view(state)

    def summary(self) -> ValueAnalysis:
        """Flow-insensitive: traced if traced anywhere, static if static everywhere."""
        if self._summary is None:
            self._summary = self._view(self.merged_kinds())
        return self._summary

    def merged_kinds(self) -> State:
        """Each name's kind joined over the whole function (what a closure sees)."""
        merged: State = dict(self.entry)
        for state in (*self.before.values(), self.exit):
            merged = _join(merged, state)
        return merged

    def _view(self, state: State) -> ValueAnalysis:
        return ValueAnalysis(self.imports, _KindView(state, TRACED), _KindView(state, STATIC))  # type: ignore[arg-type]

    # -- the pass -------------------------------------------------------------------------------

    def _kind(self, expr: ast.AST, state: State) -> int:
        view = self._view(state)
        if view.is_traced(expr):
            return TRACED
        if view.is_static(expr):
            return STATIC
        return UNKNOWN

    def _bind_iteration(self, target: ast.AST, iterable: ast.AST, state: State) -> None:
        """Bind a loop target from what is iterated: ``range(static)`` gives static indices,
        ``enumerate`` a static count, ``zip`` each target from its own iterable."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and not iterable.keywords:
            function, args = iterable.func.id, iterable.args
            if function == "range":
                self._bind(target, max((self._kind(arg, state) for arg in args), default=STATIC), state)
                return
            if function == "enumerate" and len(args) == 1 and _pair(target):
                self._bind(target.elts[0], STATIC, state)  # type: ignore[attr-defined]
                self._bind_iteration(target.elts[1], args[0], state)  # type: ignore[attr-defined]
                return
            if function == "zip" and isinstance(target, ast.Tuple | ast.List) and len(target.elts) == len(args) \
                    and not any(isinstance(arg, ast.Starred) for arg in args):
                for element, arg in zip(target.elts, args):
                    self._bind_iteration(element, arg, state)
                return
            if function in {"reversed", "list", "tuple", "sorted"} and len(args) == 1:
                self._bind_iteration(target, args[0], state)
                return
        self._bind(target, self._kind(iterable, state), state)

    def _bind(self, target: ast.AST, kind: int, state: State, value: ast.AST | None = None) -> None:
        if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
                and len(target.elts) == len(value.elts) \
                and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
            for element, element_value in zip(target.elts, value.elts):
                self._bind(element, self._kind(element_value, state), state, element_value)
            return
        for name in _names(target):
            state[name.id] = kind

    def _walrus(self, statement: ast.AST, state: State) -> None:
        for node in ast.walk(statement):
            if isinstance(node, ast.NamedExpr):
                state[node.target.id] = self._kind(node.value, state)

    def _block(self, body: list[ast.stmt], state: State) -> State:
        for statement in body:
            self.before[id(statement)] = dict(state)
            state = self._statement(statement, state)
        return state

    def _loop(self, body: list[ast.stmt], state: State, bind_target=None) -> State:
        """State at the loop head after any number of iterations (zero included)."""
        head = state
        for _ in range(MAX_LOOP_PASSES):
            entry = dict(head)
            if bind_target is not None:
                bind_target(entry)
            end = self._block(body, entry)
            new_head = _join(head, end)
            if new_head == head:
                break
            head = new_head
        return head

    def _statement(self, node: ast.stmt, state: State) -> State:
        state = dict(state)
        if isinstance(node, ast.Assign):
            self._walrus(node.value, state)
            kind = self._kind(node.value, state)
            for target in node.targets:
                self._bind(target, kind, state, node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._bind(node.target, self._kind(node.value, state), state, node.value)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                current = ast.Name(id=node.target.id, ctx=ast.Load())
                state[node.target.id] = self._kind(ast.BinOp(left=current, op=node.op, right=node.value), state)
        elif isinstance(node, ast.If):
            self._walrus(node.test, state)
            state = _join(self._block(node.body, dict(state)), self._block(node.orelse, dict(state)))
        elif isinstance(node, ast.For | ast.AsyncFor):
            head = self._loop(node.body, state, lambda entry: self._bind_iteration(node.target, node.iter, entry))
            state = self._block(node.orelse, head)
        elif isinstance(node, ast.While):
            self._walrus(node.test, state)
            head = self._loop(node.body, state)
            state = self._block(node.orelse, head)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, UNKNOWN, state)
            state = self._block(node.body, state)
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            body_end = self._block(node.body, dict(state))
            handler_start = _join(state, body_end)
            ends = [self._block(node.orelse, body_end)]
            for handler in node.handlers:
                start = dict(handler_start)
                if handler.name:
                    start[handler.name] = UNKNOWN
                ends.append(self._block(handler.body, start))
            state = ends[0]
            for end in ends[1:]:
                state = _join(state, end)
            state = self._block(node.finalbody, state)
        elif isinstance(node, ast.Match):
            ends = [dict(state)]
            for case in node.cases:
                start = dict(state)
                for pattern_node in ast.walk(case.pattern):
                    name = getattr(pattern_node, "name", None)
                    if isinstance(name, str):
                        start[name] = self._kind(node.subject, state)
                ends.append(self._block(case.body, start))
            state = ends[0]
            for end in ends[1:]:
                state = _join(state, end)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            state[node.name] = STATIC
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                state[(alias.asname or alias.name).split(".")[0]] = STATIC
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                state[name] = UNKNOWN
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                for name in _names(target):
                    state.pop(name.id, None)
        else:
            self._walrus(node, state)
        return state
