"""Fixes that restructure a statement in plain Python first, so that the next rounds of safe
fixes rewrite it: a loop's nested ``break``/``continue`` as flags (``control_flow/jump_lowering``),
item writes into a dict of the function as new dicts (``control_flow/dict_updates``), the code
after an ``if`` that returns on some paths as a function each path returns the call of
(``control_flow/continuation``).

Each is offered only when it works: the restructured text is analysed and fixed as ``fix``
would, and the restructuring is kept only if no control flow is then left undone in the
function. Inside that check, the restructurings the function needs next (a loop's `return`
made a `break`, then its array looped over by index) are offered as they are: the check's
one verdict, nothing undone at the end, judges them all together, so a function that needs
several is offered the first in one check, however many follow it.
The rewrite itself is those next rounds; this fix is only the restructuring.
"""

from __future__ import annotations

import ast
import textwrap
from typing import TYPE_CHECKING, Callable

from jitfix.analysis.blocks import nodes_of, private_dicts, walk_body
from jitfix.analysis.traced_function import TracedFunction
from jitfix.control_flow.lowering_checks import LoweringChecks, checking_lowered, lowering_checked_for, lowering_checks
from jitfix.control_flow.plans import Lowering
from jitfix.cst_text import code, cst
from jitfix.findings import Edit, EditContext, EditError, Fix, Safety
from jitfix.naming import unique_name
from jitfix.rules.base import CacheKey, ModuleContext

if TYPE_CHECKING:
    from jitfix.engine import FileResult
    from jitfix.findings import Replaced

# The checks of one module's restructurings, where no engine's count is running (a rule run alone).
LOWERING_CHECKS: CacheKey[LoweringChecks] = CacheKey("lowering checks")

DESCRIPTIONS = {
    Lowering.JUMPS: "turn the nested break/continue into flags, then rewrite as a lax loop",
    Lowering.DICT_UPDATES: "write the dict items as new dicts (`d = {**d, k: v}`), then rewrite with lax",
    Lowering.CONTINUATION: "make the code after the `if` a function each path returns the call of, then rewrite "
                           "with lax.cond",
    Lowering.BY_INDEX: "loop over the array's indices (`for i in range(len(x))`), then rewrite as a lax loop",
    Lowering.HOISTED_APPENDS: "bind what each branch appends last to a name and append it after the `if`, then "
                              "rewrite with lax.cond",
    Lowering.RETURNS: "make the loop's `return` a `break` (its value kept, or the code after the loop skipped), "
                      "return after the loop, then rewrite with lax",
}
# The rules of the control flow a restructuring serves (JF1xx conditionals, JF2xx loops):
# one left in the function means the restructuring did not get it rewritten. Other findings
# there (a trace-time log, a stale global) are the function's own, with or without it.
CONTROL_FLOW = ("JF1", "JF2")
# How a finding's message says what the restructuring does first.
FIRST = {
    Lowering.JUMPS: "its nested break/continue first turned into flags",
    Lowering.DICT_UPDATES: "its writes into a dict first written as new dicts",
    Lowering.CONTINUATION: "the code after it first made a function that each path returns the call of",
    Lowering.BY_INDEX: "its array first looped over by index",
    Lowering.HOISTED_APPENDS: "what each branch appends last first bound to a name and appended after it",
    Lowering.RETURNS: "the loop's `return` first made a `break`, the function returning after the loop",
}


def lowering_fix(module: ModuleContext, function: TracedFunction, statement: ast.If | ast.For | ast.While,
                 lowering: Lowering) -> Fix | None:
    """The restructuring of ``statement``, if the rewrite then takes everything in the function
    (inside the check of another restructuring of the function: offered unchecked)."""
    focus = lowering_checked_for.get()
    if focus is not None and function.qualname != focus and not function.qualname.startswith(focus + "."):
        return None  # checking another function's restructuring: what this one needs does not matter there
    restructured = None
    if lowering is Lowering.CONTINUATION:
        assert isinstance(statement, ast.If)
        edit = _continuation_edit(module, function, statement)
        if edit is None:
            return None
        still_undone: Callable[[str], bool] = lambda text: False  # what it made is a function: findings tell
    elif lowering is Lowering.RETURNS:
        from jitfix.control_flow.loop_returns import LoopReturns, ReturnsAsBreaks, plan_loop_returns
        from jitfix.rules.function_context import name_position

        plan = plan_loop_returns(function.node, statement, module.imports)
        if not isinstance(plan, LoopReturns):
            return None
        edit = Edit(name_position(module, function.node), cst.FunctionDef, ReturnsAsBreaks(plan))
        restructured = _function_lines(function)
        still_undone = lambda text: False  # noqa: E731 - what is left is a break: findings tell
    elif lowering is Lowering.HOISTED_APPENDS:
        assert isinstance(statement, ast.If)
        edit = _hoisting_edit(module, function, statement)
        if edit is None:
            return None
        still_undone = lambda text: False  # noqa: E731 - what is left is an if: findings tell
    elif lowering is Lowering.DICT_UPDATES and _dict_writes_outside(function, statement):
        # The writes the rewrite meets include some after the statement (the code after a
        # returning `if` goes into its branches): the function's are all written as new dicts.
        from jitfix.rules.function_context import name_position

        restructure, still_undone = _restructuring(function, lowering)
        edit = Edit(name_position(module, function.node), cst.FunctionDef, restructure)
        restructured = _function_lines(function)
    else:
        restructure, still_undone = _restructuring(function, lowering)
        node_type = cst.If if isinstance(statement, ast.If) else cst.For if isinstance(statement, ast.For) \
            else cst.While
        edit = Edit(module.start_of(statement), node_type, restructure)
    from jitfix.edits import apply  # libcst loads only when code changes

    try:
        lowered_text = apply(module.text, [edit], module.imports, module.tree)
    except EditError:
        return None
    if not checking_lowered.get() and not _checked(module, lowered_text, function.qualname,
                                                   lambda result: _rewrites_all(result, function, still_undone)):
        return None
    return Fix(Safety.SAFE, DESCRIPTIONS[lowering], [edit],
               restructures=restructured or _restructured_lines(function, statement, lowering))


def _checked(module: ModuleContext, lowered_text: str, qualname: str,
             works: Callable[[FileResult | None], bool]) -> bool:
    """Whether what ``fix`` makes of ``lowered_text`` ``works``; False too when no more checks
    are worth the time for the function. Each restructured text is checked once."""
    checks = lowering_checks.get() or module.cached(LOWERING_CHECKS, LoweringChecks)
    if lowered_text in checks.results:
        return works(checks.results[lowered_text])
    if not checks.take(qualname):
        return False  # as many checked for this function as are worth the time
    inside, shared = checking_lowered.set(True), lowering_checks.set(checks)
    focus = lowering_checked_for.set(qualname)
    try:
        result = module.fixed(lowered_text)
    finally:
        checking_lowered.reset(inside)
        lowering_checks.reset(shared)
        lowering_checked_for.reset(focus)
    checks.results[lowered_text] = result
    return works(result)


def _rewrites_all(result: FileResult | None, function: TracedFunction, still_undone: Callable[[str], bool]) -> bool:
    """Whether ``fix`` rewrote the restructured text with no control flow left undone in the
    function (other findings there, a trace-time log or a stale global, are its own)."""
    if result is None or result.new_text is None or still_undone(result.new_text):
        return False
    qualname = function.qualname
    return not any(f.code.startswith(CONTROL_FLOW) and (f.function == qualname or
                                                         (f.function or "").startswith(qualname + "."))
                   for f in result.findings)


def _restructured_lines(function: TracedFunction, statement: ast.If | ast.For | ast.While,
                        lowering: Lowering) -> tuple[int, int]:
    """The lines whose values the next round's lax rewrite may make operands: the statement
    (its jumps become flags, its dict writes new dicts), or, for a continuation, the whole
    function (the code after the statement moves into a function of its own)."""
    if lowering is not Lowering.CONTINUATION:
        return statement.lineno, statement.end_lineno or statement.lineno
    return _function_lines(function)


def _function_lines(function: TracedFunction) -> tuple[int, int]:
    node = function.node
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _dict_writes_outside(function: TracedFunction, statement: ast.stmt | None) -> bool:
    """Whether the function writes items of its private dicts outside ``statement`` (None:
    anywhere)."""
    names = private_dicts(function.node, function.handed_containers)
    inside = {id(node) for node in ast.walk(statement)} if statement is not None else set()
    return any(isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
               and node.value.id in names and id(node) not in inside for node in walk_body(function.node))


def caller_dicts_note(function: TracedFunction, statement: ast.AST | None) -> str:
    """What a user should know when a rewrite of ``statement`` (None: of the whole function)
    makes the writes into a dict the caller passed new dicts: eagerly the caller's dict is no
    longer changed in place (under jit it never was). Empty when it makes no such write."""
    handed = private_dicts(function.node, function.handed_containers) & function.handed_containers
    nodes = walk_body(function.node) if statement is None else ast.walk(statement)
    written = sorted({node.value.id for node in nodes if isinstance(node, ast.Subscript)
                      and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                      and node.value.id in handed})
    if not written:
        return ""
    names = ", ".join(f"`{name}`" for name in written)
    return (f"; {names} then {'is a new dict' if len(written) == 1 else 'are new dicts'} at each write, so a "
            "caller's dict is no longer changed in place (under jit it never is: use what the function returns)")


def writes_private_dicts(function: TracedFunction) -> bool:
    """Whether the function writes items of dicts of its own (``d[k] = v``)."""
    return _dict_writes_outside(function, None)


def why_not_continued(function: TracedFunction, statement: ast.If) -> str | None:
    """Why the code after ``statement`` cannot be made a function, when the plan says so."""
    from jitfix.control_flow.continuation import plan_continuation

    assert function.imports is not None
    plan = plan_continuation(function.node, statement, function.imports)
    return plan if isinstance(plan, str) else None


def continued_once_dicts_are_new(function: TracedFunction, statement: ast.If) -> bool:
    """Whether the code after ``statement`` can become a function only once the function's
    item writes into its own dicts are made new dicts (``d[k] = v`` changes ``d`` in place,
    which a continuation called from a `lax.cond` branch must not; ``d = {**d, k: v}`` is a
    value it returns)."""
    from jitfix.control_flow.continuation import ContinuationPlan, plan_continuation

    assert function.imports is not None
    if isinstance(plan_continuation(function.node, statement, function.imports), ContinuationPlan):
        return False
    dicts = private_dicts(function.node, function.handed_containers)
    return bool(dicts) and isinstance(plan_continuation(function.node, statement, function.imports, dicts),
                                      ContinuationPlan)


def why_no_break(function: TracedFunction, node: ast.AST) -> str:
    """Why the returns of the loop holding ``node`` cannot become breaks, said after a reason
    (or that they can, and the rewrite after that did not take the whole function)."""
    from jitfix.control_flow.loop_returns import plan_loop_returns

    assert function.imports is not None
    plan = plan_loop_returns(function.node, node, function.imports)
    if isinstance(plan, str):
        return f"; and the loop's `return` cannot become a `break`: {plan}"
    return "; with the loop's `return` made a `break`, the function is still not rewritten whole"


def _continuation_edit(module: ModuleContext, function: TracedFunction, statement: ast.If) -> Edit | None:
    """The edit of the function that gives the code after ``statement`` a function of its own
    (``control_flow/continuation``), or None when it cannot."""
    from jitfix.control_flow.continuation import Continuation, plan_continuation
    from jitfix.rules.function_context import name_position

    node = function.node
    plan = plan_continuation(node, statement, module.imports)
    if isinstance(plan, str):
        return None
    definitions = {child.name: child for child in ast.walk(node) if isinstance(child, ast.FunctionDef)}
    sources = [textwrap.dedent(" " * definitions[name].col_offset + module.segment(definitions[name])) + "\n"
               for name in plan.helpers]
    return Edit(name_position(module, node), cst.FunctionDef, Continuation(plan, sources))


def _hoisting_edit(module: ModuleContext, function: TracedFunction, statement: ast.If) -> Edit | None:
    from jitfix.control_flow.hoisted_appends import hoist_appends, hoisted_lists

    names = hoisted_lists(statement)
    if names is None:
        return None
    taken = {child.id for child in ast.walk(function.node) if isinstance(child, ast.Name)} | {
        arg.arg for arg in ast.walk(function.node.args) if isinstance(arg, ast.arg)}
    items = {name: unique_name(f"{name}_item", taken) for name in names}
    return Edit(module.start_of(statement), cst.If, lambda node, context: hoist_appends(node, items))


def _restructuring(function: TracedFunction,
                   lowering: Lowering) -> tuple[Callable[[cst.CSTNode, EditContext], Replaced], Callable[[str], bool]]:
    """(the edit's replacement, whether a fixed text still holds what it put in)."""
    if lowering is Lowering.DICT_UPDATES:
        from jitfix.control_flow.dict_updates import DictUpdates

        names = sorted(private_dicts(function.node, function.handed_containers))
        return (lambda node, context: node.visit(DictUpdates(names))), lambda text: False
    if lowering is Lowering.BY_INDEX:
        return (lambda node, context: _by_index(function.node, node)), lambda text: False

    from jitfix.control_flow.jump_lowering import JumpLowering

    flags: set[str] = set()

    def lower(node: cst.CSTNode, context: EditContext) -> cst.CSTNode | cst.FlattenSentinel:
        assert isinstance(node, cst.For | cst.While)
        lowerer = JumpLowering(function.node, node)
        lowered = lowerer.loop(node)
        if lowered is None:
            raise EditError("a jump sits in a block the lowering does not reach")
        flags.update(lowerer.flags.values())
        return lowered

    return lower, lambda text: _flag_guards_left(text, flags)


def _flag_guards_left(text: str, flags: set[str]) -> bool:
    """Whether ``text`` still holds an ``if <flag>: break`` (or ``continue``) of the lowering."""
    return any(isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in flags
               and len(node.body) == 1 and isinstance(node.body[0], ast.Break | ast.Continue)
               for node in ast.walk(ast.parse(text)))


def _by_index(function: ast.FunctionDef | ast.AsyncFunctionDef, node: cst.CSTNode) -> cst.For:
    """``for v in x:`` as ``for i in range(len(x)):`` whose body starts ``v = x[i]`` (and
    ``for i, v in enumerate(x):`` the same, with its own index): the same rows in the same
    order, the form the loop rewrite takes when a traced test leaves the loop."""
    assert isinstance(node, cst.For)
    if not isinstance(node.body, cst.IndentedBlock):
        raise EditError("the loop's body is on its line")
    target: cst.BaseExpression = node.target
    iterable = node.iter
    if isinstance(iterable, cst.Call):  # enumerate(x): its index is the loop's
        assert isinstance(target, cst.Tuple)
        index, target = target.elements[0].value, target.elements[1].value
        iterable = iterable.args[0].value
    else:
        taken = {child.id for child in nodes_of(function) if isinstance(child, ast.Name)} | {
            arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
        index = cst.Name(unique_name("i", taken))
    row = cst.parse_statement(f"{code(target)} = {code(iterable)}[{code(index)}]")
    assert isinstance(index, cst.Name)
    return node.with_changes(target=index, iter=cst.parse_expression(f"range(len({code(iterable)}))"),
                             body=node.body.with_changes(body=[row, *node.body.body]))
