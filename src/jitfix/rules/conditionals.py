"""JF1xx — Python conditionals on traced values.

JF101 ``if``/``elif``/``else`` on a traced value -> branch functions and ``lax.cond``.
JF102 ``a if c else b`` on a traced ``c`` -> ``lax.cond(c, lambda: a, lambda: b)``.
JF103 ``and``/``or``/``not`` and chained comparisons on traced values -> ``jnp.logical_*``.
JF104 a condition on an array of several elements (reported).
JF105 ``assert`` on a traced value (reported).

Only a condition that is certainly traced is touched; a static one (``x.ndim == 2``,
``y is None``, a static argument) is left byte-identical.

Where the logic is: ``control_flow/ifs.py`` plans and writes the ``lax.cond`` of a traced
``if``; ``control_flow/boolean_expressions.py`` JF102/JF103's expressions. Each function is
planned once for every rule (``rules/function_context.py``; ``control_flow/function.py``
walks it).
"""

from __future__ import annotations

import ast
from typing import Iterator

from jitfix.analysis.blocks import own_nodes, walk_body
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import ArrayEvidence
from jitfix.control_flow.boolean_expressions import (
    ternary_edit,
)
from jitfix.control_flow.plans import IfPlan, Lowering, ProblemKind
from jitfix.findings import Finding, Fix, Safety
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import function_contexts, function_edit, is_cheap, source_excerpt
from jitfix.rules.lowering import (
    FIRST,
    caller_dicts_note,
    continued_once_dicts_are_new,
    lowering_fix,
    why_no_break,
    why_not_continued,
    writes_private_dicts,
)



def _rows_of_what(function: TracedFunction, statement: ast.If, arrays: ArrayEvidence) -> str:
    """For a jump out of a loop over a parameter's rows (``for v in xs:``): a loop over an
    array's rows is rewritten over its indices, which a list (or dict) would not take."""
    loop = next((node for node in walk_body(function.node) if isinstance(node, ast.For)
                 and any(child is statement for child in own_nodes(node.body))), None)
    if loop is None or not isinstance(loop.iter, ast.Name) or loop.iter.id not in arrays.params \
            or loop.iter.id in arrays.array_params:
        return ""
    name = loop.iter.id
    return (f"; `{name}` may be a list, which a lax loop cannot index by a traced position: annotated "
            f"`{name}: jax.Array`, the loop can be rewritten over its indices where nothing else in it "
            "stands in the way")


# -- the rules -------------------------------------------------------------------------------


class TracedIf(Rule):
    code = "JF101"
    name = "traced-if"
    summary = "`if` on a traced value raises under jit; use `lax.cond`"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds `if`/`elif`/`else` statements whose condition is a traced value inside a "
        "function JAX traces, and rewrites each into branch functions and `lax.cond`.",
        why="Under `jax.jit` the condition is an abstract tracer with no True or False value, so "
        "Python's `if` raises `TracerBoolConversionError`. `lax.cond` stages both branches and "
        "picks one when the compiled function runs.",
        example="@jax.jit\ndef step(x, y):\n    if x.sum() > 0:\n        y = y * 2\n    else:\n"
        "        y = y - 1\n    return y\n",
        fixed="@jax.jit\ndef step(x, y):\n    def _if_x_sum_positive(y):\n        y = y * 2\n        return y\n\n"
        "    def _if_x_sum_non_positive(y):\n        y = y - 1\n        return y\n\n"
        "    y = lax.cond(x.sum() > 0, _if_x_sum_positive, _if_x_sum_non_positive, y)\n    return y\n",
        safety="Safe. Each branch keeps its statements and comments; the names the branches bind "
        "and the code after reads become the results of `lax.cond`, the names they need from "
        "before become its operands, and a name one branch leaves alone is passed through. An "
        "`elif` becomes a `lax.cond` inside the false branch (one level per `elif`, each reading "
        "like the chain it came from). A chain whose tests each compare one value with a number "
        "(`if kind == 0: ... elif kind == 1: ... else: ...`) becomes one `lax.switch`, a branch "
        "per case then the `else`, chosen by `jnp.select` of the tests: the first that holds, as "
        "Python tries them, and the `else` when none does (a value no case names, negative or "
        "too large, is not clamped into a case); one whose cases `return` stays nested. A branch that returns takes the rest of the function with "
        "it when the `if` is the function's last word, and the function returns the `lax.cond`. "
        "An `if` every path through which ends by appending one value to the same list (or to "
        "the same lists, in one order) first binds that value in each branch and appends it "
        "once after the `if`. "
        "Results that may differ in type (a Python `0` in one branch, `x / 2` in the other; `n` "
        "in one and `x` in the other, an int and a float argument) are cast to "
        "`jnp.result_type` of all branches, the type the eager code's values fit. No fix, and "
        "a finding saying why, for a name bound in one branch only with no value before, a "
        "branch that yields, raises, declares `global`/`nonlocal`, writes into an outer object "
        "(`self.n = ...`, `cache.append(...)`), calls a helper that prints or logs while traced "
        "(both branches are traced, so its output would appear whichever way the test goes), breaks "
        "out of a loop, or returns from inside a loop. A condition that is not certainly traced "
        "(shapes, `is None`, static arguments, what follows a `try` whose `except TypeError` returns "
        "once `int(k)` fails on a tracer) is never touched.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            planned = entry.planned
            function = entry.traced
            for node, plan in planned.plans.items():
                if not isinstance(node, ast.If) or node in planned.forced_ifs:
                    continue
                edits = [function_edit(module, function.node, planned.plans, frozenset({node}))]
                edits += entry.edits_in(module, node)
                primitive = "lax.switch" if isinstance(plan, IfPlan) and plan.cases else "lax.cond"
                fix = Fix(Safety.SAFE, f"rewrite with {primitive}", edits)
                message = (f"`if {source_excerpt(module, node.test)}` tests a traced value in `{function.qualname}` "
                           f"({function.how}): raises under jit; rewrite with `{primitive}`"
                           f"{caller_dicts_note(function, node)}")
                yield self.finding(module, node, message, fix, function=function, end=node.test)
            for problem in planned.problems:
                if not isinstance(problem.statement, ast.If):
                    continue
                lowering = problem.lowering
                if lowering is Lowering.CONTINUATION and continued_once_dicts_are_new(function, problem.statement):
                    lowering = Lowering.DICT_UPDATES
                lowered = lowering_fix(module, function, problem.statement, lowering) if lowering else None
                if lowered is None and lowering is Lowering.CONTINUATION and writes_private_dicts(function):
                    # The code after it may write into a dict the continuation would take as an
                    # argument (no longer the function's own): the writes made new dicts first.
                    lowering = Lowering.DICT_UPDATES
                    lowered = lowering_fix(module, function, problem.statement, lowering)
                if lowered is not None:
                    message = (f"`if {source_excerpt(module, problem.statement.test)}` tests a traced value in "
                               f"`{function.qualname}` ({function.how}): raises under jit; rewrite with `lax.cond` "
                               f"({FIRST[lowering]})"  # type: ignore[index]
                               f"{caller_dicts_note(function, None if lowering is Lowering.DICT_UPDATES else problem.statement)}")
                    yield self.finding(module, problem.statement, message, lowered, function=function,
                                       end=problem.statement.test)
                    continue
                where = f" (line {problem.line})" if problem.line != problem.statement.lineno else ""
                if problem.lowering is Lowering.CONTINUATION:
                    why = why_not_continued(function, problem.statement)
                    where += f"; and the code after it cannot become a function: {why}" if why else ""
                elif problem.kind is ProblemKind.RETURN_BEFORE_MORE_CODE:
                    where += why_no_break(function, problem.statement)
                elif problem.kind is ProblemKind.JUMP_OUT_OF_LOOP:
                    where += _rows_of_what(function, problem.statement, entry.arrays)
                message = (f"`if {source_excerpt(module, problem.statement.test)}` tests a traced value in "
                           f"`{function.qualname}`: raises under jit; not auto-fixable: {problem.reason}{where}")
                yield self.finding(module, problem.statement, message, function=function, end=problem.statement.test)


class TracedConditionalExpression(Rule):
    code = "JF102"
    name = "traced-conditional-expression"
    summary = "`a if c else b` on a traced `c` raises under jit; use `lax.cond`"
    fixable = "always"
    doc = RuleDoc(
        what="Finds conditional expressions whose condition is a traced value and rewrites them "
        "with `lax.cond` and a lambda per arm.",
        why="`a if c else b` calls `bool(c)`, which raises on a tracer under `jax.jit`.",
        example="@jax.jit\ndef relu(x):\n    return x if x > 0 else 0.0\n",
        fixed="@jax.jit\ndef relu(x):\n    return lax.cond(x > 0, lambda: jnp.asarray(x, jnp.result_type(x, 0.0)), "
        "lambda: 0.0)\n",
        safety="Safe: `lax.cond` runs only the arm the condition picks, like Python (unlike "
        "`jnp.where`, which computes both and can turn a harmless arm into NaN gradients). Arms "
        "of different result types (`x if x > 0 else 0` with a float `x`) are cast to "
        "`jnp.result_type` of both arms.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            rewritten = {id(node) for node, _ in entry.ternaries}
            for node, _statement in entry.ternaries:
                cast = is_cheap(node.body, module.imports) and is_cheap(node.orelse, module.imports)
                squeezed = entry.planned.sizes.least_rank(node.test) >= 1  # `x[i:i + 1] > 0`: one element
                edits = [ternary_edit(module, node, cast, lambda arm: id(arm) in rewritten, squeezed),
                         *entry.edits_in(module, node)]
                fix = Fix(Safety.SAFE, "rewrite with lax.cond", edits)
                message = (f"conditional expression on traced `{source_excerpt(module, node.test)}` in "
                           f"`{entry.traced.qualname}` raises under jit; rewrite with `lax.cond`")
                yield self.finding(module, node, message, fix, function=entry.traced)


class TracedBooleanOperator(Rule):
    code = "JF103"
    name = "traced-boolean-operator"
    summary = "`and`/`or`/`not`/`a < x < b` on traced values raise under jit; use `jnp.logical_*`"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds `and`, `or`, `not` and chained comparisons that take the truth of a traced "
        "value, and rewrites them with `jnp.logical_and`, `jnp.logical_or` and `jnp.logical_not`.",
        why="Python decides `a and b` by calling `bool(a)`; `not x` calls `bool(x)`; "
        "`lo < x < hi` is `lo < x and x < hi`. On a tracer each raises "
        "`TracerBoolConversionError`.",
        example="@jax.jit\ndef inside(x, lo, hi):\n    return lo < x < hi and not jnp.isnan(x)\n",
        fixed="@jax.jit\ndef inside(x, lo, hi):\n    return jnp.logical_and(\n"
        "        jnp.logical_and(lo < x, x < hi),\n        jnp.logical_not(jnp.isnan(x)),\n    )\n",
        safety="Safe. Operands before the first traced one keep Python's short-circuit "
        "(`flag and ...` still skips the rest when `flag` is false). Where the value of `and`/`or` "
        "is used (not only its truth, as in an `if`), Python returns one of the operands: when they "
        "are all booleans (comparisons, `not`, `jnp.isnan`, ...) `jnp.logical_*` gives the same; when "
        "not (`scale or 1.0`), the operand is chosen as Python chooses it, by the truth of the first, "
        "with `lax.cond(scale, lambda: scale, lambda: 1.0)` (`a and b`: `lax.cond(a, lambda: b, "
        "lambda: a)`), operands of different types cast to a common one; reported where more than two "
        "operands follow the first traced one, or where the first would be evaluated twice at a cost "
        "(a call of a function outside JAX). Tests of `while` loops and of `if` statements that "
        "cannot be rewritten are left to those findings.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            for site in entry.booleans:
                if entry.owner(site.node) is not None or entry.in_other_test(site):
                    continue
                what = _describe_site(site.node)
                where = f"{what} on a traced value in `{entry.traced.qualname}` raises under jit"
                problem = site.problem_in_value_context(module.imports, entry.boolean_names)
                if problem:
                    message = f"{where}; not auto-fixable: {problem}"
                    yield self.finding(module, site.node, message, function=entry.traced)
                    continue
                chosen = site.returns_an_operand(module.imports, entry.boolean_names)
                how = "choose the operand with lax.cond" if chosen else "rewrite with jnp.logical_*"
                fix = Fix(Safety.SAFE, how, [site.value_edit(module, entry.boolean_names)])
                use = "`lax.cond`: Python returns one of the operands" if chosen else "`jnp.logical_*`"
                yield self.finding(module, site.node, f"{where}; use {use}", fix, function=entry.traced)


class NonScalarCondition(Rule):
    code = "JF104"
    name = "non-scalar-condition"
    summary = "a condition on an array of several elements fails with or without jit"
    fixable = "never"
    doc = RuleDoc(
        what="Finds `if` statements and conditional expressions whose traced condition is an "
        "array the code shows to have more than one element (`jnp.zeros(3) > x`, "
        "`jnp.array([a, b]) > 0`).",
        why="Python cannot take the truth of a multi-element array: eager code raises "
        "`ValueError: The truth value of an array with more than one element is ambiguous`, "
        "and `lax.cond` needs a scalar predicate. The code needs a decision a tool cannot "
        "make: all elements (`.all()`), any element (`.any()`), or an elementwise choice "
        "(`jnp.where`).",
        example="@jax.jit\ndef f(x):\n    limits = jnp.array([1.0, 2.0])\n    if x < limits:\n"
        "        x = x + 1\n    return x\n",
        fixed="@jax.jit\ndef f(x):\n    limits = jnp.array([1.0, 2.0])\n    if (x < limits).all():\n"
        "        x = x + 1\n    return x\n",
        safety="No fix: `.all()`, `.any()` and `jnp.where` mean different things.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            for node, size in entry.non_scalar:
                what = "`if`" if isinstance(node, ast.If) else "conditional expression"
                message = (f"{what} on `{source_excerpt(module, node.test)}`, an array of {size} elements, in "
                           f"`{entry.traced.qualname}`: its truth is ambiguous with or without jit; "
                           "not auto-fixable: choose `.all()`, `.any()` or `jnp.where`")
                yield self.finding(module, node, message, function=entry.traced, end=node.test)


class TracedAssert(Rule):
    code = "JF105"
    name = "traced-assert"
    summary = "`assert` on a traced value raises under jit"
    fixable = "never"
    doc = RuleDoc(
        what="Finds `assert` statements in traced functions whose test is a traced value "
        "(`assert (x > 0).all()`). An assert on what is static under jit (`assert x.ndim == 2`, "
        "`assert n > 0` for a static `n`) is left alone: it runs once, at trace time, as meant.",
        why="`assert` asks Python for the truth of its test; of a tracer that raises "
        "`TracerBoolConversionError`. A compiled function cannot stop Python with an exception: "
        "the check has to become a value JAX computes.",
        example="@jax.jit\ndef safe_log(x):\n    assert (x > 0).all(), \"log of a non-positive value\"\n"
        "    return jnp.log(x)\n",
        fixed="@jax.jit\ndef safe_log(x):\n    x = eqx.error_if(x, (x <= 0).any(), \"log of a non-positive value\")\n"
        "    return jnp.log(x)\n",
        safety="No fix: the alternatives differ in what they do. `equinox.error_if` raises at run time "
        "from compiled code; `jax.experimental.checkify.check` needs the caller to wrap the function "
        "in `checkify.checkify`; checking the inputs before calling the jitted function keeps it "
        "Python; or the assert goes.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            for node in walk_body(entry.traced.node):
                if not isinstance(node, ast.Assert):
                    continue
                values = entry.values_at(node)
                if not (values.is_traced(node.test) and entry.arrays.certain_truth(node.test, values)):
                    continue
                message = (f"`assert {source_excerpt(module, node.test)}` tests a traced value in "
                           f"`{entry.traced.qualname}` ({entry.traced.how}): raises under jit; not auto-fixable: "
                           "check it with `equinox.error_if` or `checkify.check`, or before the jitted call")
                yield self.finding(module, node, message, function=entry.traced, end=node.test)


def _describe_site(node: ast.AST) -> str:
    if isinstance(node, ast.BoolOp):
        return "`and`" if isinstance(node.op, ast.And) else "`or`"
    if isinstance(node, ast.UnaryOp):
        return "`not`"
    return "chained comparison"
