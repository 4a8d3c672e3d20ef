"""Flow-sensitive kinds of a function's local names: one forward abstract interpretation.

A forward pass over the body records, before every statement, the ``Verdict`` of each
local name: static, traced or unknown, with its evidence. Where paths meet (after an
``if``, at a loop head) the kinds join upwards (static < unknown < traced): a name that is
a tracer on some path may be one there.

The pass is path-sensitive where a static guard decides what runs:

* in the branch where ``p is None`` (or ``not isinstance(p, jax.Array)``, or
  ``isinstance(p, int)``, or ``not hasattr(p, "shape")``) holds, ``p`` is a Python value, and the branch runs under tracing
  only when the caller did not pass an array -- so nothing in it is *proven* traced;
* inside ``with jax.ensure_compile_time_eval():`` JAX operations on constants are not
  staged.

So ``n = x.shape[0]`` is static, ``x = x.sum(axis=1)`` inside ``if x.ndim == 2:`` leaves
``x`` traced, and a name that is static until the statement that rebinds it to a tracer is
static in the ``if`` tests before that statement.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from jitfix.analysis.blocks import (
    always_leaves,
    assigned_names,
    child_nodes,
    is_range_call,
    kept_on_node,
    nodes_of,
    target_names,
    walk_body,
)
from jitfix.analysis.catalogue import is_range, numpy_member
from jitfix.analysis.failure_sites import EXPLAINED_ERRORS, candidate_sites
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import (
    ARRAY_ONLY_ATTRIBUTES,
    COMPREHENSIONS,
    PYTHON_CONVERSIONS,
    STATIC_KIND,
    TRACED_KIND,
    UNCERTAIN,
    UNKNOWN_KIND,
    ArrayEvidence,
    ComprehensionScopes,
    Program,
    ValueAnalysis,
    Verdict,
    array_attributes_read,
    as_array,
    may_narrow,
    numeric_operands,
)

State = dict[str, Verdict]
MAX_LOOP_PASSES = 5
# Keys of a state that are not names (no identifier contains "<").
UNSTAGED = "<unstaged>"  # JAX operations on constants are not staged here

TRACER_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray", "jax.core.Tracer", "jax.core.ShapedArray"})
PYTHON_VALUE_TYPES = frozenset({"int", "float", "bool", "complex", "str", "bytes", "numbers.Number",
                                "numbers.Real", "numbers.Integral", "numpy.ndarray", "numpy.generic",
                                "numpy.number", "numpy.integer", "numpy.floating"})
# What an `except` names that catches the errors a tracer raises where Python needs a value
# (each jax.errors class is a TypeError).
TRACER_ERROR_CATCHERS = frozenset({
    "TypeError", "Exception", "BaseException", "jax.errors.ConcretizationTypeError",
    "jax.errors.TracerBoolConversionError", "jax.errors.TracerIntegerConversionError",
    "jax.errors.TracerArrayConversionError", "jax.core.ConcretizationTypeError"})
COMPILE_TIME = frozenset({"jax.ensure_compile_time_eval", "jax.core.ensure_compile_time_eval"})


def _guarded_expressions(statement: ast.AST) -> Iterator[ast.AST]:
    """The conditional expressions and ``and``/``or`` of a statement's own expressions whose
    test is a static guard (``a.shape if hasattr(a, "shape") else np.asarray(a).shape``):
    evaluated first, a rule that asks about a part of one learns what holds where it is."""
    stack = [child for child in child_nodes(statement) if isinstance(child, ast.expr)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.IfExp) and may_narrow(node.test) \
                or isinstance(node, ast.BoolOp) and any(may_narrow(value) for value in node.values):
            yield node
        elif not isinstance(node, (ast.Lambda, *COMPREHENSIONS)):
            stack.extend(child for child in child_nodes(node) if isinstance(child, ast.expr))


def _join(first: State, second: State) -> State:
    """Names: the stronger kind (a name unbound on one path takes its kind from the other,
    since reading it there fails). Markers of the point: kept only where both paths have
    them (a point reached on a certain path is certain)."""
    joined = dict(first)
    for name, found in second.items():
        current = joined.get(name)
        if current is found or name[0] == "<":  # most entries are shared: module constants, parameters
            continue
        if current is None or found.kind > current.kind:
            joined[name] = found
        elif found.kind == current.kind and found.container != current.container:
            joined[name] = replace(current, container=None)  # a container on one path only
    for marker in (UNCERTAIN, UNSTAGED):
        if marker in joined and marker not in second:
            del joined[marker]
    return joined


def _read_from(outer: Mapping[str, Verdict], function: ast.FunctionDef | ast.AsyncFunctionDef) -> State:
    """The verdicts of the names from around a function that it, or a function in it, reads."""
    read = kept_on_node(function, "names_spelled", lambda: frozenset(
        node.id for node in nodes_of(function) if type(node) is ast.Name))
    state = {name: outer[name] for name in read if name in outer}
    if UNSTAGED in outer:
        state[UNSTAGED] = outer[UNSTAGED]
    return state


def _same_kinds(first: State, second: State) -> bool:
    return first.keys() == second.keys() and all(first[name].kind == second[name].kind for name in first)


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


def _used_as_an_array(target: ast.AST, iterable: ast.AST, uses: Sequence[ast.AST]) -> str | None:
    """How ``uses`` treat the name ``target`` binds as an array or a number, when they never
    bind it again (a later binding could be anything): the array-only attribute they read
    (``.sum``, ``.shape``), or "a number" where only a number or an array fits (``v > 0``,
    ``v - 1``) and they never look it up in what is iterated (``params[k]``: a dict's key)."""
    if not isinstance(target, ast.Name) or not uses:
        return None
    nodes = [node for use in uses for node in ast.walk(use)]
    if any(isinstance(node, ast.Name) and node.id == target.id and not isinstance(node.ctx, ast.Load)
           for node in nodes):
        return None
    attribute = array_attributes_read(nodes).get(target.id)
    if attribute is not None:
        return f"`.{attribute}`"
    looked_up = any(isinstance(node, ast.Subscript) and ast.dump(node.value) == ast.dump(iterable)
                    and isinstance(node.slice, ast.Name) and node.slice.id == target.id for node in nodes)
    return "a number" if target.id in numeric_operands(nodes) and not looked_up else None


_COMPOUND = (ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match)


class FlowAnalysis:
    """Verdicts of names before each statement of one function."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, imports: ImportTable,
                 params: State, outer: Mapping[str, Verdict] | None = None, *, staged: bool = True,
                 program: Program | None = None, known_arrays: frozenset[str] = frozenset(),
                 seen_traced: Mapping[int, frozenset[str]] | None = None,
                 seen_failures: Mapping[int, str] | None = None, seen_failing: Mapping[int, str] | None = None,
                 module_level: bool = False):
        self.function = function
        self.known_arrays = known_arrays  # parameters a run or a call showed hold one array
        # Local names a run saw holding a tracer at a line (`jitfix run`): traced there, whatever
        # the code shows (a value unpacked from a pytree, a property, a library's result).
        self.seen_traced = seen_traced or {}
        # The errors a run saw raised at a line (`{24: "TracerBoolConversionError"}`), and the
        # expressions they prove traced (`observed`, by node: the test of that line's `while`).
        self.seen_failures = {line: error for line, error in (seen_failures or {}).items()
                              if error in EXPLAINED_ERRORS}
        self.seen_failing = seen_failing or {}  # what held the failing tracer: `state.failed`
        self.observed: dict[int, tuple[ast.AST, Verdict]] = {}
        self.imports = imports
        self.program = program
        self.before: dict[int, State] = {}
        self.loop_heads: dict[int, State] = {}  # a `while`'s state where its test runs: any pass's start
        self._arrays: ArrayEvidence | None = None
        # Most functions hold no `:=`: then no expression needs searching for one.
        kinds = {type(node) for node in walk_body(function)}
        self._has_walrus = ast.NamedExpr in kinds
        self._comprehensions = ComprehensionScopes(function, self._bind_iteration) \
            if not kinds.isdisjoint(COMPREHENSIONS) else None
        # A module-level function's code, and the closures in it, read only names its own
        # text spells: the rest of what is around it is left out of every state (a module's
        # constants copied into each statement's state grew with the square of its length).
        state: State = _read_from(outer, function) if outer and module_level else dict(outer or {})
        state.pop(UNCERTAIN, None)
        state.update(params)
        if any(verdict.traced for verdict in params.values()):
            for name in self.arrays.array_params & params.keys():  # `x: jax.Array`, `x.shape`
                state[name] = as_array(state[name], True)
        if not staged:
            state[UNSTAGED] = Verdict(STATIC_KIND, "not staged")
        self.entry = dict(state)
        self.exit = self._block(function.body, state)
        self._summary: ValueAnalysis | None = None

    # -- queries -----------------------------------------------------------------------------

    def at(self, statement: ast.AST, also_traced: frozenset[str] = frozenset()) -> ValueAnalysis:
        """Kinds of expressions evaluated by ``statement``.

        ``also_traced`` names are tracers there whatever the code says: the carry of a loop
        that is being rewritten into a lax loop is traced inside its body.
        """
        state = self.loop_heads.get(id(statement))
        if state is None:
            state = self.before.get(id(statement), self.entry)
        if also_traced:
            carried = Verdict(TRACED_KIND, "carried by the lax loop this loop becomes")
            # A carried array is still one array (what proved it holds of every value that
            # flows into the name); anything else is a tracer of unknown form.
            state = {**state, **{name: as_array(carried, name in state and state[name].array)
                                 for name in also_traced}}
        view = self._view(state)
        for guarded in kept_on_node(statement, "guarded", lambda: list(_guarded_expressions(statement))):
            view.verdict(guarded)  # its parts get the verdicts of the branch they are in
        return view

    def summary(self) -> ValueAnalysis:
        """Flow-insensitive: traced if traced anywhere, static if static everywhere."""
        if self._summary is None:
            self._summary = self._view(self.merged_kinds())
        return self._summary

    def merged_kinds(self) -> State:
        """Each name's verdict joined over the whole function (what a closure sees)."""
        merged: State = dict(self.entry)
        for state in (*self.before.values(), self.exit):
            merged = _join(merged, state)
        merged.pop(UNCERTAIN, None)
        return merged

    def _view(self, state: State) -> ValueAnalysis:
        uncertain = state.get(UNCERTAIN)
        return ValueAnalysis(self.imports, state, staged=UNSTAGED not in state,
                             uncertain=uncertain.why if uncertain else None, program=self.program,
                             scope=self.function, comprehensions=self._comprehensions, narrow=self._narrow,
                             observed=self.observed)

    @property
    def arrays(self) -> ArrayEvidence:
        if self._arrays is None:
            self._arrays = ArrayEvidence(self.function, known=self.known_arrays)
        return self._arrays

    # -- the pass -------------------------------------------------------------------------------

    def _verdict(self, expr: ast.AST, state: State) -> Verdict:
        return self._view(state).verdict(expr)

    def _iteration(self, iterable: ast.AST, evaluate: Callable[[ast.AST], Verdict],
                   used_as_array: Callable[[], str | None] = lambda: None) -> Verdict:
        """What one pass of ``for _ in iterable`` binds (``used_as_array``: the array-only
        attribute the code reads of what it binds, if any)."""
        found = evaluate(iterable)
        if found.elements:
            kinds = sorted(found.elements, key=lambda element: element.kind)
            return Verdict(kinds[-1].kind, "an element of a sequence", kinds[-1],
                           elements=_positions_joined(found.elements))
        if found.traced and isinstance(iterable, ast.Name) and iterable.id in self.arrays.params \
                and iterable.id not in self.arrays.array_params:
            # A parameter may be a dict (keys: static) as well as an array (rows: traced). What
            # the code reads `.sum()` or `.shape` of, or uses as a number (`v > 0`), is taken
            # for no key (a pytree's keys are strings, as a rule): a row, or a leaf of a list.
            use = used_as_array()
            if use:
                return Verdict(TRACED_KIND, f"an element of `{iterable.id}`, used as an array ({use})",
                               found, array=True)
            return Verdict(UNKNOWN_KIND, f"iterating `{iterable.id}`, which may be a dict or an array", found)
        if found.traced:
            return Verdict(TRACED_KIND, "a row of a traced array", found, array=found.array)
        return Verdict(found.kind, "an element of the iterated value", found)

    def _bind_iteration(self, target: ast.AST, iterable: ast.AST, state: State,
                        evaluate: Callable[[ast.AST], Verdict] | None = None, uses: Sequence[ast.AST] = ()) -> None:
        """Bind a loop target from what is iterated (evaluated before anything is bound, as
        Python does; by ``evaluate`` inside a comprehension): ``range(static)`` gives static
        indices, ``enumerate`` a static count, ``zip`` each target from its own iterable, a
        dict's ``.items()`` static keys. ``uses``: the code that reads the target (the loop's
        body, the comprehension)."""
        if evaluate is None:
            evaluate = self._view(dict(state)).verdict
        if isinstance(iterable, ast.Call) and all(keyword.arg == "strict" for keyword in iterable.keywords):
            func, args = iterable.func, iterable.args
            if isinstance(func, ast.Name):
                if is_range(iterable):
                    self._bind(target, evaluate(iterable), state)
                    return
                if func.id == "enumerate" and len(args) == 1 and _pair(target):
                    self._bind(target.elts[0], Verdict(STATIC_KIND, "an `enumerate` count"), state)  # type: ignore[attr-defined]
                    self._bind_iteration(target.elts[1], args[0], state, evaluate, uses)  # type: ignore[attr-defined]
                    return
                if func.id == "zip" and isinstance(target, ast.Tuple | ast.List) and len(target.elts) == len(args) \
                        and not any(isinstance(arg, ast.Starred) for arg in args):
                    for element, arg in zip(target.elts, args):
                        self._bind_iteration(element, arg, state, evaluate, uses)
                    return
                if func.id in {"reversed", "list", "tuple", "sorted"} and len(args) == 1:
                    self._bind_iteration(target, args[0], state, evaluate, uses)
                    return
            if isinstance(func, ast.Attribute) and not args and func.attr in {"items", "keys", "values"}:
                owner = evaluate(func.value)
                key = Verdict(STATIC_KIND, "a dict key (keys of a pytree are static)")
                value = Verdict(owner.kind, "a value of the dict", owner)
                if func.attr == "keys":
                    self._bind(target, key, state)
                elif func.attr == "values":
                    self._bind(target, value, state)
                elif _pair(target):
                    self._bind(target.elts[0], key, state)  # type: ignore[attr-defined]
                    self._bind(target.elts[1], value, state)  # type: ignore[attr-defined]
                else:
                    self._bind(target, value, state)
                return
        self._bind(target, self._iteration(iterable, evaluate, lambda: _used_as_an_array(target, iterable, uses)), state)

    def _bind(self, target: ast.AST, found: Verdict, state: State, value: ast.AST | None = None) -> None:
        if isinstance(target, ast.Tuple | ast.List) \
                and not any(isinstance(element, ast.Starred) for element in target.elts):
            elements = found.elements
            if isinstance(value, ast.Tuple | ast.List) and not any(isinstance(e, ast.Starred) for e in value.elts):
                elements = tuple(self._verdict(element, state) for element in value.elts)
            if elements is not None and len(elements) == len(target.elts):
                for element, element_verdict in zip(target.elts, elements):
                    self._bind(element, element_verdict, state)
                return
            if not found.static:
                found = Verdict(found.kind, "unpacked from a traced value" if found.traced
                                else "unpacked from a value that is not known", found)
        if isinstance(target, ast.Starred):
            target = target.value
        for name in _names(target):
            state[name.id] = found

    def _walrus(self, statement: ast.AST, state: State) -> None:
        if not self._has_walrus:
            return
        for node in ast.walk(statement):
            if isinstance(node, ast.NamedExpr):
                state[node.target.id] = self._verdict(node.value, state)

    def _traced_array(self, test: ast.AST, state: State) -> bool:
        """Whether ``test`` is certainly a traced array (or and/or/not of one): control flow
        on it becomes lax's."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._traced_array(test.operand, state)
        if isinstance(test, ast.BoolOp):
            return any(self._traced_array(value, state) for value in test.values)
        found = self._verdict(test, state)
        return found.traced and (found.array or isinstance(test, ast.Compare))

    def _block(self, body: list[ast.stmt], state: State) -> State:
        for statement in body:
            if self.seen_traced:
                state = self._with_seen(statement, state)
            if self.seen_failures:
                self._observe_failure(statement, state)
            self.before[id(statement)] = dict(state)
            state = self._statement(statement, state)
        return state

    def _with_seen(self, statement: ast.stmt, state: State) -> State:
        """``state`` with the names a run saw hold one tracer each on the statement's own lines
        (a compound statement's: its test or iterable, not its body) made traced arrays."""
        head = statement.test if isinstance(statement, ast.If | ast.While) else \
            statement.iter if isinstance(statement, ast.For | ast.AsyncFor) else None
        if head is None and isinstance(statement, _COMPOUND):
            return state
        last = (head.end_lineno if head is not None else statement.end_lineno) or statement.lineno
        names = frozenset().union(*(self.seen_traced.get(line, frozenset())
                                    for line in range(statement.lineno, last + 1)))
        if not names:
            return state
        seen = Verdict(TRACED_KIND, "seen holding a tracer there by `jitfix run`", array=True)
        return {**state, **dict.fromkeys(names, seen)}

    def _observe_failure(self, statement: ast.stmt, state: State) -> None:
        """The expression of ``statement`` a failure a run saw on its lines proves traced: of
        those where Python did what the error says, the one the analysis cannot tell."""
        first = statement.lineno
        last = statement.end_lineno or first
        for line, error in self.seen_failures.items():
            if not first <= line <= last:
                continue
            unknown = [site for site in candidate_sites(statement, line, error)
                       if not (found := self._verdict(site, state)).static and not found.traced]
            if len(unknown) > 1 and line in self.seen_failing:  # the run saw which held the tracer
                unknown = [site for site in unknown if ast.unparse(site) == self.seen_failing[line]]
            if len(unknown) == 1 and id(unknown[0]) not in self.observed:
                self.observed[id(unknown[0])] = (unknown[0], Verdict(
                    TRACED_KIND, f"{error} raised there under jit (seen by `jitfix run`)", array=True))

    def _loop(self, body: list[ast.stmt], state: State, bind_target: Callable[[State], None] | None = None) -> State:
        """State at the loop head after any number of iterations (zero included)."""
        head = state
        for _ in range(MAX_LOOP_PASSES):
            entry = dict(head)
            if bind_target is not None:
                bind_target(entry)
            end = self._block(body, entry)
            new_head = _join(head, end)
            if _same_kinds(new_head, head):
                break
            head = new_head
        return head

    # -- static guards ---------------------------------------------------------------------------

    def _guarded(self, test: ast.AST, state: State) -> tuple[State, State]:
        """The states in which the body and the ``else`` of ``if test`` start."""
        body, orelse = dict(state), dict(state)
        self._narrow(test, state, body, orelse)
        return body, orelse

    def _narrow(self, test: ast.AST, state: Mapping[str, Verdict], when_true: State, when_false: State) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self._narrow(test.operand, state, when_false, when_true)
            return
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            for value in test.values:
                self._narrow(value, state, when_true, {})
            return
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None \
                and isinstance(test.ops[0], ast.Is | ast.IsNot):
            name = test.left.id
            none_branch = when_true if isinstance(test.ops[0], ast.Is) else when_false
            self._python_value(test.left, state, none_branch, f"`{name} is None`")
            return
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2:
            value = test.args[0]
            text = ast.unparse(value)
            types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            resolved = {self.imports.resolve(t) or (t.id if isinstance(t, ast.Name) else "") for t in types}
            if resolved and resolved <= TRACER_TYPES:
                self._python_value(value, state, when_false, f"`{text}` is not an array")
            elif resolved and resolved <= PYTHON_VALUE_TYPES:
                self._python_value(value, state, when_true, f"`{text}` is a Python or NumPy value")
        elif isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr" \
                and len(test.args) == 2 \
                and isinstance(test.args[1], ast.Constant) and test.args[1].value in ARRAY_ONLY_ATTRIBUTES:
            # Every array (and tracer) has `.shape`: without it, the value is not one.
            self._python_value(test.args[0], state, when_false,
                               f"`{ast.unparse(test.args[0])}` has no `.{test.args[1].value}`")

    def _python_value(self, value: ast.expr, state: Mapping[str, Verdict], branch: State, guard: str) -> None:
        """In ``branch`` the value (a name, or an item of one: `xs[0]`) is a Python value. If
        it was not known to be one on entry (a traced argument, or one whose default no call
        is seen to pass), the branch runs under tracing only for callers that pass no array
        there -- the documented way to call such code is outside jit -- so nothing in it is
        proven traced."""
        if isinstance(value, ast.Name):
            current = state.get(value.id)  # None: a free variable (a closure's, a global): not known
        else:
            current = self._verdict(value, dict(state))
        if current is not None and current.static:
            return
        if isinstance(value, ast.Name):
            branch[value.id] = Verdict(STATIC_KIND, f"{guard} holds here")
        if UNCERTAIN not in branch:
            branch[UNCERTAIN] = Verdict(UNKNOWN_KIND, f"only reached when {guard}, which an array "
                                                      "argument never is")

    # -- try/except guards ----------------------------------------------------------------------

    def _tracer_error_guard(self, node: ast.Try) -> str | None:
        """How ``node`` catches what a tracer raises when Python needs its value (``except
        TypeError``, ``ConcretizationTypeError``, ``Exception``, a bare ``except``), if it does:
        ``try: k = int(k) except TypeError: return`` is the idiom for "check when concrete,
        skip when tracing", and its body is no traced code to rewrite."""
        for handler in self._guarding_handlers(node):
            return "bare `except` catches what a tracer raises" if handler.type is None \
                else f"`except {ast.unparse(handler.type)}` catches what a tracer raises"
        return None

    def _static_after_guard(self, node: ast.Try) -> bool:
        """Whether what follows a guarding ``try`` runs only on Python values: its body asks
        Python for a value (``int(k)``, ``np.asarray(k)``, ``k.item()``), which a tracer
        refuses, and every handler leaves, so under tracing the code after it is never
        reached."""
        return any(self._asks_python_value(call) for call in ast.walk(ast.Module(body=node.body, type_ignores=[]))
                   if isinstance(call, ast.Call)) \
            and all(_leaves(handler.body) for handler in self._guarding_handlers(node))

    def _guarding_handlers(self, node: ast.Try) -> list[ast.ExceptHandler]:
        """The handlers that catch what a tracer raises and do not raise again (a handler that
        raises lets the error surface: a check, not a guard)."""
        guarding = []
        for handler in node.handlers:
            caught = [] if handler.type is None else \
                handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            names = {self.imports.resolve(e) or (e.id if isinstance(e, ast.Name) else None) for e in caught}
            if (handler.type is None or names & TRACER_ERROR_CATCHERS) and not _raises(handler.body):
                guarding.append(handler)
        return guarding

    def _asks_python_value(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name) and func.id in PYTHON_CONVERSIONS | {"len"}:
            return True
        if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist", "__index__", "__int__", "__float__"):
            return True
        resolved = self.imports.resolve(func) or ""
        return numpy_member(resolved) is not None or resolved == "operator.index"

    # -- statements ------------------------------------------------------------------------------

    def _statement(self, node: ast.stmt, state: State) -> State:
        state = dict(state)
        if isinstance(node, ast.Assign):
            self._walrus(node.value, state)
            found = self._verdict(node.value, state)
            for target in node.targets:
                self._bind(target, found, state, node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self._bind(node.target, self._verdict(node.value, state), state, node.value)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                current = ast.Name(id=node.target.id, ctx=ast.Load())
                state[node.target.id] = self._verdict(ast.BinOp(left=current, op=node.op, right=node.value), state)
        elif isinstance(node, ast.If):
            self._walrus(node.test, state)
            body, orelse = self._guarded(node.test, state)
            chooses = self._traced_array(node.test, state)
            state = _join(self._block(node.body, body), self._block(node.orelse, orelse))
            if chooses:
                _made_traced(assigned_names(node.body) | assigned_names(node.orelse), state,
                             "chosen by a traced `if` (`lax.cond` returns tracers)")
        elif isinstance(node, ast.For | ast.AsyncFor):
            traced_range = is_range_call(node.iter, self.imports) and any(
                self._verdict(arg, state).traced for arg in node.iter.args)  # type: ignore[attr-defined]
            head = self._loop(node.body, state,
                              lambda entry: self._bind_iteration(node.target, node.iter, entry, uses=node.body))
            if traced_range:
                _made_traced(assigned_names(node.body) | set(target_names(node.target)), head,
                             "carried by a loop with a traced trip count (`lax` loops return tracers)")
            state = self._block(node.orelse, head)
        elif isinstance(node, ast.While):
            self._walrus(node.test, state)
            head = self._loop(node.body, state)
            # The test runs at the head of every pass: `total < 10.0` is traced there once the
            # body makes `total` a tracer, though `total = 0.0` before the loop is not.
            self.loop_heads[id(node)] = head
            traced_test = self._traced_array(node.test, head)
            if traced_test:
                _made_traced(assigned_names(node.body), head,
                             "carried by a loop on a traced test (`lax.while_loop` returns tracers)")
            state = self._block(node.orelse, head)
        elif isinstance(node, ast.With | ast.AsyncWith):
            inner = dict(state)
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and self.imports.resolve(expr.func) in COMPILE_TIME:
                    inner[UNSTAGED] = Verdict(STATIC_KIND, "inside `jax.ensure_compile_time_eval()`")
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, Verdict(UNKNOWN_KIND, "bound by `with`"), inner)
            end = self._block(node.body, inner)
            if UNSTAGED not in state:
                end.pop(UNSTAGED, None)
            state = end
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            guard = self._tracer_error_guard(node)  # type: ignore[arg-type]
            body_start = dict(state)
            if guard is not None and UNCERTAIN not in state:
                body_start[UNCERTAIN] = Verdict(UNKNOWN_KIND, f"inside a `try` whose {guard}: the code there "
                                                              "runs as written only on Python values")
            body_end = self._block(node.body, body_start)  # type: ignore[attr-defined]
            handler_start = _join(state, body_end)
            if UNCERTAIN not in state:
                if guard is not None and self._static_after_guard(node):  # type: ignore[arg-type]
                    body_end[UNCERTAIN] = Verdict(UNKNOWN_KIND, f"after a `try` that asks Python for a value and "
                                                                f"whose {guard} and leaves: tracing never gets here")
                else:
                    body_end.pop(UNCERTAIN, None)
            ends = [self._block(node.orelse, body_end)]  # type: ignore[attr-defined]
            for handler in node.handlers:  # type: ignore[attr-defined]
                start = dict(handler_start)
                if handler.name:
                    start[handler.name] = Verdict(UNKNOWN_KIND, "an exception")
                end = self._block(handler.body, start)
                if not _leaves(handler.body):  # a handler that returns never reaches what follows
                    ends.append(end)
            state = ends[0]
            for end in ends[1:]:
                state = _join(state, end)
            state = self._block(node.finalbody, state)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Match):
            ends = [dict(state)]
            subject = self._verdict(node.subject, state)
            for case in node.cases:
                start = dict(state)
                for pattern_node in ast.walk(case.pattern):
                    name = getattr(pattern_node, "name", None)
                    if isinstance(name, str):
                        start[name] = Verdict(subject.kind, "matched from the subject", subject)
                ends.append(self._block(case.body, start))
            state = ends[0]
            for end in ends[1:]:
                state = _join(state, end)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            state[node.name] = Verdict(STATIC_KIND, f"`{node.name}` is a local definition")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                state[(alias.asname or alias.name).split(".")[0]] = Verdict(STATIC_KIND, "an imported module")
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                state[name] = Verdict(UNKNOWN_KIND, f"`{name}` is declared global")
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                for name in _names(target):
                    state.pop(name.id, None)
        else:
            self._walrus(node, state)
        return state


def _positions_joined(items: Sequence[Verdict]) -> tuple[Verdict, ...] | None:
    """Each position's kind over a sequence of tuples of one length (``[(0, x[0]), (3, x[-1])]``:
    the first items are Python ints, the second tracers), so that unpacking a pass binds each
    name with its own kind."""
    lengths = {len(item.elements) if item.elements is not None else -1 for item in items}
    if len(lengths) != 1 or -1 in lengths:
        return None
    columns = zip(*(item.elements for item in items if item.elements is not None))
    return tuple(max(column, key=lambda verdict: verdict.kind) for column in columns)


def _raises(statements: list[ast.stmt]) -> bool:
    """The block ends by raising (a re-raise or another error)."""
    return bool(statements) and isinstance(statements[-1], ast.Raise)


def _leaves(statements: list[ast.stmt]) -> bool:
    """Every path through a handler ends by leaving what follows the ``try``."""
    last = statements[-1] if statements else None
    if isinstance(last, ast.Continue | ast.Break):
        return True
    return always_leaves(statements)


def _made_traced(names: Iterable[str], state: State, why: str) -> None:
    """After control flow that lax runs (a traced ``if`` or trip count), what it binds is
    a tracer: whatever the code assigns there comes back out of ``lax.cond``/the lax loop."""
    for name in names:
        known = state.get(name)
        if known is None or known.traced:
            continue
        state[name] = Verdict(TRACED_KIND, why, known)
