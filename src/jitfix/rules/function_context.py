"""What every rule that reads a traced function's control flow shares: the function planned
once (``FunctionContext``: its lax plans, values at each statement, array evidence, the
boolean sites JF103 rewrites), the edit that rewrites its planned statements, and where its
name is."""

from __future__ import annotations

import ast
from typing import Iterator

from jitfix.analysis.blocks import local_names, nodes_of, own_expressions
from jitfix.analysis.local_calls import array_evidence
from jitfix.analysis.masks import MaskParameters, module_masks
from jitfix.analysis.static_arrays import StaticArrays
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import ArrayEvidence, ValueAnalysis
from jitfix.control_flow.boolean_expressions import (
    boolean_names,
    boolop_edit,
    chain_edit,
    chosen_operand_edit,
    is_boolean_valued,
    may_be_none,
    not_edit,
)
from jitfix.control_flow.function import FunctionPlanner, FunctionRewriter
from jitfix.control_flow.plans import LoopPlan, Plan, PlanningOptions
from jitfix.cst_text import cst
from jitfix.findings import Edit, Position
from jitfix.naming import TakenNames
from jitfix.rules.base import CacheKey, ModuleContext

FUNCTION_CONTEXTS: CacheKey[list[FunctionContext]] = CacheKey("function contexts")
GLOBAL_NAMES: CacheKey[set[str]] = CacheKey("names of the module's scope")
ARRAY_EVIDENCE: CacheKey[dict] = CacheKey("array evidence by function")
MASK_PARAMETERS: CacheKey[MaskParameters] = CacheKey("parameters every call gives a boolean mask")


STATIC_ARRAYS: CacheKey[dict[bool, StaticArrays]] = CacheKey("ranks and inexactness the code proves")


def static_arrays(module: ModuleContext, public_callers: bool = False) -> StaticArrays:
    """What the module's code proves of its arrays' ranks and dtypes (``public_callers``: a
    public function's parameters taking what the module's calls give them too)."""
    found = module.cached(STATIC_ARRAYS, dict)
    if public_callers not in found:
        program = module.traced.program
        assert program is not None  # (a traced function was found)
        evidence: dict[int, ArrayEvidence] = {}

        def bindings_of(function):
            return evidence.setdefault(id(function), ArrayEvidence(function)).bindings

        found[public_callers] = StaticArrays(program.scopes, module.imports, bindings_of, public_callers)
    return found[public_callers]


def mask_parameters(module: ModuleContext) -> MaskParameters:
    def make() -> MaskParameters:
        program = module.traced.program
        assert program is not None  # (a traced function was found)
        return module_masks(program.scopes, module.imports)

    return module.cached(MASK_PARAMETERS, make)


def _truth_tested(test: ast.AST) -> Iterator[ast.AST]:
    """The test and the parts of it whose truth Python takes (operands of and/or/not)."""
    yield test
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _truth_tested(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _truth_tested(test.operand)


class BooleanSite:
    """One ``and``/``or``/``not``/chained comparison that calls ``bool()`` on a tracer (or, in
    a test that becomes a lax predicate, on what may be one)."""

    def __init__(self, node: ast.AST, statement: ast.stmt, values: ValueAnalysis, from_unknown: bool = False):
        self.node = node
        self.statement = statement
        self.values = values
        # Converted from the first operand not proven static (not only from the first traced).
        self.from_unknown = from_unknown

    def first_traced(self) -> int:
        assert isinstance(self.node, ast.BoolOp)
        if self.from_unknown:
            return next(i for i, value in enumerate(self.node.values) if not self.values.is_static(value))
        return next(i for i, value in enumerate(self.node.values) if self.values.is_traced(value))

    def edit(self, module: ModuleContext) -> Edit:
        """The jnp form, which keeps the site's truth (all a test needs)."""
        if isinstance(self.node, ast.BoolOp):
            return boolop_edit(module, self.node, self.first_traced())
        if isinstance(self.node, ast.UnaryOp):
            return not_edit(module, self.node)
        assert isinstance(self.node, ast.Compare)
        return chain_edit(module, self.node)

    def value_edit(self, module: ModuleContext, booleans: frozenset[str],
                   function: ast.FunctionDef | ast.AsyncFunctionDef | None = None) -> Edit:
        """Where the site's value is used: for an `and`/`or` that returns an operand, not a
        boolean, that operand, chosen with lax.cond as Python chooses it (an optional
        parameter of ``function`` tested for None first); else the jnp form."""
        if isinstance(self.node, ast.BoolOp) and self.returns_an_operand(module.imports, booleans):
            first = self.first_traced()
            optional = function is not None and may_be_none(self.node.values[first], function, self.node.lineno)
            return chosen_operand_edit(module, self.node, first, optional)
        return self.edit(module)

    def returns_an_operand(self, imports, booleans: frozenset[str]) -> bool:
        """An `and`/`or` whose operands from the first traced one on are not all booleans:
        its value is one of them, not a boolean."""
        return isinstance(self.node, ast.BoolOp) and not all(
            is_boolean_valued(value, imports, booleans) for value in self.node.values[self.first_traced():])

    def problem_in_value_context(self, imports, booleans: frozenset[str]) -> str | None:
        """Why the site has no faithful jnp form where its value (not just its truth) is used."""
        if self.returns_an_operand(imports, booleans):
            assert isinstance(self.node, ast.BoolOp)
            rest = self.node.values[self.first_traced():]
            word = "and" if isinstance(self.node.op, ast.And) else "or"
            why = (f"`{word}` returns one of its operands, and they are not all booleans "
                   f"(`jnp.logical_{word}` would return a boolean instead)")
            if len(rest) > 2:
                return f"{why}, and there are more than two from the first traced one on"
            if not is_cheap(rest[0], imports):
                return f"{why}, and choosing one with lax.cond would evaluate the first twice; bind it to a name first"
        if isinstance(self.node, ast.Compare):
            for middle in self.node.comparators[:-1]:
                if not is_cheap(middle, imports):
                    return "the middle of the chain would be evaluated twice; bind it to a name first"
        return None


def is_cheap(expr: ast.AST, imports) -> bool:
    for node in ast.walk(expr):
        if isinstance(node, ast.Call):
            name = imports.resolve(node.func) or ""
            if not (name.startswith("jax.") or isinstance(node.func, ast.Attribute)):
                return False
        if isinstance(node, ast.NamedExpr | ast.Await | ast.Yield):
            return False
    return True


def _boolean_site(node: ast.AST, statement: ast.stmt, values: ValueAnalysis,
                  arrays: ArrayEvidence, optional: frozenset[str] = frozenset()) -> BooleanSite | None:
    """A site only when Python would call bool() on a traced array there. ``optional``: the
    parameters that hold None or an array (`scale or 1.0`, its value used: the rewrite tests
    for None first)."""
    if isinstance(node, ast.BoolOp):
        tested = [value for value in node.values[:-1] if values.is_traced(value)]
        if tested and all(arrays.certain_truth(value, values) or _an_optional_array(value, optional, statement, node)
                          for value in tested):
            return BooleanSite(node, statement, values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        if values.is_traced(node.operand) and arrays.certain_truth(node.operand, values):
            return BooleanSite(node, statement, values)
    elif isinstance(node, ast.Compare) and len(node.ops) > 1:
        operands = [node.left, *node.comparators]
        if any(values.is_traced(left) or values.is_traced(right) for left, right in zip(operands[:-2], operands[1:-1])):
            return BooleanSite(node, statement, values)
    return None


def _an_optional_array(value: ast.expr, optional: frozenset[str], statement: ast.stmt, node: ast.BoolOp) -> bool:
    """A parameter holding None or an array, as the first operand of an ``and``/``or`` whose
    value the statement uses (not a test: there only its truth counts, and ``lax.cond`` of
    None fails)."""
    return isinstance(value, ast.Name) and value.id in optional and node.values[0] is value \
        and not isinstance(statement, ast.If | ast.While | ast.Assert)


def _predicate_site(node: ast.AST, statement: ast.stmt, values: ValueAnalysis, imports,
                    booleans: frozenset[str]) -> BooleanSite | None:
    """In a test that becomes a lax predicate, an ``and``/``or``/``not`` whose truth-tested
    operand the analysis cannot prove static (a call's result, say): Python would take its
    truth, which raises if it is a tracer. Written with ``jnp.logical_*`` from that operand on
    when the operands are booleans (the predicate needs only their truth)."""
    if isinstance(node, ast.BoolOp):
        tested = node.values[:-1]
        first = next((i for i, value in enumerate(tested) if not values.is_static(value)), None)
        if first is not None and all(is_boolean_valued(value, imports, booleans) for value in node.values[first:]):
            return BooleanSite(node, statement, values, from_unknown=True)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        if not values.is_static(node.operand) and is_boolean_valued(node.operand, imports, booleans):
            return BooleanSite(node, statement, values)
    return None


class FunctionContext:
    """Everything JF101-JF103 need to know about one traced function."""

    def __init__(self, module: ModuleContext, traced: TracedFunction):
        self.traced = traced
        function = traced.node
        flow = traced.flow(module.imports)

        def taken() -> TakenNames:  # every name a generated helper must not shadow
            return TakenNames(_global_names(module), (
                node.id if isinstance(node, ast.Name) else node.arg
                for node in nodes_of(function) if isinstance(node, ast.Name | ast.arg)))

        arrays = self.arrays = arrays_of(module, traced)
        # Parameters every call of the module gives a boolean mask (`apply_mask(x, x > t)`).
        self.masks = mask_parameters(module).of(function)
        # And the (mask, array) pairs of them every call computes elementwise one from the other.
        self.mask_pairs = mask_parameters(module).elementwise_pairs(function)
        options = PlanningOptions(
            loop_strategy=module.settings.loop_strategy,
            scan_static_loops=module.settings.scan_static_loops,
            differentiated=traced.differentiated,
            staticable=traced.traced_params if traced.jit_sites else frozenset(),
            handed=traced.handed_containers,
        )
        self.planned = FunctionPlanner(function, flow, module.imports, module.text, taken, arrays, options).run()
        self._boolean_names: frozenset[str] | None = None
        self._imports = module.imports
        self.ternaries: list[tuple[ast.IfExp, ast.stmt]] = []
        self.non_scalar: list[tuple[ast.If | ast.IfExp, int]] = list(self.planned.non_scalar)
        self.booleans: list[BooleanSite] = []
        self._flow = flow
        # The truth-tested parts of the tests that become lax predicates: there a Python
        # `and`/`or`/`not` must not be left on what may be a tracer.
        predicates = {id(part) for planned in self.planned.plans if isinstance(planned, ast.If | ast.While)
                      for part in _truth_tested(planned.test)}
        for node, statement in own_expressions(function):
            if not isinstance(node, ast.IfExp | ast.BoolOp | ast.UnaryOp | ast.Compare):
                continue  # the only expressions JF102 and JF103 rewrite
            values = self.values_at(statement)
            if isinstance(node, ast.IfExp) and values.is_traced(node.test) and arrays.certain_truth(node.test, values):
                size = self.planned.sizes.size(node.test)
                if size is not None and size > 1:
                    self.non_scalar.append((node, size))
                else:
                    self.ternaries.append((node, statement))
            site = _boolean_site(node, statement, values, arrays, traced.optional_arrays)
            if site is None and id(node) in predicates:
                site = _predicate_site(node, statement, values, module.imports, self.boolean_names)
            if site is not None:
                self.booleans.append(site)
        self._owner = self._owners()

    def given_elementwise(self, mask: ast.expr, array: str) -> bool:
        """Whether ``array[mask]`` selects element for element because every call gives the
        two parameters so (``masked_total(x, x > t)``), neither rebound here."""
        bindings = self.arrays.bindings
        return isinstance(mask, ast.Name) and (mask.id, array) in self.mask_pairs \
            and not bindings.get(mask.id) and not bindings.get(array)

    @property
    def boolean_names(self) -> frozenset[str]:
        """Names only ever bound to booleans (asked for only where a boolean site is fixed):
        the function's own, and those it reads from the traced functions around it."""
        if self._boolean_names is None:
            names = set(boolean_names(self.traced.node, self._imports))
            local = local_names(self.traced.node)
            enclosing = self.traced.enclosing
            while enclosing is not None:
                names |= boolean_names(enclosing.node, self._imports) - local
                local |= local_names(enclosing.node)
                enclosing = enclosing.enclosing
            self._boolean_names = frozenset(names)
        return self._boolean_names

    def values_at(self, statement: ast.stmt) -> ValueAnalysis:
        """Traced/static at a statement, as the rewrite will see it (inside a loop that becomes
        a lax loop, its carried names are tracers)."""
        return self._flow.at(statement, self.planned.carried_at.get(id(statement), frozenset()))

    def _owners(self) -> dict[ast.AST, ast.AST]:
        """Boolean sites in the test of a planned if or a traced ternary belong to that fix."""
        owner: dict[ast.AST, ast.AST] = {}
        tests: list[tuple[ast.AST, ast.AST]] = [
            (node.test, node) for node in self.planned.plans
            if isinstance(node, ast.If | ast.While) and node not in self.planned.forced_ifs
        ]
        for node, plan in self.planned.plans.items():  # break/continue guards go with their loop
            if isinstance(plan, LoopPlan):
                tests += [(guard.node.test, node) for guard in plan.guards]
        tests += [(node.test, node) for node, _ in self.ternaries]
        for test, holder in tests:
            for child in ast.walk(test):
                owner.setdefault(child, holder)
        return owner

    def owner(self, node: ast.AST) -> ast.AST | None:
        return self._owner.get(node)

    def in_other_test(self, site: BooleanSite) -> bool:
        """In the test of an if that is not rewritten, a while or an assert: left to those."""
        statement = site.statement
        if isinstance(statement, ast.If | ast.While | ast.Assert):
            return any(child is site.node for child in ast.walk(statement.test))
        return False

    def edits_in(self, module: ModuleContext, holder: ast.AST) -> list[Edit]:
        return [site.edit(module) for site in self.booleans if self.owner(site.node) is holder]


def _global_names(module: ModuleContext) -> set[str]:
    """The names of the module's scope (another function's locals are its own: a helper named
    like one of them shadows nothing)."""
    return module.cached(GLOBAL_NAMES, lambda: _names_of_the_module(module.tree))


def _names_of_the_module(tree: ast.Module) -> set[str]:
    names = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)  # its body is its own scope; what it reads of the module's is bound here
            stack.extend(node.decorator_list)
            continue
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return names


def arrays_of(module: ModuleContext, traced: TracedFunction) -> ArrayEvidence:
    """What the function's code says holds arrays (found once per function)."""
    return array_evidence(traced, module.cached(ARRAY_EVIDENCE, dict))


def function_contexts(module: ModuleContext) -> list[FunctionContext]:
    """Each traced def of the module, planned once for every rule that reads it."""
    return module.cached(FUNCTION_CONTEXTS, lambda: [FunctionContext(module, traced)
                                                     for traced in module.traced.values()
                                                     if isinstance(traced.node, ast.FunctionDef)])


def name_position(module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Position:
    """Where the def's name is: the anchor the engine finds a function by."""
    line = module.lines[function.lineno - 1]
    column = module.char_col(function.lineno, function.col_offset)
    index = line.find(function.name, line.find("def", column) + 3)
    return Position(function.lineno, index)


def function_edit(module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef, plans: dict[ast.stmt, Plan],
                  enabled: frozenset[ast.stmt]) -> Edit:
    """The edit that rewrites the ``enabled`` planned statements of one function; the edits of
    several findings in one function merge into one."""
    position = name_position(module, function)

    def merge(edits: list[Edit]) -> Edit:
        together = frozenset().union(*(edit.replace.enabled for edit in edits
                                       if isinstance(edit.replace, FunctionRewriter)))
        return function_edit(module, function, plans, together)

    needs_numpy = any(plans[node].needs_numpy for node in enabled)
    imports = ("jax.lax", "jax.numpy") if needs_numpy else ("jax.lax",)
    rewriter = FunctionRewriter(function, plans, enabled, module.text)
    return Edit(position, cst.FunctionDef, rewriter, imports=imports, merge=merge)


def source_excerpt(module: ModuleContext, node: ast.AST, limit: int = 40) -> str:
    """The node's source on one line, shortened to ``limit`` characters."""
    text = " ".join(module.segment(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


