"""What kind of value an expression is inside a traced function: traced, static or unknown.

Every answer is a ``Verdict`` -- a kind and the reason for it, resting on the verdicts of
its parts -- and each kind needs a proof:

* **traced**: a traced parameter; the result of a JAX function the catalogue knows returns
  arrays (under jit every such call is staged; elsewhere when an argument is traced); an
  operator, comparison or array method (``x.sum()``) with a traced operand; the result of a
  function of the module whose summary says it returns a tracer for these arguments.
* **static**: literals, module constants, static arguments, ``.shape``/``.ndim``/``.dtype``,
  ``len``, ``isinstance``, ``is None``, JAX functions that return Python values
  (``jnp.shape``, ``broadcast_shapes``, tree structures), static fields of pytree classes,
  and functions of the module whose summary says they return Python values.
* **unknown**: everything else -- a call to code jitfix cannot see, an attribute of a value
  of unknown class, a leaf of a pytree whose type is not declared.

A rule rewrites only what is certainly traced; unknown leaves the code alone.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from jitfix.analysis.blocks import declared_names, walk_body
from jitfix.analysis.catalogue import (ARGUMENT_BUILTINS, ARGUMENT_MODULES, ARRAY, ARRAY_ATTRIBUTES, HOST, LAYERS, call_category,
                                       NUMPY_METADATA, ONE_ARRAY, PYTREE, RESULT_PARTS, STATIC, STATIC_ATTRIBUTES,
                                       STATIC_BUILTINS, TRANSFORM, function_category, is_elementwise, jnp_member,
                                       shape_arguments)
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.python_arithmetic import PythonSpelling, python_spelling

if TYPE_CHECKING:
    from jitfix.analysis.pytrees import PytreeIndex

class Kind(IntEnum):
    """What a value is while tracing, ordered: a value made of several takes the strongest."""

    STATIC = 0  # a Python value, known at trace time
    UNKNOWN = 1  # nothing shows which
    TRACED = 2  # a tracer

    @property
    def label(self) -> str:
        return self.name.lower()


STATIC_KIND, UNKNOWN_KIND, TRACED_KIND = Kind.STATIC, Kind.UNKNOWN, Kind.TRACED
# The key of a state (not a name: no identifier contains "<") saying why the point may not
# run under tracing at all (`if p is None:`), if it may not.
UNCERTAIN = "<uncertain>"
STATIC_RESULT_TRANSFORMS = frozenset({"jax.make_jaxpr", "jax.eval_shape"})
# Built-ins that turn a number into a Python number (of a tracer: they raise under jit).
PYTHON_CONVERSIONS = frozenset({"int", "float", "bool", "complex"})


# `tree_map(f, tree, *rest)` calls `f` on the leaves of the trees: Python calls in the same trace.
TREE_MAPS = frozenset({"jax.tree_util.tree_map", "jax.tree.map", "jax.tree_map"})

@dataclass(frozen=True)
class Verdict:
    """A value's kind, why, and the verdict the reason rests on (its evidence chain)."""

    kind: Kind
    why: str
    via: Verdict | None = None
    # What is known beyond the kind: a tuple's elements, the pytree class of the value.
    elements: tuple[Verdict, ...] | None = None
    klass: str | None = None
    # Certainly one array (a tracer, not a tuple or dict holding tracers): its truth needs
    # lax.cond. Proven by what only an array gives: an ordering comparison of a tracer,
    # arithmetic on an array, a method lists and dicts do not have.
    array: bool = False
    # A Python number or bool (static): a lax primitive makes one array of it.
    scalar: bool = False
    # One value, never a tuple or dict, whichever it is: one array or a Python number or bool
    # (`done = step >= limit or err < tol`). Its truth is that of one value, as jnp takes it.
    single: bool = False
    # Certainly a Python container, made by a display or comprehension: "dict", "list",
    # "tuple", "set" (NumPy takes a dict as one object, converts a list's elements; jnp takes
    # neither).
    container: str | None = None
    # An instance of a pytree class of the module made where the analysis saw it
    # (`Solution(ys, result)`): what each field was given, by name.
    fields: tuple[tuple[str, Verdict], ...] | None = None
    # A plain object (no pytree) of the module's class of this name, made where the analysis
    # saw it: its properties are read through that class.
    made: str | None = None
    # Certainly a JAX array, made where nothing is staged (inside
    # `jax.ensure_compile_time_eval()`): concrete there when its inputs are, but an operator,
    # an index or a method on it where code is staged is a JAX operation, and gives a tracer.
    jax_array: bool = False

    @property
    def traced(self) -> bool:
        return self.kind == TRACED_KIND

    @property
    def static(self) -> bool:
        return self.kind == STATIC_KIND

    def chain(self) -> list[str]:
        """The reasons, from this verdict down to the proof it rests on."""
        reasons: list[str] = []
        current: Verdict | None = self
        while current is not None and len(reasons) < 12:
            reasons.append(current.why)
            current = current.via
        return reasons

    def explain(self) -> str:
        return " <- ".join(self.chain())


_CONTAINERS: dict[type, str] = {ast.Dict: "dict", ast.DictComp: "dict", ast.List: "list", ast.ListComp: "list",
                                ast.Tuple: "tuple", ast.Set: "set", ast.SetComp: "set"}
STATIC_LITERAL = Verdict(STATIC_KIND, "a literal")
PYTHON_NUMBER = Verdict(STATIC_KIND, "a literal", scalar=True)
MODULE_CONSTANT = Verdict(STATIC_KIND, "a module constant")
# Members a Python container has too: `xs.copy()` of a list of tracers is a list.
_CONTAINER_MEMBERS = frozenset(dir(list)) | frozenset(dir(dict)) | frozenset(dir(tuple)) | frozenset(dir(set))
_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Array methods that read a concrete array's value into Python rather than stage an operation.
_VALUE_READS = frozenset({"item", "tolist", "tobytes", "block_until_ready", "copy_to_host_async"})


def may_narrow(test: ast.AST) -> bool:
    """Whether a test has the shape of a static guard (``p is None``, ``isinstance(...)``)."""
    if isinstance(test, ast.Compare):
        return isinstance(test.ops[0], ast.Is | ast.IsNot)
    if isinstance(test, ast.Call):
        return isinstance(test.func, ast.Name) and test.func.id in ("isinstance", "hasattr")
    if isinstance(test, ast.UnaryOp):
        return isinstance(test.op, ast.Not) and may_narrow(test.operand)
    if isinstance(test, ast.BoolOp):
        return any(may_narrow(value) for value in test.values)
    return False


def as_scalar(found: Verdict, scalar: bool) -> Verdict:
    """The verdict, known to be a Python number or bool when ``scalar`` says so (and it is static)."""
    return Verdict(found.kind, found.why, found.via, found.elements, found.klass, scalar=True) \
        if scalar and found.static and not found.scalar else found


def _one_array_in_lax(found: Verdict) -> bool:
    """Whether a lax primitive makes one array of the value: an array, a Python number, or
    one value that is either."""
    return found.array or found.single or (found.static and found.scalar)


def as_array(found: Verdict, array: bool) -> Verdict:
    """The verdict, known to be one array when ``array`` says so (and it is traced)."""
    return Verdict(found.kind, found.why, found.via, found.elements, found.klass, array=True) \
        if array and found.traced and not found.array else found

UNKNOWN_VALUE = Verdict(UNKNOWN_KIND, "not known")


def pytree_form(verdict: Verdict) -> object:
    """A verdict's pytree structure, for comparing what two lax calls pass one body."""
    if verdict.elements is not None:
        return tuple(pytree_form(element) for element in verdict.elements)
    return (verdict.array, verdict.klass)


def _lax_result(returned: list[Verdict], where: str) -> Verdict | None:
    """What a lax primitive gives back for branches returning ``returned``: tracers, in the
    branches' structure (a tuple slot by slot); one array where every branch returns one."""
    if all(found.elements is not None for found in returned):
        sizes = {len(found.elements) for found in returned}  # type: ignore[arg-type]
        if len(sizes) != 1:
            return None
        slots = tuple(_lax_result([found.elements[index] for found in returned], where)  # type: ignore[index]
                      for index in range(sizes.pop()))
        if any(slot is None for slot in slots):
            return None
        return Verdict(TRACED_KIND, f"returned by {where}", elements=slots)  # type: ignore[arg-type]
    if any(found.elements is not None for found in returned):
        return None
    return Verdict(TRACED_KIND, f"returned by {where}", array=all(_one_array_in_lax(found) for found in returned))


# Where each lax loop takes its carry (position, keyword), and for scan the rows it scans.
LOOP_CARRIES = {"jax.lax.fori_loop": (3, "init_val"), "jax.lax.while_loop": (2, "init_val"),
                "jax.lax.scan": (1, "init")}
SCANNED = (2, "xs")


def lax_operand(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    """The argument of a lax call at ``position`` or by ``keyword`` (None if not plainly given)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if position < len(call.args):
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def carried(init: ast.AST | None, verdict: Callable[[ast.AST], Verdict], why: str) -> Verdict:
    """What a lax loop holds where its carry started as ``init``: tracers in init's pytree
    structure, every leaf one array (lax makes an array of each leaf, Python numbers too).
    The rows of a scanned ``xs`` have that form as well."""
    if isinstance(init, ast.Tuple | ast.List) and not any(isinstance(e, ast.Starred) for e in init.elts):
        return Verdict(TRACED_KIND, why, elements=tuple(carried(element, verdict, why) for element in init.elts))
    if isinstance(init, ast.Constant) and isinstance(init.value, int | float | complex):
        return Verdict(TRACED_KIND, why, array=True)
    return _carried_leaves(verdict(init), why) if init is not None else Verdict(TRACED_KIND, why)


def _carried_leaves(found: Verdict, why: str) -> Verdict:
    if found.elements is not None:
        return Verdict(TRACED_KIND, why, found, elements=tuple(_carried_leaves(e, why) for e in found.elements))
    return Verdict(TRACED_KIND, why, found, klass=found.klass, array=_one_array_in_lax(found))


# Operators a container that can hold tracers also has: `+` and `*` of lists and tuples, `|`
# of dicts. A traced value any other operator (or `+`/`*` with a float) applies to is an array.
_CONTAINER_OPERATORS = (ast.Add, ast.Mult, ast.BitOr)


def _arithmetic_only(expr: ast.BinOp) -> bool:
    """Whether no list, tuple or dict can be an operand of ``expr`` (sets and strings hold no
    tracer: a tracer is not hashable, and a string is never traced)."""
    if not isinstance(expr.op, _CONTAINER_OPERATORS):
        return True
    return not isinstance(expr.op, ast.BitOr) and any(
        isinstance(side, ast.Constant) and isinstance(side.value, float) for side in (expr.left, expr.right))


def _strongest(verdicts: list[Verdict], why: Callable[[Verdict], str]) -> Verdict:
    """Traced if any part is (that part is the evidence), static if all are, else unknown."""
    if not verdicts:
        return STATIC_LITERAL
    traced = next((v for v in verdicts if v.traced), None)
    if traced is not None:
        return Verdict(TRACED_KIND, why(traced), traced)
    unknown = next((v for v in verdicts if not v.static), None)
    if unknown is not None:
        return Verdict(UNKNOWN_KIND, why(unknown), unknown)
    return Verdict(STATIC_KIND, why(verdicts[0]), verdicts[0])


def _callee_name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return f"....{func.attr}" if not isinstance(func.value, ast.Name) else f"{func.value.id}.{func.attr}"
    return "..."


COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _results_of(comprehension: ast.AST) -> list[ast.AST]:
    """What a comprehension makes of each pass: its element, or its key and value."""
    if isinstance(comprehension, ast.DictComp):
        return [comprehension.key, comprehension.value]
    return [comprehension.elt]  # type: ignore[attr-defined]
# Binds a loop target in a state from an iterable, evaluating with the function given.
# The last argument: the code that reads the targets.
BindIteration = Callable[[ast.AST, ast.AST, dict, Callable[[ast.AST], "Verdict"], Sequence[ast.AST]], None]
# Narrows the states where a test holds and where it does not (``p is None``,
# ``isinstance(x, int)``): (test, state, when_true, when_false).
Narrow = Callable[[ast.AST, Mapping[str, "Verdict"], dict[str, "Verdict"], dict[str, "Verdict"]], None]


class ComprehensionScopes:
    """The comprehensions of one function. Each is a scope of its own: its targets are bound
    by iterating (``[f(v) for v in xs]``: ``v`` is a row of ``xs``), and a name read inside it
    is the comprehension's own when one of its targets binds it. Everything in a
    comprehension but its first iterable (evaluated outside) lies in that scope."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, bind: BindIteration):
        self.bind = bind
        self.around: dict[int, tuple[ast.AST, ...]] = {}  # node -> the comprehensions it is in
        self.targets: dict[int, frozenset[str]] = {}
        for node in walk_body(function):  # pre-order: an outer comprehension comes first
            if isinstance(node, COMPREHENSIONS):
                chain = (*self.around.get(id(node), ()), node)
                first, *rest = node.generators
                inside = [first.target, *first.ifs, *(part for generator in rest
                                                      for part in (generator.target, generator.iter, *generator.ifs))]
                inside += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                for part in inside:
                    for child in ast.walk(part):
                        self.around[id(child)] = chain
                self.targets[id(node)] = frozenset(
                    name.id for generator in node.generators for name in ast.walk(generator.target)
                    if isinstance(name, ast.Name))


class ValueAnalysis:
    """Kinds of expressions evaluated where the names hold ``state``."""

    def __init__(self, imports: ImportTable, state: Mapping[str, Verdict], *, staged: bool = True,
                 uncertain: str | None = None, program: "Program | None" = None, scope: ast.AST | None = None,
                 comprehensions: ComprehensionScopes | None = None,
                 comprehension_states: dict[int, dict[str, Verdict]] | None = None,
                 narrow: Narrow | None = None, observed: Mapping[int, tuple[ast.AST, Verdict]] | None = None):
        self.imports = imports
        self.state = state
        # Under jit every JAX operation is staged (a tracer even on constants); under vmap
        # alone, or inside `jax.ensure_compile_time_eval()`, only what a tracer feeds.
        self.staged = staged
        # Why this point may not run under tracing at all (`if p is None:`), if it may not.
        self.uncertain = uncertain
        self.program = program
        self.scope = scope
        # Verdicts by node (the node is kept alive with its verdict, so its id is not reused).
        self._memo: dict[int, tuple[ast.AST, Verdict]] = {}
        # Parts of an expression evaluated where a guard holds (the arms of `a if hasattr(x,
        # "shape") else b`): the narrowed analysis that answers for each.
        self._guarded: dict[int, ValueAnalysis] = {}
        self.comprehensions = comprehensions
        # The names of each comprehension's scope where ``state`` holds around it.
        self._comprehension_states = {} if comprehension_states is None else comprehension_states
        self.narrow = narrow
        # Expressions a failure seen by `jitfix run` proved traced, by node (``FlowAnalysis``).
        self.observed = observed or {}

    # -- the questions rules ask -------------------------------------------------------------

    def is_traced(self, expr: ast.AST) -> bool:
        """True when expr is certainly a tracer (or a pytree of tracers) under tracing."""
        return self.verdict(expr).traced

    def is_static(self, expr: ast.AST) -> bool:
        """True when expr is certainly a Python value known at trace time."""
        return self.verdict(expr).static

    def verdict(self, expr: ast.AST) -> Verdict:
        found = self._raw(expr)
        if found.traced and self.uncertain:
            return Verdict(UNKNOWN_KIND, self.uncertain, found)
        return found

    # -- the rules of evidence ---------------------------------------------------------------

    def _verdict(self, expr: ast.AST) -> Verdict:
        method = getattr(self, f"_{type(expr).__name__}", None)
        if method is None:
            return UNKNOWN_VALUE
        return method(expr)

    def _raw(self, expr: ast.AST) -> Verdict:
        """The verdict without the uncertainty of the point (parts of one expression)."""
        found = self._memo.get(id(expr))
        if found is None:
            guarded = self._guarded.get(id(expr))
            found = (expr, guarded.verdict(expr) if guarded is not None else self._verdict(expr))
            seen = self.observed.get(id(expr))
            if seen is not None and seen[0] is expr and not found[1].traced:
                found = seen
            self._memo[id(expr)] = found
        return found[1]

    def _Constant(self, expr: ast.Constant) -> Verdict:
        return PYTHON_NUMBER if isinstance(expr.value, int | float | complex) else STATIC_LITERAL

    def _JoinedStr(self, expr: ast.JoinedStr) -> Verdict:
        return Verdict(STATIC_KIND, "a string, formatted at trace time")

    def _Lambda(self, expr: ast.Lambda) -> Verdict:
        return Verdict(STATIC_KIND, "a function")

    def _Name(self, expr: ast.Name) -> Verdict:
        found = self._comprehension_binding(expr) if self.comprehensions is not None else None
        if found is None:
            found = self.state.get(expr.id)
        if found is not None:
            return found
        if expr.id in self.imports.aliases:
            return Verdict(STATIC_KIND, f"`{expr.id}` is an imported name")
        if expr.id in {"True", "False"}:
            return PYTHON_NUMBER
        if expr.id == "None":
            return STATIC_LITERAL
        return Verdict(UNKNOWN_KIND, f"`{expr.id}` is not bound in this function")

    def _comprehension_binding(self, expr: ast.Name) -> Verdict | None:
        """The verdict of a comprehension's own target (None for any other name)."""
        assert self.comprehensions is not None
        for comprehension in reversed(self.comprehensions.around.get(id(expr), ())):
            if expr.id in self.comprehensions.targets[id(comprehension)]:
                return self._comprehension_state(comprehension).get(expr.id)
        return None

    def _comprehension_state(self, comprehension: ast.AST) -> dict[str, Verdict]:
        """The names inside ``comprehension``: those around it, and its targets bound one
        generator after the other (a later iterable reads the targets before it)."""
        assert self.comprehensions is not None
        state = self._comprehension_states.get(id(comprehension))
        if state is None:
            around = self.comprehensions.around.get(id(comprehension))
            state = dict(self._comprehension_state(around[-1]) if around else self.state)
            self._comprehension_states[id(comprehension)] = state
            inside = ValueAnalysis(self.imports, state, staged=self.staged, uncertain=self.uncertain,
                                   program=self.program, scope=self.scope, comprehensions=self.comprehensions,
                                   comprehension_states=self._comprehension_states, observed=self.observed)
            generators = comprehension.generators  # type: ignore[attr-defined]
            for at, generator in enumerate(generators):
                uses = [*_results_of(comprehension), *generator.ifs,
                        *(later for after in generators[at + 1:] for later in (after.iter, *after.ifs))]
                self.comprehensions.bind(generator.target, generator.iter, state, inside.verdict, uses)
        return state

    def _comprehension(self, expr: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> Verdict:
        if self.comprehensions is None:
            return Verdict(UNKNOWN_KIND, "a comprehension")
        parts = [expr.key, expr.value] if isinstance(expr, ast.DictComp) else [expr.elt]
        found = _strongest([self._raw(part) for part in parts],
                           lambda v: "a comprehension of tracers" if v.traced else "a comprehension")
        return replace(found, container=_CONTAINERS.get(type(expr)))

    _ListComp = _SetComp = _DictComp = _GeneratorExp = _comprehension

    def _Attribute(self, expr: ast.Attribute) -> Verdict:
        if self.imports.resolve(expr) is not None:
            return Verdict(STATIC_KIND, f"`.{expr.attr}` is an attribute of a module")
        if expr.attr in STATIC_ATTRIBUTES:
            return Verdict(STATIC_KIND, f"`.{expr.attr}` is a Python value at trace time")
        base = self._raw(expr.value)
        if base.static:
            return Verdict(STATIC_KIND, f"`.{expr.attr}` of a static value", base)
        given = dict(base.fields or ())
        if expr.attr in given:
            owner = f"`{base.klass}.{expr.attr}`" if base.klass else f"`.{expr.attr}`"
            return replace(given[expr.attr], why=f"{owner} holds what the instance was made with", via=given[expr.attr])
        if (base.made or base.klass) is not None and self.program is not None and self.scope is not None:
            read = self.program.property_value(self.scope, base, expr.attr, self.staged)
            if read is not None:
                return read
        if base.klass is not None and self.program is not None:
            pytree = self.program.pytrees.get(base.klass)
            if pytree is not None:
                kind = pytree.field_kind(expr.attr)
                if kind == "static":
                    return Verdict(STATIC_KIND, f"`{base.klass}.{expr.attr}` is a static field", base)
                if kind == "traced" and base.traced:  # (annotated an array: one, not a subtree)
                    return Verdict(TRACED_KIND, f"`{base.klass}.{expr.attr}` is an array leaf", base, array=True)
                return Verdict(UNKNOWN_KIND, f"`{base.klass}.{expr.attr}` is a leaf of undeclared type", base)
        if base.traced and expr.attr in ARRAY_ATTRIBUTES:
            return Verdict(TRACED_KIND, f"`.{expr.attr}` of a traced array", base,
                           array=base.array or expr.attr not in _CONTAINER_MEMBERS)
        return Verdict(UNKNOWN_KIND, f"`.{expr.attr}` of a value whose class is not known", base)

    def _Subscript(self, expr: ast.Subscript) -> Verdict:
        base = self._raw(expr.value)
        index = self._raw(expr.slice)
        if base.elements is not None and isinstance(expr.slice, ast.Constant) \
                and isinstance(expr.slice.value, int) and -len(base.elements) <= expr.slice.value < len(base.elements):
            return base.elements[expr.slice.value]
        if base.traced:
            return Verdict(TRACED_KIND, "an element of a traced value", base, array=base.array)
        staged = self._staged_on_concrete([base])
        if staged is not None:
            return staged
        if index.traced:
            return Verdict(TRACED_KIND, "indexed by a traced value", index)
        if base.static:  # an index not known to be traced: a static element, or it raises (a tracer index)
            return Verdict(STATIC_KIND, "an element of a static value", base)
        return Verdict(UNKNOWN_KIND, "an element of a value that is not known", base)

    def _Slice(self, expr: ast.Slice) -> Verdict:
        parts = [part for part in (expr.lower, expr.upper, expr.step) if part is not None]
        return _strongest([self._raw(part) for part in parts], lambda v: "a slice bound")

    def _sequence(self, expr: ast.Tuple | ast.List | ast.Set) -> Verdict:
        elements = tuple(self._raw(element) for element in expr.elts)
        joined = _strongest(list(elements), lambda v: "an element")
        known = None if any(isinstance(e, ast.Starred) for e in expr.elts) else elements
        return Verdict(joined.kind, joined.why, joined.via, elements=known, container=_CONTAINERS[type(expr)])

    _Tuple = _List = _Set = _sequence

    def _Dict(self, expr: ast.Dict) -> Verdict:
        found = _strongest([self._raw(value) for value in expr.values], lambda v: "a value of the dict")
        return replace(found, container="dict")

    def _Starred(self, expr: ast.Starred) -> Verdict:
        return self._raw(expr.value)

    def _NamedExpr(self, expr: ast.NamedExpr) -> Verdict:
        return self._raw(expr.value)

    def _Compare(self, expr: ast.Compare) -> Verdict:
        if all(isinstance(op, ast.Is | ast.IsNot) for op in expr.ops):
            return Verdict(STATIC_KIND, "an identity test (`is`)")
        if compared_with_text(expr):
            return as_scalar(Verdict(STATIC_KIND, "a comparison with text (an array never equals a string)"), True)
        parts = [self._raw(part) for part in (expr.left, *expr.comparators)]
        if any(isinstance(op, ast.In | ast.NotIn) for op in expr.ops):
            if parts[0].traced:
                return Verdict(UNKNOWN_KIND, "membership of a traced value", parts[0])
            return Verdict(STATIC_KIND, "membership in a Python container")
        found = self._staged_on_concrete(parts) or \
            _strongest(parts, lambda v: "compares a tracer" if v.traced else "a comparison")
        if found.static:
            return as_scalar(found, True)  # a bool (a NumPy array of them, which lax takes as one array too)
        # `a < b` of a tracer is an array (tuples order by their elements' truth: it raises);
        # `==` is one when an operand is (tuples compare equal in Python).
        return as_array(found, any(part.array for part in parts)
                         or any(isinstance(op, _ORDERINGS) for op in expr.ops))

    def _BinOp(self, expr: ast.BinOp) -> Verdict:
        left, right = self._raw(expr.left), self._raw(expr.right)
        found = self._staged_on_concrete([left, right]) or \
            _strongest([left, right], lambda v: "arithmetic on a tracer" if v.traced else "arithmetic")
        array = left.array or right.array or (found.traced and _arithmetic_only(expr))
        return as_scalar(as_array(found, array), left.scalar and right.scalar)

    def _UnaryOp(self, expr: ast.UnaryOp) -> Verdict:
        operand = self._raw(expr.operand)
        staged = None if isinstance(expr.op, ast.Not) else self._staged_on_concrete([operand])
        if staged is not None:
            return staged
        return Verdict(operand.kind, "an operator on a tracer" if operand.traced else "an operator", operand,
                       array=operand.array and not isinstance(expr.op, ast.Not),
                       scalar=operand.static and (operand.scalar or isinstance(expr.op, ast.Not)))

    def _staged_on_concrete(self, parts: list[Verdict]) -> Verdict | None:
        """Where code is staged, an operation on a JAX array made where nothing was (inside
        ``jax.ensure_compile_time_eval()``), concrete or not, is staged: a tracer (jax#9823)."""
        if not self.staged:
            return None
        concrete = next((part for part in parts if part.jax_array), None)
        if concrete is None or any(part.traced for part in parts):
            return None
        return Verdict(TRACED_KIND, "a JAX operation on a JAX array made at trace time is staged under jit",
                       concrete, array=True)

    def _BoolOp(self, expr: ast.BoolOp) -> Verdict:
        """Each operand is evaluated where the ones before it let Python reach it: after
        ``isinstance(g, int) and``, ``g`` is a Python int."""
        verdicts, view = [], self
        for value in expr.values:
            verdicts.append(self._within(view, value))
            view = view._narrowed(value, isinstance(expr.op, ast.And))
        found = _strongest(verdicts, lambda v: "`and`/`or` of a tracer" if v.traced else "`and`/`or`")
        if found.traced and all(_one_array_in_lax(verdict) or verdict.single for verdict in verdicts):
            return Verdict(found.kind, found.why, found.via, single=True)
        return as_scalar(found, all(verdict.scalar for verdict in verdicts))  # it is one of them

    def _IfExp(self, expr: ast.IfExp) -> Verdict:
        test = self._raw(expr.test)
        if test.traced:
            return Verdict(TRACED_KIND, "chosen by a traced test", test)
        arms = [self._within(self._narrowed(expr.test, True), expr.body),
                self._within(self._narrowed(expr.test, False), expr.orelse)]
        return as_array(_strongest(arms, lambda v: "one arm of a conditional"), all(arm.array for arm in arms))

    def _narrowed(self, test: ast.AST, holds: bool) -> ValueAnalysis:
        """The analysis where ``test`` is known to hold (or not): this one, unless the test
        is a static guard that tells something about a name."""
        if self.narrow is None or not may_narrow(test):
            return self
        when_true, when_false = dict(self.state), dict(self.state)
        self.narrow(test, self.state, when_true, when_false)
        state = when_true if holds else when_false
        if all(self.state.get(name) is verdict for name, verdict in state.items()):
            return self
        uncertain = state.get(UNCERTAIN)
        return ValueAnalysis(self.imports, state, staged=self.staged,
                             uncertain=uncertain.why if uncertain is not None else self.uncertain,
                             program=self.program, scope=self.scope, comprehensions=self.comprehensions,
                             comprehension_states=self._comprehension_states, narrow=self.narrow,
                             observed=self.observed)

    def _within(self, view: ValueAnalysis, part: ast.AST) -> Verdict:
        """The verdict of a part of an expression evaluated by ``view`` (this analysis, or one
        narrowed by a guard before the part). A rule asks about the part's own parts too:
        the narrowed view answers for each of them."""
        if view is self:
            return self._raw(part)
        for node in ast.walk(part):
            self._guarded.setdefault(id(node), view)
        return view.verdict(part)

    def _Call(self, call: ast.Call) -> Verdict:
        arguments = [self._raw(arg) for arg in call.args] + [self._raw(k.value) for k in call.keywords]
        func = call.func
        if isinstance(func, ast.Name) and self.is_builtin(func.id):
            if func.id in STATIC_BUILTINS:
                return Verdict(STATIC_KIND, f"`{func.id}()` returns a Python value")
            if func.id in PYTHON_CONVERSIONS and len(call.args) == 1 and not call.keywords \
                    and arguments[0].traced and self.python_spelling(call.args[0]) is not None:
                return Verdict(STATIC_KIND, f"`{func.id}()` of arithmetic on Python values, written with jnp "
                                            "(JF601 writes it in Python)")
            if func.id in ARGUMENT_BUILTINS:
                return _strongest(arguments, lambda v: f"`{func.id}()` of a tracer" if v.traced
                                  else f"`{func.id}()` of its arguments")
        if isinstance(func, ast.Call):
            return self._transformed_call(func, arguments)
        name = self.imports.resolve(func)
        if name == "jax.lax.cond":
            chosen = self._cond_result(call)
            if chosen is not None:
                return chosen
        if name in TREE_MAPS:
            mapped = self._tree_map_result(call)
            if mapped is not None:
                return mapped
        if name in LOOP_CARRIES and self.staged:
            return self._loop_result(name, call)
        if name in RESULT_PARTS:
            parts = tuple(self._catalogued(name, part, arguments) for part in RESULT_PARTS[name])
            strongest = max(parts, key=lambda part: part.kind)
            return Verdict(strongest.kind, strongest.why, strongest.via, elements=parts)
        category = call_category(name, call)
        if category is not None:
            return self._catalogued(name or "", category, arguments)
        if name is not None:
            if name in NUMPY_METADATA:
                return Verdict(STATIC_KIND, f"`{name}` reads only the array's metadata")
            if name.startswith(ARGUMENT_MODULES):
                return _strongest(arguments, lambda v: f"`{name}` of a tracer" if v.traced else f"`{name}`")
            summary = self._summary(call)  # a function of another module of the run
            return summary or Verdict(UNKNOWN_KIND, f"`{name}` is not in jitfix's catalogue")
        if isinstance(func, ast.Attribute) and self.imports.resolve_relative(func) is None:
            return self._method_call(call, func, arguments)
        return self._summary(call) or Verdict(UNKNOWN_KIND, f"`{_callee_name(func)}()` is a call jitfix cannot see into")

    def python_spelling(self, expr: ast.AST) -> PythonSpelling | None:
        """How to write ``expr`` in Python if it is arithmetic on static values that uses
        jnp (staged under jit, so a tracer): ``jnp.ceil(n / k)`` is ``math.ceil(n / k)``."""
        return python_spelling(expr, self._raw, self.imports.resolve, self.is_builtin)

    def assuming_static(self, names: Mapping[str, str]) -> ValueAnalysis:
        """This analysis with each of ``names`` a Python number (why, by name): what the code
        will see once their bindings are written in Python."""
        state = {**self.state, **{name: Verdict(STATIC_KIND, why, scalar=True) for name, why in names.items()}}
        return ValueAnalysis(self.imports, state, staged=self.staged, uncertain=self.uncertain, program=self.program,
                             scope=self.scope, comprehensions=self.comprehensions, narrow=self.narrow,
                             observed=self.observed)

    def is_builtin(self, name: str) -> bool:
        """Whether ``name`` is the built-in here (no local, import or definition rebinds it)."""
        return name not in self.state and name not in self.imports.aliases \
            and name not in self.imports.relative and not self._defined(name)

    def _cond_result(self, call: ast.Call) -> Verdict | None:
        """``lax.cond(pred, f, g, *operands)``: what both branches return when called with the
        operands (lambdas and functions the program can see), as the arrays lax makes of it --
        a slot is one array when both branches return one there. None when not known."""
        if len(call.args) < 3 or call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
            return None
        operands = call.args[3:]
        returned = []
        for branch in call.args[1:3]:
            if isinstance(branch, ast.Lambda):
                params = [arg.arg for arg in branch.args.args]
                if branch.args.posonlyargs or branch.args.vararg or branch.args.kwonlyargs \
                        or len(params) != len(operands):
                    return None
                view = ValueAnalysis(self.imports, {name: self._raw(operand) for name, operand in
                                                    zip(params, operands)}, staged=self.staged,
                                     program=self.program, scope=self.scope)
                returned.append(view.verdict(branch.body))
            else:
                found = self._summary(ast.copy_location(ast.Call(func=branch, args=list(operands), keywords=[]), call))
                if found is None or not found.traced and not found.static:
                    return None
                returned.append(found)
        return _lax_result(returned, f"`lax.cond` at line {call.lineno}")

    def _tree_map_result(self, call: ast.Call) -> Verdict | None:
        """``tree_map(lambda a, b: ..., t1, t2)``: the tree of what the lambda returns on the
        leaves, static when that is (``x.shape[0]`` of a traced leaf), traced when that is; a
        leaf of a traced tree taken as a tracer. None when not known (a function that is not a
        lambda, ``is_leaf=``: leaves may be subtrees)."""
        if len(call.args) < 2 or call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
            return None
        function, trees = call.args[0], call.args[1:]
        if not isinstance(function, ast.Lambda):
            return None
        params = [arg.arg for arg in function.args.args]
        if function.args.posonlyargs or function.args.vararg or function.args.kwonlyargs \
                or len(params) != len(trees):
            return None
        leaves = {}
        for param, tree in zip(params, trees):
            found = self._raw(tree)
            leaves[param] = Verdict(TRACED_KIND, "a leaf of a traced pytree", found) if found.traced else found
        view = ValueAnalysis(self.imports, {**self.state, **leaves}, staged=self.staged, program=self.program,
                             scope=self.scope)
        returned = view.verdict(function.body)
        short = self.imports.resolve(call.func)
        if returned.static:
            return Verdict(STATIC_KIND, f"`{short}` of a function that returns Python values", returned)
        if returned.traced:
            return Verdict(TRACED_KIND, f"`{short}` of a function that returns tracers", returned)
        return Verdict(UNKNOWN_KIND, f"`{short}` of a function whose results are not known", returned)

    def _loop_result(self, name: str, call: ast.Call) -> Verdict:
        """A lax loop returns its final carry (scan: and the stacked outputs), shaped as the
        carry it was given."""
        why = f"carried by `{name.replace('jax.lax.', 'lax.')}` at line {call.lineno}"
        carry = carried(lax_operand(call, *LOOP_CARRIES[name]), self._raw, why)
        if name == "jax.lax.scan":
            return Verdict(TRACED_KIND, why, elements=(carry, Verdict(TRACED_KIND, f"stacked by `lax.scan` at line "
                                                                                  f"{call.lineno}")))
        return carry

    def _summary(self, call: ast.Call) -> Verdict | None:
        """What the program around the function knows the call returns."""
        if self.program is None or self.scope is None:
            return None
        return self.program.summary(self.scope, call, self)

    def _defined(self, name: str) -> bool:
        return self.program is not None and self.scope is not None and self.program.defines(self.scope, name)

    def _catalogued(self, name: str, category: str, arguments: list[Verdict]) -> Verdict:
        short = name.replace("jax.numpy.", "jnp.").replace("jax.lax.", "lax.")
        if category == STATIC or category == HOST or category == TRANSFORM:
            return Verdict(STATIC_KIND, f"`{short}` returns a Python value")
        if category == ARRAY or category == ONE_ARRAY:
            if self.staged:
                found = Verdict(TRACED_KIND, f"`{short}` is staged under jit")
            else:
                found = _strongest(arguments, lambda v: f"`{short}` of a tracer" if v.traced else f"`{short}`")
                if not found.traced and category == ONE_ARRAY:
                    return replace(found, jax_array=True)
            return as_array(found, category == ONE_ARRAY)
        if category == PYTREE:
            return _strongest(arguments, lambda v: f"`{short}` of a traced pytree" if v.traced
                              else f"`{short}` of its arguments")
        return Verdict(UNKNOWN_KIND, f"`{short}`")

    def _transformed_call(self, transform: ast.Call, arguments: list[Verdict]) -> Verdict:
        """``jax.jit(f)(x)``, ``jax.grad(f)(x)``: arrays; ``jax.eval_shape(f)(x)``: shapes."""
        name = self.imports.resolve(transform.func)
        if name in STATIC_RESULT_TRANSFORMS:
            return Verdict(STATIC_KIND, f"`{name}(...)(...)` describes a function, it does not run it")
        if function_category(name) == TRANSFORM:
            return self._catalogued(name or "", ARRAY, arguments)
        if name in LAYERS:  # `nn.Dense(4)(x)`
            return self._catalogued(name or "", ONE_ARRAY, arguments)
        return Verdict(UNKNOWN_KIND, "a call of a function returned by a call")

    def _method_call(self, call: ast.Call, func: ast.Attribute, arguments: list[Verdict]) -> Verdict:
        base = self._raw(func.value)
        if base.traced and func.attr in ARRAY_ATTRIBUTES:
            return Verdict(TRACED_KIND, f"`.{func.attr}()` of a traced array", base,
                           array=base.array or func.attr not in _CONTAINER_MEMBERS)
        staged = self._staged_on_concrete([base]) \
            if func.attr in ARRAY_ATTRIBUTES and func.attr not in _VALUE_READS else None
        if staged is not None:
            return staged
        if base.static and all(argument.static for argument in arguments):
            return Verdict(STATIC_KIND, f"`.{func.attr}()` of a static value with static arguments", base)
        return self._summary(call) or Verdict(UNKNOWN_KIND, f"`.{func.attr}()` of a value whose class is not known",
                                              base)


class Program:
    """What a value analysis may ask of the module around the function: whether a name is a
    local def, the summary of a call to a function of the module, its pytree classes.
    (Implemented in ``jitfix.analysis.summaries``.)"""

    pytrees: "PytreeIndex"

    def defines(self, scope: ast.AST, name: str) -> bool:
        raise NotImplementedError

    def summary(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> Verdict | None:
        raise NotImplementedError

    def class_of_annotation(self, annotation: ast.AST | None) -> str | None:
        raise NotImplementedError

    def property_value(self, scope: ast.AST, instance: Verdict, name: str, staged: bool) -> Verdict | None:
        raise NotImplementedError


Parametered = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def positional_parameters(function: Parametered) -> list[ast.arg]:
    """The parameters a call can fill by position, in order."""
    return [*function.args.posonlyargs, *function.args.args]


def positional_names(function: Parametered) -> list[str]:
    return [arg.arg for arg in positional_parameters(function)]


def named_parameters(function: Parametered) -> list[ast.arg]:
    """The parameters that take one argument each (positional, then keyword-only)."""
    return [*positional_parameters(function), *function.args.kwonlyargs]


def parameter_defaults(function: Parametered) -> dict[str, ast.expr]:
    """Each parameter with a default, and the default's expression."""
    arguments = function.args
    positional = positional_parameters(function)
    defaulted = positional[len(positional) - len(arguments.defaults):] if arguments.defaults else []
    found = {arg.arg: default for arg, default in zip(defaulted, arguments.defaults)}
    found.update({arg.arg: default for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
                  if default is not None})
    return found


def defaults_left(function: Parametered, call: ast.Call, bound: int = 0,
                  bound_keywords: frozenset[str] = frozenset()) -> frozenset[str]:
    """The parameters with a default that ``call`` leaves at it (none known when it passes
    ``*args`` or ``**kwargs``); ``bound``: the leading positional parameters filled before
    the call's own arguments (``self``, or by ``partial``, as are ``bound_keywords``)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or any(keyword.arg is None for keyword in call.keywords):
        return frozenset()
    passed = {*positional_names(function)[:bound + len(call.args)], *bound_keywords,
              *(keyword.arg for keyword in call.keywords)}
    return frozenset(parameter_defaults(function).keys() - passed)


def parameter_names(function: Parametered) -> list[str]:
    """Every parameter, ``*args`` and ``**kwargs`` included, in order."""
    arguments = function.args
    names = positional_names(function)
    if arguments.vararg:
        names.append(arguments.vararg.arg)
    names.extend(arg.arg for arg in arguments.kwonlyargs)
    if arguments.kwarg:
        names.append(arguments.kwarg.arg)
    return names


# Attributes only arrays have (not lists, tuples or dicts).
ARRAY_ONLY_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "T", "at", "astype", "reshape", "sum", "mean",
                                   "max", "min", "any", "all", "squeeze", "transpose", "ravel", "flatten"})


def array_attributes_read(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Each name the nodes read an attribute of that only arrays have (``x.shape``,
    ``x.sum()``; a list or dict has none), with the first such attribute."""
    found: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in ARRAY_ONLY_ATTRIBUTES and isinstance(node.value, ast.Name):
            found.setdefault(node.value.id, node.attr)
    return found


# Operators no Python container has (a list or tuple adds and repeats, a dict merges with `|`):
# an operand of one is an array or a number, a tracer of one array under jit.
_NUMERIC_OPERATORS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
_ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def numeric_operands(nodes: Iterable[ast.AST]) -> set[str]:
    """Names the nodes use where only a number or an array fits: an operand of `-`, `/`, `@`,
    `**`..., of unary `-` or `~`, or ordered against a number (`x > 0`; a tuple is ordered
    only against a tuple)."""
    found: set[str] = set()
    for node in nodes:
        operands: list[ast.expr] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, _NUMERIC_OPERATORS):
            operands = [node.left, node.right]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.Invert):
            operands = [node.operand]
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _ORDERINGS):
            sides = [node.left, node.comparators[0]]
            if any(_is_number(side) for side in sides):
                operands = sides
        found.update(operand.id for operand in operands if isinstance(operand, ast.Name))
    return found


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _names_an_array_type(annotation: ast.AST | None) -> bool:
    """``jax.Array``, ``jnp.ndarray``, ``ArrayLike``, jaxtyping's ``Float[Array, "n"]``
    (``Annotated[Array, ...]``); not a container of arrays (``Tuple[Array, Array]``,
    ``list[Array]``) nor ``Optional[Array]``, whose truth Python takes itself."""
    if isinstance(annotation, ast.Subscript):
        if not _JAXTYPING_ARRAY_TYPE.fullmatch(_last_name(annotation.value) or ""):
            return False
        inner = annotation.slice.elts[0] if isinstance(annotation.slice, ast.Tuple) and annotation.slice.elts \
            else annotation.slice
        return _names_an_array_type(inner)
    return _last_name(annotation) in {"Array", "ndarray", "ArrayLike"}


# jaxtyping's array types, whose first subscript is the array's own type (and `Annotated`'s).
_JAXTYPING_ARRAY_TYPE = re.compile(r"(Shaped|Bool|Key|Num|Inexact|Float|BFloat|Complex|Integer|UInt|Int|Real)\d*"
                                   r"|Annotated")


def _last_name(node: ast.AST | None) -> str | None:
    """``Array`` of ``Array`` or ``jax.Array``."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


SCALAR_TYPES = frozenset({"bool", "int", "float", "complex"})


def _scalar_parameters(arguments: ast.arguments) -> set[str]:
    """Parameters declared a Python scalar -- annotated ``bool``/``int``/``float`` or given a
    literal number or bool as default: traced (not static), such an argument arrives as one
    0-d array (the truth of a tuple would need a tuple, against the declaration)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults: dict[str, ast.expr | None] = dict(zip([arg.arg for arg in positional][::-1], arguments.defaults[::-1]))
    defaults.update((arg.arg, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults))
    found = set()
    for arg in (*positional, *arguments.kwonlyargs):
        annotation, default = arg.annotation, defaults.get(arg.arg)
        if isinstance(annotation, ast.Name) and annotation.id in SCALAR_TYPES:
            found.add(arg.arg)
        elif annotation is None and isinstance(default, ast.Constant) \
                and isinstance(default.value, bool | int | float | complex):
            found.add(arg.arg)
    return found


def compared_with_text(expr: ast.Compare) -> ast.expr | None:
    """The other operand of ``p == "sum"``, ``p != "sum"`` or ``p in ("sum", "mean")``: a
    Python bool whatever ``p`` is (an array equals no string: jax answers False)."""
    if len(expr.ops) != 1:
        return None
    left, right, op = expr.left, expr.comparators[0], expr.ops[0]
    if isinstance(op, ast.Eq | ast.NotEq):
        if _is_text(right):
            return left
        return right if _is_text(left) else None
    if isinstance(op, ast.In | ast.NotIn) and isinstance(right, ast.Tuple | ast.List | ast.Set) and right.elts \
            and all(_is_text(element) for element in right.elts):
        return left
    return None


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)


def _operands_of(node: ast.AST) -> list[ast.AST]:
    """The operands of arithmetic (other than `+`, which joins lists) or a comparison with
    something other than None."""
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Add):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return [node.operand]
    if isinstance(node, ast.Compare) and not any(isinstance(op, ast.Is | ast.IsNot | ast.In | ast.NotIn)
                                                 for op in node.ops):
        return [node.left, *node.comparators]
    return []


def _operand_text(operand: ast.AST) -> str | None:
    """A name, or an item of one by a constant key (`t[0]`, `st["p"]`), as text; None for
    anything else."""
    if isinstance(operand, ast.Name):
        return operand.id
    if isinstance(operand, ast.Subscript) and isinstance(operand.value, ast.Name) \
            and isinstance(operand.slice, ast.Constant):
        return ast.unparse(operand)
    return None


def _add_sums(nodes: list[ast.AST], found: set[str]) -> None:
    """Adds to ``found`` the other side of each `+` one side of which is a number or in it:
    a list or tuple plus a number or an array raises, so that side is one value too (`t[0] + c`,
    then `t[0] + t[1]`), to a fixed point (each name or item followed once)."""
    partners: dict[str, list[str]] = {}  # a side's text -> the texts added to it
    pending = list(found)
    for node in nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
            continue
        for side, other in ((node.left, node.right), (node.right, node.left)):
            text, other_text = _operand_text(side), _operand_text(other)
            if text is None:
                continue
            if _is_number(other):
                pending.append(text)
            elif other_text is not None:
                partners.setdefault(other_text, []).append(text)
    while pending:
        text = pending.pop()
        found.add(text)
        pending.extend(partner for partner in partners.pop(text, []) if partner not in found)


def _operand_texts(nodes: list[ast.AST]) -> set[str]:
    """The names and items (`t[0]`) ``nodes`` use as operands (see ``_operands_of``); an item
    unpacked into an operand (`a, b = t` then `a - b`) is one too."""
    found = {text for node in nodes for operand in _operands_of(node)
             if (text := _operand_text(operand)) is not None}
    _add_sums(nodes, found)
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Tuple | ast.List):
                    found.update(f"{node.value.id}[{index}]" for index, element in enumerate(target.elts)
                                 if isinstance(element, ast.Name) and element.id in found)
    return found


class ArrayEvidence:
    """Whether a traced expression is certainly an array rather than a container of arrays.

    Python takes the truth of a tuple or dict from its length, which is static even when it
    holds tracers; only the truth of an array needs ``lax.cond``. A parameter may be either
    (a pytree of arrays is a common argument), so its bare truth is left alone.
    """

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, outer: ArrayEvidence | None = None,
                 known: frozenset[str] = frozenset(), single: frozenset[str] = frozenset()):
        self.function = function
        self.outer = outer  # the enclosing function's evidence, for the names it closes over
        self.params = set(parameter_names(function))
        # Parameters known to hold arrays: a run saw tracers there (`jitfix run`), or every
        # call of a local function passes one.
        self.known = known
        # Parameters known to hold one value each (every call of a local function passes one).
        self.single = single
        self._bindings: dict[str, list[ast.AST | None]] | None = None
        self._array_params: set[str] | None = None
        self._declared: set[str] | None = None
        self._operands: set[str] | None = None

    def knowing(self, arrays: frozenset[str]) -> ArrayEvidence:
        """This evidence, with ``arrays`` known to hold arrays too."""
        return ArrayEvidence(self.function, self.outer, self.known | arrays, self.single)

    @property
    def bindings(self) -> dict[str, list[ast.AST | None]]:
        """Every value each local name is bound to (None where not a plain expression),
        collected the first time a name's evidence is needed."""
        if self._bindings is None:
            self._bindings = {}
            self._collect()
        return self._bindings

    @property
    def declared(self) -> set[str]:
        """Names the function declares ``global`` or ``nonlocal``: read before any binding."""
        if self._declared is None:
            self._declared = declared_names(self.function)
        return self._declared

    @property
    def array_params(self) -> set[str]:
        """Parameters the body treats as arrays (``xs.shape``, ``xs.astype(...)``, ``xs - 1``):
        a list or dict has none of these."""
        if self._array_params is None:
            body = list(walk_body(self.function))
            self._array_params = (set(array_attributes_read(body)) | numeric_operands(body)) & self.params
            arguments = self.function.args
            self._array_params.update(arg.arg for arg in (*arguments.posonlyargs, *arguments.args,
                                                          *arguments.kwonlyargs)
                                      if _names_an_array_type(arg.annotation))
            self._array_params.update(_scalar_parameters(arguments))
            self._array_params.update(self.known & self.params)
        return self._array_params

    def _collect(self) -> None:
        for node in walk_body(self.function):  # a nested def's bindings are its own
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._record(target, node.value)
            elif isinstance(node, ast.AugAssign):
                self._record(node.target, ast.BinOp(left=node.target, op=node.op, right=node.value))
            elif isinstance(node, ast.AnnAssign | ast.For | ast.NamedExpr | ast.withitem):
                bound: ast.expr | None = getattr(node, "target", None) or getattr(node, "optional_vars", None)
                value = getattr(node, "value", None) if not isinstance(node, ast.For) else None
                if bound is not None:
                    self._record(bound, value)

    def _record(self, target: ast.AST, value: ast.AST | None) -> None:
        assert self._bindings is not None
        if isinstance(target, ast.Name):
            self._bindings.setdefault(target.id, []).append(value)
        else:  # tuple targets bind their names; `x[i] = v` and `x.a = v` rebind nothing
            for node in ast.walk(target):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    self._bindings.setdefault(node.id, []).append(None)

    def certain(self, expr: ast.AST, seen: frozenset[str] = frozenset(), calls: bool = True) -> bool:
        """Whether ``expr`` is certainly an array, read from the code's syntax. With ``calls``
        false a call's result does not count (a helper may return a tuple): the value
        analysis then has to prove it (``Verdict.array``)."""
        if isinstance(expr, ast.Call):
            return calls
        if isinstance(expr, ast.Compare | ast.BinOp | ast.Constant):
            return True
        if isinstance(expr, ast.UnaryOp):
            return self.certain(expr.operand, seen, calls)
        if isinstance(expr, ast.BoolOp):
            return all(self.certain(value, seen, calls) for value in expr.values)
        if isinstance(expr, ast.IfExp):
            return self.certain(expr.body, seen, calls) and self.certain(expr.orelse, seen, calls)
        if isinstance(expr, ast.Subscript):
            return self.certain(expr.value, seen, calls)
        if isinstance(expr, ast.NamedExpr):
            return self.certain(expr.value, seen, calls)
        if isinstance(expr, ast.Name):
            if expr.id in self.params:
                return expr.id in self.array_params
            if expr.id in self.declared:
                return False  # `global`/`nonlocal`: bound elsewhere too
            if expr.id in seen:
                # `ok = ok and x < 10`: each binding is an array if the ones before it were
                # (a local is never read before its first binding), so assume it while checking.
                return True
            if expr.id not in self.bindings:
                # A free variable: what the enclosing function binds it to (a closure reads
                # whichever of those values it holds when it runs).
                return self.outer is not None and self.outer.certain(expr, calls=calls)
            return all(value is not None and self.certain(value, seen | {expr.id}, calls)
                       for value in self.bindings[expr.id])
        return False

    def one_value(self, expr: ast.AST | None) -> bool:
        """Whether ``expr`` is one array or number, not a container of them (what
        ``jnp.asarray(expr, dtype)`` keeps as it is): certainly an array, a name the
        function uses as an operand of arithmetic or of a comparison (a list or dict there
        raises or repeats; an item of one by a constant key, `t[0]`, likewise), a
        parameter every call passes one value, or a name it closes over that the
        enclosing function knows so."""
        if expr is None:
            return False
        if self.certain(expr):
            return True
        if self._operands is None:
            self._operands = _operand_texts(list(walk_body(self.function)))
        if isinstance(expr, ast.Subscript):  # an item, `t[0]`: used as an operand
            return _operand_text(expr) in self._operands
        if not isinstance(expr, ast.Name):
            return False
        if expr.id in self._operands or expr.id in self.single:
            return True
        free = expr.id not in self.params and expr.id not in self.bindings and expr.id not in self.declared
        return free and self.outer is not None and self.outer.one_value(expr)

    def proven(self, expr: ast.AST, values: ValueAnalysis) -> bool:
        """Whether ``expr`` is certainly an array: from its syntax, or, for what a call
        returns, where the value analysis proves it one (a helper, or `lax.pmean` of a dict,
        may return a dict or a list)."""
        return self.certain(expr, calls=False) or values.verdict(expr).array

    def certain_truth(self, test: ast.AST, values: ValueAnalysis) -> bool:
        """Whether every traced value whose truth ``test`` takes is certainly an array
        (static operands of and/or/not are fine: Python takes their truth itself). A
        call's result counts only where the value analysis proves it one array: the truth
        of a tuple a helper returns is its length."""
        if isinstance(test, ast.BoolOp):
            return all(self.certain_truth(value, values) for value in test.values if values.is_traced(value))
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.certain_truth(test.operand, values)
        found = values.verdict(test)
        return self.certain(test, calls=False) or found.array or found.single

    def raises_on_truth(self, test: ast.AST, values: ValueAnalysis) -> bool:
        """Whether taking ``test``'s truth certainly asks a value that is certainly one traced
        array for a Python bool -- which raises under jit -- even where ``certain_truth`` does
        not hold: Python always takes the truth of the first operand of ``and``/``or``, and of
        the operand of ``not``."""
        if isinstance(test, ast.BoolOp):
            return self.raises_on_truth(test.values[0], values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.raises_on_truth(test.operand, values)
        return values.is_traced(test) and self.proven(test, values)


# Constructors whose size a literal argument gives: jnp.zeros((2, 3)) has 6 elements.
SHAPED_CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "full"})
REDUCTIONS = frozenset({"sum", "any", "all", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin"})


def _literal_size(shape: ast.AST) -> int | None:
    if isinstance(shape, ast.Constant) and isinstance(shape.value, int) and not isinstance(shape.value, bool):
        return shape.value
    if isinstance(shape, ast.Tuple | ast.List):
        size = 1
        for element in shape.elts:
            dimension = _literal_size(element)
            if dimension is None:
                return None
            size *= dimension
        return size
    return None


class SizeEvidence:
    """How many elements an array certainly has, where the code spells it out
    (``jnp.zeros(3)``, ``jnp.array([a, b])``); None when unknown."""

    def __init__(self, arrays: ArrayEvidence, imports: ImportTable):
        self.arrays = arrays
        self.imports = imports

    def size(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> int | None:
        if isinstance(expr, ast.Call):
            return self._call_size(expr)
        if isinstance(expr, ast.BinOp):
            return _broadcast(self.size(expr.left, seen), self.size(expr.right, seen))
        if isinstance(expr, ast.Compare):
            sizes = [self.size(part, seen) for part in (expr.left, *expr.comparators)]
            result = sizes[0]
            for size in sizes[1:]:
                result = _broadcast(result, size)
            return result
        if isinstance(expr, ast.UnaryOp):
            return self.size(expr.operand, seen)
        if isinstance(expr, ast.Constant):
            return 1
        if isinstance(expr, ast.Name) and expr.id not in seen and expr.id not in self.arrays.params:
            values = self.arrays.bindings.get(expr.id, [])
            found = {self.size(value, seen | {expr.id}) if value is not None else None for value in values}
            return found.pop() if len(found) == 1 else None
        return None

    def _call_size(self, call: ast.Call) -> int | None:
        name = self.imports.resolve(call.func) or ""
        member = jnp_member(name)
        function = member.rpartition(".")[2] if member is not None else None
        if isinstance(call.func, ast.Attribute) and call.func.attr in REDUCTIONS and function is None:
            return 1 if not call.args and not call.keywords else None  # x.sum(): one element
        if function in REDUCTIONS:
            return 1 if len(call.args) == 1 and not call.keywords else None
        if function in SHAPED_CONSTRUCTORS and call.args:
            return _literal_size(call.args[0])
        if function == "arange" and len(call.args) == 1:
            return _literal_size(call.args[0])
        if function in {"array", "asarray"} and call.args and isinstance(call.args[0], ast.List | ast.Tuple):
            if not any(isinstance(element, ast.List | ast.Tuple | ast.Starred) for element in call.args[0].elts):
                return len(call.args[0].elts)
        return None


    def least_rank(self, expr: ast.AST, assumed: Mapping[str, int] | None = None) -> int:
        """How many dimensions ``expr`` has at least, where the code spells them out (0 when
        nothing says more): `jnp.array([z])`, a draw of `shape=(1,)`, `x[i:i + 1]` and what
        elementwise arithmetic makes of them. A test of one element and one dimension is no
        scalar: Python takes its truth, `lax.cond` and `lax.while_loop` want a scalar."""
        assumed = assumed or {}
        if isinstance(expr, ast.BinOp):
            return max(self.least_rank(expr.left, assumed), self.least_rank(expr.right, assumed))
        if isinstance(expr, ast.Compare):
            return max(self.least_rank(part, assumed) for part in (expr.left, *expr.comparators))
        if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
            return self.least_rank(expr.operand, assumed)
        if isinstance(expr, ast.Subscript):
            return self._subscript_rank(expr, assumed)
        if isinstance(expr, ast.Call):
            return self._call_rank(expr, assumed)
        if isinstance(expr, ast.Name):
            return self._name_rank(expr.id, assumed)
        return 0

    def _subscript_rank(self, expr: ast.Subscript, assumed: Mapping[str, int]) -> int:
        parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        if any(not isinstance(part, ast.Slice) and not is_none(part) for part in parts):
            return 0  # an index drops a dimension, an array index may add several
        slices = sum(isinstance(part, ast.Slice) for part in parts)
        return max(self.least_rank(expr.value, assumed), slices) + len(parts) - slices

    def _call_rank(self, call: ast.Call, assumed: Mapping[str, int]) -> int:
        name = self.imports.resolve(call.func) or ""
        function = name.rpartition(".")[2] if jnp_member(name) is not None else None
        if function in {"array", "asarray"} and call.args:
            depth, value = 0, call.args[0]
            while isinstance(value, ast.List | ast.Tuple) and value.elts:
                depth, value = depth + 1, value.elts[0]
            return depth
        if function in SHAPED_CONSTRUCTORS and call.args:
            shape = call.args[0]
            return len(shape.elts) if isinstance(shape, ast.Tuple | ast.List) else 1 \
                if _literal_size(shape) is not None else 0
        if function in {"arange", "linspace"}:
            return 1
        if name.startswith("jax.random."):
            shapes = [value for parameter, value in shape_arguments(call, name) if parameter == "shape"]
            return len(shapes[0].elts) if shapes and isinstance(shapes[0], ast.Tuple | ast.List) else 0
        if is_elementwise(name) or function in {"where", "clip"}:
            return max((self.least_rank(argument, assumed) for argument in call.args), default=0)
        if isinstance(call.func, ast.Attribute) and call.func.attr in {"astype", "conj", "clip", "round"} \
                and function is None:
            return self.least_rank(call.func.value, assumed)
        return 0

    def _name_rank(self, name: str, assumed: Mapping[str, int]) -> int:
        """The least rank over every binding of ``name``, found as a fixed point: a loop's
        `z = z * z + c` keeps the rank `z` started with."""
        if name in assumed:
            return assumed[name]
        if name in self.arrays.params:
            return 0
        values = self.arrays.bindings.get(name, [])
        if not values or any(value is None for value in values):
            return 0
        guess = _NO_BOUND
        for _ in range(4):
            found = min(self.least_rank(value, {**assumed, name: guess}) for value in values
                        if value is not None)
            if found == guess:
                return found
            guess = found
        return 0


# What a name is assumed to hold while its own bindings are read: no bound yet.
_NO_BOUND = 1 << 16


def is_none(node: ast.AST) -> bool:
    """The literal ``None``."""
    return isinstance(node, ast.Constant) and node.value is None


def _broadcast(first: int | None, second: int | None) -> int | None:
    if first is None or second is None:
        return None if (first or 0) <= 1 and (second or 0) <= 1 else max(first or 0, second or 0)
    return max(first, second)
