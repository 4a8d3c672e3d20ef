"""A loop jit cannot run as ``lax.fori_loop`` / ``lax.while_loop``: the plan, and the code.

* ``for i in range(...)`` whose bounds are traced -> ``lax.fori_loop``; a step other than 1
  must be a literal (the trip count is computed from it);
* ``while`` on a traced condition -> ``lax.while_loop``.

The *carry* is every name the body binds that has a value before the loop and that the body
reads before binding it, the loop test reads, or code after the loop reads. A name the body
binds with no value before the loop and that is read afterwards is reported: a loop that runs
zero times would leave it unbound. The loop variable, when read after the loop, is carried
too, so it holds its last value. ``if c: break`` / ``if c: continue`` directly in the body
become a carried flag and nested ifs; ``return``, ``else:`` and anything a body function
cannot hold are reported with the reason.

The body function keeps the user's statements and comments; it unpacks the carry first and
returns it last. ``range(a, b, 2)`` counts iterations (``(b - a + 1) // 2``) and computes the
loop variable from the count, so a loop that runs zero times leaves the carry as it was.
"""

from __future__ import annotations

import ast
import re
from itertools import chain
from typing import Callable, Iterator, Sequence, TypeVar

from jitfix.analysis.blocks import (
    assigned_names,
    framework_obstacles,
    is_range_call,
    literal_int,
    loaded_names,
    method_changes,
    nested_blocks,
    obstacles,
    own_nodes,
    rows_iterated,
    shape_growth,
    target_names,
    upward_exposed,
)
from jitfix.analysis.catalogue import static_places
from jitfix.control_flow.boolean_expressions import is_boolean_valued
from jitfix.control_flow.context import UNPROVEN_OPERAND, BlockWalker, PlanContext, StaticRequest
from jitfix.control_flow.loop_returns import returns_from_loop
from jitfix.control_flow.plans import Guard, JumpKind, LoopKind, LoopPlan, Lowering
from jitfix.control_flow.render_context import BlockRenderer, RenderContext
from jitfix.control_flow.result_types import (
    CarryCast,
    Known,
    Signature,
    bound_values,
    carry_casts,
    container_layout,
    in_quotes,
    item_dtype_name,
    item_of,
    paired_values,
    rebuilt,
    updated_items,
)
from jitfix.cst_text import blank_line, code, cst, lay_out, pair_statements
from jitfix.naming import branch_name, unique_name
from jitfix.segments import source_segment

Statement = TypeVar("Statement")


def split_guards(body: list[ast.stmt]) -> tuple[list[list[ast.stmt]], list[Guard]]:
    """The body cut at its top-level ``if c: break``/``if c: continue`` statements:
    segments S0..Sk around guards g1..gk."""
    segments: list[list[ast.stmt]] = [[]]
    guards: list[Guard] = []
    for statement in body:
        if (isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1
                and isinstance(statement.body[0], ast.Break | ast.Continue)):
            kind = JumpKind.BREAK if isinstance(statement.body[0], ast.Break) else JumpKind.CONTINUE
            guards.append(Guard(statement, kind))
            segments.append([])
        else:
            segments[-1].append(statement)
    return segments, guards


def nest_guards(segments: Sequence[list[Statement]], guards: list[Guard], flag: str | None,
                make_if: Callable[[Guard, bool, list[Statement]], Statement],
                make_flag: Callable[[Guard], Statement]) -> list[Statement]:
    """S0; [flag = c1;] if <c1 or flag>: (nothing) else: (S1; ...): the statements after a
    guard run only when it does not fire. ``make_if(guard, test_is_flag, inner)`` and
    ``make_flag(guard)`` build the nodes (ast at planning time, libcst when writing)."""
    result = list(segments[0])
    if not guards:
        return result
    guard = guards[0]
    inner = nest_guards(segments[1:], guards[1:], flag, make_if, make_flag)
    if guard.kind is JumpKind.BREAK:
        result.append(make_flag(guard))
    if inner:
        result.append(make_if(guard, guard.kind is JumpKind.BREAK, inner))
    return result


def loop_obstacle(statements: list[ast.stmt]) -> tuple[ast.AST, str] | None:
    """break/continue/return that leave this loop's body (not a nested loop's)."""
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in statements]
    while stack:
        node, nested_loop = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            return node, "`return` inside the loop body"
        if isinstance(node, ast.Break | ast.Continue) and not nested_loop:
            word = "break" if isinstance(node, ast.Break) else "continue"
            return node, (f"`{word}` inside a nested block of the loop body; only `if c: {word}` "
                          "directly in the body is rewritten")
        inner = nested_loop or isinstance(node, ast.For | ast.AsyncFor | ast.While)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return None


def _holds_jump(block: list[ast.stmt]) -> bool:
    found = loop_obstacle(block)
    return found is not None and isinstance(found[0], ast.Break | ast.Continue)


def _ifs_holding_jumps(statements: list[ast.stmt]) -> Iterator[ast.If]:
    """The ifs of a loop body (at any depth, not in a nested loop or function) that hold a
    break/continue of this loop."""
    for statement in statements:
        if isinstance(statement, ast.If):
            blocks = (statement.body, statement.orelse)
            if any(_holds_jump(block) for block in blocks):
                yield statement
            for block in blocks:
                yield from _ifs_holding_jumps(block)


# How a branch's obstacle says why (blocks.obstacles), said of a loop body instead.
_BRANCHES_RUN = re.compile(r"both branches run at trace time, so the (write|change|output) would (?:happen|appear) "
                           r"whichever branch is taken")


def body_obstacles(context: PlanContext, statements: list[ast.stmt], node: ast.For | ast.While,
                   loops: int) -> Iterator[tuple[ast.AST, str]]:
    """What a loop's body function cannot hold (a function the body defines is its temporary,
    unless code after the loop reads it)."""
    read_after = lambda name: context.live_after(name, node, loops)  # noqa: E731
    found = chain(obstacles(statements, False, set(context.imports.aliases), read_after, context.imports.resolve),
                  context.changes_by_calls(statements), context.declared_names_bound(statements))
    for where, reason in found:
        if isinstance(where, ast.Break | ast.Continue | ast.Return):
            continue  # reported with the loop's own reason
        yield where, _BRANCHES_RUN.sub(r"the body is traced once, so the \1 would happen once, not once per trip",
                                       reason.replace("a branch", "the loop body"))
    yield from framework_obstacles(statements, context.imports.resolve)
    yield from context.closure_copies([statements], _localized(statements, node))[1]


def _localized(statements: list[ast.stmt], node: ast.For | ast.While) -> set[str]:
    """The names that become locals of a loop's body function."""
    return assigned_names(statements) | (set(target_names(node.target)) if isinstance(node, ast.For) else set())


class LoopPlanner:
    """Plans the traced range and while loops of one function."""

    def __init__(self, context: PlanContext, walk: BlockWalker):
        self.context = context
        self.walk = walk

    def is_traced(self, node: ast.stmt) -> bool:
        return self._is_traced_range(node) or self._is_traced_while(node) or self._has_traced_guard(node) \
            or self._leaves_rows_on_traced_test(node)

    def becomes_lax(self, node: ast.stmt) -> bool:
        """Whether the loop is one the rewrite makes a lax loop (else Python runs it, however
        many passes its static count says, none too), judged as ``is_traced``, saying nothing."""
        return self._is_traced_range(node) or self._is_traced_while(node, report=False) \
            or self._has_traced_guard(node) or self._leaves_rows_on_traced_test(node)

    def _is_traced_range(self, node: ast.stmt) -> bool:
        if not (isinstance(node, ast.For) and is_range_call(node.iter, self.context.imports)):
            return False
        values = self.context.values_at(node)
        arguments = _range_arguments(node)
        # `int(jnp.ceil(n / 2))` of static `n` is static: JF601 writes it in Python.
        return any(values.is_traced(_without_int(arg)) and not values.is_static(arg) for arg in arguments)

    def _is_traced_while(self, node: ast.stmt, report: bool = True) -> bool:
        if not isinstance(node, ast.While):
            return False
        values = self.context.values_at(node)
        if not values.is_traced(node.test):
            return False
        if self.context.arrays.certain_truth(node.test, values):
            return True
        if report and self.context.arrays.raises_on_truth(node.test, values):
            self.context.report(node, UNPROVEN_OPERAND)  # it raises: said, left as it is
        return False

    def _has_traced_guard(self, node: ast.stmt) -> bool:
        """A static range or while loop that breaks or continues on a traced condition: it
        must become a lax loop too."""
        if not (isinstance(node, ast.While)
                or (isinstance(node, ast.For) and is_range_call(node.iter, self.context.imports))):
            return False
        return self._jumps_on_traced_test(node)

    def _jumps_on_traced_test(self, node: ast.For | ast.While) -> bool:
        _, guards = split_guards(node.body)
        values_at = self.context.values_at
        if any(values_at(guard.node).is_traced(guard.node.test) for guard in guards):
            return True
        # A jump inside an `if` of the body (lowered to a flag, see jump_lowering) on a traced test.
        return any(values_at(test).is_traced(test.test) for test in _ifs_holding_jumps(node.body))

    def _leaves_rows_on_traced_test(self, node: ast.stmt) -> bool:
        """A loop over the rows of an array (``for v in x``, ``for i, v in enumerate(x)``) that
        breaks or continues on a traced condition: Python unrolls it (its length is static)
        and cannot leave it on a tracer. Iterated by index, it becomes a lax loop."""
        array = rows_iterated(node) if isinstance(node, ast.For) else None
        return array is not None and self.context.arrays.proven(array, self.context.values_at(node)) \
            and self._jumps_on_traced_test(node)  # type: ignore[arg-type]

    def plan(self, node: ast.For | ast.While, bound: set[str], loops: int,
             values: dict[str, Known] | None = None) -> None:
        context = self.context
        if isinstance(node, ast.For) and not is_range_call(node.iter, context.imports):
            return context.report(node, "it leaves a loop over an array's rows on a traced condition, which Python "
                                        "cannot do in a loop it unrolls", lowering=Lowering.BY_INDEX)
        if node.orelse:
            return context.report(node, "the loop has an `else:` clause", lowering=Lowering.JUMPS)
        segments, guards = split_guards(node.body)
        if not guards and self._chose_static(node, bound, loops):
            return None
        unguarded = [statement for segment in segments for statement in segment]
        found = loop_obstacle(unguarded)
        if found:
            lowering = Lowering.JUMPS if isinstance(found[0], ast.Break | ast.Continue) \
                else Lowering.RETURNS if returns_from_loop(context.function, node, context.imports) else None
            return context.report(node, found[1], found[0], lowering=lowering)
        if context.report_obstacle(node, body_obstacles(context, unguarded, node, loops)):
            return None
        for guard in guards:
            guard.boolean = is_boolean_valued(guard.node.test, context.imports)
        target: str | None = None
        if isinstance(node, ast.For):
            if not isinstance(node.target, ast.Name):
                return context.report(node, "the loop variable is not a single name")
            target = node.target.id
        flag = unique_name("stopped", context.taken) if any(g.kind is JumpKind.BREAK for g in guards) else None
        body, synthetic_ifs = self._nested_body(segments, guards, flag)
        copies = context.closure_copies([unguarded], _localized(unguarded, node))[0]
        starts: dict[str, str] = {}
        carry = self._carry(node, body, target, flag, bound, loops, context.reads_of(copies), starts)
        if carry is None:
            return None
        plan: LoopPlan | None
        if isinstance(node, ast.For):
            assert target is not None
            plan = self._fori_plan(node, carry, target)
            if plan is None:
                return None
            plan.target_bound = target in bound
            plan.statements = body
        else:
            if not carry:
                return context.report(node, "the body changes nothing the loop test reads")
            name = branch_name(node.test, False, context.taken).replace("_if_", "_while_", 1)
            plan = LoopPlan(node, LoopKind.WHILE, unique_name(name + "_body", context.taken), carry, body,
                            cond_name=name, boolean_test=is_boolean_valued(node.test, context.imports),
                            vector_test=context.sizes.least_rank(node.test) >= 1)
        plan.guards, plan.flag, plan.synthetic_ifs = guards, flag, synthetic_ifs
        plan.copies, plan.starts = copies, starts
        if "_" in (target, *carry):
            plan.placeholder = unique_name("_unused", context.taken)
        # The passes of a range loop that can break are counted in a name of their own when the
        # loop variable is rebound in the body (Python's next pass takes it from the range
        # whatever the body did) or read after the loop (it keeps the value of the pass that
        # broke, one behind the count).
        if flag and target and plan.kind is LoopKind.FORI:
            if target in assigned_names(node.body) or target in carry:
                plan.counter = unique_name(f"{target}_pass", context.taken)
            plan.cond_name = unique_name(f"_{target}_loop_continues", context.taken)
        plan.casts, plan.item_casts, held = self._carry_casts(plan, values or {})
        context.plans[node] = plan
        self.walk_body(body, set(carry), {target} if target else set(), loops, mark=True, values=dict(held))
        return None

    def _carry_casts(self, plan: LoopPlan, values: dict[str, Known]) -> tuple[
            dict[str, tuple[str, CarryCast]], dict[str, dict[str, tuple[str, CarryCast]]], dict[str, Signature]]:
        """The carries a pass may give another type, each with its dtype's name and cast; the
        same of the items of each dict carry a pass makes anew; and the type each carry holds
        in the body, where that is a type by itself."""
        starts: dict[str, ast.expr] = {name: ast.Name(id=start, ctx=ast.Load()) for name, start in plan.starts.items()}
        if plan.flag:
            starts[plan.flag] = ast.Constant(False)  # the flag of a break, set before the loop
        # A pytree has no one dtype: only a carry that is one array or number is cast (a lax
        # loop keeps the structure of its carry, so one value anywhere it is bound will do).
        one_value = self.context.arrays.one_value
        bound = _values_bound(plan.statements)
        carried = [name for name in plan.carry if name != plan.target and (
            one_value(ast.Name(id=name, ctx=ast.Load()))
            or _is_one_value(starts.get(name) or values.get(name), one_value)
            or any(one_value(value) for value in bound.get(name, [])))]
        items = self._carried_items(plan, starts)
        found, held = carry_casts([*carried, *items], plan.statements, plan.target, self.context.callees, values,
                                  {**starts, **{item: start for item, (_, _, start, _) in items.items()}},
                                  {item: given for item, (_, _, _, given) in items.items()})
        # Carries whose types are made of the same values share one dtype, named for the first.
        named: dict[tuple[str, ...], str] = {}
        casts: dict[str, tuple[str, CarryCast]] = {}
        item_casts: dict[str, dict[str, tuple[str, CarryCast]]] = {}
        for name, cast in found.items():
            if name in items:
                carrier, key, _, _ = items[name]
                cast = CarryCast(in_quotes(cast.sources, carrier, key), cast.each_pass)
                wanted = item_dtype_name(carrier, key)
                dtype = named.setdefault(tuple(cast.sources), unique_name(wanted, self.context.taken))
                item_casts.setdefault(carrier, {})[key] = (dtype, cast)
            else:
                dtype = named.setdefault(tuple(cast.sources), unique_name(f"{name}_dtype", self.context.taken))
                casts[name] = (dtype, cast)
        return casts, item_casts, held

    def _carried_items(self, plan: LoopPlan, starts: dict[str, ast.expr]) -> dict[
            str, tuple[str, str, ast.expr, list[ast.expr]]]:
        """The items of each dict, tuple or list carry that every pass binds only to a new one of its
        items (`st = {**st, "p": st["p"] + x}`, as dict writes are restructured; `t = (t[1],
        u)`), by their text in the types (`st['p']`): the carry, the source of the key, the
        item's start and the values passes give it. (How each carry is made anew goes to
        ``plan.layouts``.)"""
        bindings = bound_values(plan.statements)
        found: dict[str, tuple[str, str, ast.expr, list[ast.expr]]] = {}
        for name in plan.carry:
            updates = [updated_items(value, name) for value in bindings.get(name, [])]
            if not updates or any(update is None for update in updates):
                continue
            layout = container_layout(bindings[name])
            if layout is None:
                continue
            plan.layouts[name] = layout
            start = starts.get(name, ast.Name(id=name, ctx=ast.Load()))
            for key, value in chain.from_iterable(update for update in updates if update is not None):
                item = ast.unparse(item_of(name, key))
                text = source_segment(self.context.text, key) or ast.unparse(key)
                if item not in found:
                    start_item = item_of(start.id, key) if isinstance(start, ast.Name) else None
                    if start_item is None:
                        continue
                    found[item] = (name, text, start_item, [])
                found[item][3].append(value)
        return found

    def walk_body(self, body: list[ast.stmt], carry: set[str], targets: set[str], loops: int, mark: bool,
                  values: dict[str, Known] | None = None) -> None:
        """Plan inside a body that becomes a function: its carry and loop variables are its
        own names there, and tracers; what it returns is its carry (not its loop variables,
        which each pass is given). ``values``: the type of each carry, where known."""
        context = self.context
        outer, outer_returned = context.carried, context.returned
        context.carried = frozenset(outer | carry | targets)
        context.returned = frozenset(outer_returned | carry)
        if mark:
            context.mark_traced_inside(body)
        context.rewritten_loop_levels.append((len(context.rests), loops + 1))
        try:
            self.walk(body, carry | targets, False, loops + 1, values)
        finally:
            context.rewritten_loop_levels.pop()
            context.carried, context.returned = outer, outer_returned

    def _carry(self, node: ast.For | ast.While, body: list[ast.stmt], target: str | None, flag: str | None,
               bound: set[str], loops: int, copied_reads: set[str], starts: dict[str, str]) -> list[str] | None:
        """The names the body function takes and returns (None: reported why there are none);
        ``copied_reads``: what the helpers defined again in the body read when called;
        ``starts``: filled with the start of each carried name that has no value before the loop."""
        context = self.context
        assigned = assigned_names(body)
        test_reads = loaded_names([node.test]) if isinstance(node, ast.While) else set()
        live_after = {name for name in assigned if context.live_after(name, node, loops)}
        exposed = upward_exposed(body, live_after | test_reads | ({flag} if flag else set()))
        exposed |= copied_reads & assigned  # inputs of the body, as if it read them where they are called
        if flag:
            bound = bound | {flag}
        carry: list[str] = []
        for name in context.ordered(assigned | ({target} if target else set()), node):
            if name == target:
                if context.live_after(name, node, loops):
                    carry.append(name)
                continue
            if not (name in exposed or name in test_reads or name in live_after):
                continue  # a temporary of one iteration
            if name not in bound:
                start = None if name in test_reads else _start_of_unbound(name, body, bound)
                if start is None:
                    context.report(node, f"`{name}` is bound in the loop body but has no value before the loop, "
                                         "and is read after it: a loop that runs zero times leaves it unbound "
                                         f"(and the body binds it to no name with a value before the loop, "
                                         f"`x = {name}`, whose type its start could take)")
                    return None
                starts[name] = start
            carry.append(name)
        if any(start not in carry for start in starts.values()):
            context.report(node, f"`{next(iter(starts))}` is bound in the loop body but has no value before the "
                                 "loop, and is read after it: a loop that runs zero times leaves it unbound")
            return None
        if _static_non_numeric_carry(carry, node.body):
            context.report(node, "the loop carries a Python value that is not a number")
            return None
        for name in carry:
            growth = shape_growth(name, node.body, context.imports)
            if growth:
                where, how = growth
                context.report(node, f"`{name}` changes shape on every pass ({how}); a lax loop carries a "
                                     "fixed shape: preallocate it and write with `.at[i].set(...)`", where)
                return None
        if flag and flag not in carry:
            carry.append(flag)
        return carry

    def _chose_static(self, node: ast.For | ast.While, bound: set[str], loops: int) -> bool:
        """Apply the loop strategy: True when the loop stays and its bound becomes static, or
        is reported because a lax loop could not be differentiated. A loop that builds a list
        of one item per pass stays too: the list's length is a shape."""
        context = self.context
        options = context.options
        built = self._list_built(node, loops) if isinstance(node, ast.For) else None
        index_use = self._index_needed_in_python(node) if isinstance(node, ast.For) else None
        wants_static = options.loop_strategy == "static" or (options.loop_strategy == "auto" and options.differentiated) \
            or built is not None or index_use is not None
        if not wants_static:
            return False
        if isinstance(node, ast.While):
            if options.differentiated:
                context.report(node, "the function is differentiated, and `lax.while_loop` is not "
                                     "reverse-mode differentiable; bound the loop with a static trip count")
                return True
            return False
        names = self._static_bound_names(node)
        if names:
            if built is not None:
                why = f"it appends to `{built}` on each pass, and the list's length, a shape, is fixed while tracing"
            elif index_use is not None:
                why = f"{index_use}, which a lax loop's traced index cannot be"
            elif options.loop_strategy == "static":
                why = "loop-strategy = \"static\""
            else:
                why = "the function is differentiated, and a fori_loop with a traced trip count cannot be in reverse mode"
            context.static_requests[node] = StaticRequest(names, why, safe=built is not None or index_use is not None
                                                          or options.loop_strategy == "static")
            target = node.target.id if isinstance(node.target, ast.Name) else None
            self.walk(node.body, bound | ({target} if target else set()), False, loops + 1, None)
            return True
        if index_use is not None:
            context.report(node, f"{index_use}: a lax loop's index is traced; make the loop's bound static")
            return True
        if options.differentiated:
            context.report(node, "the function is differentiated, and `lax.fori_loop` with a traced trip "
                                 "count is not reverse-mode differentiable; make the bound a static argument")
            return True
        return False

    def _index_needed_in_python(self, node: ast.For) -> str | None:
        """Where the body needs the loop's index as a Python int -- a slice bound, a shape, the
        bounds of a `range`, an index into a Python list or tuple -- if it does: the index of a
        lax loop is a tracer, which none of them takes."""
        if not isinstance(node.target, ast.Name):
            return None
        index = node.target.id
        context = self.context
        segment = lambda part: source_segment(context.text, part) or ast.unparse(part)  # noqa: E731
        for child in own_nodes(node.body):
            for place, expr in static_places(child, context.imports.resolve, segment):
                if _reads(expr, index):
                    return f"its index `{index}` is needed as a Python int: {place} (line {expr.lineno})"
            if isinstance(child, ast.Subscript) and _reads(child.slice, index):
                held = context.python_container(child.value, self._statement_holding(node, child))
                if held in ("list", "tuple"):
                    return (f"its index `{index}` is needed as a Python int: an index into the Python {held} "
                            f"`{segment(child.value)}` (line {child.lineno})")
        return None

    @staticmethod
    def _statement_holding(loop: ast.For, node: ast.AST) -> ast.stmt | None:
        """The statement of the loop's body (at any depth) whose own expressions hold ``node``."""
        for statement in own_nodes(loop.body):
            if isinstance(statement, ast.stmt) and not hasattr(statement, "body") \
                    and any(part is node for part in ast.walk(statement)):
                return statement
        return None

    def _list_built(self, node: ast.For, loops: int) -> str | None:
        """A list the loop's body appends to (``out.append(v)``) that code after the loop
        reads: it ends as long as the loop's trip count, which a lax loop cannot give it."""
        for child in own_nodes(node.body):
            for call in method_changes(child):
                method = call.func
                if isinstance(method, ast.Attribute) and method.attr in ("append", "extend", "insert") \
                        and isinstance(method.value, ast.Name) and self.context.live_after(method.value.id, node, loops):
                    return method.value.id
        return None

    def _static_bound_names(self, node: ast.For) -> list[str] | None:
        """The parameters that set a range loop's trip count, when each is a parameter of a
        jitted function used as it came in (so `static_argnames` can make it static)."""
        context = self.context
        values = context.values_at(node)
        names: list[str] = []
        for arg in _range_arguments(node):
            bound = _without_int(arg)
            if not values.is_traced(bound):
                continue
            if not (isinstance(bound, ast.Name) and bound.id in context.options.staticable):
                return None
            if bound.id in assigned_names(context.function.body):
                return None  # rebound: its value at the loop is not the argument's
            names.append(bound.id)
        return names or None

    def _nested_body(self, segments: list[list[ast.stmt]], guards: list[Guard],
                     flag: str | None) -> tuple[list[ast.stmt], list[ast.If]]:
        """The body as ifs: what follows a guard runs only when the guard does not fire."""
        synthetic_ifs: list[ast.If] = []

        def make_flag(guard: Guard) -> ast.stmt:
            assert flag is not None  # a break guard sets the flag
            assign = ast.Assign(targets=[ast.Name(id=flag, ctx=ast.Store())], value=guard.node.test)
            return ast.copy_location(assign, guard.node)

        def make_if(guard: Guard, test_is_flag: bool, inner: list[ast.stmt]) -> ast.stmt:
            test = guard.node.test
            if test_is_flag:
                assert flag is not None
                test = ast.copy_location(ast.Name(id=flag, ctx=ast.Load()), guard.node)
            synthetic = ast.copy_location(ast.If(test=test, body=[], orelse=inner), guard.node)
            synthetic.end_lineno, synthetic.end_col_offset = guard.node.end_lineno, guard.node.end_col_offset
            self.context.forced_ifs.add(synthetic)
            synthetic_ifs.append(synthetic)
            return synthetic

        return nest_guards(segments, guards, flag, make_if, make_flag), synthetic_ifs

    def _fori_plan(self, node: ast.For, carry: list[str], target: str) -> LoopPlan | None:
        context = self.context
        args = _range_arguments(node)
        step: int | None
        if len(args) == 1:
            lower, upper, step = None, args[0], 1
        elif len(args) in (2, 3):
            lower, upper = args[0], args[1]
            step = 1 if len(args) == 2 else literal_int(args[2])
            if step is None:
                context.report(node, "the step of `range` is not a literal; the trip count needs it")
                return None
            if step == 0:
                context.report(node, "`range` with step 0 raises")
                return None
        else:
            context.report(node, "`range` called with an unexpected number of arguments")
            return None
        truncate = isinstance(upper, ast.Call) and isinstance(upper.func, ast.Name) and upper.func.id == "int"
        name = unique_name(f"_{target}_loop_body", context.taken)
        return LoopPlan(node, LoopKind.FORI, name, carry, node.body, lower=lower, upper=_without_int(upper),
                        step=step, target=target, truncate_upper=truncate)


def _values_bound(statements: Sequence[ast.stmt], last: dict[str, ast.expr] | None = None,
                  found: dict[str, list[ast.expr]] | None = None) -> dict[str, list[ast.expr]]:
    """The values each name is assigned in ``statements`` (`b, a = a, b + b` binds `b` to
    `a`); a name read as the value is, where a straight run of statements before bound it,
    that value too (`a = m * 2` then `b = a`: `b` is given `m * 2`)."""
    last = dict(last or {})
    found = {} if found is None else found
    for statement in statements:
        if isinstance(statement, ast.Assign):
            pairs = [pair for target in statement.targets for pair in paired_values(target, statement.value)]
            reaching = [(name, value, last.get(value.id) if isinstance(value, ast.Name) else None)
                        for name, value in pairs]
            for name, value, reached in reaching:
                found.setdefault(name, []).extend([value] if reached is None else [value, reached])
            for name in assigned_names([statement]):
                last.pop(name, None)
            last.update((name, reached or value) for name, value, reached in reaching)
            continue
        if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):  # (their own scope)
            for block in nested_blocks(statement):
                _values_bound(block, last, found)
        for name in assigned_names([statement]):
            last.pop(name, None)
    return found


def _is_one_value(known: Known | None, one_value: Callable[[ast.expr], bool]) -> bool:
    """Whether what is known of a name before the loop says it is one array or number."""
    return isinstance(known, Signature) or (known is not None and one_value(known))


def _start_of_unbound(name: str, body: list[ast.stmt], bound: set[str]) -> str | None:
    """What a carry with no value before the loop may start as: a name with a value before the
    loop that the body binds to it last (``x = x_new``), so a lax loop gives both one type."""
    statements = [node for node in own_nodes(body) if isinstance(node, ast.stmt)]
    aliases = [node for node in statements if isinstance(node, ast.Assign)
               and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
               and node.targets[0].id in bound and isinstance(node.value, ast.Name) and node.value.id == name]
    for alias in aliases:
        other = alias.targets[0].id  # type: ignore[attr-defined]
        if not any(getattr(node, "lineno", 0) > alias.lineno and other in assigned_names([node])
                   for node in statements if not isinstance(node, ast.If | ast.For | ast.While)):
            return other
    return None


def _static_non_numeric_carry(carry: list[str], body: list[ast.stmt]) -> bool:
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and not isinstance(node.value.value, bool | int | float | complex):
            if any(name in carry for target in node.targets for name in target_names(target)):
                return True
    return False


def _range_arguments(node: ast.For) -> list[ast.expr]:
    """The arguments of ``range(...)`` in ``for i in range(...)`` (the loop is known to be one)."""
    assert isinstance(node.iter, ast.Call)
    return node.iter.args


def _without_int(expr: ast.expr) -> ast.expr:
    """``int(n)`` -> ``n``: a traced bound is made an integer by the rewrite instead."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "int" \
            and len(expr.args) == 1 and not expr.keywords:
        return expr.args[0]
    return expr


# -- writing ---------------------------------------------------------------------------------


def _grouped(text: str) -> str:
    """``text`` safe to use as an operand of ``-``, ``//`` or ``!=``: as it is when it binds
    tighter than any of them (a name, a number, a call, an attribute, a subscript)."""
    if text.isidentifier() or text.lstrip("-").isdigit():
        return text
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return f"({text})"
    return text if isinstance(node, ast.Call | ast.Attribute | ast.Subscript) else f"({text})"


def _difference(first: str, second: str) -> str:
    """``first - second``, simplified when ``second`` is a literal."""
    if second.lstrip("-").isdigit():
        value = int(second)
        if value == 0:
            return first
        return f"{_grouped(first)} {'-' if value > 0 else '+'} {abs(value)}"
    return f"{_grouped(first)} - {_grouped(second)}"


def _ceil_divide(span: str, step: int) -> str:
    """The number of iterations of a span counted in steps: ``(span + step - 1) // step``."""
    if step == 1:
        return span
    # Fold a literal at the end of the span into the rounding term: (n - 1 + 1) // 2 -> n // 2.
    head, _, tail = span.rpartition(" ")
    constant = step - 1
    if head.endswith((" -", " +")) and tail.isdigit():
        constant += int(tail) if head.endswith("+") else -int(tail)
        span = head[:-2]
    if constant == 0:
        return f"{_grouped(span)} // {step}"
    return f"({span} {'+' if constant > 0 else '-'} {abs(constant)}) // {step}"


def carry_source(plan: LoopPlan, jnp: str) -> str:
    """The carry a pass returns, as one expression: ``total`` or ``(total, count)``, each
    carry a pass may narrow cast to its type."""
    names = [cast_carry(plan, name, name, jnp, each_pass=True) for name in plan.carry]
    if len(names) == 1:
        return names[0]
    return f"({', '.join(names)})" if names else "None"


def initial_carry(plan: LoopPlan, jnp: str, starts: dict[str, str] | None = None) -> str:
    """The carry the loop starts with, as one expression: each name, or its start where it has
    no value before the loop (``plan.starts``, and ``starts``), cast as ``carry_source``."""
    starts = {**plan.starts, **(starts or {})}
    names = [cast_carry(plan, name, starts.get(name, name), jnp) for name in plan.carry]
    if len(names) == 1:
        return names[0]
    return f"({', '.join(names)})" if names else "None"


def cast_carry(plan: LoopPlan, name: str, value: str, jnp: str, each_pass: bool = False) -> str:
    """``value`` cast to the type of carry ``name`` (a start; with ``each_pass``, what a pass
    returns), where it needs one; a dict or tuple carry, as a new one of its items cast."""
    items = {key: dtype for key, (dtype, cast) in plan.item_casts.get(name, {}).items()
             if cast.each_pass or not each_pass}
    if items:
        return rebuilt(value, items, plan.layouts[name], jnp)
    if name not in plan.casts:
        return value
    dtype, cast = plan.casts[name]
    return f"{jnp}.asarray({value}, {dtype})" if cast.each_pass or not each_pass else value


def carry_dtypes(plan: LoopPlan, jnp: str) -> list[cst.BaseStatement]:
    """``total_dtype = jnp.result_type(total, n, 0.0)``: before the loop, for each cast carry."""
    every = chain(plan.casts.values(), chain.from_iterable(items.values() for items in plan.item_casts.values()))
    lines = {dtype: cast.sources for dtype, cast in every}
    return [cst.parse_statement(f"{dtype} = {jnp}.result_type({', '.join(sources)})\n")
            for dtype, sources in lines.items()]


def carry_parameter(plan: LoopPlan) -> str:
    return plan.carry[0] if len(plan.carry) == 1 else "carry"


def unpack_carry(plan: LoopPlan, used: set[str] | None = None) -> list[cst.BaseStatement]:
    """``a, b = carry`` (names a function does not read become ``_``)."""
    if len(plan.carry) < 2:
        return []
    unused = plan.placeholder
    names = [name if used is None or name in used else unused for name in plan.carry]
    if plan.kind is LoopKind.FORI and plan.target in plan.carry:
        names = [unused if name == plan.target else name for name in names]  # set from the index
    return [cst.parse_statement(f"{', '.join(names)} = carry\n")]


def separate_first_def(prologue: list[cst.BaseStatement], body: list[cst.BaseStatement]) -> None:
    """A def the body starts with gets a blank line after the generated unpacking."""
    if prologue and body and isinstance(body[0], cst.FunctionDef) and not body[0].leading_lines:
        body[0] = body[0].with_changes(leading_lines=[blank_line()])


class LoopRenderer:
    """Writes planned range and while loops; the statements of their bodies through ``block``."""

    def __init__(self, context: RenderContext, block: BlockRenderer):
        self.context = context
        self.block = block

    def render(self, plan: LoopPlan, statement: cst.For | cst.While, depth: int,
               after_code: bool) -> list[cst.BaseStatement]:
        if isinstance(statement, cst.For):
            generated = self._render_fori(plan, statement, depth)
        else:
            generated = self._render_while(plan, statement, depth)
        return lay_out(generated, statement, after_code)

    def _restructured(self, plan: LoopPlan, statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """The libcst body cut at its break/continue guards and nested as the plan's ifs."""
        if not plan.guards:
            return list(statements)
        by_guard = {id(guard.node): guard for guard in plan.guards}
        segments: list[list[cst.BaseStatement]] = [[]]
        guard_statements: dict[int, cst.If] = {}
        for statement, analysed in pair_statements(statements, plan.node.body):
            if analysed and id(analysed[0]) in by_guard and isinstance(statement, cst.If):
                guard_statements[id(analysed[0])] = statement
                segments.append([])
            else:
                segments[-1].append(statement)
        jnp = self.context.name("jax.numpy")
        flag = plan.flag or ""

        def make_flag(guard: Guard) -> cst.BaseStatement:
            written = guard_statements[id(guard.node)]
            test = code(written.test.with_changes(lpar=[], rpar=[]) if written.test.lpar else written.test)
            value = test if guard.boolean else f"{jnp}.asarray({test}, bool)"
            assignment = cst.parse_statement(f"{flag} = {value}\n")
            changes: dict[str, object] = {"leading_lines": written.leading_lines}
            header = getattr(written.body, "header", None)
            if header is not None and header.comment is not None:  # `if c:  # why` keeps its why
                changes["trailing_whitespace"] = header
            return assignment.with_changes(**changes)

        def make_if(guard: Guard, test_is_flag: bool, inner: list[cst.BaseStatement]) -> cst.BaseStatement:
            written = guard_statements[id(guard.node)]
            test = cst.Name(flag) if test_is_flag else written.test
            return cst.If(test=test, body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])]),
                          orelse=cst.Else(body=cst.IndentedBlock(body=inner)),
                          leading_lines=[] if test_is_flag else written.leading_lines)

        return nest_guards(segments, plan.guards, plan.flag, make_if, make_flag)

    def _body_def(self, name: str, parameters: str, block: cst.BaseSuite, prologue: list[cst.BaseStatement],
                  plan: LoopPlan, depth: int, epilogue: list[cst.BaseStatement] | None = None,
                  returned: str | None = None) -> cst.FunctionDef:
        assert isinstance(block, cst.IndentedBlock)
        body = self.block(self._restructured(plan, block.body), plan.statements, depth + 1)
        body += epilogue or []
        if returned is None:
            returned = carry_source(plan, self.context.name("jax.numpy")) if plan.carry else "carry"
            if len(plan.carry) > 1:
                returned = returned[1:-1]
        body = self.context.with_copies(plan.copies, body)
        separate_first_def(prologue, body)
        statements = [*prologue, *body, self.context.returned(returned, depth + 1)]
        template = cst.parse_statement(f"def {name}({parameters}):\n    pass\n")
        assert isinstance(template, cst.FunctionDef)
        return template.with_changes(body=block.with_changes(body=statements))

    def _loop_call(self, plan: LoopPlan, function: str, arguments: list[str], depth: int) -> cst.BaseStatement:
        prefix = f"{', '.join(plan.carry)} = " if plan.carry else ""
        return self.context.call(prefix, function, arguments, depth)

    # -- fori_loop ---------------------------------------------------------------------------

    def _bound(self, node: ast.expr | None, truncate: bool, default: str) -> str:
        text = self.context.source(node, default)
        if truncate:
            jnp = self.context.name("jax.numpy")
            return f"{jnp}.asarray({text}).astype({jnp}.int32)"
        return text

    def _render_fori(self, plan: LoopPlan, statement: cst.For, depth: int) -> list[cst.BaseStatement]:
        lower = self._bound(plan.lower, False, "0")
        upper = self._bound(plan.upper, plan.truncate_upper, "0")
        if plan.flag:
            return self._render_range_with_break(plan, statement, depth, lower, upper)
        index = plan.target or "i"
        prologue = unpack_carry(plan)
        start = lower
        if plan.step != 1:
            # Count iterations from 0; the loop variable is computed from the count.
            step, counter = plan.step, "iteration"
            offset = counter if abs(step) == 1 else f"{counter} * {abs(step)}"
            sign = "+" if step > 0 else "-"
            value = offset if lower == "0" and step > 0 else f"{lower} {sign} {offset}"
            prologue = [*prologue, cst.parse_statement(f"{index} = {value}\n")]
            first, last = (upper, lower) if step > 0 else (lower, upper)
            upper = _ceil_divide(_difference(first, last), abs(step))
            lower, index = "0", counter
        parameters = f"{index}, {carry_parameter(plan)}"
        body = self._body_def(plan.body_name, parameters, statement.body, prologue, plan, depth)
        # The loop variable, read after the loop only when it ran (eager Python raises
        # otherwise): any start will do.
        jnp = self.context.name("jax.numpy") if plan.casts_carries else ""
        initial = initial_carry(plan, jnp, {plan.target: start} if plan.target and not plan.target_bound else None)
        call = self._loop_call(plan, f"{self.context.name('jax.lax')}.fori_loop",
                               [lower, upper, plan.body_name, initial], depth)
        return [*carry_dtypes(plan, jnp), body, call]

    def _render_range_with_break(self, plan: LoopPlan, statement: cst.For, depth: int, lower: str,
                                 upper: str) -> list[cst.BaseStatement]:
        """A range loop that can break: a while_loop over (index, carry..., stop flag)."""
        jnp = self.context.name("jax.numpy")
        index = plan.counter or plan.target or "i"
        names = [index, *plan.carry]
        compare = "<" if plan.step > 0 else ">"
        cond_unpack = ", ".join(name if name in (index, plan.flag) else plan.placeholder for name in names)
        cond = cst.parse_statement(
            f"def {plan.cond_name}(carry):\n    {cond_unpack} = carry\n"
            f"    return {jnp}.logical_and({index} {compare} {upper}, {jnp}.logical_not({plan.flag}))\n")
        unpack: list[cst.BaseStatement] = [cst.parse_statement(f"{', '.join(names)} = carry\n")]
        if plan.counter:
            unpack.append(cst.parse_statement(f"{plan.target} = {plan.counter}\n"))
        step = f"+ {plan.step}" if plan.step > 0 else f"- {-plan.step}"
        epilogue: list[cst.BaseStatement] = [cst.parse_statement(f"{index} = {index} {step}\n")]
        returned = [index, *(cast_carry(plan, name, name, jnp, each_pass=True) for name in plan.carry)]
        body = self._body_def(plan.body_name, "carry", statement.body, unpack, plan, depth, epilogue,
                              returned=", ".join(returned))
        start = cst.parse_statement(f"{plan.flag} = False\n")
        # The loop variable read after the loop starts as its value before it, if it has one
        # (else it is read only when the loop ran: any start will do).
        starts = {**plan.starts, **({plan.target: lower} if plan.target and not plan.target_bound else {})}
        initial = [cast_carry(plan, name, starts.get(name, name), jnp) for name in plan.carry]
        call = self.context.call(f"{', '.join(names)} = ", f"{self.context.name('jax.lax')}.while_loop",
                                 [plan.cond_name or "", plan.body_name, f"({', '.join([lower, *initial])})"], depth)
        return [*carry_dtypes(plan, jnp), start, cond, body, call]

    # -- while_loop --------------------------------------------------------------------------

    def _render_while(self, plan: LoopPlan, statement: cst.While, depth: int) -> list[cst.BaseStatement]:
        test = self._test_source(plan, statement)
        if plan.vector_test:  # Python took the truth of its one element; while_loop wants a scalar
            test = f"{self.context.name('jax.numpy')}.squeeze({test})"
        start: list[cst.BaseStatement] = []
        if plan.flag:  # a break ends the loop through the flag
            jnp = self.context.name("jax.numpy")
            always = isinstance(statement.test, cst.Name) and statement.test.value == "True"  # `while True:`
            test = f"{jnp}.logical_not({plan.flag})" if always else \
                f"{jnp}.logical_and({test}, {jnp}.logical_not({plan.flag}))"
            start = [cst.parse_statement(f"{plan.flag} = False\n")]
        assert isinstance(plan.node, ast.While)
        test_reads = {node.id for node in ast.walk(plan.node.test) if isinstance(node, ast.Name)}
        if plan.flag:
            test_reads.add(plan.flag)
        parameter = carry_parameter(plan)
        cond_body = [*unpack_carry(plan, test_reads), cst.parse_statement(f"return {test}\n")]
        cond_template = cst.parse_statement(f"def {plan.cond_name}({parameter}):\n    pass\n")
        assert isinstance(cond_template, cst.FunctionDef)
        cond = cond_template.with_changes(body=cond_template.body.with_changes(body=cond_body))
        body = self._body_def(plan.body_name, parameter, statement.body, unpack_carry(plan), plan, depth)
        jnp = self.context.name("jax.numpy") if plan.casts_carries else ""
        call = self._loop_call(plan, f"{self.context.name('jax.lax')}.while_loop",
                               [plan.cond_name or "", plan.body_name, initial_carry(plan, jnp)], depth)
        return [*carry_dtypes(plan, jnp), *start, cond, body, call]

    @staticmethod
    def _test_source(plan: LoopPlan, statement: cst.While) -> str:
        test = code(statement.test.with_changes(lpar=[], rpar=[])) if statement.test.lpar else code(statement.test)
        if plan.boolean_test:
            return test
        return f"{_grouped(test)} != 0"


def _reads(expr: ast.AST, name: str) -> bool:
    return any(isinstance(part, ast.Name) and part.id == name for part in ast.walk(expr))
