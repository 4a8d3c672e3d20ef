"""Decide how each ``if`` on a traced value becomes a ``lax.cond``, or why it cannot.

Two forms:

* **assign**: the branches bind names. Each branch becomes a function that returns the
  names bound in either branch and read afterwards (the *outputs*); the names a branch
  needs from before the ``if`` -- read before it binds them, or kept unchanged because the
  branch does not bind them -- are passed in (the *operands*). A name bound in one branch
  only, with no value before the ``if``, cannot be returned by the other branch: reported.
* **return**: a branch returns. When the ``if`` is the function's last word (every later
  statement is part of what it decides), the rest of the function joins the branch that
  falls through, each branch returns, and the function returns the ``lax.cond``.

Anything a branch function cannot hold (``yield``, ``global``, ``raise``, writes into outer
objects) is reported with the reason, and the code is left as it is.
"""

from __future__ import annotations

import ast
import contextvars
from dataclasses import dataclass, field
from itertools import chain
from typing import Callable

from jitfix.analysis.blocks import (
    always_leaves,
    assigned_names,
    contains_return,
    definitely_assigned,
    framework_obstacles,
    loaded_names,
    obstacles,
    target_names,
    upward_exposed,
)
from jitfix.analysis.flow import FlowAnalysis
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import ArrayEvidence, SizeEvidence
from jitfix.rules.loop_plans import LoopPlan, LoopPlanning
from jitfix.rules.naming import branch_name, unique_name
from jitfix.rules.result_types import arms_to_cast
from jitfix.rules.scan_plans import ScanPlanning

# Statements of the rest of a function that may be copied into both branches.
MAX_DUPLICATED_REST = 2


@dataclass(eq=False)
class Branch:
    name: str
    statements: list[ast.stmt]  # the branch's own statements, then any absorbed rest
    with_rest: bool
    # (output or "return") -> the expression the branch ends with, to cast.
    casts: dict[str, ast.expr] = field(default_factory=dict)


@dataclass(eq=False)
class IfPlan:
    node: ast.If
    form: str  # "assign" or "return"
    true: Branch
    false: Branch
    operands: list[str]
    outputs: list[str]
    # output (or "return") -> (dtype variable name, source of jnp.result_type arguments)
    dtypes: dict[str, tuple[str, list[str]]] = field(default_factory=dict)

    @property
    def absorbs_rest(self) -> bool:
        return self.form == "return"

    @property
    def needs_numpy(self) -> bool:
        return bool(self.dtypes)


@dataclass(frozen=True)
class PlanningOptions:
    """The settings and facts about the function that choose between loop rewrites."""

    loop_strategy: str = "lax"  # see loop_plans.LoopPlanning._chose_static
    scan_static_loops: bool = False
    differentiated: bool = False  # reverse-mode: lax loops with traced trip counts cannot be
    staticable: frozenset[str] = frozenset()  # parameters a jit site of the function can make static


# Set while the text a restructured loop would have is analysed to check it (see
# rules/jump_lowering.py): no restructuring is proposed inside that, and a traced test the
# planner cannot prove one array is a problem (the check must not count on it).
checking_lowered: contextvars.ContextVar[bool] = contextvars.ContextVar("checking_lowered", default=False)


@dataclass
class Problem:
    node: ast.AST  # what blocks the rewrite
    statement: ast.If | ast.For | ast.While  # the statement left as it is
    reason: str
    kind: str = ""  # "scan" for loops that could not become a lax.scan
    # A loop held back by a break/continue inside a block of its body or an `else:` clause:
    # restructured first (see jump_lowering).
    lowerable: bool = False


class FunctionPlanner(LoopPlanning, ScanPlanning):
    """Plans for every traced ``if`` and loop of one function (nested function bodies excluded)."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, flow: FlowAnalysis,
                 imports: ImportTable, text: str, taken_names: Callable[[], set[str]], arrays: ArrayEvidence,
                 options: PlanningOptions | None = None):
        self.function = function
        self.flow = flow
        self.arrays = arrays
        self.imports = imports
        self.text = text
        self._taken_names = taken_names
        self._taken: set[str] | None = None
        self.sizes = SizeEvidence(arrays, imports)
        self.plans: dict[ast.stmt, IfPlan | LoopPlan] = {}
        self.forced_ifs: set[ast.If] = set()
        self.carried: frozenset[str] = frozenset()  # carries of the planned loops being walked
        # Operands of the planned ifs being walked: tracers inside their branch functions.
        self.operands: frozenset[str] = frozenset()
        self.options = options or PlanningOptions()
        self.static_requests: dict[ast.For, list[str]] = {}  # loops left as they are, bounds made static
        # statement -> the carried names traced around it, for the expression rules
        self.carried_at: dict[int, frozenset[str]] = {}
        self.non_scalar: list[tuple[ast.If, int]] = []  # tests on arrays of that many elements
        self.problems: list[Problem] = []
        self._loads_cache: list[ast.Name] | None = None
        # The statements after the one being walked, in each enclosing block, innermost last;
        # and where in that stack the body of each loop being rewritten starts.
        self._rests: list[list[ast.stmt]] = []
        self._rewritten_loop_levels: list[tuple[int, int]] = []  # (level in _rests, loop depth)

    @property
    def _loads(self) -> list[ast.Name]:
        """Every read of a name in the function (``k += 1`` reads ``k``)."""
        if self._loads_cache is None:
            self._loads_cache = [
                node.target if isinstance(node, ast.AugAssign) else node for node in ast.walk(self.function)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                or isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
            ]
        return self._loads_cache

    @property
    def taken(self) -> set[str]:
        """Names in use, computed when the first helper is named (most functions need none)."""
        if self._taken is None:
            self._taken = self._taken_names()
        return self._taken

    def run(self) -> None:
        params = {arg.arg for arg in ast.walk(self.function.args) if isinstance(arg, ast.arg)}
        self._block(self.function.body, params, tail=True, loops=0)

    # -- walking ---------------------------------------------------------------------------

    def is_traced_if(self, node: ast.If) -> bool:
        if node in self.forced_ifs:  # made from a traced break/continue guard
            return True
        values = self.values_at(node)
        if not values.is_traced(node.test):
            return False
        if self.arrays.certain_truth(node.test, values):
            return True
        if checking_lowered.get():  # left as it is, but a lowering must not count on it
            self._report(node, "the test is traced but not certainly one array")
        return False

    def values_at(self, node: ast.stmt):
        """Traced/static at a statement, the carry of the loops being rewritten around it traced."""
        return self.flow.at(node, self.traced_here)

    @property
    def traced_here(self) -> frozenset[str]:
        """Names that are tracers where the walk is, whatever the code says: the carry of the
        loops and the operands of the ifs being rewritten around it."""
        return self.carried | self.operands

    def _walk_branches(self, branches: list[Branch], operands: list[str], tail: bool, loops: int) -> None:
        outer = self.operands
        self.operands = outer | set(operands)
        try:
            for branch in branches:
                for node in ast.walk(ast.Module(body=branch.statements, type_ignores=[])):
                    if isinstance(node, ast.stmt):
                        self.carried_at[id(node)] = self.traced_here
                self._block(branch.statements, set(operands), tail=tail, loops=loops)
        finally:
            self.operands = outer

    def _block(self, statements: list[ast.stmt], bound: set[str], tail: bool, loops: int) -> None:
        bound = set(bound)
        values: dict[str, ast.expr] = {}  # the value each name was last given, where simple
        for index, statement in enumerate(statements):
            self._rests.append(statements[index + 1:])
            try:
                if isinstance(statement, ast.If) and self.is_traced_if(statement):
                    if self._plan(statement, statements[index + 1:], bound, tail, loops, values):
                        return  # the rest of the block now lives in the branches
                elif self.is_traced_range(statement) or self.is_traced_while(statement) \
                        or self.has_traced_guard(statement):
                    self._plan_loop(statement, bound, loops)  # type: ignore[arg-type]
                elif self.scannable(statement):
                    self._plan_scan(statement, bound, loops, values)  # type: ignore[arg-type]
                else:
                    self._descend(statement, bound, tail, loops)
            finally:
                self._rests.pop()
            bound |= definitely_assigned([statement])
            _remember_values(statement, values)

    def _descend(self, statement: ast.stmt, bound: set[str], tail: bool, loops: int) -> None:
        if isinstance(statement, ast.If):
            for block in (statement.body, statement.orelse):
                self._block(block, bound, tail and always_leaves(block), loops)
        elif isinstance(statement, ast.For | ast.AsyncFor):
            self._block(statement.body, bound | set(target_names(statement.target)), False, loops + 1)
            self._block(statement.orelse, bound, False, loops)
        elif isinstance(statement, ast.While):
            self._block(statement.body, bound, False, loops + 1)
            self._block(statement.orelse, bound, False, loops)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            names = {n for item in statement.items if item.optional_vars for n in target_names(item.optional_vars)}
            self._block(statement.body, bound | names, tail and always_leaves(statement.body), loops)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody,
                          *(handler.body for handler in statement.handlers)):
                self._block(block, bound, False, loops)

    def _report(self, node: ast.If | ast.For | ast.While, reason: str, where: ast.AST | None = None,
                kind: str = "", lowerable: bool = False) -> bool:
        self.problems.append(Problem(where or node, node, reason, kind, lowerable))
        return False

    # -- one if ----------------------------------------------------------------------------

    def _plan(self, node: ast.If, rest: list[ast.stmt], bound: set[str], tail: bool, loops: int,
              values: dict[str, ast.expr]) -> bool:
        """Plan one traced if; True when it absorbs the rest of the block."""
        size = self.sizes.size(node.test)
        if size is not None and size > 1:
            self.non_scalar.append((node, size))
            return False
        if contains_return(node.body) or contains_return(node.orelse):
            return self._plan_return(node, rest, bound, tail)
        return self._plan_assign(node, bound, loops, values)

    def _first_obstacle(self, node: ast.If, blocks: list[list[ast.stmt]], allow_return: bool,
                        read_after=lambda name: False) -> bool:
        for block in blocks:
            found = chain(obstacles(block, allow_return, self._module_names(), read_after),
                          framework_obstacles(block, self.imports.resolve))
            for where, reason in found:
                self._report(node, reason, where)
                return True
        return False

    def _module_names(self) -> set[str]:
        return set(self.imports.aliases)

    def _plan_assign(self, node: ast.If, bound: set[str], loops: int, values: dict[str, ast.expr]) -> bool:
        if self._first_obstacle(node, [node.body, node.orelse], allow_return=False,
                                read_after=lambda name: self._live_after(name, node, loops)):
            return False
        branches = [node.body, node.orelse]
        assigned = assigned_names(node.body) | assigned_names(node.orelse)
        outputs = [name for name in self._ordered(assigned, node) if self._live_after(name, node, loops)]
        needed: set[str] = set()
        for name in outputs:
            for block in branches:
                if name not in definitely_assigned(block):
                    if name not in bound:
                        where = "when the condition is false" if block is node.orelse else "when the condition is true"
                        return self._report(
                            node, f"`{name}` has no value {where}: it is bound in one branch only and "
                            "not before the `if`, so the other branch has nothing to return")
                    needed.add(name)
        for block in branches:
            needed |= upward_exposed(block, set(outputs)) & assigned_names(block) & bound
        for name in outputs:
            if self._static_non_numeric(name, branches):
                return self._report(node, f"`{name}` is set to a Python value that is not a number; "
                                          "`lax.cond` can only choose between arrays")
        operands = self._ordered(needed, node)
        true = Branch(branch_name(node.test, False, self.taken), node.body, False)
        false = Branch(branch_name(node.test, True, self.taken), node.orelse, False)
        plan = IfPlan(node, "assign", true, false, operands, outputs)
        self._plan_casts_assign(plan, values)
        self.plans[node] = plan
        self._walk_branches([true, false], operands, tail=False, loops=loops)
        return False

    def _plan_return(self, node: ast.If, rest: list[ast.stmt], bound: set[str], tail: bool) -> bool:
        if not tail:
            return self._report(node, "a branch returns, but the `if` is inside a loop or block with "
                                      "more code after it; only an `if` whose branches end the function "
                                      "becomes a `lax.cond`")
        true_falls = not always_leaves(node.body)
        false_falls = not always_leaves(node.orelse)
        if true_falls and false_falls and rest:
            if len(rest) > MAX_DUPLICATED_REST or any(not _is_simple(s) for s in rest):
                return self._report(node, "both branches can fall through to the code after the `if` "
                                          "as well as return; restructure so one branch returns")
        true_statements = node.body + (rest if true_falls else [])
        false_statements = node.orelse + (rest if false_falls else [])
        for statements, label in ((true_statements, "true"), (false_statements, "false")):
            if not always_leaves(statements):
                return self._report(node, f"the function returns nothing when the condition is {label}; "
                                          "`lax.cond` needs a value from each branch")
        if self._first_obstacle(node, [true_statements, false_statements], allow_return=True):
            return False
        needed: set[str] = set()
        for statements in (true_statements, false_statements):
            needed |= upward_exposed(statements) & assigned_names(statements) & bound
        operands = self._ordered(needed, node)
        true = Branch(branch_name(node.test, False, self.taken), true_statements, true_falls and bool(rest))
        false = Branch(branch_name(node.test, True, self.taken), false_statements, false_falls and bool(rest))
        plan = IfPlan(node, "return", true, false, operands, [])
        self._plan_casts_return(plan)
        self.plans[node] = plan
        self._walk_branches([true, false], operands, tail=True, loops=0)
        return True

    # -- names -----------------------------------------------------------------------------

    def _ordered(self, names: set[str], node: ast.If) -> list[str]:
        """In order of first appearance in the if, so operands read like the code."""
        order: list[str] = []
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in names and child.id not in order:
                order.append(child.id)
        order.extend(sorted(names - set(order)))
        return order

    def _live_after(self, name: str, node: ast.If, loops: int) -> bool:
        if name in self.carried:
            return True  # the body of a loop being rewritten returns its whole carry
        inside = {id(child) for child in ast.walk(node)}
        if not any(load.id == name and id(load) not in inside for load in self._loads):
            return False if not loops else self._read_next_iteration(name, node)
        innermost = self._rewritten_loop_levels[-1] if self._rewritten_loop_levels else (0, 0)
        if loops > innermost[1]:
            return True  # inside a Python loop: a read elsewhere in it may come on its next pass
        # What follows the statement decides, block by block outwards: a read before any
        # certain rebinding makes it live; `k = 0` before every read, dead. Inside a loop being
        # rewritten, only the rest of its body counts: what the next pass or the code after
        # the loop reads is in its carry, checked above.
        for rest in reversed(self._rests[innermost[0]:] if loops else self._rests):
            if name in upward_exposed(rest):
                return True
            if name in definitely_assigned(rest):
                return False
        return False

    @staticmethod
    def _read_next_iteration(name: str, node: ast.If | ast.For | ast.While) -> bool:
        """Inside a loop, whether the next pass of ``node`` reads what this one leaves."""
        if isinstance(node, ast.For):  # rebound from the iterable on every pass
            return name not in target_names(node.target) and name in upward_exposed(node.body)
        return name in loaded_names([node.test]) or any(  # type: ignore[attr-defined]
            name in upward_exposed(block) for block in (node.body, node.orelse))

    @staticmethod
    def _static_non_numeric(name: str, branches: list[list[ast.stmt]]) -> bool:
        for block in branches:
            for statement in block:
                if isinstance(statement, ast.Assign) and name in {n for t in statement.targets for n in target_names(t)}:
                    value = statement.value
                    if isinstance(value, ast.Constant) and not isinstance(value.value, bool | int | float | complex):
                        return True
        return False

    # -- result types ----------------------------------------------------------------------

    def _plan_casts_assign(self, plan: IfPlan, values: dict[str, ast.expr]) -> None:
        for name in plan.outputs:
            arms = [self._final_value(branch.statements, name) for branch in (plan.true, plan.false)]
            if any(arm is None for arm in arms):
                continue
            # A name passed through has the type of the value it was given before the if.
            kinds = [values.get(name, arm) if isinstance(arm, ast.Name) and arm.id == name else arm for arm in arms]
            self._plan_cast(plan, name, arms, kinds, f"{name}_dtype")  # type: ignore[arg-type]

    def _plan_casts_return(self, plan: IfPlan) -> None:
        arms = [self._final_return(branch.statements) for branch in (plan.true, plan.false)]
        if any(arm is None for arm in arms):
            return
        self._plan_cast(plan, "return", arms, arms, "result_dtype")  # type: ignore[arg-type]

    def _plan_cast(self, plan: IfPlan, key: str, arms: list[ast.expr], kinds: list[ast.expr], dtype_name: str) -> None:
        """``arms`` are evaluated (before the if) for their common type; ``kinds`` decide
        which need a cast."""
        to_cast = arms_to_cast(kinds)
        if not to_cast or any(isinstance(node, ast.NamedExpr) for node in ast.walk(plan.node.test)):
            return  # (a name the condition binds would be read before it is bound)
        sources: list[str] = []
        for arm in arms:
            source = ast.get_source_segment(self.text, arm) or ast.unparse(arm)
            if source not in sources:
                sources.append(source)
        plan.dtypes[key] = (unique_name(dtype_name, self.taken), sources)
        branches = (plan.true, plan.false)
        for index in to_cast:
            branches[index].casts[key] = arms[index]

    def _final_value(self, statements: list[ast.stmt], name: str) -> ast.expr | None:
        """The expression a branch leaves in ``name``, if it can be evaluated before the if
        (it reads nothing the branch changed before binding it): used only for its type."""
        if name not in definitely_assigned(statements):
            return ast.Name(id=name, ctx=ast.Load())  # passed through unchanged
        for index in range(len(statements) - 1, -1, -1):
            statement = statements[index]
            if name not in assigned_names([statement]):
                continue
            value: ast.expr | None = None
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name):
                value = statement.value
            elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                # `k += m` leaves `k + m`. The node spans no source of its own (the statement's
                # text is `k += m`, not an expression): it is written out from the tree.
                value = ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
            if value is None or not self._evaluable_before(value, statements[:index]):
                return None
            return value
        return None

    def _final_return(self, statements: list[ast.stmt]) -> ast.expr | None:
        last = statements[-1] if statements else None
        returns = [node for node in ast.walk(ast.Module(body=statements, type_ignores=[]))
                   if isinstance(node, ast.Return)]
        if not isinstance(last, ast.Return) or last.value is None or len(returns) != 1:
            return None
        return last.value if self._evaluable_before(last.value, statements[:-1]) else None

    def _evaluable_before(self, value: ast.expr, earlier: list[ast.stmt]) -> bool:
        if loaded_names([value]) & assigned_names(earlier):
            return False
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                function = self.imports.resolve(node.func) or ""
                if not (function.startswith("jax.") or isinstance(node.func, ast.Attribute)):
                    return False  # a user function would run twice
            if isinstance(node, ast.NamedExpr | ast.Lambda | ast.Await | ast.Yield):
                return False
            # Python takes a truth here (`1.0 if ok else 0.5`, `a and b`, `not a`, `a < b < c`):
            # of a tracer, that raises outside the branch, where the rewrite cannot reach it.
            if isinstance(node, ast.IfExp | ast.BoolOp) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) \
                    or isinstance(node, ast.Compare) and len(node.ops) > 1:
                return False
        return True


def _remember_values(statement: ast.stmt, values: dict[str, ast.expr]) -> None:
    """Track the literal each name was last given (for result types); a compound statement
    may rebind anything, so after one nothing is known."""
    if isinstance(statement, ast.Assign):
        for target in statement.targets:
            for name in target_names(target):
                values.pop(name, None)
        if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            values[statement.targets[0].id] = statement.value
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        for name in target_names(statement.target):
            values.pop(name, None)
    elif not isinstance(statement, ast.Expr | ast.Pass | ast.Return):
        values.clear()


def _is_simple(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Return | ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr)
