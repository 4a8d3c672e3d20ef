"""What the planner decides for each traced ``if`` and loop: plain data, read by the
renderers and by the rules that report them."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import Enum

from jitfix.control_flow.result_types import CarryCast, Layout


class IfForm(Enum):
    ASSIGN = "assign"  # the branches bind names: `a, b = lax.cond(...)`
    RETURN = "return"  # a branch returns: `return lax.cond(...)`, the rest of the function joins the branches


class LoopKind(Enum):
    FORI = "fori_loop"
    WHILE = "while_loop"
    SCAN = "scan"


class JumpKind(Enum):
    BREAK = "break"
    CONTINUE = "continue"


@dataclass(eq=False)
class Branch:
    name: str
    statements: list[ast.stmt]  # the branch's own statements, then any absorbed rest
    with_rest: bool
    # The outputs (or "return") the branch casts to their common type.
    casts: set[str] = field(default_factory=set)


@dataclass(eq=False)
class IfPlan:
    node: ast.If
    form: IfForm
    # The true branch, then the false one; a switch's: one per case, then the default.
    branches: list[Branch]
    operands: list[str]
    outputs: list[str]
    # A switch (`lax.switch`): the ifs of an elif chain whose tests each compare one selector
    # with a number (`kind == 0`, `kind == 1`), one per case; empty for a `lax.cond`.
    cases: list[ast.If] = field(default_factory=list)
    # output (or "return", or a dict or tuple output's item, `st["p"]`, `t[1]`) -> (dtype variable name,
    # source of jnp.result_type arguments)
    dtypes: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    # A dict, tuple or list output whose items a branch may give another type: the source of
    # each key cast, and how the output is made anew.
    items: dict[str, list[str]] = field(default_factory=dict)
    layouts: dict[str, Layout] = field(default_factory=dict)
    # Helpers defined before the if that read what a branch changes: defined again in each branch.
    copies: list[ast.stmt] = field(default_factory=list)
    # return: each `return` of the branches (in them or their inner ifs) that is cast, with
    # the dtype variable of each item cast (None: the whole value), keyed by the return's id.
    return_casts: dict[int, dict[int | str | None, str]] = field(default_factory=dict)
    # A cast return of a helper's call (a continuation's tuple): the name its result is bound
    # to first, to cast its items (`result = _after_if(c)`, `return result[0], ...`), and
    # how many items it has.
    return_results: dict[int, tuple[str, int]] = field(default_factory=dict)
    # The tests (ids of their nodes) with a dimension or more, `jnp.array([z])` > 2: squeezed
    # to the scalar `lax.cond` wants (Python took the truth of their one element).
    vector_tests: frozenset[int] = frozenset()

    @property
    def true(self) -> Branch:
        return self.branches[0]

    @property
    def false(self) -> Branch:
        return self.branches[-1]

    @property
    def absorbs_rest(self) -> bool:
        return self.form is IfForm.RETURN

    @property
    def needs_numpy(self) -> bool:
        # (a switch's index is `jnp.select` of the cases' tests; a test of a dimension is squeezed)
        return bool(self.dtypes or self.cases or self.vector_tests)


@dataclass(eq=False)
class Guard:
    """``if c: break`` / ``if c: continue`` at the top of a loop body's statements."""

    node: ast.If
    kind: JumpKind
    boolean: bool = True  # the test is a boolean already (else the flag compares it with zero)


@dataclass(eq=False)
class LoopPlan:
    node: ast.For | ast.While
    kind: LoopKind
    body_name: str
    carry: list[str]
    statements: list[ast.stmt]
    # fori: bounds as written, and the step when it is not 1
    lower: ast.expr | None = None
    upper: ast.expr | None = None
    step: int = 1
    target: str | None = None
    truncate_upper: bool = False  # range(int(n)): the bound is cast to an integer in jnp
    target_bound: bool = False  # the loop variable has a value before the loop
    # while: the name of the condition function, and whether the test is already a boolean
    cond_name: str | None = None
    boolean_test: bool = True
    vector_test: bool = False  # the test has a dimension or more (`jnp.abs(z) < 2`, `z = jnp.array([c])`)
    # break/continue: the guards, and the carried flag a break sets
    guards: list[Guard] = field(default_factory=list)
    flag: str | None = None
    synthetic_ifs: list[ast.If] = field(default_factory=list)  # the ifs the guards became
    # What an unpacking writes for a slot the function does not read: `_`, unless the loop
    # itself names `_` (`for _ in range(n)`), which the placeholder must not overwrite.
    placeholder: str = "_"
    # Helpers defined before the loop that read what the body changes: defined again in the body.
    copies: list[ast.stmt] = field(default_factory=list)
    # A range loop that can break counts its passes in a name of its own when the body binds
    # the loop variable itself (`for i in ...: ... for i in range(2)`): Python's next pass
    # takes `i` from the range whatever the body did with it.
    counter: str | None = None
    # Carried names with no value before the loop, each started as a carry of its type (the
    # loop binds it to that carry): read after the loop only once a pass bound it -- eager
    # Python raises otherwise --, so the start is never seen, only its type.
    starts: dict[str, str] = field(default_factory=dict)
    # Carries whose type a pass may change: name -> (the name of its dtype, how it is cast).
    casts: dict[str, tuple[str, CarryCast]] = field(default_factory=dict)
    # Items of a dict or tuple carry each pass makes anew whose type a pass may change: the
    # carry's name -> the source of each such key (`"p"`, `1`) -> its dtype's name and cast.
    item_casts: dict[str, dict[str, tuple[str, CarryCast]]] = field(default_factory=dict)
    # How each dict, tuple or list carry whose items are cast is made anew.
    layouts: dict[str, Layout] = field(default_factory=dict)

    @property
    def casts_carries(self) -> bool:
        return bool(self.casts or self.item_casts)

    @property
    def needs_numpy(self) -> bool:
        return self.truncate_upper or self.flag is not None or self.casts_carries or self.vector_test

    @property
    def absorbs_rest(self) -> bool:
        return False

    @property
    def dropped(self) -> list[ast.stmt]:
        """Statements before the loop that its rewrite makes dead."""
        return []


@dataclass(eq=False)
class Output:
    """A list a scanned loop appends to, and the name of one step's value."""

    name: str
    item: str
    append: ast.Expr
    # The appended value is a name the body does not change afterwards: returned as it is,
    # and the append statement simply goes.
    direct: bool = False


@dataclass(eq=False)
class ScanPlan(LoopPlan):
    sources: list[ast.expr] = field(default_factory=list)  # what is scanned (xs, or xs and ys)
    targets: list[str] = field(default_factory=list)  # one name per scanned array
    enumerated: bool = False  # enumerate(xs): the first target counts rows
    outputs: list[Output] = field(default_factory=list)
    # `ys = []` statements the scan's outputs replace (dropped with the loop)
    initializers: list[ast.stmt] = field(default_factory=list)

    @property
    def needs_numpy(self) -> bool:
        return self.enumerated

    @property
    def dropped(self) -> list[ast.stmt]:
        return self.initializers


Plan = IfPlan | LoopPlan


class ProblemKind(Enum):
    """Problems a rule explains further (the reason alone says what blocks the rewrite)."""

    RETURN_BEFORE_MORE_CODE = "a branch returns, but more code follows the `if` in a loop or block"
    JUMP_OUT_OF_LOOP = "a `break` or `continue` in a branch leaves a loop around the `if`"


class Lowering(Enum):
    """A plain-Python restructuring that turns a statement the rewrite declines into one it
    takes (offered only when the rewrite then succeeds on the restructured text)."""

    JUMPS = "jumps"  # a loop's break/continue nested in an `if`, or its `else:`, as flags (jump_lowering)
    DICT_UPDATES = "dict updates"  # `d[k] = v` on a dict of the function as `d = {**d, k: v}` (dict_updates)
    CONTINUATION = "continuation"  # the code after an `if` that returns on some paths, as a function (continuation)
    RETURNS = "returns"  # a loop's `return v` as `result = v; break`, the function returning it after (loop_returns)
    BY_INDEX = "by index"  # a loop over an array's rows as a loop over their indices (`for i in range(len(x))`)
    HOISTED_APPENDS = "hoisted appends"  # the append ending every branch of an if moved after it (hoisted_appends)


@dataclass
class Problem:
    node: ast.AST  # what blocks the rewrite
    statement: ast.If | ast.For | ast.While  # the statement left as it is
    reason: str
    scan: bool = False  # a loop that could not become a lax.scan (JF203's, not JF201's)
    lowering: Lowering | None = None  # what restructuring first would let the rewrite take it
    kind: ProblemKind | None = None  # where a rule says more about some kinds of problem

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", self.statement.lineno)


@dataclass(frozen=True)
class PlanningOptions:
    """The settings and facts about the function that choose between loop rewrites."""

    loop_strategy: str = "lax"  # see loops.LoopPlanner.chose_static
    scan_static_loops: bool = False
    differentiated: bool = False  # reverse-mode: lax loops with traced trip counts cannot be
    staticable: frozenset[str] = frozenset()  # parameters a jit site of the function can make static
    handed: frozenset[str] = frozenset()  # parameters a container of the function's own is handed in
