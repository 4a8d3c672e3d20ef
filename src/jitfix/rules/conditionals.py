"""JF1xx — Python conditionals on traced values.

JF101 ``if``/``elif``/``else`` on a traced value -> branch functions and ``lax.cond``.
JF102 ``a if c else b`` on a traced ``c`` -> ``lax.cond(c, lambda: a, lambda: b)``.
JF103 ``and``/``or``/``not`` and chained comparisons on traced values -> ``jnp.logical_*``.
JF104 a condition on an array of several elements (reported).
JF105 ``assert`` on a traced value -> ``eqx.error_if`` or ``checkify.check``.

Only a condition that is certainly traced is touched; a static one (``x.ndim == 2``,
``y is None``, a static argument) is left byte-identical.

Where the logic is: ``control_flow/ifs.py`` plans and writes the ``lax.cond`` of a traced
``if``; ``control_flow/boolean_expressions.py`` JF102/JF103's expressions. Each function is
planned once for every rule (``rules/function_context.py``; ``control_flow/function.py``
walks it).
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from typing import Iterator

from jitfix.analysis.blocks import own_nodes, walk_body
from jitfix.analysis.passed_values import argument_for
from jitfix.analysis.runtime_checks import CheckHelper, RuntimeCheck, inside_loop, threaded_name, trace_time_text
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import ArrayEvidence
from jitfix.control_flow.boolean_expressions import (
    ternary_edit,
)
from jitfix.control_flow.plans import IfPlan, Lowering, ProblemKind
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.checkify_staging import CheckifiedCheck, checkified_check, condition_text, staged_statement_edit
from jitfix.rules.function_context import (
    FunctionContext,
    function_contexts,
    function_edit,
    is_cheap,
    source_excerpt,
)
from jitfix.rules.lowering import (
    FIRST,
    caller_dicts_note,
    continued_once_dicts_are_new,
    lowering_fix,
    why_no_break,
    why_not_continued,
    writes_private_dicts,
)
from jitfix.rules.python_arguments import jitted_callables
from jitfix.rules.staged_constants import staged_constants
from jitfix.rules.static_arguments import parameters_behind, static_argnames_edit


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


STAGED_CHECK_SAFETY = (
    "A check whose test is traced only because jnp staged arithmetic on Python values (`erfc(beta "
    "* cutoff) > THRESHOLD` of Python settings) has its test written in Python (`math.erfc`): it runs "
    "when the function is traced, as written, where every function in it has an exact Python "
    "twin. Otherwise, fixed where the file imports equinox: `assert ok, msg` and `if bad: raise E(msg)` (the lines "
    "before the `raise` that build its message kept) become `x = eqx.error_if(x, bad, msg)`, `x` the "
    "first traced name of the test that the function reads after the check (the check is part of "
    "what the function computes through it; a staged check whose result is unused is compiled away). "
    "Elsewhere -- or where that cannot be done: a check in a loop, a message that formats a traced "
    "value, nothing after the check that uses what it tests -- the check becomes `checkify.check(ok, "
    "msg)` (the traced values an f-string message formats become its formatting arguments, `{}` in "
    "the text), and each jit of the module whose trace reaches it (the function's own, or that of "
    "the traced functions calling it, followed up to a jit: a decorator or a `jax.jit(f, ...)` call) "
    "is checkified: `@_checkified` below the jit decorator and `@_raise_failed_checks` above it "
    "(or `_raise_failed_checks(jax.jit(_checkified(f), ...))`), two helpers added once to the "
    "module: `_checkified` is `checkify.checkify` keeping the function's signature (by which jit "
    "finds static arguments), `_raise_failed_checks` calls the checkified function and raises the "
    "error of a failed check, so every caller still calls `f(...)` and gets its result. "
    "Valid inputs give the same results; invalid ones raise when the compiled function runs, with the "
    "same message, as equinox's runtime error (a `RuntimeError`) or checkify's `JaxRuntimeError` (a "
    "`ValueError`) instead of `E`: unsafe where a handler in the file catches `E` (or a base of it) "
    "and not that error. `and`/`or`/`not` in the test become `jnp.logical_*`, a `bool()` around it "
    "goes. Reported, not fixed: a check whose function is traced through a jit this module does "
    "not hold (or a jitted function that traced code also calls: its error could not be raised "
    "there), and a message built with `%` or `.format` (or a name of a text that may hold braces, "
    "which `checkify.check` would read as fields)."
)


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
        "out of a loop, or returns from inside a loop. Where such an `if` is a statement of the "
        "function's own body that no `return` comes before, and its tests (an `elif` chain's too) "
        "read only parameters that every call of the module gives a Python literal (`if order == 0: "
        "... else: raise NotImplementedError(...)`, called `radial(r, 1)`), those parameters are made "
        "static at every jit of the function instead: safe, as every call that traces them fails at "
        "that `if` now. A condition that is not certainly traced "
        "(shapes, `is None`, static arguments, what follows a `try` whose `except TypeError` returns "
        "once `int(k)` fails on a tracer) is never touched. A check, `if bad: raise E(msg)` with "
        "nothing else in its branch but the lines that build `msg`, is staged as JF105 stages an "
        "`assert` (see there): " + STAGED_CHECK_SAFETY,
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            planned = entry.planned
            function = entry.traced
            for node, plan in planned.plans.items():
                if not isinstance(node, ast.If) or node in planned.forced_ifs:
                    continue
                in_python = _test_in_python(module, entry, node)
                if in_python is not None:
                    yield self.finding(module, node, f"`if {source_excerpt(module, node.test)}` in `{function.qualname}` "
                                       f"({function.how}) tests what jnp computed from Python values, which jnp "
                                       f"stages: raises under jit; compute it in Python ({in_python.functions}), and "
                                       "the `if` runs when the function is traced, as written", in_python.fix,
                                       function=function, end=node.test)
                    continue
                edits = [function_edit(module, function.node, planned.plans, frozenset({node}))]
                edits += entry.edits_in(module, node)
                primitive = "lax.switch" if isinstance(plan, IfPlan) and plan.cases else "lax.cond"
                fix = Fix(Safety.SAFE, f"rewrite with {primitive}", edits)
                message = (f"`if {source_excerpt(module, node.test)}` tests a traced value in `{function.qualname}` "
                           f"({function.how}): raises under jit; rewrite with `{primitive}`"
                           f"{caller_dicts_note(function, node)}")
                yield self.finding(module, node, message, fix, function=function, end=node.test)
            checks = {id(check.statement): check for check in _traced_checks(entry)}
            for check in checks.values():
                yield from self._check_finding(module, entry, check, planned)
            for problem in planned.problems:
                if not isinstance(problem.statement, ast.If) or id(problem.statement) in checks:
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
                static = _static_instead(module, entry, problem.statement)
                if static is not None:
                    names, fix = static
                    listed = ", ".join(f"`{name}`" for name in names)
                    message = (f"`if {source_excerpt(module, problem.statement.test)}` tests a traced value in "
                               f"`{function.qualname}` ({function.how}): raises under jit, and `lax.cond` cannot "
                               f"take it: {problem.reason}{where}; make {listed} static: the test reads nothing "
                               "else, and every call that traces it fails here now (each new value recompiles)")
                    yield self.finding(module, problem.statement, message, fix, function=function,
                                       end=problem.statement.test)
                    continue
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

    def _check_finding(self, module: ModuleContext, entry: FunctionContext, check: RuntimeCheck,
                       planned) -> Iterator[Finding]:
        """``if bad: raise E(msg)`` on a traced ``bad``: staged with ``eqx.error_if`` where it can
        be, else reported with what stands in the way."""
        statement = check.statement
        assert isinstance(statement, ast.If)
        function = entry.traced
        where = (f"`if {source_excerpt(module, statement.test)}: raise` checks a traced value in "
                 f"`{function.qualname}` ({function.how}): raises under jit for every input")
        if CheckHelper.of(function.node) is not None:
            yield self.finding(module, statement, f"{where}; not auto-fixable here: `{function.node.name}` is a "
                               "check its callers make; each call with a traced test is staged where it is made "
                               "(JF105)", function=function, end=statement.test)
            return
        staged = staging(module, entry, check)
        if isinstance(staged, str):
            yield self.finding(module, statement, f"{where}; not auto-fixable: {staged}", function=function,
                               end=statement.test)
            return
        yield self.finding(module, statement, f"{where}; {staged.how()}", staged.fix, function=function,
                           end=statement.test)


def _static_instead(module: ModuleContext, entry: FunctionContext, statement: ast.If) -> tuple[list[str], Fix] | None:
    """The parameters to make static for an ``if`` that ``lax.cond`` cannot take (a branch
    raises: ``else: raise NotImplementedError(...)`` after a chain of modes), where its tests
    read the jitted function's parameters and nothing else traced, and every call of the
    function reaches it (a statement of the function's own body that no ``return`` comes
    before): a call that traces them fails there now, so making them static breaks none."""
    traced = entry.traced
    body = traced.node.body
    if not traced.jit_sites or statement not in body:
        return None
    if any(isinstance(node, ast.Return | ast.Yield | ast.YieldFrom) for node in own_nodes(body[:body.index(statement)])):
        return None
    tests, current = [], statement
    while True:
        tests.append(current.test)
        if len(current.orelse) != 1 or not isinstance(current.orelse[0], ast.If):
            break
        current = current.orelse[0]
    values = entry.values_at(statement)
    names: list[str] = []
    for test in tests:
        found = parameters_behind(test, traced.traced_params, values, traced, entry.arrays.bindings) \
            if values.is_traced(test) else []
        if found is None:
            return None
        names += [name for name in found if name not in names]
    edits = [static_argnames_edit(module, site, names, traced.node) for site in traced.jit_sites]
    if not names or any(edit is None for edit in edits) or not _given_python_values(module, traced, names):
        return None
    listed = ", ".join(f"`{name}`" for name in names)
    return names, Fix(Safety.SAFE, f"add {listed} to static_argnames", edits)  # type: ignore[arg-type]


def _given_python_values(module: ModuleContext, traced: TracedFunction, names: list[str]) -> bool:
    """Whether the module calls the jitted function, and every call that passes one of
    ``names`` passes a Python literal (``radial(r, l, m, 2)``): a mode, not an array."""
    passed = 0
    for jitted in jitted_callables(module):
        if jitted.function is not traced.node:
            continue
        for call, _ in jitted.calls(module.traced.program.scopes):  # type: ignore[union-attr]
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
            for name in names:
                argument = argument_for(call, jitted.function, name, jitted.skipped)
                if argument is None:
                    continue
                if not _python_literal(argument):
                    return False
                passed += 1
    return passed > 0


def _python_literal(expr: ast.expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and isinstance(expr.value, int | float | str | bool)


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
        "lambda: a)`), operands of different types cast to a common one; a parameter that defaults to "
        "None (or is annotated `Optional`) is tested for None first, in Python, as None is static under "
        "jit (`1.0 if scale is None else lax.cond(...)`); reported where more than two "
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
                fix = Fix(Safety.SAFE, how, [site.value_edit(module, entry.boolean_names, entry.traced.node)])
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
    summary = "`assert` (or a call of a check helper) on a traced value raises under jit"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds `assert` statements in traced functions whose test is a traced value "
        "(`assert (x > 0).all()`), and calls of a check helper with a traced test (a function of the "
        "module that is one check of its parameters, `def errorif(cond, err, msg): if cond: raise "
        "err(msg)`, called as `errorif(jnp.any(dx <= 0), ValueError, \"...\")`). An assert on what is "
        "static under jit (`assert x.ndim == 2`, `assert n > 0` for a static `n`) is left alone: it "
        "runs once, at trace time, as meant.",
        why="`assert` asks Python for the truth of its test; of a tracer that raises "
        "`TracerBoolConversionError`. A compiled function cannot stop Python with an exception: "
        "the check has to become a value JAX computes.",
        example="import equinox as eqx\n\n\n@jax.jit\ndef safe_log(x):\n"
        "    assert (x > 0).all(), \"log of a non-positive value\"\n    return jnp.log(x)\n",
        fixed="import equinox as eqx\n\n\n@jax.jit\ndef safe_log(x):\n"
        "    x = eqx.error_if(x, jnp.logical_not((x > 0).all()), \"log of a non-positive value\")\n"
        "    return jnp.log(x)\n",
        safety=STAGED_CHECK_SAFETY,
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        helpers = _check_helpers(module)
        for entry in function_contexts(module):
            for node in walk_body(entry.traced.node):
                check = RuntimeCheck.of(node) if isinstance(node, ast.Assert) else \
                    _helper_call(node, helpers)
                if check is None:
                    continue
                values = entry.values_at(check.statement)
                if not (values.is_traced(check.test) and entry.arrays.certain_truth(check.test, values)):
                    continue
                what = f"`assert {source_excerpt(module, check.test)}` tests" if isinstance(node, ast.Assert) \
                    else f"`{source_excerpt(module, node)}` checks"
                where = f"{what} a traced value in `{entry.traced.qualname}` ({entry.traced.how}): raises under jit"
                staged = staging(module, entry, check)
                if isinstance(staged, str):
                    yield self.finding(module, node, f"{where}; not auto-fixable: {staged}", function=entry.traced,
                                       end=check.test)
                    continue
                yield self.finding(module, node, f"{where} for every input; {staged.how()}", staged.fix,
                                   function=entry.traced, end=check.test)


# -- checks staged with equinox.error_if ------------------------------------------------------


def _traced_checks(entry: FunctionContext) -> Iterator[RuntimeCheck]:
    """The function's ``if bad: raise ...`` checks whose test (less a ``bool()``) is traced (an
    ``elif`` is not one: it cannot become statements)."""
    body = walk_body(entry.traced.node)
    elifs = {id(node.orelse[0]) for node in body if isinstance(node, ast.If) and len(node.orelse) == 1}
    for node in body:
        check = RuntimeCheck.of(node) if isinstance(node, ast.If) and id(node) not in elifs else None
        if check is None:
            continue
        values = entry.values_at(check.statement)
        if values.is_traced(check.test) and entry.arrays.certain_truth(check.test, values):
            yield check


def staging(module: ModuleContext, entry: FunctionContext, check: RuntimeCheck
            ) -> TraceTimeCheck | StagedCheck | CheckifiedCheck | str:
    """How a check on a traced value is fixed: its test computed in Python where it is traced
    only because jnp staged arithmetic on Python values; else staged, with ``equinox.error_if``
    where the file imports equinox and nothing stands in its way, else with ``checkify.check``;
    or why none of those can be."""
    constant = _trace_time_test(module, entry, check)
    if constant is not None:
        return constant
    staged = staged_check(module, entry, check)
    if staged is not None:
        return staged
    checkified = checkified_check(module, entry, check)
    if not isinstance(checkified, str):
        return checkified
    if module.imports.local_name("equinox") is None:
        return f"{checkified} (or stage it with `equinox.error_if`, or check before the jitted call)"
    return f"{why_not_staged(module, entry, check)}; {checkified}"


@dataclass(frozen=True)
class TraceTimeCheck:
    """A check whose test is traced only because jnp staged arithmetic on Python values: its
    test written in Python, the check runs at trace time as written."""

    fix: Fix
    functions: str

    def how(self) -> str:
        return (f"its test is computed with jnp from Python values, which jnp stages: compute it in Python "
                f"({self.functions}), and the check runs when the function is traced, as written")


def _trace_time_test(module: ModuleContext, entry: FunctionContext, check: RuntimeCheck) -> TraceTimeCheck | None:
    return _test_in_python(module, entry, check.statement, check.test)


def _test_in_python(module: ModuleContext, entry: FunctionContext, statement: ast.If | ast.Assert | ast.Expr,
                    test: ast.expr | None = None) -> TraceTimeCheck | None:
    """The fix that writes an ``if``'s test in Python, where it is traced only because jnp
    staged arithmetic on Python values (``if erfc(beta * cutoff) > threshold:`` of settings):
    the ``if`` then runs at trace time, as written (``staged_constants``); None otherwise."""
    tested = test if test is not None else statement.test if isinstance(statement, ast.If) else None
    if tested is None:
        return None
    found = staged_constants(module, entry, tested, statement)
    if found is None or isinstance(found, str):
        return None
    fix, functions = found
    return TraceTimeCheck(fix, functions) if fix.safety is Safety.SAFE else None


def why_not_staged(module: ModuleContext, entry: FunctionContext, check: RuntimeCheck) -> str:
    """Why a check on a traced value is not rewritten with ``equinox.error_if``, in a file that
    imports equinox."""
    values = entry.values_at(check.statement)
    function = entry.traced.node
    if inside_loop(function, check.statement):
        return "the check is in a loop: thread the value it checks through `eqx.error_if` by hand"
    bindings = {line.targets[0].id: line.value for line in check.prelude}  # type: ignore[attr-defined]
    if check.message is not None and not trace_time_text(check.message, values.is_traced, bindings):
        return ("its message formats a traced value, which `eqx.error_if` cannot show: "
                "give it a message of static text")
    return ("no traced value of its test is used after it: `eqx.error_if` stages a check in the value it "
            "returns, and one whose value is unused is compiled away")


@dataclass(frozen=True)
class StagedCheck:
    """A check rewritten as ``x = eqx.error_if(x, bad, msg)``: its fix, the value threaded,
    and whether a handler of the file catches what it raised (then the fix is unsafe)."""

    fix: Fix
    threaded: str
    exception: str
    caught: bool
    equinox: str

    def how(self, on_value: bool = True) -> str:
        on = f" on `{self.threaded}`" if on_value else ""
        how = (f"stage it with `{self.equinox}.error_if`{on}, which raises when the compiled function runs "
               f"(equinox's runtime error with the message, not `{self.exception}`)")
        if self.caught:
            how += (f"; unsafe: a handler in this file catches `{self.exception}`, which the staged check no "
                    "longer raises")
        return how


def staged_check(module: ModuleContext, entry: FunctionContext, check: RuntimeCheck) -> StagedCheck | None:
    """``if bad: raise E(msg)`` -> ``x = eqx.error_if(x, bad, msg)``, where the file imports
    equinox, the check is not in a loop, its message is known at trace time, and a traced name
    of its test is used after it (``x``: threaded through the check, which keeps it in what the
    function computes). None where one of those is missing."""
    equinox = module.imports.local_name("equinox")
    function = entry.traced.node
    values = entry.values_at(check.statement)
    bindings = {line.targets[0].id: line.value for line in check.prelude}  # type: ignore[attr-defined]
    if equinox is None or inside_loop(function, check.statement) or (
            check.message is not None and not trace_time_text(check.message, values.is_traced, bindings)):
        return None
    threaded = threaded_name(check, function, values.is_traced)
    if threaded is None:
        return None
    caught = check.caught_in(module.tree)
    fix = Fix(Safety.UNSAFE if caught else Safety.SAFE, f"stage with {equinox}.error_if",
              [_error_if_edit(module, check, threaded)])
    return StagedCheck(fix, threaded, check.exception, caught, equinox)


def _check_helpers(module: ModuleContext) -> dict[str, CheckHelper]:
    """The module's functions that are one check of their parameters, by name."""
    found = {}
    for statement in module.tree.body:
        if isinstance(statement, ast.FunctionDef) and (helper := CheckHelper.of(statement)) is not None:
            found[statement.name] = helper
    return found


def _helper_call(node: ast.AST, helpers: dict[str, CheckHelper]) -> RuntimeCheck | None:
    """The check a statement calling a check helper makes (``errorif(jnp.any(dx <= 0), ...)``)."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
            and node.value.func.id in helpers:
        return helpers[node.value.func.id].check_at(node)
    return None


def _error_if_edit(module: ModuleContext, check: RuntimeCheck, threaded: str) -> Edit:
    if check.message is not None:
        message = module.segment(check.message)
    elif isinstance(check.statement, ast.Assert):
        message = repr(f"assert {module.segment(check.statement.test)}")
    else:
        message = repr(check.exception)
    uses_jnp = "{jnp}" in condition_text(module, check, "{jnp}", failing=True)

    def staged(context: EditContext) -> str:
        failing = condition_text(module, check, context.name("jax.numpy") if uses_jnp else "", failing=True)
        after_target = dataclasses.replace(context, column=context.column + len(f"{threaded} = "))
        call = after_target.call_source(f"{context.name('equinox')}.error_if", [threaded, failing, message])
        return f"{threaded} = {call}"

    return staged_statement_edit(module, check, staged, ("equinox", "jax.numpy") if uses_jnp else ("equinox",))


def _describe_site(node: ast.AST) -> str:
    if isinstance(node, ast.BoolOp):
        return "`and`" if isinstance(node.op, ast.And) else "`or`"
    if isinstance(node, ast.UnaryOp):
        return "`not`"
    return "chained comparison"
