"""An ``if`` whose branches return on some paths and fall through to more code on others,
rewritten so that every path returns: the code after the ``if`` becomes a local function (its
*continuation*), and each path that fell through returns its call.

    if c:                                def _after_if(a, b):
        if d:                                b = loop(a, b)
            return a                         return a + b
        a = a * 2
    else:                   ->           if c:
        b = b + 1                            if d:
    b = loop(a, b)                               return a
    return a + b                             a = a * 2
                                             return _after_if(a, b)
                                         else:
                                             b = b + 1
                                             return _after_if(a, b)

This is plain Python with the original's meaning: the continuation runs the same statements
on the same values (every name of the function they read is passed in, each bound on every
path that reaches them), and a helper of the function it calls that reads such a name is
defined again inside it, reading the continuation's own. The ``if`` then ends the function on
every path, the form ``lax.cond`` takes; the restructuring is offered only when the rewrite
then takes everything in the function (``rules/lowering.py``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jitfix.analysis.blocks import (
    always_leaves,
    assigned_names,
    changed_objects,
    closures,
    definitely_assigned,
    free_names_when_called,
    loaded_names,
    nodes_of,
    upward_exposed,
    walk_body,
)
from jitfix.analysis.imports import ImportTable
from jitfix.cst_text import cst, suite_statements
from jitfix.findings import EditError
from jitfix.naming import unique_name

# A step from a statement list to a statement in it: (the `if` whose block it is, or None for
# the function's body; "body" or "orelse"; the index in that block).
Step = tuple[ast.If | None, str, int]


@dataclass(frozen=True)
class ContinuationPlan:
    path: list[Step]  # from the function's body down to the statement the code after it follows
    name: str  # of the continuation
    parameters: list[str]  # what it is given, in the order the function first binds them
    helpers: list[str]  # helpers of the function defined again at its top, in source order


def continuable(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.If) -> bool:
    """Whether ``node`` is reached from the function's body through ``if`` blocks only (not
    inside a loop, ``with`` or ``try``): where a continuation may be planned."""
    return _path_to(function.body, node) is not None


def plan_continuation(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.If, imports: ImportTable,
                      new_dicts: frozenset[str] = frozenset()) -> ContinuationPlan | str:
    """How to give a function of its own to the code after ``node`` -- or after the nearest
    ``if`` around it that such code follows and ends the function --, reached from the
    function's body through ``if`` blocks only; or why it cannot be. ``new_dicts``: dicts
    whose item writes are taken as made new dicts (``d = {**d, k: v}``), not changes in place."""
    path = _path_to(function.body, node)
    if path is None:
        return "the `if` sits in a loop, `with` or `try` block"
    for depth in range(len(path), 0, -1):
        block = _block(function, path[depth - 1])
        index = path[depth - 1][2]
        if block[index + 1:] and always_leaves(block[index + 1:]):
            return _plan_at(function, path[:depth], imports, new_dicts)
    return "no code after the `if` (or around it) ends the function"


def _plan_at(function: ast.FunctionDef | ast.AsyncFunctionDef, path: list[Step],
             imports: ImportTable, new_dicts: frozenset[str]) -> ContinuationPlan | str:
    block = _block(function, path[-1])
    index = path[-1][2]
    node, rest = block[index], block[index + 1:]
    kinds = {type(child) for child in walk_body(function)}
    if kinds & {ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.Await}:
        return "the function declares `global`/`nonlocal` names or is a generator"
    if {"locals", "vars"} & loaded_names(rest):
        return "the code after the `if` reads `locals()`"
    parameters = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    local = parameters | assigned_names(function.body)
    # The continuation is called from inside the branches `lax.cond` makes: an object of the
    # function it changed in place there would hold the branch's tracers (and the rewrite of
    # the `if` would not see the change). Changes of objects it makes itself are its own.
    shared = sorted(_changed_in_place(rest) - assigned_names(rest) - new_dicts)
    if shared:
        return f"the code after the `if` changes `{shared[0]}` in place"
    # Both branches of a `lax.cond` are traced: a Python effect of that code (a `print`, a
    # call made for what it does) would run once per branch traced instead of once.
    effect = next((statement.value for statement in ast.walk(ast.Module(body=rest, type_ignores=[]))
                   if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                   and not _is_staged_effect(statement.value.func, imports)), None)
    if effect is not None:
        return f"the code after the `if` calls `{ast.unparse(effect.func)}` for its effect (line {effect.lineno})"
    # What the `if` or the code after it binds: passed in (or bound) where the continuation
    # reads it. What neither binds keeps its value: the continuation reads it as a closure.
    # (A change in place in the `if` may become a new binding there: `d = {**d, k: v}`.)
    changed = (assigned_names([node]) | assigned_names(rest) | _changed_in_place([node])) & local
    helpers = _helpers_to_copy(function, rest, changed)
    if isinstance(helpers, str):
        return helpers
    available = set(parameters) | definitely_assigned([node])
    for step in path:
        prefix = _block(function, step)[:step[2] + 1]
        if len({statement.lineno for statement in prefix}) != len(prefix):
            return "statements before the `if` share a line"
        available |= definitely_assigned(prefix[:-1])
    known = closures(function)
    wanted = upward_exposed(rest)
    for helper, _ in helpers:
        wanted |= known[helper][1]  # what a helper defined again reads is the continuation's
    wanted = (wanted & changed) - {name for name, _ in helpers}
    unbound = sorted(wanted - available)
    if unbound:
        return f"`{unbound[0]}` may have no value after the `if`, and the code after it reads it"
    taken = {child.id for child in nodes_of(function) if isinstance(child, ast.Name)} | parameters | {
        child.name for child in nodes_of(function) if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)}
    name = unique_name("_after_if", taken)
    order = _first_bound(function)
    return ContinuationPlan(path, name, sorted(wanted, key=lambda n: (order.get(n, (1 << 30, 0)), n)),
                            [helper for helper, _ in helpers])


def _is_staged_effect(func: ast.expr, imports: ImportTable) -> bool:
    """A JAX function (``jax.debug.print``, ``jax.debug.callback``, ``jnp.*``): an effect JAX
    stages runs when the branch runs, not when it is traced."""
    return (imports.resolve(func) or "").startswith("jax.")


def _changed_in_place(statements: list[ast.stmt]) -> set[str]:
    """Names whose object the statements change in place: items or attributes written
    (``d[k] = v``), a method that changes its object called (``xs.append(v)``)."""
    return {name for node in ast.walk(ast.Module(body=statements, type_ignores=[]))
            for name in changed_objects(node) if name is not None}


def _path_to(block: list[ast.stmt], node: ast.If, owner: ast.If | None = None,
             field: str = "body") -> list[Step] | None:
    """The steps from ``block`` down to ``node`` through ``if`` blocks only, or None."""
    for index, statement in enumerate(block):
        if statement is node:
            return [(owner, field, index)]
        if isinstance(statement, ast.If):
            for inner in ("body", "orelse"):
                below = _path_to(getattr(statement, inner), node, statement, inner)
                if below is not None:
                    return [(owner, field, index), *below]
    return None


def _block(function: ast.FunctionDef | ast.AsyncFunctionDef, step: Step) -> list[ast.stmt]:
    owner, field, _ = step
    return function.body if owner is None else getattr(owner, field)


def _helpers_to_copy(function: ast.FunctionDef | ast.AsyncFunctionDef, rest: list[ast.stmt],
                     changed: set[str]) -> list[tuple[str, ast.stmt]] | str:
    """The helpers defined before the ``if`` that the code after it calls (through each
    other too) and that read a name the ``if`` or that code binds: inside the continuation
    they must read its own values, so each is defined again there."""
    known = closures(function)
    defined_in_rest = assigned_names(rest)
    needed: dict[str, ast.stmt] = {}
    pending = [name for name in loaded_names(rest) if name in known and name not in defined_in_rest]
    while pending:
        name = pending.pop()
        definition, reads = known[name]
        if name in needed or not reads & changed:
            continue
        if not isinstance(definition, ast.FunctionDef) or definition.decorator_list \
                or definition.args.defaults or definition.args.kw_defaults:
            return f"`{name}` reads the function's names and cannot be defined again as it is"
        needed[name] = definition
        pending += [other for other in free_names_when_called(definition) if other in known]
    return sorted(needed.items(), key=lambda item: item[1].lineno)


def _first_bound(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[int, int]]:
    """Where each name is first bound: parameters first, in their order."""
    order: dict[str, tuple[int, int]] = {}
    for position, arg in enumerate(a for a in ast.walk(function.args) if isinstance(a, ast.arg)):
        order.setdefault(arg.arg, (0, position))
    for child in walk_body(function):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            order.setdefault(child.id, (child.lineno, child.col_offset))
    return order


class Continuation:
    """The edit of the function: the continuation defined before the statement it follows,
    each path of that statement that falls through returning its call, the code after it
    gone."""

    def __init__(self, plan: ContinuationPlan, helper_sources: list[str]):
        self.plan = plan
        self.helper_sources = helper_sources  # the helpers' definitions, as written

    def __call__(self, node: cst.CSTNode, context: object) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        return node.with_changes(body=self._in_suite(node.body, self.plan.path))

    def _in_suite(self, suite: cst.BaseSuite, path: list[Step]) -> cst.BaseSuite:
        assert isinstance(suite, cst.IndentedBlock)
        statements = list(suite.body)
        index = path[0][2]
        if len(path) > 1:
            statements[index] = self._in_if(statements[index], path[1:])
            return suite.with_changes(body=statements)
        return suite.with_changes(body=self._continued(statements, index))

    def _in_if(self, statement: cst.BaseStatement, path: list[Step]) -> cst.If:
        """Follow one step into an ``if`` (its body, or its ``else:`` -- an ``elif`` is the
        ``else:`` block holding one ``if``)."""
        assert isinstance(statement, cst.If)
        _, field, index = path[0]
        if field == "body":
            return statement.with_changes(body=self._in_suite(statement.body, path))
        orelse = statement.orelse
        if isinstance(orelse, cst.If):  # an elif: the one statement of the block (no code follows it)
            if index != 0 or len(path) < 2:
                raise EditError("the code to continue does not follow an `elif`")
            return statement.with_changes(orelse=self._in_if(orelse, path[1:]))
        assert isinstance(orelse, cst.Else)
        return statement.with_changes(orelse=orelse.with_changes(body=self._in_suite(orelse.body, path)))

    def _continued(self, statements: list[cst.BaseStatement], index: int) -> list[cst.BaseStatement]:
        target = statements[index]
        assert isinstance(target, cst.If)
        call = cst.parse_statement(f"return {self.plan.name}({', '.join(self.plan.parameters)})\n")
        helpers = [cst.parse_statement(source) for source in self.helper_sources]
        after = statements[index + 1:]
        if helpers and not getattr(after[0], "leading_lines", True):
            after[0] = after[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        rest = [*helpers, *after]
        rest[0] = rest[0].with_changes(leading_lines=[])
        blank = cst.EmptyLine(indent=False)
        leading = list(target.leading_lines)
        if index > 0 and not (leading and leading[0].comment is None):
            leading.insert(0, blank)  # a def among statements: a blank line around it
        continuation = cst.FunctionDef(
            name=cst.Name(self.plan.name),
            params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in self.plan.parameters]),
            body=cst.IndentedBlock(body=rest),
            leading_lines=leading)
        returned = _returning(target, call).with_changes(leading_lines=[blank])
        return [*statements[:index], continuation, returned]


def _returning(node: cst.If, call: cst.BaseStatement) -> cst.If:
    """``node`` with ``call`` at the end of each of its blocks that can fall through (an
    ``else:`` added when it has none)."""
    body = _ending(node.body, call)
    orelse = node.orelse
    if orelse is None:
        orelse = cst.Else(body=cst.IndentedBlock(body=[call]))
    elif isinstance(orelse, cst.If):
        orelse = _returning(orelse, call)
    else:
        orelse = orelse.with_changes(body=_ending(orelse.body, call))
    return node.with_changes(body=body, orelse=orelse)


def _ending(suite: cst.BaseSuite, call: cst.BaseStatement) -> cst.BaseSuite:
    statements = suite_statements(suite)
    if _leaves(statements):
        return suite
    return cst.IndentedBlock(body=[*statements, call])


def _leaves(statements: list[cst.BaseStatement]) -> bool:
    """Whether every path through the statements returns or raises (as ``always_leaves``)."""
    source = cst.Module(body=statements).code  # type: ignore[arg-type]
    try:
        parsed = ast.parse(source)
    except SyntaxError:  # a bare `return` outside a function is fine for ast; anything else: say no
        return False
    return always_leaves(parsed.body)
