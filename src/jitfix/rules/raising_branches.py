"""JF106 — a ``lax.cond`` branch that raises: jit traces both branches, so it raises always.

``lax.cond(x > 10, lambda _: raise_error(), lambda _: x, operand)`` with ``raise_error``
raising ``ValueError``: without jit only the branch the test picks runs, so it is a check;
under jit both branches are traced and the raise happens while tracing, for every input
(jax#4257). The check it means is ``checkify.check(jnp.logical_not(x > 10), msg)`` before the
other branch, which is then all that is left of the cond; the jits that reach it are
checkified as for any staged check (``rules/checkify_staging.py``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from jitfix.analysis.blocks import nodes_of, own_expressions, walk_body
from jitfix.analysis.runtime_checks import RuntimeCheck
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.checkify_staging import (
    CHECKIFY,
    HELPER_SOURCES,
    STAGED_EXCEPTION,
    CheckMessage,
    certainly_array,
    checkified_jits,
    checkify_check_source,
    checkify_message,
    merged,
)
from jitfix.rules.function_context import FunctionContext, function_contexts, name_position

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
_SIMPLE_STATEMENTS = (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)


@dataclass(frozen=True)
class RaisingCond:
    """A ``lax.cond`` one of whose branches only raises (``raising``, a local def of the
    function), the other computing the result."""

    call: ast.Call
    test: ast.expr
    raises_when_true: bool
    other: ast.expr  # the branch that computes
    operands: tuple[ast.expr, ...]
    raising: FunctionNode  # the local def that raises
    raised: ast.Raise

    @staticmethod
    def of(node: ast.AST, module: ModuleContext, function: FunctionNode) -> RaisingCond | None:
        if not (isinstance(node, ast.Call) and module.imports.resolve(node.func) == "jax.lax.cond"):
            return None
        named = {keyword.arg: keyword.value for keyword in node.keywords}
        if None in named or any(isinstance(argument, ast.Starred) for argument in node.args):
            return None
        slots = ["pred", "true_fun", "false_fun"]
        given = dict(zip(slots, node.args))
        if any(slot in named for slot in slots[:len(node.args)]):
            return None
        given.update({slot: named[slot] for slot in slots if slot in named})
        operands = tuple(node.args[3:]) + ((named["operand"],) if "operand" in named else ())
        if len(given) != 3 or set(named) - {*slots, "operand"}:
            return None
        true_raise, false_raise = (_raising_def(given[slot], function) for slot in ("true_fun", "false_fun"))
        if (true_raise is None) == (false_raise is None):
            return None
        raising, raised = true_raise or false_raise  # type: ignore[misc]
        other = given["false_fun"] if true_raise is not None else given["true_fun"]
        return RaisingCond(node, given["pred"], true_raise is not None, other, operands, raising, raised)

    def computed(self, module: ModuleContext) -> str | None:
        """The other branch applied to the operands, as written (a lambda's body where it
        reads none of its parameters); None where it cannot be written so."""
        other = self.other
        if isinstance(other, ast.Lambda):
            parameters = {argument.arg for argument in other.args.args}
            if other.args.vararg or other.args.kwarg or other.args.kwonlyargs or other.args.posonlyargs \
                    or len(other.args.args) != len(self.operands):
                return None
            if not any(isinstance(node, ast.Name) and node.id in parameters for node in ast.walk(other.body)):
                body = module.segment(other.body)
                return f"({body})" if "\n" in body else body
            return None
        if isinstance(other, ast.Name | ast.Attribute):
            return f"{module.segment(other)}({', '.join(module.segment(operand) for operand in self.operands)})"
        return None


def _raising_def(branch: ast.expr, function: FunctionNode) -> tuple[FunctionNode, ast.Raise] | None:
    """The local def a branch calls (``lambda _: raise_error()``) or is, whose body is a
    ``raise E(msg)`` and nothing else that its message does not need; None otherwise."""
    if isinstance(branch, ast.Lambda) and isinstance(branch.body, ast.Call) and isinstance(branch.body.func, ast.Name) \
            and not branch.body.args and not branch.body.keywords:
        name, takes = branch.body.func.id, 0
    elif isinstance(branch, ast.Name):
        name, takes = branch.id, 1
    else:
        return None
    local = [node for node in walk_body(function) if isinstance(node, ast.FunctionDef) and node.name == name]
    if len(local) != 1:
        return None
    definition = local[0]
    arguments = definition.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs \
            or len(arguments.args) != takes or definition.decorator_list:
        return None
    body = [line for line in definition.body if not (isinstance(line, ast.Expr) and isinstance(line.value, ast.Constant)
                                                     and isinstance(line.value.value, str))]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None or body[0].cause is not None:
        return None
    parameters = {argument.arg for argument in arguments.args}
    if any(isinstance(node, ast.Name) and node.id in parameters for node in ast.walk(body[0])):
        return None  # the message reads the operand: not the enclosing function's names
    return definition, body[0]


# What `fix` writes for the documented example (the helpers are added once to a module).
FIXED_EXAMPLE = (
    "from functools import wraps\nfrom jax.experimental import checkify\n\n\n"
    + HELPER_SOURCES
    + "@_raise_failed_checks\n@jax.jit\n@_checkified\ndef foo(x):\n"
    "    checkify.check(jnp.logical_not(x > 10), \"x too big: {}\", x)\n    return x\n"
)


class RaisingBranch(Rule):
    code = "JF106"
    name = "raising-branch"
    summary = "a `lax.cond` branch that raises runs while tracing: under jit it raises for every input"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds `lax.cond` calls in traced code one of whose branches only raises (a local def "
        "whose body is `raise E(msg)`, passed as the branch or called by a lambda), and rewrites the "
        "cond as the check it means: `checkify.check` that the other branch is the one taken, then "
        "that branch's value, the jits that reach it checkified.",
        why="jit traces both branches of a `lax.cond`, so the `raise` runs while tracing: the "
        "function raises for every input, the valid ones too. Without jit the cond runs only the "
        "branch its test picks, which is why the code looked right.",
        example="@jax.jit\ndef foo(x):\n    def raise_error():\n        raise ValueError(\"x too big: \" + str(x))\n\n"
        "    return jax.lax.cond(x > 10, lambda _: raise_error(), lambda _: x, operand=None)\n",
        fixed=FIXED_EXAMPLE,
        safety="Safe: valid inputs give what the other branch gives; an input whose test picks the "
        "raising branch raises when the compiled function has run, with the same message (a traced "
        "value it formats shown as it is at run time), as checkify's `JaxRuntimeError` (a `ValueError`) "
        "instead of `E`: unsafe where a handler in the file catches `E` and not that. The local def "
        "that raised goes where nothing else calls it. Reported, not fixed: the other branch a lambda "
        "that reads its operand (or a call of more than a name), a jit the module does not hold (see "
        "JF105).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            for node, statement in own_expressions(entry.traced.node):
                cond = RaisingCond.of(node, module, entry.traced.node)
                if cond is not None:
                    yield self._finding(module, entry, cond, statement)

    def _finding(self, module: ModuleContext, entry: FunctionContext, cond: RaisingCond,
                 statement: ast.stmt) -> Finding:
        where = (f"`lax.cond` in `{entry.traced.qualname}` has a branch that raises "
                 f"(`{cond.raising.name}`): jit traces both branches, so it raises for every input")
        exception = cond.raised.exc.func if isinstance(cond.raised.exc, ast.Call) else cond.raised.exc
        arguments = cond.raised.exc.args if isinstance(cond.raised.exc, ast.Call) else []
        if not isinstance(exception, ast.Name) or len(arguments) > 1:
            return self.finding(module, cond.call, f"{where}; not auto-fixable: it raises what is not `E(msg)`",
                                function=entry.traced)
        check = RuntimeCheck(statement, cond.test, cond.raises_when_true,  # type: ignore[arg-type]
                             arguments[0] if arguments else None, exception.id)
        message = checkify_message(module, check, entry.values_at(statement).is_traced, {})
        computed = cond.computed(module)
        why = ("its message is built in a way `checkify.check` cannot take" if message is None
               else "the other branch reads its operand: apply it by hand" if computed is None
               else "the cond is not the value of a statement of its own" if not isinstance(statement,
                                                                                            _SIMPLE_STATEMENTS)
               else None)
        jits = checkified_jits(module, entry) if why is None else why
        if why is not None or isinstance(jits, str):
            return self.finding(module, cond.call, f"{where}; not auto-fixable: {why or jits}", function=entry.traced)
        assert message is not None and computed is not None and not isinstance(jits, str)
        caught = check.caught_in(module.tree, STAGED_EXCEPTION)
        removed = _only_use(cond, entry.traced.node)  # the def that raised goes with the cond
        first = removed and _opens_the_body_before(cond.raising, statement, entry.traced.node)
        edits = [_checked_statement_edit(module, statement, cond, computed, message, first), *jits[1]]
        if removed:
            edits.append(Edit(name_position(module, cond.raising), cst.FunctionDef, _removed))
        fix = Fix(Safety.UNSAFE if caught else Safety.SAFE, "stage the raising branch with checkify.check",
                  merged(edits))
        how = f"{where}; check what it tests with `checkify.check` and keep the other branch"
        if caught:
            how += f"; unsafe: a handler in this file catches `{exception.id}`, which the staged check no longer raises"
        return self.finding(module, cond.call, how, fix, function=entry.traced)


def _removed(node: cst.CSTNode, context: EditContext) -> cst.RemovalSentinel:
    return cst.RemovalSentinel.REMOVE


def _only_use(cond: RaisingCond, function: FunctionNode) -> bool:
    """Whether the raising def is named nowhere but in this cond."""
    inside = {id(node) for node in ast.walk(cond.call)}
    return not any(isinstance(node, ast.Name) and node.id == cond.raising.name and id(node) not in inside
                   for node in nodes_of(function))


def _opens_the_body_before(definition: FunctionNode, statement: ast.stmt, function: FunctionNode) -> bool:
    """Whether ``definition`` is the first statement of the function's body and ``statement``
    the next: with the def gone, the statement opens the body (no blank line above it)."""
    body = function.body
    return len(body) > 1 and body[0] is definition and body[1] is statement


def _checked_statement_edit(module: ModuleContext, statement: ast.stmt, cond: RaisingCond, computed: str,
                            message: CheckMessage, opens_body: bool) -> Edit:
    """The statement holding the cond, after the check: the cond replaced by the other branch
    (``opens_body``: the first of the body once the def above it goes, so no blank line)."""
    lines = module.lines
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    text = "\n".join(lines[first - 1:last])
    start_col = module.char_col(first, statement.col_offset)

    def offset(line: int, col: int) -> int:
        return sum(len(lines[index]) + 1 for index in range(first - 1, line - 1)) + module.char_col(line, col)

    call = cond.call
    begin, end = offset(call.lineno, call.col_offset), offset(call.end_lineno or call.lineno, call.end_col_offset or 0)
    rewritten = (text[:begin] + computed + text[end:])[start_col:]
    holds = (f"{{jnp}}.logical_not({module.segment(cond.test)})" if cond.raises_when_true
             else module.segment(cond.test) if certainly_array(module, cond.test)
             else f"{{jnp}}.asarray({module.segment(cond.test)})")  # (checkify.check takes an array)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.FlattenSentinel:
        check = checkify_check_source(context, holds.replace("{jnp}", context.name("jax.numpy")), message)
        made = [cst.parse_statement(f"{check}\n"), cst.parse_statement(rewritten + "\n")]
        leading = [] if opens_body else updated.leading_lines  # type: ignore[attr-defined]
        made[0] = made[0].with_changes(leading_lines=leading)
        return cst.FlattenSentinel(made)

    imports = (CHECKIFY, "jax.numpy") if "{jnp}" in holds else (CHECKIFY,)
    return Edit(module.start_of(statement), cst.SimpleStatementLine, replace, imports=imports)
