"""JF2xx — Python loops jit cannot run.

JF201 ``for i in range(n)`` with a traced bound -> ``lax.fori_loop``.
JF202 ``while`` on a traced condition -> ``lax.while_loop``.

A loop with a static trip count (``range(3)``, ``range(x.shape[0])``, a Python list, the rows
of an array) runs under jit as it is, unrolled at trace time: it is left byte-identical.

Where the logic is: ``control_flow/loops.py`` plans and writes the lax loop
(``control_flow/scans.py`` a ``lax.scan``); each function is planned once for every rule
(``rules/function_context.py``; ``control_flow/function.py`` walks it).
"""

from __future__ import annotations

import ast
from typing import Iterator

from jitfix.analysis.blocks import is_range_call
from jitfix.control_flow.plans import LoopKind, LoopPlan, Lowering
from jitfix.findings import Finding, Fix, Safety
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import FunctionContext, function_contexts, function_edit, source_excerpt
from jitfix.rules.lowering import caller_dicts_note, lowering_fix, why_no_break
from jitfix.rules.static_arguments import static_argnames_edit


class _LoopRule(Rule):
    loop_type: type[ast.For] | type[ast.While]
    kind: LoopKind  # the lax loop it rewrites to
    trouble: str  # what the loop does under jit, for the message

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            planned = entry.planned
            function = entry.traced
            for node, plan in planned.plans.items():
                if not isinstance(plan, LoopPlan) or not isinstance(node, self.loop_type):
                    continue
                if (plan.kind is LoopKind.SCAN) != (self.kind is LoopKind.SCAN):
                    continue
                edits = [function_edit(module, function.node, planned.plans, frozenset({node})),
                         *entry.edits_in(module, node)]
                # (a range loop that can break becomes a `while_loop` over the index and a flag)
                lax_loop = LoopKind.WHILE.value if plan.kind is LoopKind.FORI and plan.flag else self.kind.value
                fix = Fix(Safety.SAFE, f"rewrite with lax.{lax_loop}", edits)
                message = (f"{self._what(module, node, entry)} in `{function.qualname}` ({function.how}); rewrite with "
                           f"`lax.{lax_loop}`{caller_dicts_note(function, node)}")
                yield self.finding(module, node, message, fix, function=function, end=self._header_end(node))
            if self.kind is LoopKind.FORI:
                yield from self._static_findings(module, entry)
            for problem in planned.problems:
                if not isinstance(problem.statement, self.loop_type):
                    continue
                if problem.scan != (self.kind is LoopKind.SCAN):
                    continue
                statement = problem.statement
                lowered = lowering_fix(module, function, statement, problem.lowering) if problem.lowering else None
                if lowered is not None:
                    first = {Lowering.JUMPS: "its `break`/`continue` nested in an `if`, or its `else:`, first "
                                             "restructured with a flag",
                             Lowering.DICT_UPDATES: "its writes into a dict first written as new dicts",
                             Lowering.BY_INDEX: "looping over the array's indices first",
                             Lowering.RETURNS: "its `return` first made a `break`, the function returning "
                                               "after the loop"}[problem.lowering]  # type: ignore[index]
                    whole = None if problem.lowering is Lowering.DICT_UPDATES else statement
                    message = (f"{self._what(module, statement, entry)} in `{function.qualname}` ({function.how}); rewrite "
                               f"as a lax loop ({first}){caller_dicts_note(function, whole)}")
                    yield self.finding(module, statement, message, lowered, function=function,
                                       end=self._header_end(statement))
                    continue
                where = f" (line {problem.line})" if problem.line != statement.lineno else ""
                if isinstance(problem.node, ast.Return):
                    where += why_no_break(function, statement)
                message = f"{self._what(module, statement, entry)} in `{function.qualname}`; not auto-fixable: {problem.reason}{where}"
                yield self.finding(module, statement, message, function=function, end=self._header_end(statement))

    def _static_findings(self, module: ModuleContext, entry) -> Iterator[Finding]:
        """Loops the strategy keeps: their bounds become static arguments of the jit."""
        function = entry.traced
        for node, request in entry.planned.static_requests.items():
            if not isinstance(node, self.loop_type):
                continue
            found = [static_argnames_edit(module, site, request.names, function.node) for site in function.jit_sites]
            edits = [edit for edit in found if edit is not None]
            listed = ", ".join(f"`{name}`" for name in request.names)
            message = (f"{self._what(module, node, entry)} in `{function.qualname}`; make {listed} static "
                       f"({request.why}); each new value recompiles")
            fix = None
            if edits and len(edits) == len(found):
                safety = Safety.SAFE if request.safe else Safety.UNSAFE
                description = f"add {listed} to static_argnames"
                if not request.safe:
                    description += " (unsafe: callers must then pass Python values, not arrays)"
                fix = Fix(safety, description, list(edits))
            else:
                message += "; not auto-fixable: the jit that compiles it is not in this module"
            yield self.finding(module, node, message, fix, function=function, end=self._header_end(node))

    def _what(self, module: ModuleContext, node: ast.For | ast.While, entry: FunctionContext) -> str:
        """The loop's header as the user wrote it, and what goes wrong with it."""
        if isinstance(node, ast.While):
            header = f"`while {source_excerpt(module, node.test)}`"
            traced_test = entry.values_at(node).is_traced(node.test)
            return f"{header} {self.trouble}" if traced_test else f"{header} leaves the loop on a traced test"
        if self.kind is LoopKind.FORI and not self._bound_traced(module, node, entry):  # left on a traced test
            jump = "leaves the loop" if _may_leave(node) else "skips the rest of a pass"
            return f"`for ... in {source_excerpt(module, node.iter)}` {jump} on a traced test"
        return f"`for ... in {source_excerpt(module, node.iter)}` {self.trouble}"

    @staticmethod
    def _bound_traced(module: ModuleContext, node: ast.For, entry: FunctionContext) -> bool:
        """Whether the loop runs over a `range` of a traced value (a `range(xs.shape[0])`, or
        the rows of an array, has a static length: a traced `break` is what ends it)."""
        values = entry.values_at(node)
        return isinstance(node.iter, ast.Call) and is_range_call(node.iter, module.imports) \
            and any(values.is_traced(argument) for argument in node.iter.args)

    @staticmethod
    def _header_end(node: ast.For | ast.While) -> ast.AST:
        return node.iter if isinstance(node, ast.For) else node.test


class TracedRangeLoop(_LoopRule):
    code = "JF201"
    name = "traced-range-loop"
    summary = "`for i in range(n)` with a traced `n` raises under jit; use `lax.fori_loop`"
    fixable = "sometimes"
    loop_type = ast.For
    kind = LoopKind.FORI
    trouble = "loops a traced number of times"
    doc = RuleDoc(
        what="Finds `for` loops over `range(...)` whose bounds are traced values (a jit argument, "
        "even a Python int passed to the jitted function, or something computed from one), and "
        "rewrites them with `lax.fori_loop`.",
        why="`range()` needs Python integers; under `jax.jit` the bound is a tracer, so the loop "
        "raises `TracerIntegerConversionError` (or `ConcretizationTypeError`).",
        example="@jax.jit\ndef power(x, n):\n    result = jnp.ones_like(x)\n    for i in range(n):\n"
        "        result = result * x\n    return result\n",
        fixed="@jax.jit\ndef power(x, n):\n    result = jnp.ones_like(x)\n\n    def _i_loop_body(i, result):\n"
        "        result = result * x\n        return result\n\n"
        "    result = lax.fori_loop(0, n, _i_loop_body, result)\n    return result\n",
        safety="Safe. The carry is every name the body changes and needs from the previous "
        "iteration or that code after the loop reads; several names travel as a tuple. A loop "
        "that runs zero times leaves them as they were. The loop variable, when read after the "
        "loop, is carried and keeps its last value. `range(a, b, step)` with a literal step counts "
        "iterations (negative steps too); `range(int(n))` casts `n` with `jnp`. A Python `0` that "
        "accumulates floats is fine: `fori_loop` promotes a weakly typed start. `break` and "
        "`continue` are rewritten: the loop becomes a `lax.while_loop` whose carry holds a stop "
        "flag, and what follows a jump runs only while it has not fired; a jump inside an `if` of "
        "the body first becomes a flag (`breaking = True`, reset on every pass), offered only "
        "when the loop is then rewritten; an `else:` clause moves after the loop (under `if not "
        "breaking:` when the loop can break). A loop over the rows of an array (`for v in x`, `for i, v "
        "in enumerate(x)`) that breaks or continues on a traced test is first looped over by index "
        "(`for i in range(len(x)):` reading `v = x[i]`; an array with no rows then fails to trace). "
        "A `return` in the body, in a loop the function's last `return` follows, first becomes a "
        "`break`: the value is kept in `result` (initialised, before the loop, to what the function "
        "returns after it, when that reads nothing the loop binds), or the `break` alone does where "
        "both return the same expression; when more code follows the loop and the loop returns "
        "what the function's last `return` does, a flag set before the `break` (`returned = True`) "
        "skips that code (`if not returned:`); otherwise `if returned: return v` follows the loop "
        "(with several values, `which_return = 2` before the `break` and `if which_return == 2: "
        "return v2`). Reported, not fixed: a loop with no `return` after it, a bare `return`, a jump "
        "inside a `with`/`try` block, a step that is not a literal, a name first bound in the body and read "
        "after the loop (unless the body binds a name with a value before the loop to it, `x = x_new`: "
        "the carry then starts as that name, its type), and anything a body function cannot hold (writes into outer objects, "
        "`global`, `yield`). A loop that appends to a list code after it reads (`out.append(x)`, then "
        "`jnp.stack(out)`) makes the list as long as its trip count, a shape: it stays a Python loop "
        "and the parameters that bound it become static arguments of the jit (every call that passed "
        "them traced failed before); so does a loop whose body needs its index as a Python int (a slice "
        "bound, a shape, the bounds of a `range`, an index into a Python list or tuple), which a lax "
        "loop's traced index cannot be. A body that calls a helper which prints or logs while traced is "
        "reported: the body is traced once, so the output would appear once. Note that "
        "`fori_loop` with traced bounds is not reverse-mode differentiable; when a gradient is "
        "taken, make the bound a static argument instead.",
    )



class ScannableLoop(_LoopRule):
    code = "JF203"
    name = "loop-to-scan"
    summary = "a loop over the rows of an array unrolls at trace time; `lax.scan` compiles it once"
    fixable = "sometimes"
    loop_type = ast.For
    kind = LoopKind.SCAN
    trouble = "unrolls at trace time"
    doc = RuleDoc(
        what="With `scan-static-loops = true`: finds `for x in xs` (and `enumerate(xs)`, "
        "`zip(xs, ys)`) over traced arrays and rewrites them with `lax.scan`, lists built with "
        "`.append` becoming its stacked outputs.",
        why="Such a loop is correct under jit but is unrolled: the compiled program holds one copy "
        "of the body per row, so compile time and program size grow with the array. `lax.scan` "
        "traces the body once. Off by default: for short arrays the unrolled loop is fine and can "
        "be faster at run time.",
        example="@jax.jit\ndef rnn(h, xs: jax.Array):\n    hs = []\n    for x in xs:\n        h = jnp.tanh(h + x)\n"
        "        hs.append(h)\n    return jnp.stack(hs)\n",
        fixed="@jax.jit\ndef rnn(h, xs: jax.Array):\n    def _x_scan_body(h, x):\n        h = jnp.tanh(h + x)\n"
        "        return h, h\n\n    h, hs = lax.scan(_x_scan_body, h, xs)\n    return jnp.stack(hs)\n",
        safety="Safe: the carry is found as for `fori_loop`; `jnp.stack(hs)` of the stacked output "
        "is that output. Traced arguments and computed arrays are scanned; a Python list passed "
        "where an array is expected makes the rewrite fail to trace (the body gets a list). "
        "Reported, not fixed: appends inside branches (a ragged output), a list read otherwise "
        "than by `jnp.stack`/`jnp.array`, `break`/`continue`.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        if module.settings.scan_static_loops:
            yield from super().check(module)



class TracedWhileLoop(_LoopRule):
    code = "JF202"
    name = "traced-while-loop"
    summary = "`while` on a traced condition raises under jit; use `lax.while_loop`"
    fixable = "sometimes"
    loop_type = ast.While
    kind = LoopKind.WHILE
    trouble = "tests a traced value"
    doc = RuleDoc(
        what="Finds `while` loops whose condition is a traced value and rewrites them with "
        "`lax.while_loop`: a condition function and a body function over the loop's carry.",
        why="Each test of the condition calls `bool()` on a tracer, which raises "
        "`TracerBoolConversionError` under `jax.jit`.",
        example="@jax.jit\ndef halvings(x):\n    steps = 0\n    while x > 1:\n        x = x / 2\n"
        "        steps = steps + 1\n    return steps\n",
        fixed="@jax.jit\ndef halvings(x):\n    steps = 0\n    x_dtype = jnp.result_type(x, 0.0)\n\n"
        "    def _while_x_gt_1(carry):\n        x, _ = carry\n        return x > 1\n\n"
        "    def _while_x_gt_1_body(carry):\n        x, steps = carry\n        x = x / 2\n"
        "        steps = steps + 1\n        return x, steps\n\n    x, steps = lax.while_loop(\n"
        "        _while_x_gt_1,\n        _while_x_gt_1_body,\n        (jnp.asarray(x, x_dtype), steps),\n"
        "    )\n    return steps\n",
        safety="Safe. The carry is what the body changes that the test, the next iteration or later "
        "code reads. `and`/`or`/`not` in the test become `jnp.logical_*`; a test that is not a "
        "boolean (`while n:`) is compared with zero. `break`/`continue` are rewritten as for "
        "JF201 (a stop flag in the carry; a jump inside an `if` of the body first becomes a flag). "
        "An `else:` clause moves after the loop as for JF201, and a `return` in the body becomes a "
        "`break` as for JF201. A carry a pass may give another type (`x / 2` of an int `x` is a "
        "float; a lax carry keeps one type) starts cast to the type that holds every value it "
        "takes. Reported, not fixed: a body that changes nothing the test reads. "
        "`lax.while_loop` is not reverse-mode differentiable.",
    )


def _may_leave(loop: ast.For) -> bool:
    """Whether the loop's body holds a `break` of its own or a `return` (else its traced
    jumps are `continue`s: each skips the rest of one pass)."""
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in loop.body]
    while stack:
        node, nested_loop = stack.pop()
        if isinstance(node, ast.Return) or isinstance(node, ast.Break) and not nested_loop:
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        inner = nested_loop or isinstance(node, ast.For | ast.AsyncFor | ast.While)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return False
