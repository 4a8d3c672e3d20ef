"""Decide how a loop jit cannot run becomes ``lax.fori_loop`` / ``lax.while_loop``, or why not.

* ``for i in range(...)`` whose bounds are traced -> ``lax.fori_loop``; a step other than 1
  must be a literal (the trip count is computed from it);
* ``while`` on a traced condition -> ``lax.while_loop``.

The *carry* is every name the body binds that has a value before the loop and that the body
reads before binding it, the loop test reads, or code after the loop reads. A name the body
binds with no value before the loop and that is read afterwards is reported: a loop that runs
zero times would leave it unbound. The loop variable, when read after the loop, is carried
too, so it holds its last value. ``break``, ``continue``, ``return``, ``else:`` and anything a
body function cannot hold are reported with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator

from jitfix.analysis.blocks import (
    assigned_names,
    framework_obstacles,
    is_range_call,
    literal_int,
    loaded_names,
    obstacles,
    target_names,
    upward_exposed,
)
from jitfix.rules.boolean_expressions import is_boolean_valued
from jitfix.rules.naming import branch_name, unique_name


@dataclass(eq=False)
class Guard:
    """``if c: break`` / ``if c: continue`` at the top of a loop body's statements."""

    node: ast.If
    kind: str  # "break" or "continue"
    boolean: bool = True  # the test is a boolean already (else the flag compares it with zero)


@dataclass(eq=False)
class LoopPlan:
    node: ast.For | ast.While
    kind: str  # "fori" or "while"
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
    # break/continue: the guards, and the carried flag a break sets
    guards: list[Guard] = field(default_factory=list)
    flag: str | None = None
    synthetic_ifs: list[ast.If] = field(default_factory=list)  # the ifs the guards became
    # What an unpacking writes for a slot the function does not read: `_`, unless the loop
    # itself names `_` (`for _ in range(n)`), which the placeholder must not overwrite.
    placeholder: str = "_"
    # A range loop that can break counts its passes in a name of its own when the body binds
    # the loop variable itself (`for i in ...: ... for i in range(2)`): Python's next pass
    # takes `i` from the range whatever the body did with it.
    counter: str | None = None

    @property
    def needs_numpy(self) -> bool:
        return self.truncate_upper or self.flag is not None

    @property
    def absorbs_rest(self) -> bool:
        return False


def split_guards(body: list[ast.stmt]) -> tuple[list[list[ast.stmt]], list[Guard]]:
    """The body cut at its top-level ``if c: break``/``if c: continue`` statements:
    segments S0..Sk around guards g1..gk."""
    segments: list[list[ast.stmt]] = [[]]
    guards: list[Guard] = []
    for statement in body:
        if (isinstance(statement, ast.If) and not statement.orelse and len(statement.body) == 1
                and isinstance(statement.body[0], ast.Break | ast.Continue)):
            guards.append(Guard(statement, "break" if isinstance(statement.body[0], ast.Break) else "continue"))
            segments.append([])
        else:
            segments[-1].append(statement)
    return segments, guards


def nest_guards(segments: list, guards: list[Guard], flag: str | None, make_if, make_flag) -> list:
    """S0; [flag = c1;] if <c1 or flag>: (nothing) else: (S1; ...): the statements after a
    guard run only when it does not fire. ``make_if(guard, test_is_flag, inner)`` and
    ``make_flag(guard)`` build the nodes (ast at planning time, libcst when writing)."""
    result = list(segments[0])
    if not guards:
        return result
    guard = guards[0]
    inner = nest_guards(segments[1:], guards[1:], flag, make_if, make_flag)
    if guard.kind == "break":
        result.append(make_flag(guard))
    if inner:
        result.append(make_if(guard, guard.kind == "break", inner))
    return result


def _loop_obstacle(statements: list[ast.stmt]) -> tuple[ast.AST, str] | None:
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


def _ifs_holding_jumps(statements: list[ast.stmt]) -> Iterator[ast.If]:
    """The ifs of a loop body (at any depth, not in a nested loop or function) that hold a
    break/continue of this loop."""
    for statement in statements:
        if isinstance(statement, ast.If):
            blocks = (statement.body, statement.orelse)
            if any(_loop_obstacle(block) and isinstance(_loop_obstacle(block)[0], ast.Break | ast.Continue)
                   for block in blocks):
                yield statement
            for block in blocks:
                yield from _ifs_holding_jumps(block)


class LoopPlanning:
    """The loop half of the control-flow planner (mixed into FunctionPlanner)."""

    def is_traced_range(self, node: ast.AST) -> bool:
        if not (isinstance(node, ast.For) and is_range_call(node.iter, self.imports)):
            return False
        values = self.values_at(node)
        # `int(jnp.ceil(n / 2))` of static `n` is static: JF601 writes it in Python.
        return any(values.is_traced(_without_int(arg)) and not values.is_static(arg) for arg in node.iter.args)

    def is_traced_while(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.While):
            return False
        values = self.values_at(node)
        return values.is_traced(node.test) and self.arrays.certain_truth(node.test, values)

    def has_traced_guard(self, node: ast.AST) -> bool:
        """A static range or while loop that breaks or continues on a traced condition: it
        must become a lax loop too."""
        if not (isinstance(node, ast.While) or (isinstance(node, ast.For) and is_range_call(node.iter, self.imports))):
            return False
        _, guards = split_guards(node.body)
        if any(self.values_at(guard.node).is_traced(guard.node.test) for guard in guards):
            return True
        # A jump inside an `if` of the body (lowered to a flag, see jump_lowering) on a traced test.
        return any(self.values_at(test).is_traced(test.test) for test in _ifs_holding_jumps(node.body))

    def _plan_loop(self, node: ast.For | ast.While, bound: set[str], loops: int) -> None:
        if node.orelse:
            return self._report(node, "the loop has an `else:` clause", lowerable=True)
        segments, guards = split_guards(node.body)
        if not guards and self._chose_static(node, bound, loops):
            return None
        unguarded = [statement for segment in segments for statement in segment]
        found = _loop_obstacle(unguarded)
        if found:
            return self._report(node, found[1], found[0], lowerable=isinstance(found[0], ast.Break | ast.Continue))
        for where, reason in self._obstacles_of(unguarded, node, loops):
            return self._report(node, reason, where)
        for guard in guards:
            guard.boolean = is_boolean_valued(guard.node.test, self.imports)
        target: str | None = None
        if isinstance(node, ast.For):
            if not isinstance(node.target, ast.Name):
                return self._report(node, "the loop variable is not a single name")
            target = node.target.id
        flag = unique_name("stopped", self.taken) if any(g.kind == "break" for g in guards) else None
        body, synthetic_ifs = self._nested_body(segments, guards, flag)
        assigned = assigned_names(body)
        test_reads = loaded_names([node.test]) if isinstance(node, ast.While) else set()
        live_after = {name for name in assigned if self._live_after(name, node, loops)}
        exposed = upward_exposed(body, live_after | test_reads | ({flag} if flag else set()))
        if flag:
            bound = bound | {flag}
        carry: list[str] = []
        for name in self._ordered(assigned | ({target} if target else set()), node):
            if name == target:
                if self._live_after(name, node, loops):
                    carry.append(name)
                continue
            needed = name in exposed or name in test_reads or name in live_after
            if not needed:
                continue  # a temporary of one iteration
            if name not in bound:
                return self._report(node, f"`{name}` is bound in the loop body but has no value before the "
                                          "loop, and is read after it: a loop that runs zero times leaves "
                                          "it unbound")
            carry.append(name)
        if self._static_non_numeric_carry(carry, node.body):
            return self._report(node, "the loop carries a Python value that is not a number")
        for name in carry:
            growth = _shape_change(name, node.body, self.imports)
            if growth:
                where, how = growth
                return self._report(node, f"`{name}` changes shape on every pass ({how}); a lax loop carries "
                                          "a fixed shape: preallocate it and write with `.at[i].set(...)`", where)
        if flag and flag not in carry:
            carry.append(flag)
        # A guard whose test is static in the body function (every carried name is a tracer
        # there) has the same value on every pass: lax.cond takes it as a Python bool.
        if isinstance(node, ast.For):
            plan = self._fori_plan(node, carry, target)  # type: ignore[arg-type]
            if plan is None:
                return None
            plan.target_bound = target in bound
            plan.statements = body
        else:
            if not carry:
                return self._report(node, "the body changes nothing the loop test reads")
            name = branch_name(node.test, False, self.taken).replace("_if_", "_while_", 1)
            plan = LoopPlan(node, "while", unique_name(name + "_body", self.taken), carry, body,
                            cond_name=name, boolean_test=is_boolean_valued(node.test, self.imports))
        plan.guards, plan.flag, plan.synthetic_ifs = guards, flag, synthetic_ifs
        if "_" in (target, *carry):
            plan.placeholder = unique_name("_unused", self.taken)
        # The passes of a range loop that can break are counted in a name of their own when the
        # loop variable is rebound in the body (Python's next pass takes it from the range
        # whatever the body did) or read after the loop (it keeps the value of the pass that
        # broke, one behind the count).
        if flag and target and plan.kind == "fori" and (target in assigned_names(node.body) or target in carry):
            plan.counter = unique_name(f"{target}_pass", self.taken)
        if flag and plan.kind == "fori":
            plan.cond_name = unique_name(f"_{target}_loop_continues", self.taken)
        self.plans[node] = plan  # type: ignore[index]
        # In the body function, the carry and the loop variable are its own names, and tracers.
        outer = self.carried
        self.carried = frozenset(self.carried | set(carry) | ({target} if target else set()))
        for statement in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(statement, ast.stmt):
                self.carried_at[id(statement)] = self.traced_here
        self._rewritten_loop_levels.append((len(self._rests), loops + 1))
        try:
            self._block(body, set(carry) | ({target} if target else set()), tail=False, loops=loops + 1)
        finally:
            self._rewritten_loop_levels.pop()
            self.carried = outer
        return None

    def _chose_static(self, node: ast.For | ast.While, bound: set[str], loops: int) -> bool:
        """Apply the loop strategy: True when the loop stays and its bound becomes static, or
        is reported because a lax loop could not be differentiated."""
        options = self.options
        wants_static = options.loop_strategy == "static" or (options.loop_strategy == "auto" and options.differentiated)
        if not wants_static:
            return False
        if isinstance(node, ast.While):
            if options.differentiated:
                self._report(node, "the function is differentiated, and `lax.while_loop` is not "
                                   "reverse-mode differentiable; bound the loop with a static trip count")
                return True
            return False
        names = self._static_bound_names(node)
        if names:
            self.static_requests[node] = names
            target = node.target.id if isinstance(node.target, ast.Name) else None
            self._block(node.body, bound | ({target} if target else set()), tail=False, loops=loops + 1)
            return True
        if options.differentiated:
            self._report(node, "the function is differentiated, and `lax.fori_loop` with a traced trip "
                               "count is not reverse-mode differentiable; make the bound a static argument")
            return True
        return False

    def _static_bound_names(self, node: ast.For) -> list[str] | None:
        """The parameters that set a range loop's trip count, when each is a parameter of a
        jitted function used as it came in (so `static_argnames` can make it static)."""
        values = self.values_at(node)
        names: list[str] = []
        for arg in node.iter.args:  # type: ignore[attr-defined]
            bound = _without_int(arg)
            if not values.is_traced(bound):
                continue
            if not (isinstance(bound, ast.Name) and bound.id in self.options.staticable):
                return None
            if bound.id in assigned_names(self.function.body):
                return None  # rebound: its value at the loop is not the argument's
            names.append(bound.id)
        return names or None

    def _nested_body(self, segments: list[list[ast.stmt]], guards: list[Guard],
                     flag: str | None) -> tuple[list[ast.stmt], list[ast.If]]:
        """The body as ifs: what follows a guard runs only when the guard does not fire."""
        synthetic_ifs: list[ast.If] = []

        def make_flag(guard: Guard) -> ast.stmt:
            assign = ast.Assign(targets=[ast.Name(id=flag, ctx=ast.Store())], value=guard.node.test)
            return ast.copy_location(assign, guard.node)

        def make_if(guard: Guard, test_is_flag: bool, inner: list[ast.stmt]) -> ast.stmt:
            test = ast.copy_location(ast.Name(id=flag, ctx=ast.Load()), guard.node) if test_is_flag else guard.node.test
            synthetic = ast.copy_location(ast.If(test=test, body=[], orelse=inner), guard.node)
            synthetic.end_lineno, synthetic.end_col_offset = guard.node.end_lineno, guard.node.end_col_offset
            self.forced_ifs.add(synthetic)
            synthetic_ifs.append(synthetic)
            return synthetic

        return nest_guards(segments, guards, flag, make_if, make_flag), synthetic_ifs

    def _fori_plan(self, node: ast.For, carry: list[str], target: str) -> LoopPlan | None:
        args = node.iter.args  # type: ignore[attr-defined]
        if len(args) == 1:
            lower, upper, step = None, args[0], 1
        elif len(args) in (2, 3):
            lower, upper = args[0], args[1]
            step = 1 if len(args) == 2 else literal_int(args[2])
            if step is None:
                self._report(node, "the step of `range` is not a literal; the trip count needs it")
                return None
            if step == 0:
                self._report(node, "`range` with step 0 raises")
                return None
        else:
            self._report(node, "`range` called with an unexpected number of arguments")
            return None
        truncate = isinstance(upper, ast.Call) and isinstance(upper.func, ast.Name) and upper.func.id == "int"
        name = unique_name(f"_{target}_loop_body", self.taken)
        return LoopPlan(node, "fori", name, carry, node.body, lower=lower, upper=_without_int(upper), step=step,
                        target=target, truncate_upper=truncate)

    def _obstacles_of(self, statements: list[ast.stmt], node: ast.For | ast.While,
                      loops: int) -> Iterator[tuple[ast.AST, str]]:
        """What a body function cannot hold (a function the body defines is its temporary,
        unless code after the loop reads it)."""
        read_after = lambda name: self._live_after(name, node, loops)  # noqa: E731
        for where, reason in obstacles(statements, False, set(self.imports.aliases), read_after):
            if isinstance(where, ast.Break | ast.Continue | ast.Return):
                continue  # reported above with the loop's own reason
            yield where, reason.replace("a branch", "the loop body").replace("both branches run", "the body runs")
        yield from framework_obstacles(statements, self.imports.resolve)

    @staticmethod
    def _static_non_numeric_carry(carry: list[str], body: list[ast.stmt]) -> bool:
        for node in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                    and not isinstance(node.value.value, bool | int | float | complex):
                if any(name in carry for target in node.targets for name in target_names(target)):
                    return True
        return False


# jax.numpy functions that make an array larger (or smaller) than their inputs.
RESHAPING_FUNCTIONS = frozenset({"concatenate", "append", "stack", "hstack", "vstack", "dstack", "column_stack",
                                 "pad", "tile", "repeat", "insert", "delete"})


def _shape_change(name: str, body: list[ast.stmt], imports) -> tuple[ast.AST, str] | None:
    """An assignment that gives ``name`` a shape built from its own (``x = jnp.append(x, v)``,
    ``x = x[1:]``)."""
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if not (isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets)):
            continue
        value = node.value
        reads_itself = name in loaded_names([value])
        if isinstance(value, ast.Call) and reads_itself:
            function = imports.resolve(value.func) or ""
            if function.startswith("jax.numpy.") and function.rpartition(".")[2] in RESHAPING_FUNCTIONS:
                return node, f"`{ast.unparse(value.func)}`"
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == name \
                and any(isinstance(part, ast.Slice) for part in ast.walk(value.slice)):
            return node, "a slice of itself"
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and reads_itself \
                and isinstance(value.right, ast.List | ast.Tuple):
            return node, "a Python sequence that grows"
    return None


def _without_int(expr: ast.expr) -> ast.expr:
    """``int(n)`` -> ``n``: a traced bound is made an integer by the rewrite instead."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "int" \
            and len(expr.args) == 1 and not expr.keywords:
        return expr.args[0]
    return expr

