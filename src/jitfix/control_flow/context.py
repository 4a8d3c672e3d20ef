"""The state the parts of the planner share while one function is walked, and the facts
about names that the ``if``, loop and scan planners all ask for."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterable

from jitfix.analysis.blocks import (
    assigned_names,
    closures,
    declared_names,
    definitely_assigned,
    loaded_names,
    nodes_of,
    private_dicts,
    rows_iterated,
    statement_holding,
    target_names,
    trace_time_effect,
    upward_exposed,
    writes_outside,
)
from jitfix.analysis.flow import FlowAnalysis
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.summaries import ModuleProgram
from jitfix.analysis.values import ArrayEvidence, SizeEvidence, ValueAnalysis, parameter_names
from jitfix.control_flow.boolean_expressions import boolean_names
from jitfix.control_flow.hoisted_appends import appended_to, hoisted_lists
from jitfix.control_flow.plans import Lowering, Plan, PlanningOptions, Problem, ProblemKind
from jitfix.control_flow.result_types import Callees, Helper, Known, bound_values, helper_of
from jitfix.naming import NameSet

# Walks a block of statements: (statements, names bound before it, whether the block ends
# the function, how many Python loops enclose it).
# Plans a block: (statements, names bound before it, whether it ends the function, loops
# around it, the literal each name holds as the block starts where known).
BlockWalker = Callable[[list[ast.stmt], set[str], bool, int, "dict[str, Known] | None"], None]

# Why a traced test is left: `jnp.logical_*` would take the truth of an operand elementwise,
# and a tuple or dict of tracers has Python truth instead.
UNPROVEN_OPERAND = ("the test is traced, but an operand of its `and`/`or`/`not` is not certainly one array "
                    "(a tuple or dict has Python truth): rewrite it by hand")


@dataclass(frozen=True)
class StaticRequest:
    """A range loop kept as Python, the parameters that bound it made static at the jit."""

    names: list[str]
    why: str  # for the message
    safe: bool  # every call that gave them a traced value failed before


@dataclass
class PlanContext:
    """One function being planned: its analysis, what has been decided, and where the walk is."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    flow: FlowAnalysis
    imports: ImportTable
    text: str
    arrays: ArrayEvidence
    options: PlanningOptions
    taken_names: Callable[[], NameSet]  # names generated helpers must not shadow, on demand
    # -- what the walk decides
    plans: dict[ast.stmt, Plan] = field(default_factory=dict)
    # id of a `return` -> its casts (see IfPlan.return_casts), planned by the outermost if over it
    return_casts: dict[int, dict[int | str | None, str]] = field(default_factory=dict)
    # id of a `return` -> id of the outermost if over it, the only one that may cast it (code
    # after an if that both branches fall into is written in both)
    return_owners: dict[int, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    forced_ifs: set[ast.If] = field(default_factory=set)  # made from a traced break/continue guard
    static_requests: dict[ast.For, StaticRequest] = field(default_factory=dict)  # loops kept, bounds made static
    carried_at: dict[int, frozenset[str]] = field(default_factory=dict)  # statement -> names traced around it
    non_scalar: list[tuple[ast.If, int]] = field(default_factory=list)  # tests on arrays of that many elements
    # -- where the walk is
    carried: frozenset[str] = frozenset()  # carries and loop variables of the planned loops being walked
    returned: frozenset[str] = frozenset()  # carries of the planned loops being walked: what their bodies return
    operands: frozenset[str] = frozenset()  # operands of the planned ifs being walked
    # The statements after the one being walked, in each enclosing block, innermost last;
    # and where in that stack the body of each loop being rewritten starts.
    rests: list[list[ast.stmt]] = field(default_factory=list)
    rewritten_loop_levels: list[tuple[int, int]] = field(default_factory=list)  # (level in rests, loop depth)
    _taken: NameSet | None = None
    _loads: list[ast.Name] | None = None
    _private_dicts: frozenset[str] | None = None
    _closures: dict[str, tuple[ast.AST, frozenset[str]]] | None = None
    _callees: Callees | None = None
    _boolean_names: frozenset[str] | None = None
    # Where each function of the module a branch or body calls changes an object it does not make.
    _changes_outside: dict[ast.AST, ast.stmt | ast.expr | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sizes = SizeEvidence(self.arrays, self.imports)

    @property
    def taken(self) -> NameSet:
        """Names in use, computed when the first helper is named (most functions need none)."""
        if self._taken is None:
            self._taken = self.taken_names()
        return self._taken

    @property
    def loads(self) -> list[ast.Name]:
        """Every read of a name in the function (``k += 1`` reads ``k``)."""
        if self._loads is None:
            self._loads = [
                node.target if isinstance(node, ast.AugAssign) else node  # type: ignore[misc]
                for node in nodes_of(self.function)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                or isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)
            ]
        return self._loads

    @property
    def boolean_names(self) -> frozenset[str]:
        """Local names every binding of which is a boolean (`above = False`, then `above =
        x > t`): of a bool's type whichever holds, for the types of branch results."""
        if self._boolean_names is None:
            self._boolean_names = boolean_names(self.function, self.imports)
        return self._boolean_names

    @property
    def traced_here(self) -> frozenset[str]:
        """Names that are tracers where the walk is, whatever the code says: the carry of the
        loops and the operands of the ifs being rewritten around it."""
        return self.carried | self.operands

    def values_at(self, node: ast.stmt) -> ValueAnalysis:
        """Traced/static at a statement, the carry of the loops being rewritten around it traced."""
        return self.flow.at(node, self.traced_here)

    def mark_traced_inside(self, statements: list[ast.stmt]) -> None:
        """Record, for the expression rules, what is traced at each statement of a body
        that becomes a helper function."""
        for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
            if isinstance(node, ast.stmt):
                self.carried_at[id(node)] = self.traced_here

    def report(self, node: ast.If | ast.For | ast.While, reason: str, where: ast.AST | None = None,
               scan: bool = False, lowering: Lowering | None = None, kind: ProblemKind | None = None) -> None:
        self.problems.append(Problem(where or node, node, reason, scan, lowering, kind))

    def closure_copies(self, blocks: list[list[ast.stmt]],
                       localized: set[str]) -> tuple[list[ast.stmt], list[tuple[ast.AST, str]]]:
        """The helpers the function defines before ``blocks`` and calls in them that read a
        name the rewrite makes a local of the new branch or body function (``localized``):
        called from there, they would read that name as it was before the statement. A copy of
        each, made inside the new function, reads the new function's own. Returns (the
        definitions to copy, in source order; the calls of helpers that cannot be copied --
        decorated, with defaults -- with the reason)."""
        if self._closures is None:
            self._closures = closures(self.function)
        if not self._closures:
            return [], []
        statements = [statement for block in blocks for statement in block]
        inside = {id(node) for node in ast.walk(ast.Module(body=statements, type_ignores=[]))}
        copies: dict[str, ast.stmt] = {}
        problems: list[tuple[ast.AST, str]] = []
        for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self._closures):
                continue
            definition, reads = self._closures[node.func.id]
            stale = sorted(reads & localized)
            if not stale or id(definition) in inside:
                continue
            needed = self._stale_helpers(node.func.id, localized)
            if all(_copyable(self._closures[name][0]) for name in needed):
                copies.update({name: self._closures[name][0] for name in needed})  # type: ignore[misc]
            else:
                problems.append((node, f"`{node.func.id}` reads `{stale[0]}` of the function when called, and the "
                                       f"rewrite makes `{stale[0]}` a local of a new function, where a copy of a "
                                       "decorated helper or one with defaults would not mean the same"))
        return sorted(copies.values(), key=lambda statement: statement.lineno), problems

    def declared_names_bound(self, statements: list[ast.stmt]) -> list[tuple[ast.AST, str]]:
        """Statements binding a name the function declares ``global`` or ``nonlocal``: moved
        into a new branch or body function, the binding would make a local of that function
        (``calls += 1`` there reads a local never bound: UnboundLocalError)."""
        declared = declared_names(self.function)
        found: list[tuple[ast.AST, str]] = []
        for statement in statements:
            for name in sorted(assigned_names([statement]) & declared):
                found.append((statement, f"`{name}` is declared `global` or `nonlocal` by the function: bound in a "
                                         "new function it would be that function's local"))
        return found

    def changes_by_calls(self, statements: list[ast.stmt]) -> list[tuple[ast.AST, str]]:
        """Calls in the statements of a function of the module that changes an object it does
        not make (``bump(state)``, with ``def bump(d): d["n"] += 1``): a branch or loop body
        is traced once, so the change would not follow the condition or the trips."""
        found: list[tuple[ast.AST, str]] = []
        modules = set(self.imports.aliases)
        for node in ast.walk(ast.Module(body=statements, type_ignores=[])):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            definition = self._function_named(node.func.id)
            if definition is None:
                continue
            if definition not in self._changes_outside:
                self._changes_outside[definition] = writes_outside(definition, modules, self._function_named,
                                                                   self.imports.resolve)
            where = self._changes_outside[definition]
            if where is not None:
                found.append((node, f"`{node.func.id}(...)` changes an object it does not make (line {where.lineno}): "
                                    "both branches run at trace time, so the change would happen whichever branch "
                                    "is taken"))
                continue
            effect = trace_time_effect(definition, self._function_named, self.imports.resolve)
            if effect is not None:
                found.append((node, f"`{node.func.id}(...)` prints or logs while it is traced (line {effect.lineno}): "
                                    "both branches run at trace time, so the output would appear whichever branch "
                                    "is taken"))
        return found

    @property
    def callees(self) -> Callees:
        """What the function's calls run, for the types of their results."""
        if self._callees is None:
            self._callees = Callees(self.imports.resolve, self._helper, self._traced_test, self._iterates_rows)
        return self._callees

    def _iterates_rows(self, loop: ast.For) -> bool:
        """Whether ``loop``, a statement of the function's own body, takes the rows of what
        is certainly an array there."""
        array = rows_iterated(loop)
        return array is not None and statement_holding(self.function, loop.iter) is loop \
            and self.arrays.proven(array, self.values_at(loop))

    def _traced_test(self, test: ast.expr) -> bool:
        """Whether ``test``, an expression of the function's own body, is a tracer there."""
        statement = statement_holding(self.function, test)
        return statement is not None and self.values_at(statement).is_traced(test)

    def _helper(self, name: str) -> Helper | None:
        """The helper a call of ``name`` in the function runs: a def or lambda the function
        binds the name to once (its free names are the function's own, read when called),
        or a def around it (whose free names the function must not bind: they are another
        scope's)."""
        if self._closures is None:
            self._closures = closures(self.function)
        bindings = bound_values(self.function.body).get(name, [])
        if name in self._closures and len(bindings) == 1:
            definition = self._closures[name][0]
            return helper_of(definition.value if isinstance(definition, ast.Assign) else definition, frozenset())
        outer = self._function_named(name) if not bindings else None
        if outer is None or outer is self.function:
            return None
        return helper_of(outer, frozenset(assigned_names(self.function.body) | set(parameter_names(self.function))))

    def python_container(self, value: ast.expr, statement: ast.stmt | None) -> str | None:
        """"list" or "tuple" when ``value`` certainly holds a Python list or tuple at
        ``statement``: made by a display or comprehension there, or a module-level name the
        module binds once, to one, that the function does not bind."""
        if statement is not None:
            held = self.values_at(statement).verdict(value).container
            if held is not None:
                return held
        program = self.flow.program
        if not (isinstance(value, ast.Name) and isinstance(program, ModuleProgram)) \
                or value.id in assigned_names(self.function.body) or value.id in parameter_names(self.function):
            return None
        bindings = [statement for statement in program.tree.body if value.id in assigned_names([statement])]
        if len(bindings) == 1 and isinstance(bindings[0], ast.Assign) and len(bindings[0].targets) == 1 \
                and isinstance(bindings[0].targets[0], ast.Name):
            made = bindings[0].value
            if isinstance(made, ast.List | ast.ListComp):
                return "list"
            if isinstance(made, ast.Tuple):
                return "tuple"
        return None

    def _function_named(self, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The def of this module a call of ``name`` in the function runs."""
        program = self.flow.program
        return program.scopes.lookup(self.function, name) if isinstance(program, ModuleProgram) else None

    def reads_of(self, copies: list[ast.stmt]) -> set[str]:
        """The names of the function the copied helpers read when called: inputs of the new
        function, as if its own statements read them where the helpers are called."""
        wanted = {id(copy) for copy in copies}
        return {name for definition, reads in (self._closures or {}).values() if id(definition) in wanted
                for name in reads}

    def _stale_helpers(self, name: str, localized: set[str]) -> list[str]:
        """``name`` and the helpers it calls that also read a ``localized`` name."""
        assert self._closures is not None
        found, pending = [name], [name]
        while pending:
            definition = self._closures[pending.pop()][0]
            for node in ast.walk(definition):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self._closures \
                        and node.func.id not in found and self._closures[node.func.id][1] & localized:
                    found.append(node.func.id)
                    pending.append(node.func.id)
        return found

    @property
    def private_dicts(self) -> frozenset[str]:
        """Dicts of the function nothing else can hold (see blocks.private_dicts)."""
        if self._private_dicts is None:
            self._private_dicts = private_dicts(self.function, self.options.handed)
        return self._private_dicts

    def report_obstacle(self, node: ast.If | ast.For | ast.While,
                        found: Iterable[tuple[ast.AST, str]]) -> bool:
        """Report what blocks the rewrite of ``node`` (True if anything does). When every
        obstacle is an item write into a dict of the function, the restructuring into new
        dicts is offered with it; when every one is an append that ends each path through
        an ``if``, the appends moved after it."""
        found = list(found)
        if not found:
            return False
        dict_writes = all(isinstance(where, ast.Subscript) and isinstance(where.value, ast.Name)
                          and where.value.id in self.private_dicts for where, _ in found)
        appended = hoisted_lists(node) if isinstance(node, ast.If) else None
        calls = [where.value if isinstance(where, ast.Expr) else where for where, _ in found]
        appends = appended is not None and all(
            isinstance(call, ast.Call) and appended_to(call) in appended for call in calls)
        where, reason = found[0]
        lowering = Lowering.DICT_UPDATES if dict_writes else Lowering.HOISTED_APPENDS if appends else None
        kind = ProblemKind.JUMP_OUT_OF_LOOP if isinstance(where, ast.Break | ast.Continue) else None
        self.report(node, reason, where, lowering=lowering, kind=kind)
        return True

    # -- names -----------------------------------------------------------------------------

    @staticmethod
    def ordered(names: set[str], node: ast.AST) -> list[str]:
        """In order of first appearance in ``node``, so operands and carries read like the code."""
        order: list[str] = []
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in names and child.id not in order:
                order.append(child.id)
        order.extend(sorted(names - set(order)))
        return order

    def live_after(self, name: str, node: ast.If | ast.For | ast.While, loops: int) -> bool:
        """Whether code that runs after ``node`` (``loops`` Python loops deep) may read ``name``."""
        if name in self.returned:
            return True  # the body of a loop being rewritten returns its whole carry
        inside = {id(child) for child in ast.walk(node)}
        if not any(load.id == name and id(load) not in inside for load in self.loads):
            return False if not loops else _read_next_iteration(name, node)
        innermost = self.rewritten_loop_levels[-1] if self.rewritten_loop_levels else (0, 0)
        if loops > innermost[1]:
            return True  # inside a Python loop: a read elsewhere in it may come on its next pass
        # What follows the statement decides, block by block outwards: a read before any
        # certain rebinding makes it live; `k = 0` before every read, dead. Inside a loop being
        # rewritten, only the rest of its body counts: what the next pass or the code after
        # the loop reads is in its carry, checked above.
        for rest in reversed(self.rests[innermost[0]:] if loops else self.rests):
            if name in upward_exposed(rest) or name in self._read_by_helpers_in(rest):
                return True
            if name in definitely_assigned(rest):
                return False
        return False

    def _read_by_helpers_in(self, statements: list[ast.stmt]) -> set[str]:
        """The function's names that its helpers named in ``statements`` read when called
        (``a = inner(b)`` reads the ``a`` that ``inner`` closes over, before rebinding it)."""
        if self._closures is None:
            self._closures = closures(self.function)
        if not self._closures:
            return set()
        named = loaded_names(statements) & self._closures.keys()
        return {read for helper in named for read in self._closures[helper][1]}


def _copyable(definition: ast.AST) -> bool:
    """A helper whose definition means the same made again elsewhere: no decorators, no
    default values (both are evaluated where the definition runs)."""
    if isinstance(definition, ast.FunctionDef):
        arguments = definition.args
    elif isinstance(definition, ast.Assign) and isinstance(definition.value, ast.Lambda):
        arguments = definition.value.args
    else:
        return False
    decorated = isinstance(definition, ast.FunctionDef) and bool(definition.decorator_list)
    return not decorated and not arguments.defaults and not any(arguments.kw_defaults)


def _read_next_iteration(name: str, node: ast.If | ast.For | ast.While) -> bool:
    """Inside a loop, whether the next pass of ``node`` reads what this one leaves."""
    if isinstance(node, ast.For):  # rebound from the iterable on every pass
        return name not in target_names(node.target) and name in upward_exposed(node.body)
    return name in loaded_names([node.test]) or any(
        name in upward_exposed(block) for block in (node.body, node.orelse))
