"""What the analysis knows of one traced function (``TracedFunction``) and of all those of a
module (``TracedFunctions``); ``analysis/traced.py`` finds them."""

from __future__ import annotations

import ast
import functools
import operator
from collections import ChainMap
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from jitfix.analysis.blocks import FunctionNode, assigned_names, nodes_seeing, statement_holding, walk_body
from jitfix.analysis.flow import FlowAnalysis, State
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.observations import Observation
from jitfix.analysis.scopes import Change, Scopes
from jitfix.analysis.values import (
    MODULE_CONSTANT,
    STATIC_KIND,
    TRACED_KIND,
    UNKNOWN_KIND,
    Program,
    ValueAnalysis,
    Verdict,
    carried,
    parameter_defaults,
    parameter_names,
    pytree_form,
)

if TYPE_CHECKING:
    from jitfix.analysis.summaries import ModuleProgram


class EntryKind(Enum):
    """How the first way into tracing reaches a function (``TracedFunction.how`` says it in words)."""

    TRANSFORM = "decorated or wrapped by a transform"
    LAX_BODY = "the body of a lax primitive"
    CALLED = "called from a traced def"
    CALLED_FROM_LAMBDA = "called from a lambda a transform traces"
    OBSERVED = "seen traced by a run, or called with tracers from another module of the run"


@functools.lru_cache(maxsize=4)
def module_constants(names: frozenset[str]) -> State:
    """The verdicts of a module's constants, made once for the module's functions."""
    return dict.fromkeys(names, MODULE_CONSTANT)


@dataclass
class BodyOperands:
    """A lax body's parameters as the primitive passes them."""

    # The carry in its initial value's pytree structure, every leaf one array (None: bodies of
    # calls that disagree). Used only while no other call reaches the function.
    shapes: dict[str, Verdict | None] = field(default_factory=dict)
    # The same, from the values at the lax call of the function around the body: for each
    # parameter, the calls that pass it and their argument (None: the loop's index).
    calls: dict[str, list[tuple[ast.Call, ast.AST | None]]] = field(default_factory=dict)
    reached_otherwise: bool = False  # also called where the primitive does not pass the values


@dataclass
class CallsFollowed:
    """The calls the propagation followed into a function, by id, each with the parameters it
    gives one value (an array, or a Python number or bool); and whether it is also entered
    where the arguments are not seen (a jit, a transform, a run, a lax primitive). A local def
    entered only by calls its function holds, every one seen, takes one value in a parameter
    each call gives one: its truth is then jnp's (`while not ok`)."""

    singles: dict[int, frozenset[str]] = field(default_factory=dict)
    changes: dict[int, int] = field(default_factory=dict)  # how often each call's singles changed
    unseen: bool = False
    # The scopes (a def, or the module) whose code makes those calls, by id: a made call too
    # (the `__check_init__` an equinox class's construction runs), which no node of it holds.
    callers: dict[int, ast.AST] = field(default_factory=dict)
    # The pytree class of the module each call gives a parameter, where its value says one.
    classes: dict[int, dict[str, str]] = field(default_factory=dict)
    class_changes: dict[int, int] = field(default_factory=dict)  # how often each call's classes changed
    # What each call gives a parameter that is a plain object made in traced code with tracers
    # in its attributes (its ``self`` too, for a method called on one): the attributes' verdicts.
    fields: dict[int, dict[str, Verdict]] = field(default_factory=dict)
    field_changes: dict[int, int] = field(default_factory=dict)

    def agreed_fields(self) -> dict[str, Verdict]:
        """The parameters every call followed gives an object holding the same tracers, where
        no way in is unseen."""
        if self.unseen or not self.fields:
            return {}
        given = list(self.fields.values())
        return {name: held for name, held in given[0].items() if all(other.get(name) == held for other in given)}

    def agreed_classes(self) -> dict[str, str]:
        """The parameters every call followed gives an instance of one class, where no way in
        is unseen (a jit, a transform, a lax primitive: what it passes is not read here)."""
        if self.unseen or not self.classes:
            return {}
        given = list(self.classes.values())
        return {name: klass for name, klass in given[0].items() if all(other.get(name) == klass for other in given)}


@dataclass
class RunEvidence:
    """What `jitfix run` saw of a function."""

    arrays: frozenset[str] = frozenset()  # parameters that held tracers: each is one array
    # Where it saw a failure: at each line, the abstract value each traced name held
    # (`{"r": "float32[9,9]"}`) and the host values beside them (`{"fill": "float",
    # "table": "numpy.ndarray"}`), the proof of a shape, a dtype or a kind there.
    types: dict[int, dict[str, str]] = field(default_factory=dict)
    # Parameters to make static at the jit: a value that failed under jit depends only on
    # them, and each call gave them a Python value.
    static: dict[str, Observation] = field(default_factory=dict)
    # The error raised at each line that failed (`{31: "TracerArrayConversionError"}`): proof
    # that a value there was traced, where the analysis could not tell (an attribute of an
    # object made in the trace, a property).
    failures: dict[int, str] = field(default_factory=dict)
    # What held the tracer whose failure was seen at each line, where the run found it among the
    # frame's names (`{59: "state.failed_linesearch"}`): of several candidates, the one.
    failing: dict[int, str] = field(default_factory=dict)
    # Lines where jnp made, from constants alone, part of a value that failed under jit: a
    # trace-time constant there (the observation says where it failed, and the dtypes made).
    staged: dict[int, Observation] = field(default_factory=dict)
    # Arrays made before tracing that such a value read, by what held them where it failed
    # (`self.split_idxs`, a global): jit took each for a constant of the trace.
    held_constants: dict[str, Observation] = field(default_factory=dict)

    def traced_names(self) -> dict[int, frozenset[str]]:
        """The names seen holding a tracer at each line (not the host values beside them)."""
        return {line: frozenset(name for name, kind in kinds.items() if _is_tracer_type(kind))
                for line, kinds in self.types.items()}

    def failed_with(self, node: ast.AST, error: str) -> bool:
        """Whether the run saw ``error`` raised on one of ``node``'s lines."""
        first: int = getattr(node, "lineno", 0)
        last: int = getattr(node, "end_lineno", None) or first
        return any(first <= line <= last and seen == error for line, seen in self.failures.items())


def _is_tracer_type(kind: str) -> bool:
    """``float32[3]``, ``bool[]`` (an abstract value); not ``int``/``float``/``numpy.ndarray``
    (host values recorded beside the tracers)."""
    return kind.endswith("]") and "[" in kind and not kind.startswith("numpy")


@dataclass
class TracedFunction:
    node: FunctionNode
    qualname: str
    how: str
    entry: EntryKind
    static_params: frozenset[str] = frozenset()
    traced_params: frozenset[str] = frozenset()
    # How each traced parameter came to be traced, where that differs from ``how`` (a second
    # call site, from another module, that passes it a tracer the first did not).
    traced_by: dict[str, str] = field(default_factory=dict)
    # Passed to lax.scan/fori_loop/while_loop/...: its body may run many times per call.
    is_lax_body: bool = False
    # What the body sees from outside: module constants, and an enclosing traced function's names.
    module_static: frozenset[str] = frozenset()
    enclosing: TracedFunction | None = None
    # Defined at module level (or in a class there): no closure around it that its code calls.
    module_level: bool = False
    # Where jit is applied to this function in the module: a decorator expression or a
    # `jax.jit(f, ...)` call, where static arguments can be added.
    jit_sites: list[ast.AST] = field(default_factory=list)
    # `jax.jit(self.method)`: jitted as a bound method, so `self` is a Python object fixed
    # when the method is traced.
    bound_jit_sites: list[ast.Call] = field(default_factory=list)
    # Reverse-mode differentiated (jax.grad, or called from a differentiated function).
    differentiated: bool = False
    # Staged into a jaxpr (jit, pmap, a lax body, or called from one): every JAX operation
    # in it is a tracer. Under vmap alone, only what a mapped argument feeds is.
    staged: bool = False
    # Why a parameter that is neither traced nor static is not known to be traced.
    unknown_why: dict[str, str] = field(default_factory=dict)
    imports: ImportTable | None = None
    program: Program | None = None
    # Pytree class of a parameter, where its annotation (or `self`) names one.
    param_classes: dict[str, str] = field(default_factory=dict)
    # A plain object every call gives a parameter, with what its attributes hold (`CallsFollowed.fields`).
    param_fields: dict[str, Verdict] = field(default_factory=dict)
    operands: BodyOperands = field(default_factory=lambda: BodyOperands())  # of a lax body
    calls: CallsFollowed = field(default_factory=lambda: CallsFollowed())
    definer: ast.FunctionDef | ast.AsyncFunctionDef | None = None  # the function it is defined in
    seen: RunEvidence = field(default_factory=lambda: RunEvidence())  # by `jitfix run`
    # Parameters a call of the module certainly gives an array (`f(jnp.ones(3))`): not a dict,
    # whatever other modules pass (that call of a traced function holds a tracer there).
    given_arrays: frozenset[str] = frozenset()
    # Parameters defaulting to None that some call leaves out and every other gives an array or
    # a number (`scale=None`, `attention(q, k, v, scale=jnp.float32(0.25))`): None, or a tracer.
    optional_arrays: frozenset[str] = frozenset()
    # Known traced only because traced code of another module of the run calls it (not by a
    # jit, a lax body or a call of this module): what it reads at trace time is its callers'
    # concern, and a switch read while tracing is often the point.
    from_elsewhere: bool = False
    # The parameters every way in leaves at their defaults (None: none seen yet). Only a call
    # shows that (of this module's traced code, or another module's); a jit, a lax body or
    # a run may pass anything.
    kept_defaults: frozenset[str] | None = None
    _flow: FlowAnalysis | None = None
    _enclosing_flow: FlowAnalysis | None = None  # the enclosing function's flow ``_flow`` read

    def flow(self, imports: ImportTable | None = None) -> FlowAnalysis:
        """The function's flow analysis, kept until its parameters' kinds change (or those
        of the function around it, whose names it reads)."""
        imports = imports or self.imports
        assert imports is not None
        enclosing = self.enclosing.flow(imports) if self.enclosing is not None else None
        if self._flow is None or self._enclosing_flow is not enclosing:
            constants = module_constants(self.module_static)
            outer = ChainMap(enclosing.merged_kinds(), constants) if enclosing is not None else constants
            self._flow = FlowAnalysis(self.node, imports, self.param_verdicts(), outer, staged=self.staged,
                                      program=self.program, known_arrays=self.known_arrays,
                                      seen_traced=self.seen.traced_names(), seen_failures=self.seen.failures,
                                      seen_failing=self.seen.failing,
                                      module_level=self.module_level)
            self._enclosing_flow = enclosing
        return self._flow

    @property
    def known_arrays(self) -> frozenset[str]:
        """Traced parameters that hold one array, as a run or a call of the module showed."""
        return self.seen.arrays | (self.given_arrays & self.traced_params)

    @property
    def handed_containers(self) -> frozenset[str]:
        """Traced parameters each call of a jitted function gets a container of its own in:
        jit rebuilds a pytree argument from its leaves, so a dict it is given is not the
        caller's (eagerly it is: writing into it changes the caller's too)."""
        return self.traced_params if self.jit_sites else frozenset()

    def entered_by(self, kept: frozenset[str]) -> None:
        """One more way in, leaving the parameters ``kept`` at their defaults."""
        self.kept_defaults = kept if self.kept_defaults is None else self.kept_defaults & kept

    def unentered_lines(self) -> list[tuple[int, int]]:
        """The lines of the branches tracing never enters: those a test decides from
        parameters every way in leaves at their literal defaults (``if not apply_softmax:``,
        ``apply_softmax=True``, which no traced call passes). Nothing there runs under the
        transform, so nothing there is judged."""
        known = self._default_values()
        spans: list[tuple[int, int]] = []
        for node in walk_body(self.node) if known else ():
            if isinstance(node, ast.If):
                taken = decided_test(node.test, known)
                skipped = [] if taken is None else node.orelse if taken else node.body
                spans += [(statement.lineno, statement.end_lineno or statement.lineno) for statement in skipped]
        return spans

    def _default_values(self) -> dict[str, object]:
        """The parameters every way in leaves at a literal default, never bound again."""
        if not self.kept_defaults or isinstance(self.node, ast.Lambda):
            return {}
        rebound = assigned_names(self.node.body) | {name for node in ast.walk(self.node)
                                                     if isinstance(node, ast.Nonlocal) for name in node.names}
        values: dict[str, object] = {}
        for name, default in parameter_defaults(self.node).items():
            if name in self.kept_defaults and name not in rebound:
                try:
                    values[name] = ast.literal_eval(default)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
        return values

    def param_verdicts(self) -> State:
        verdicts: State = {}
        for name in parameter_names(self.node):
            klass = self.param_classes.get(name)
            if name in self.traced_params:
                shape = None if self.operands.reached_otherwise else self._operand_shape(name) or self.operands.shapes.get(name)
                why = f"`{name}` is a traced argument of `{self.qualname}` ({self.traced_by.get(name, self.how)})"
                if shape is not None:
                    verdicts[name] = Verdict(TRACED_KIND, why, elements=shape.elements, klass=klass or shape.klass,
                                             array=shape.array)
                else:
                    verdicts[name] = Verdict(TRACED_KIND, why, klass=klass, single=self._single_by_calls(name))
            elif name in self.static_params:
                verdicts[name] = Verdict(STATIC_KIND, f"`{name}` is a static argument of `{self.qualname}`")
            elif name in self.param_fields:
                verdicts[name] = self.param_fields[name]
            else:
                why = self.unknown_why.get(name, "no call is seen to pass it a tracer")
                verdicts[name] = Verdict(UNKNOWN_KIND, f"`{name}` of `{self.qualname}`: {why}", klass=klass)
        return verdicts

    def _single_by_calls(self, name: str) -> bool:
        """Whether every call of this local def (its name read nowhere else in the function
        around it) passes the parameter one value, each call seen (``call_singles``)."""
        if self.calls.unseen or self.is_lax_body or self.definer is None or not self.calls.singles \
                or not all(name in singles for singles in self.calls.singles.values()):
            return False
        own = self.node.name if isinstance(self.node, ast.FunctionDef | ast.AsyncFunctionDef) else ""
        seen = [node for node in nodes_seeing(self.definer.body, own)]  # (not where `own` is another def)
        calls = {id(node.func) for node in seen if isinstance(node, ast.Call)}
        reads = [node for node in seen if isinstance(node, ast.Name) and node.id == own and isinstance(node.ctx, ast.Load)]
        return all(id(read) in calls for read in reads) and len(reads) == len(self.calls.singles)

    def _operand_shape(self, name: str) -> Verdict | None:
        """What the lax calls of the enclosing function pass the parameter, from the values
        there (``lax.cond(p, f, g, ok)`` with ``ok = x > y``: one array), when they agree."""
        calls = self.operands.calls.get(name)
        enclosing = self.enclosing
        if not calls or enclosing is None or enclosing.imports is None:
            return None
        flow = enclosing.flow()
        why = f"`{name}` is what {self.how} passes it"
        shapes = [Verdict(TRACED_KIND, why, array=True) if operand is None
                  else carried(operand, flow.at(statement).verdict, why)
                  for call, operand in calls for statement in [statement_holding(enclosing.node, call)]
                  if statement is not None]
        if len(shapes) != len(calls) or len({pytree_form(shape) for shape in shapes}) != 1:
            return None
        return shapes[0]

    def values(self, imports: ImportTable | None = None) -> ValueAnalysis:
        """Flow-insensitive classification; ``flow().at(statement)`` is per statement."""
        return self.flow(imports).summary()

    def forget_analysis(self) -> None:
        self._flow = None


# The name of the function a traced lambda's body is checked as (``_add_lambda_bodies``).
LAMBDA_NAME = "<lambda>"


def lambda_as_function(node: ast.Lambda) -> ast.FunctionDef:
    """``lambda params: body`` as ``def <lambda>(params): return body``, sharing its nodes
    and placed where it is."""
    returned = ast.copy_location(ast.Return(value=node.body), node.body)
    function = ast.FunctionDef(name=LAMBDA_NAME, args=node.args, body=[returned], decorator_list=[], returns=None,
                               type_comment=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        setattr(function, "type_params", [])
    return ast.copy_location(function, node)


def is_lambda_body(function: ast.AST) -> bool:
    return isinstance(function, ast.FunctionDef) and function.name == LAMBDA_NAME


def decided_test(test: ast.expr, known: dict[str, object]) -> bool | None:
    """Whether ``test`` holds, when the ``known`` names' values and literals decide it
    (``not flag``, ``mode == "mean" and axis is None``); None when they do not."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = decided_test(test.operand, known)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [decided_test(value, known) for value in test.values]
        stop = isinstance(test.op, ast.Or)  # the value that decides `or` (True) or `and` (False)
        return stop if stop in parts else None if None in parts else not stop
    found, value = _known_value(test, known)
    if found:
        return bool(value)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        (left_found, left), (right_found, right) = _known_value(test.left, known), _known_value(test.comparators[0], known)
        compare = _COMPARISONS.get(type(test.ops[0]))
        if isinstance(test.ops[0], ast.Is | ast.IsNot) and not any(value is None or isinstance(value, bool)
                                                                   for value in (left, right)):
            return None  # identity of other values (`mode is "sum"`) is the interpreter's choice
        if left_found and right_found and compare is not None:
            try:
                return bool(compare(left, right))
            except Exception:  # noqa: BLE001 - `1 < "a"`: not decided
                return None
    return None


def _known_value(node: ast.expr, known: dict[str, object]) -> tuple[bool, object]:
    if isinstance(node, ast.Name) and node.id in known:
        return True, known[node.id]
    if isinstance(node, ast.Constant | ast.UnaryOp | ast.Tuple):
        try:
            return True, ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    return False, None


_COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}


class TracedFunctions(dict[FunctionNode, TracedFunction]):
    """Every traced function of a module, keyed by its def node, with what the walk that
    found them learnt about the module."""

    def __init__(self, traced: dict[FunctionNode, TracedFunction], scopes: Scopes, traces_lambdas: bool,
                 program: ModuleProgram | None = None, lambda_scopes: dict[ast.AST, ast.AST] | None = None):
        super().__init__(traced)
        self.program = program  # the module as the analysis reads it (None: nothing is traced)
        # Where the module's code rebinds or mutates names (see ``Scopes.changes_of``).
        self.changes_of: Callable[[Iterable[str]], list[Change]] = scopes.changes_of
        self.calls_to: Callable[[str], list[tuple[ast.Call, ast.AST]]] = scopes.calls_to  # (call, its scope)
        self.functions: list[FunctionNode] = scopes.functions  # every def of the module
        self.classes: list[ast.ClassDef] = scopes.class_list  # every class of the module
        # The def or class each def and class is in (the scope a staged lambda is in, for the
        # function its body is checked as).
        self.parents: Mapping[ast.AST, ast.AST] = ChainMap(lambda_scopes, scopes.parent) if lambda_scopes \
            else scopes.parent
        self.module_bindings: Callable[[], dict[str, int]] = scopes.module_bindings  # name -> statements binding it
        self.traces_lambdas = traces_lambdas  # a transform traces a lambda (`jax.jit(lambda x: ...)`)
        self._unentered: dict[str, list[tuple[int, int]]] | None = None  # by qualified name, once asked

    def unentered(self, function: str | None, line: int) -> bool:
        """Whether ``line`` of the traced function named ``function`` (or of a def nested in
        one) lies in a branch tracing never enters (``TracedFunction.unentered_lines``)."""
        if function is None:
            return False
        if self._unentered is None:
            self._unentered = {entry.qualname: spans for entry in self.values() if (spans := entry.unentered_lines())}
        parts = function.split(".")
        enclosing = (".".join(parts[:count]) for count in range(1, len(parts) + 1))  # `f`, `f.g`, ...
        return any(first <= line <= last for qualname in enclosing for first, last in self._unentered.get(qualname, ()))


