"""An ``if`` on a traced value as branch functions and a ``lax.cond``: the plan, and the code.

Two forms:

* **assign**: the branches bind names. Each branch becomes a function that returns the
  names bound in either branch and read afterwards (the *outputs*); the names a branch
  needs from before the ``if`` -- read before it binds them, or kept unchanged because the
  branch does not bind them -- are passed in (the *operands*). A name bound in one branch
  only, with no value before the ``if``, cannot be returned by the other branch: reported.
* **return**: a branch returns. When the ``if`` is the function's last word (every later
  statement is part of what it decides), the rest of the function joins the branch that
  falls through, each branch returns, and the function returns the ``lax.cond``.

An assign may be a **switch**: an ``elif`` chain whose tests each compare one value with a
number (``kind == 0``, ``kind == 1``) has a branch per case and one for its ``else``, chosen by
``lax.switch`` of ``jnp.select`` of the tests (``switch_cases``).

Anything a branch function cannot hold (``yield``, ``global``, ``raise``, writes into outer
objects) is reported with the reason, and the code is left as it is. The branch bodies are
the user's own statements (comments, blank lines and formatting kept); only the ``def``
lines, the ``return`` of the outputs and the ``lax.cond`` call are new.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain

from jitfix.analysis.blocks import (
    always_leaves,
    assigned_names,
    contains_return,
    definitely_assigned,
    framework_obstacles,
    loaded_names,
    obstacles,
    own_nodes,
    returns_with_paths,
    target_names,
    upward_exposed,
)
from jitfix.control_flow.context import UNPROVEN_OPERAND, BlockWalker, PlanContext
from jitfix.control_flow.lowering_checks import checking_lowered
from jitfix.control_flow.continuation import continuable
from jitfix.control_flow.loop_returns import returns_from_loop
from jitfix.control_flow.plans import Branch, IfForm, IfPlan, Lowering, ProblemKind
from jitfix.control_flow.render_context import BlockRenderer, RenderContext, StatementPairs
from jitfix.control_flow.result_types import (
    BOOLEAN,
    FIXED_TYPES,
    Callees,
    Known,
    Layout,
    Signature,
    Signatures,
    arms_to_cast,
    as_spelled,
    bound_values,
    container_layout,
    dtype_sources,
    helper_item,
    in_quotes,
    item_dtype_name,
    item_of,
    known_reads,
    paired_values,
    rebuilt,
    resolved_after,
    returned_width,
    updated_items,
)
from jitfix.cst_text import code, cst, lay_out, suite_statements
from jitfix.findings import EditError
from jitfix.naming import branch_name, case_name, default_name, unique_name
from jitfix.segments import source_segment

# Statements of the rest of a function that may be copied into both branches.
MAX_DUPLICATED_REST = 2


@dataclass(frozen=True)
class _Call:
    """A call of a helper whose body is being read: what it gives each parameter, the
    statements before it, and what calls there run (and the call that runs that body)."""

    arguments: dict[str, ast.expr]
    earlier: list[ast.stmt]
    callees: Callees
    caller: _Call | None


class IfPlanner:
    """Plans the traced ifs of one function."""

    def __init__(self, context: PlanContext, walk: BlockWalker, becomes_lax: Callable[[ast.stmt], bool]):
        self.context = context
        self.walk = walk
        self.becomes_lax = becomes_lax  # whether a loop becomes a lax loop (else Python runs it)

    def is_traced(self, node: ast.If) -> bool:
        context = self.context
        if node in context.forced_ifs:  # made from a traced break/continue guard
            return True
        values = context.values_at(node)
        if not values.is_traced(node.test):
            return False
        if context.arrays.certain_truth(node.test, values):
            return True
        if checking_lowered.get() or context.arrays.raises_on_truth(node.test, values):
            # Left as it is; but a lowering must not count on it, and a test that certainly
            # raises is said to.
            context.report(node, UNPROVEN_OPERAND)
        return False

    def plan(self, node: ast.If, rest: list[ast.stmt], bound: set[str], tail: bool, loops: int,
             values: dict[str, Known]) -> bool:
        """Plan one traced if; True when it absorbs the rest of the block."""
        size = self.context.sizes.size(node.test)
        if size is not None and size > 1:
            self.context.non_scalar.append((node, size))
            return False
        if contains_return(node.body) or contains_return(node.orelse):
            # (A chain of cases that returns stays nested `lax.cond`s: the casts of what its
            # returns give, across the continuations made of the code after it, are followed
            # pair by pair; the fuzzer found a switch of them left uncast.)
            return self._plan_return(node, rest, bound, tail, values)
        cases = [] if node in self.context.forced_ifs else switch_cases(node)
        blocks = [*(case.body for case in cases), cases[-1].orelse] if cases else [node.body, node.orelse]
        self._plan_assign(node, cases, blocks, bound, loops, values)
        return False

    def _vector_tests(self, ifs: list[ast.If]) -> frozenset[int]:
        """The tests (by id) that have a dimension or more: Python takes the truth of one
        element, `lax.cond` wants a scalar, so the rewrite squeezes them."""
        return frozenset(id(node.test) for node in ifs if self.context.sizes.least_rank(node.test) >= 1)

    def _branches(self, node: ast.If, cases: list[ast.If], blocks: list[list[ast.stmt]],
                  falls: list[bool]) -> list[Branch]:
        """A branch per block, named for its test (``with_rest``: the block takes the rest)."""
        taken = self.context.taken
        if cases:
            selector = selector_of(cases[0].test)
            assert selector is not None
            names = [case_name(selector, _case_value(case.test), taken) for case in cases] \
                + [default_name(selector, taken)]
        else:
            names = [branch_name(node.test, False, taken), branch_name(node.test, True, taken)]
        return [Branch(name, block, fall) for name, block, fall in zip(names, blocks, falls)]

    def _walk_branches(self, branches: list[Branch], operands: list[str], tail: bool, loops: int,
                       values: dict[str, Known]) -> None:
        """Plan inside the branches; each starts with the literals names held before the if."""
        context = self.context
        outer = context.operands
        context.operands = outer | set(operands)
        try:
            for branch in branches:
                context.mark_traced_inside(branch.statements)
                self.walk(branch.statements, set(operands), tail, loops, values)
        finally:
            context.operands = outer

    def _first_obstacle(self, node: ast.If, blocks: list[list[ast.stmt]], allow_return: bool,
                        uncopyable: list[tuple[ast.AST, str]], read_after=lambda name: False) -> bool:
        imports = self.context.imports
        found = [obstacle for block in blocks
                 for obstacle in chain(obstacles(block, allow_return, set(imports.aliases), read_after, imports.resolve),
                                       framework_obstacles(block, imports.resolve))]
        changes = [change for block in blocks for change in [*self.context.changes_by_calls(block),
                                                             *self.context.declared_names_bound(block)]]
        return self.context.report_obstacle(node, found + changes + uncopyable)

    def _copies(self, blocks: list[list[ast.stmt]]) -> tuple[list[ast.stmt], list[tuple[ast.AST, str]]]:
        """The helpers to define again in the branch functions (see PlanContext.closure_copies)."""
        return self.context.closure_copies(blocks, set().union(*(assigned_names(block) for block in blocks)))

    def _plan_assign(self, node: ast.If, cases: list[ast.If], blocks: list[list[ast.stmt]], bound: set[str],
                     loops: int, values: dict[str, Known]) -> None:
        context = self.context
        copies, uncopyable = self._copies(blocks)
        if self._first_obstacle(node, blocks, allow_return=False, uncopyable=uncopyable,
                                read_after=lambda name: context.live_after(name, node, loops)):
            return
        assigned = set().union(*(assigned_names(block) for block in blocks))
        outputs = [name for name in context.ordered(assigned, node) if context.live_after(name, node, loops)]
        needed: set[str] = set()
        for name in outputs:
            for index, block in enumerate(blocks):
                if name not in definitely_assigned(block):
                    if name not in bound:
                        return context.report(
                            node, f"`{name}` has no value {_taken_when(cases, index)}: it is bound in one "
                            "branch only and not before the `if`, so the other branch has nothing to return")
                    needed.add(name)
        for block in blocks:
            needed |= upward_exposed(block, set(outputs)) & assigned_names(block) & bound
            needed |= self.context.reads_of(copies) & assigned_names(block) & bound
        for name in outputs:
            if _static_non_numeric(name, blocks):
                return context.report(node, f"`{name}` is set to a Python value that is not a number; "
                                            "`lax.cond` can only choose between arrays")
        operands = context.ordered(needed, node)
        branches = self._branches(node, cases, blocks, [False] * len(blocks))
        plan = IfPlan(node, IfForm.ASSIGN, branches, operands, outputs, cases=cases, copies=copies,
                      vector_tests=self._vector_tests(cases or [node]))
        self._plan_casts_assign(plan, values)
        context.plans[node] = plan
        self._walk_branches(branches, operands, tail=False, loops=loops, values=values)

    def _plan_return(self, node: ast.If, rest: list[ast.stmt], bound: set[str], tail: bool,
                     values: dict[str, Known]) -> bool:
        context = self.context
        if not tail:
            lowering = Lowering.CONTINUATION if continuable(context.function, node) \
                else Lowering.RETURNS if returns_from_loop(context.function, node, context.imports) else None
            context.report(node, "a branch returns, but the `if` is inside a loop or block with more code "
                                 "after it; only an `if` whose branches end the function becomes a `lax.cond`",
                           lowering=lowering, kind=ProblemKind.RETURN_BEFORE_MORE_CODE)
            return False
        blocks = [node.body, node.orelse]
        falls = [not always_leaves(block) for block in blocks]
        if sum(falls) > 1 and rest:
            if len(rest) > MAX_DUPLICATED_REST or any(not _is_simple(s) for s in rest):
                context.report(node, "both branches can fall through to the code after the `if` "
                                     "as well as return; restructure so one branch returns",
                               lowering=Lowering.CONTINUATION)
                return False
        arms = [block + (rest if fall else []) for block, fall in zip(blocks, falls)]
        for index, statements in enumerate(arms):
            if not always_leaves(statements):
                context.report(node, f"the function returns nothing {_taken_when([], index)}; "
                                     "`lax.cond` needs a value from each branch")
                return False
        copies, uncopyable = self._copies(arms)
        if self._first_obstacle(node, arms, allow_return=True, uncopyable=uncopyable):
            return False
        returned = [statement.value for statements in arms for statement in own_nodes(statements)
                    if isinstance(statement, ast.Return) and statement.value is not None]
        if any(not _same_structure(returned[0], value) for value in returned[1:]):
            context.report(node, "the branches return containers of different structures (`{}` on one path, a dict "
                                 "with items on another), which one `lax.cond` cannot return")
            return False
        needed: set[str] = set()
        for statements in arms:
            needed |= upward_exposed(statements) & assigned_names(statements) & bound
            needed |= self.context.reads_of(copies) & assigned_names(statements) & bound
        operands = context.ordered(needed, node)
        branches = self._branches(node, [], arms, [fall and bool(rest) for fall in falls])
        plan = IfPlan(node, IfForm.RETURN, branches, operands, [], copies=copies,
                      vector_tests=self._vector_tests([node]))
        self._plan_casts_return(plan, values)
        differing = self._uncast_return_types(plan, values)
        if differing:
            context.report(node, f"the function returns {differing} as values of different types on different "
                                 "paths (an int on one, a float on another), which one `lax.cond` cannot return; "
                                 "give them one type (`jnp.asarray(v, jnp.float32)`) where they are returned")
            return False
        context.plans[node] = plan
        self._walk_branches(branches, operands, tail=True, loops=0, values=values)
        return True

    # -- result types ----------------------------------------------------------------------

    def _plan_casts_assign(self, plan: IfPlan, values: dict[str, Known]) -> None:
        for name in plan.outputs:
            final = [self._final_values(branch.statements, name, values) for branch in plan.branches]
            arms = [arm for arm in final if arm is not None]
            if len(arms) == len(final):
                self._plan_cast(plan, name, arms, f"{name}_dtype", values)
                found = self._items(name, arms), container_layout(chain.from_iterable(arms))
            else:
                found = self._items_by_path(plan, name, values)
            items, layout = found
            for key, item_arms in items.items():
                if self._plan_cast(plan, f"{name}[{key}]", item_arms, item_dtype_name(name, key), values):
                    plan.items.setdefault(name, []).append(key)
                    assert layout is not None  # (see _items)
                    plan.layouts[name] = layout
                    dtype_name, sources = plan.dtypes[f"{name}[{key}]"]
                    plan.dtypes[f"{name}[{key}]"] = (dtype_name, in_quotes(sources, name, key))

    def _items_by_path(self, plan: IfPlan, name: str, values: dict[str, Known]
                       ) -> tuple[dict[str, list[list[ast.expr | Signature]]], Layout | None]:
        """A dict, tuple or list output the branches bind only to new ones of its items, where
        what they leave in it cannot be written before the if (`t = (t[1], t[0] + 2.0)` then
        `t = (m - 1, t[1])`): each item's type after each branch, path by path, by the source
        of its key. Only items one of whose values is certainly one number or array (a pytree
        has no one dtype)."""
        bound = [value for branch in plan.branches
                 for value in bound_values(branch.statements).get(name, [])]
        updates = [updated_items(value, name) for value in bound]
        layout = container_layout(bound)
        if not bound or layout is None or any(update is None for update in updates):
            return {}, None
        keys: dict[str, tuple[ast.Constant, bool]] = {}
        for key, item in chain.from_iterable(update for update in updates if update is not None):
            text = source_segment(self.context.text, key) or (
                f'"{key.value}"' if isinstance(key.value, str) else str(key.value))
            certain = keys.get(text, (key, False))[1] or self._one_value(item, values, plan.node)
            keys[text] = (key, certain)
        found: dict[str, list[list[ast.expr | Signature]]] = {}
        for text, (key, certain) in keys.items():
            arms = [resolved_after(item_of(name, key), branch.statements, self.context.callees, values)
                    for branch in plan.branches]
            if certain and all(arm is not None for arm in arms):
                found[text] = [[arm] for arm in arms if arm is not None]
        return found, layout

    def _items(self, name: str, arms: list[list[ast.expr | Signature]]) -> dict[str, list[list[ast.expr | Signature]]]:
        """A dict, tuple or list output's items by the source of their key (`"p"`, `1`), each with
        what each branch may leave in it, where every value the branches leave in ``name`` is
        its value before the if or a new one of its items (`{**st, "p": st["p"] + y}`, as dict
        writes are restructured; `(t[1], t[0] + y)`) -- new tuples or lists all of one length, as
        `lax.cond` needs one structure; empty for anything else."""
        written: dict[str, ast.Constant] = {}
        given: dict[int, dict[object, ast.expr]] = {}  # for each new dict or tuple, by key
        if container_layout(chain.from_iterable(arms)) is None:
            return {}
        for candidate in chain.from_iterable(arms):
            if isinstance(candidate, ast.Name) and candidate.id == name:
                continue
            items = updated_items(candidate, name)
            if items is None:
                return {}
            given[id(candidate)] = {key.value: value for key, value in items}
            for key, _ in items:
                written.setdefault(source_segment(self.context.text, key) or ast.unparse(key), key)

        def item(candidate: ast.expr | Signature, key: ast.Constant) -> ast.expr | Signature:
            return given.get(id(candidate), {}).get(key.value) or item_of(name, key)

        return {text: [[item(candidate, key) for candidate in arm] for arm in arms] for text, key in written.items()}

    def _plan_casts_return(self, plan: IfPlan, values: dict[str, Known]) -> None:
        """Casts of what the branches return: each `return` on their paths (in inner ifs too)
        whose value -- or item of the tuple it returns, where all are tuple displays of one
        length -- may differ in type from another's is cast to the type that holds them all
        (`return a, jnp.asarray(k, k_dtype)` where `k` is an int on one path and a float on
        another). A return an outer if already casts is left to it."""
        returns = [found for branch in plan.branches for found in returns_with_paths(branch.statements, [])]
        # A return of code after an if (its rest) is written in each branch that falls into it,
        # and again by each if inside them that it follows: only the outermost if over it,
        # planned first, names a dtype every copy sees. It owns the return, cast or not. A
        # return inside the if itself is written only in its branches.
        inside = {id(node) for node in ast.walk(plan.node) if isinstance(node, ast.Return)}
        for node, _ in returns:
            self.context.return_owners.setdefault(id(node), id(plan.node))
        elsewhere = {id(node) for node, _ in returns
                     if id(node) not in inside and self.context.return_owners[id(node)] != id(plan.node)}
        # Every return on the branches' paths, in inner ifs and loops too (this if's dtype line
        # is seen by their functions); an inner if casts what this one leaves.
        followed = {id(node) for node, _ in returns}
        if any(isinstance(node, ast.Return) and id(node) not in followed
               for branch in plan.branches for node in own_nodes(branch.statements)):
            return  # (a return in a `with` or `try`: its value is not followed)
        shape = _returned_shape(returns, self.context.callees, partial(self._container_positions, values=values))
        if shape is None:
            return
        returned, positions = shape
        width = len(positions) if positions is not None else -1
        for position in positions or [None]:
            parts = [_item(value, position) for value in returned]
            if any(position in self.context.return_casts.get(id(node), {}) for node, _ in returns):
                continue
            arms = [self._returned_values([*prefix, node], part, values) for part, (node, prefix) in zip(parts, returns)]
            names = {part.id if isinstance(part, ast.Name) else ast.unparse(part) if _item_of_name(part) else ""
                     for part in parts}
            name = "result_dtype" if len(names) != 1 or "" in names else _dtype_name(names.pop())
            known = [arm for arm in arms if arm is not None]
            if len(known) < len(arms):
                continue
            to_cast = arms_to_cast(known, self.context.callees, values)
            if any(id(returns[index][0]) in elsewhere for index in to_cast):
                continue
            for index in self._plan_cast(plan, f"return {position}", known, name, values):
                node = returns[index][0]
                casts = self.context.return_casts.setdefault(id(node), {})
                casts[position] = plan.dtypes[f"return {position}"][0]
                plan.return_casts[id(node)] = casts
                if position is not None and isinstance(node.value, ast.Name):  # `return t`: its items, `t[0]`
                    plan.return_results[id(node)] = (node.value.id, width)
                elif position is not None and not isinstance(node.value, ast.Tuple | ast.Dict):
                    # (one name for all: each binding is read only by the return after it)
                    bound = [plan.return_results[id(other)] for other, _ in returns
                             if id(other) in plan.return_results and not isinstance(other.value, ast.Name)]
                    plan.return_results[id(node)] = bound[0] if bound else (unique_name("result", self.context.taken), width)

    def _uncast_return_types(self, plan: IfPlan, values: dict[str, Known]) -> str | None:
        """What the branches certainly return in different types with no cast planned (a
        `return` in an inner `if`, `k` a Python int on one path and a float on another), as
        words for a finding; None when nothing is known to differ. Only values whose type the
        source fixes (literals, a loop's index) are known: `x` and `y` may well agree."""
        returns = [found for branch in plan.branches for found in returns_with_paths(branch.statements, [])]
        shape = _returned_shape(returns, self.context.callees, partial(self._container_positions, values=values))
        if shape is None:
            return None
        returned, positions = shape
        for position in positions or [None]:
            if any(position in self.context.return_casts.get(id(node), {}) for node, _ in returns):
                continue
            parts = [_item(value, position) for value in returned]
            found = [resolved_after(part, prefix, self.context.callees, values)
                     for part, (_, prefix) in zip(parts, returns)]
            fixed = {one.key for one in found if one is not None and one.follows <= FIXED_TYPES and not one.varies}
            if len(fixed) > 1:
                return f"`{ast.unparse(parts[0])}`" + (f" (item {position} of what it returns)" if position is not None else "")
        return None

    def _returned_values(self, statements: list[ast.stmt], value: ast.expr | None,
                         values: dict[str, Known]) -> list[ast.expr | Signature] | None:
        """What a branch's last statement, a return of ``value``, may return: the value itself
        when it can be evaluated before the if, what the branch may leave in a name it
        returns, or else the value's signature in terms of values before the if."""
        if value is None:
            return None
        if _item_of_name(value) and not self._evaluable_before(value, statements[:-1]):
            # `t[1]` of a `return t`: that item of each tuple (or dict) the path may leave in `t`
            assert isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)
            assert isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, int | str)
            position = value.slice.value
            found = self._final_values(statements[:-1], value.value.id, values)
            if found is None or position not in (self._container_positions(value.value, statements[:-1], values) or ()):
                return None
            # (one the name kept is what it held before the if: `t[1]` itself)
            return [_item(one if isinstance(one, ast.Tuple | ast.Dict) else value.value, position) for one in found]
        if isinstance(value, ast.Name) and not self._evaluable_before(value, statements[:-1]):
            found = self._final_values(statements[:-1], value.id, values)
            if found is not None:
                return found
        return self._described(value, statements[:-1], values)

    def _container_positions(self, name: ast.Name, earlier: list[ast.stmt], values: dict[str, Known]) -> Positions | None:
        """The positions (or keys) of the items ``name`` holds after ``earlier``, where every
        value it may hold there is a tuple display of one length or a dict display of the
        same string keys (or the one it held before the if, if that was); None otherwise."""
        def positions(one: ast.expr | Signature) -> Positions | None:
            held = values.get(name.id) if isinstance(one, ast.Name) and one.id == name.id else one
            return _display_positions(held)

        found = [positions(one) for one in self._final_values(earlier, name.id, values) or [None]]  # type: ignore[list-item]
        return found[0] if len({frozenset(one) if one is not None else None for one in found}) == 1 else None

    def _described(self, value: ast.expr, earlier: list[ast.stmt],
                   values: dict[str, Known]) -> list[ast.expr | Signature] | None:
        """What ``value`` may be after ``earlier``, for its type: itself where it can be
        evaluated before the if, else its signature. A conditional expression on a static
        test is one of its arms, each described so."""
        if isinstance(value, ast.IfExp) and not self.context.callees.traced_test(value.test):
            found: list[ast.expr | Signature] = []
            for arm in (value.body, value.orelse):
                described = self._described(arm, earlier, values)
                if described is None:
                    return None
                found += [one for one in described if one not in found]
            return found
        return [value] if self._evaluable_before(value, earlier) else self._resolved(value, earlier, values)

    def _resolved(self, value: ast.expr, earlier: list[ast.stmt],
                  values: dict[str, Known]) -> list[ast.expr | Signature] | None:
        if not self._one_value_after(value, earlier):
            return None  # (a Signature stands for one value: see _plan_cast)
        found = resolved_after(value, earlier, self.context.callees, values)
        return [found] if found is not None else None

    def _one_value_after(self, value: ast.expr, earlier: list[ast.stmt], callees: Callees | None = None,
                         caller: _Call | None = None) -> bool:
        """Whether ``value`` is one array after ``earlier``: by itself, or a name one of its
        bindings there makes one (the others must match it: a lax carry or branch result
        keeps one structure). In a helper's body (``caller``: the call that runs it), a
        parameter it has not rebound is what the call gives it."""
        callees = callees or self.context.callees
        arrays = self.context.arrays
        if arrays.one_value(value) and not (caller is not None and isinstance(value, ast.Name)):
            return True  # (the function's own names: not the helper's)
        if isinstance(value, ast.Constant):
            return isinstance(value.value, int | float | complex)  # (a bool is an int)
        if isinstance(value, ast.IfExp):
            # On a tracer, a `lax.cond` whose arms have one structure: one arm tells.
            arms = [self._one_value_after(arm, earlier, callees, caller) for arm in (value.body, value.orelse)]
            return all(arms) or any(arms) and callees.traced_test(value.test)
        items = helper_item(callees, value)
        if items is not None:  # `_after_if(c)[2]`: the item each return of what the call runs gives
            return all(self._one_value_after(element, list(path), callees.within(helper),
                                             _Call(dict(zip(helper.parameters, call.args)), earlier, callees, caller))
                       for (_, helper, call), elements in items for path, element in elements)
        if not isinstance(value, ast.Name):
            return False
        bound = bound_values(earlier, callees.iterates_rows).get(value.id)
        if bound is None and caller is not None and value.id in caller.arguments:
            return self._one_value_after(caller.arguments[value.id], caller.earlier, caller.callees, caller.caller)
        return any(isinstance(one, Signature) or arrays.one_value(one) for one in bound or [] if one is not None)

    def _plan_cast(self, plan: IfPlan, key: str, arms: list[list[ast.expr | Signature]], dtype_name: str,
                   values: dict[str, Known]) -> list[int]:
        """``arms``: what each branch (or return) may leave, all evaluated (before the if) for
        their common type; their signatures (a name holding a literal in ``values`` is that
        literal) decide which need a cast. The indices of those, once planned."""
        bound_by_test = {node.target.id: node.value for node in ast.walk(plan.node.test)
                         if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name)}
        values = {**dict.fromkeys(self.context.boolean_names, BOOLEAN), **values, **bound_by_test}
        to_cast = arms_to_cast(arms, self.context.callees, values)
        if not to_cast:
            return []
        # A pytree has no one dtype. `lax.cond` needs its branches to return one structure, so
        # one branch certainly returning one value is enough (a pytree elsewhere fails anyway).
        if not any(isinstance(candidate, Signature) or self._one_value(candidate, values, plan.node)
                   for candidate in chain.from_iterable(arms)):
            return []
        described = self._before_test(arms, bound_by_test, values) if bound_by_test else arms
        if described is None:
            return []
        # Each value once, as the source spells it where it does (a signature's texts are the
        # tree's: `st['p']` for `st["p"]`).
        sources: dict[str, str] = {}
        for candidate in chain.from_iterable(described):
            texts = dtype_sources(candidate) if isinstance(candidate, Signature) \
                else [source_segment(self.context.text, candidate) or ast.unparse(candidate)]
            for text in texts:
                tree_text = ast.unparse(ast.parse(text, mode="eval"))
                if sources.get(tree_text, tree_text) == tree_text:
                    sources[tree_text] = text
        plan.dtypes[key] = (unique_name(dtype_name, self.context.taken),
                            [as_spelled(text, self.context.text) for text in sources.values()])
        if plan.form is IfForm.ASSIGN:
            branches = plan.branches
            for index in to_cast:
                branches[index].casts.add(key)
        return to_cast

    def _one_value(self, candidate: ast.expr, values: dict[str, Known], node: ast.If) -> bool:
        """Whether ``candidate`` (evaluated before the if ``node``) is one array or number: by
        the function's evidence, by what the value analysis knows there (a carry of a lax
        loop that starts as one array), a name whose value before the if is (`a` of `a = m -
        1`), or an item of a tuple or list display a name holds before the if (`t[1]` of `t =
        (m, x)`) that is."""
        if self.context.arrays.one_value(candidate):
            return True
        known = self.context.values_at(node).verdict(candidate)
        if known.array or known.single:
            return True
        if isinstance(candidate, ast.Name):
            held = values.get(candidate.id)
            return isinstance(held, ast.expr) and self.context.arrays.one_value(held)
        if isinstance(candidate, ast.Subscript) and isinstance(candidate.value, ast.Name) \
                and isinstance(candidate.slice, ast.Constant) and isinstance(candidate.slice.value, int):
            display = values.get(candidate.value.id)
            if isinstance(display, ast.Tuple | ast.List) and -len(display.elts) <= candidate.slice.value < len(display.elts):
                element = display.elts[candidate.slice.value]
                return not isinstance(element, ast.Starred) and self.context.arrays.one_value(element)
        return False

    def _before_test(self, arms: list[list[ast.expr | Signature]], bound_by_test: dict[str, ast.expr],
                     values: dict[str, Known]) -> list[list[ast.expr | Signature]] | None:
        """The arms as what can be evaluated before the condition, which binds names (`if
        (total := x.sum()) > 1`) the dtype line before the `lax.cond` cannot read yet: an
        arm reading one is described by its signature, the name by the value it is given.
        None when that still names one."""
        signatures = Signatures(self.context.callees, values)
        described: list[list[ast.expr | Signature]] = []
        for arm in arms:
            described.append([])
            for candidate in arm:
                if not isinstance(candidate, Signature) and loaded_names([candidate]) & set(bound_by_test):
                    found = signatures.of(candidate)
                    if found is None:
                        return None
                    candidate = found
                texts = candidate.follows if isinstance(candidate, Signature) else set()
                if any(loaded_names([ast.parse(text, mode="eval").body]) & set(bound_by_test) for text in texts):
                    return None
                described[-1].append(candidate)
        return described

    def _final_values(self, statements: list[ast.stmt], name: str,
                      values: dict[str, Known]) -> list[ast.expr | Signature] | None:
        """Every expression ``statements`` (run in order) may leave in ``name``, each of which
        can be evaluated before the if (it reads nothing changed before it binds the name), or
        else its signature in terms of values before the if: used only for their types. A
        name they do not bind keeps its value from before the if; an inner ``if`` leaves what
        either of its branches may that does not return. None: not followed (a loop, an
        unpacking)."""
        for index in range(len(statements) - 1, -1, -1):
            statement = statements[index]
            if name not in assigned_names([statement]):
                continue
            earlier = statements[:index]
            if isinstance(statement, ast.If) and not isinstance(statement.test, ast.NamedExpr):
                found: list[ast.expr | Signature] = []
                for block in (statement.body, statement.orelse):
                    if always_leaves(block):
                        continue  # a path that returns never gets here
                    inner = self._final_values([*earlier, *block], name, values)
                    if inner is None:
                        return None
                    found += [value for value in inner if value not in found]
                return found
            value: ast.expr | None = None
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                value = dict(paired_values(statement.targets[0], statement.value)).get(name)
            elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                # `k += m` leaves `k + m`. The node spans no source of its own (the statement's
                # text is `k += m`, not an expression): it is written out from the tree.
                value = ast.BinOp(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
            if value is None:  # a loop, a `with`, an unpacking: what every binding in it may leave
                resolved = self._resolved(ast.Name(id=name, ctx=ast.Load()), statements[:index + 1], values)
                if resolved is None or not isinstance(statement, ast.For | ast.While) or self.becomes_lax(statement):
                    return resolved
                # A loop Python runs may run no pass (one it unrolls by a shape that is empty):
                # then the name holds what it held before. (A lax loop casts its carry to the
                # type of every pass before the first.)
                before = self._final_values(earlier, name, values)
                return None if before is None else [*before, *(one for one in resolved if one not in before)]
            return self._described(value, earlier, values)
        return [ast.Name(id=name, ctx=ast.Load())]  # passed through unchanged

    def _evaluable_before(self, value: ast.expr, earlier: list[ast.stmt]) -> bool:
        if loaded_names([value]) & assigned_names(earlier):
            return False
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                function = self.context.imports.resolve(node.func) or ""
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


# Where a returned value's items are: positions of a tuple, keys of a dict (of string keys).
Positions = tuple[int | str, ...]


def _returned_shape(returns: list[tuple[ast.Return, list[ast.stmt]]], callees: Callees,
                    name_positions: Callable[[ast.Name, list[ast.stmt]], Positions | None]
                    ) -> tuple[list[ast.expr], Positions | None] | None:
    """The values of the returns, and the positions of the items they all have: of tuple
    displays of one length, the calls of helpers that return them, dict displays of the same
    string keys, or names every path leaves such a display in (``name_positions``); None
    for the positions when no return has items. None when one returns nothing, they mix
    items with other values, lengths or keys, or an item is starred."""
    returned = [node.value for node, _ in returns if node.value is not None]
    if len(returned) < max(len(returns), 2):
        return None
    if any(isinstance(part, ast.Starred) for value in returned for part in ast.walk(value)):
        return None
    shapes = [name_positions(value, prefix) if isinstance(value, ast.Name) else _display_positions(value, callees)
              for value, (_, prefix) in zip(returned, returns)]
    if len({frozenset(shape) if shape is not None else None for shape in shapes}) != 1:
        return None
    return returned, shapes[0]


def _same_structure(one: ast.expr, other: ast.expr) -> bool:
    """Whether two returned values may have one pytree structure, as far as their displays
    tell: tuples and lists of one length, item by item; dicts with the same literal keys and no
    ``**`` whose items are unknown (``{}`` against ``{**metrics}``: empty only if ``metrics``
    is); a display against anything else is left to what the value analysis knows."""
    if isinstance(one, ast.Tuple | ast.List) and isinstance(other, ast.Tuple | ast.List):
        return type(one) is type(other) and len(one.elts) == len(other.elts) \
            and all(_same_structure(a, b) for a, b in zip(one.elts, other.elts))
    if isinstance(one, ast.Dict) and isinstance(other, ast.Dict):
        def keys(display: ast.Dict) -> list[str] | None:
            if any(key is None or not isinstance(key, ast.Constant) for key in display.keys):
                return None  # (a `**` splat, a computed key: unknown)
            return sorted(repr(key.value) for key in display.keys)  # type: ignore[union-attr]
        known = keys(one), keys(other)
        if None not in known:
            return known[0] == known[1]
        return bool(one.keys) == bool(other.keys)  # (`{}` against items or a `**` splat)
    return True


def _display_positions(value: ast.expr | Known | None, callees: Callees | None = None) -> Positions | None:
    """The positions of a tuple display's items (or of the tuples the helper a call runs
    returns), or the keys of a dict display of string keys; None for any other value."""
    if isinstance(value, ast.Dict):
        keys = [key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
                for key in value.keys]
        return None if not keys or None in keys else tuple(key for key in keys if key is not None)
    if isinstance(value, ast.Tuple) or isinstance(value, ast.Call) and callees is not None:
        width = returned_width(callees, value) if callees is not None else len(value.elts)  # type: ignore[union-attr]
        return tuple(range(width)) if width >= 0 else None
    return None


def _item(value: ast.expr, position: int | str | None) -> ast.expr:
    """A returned value (None), or its item at ``position``: of the tuple or dict display it
    is, of the tuple or dict a name holds (``t[1]``, spanning no source: it is written out
    from the tree), or of what the helper it calls returns (``_after_if(c)[2]``)."""
    if position is None:
        return value
    if isinstance(value, ast.Tuple) and isinstance(position, int):
        return value.elts[position]
    if isinstance(value, ast.Dict):
        return next(item for key, item in zip(value.keys, value.values)
                    if isinstance(key, ast.Constant) and key.value == position)
    if isinstance(value, ast.Name):
        return ast.Subscript(value=ast.Name(id=value.id, ctx=ast.Load()), slice=ast.Constant(position), ctx=ast.Load())
    return ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(position), ctx=ast.Load()), value)


def _dtype_name(returned: str) -> str:
    """The name of the dtype of a returned name or item of one: `k_dtype`, `t_1_dtype`."""
    if "[" not in returned:
        return f"{returned}_dtype"
    name, key = returned.rstrip("]").split("[", 1)
    return item_dtype_name(name, key)


def _item_of_name(value: ast.expr) -> bool:
    """Whether ``value`` is an item of a name by a constant position or key: `t[1]`, `st["p"]`."""
    return isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) \
        and isinstance(value.slice, ast.Constant) and type(value.slice.value) in (int, str)


def switch_cases(node: ast.If) -> list[ast.If]:
    """The ifs of an elif chain from ``node`` whose tests each compare one selector with a
    number (`if kind == 0: ... elif kind == 1: ...`), when there are two or more: they
    become one `lax.switch`, the chain's last `else` its default (an `elif` of another test
    there stays an `if` inside it). Empty for any other `if`."""
    cases: list[ast.If] = []
    selector: str | None = None
    current = node
    while (compared := selector_of(current.test)) is not None and selector in (None, ast.dump(compared)):
        selector = ast.dump(compared)
        cases.append(current)
        if len(current.orelse) != 1 or not isinstance(current.orelse[0], ast.If):
            break
        current = current.orelse[0]
    return cases if len(cases) > 1 else []


def selector_of(test: ast.expr) -> ast.expr | None:
    """What `test` compares for equality with a number (`kind` of `kind == 0` or `1 == kind`);
    None for any other test. (A chain evaluates it once per case, and so does its switch.)"""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    for selector, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if _is_number(other) and not _is_number(selector) and not any(
                isinstance(node, ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom | ast.Lambda)
                for node in ast.walk(selector)):
            return selector
    return None


def _case_value(test: ast.expr) -> ast.expr:
    """The number a case's test compares its selector with."""
    assert isinstance(test, ast.Compare)
    return test.comparators[0] if _is_number(test.comparators[0]) else test.left


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def _taken_when(cases: list[ast.If], index: int) -> str:
    """When the branch of ``index`` is taken, in words for a finding."""
    if not cases:
        return "when the condition is true" if index == 0 else "when the condition is false"
    return f"when `{ast.unparse(cases[index].test)}`" if index < len(cases) else "when no case's test holds"


def _static_non_numeric(name: str, branches: list[list[ast.stmt]]) -> bool:
    for block in branches:
        for statement in block:
            if isinstance(statement, ast.Assign) and name in {n for t in statement.targets for n in target_names(t)}:
                value = statement.value
                if isinstance(value, ast.Constant) and not isinstance(value.value, bool | int | float | complex):
                    return True
    return False


def _is_simple(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Return | ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr)


def remember_values(statement: ast.stmt, values: dict[str, Known]) -> None:
    """Track the expression each name was last given, while what it reads is unchanged (for
    result types: `result = jnp.ones_like(x)` has the dtype of `x`; a loop body starts with a
    literal of the type each of its literal carries always holds); after a compound
    statement, what it may rebind is no longer known."""
    if isinstance(statement, ast.Assign):
        _forget([name for target in statement.targets for name in target_names(target)], values)
        if len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
            name = statement.targets[0].id
            if name not in loaded_names([statement.value]):  # `x = x + 1` reads the x it replaces
                values[name] = statement.value
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        _forget(list(target_names(statement.target)), values)
    elif not isinstance(statement, ast.Expr | ast.Pass | ast.Return):
        _forget(list(assigned_names([statement])), values)


def _forget(names: list[str], values: dict[str, Known]) -> None:
    """Names rebound: what they held, and every value that read them, is no longer known."""
    rebound = set(names)
    for name in [name for name, value in values.items() if name in rebound or known_reads(value) & rebound]:
        del values[name]


# -- writing ---------------------------------------------------------------------------------


class IfRenderer:
    """Writes planned ifs; the statements inside the branches through ``block``."""

    def __init__(self, context: RenderContext, block: BlockRenderer):
        self.context = context
        self.block = block

    def render(self, plan: IfPlan, statement: cst.If, rest: StatementPairs, depth: int,
               after_code: bool) -> list[cst.BaseStatement]:
        rest_statements = [pair[0] for pair in rest]
        generated: list[cst.BaseStatement] = []
        for dtype_name, sources in plan.dtypes.values():
            generated.append(cst.parse_statement(
                f"{dtype_name} = {self.context.name('jax.numpy')}.result_type({', '.join(sources)})\n"))
        functions: list[str] = []
        tests: list[str] = []
        ast_tests = iter([case.test for case in plan.cases] if plan.cases else [plan.node.test])
        for branch, arm in zip(plan.branches, _arms(plan, statement)):
            if arm.test is not None:
                squeezed = id(next(ast_tests)) in plan.vector_tests
                tests.append(f"{self.context.name('jax.numpy')}.squeeze({code(arm.test)})" if squeezed
                             else code(arm.test))
            statements = [*arm.statements, *(rest_statements if branch.with_rest else [])]
            if not statements and _is_identity(plan, branch):  # a break/continue guard's if
                functions.append(self._identity_lambda(plan, branch))
                continue
            definition = self._branch_def(plan, branch, arm.block, statements, depth)
            if arm.leading_lines is not None:  # comments above `elif`/`else:` go above its function
                definition = definition.with_changes(leading_lines=arm.leading_lines)
            generated.append(definition)
            functions.append(branch.name)

        if plan.form is IfForm.RETURN:
            prefix = "return "
        elif plan.outputs:
            prefix = ", ".join(plan.outputs) + " = "
        else:
            prefix = ""
        if plan.cases:  # the index of the first case whose test holds, else the default's
            cases = len(plan.cases)
            index = (f"{self.context.name('jax.numpy')}.select([{', '.join(tests)}], "
                     f"[{', '.join(map(str, range(cases)))}], {cases})")
            arguments = [index, f"[{', '.join(functions)}]", *plan.operands]
            generated.append(self.context.call(prefix, f"{self.context.name('jax.lax')}.switch", arguments, depth))
        else:
            arguments = [tests[0], *functions, *plan.operands]
            generated.append(self.context.call(prefix, f"{self.context.name('jax.lax')}.cond", arguments, depth))
        return lay_out(generated, statement, after_code)

    def _branch_def(self, plan: IfPlan, branch: Branch, block: cst.BaseSuite | None,
                    statements: list[cst.BaseStatement], depth: int) -> cst.FunctionDef:
        body = self.context.with_copies(plan.copies, self.block(statements, branch.statements, depth + 1))
        if plan.form is IfForm.ASSIGN and plan.outputs:
            body.append(self.context.returned(self._outputs(plan, branch), depth + 1))
        if not body:
            body = [cst.parse_statement("return None\n")]
        template = cst.parse_statement(f"def {branch.name}({', '.join(plan.operands)}):\n    pass\n")
        assert isinstance(template, cst.FunctionDef)
        if isinstance(block, cst.IndentedBlock):
            new_block = block.with_changes(body=body)
        else:
            new_block = cst.IndentedBlock(body=body)
        return template.with_changes(body=new_block)

    def _outputs(self, plan: IfPlan, branch: Branch) -> str:
        return ", ".join(self._cast(name, plan, branch) for name in plan.outputs)

    def _cast(self, name: str, plan: IfPlan, branch: Branch) -> str:
        jnp = self.context.name("jax.numpy")
        items = [key for key in plan.items.get(name, []) if f"{name}[{key}]" in branch.casts]
        if items:  # a new dict or tuple of the items, cast
            return rebuilt(name, {key: plan.dtypes[f"{name}[{key}]"][0] for key in items}, plan.layouts[name], jnp)
        if name not in branch.casts:
            return name
        return f"{jnp}.asarray({name}, {plan.dtypes[name][0]})"

    def _identity_lambda(self, plan: IfPlan, branch: Branch) -> str:
        values = self._outputs(plan, branch)
        body = f"({values})" if len(plan.outputs) > 1 else values or "None"  # no results: like the branch def
        parameters = " " + ", ".join(plan.operands) if plan.operands else ""
        return f"lambda{parameters}: {body}"

@dataclass(frozen=True)
class _Arm:
    """A branch's code in the if written: its test (the default's and a false branch's:
    None), its block (None for an `elif` of another test, which is its one statement), its
    statements, and the comments above it, where they go above its function."""

    test: cst.BaseExpression | None
    block: cst.BaseSuite | None
    statements: list[cst.BaseStatement]
    leading_lines: Sequence[cst.EmptyLine] | None = None


def _arms(plan: IfPlan, statement: cst.If) -> list[_Arm]:
    """The written arms of ``statement``, one per branch of ``plan``: the true and the false
    one, or each case of a switch (along its `elif`s) and the default."""
    arms: list[_Arm] = []
    current, leading = statement, None
    for _ in range(max(len(plan.cases), 1)):
        # (a guard's if has an empty true branch)
        own = suite_statements(current.body) if plan.node.body or plan.cases else []
        arms.append(_Arm(current.test, current.body, own, leading))
        orelse = current.orelse
        if not plan.cases or len(arms) == len(plan.cases):
            break
        if isinstance(orelse, cst.If):
            current, leading = orelse, orelse.leading_lines
        else:  # `else:` whose one statement is the next `if`
            assert isinstance(orelse, cst.Else)
            inner = suite_statements(orelse.body)[0]
            assert isinstance(inner, cst.If)
            current, leading = inner, [*orelse.leading_lines, *inner.leading_lines]
    orelse = current.orelse
    if isinstance(orelse, cst.Else):
        arms.append(_Arm(None, orelse.body, suite_statements(orelse.body), orelse.leading_lines))
    else:
        arms.append(_Arm(None, None, [orelse] if isinstance(orelse, cst.If) else []))
    return arms


def _is_identity(plan: IfPlan, branch: Branch) -> bool:
    """A branch that binds nothing: a lambda of its operands (cast where ``branch.casts`` says)."""
    return plan.form is IfForm.ASSIGN and plan.operands == plan.outputs


def _literal_key(key: cst.BaseExpression) -> str | None:
    """The string a dict display's key is, where it is a plain string literal."""
    return key.evaluated_value if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) else None


def cast_return(statement: cst.SimpleStatementLine, casts: dict[int | str | None, str], jnp: str,
                result: tuple[str, int] | None = None) -> list[cst.SimpleStatementLine]:
    """A `return` whose value (key None), or items of the tuple it returns, are cast to the
    dtypes ``casts`` names (see IfPlan.return_casts). A call's items are cast from ``result``:
    the name its value is bound to first, and how many items it has (a returned name's are
    cast from the name itself)."""
    returned = statement.body[-1]
    if not isinstance(returned, cst.Return) or returned.value is None:
        raise EditError("expected a return statement to cast")

    def asarray(value: cst.BaseExpression, dtype: str) -> cst.BaseExpression:
        return cst.parse_expression(f"{jnp}.asarray({code(value.with_changes(lpar=[], rpar=[]))}, {dtype})")

    if None in casts:
        value = asarray(returned.value, casts[None])
    elif isinstance(returned.value, cst.Dict):
        value = returned.value.with_changes(elements=[
            element.with_changes(value=asarray(element.value, casts[key]))
            if isinstance(element, cst.DictElement) and (key := _literal_key(element.key)) in casts else element
            for element in returned.value.elements])
    elif isinstance(returned.value, cst.Name) and any(isinstance(key, str) for key in casts):  # `return st`
        name = returned.value.value
        quoted = {key: f'"{key}"' if isinstance(key, str) and '"' not in key and "\\" not in key else repr(key)
                  for key in casts}
        cast_items = ", ".join(f"{quoted[key]}: {code(asarray(cst.parse_expression(f'{name}[{quoted[key]}]'), dtype))}"
                               for key, dtype in casts.items())
        value = cst.parse_expression(f"{{**{name}, {cast_items}}}")
    elif isinstance(returned.value, cst.Tuple):
        value = returned.value.with_changes(elements=[
            element.with_changes(value=asarray(element.value, casts[index])) if index in casts else element
            for index, element in enumerate(returned.value.elements)])
    elif result is not None:
        name, width = result
        items = [code(asarray(cst.parse_expression(f"{name}[{index}]"), casts[index])) if index in casts
                 else f"{name}[{index}]" for index in range(width)]
        if isinstance(returned.value, cst.Name) and returned.value.value == name:  # `return t`: its items
            value = cst.parse_expression(f"({', '.join(items)}{',' if width == 1 else ''})")
            return [statement.with_changes(body=[*statement.body[:-1], returned.with_changes(value=value)])]
        binding = cst.parse_statement(f"{name} = {code(returned.value)}\n")
        assert isinstance(binding, cst.SimpleStatementLine)
        value = cst.parse_expression(", ".join(items))
        return [statement.with_changes(body=[*statement.body[:-1], binding.body[0]]),
                cst.SimpleStatementLine(body=[returned.with_changes(value=value)])]
    else:
        raise EditError("expected a tuple to cast")
    return [statement.with_changes(body=[*statement.body[:-1], returned.with_changes(value=value)])]
