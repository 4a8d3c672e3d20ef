"""A loop that returns from inside, rewritten so that the loop leaves with a ``break`` and the
function returns after it. A loop of the function's body followed by the function's last
``return`` returns once, after it:

    for i in range(len(x)):                  result = -1
        if x[i] < 0:                         for i in range(len(x)):
            return i                 ->          if x[i] < 0:
    return -1                                        result = i
                                                     break
                                             return result

Plain Python with the original's meaning: what the function returns when the loop ends is
computed before the loop instead of after it (it reads nothing the loop binds and calls
nothing but JAX, so the value is the same), and a ``return`` in the loop keeps its value and
leaves the loop, which the function then returns.

Where the loop returns what the function's last ``return`` returns, no value is kept: the
state at the ``return`` is the state the last ``return`` reads, so leaving the loop is
enough, and code between the loop and the last ``return`` runs only if the loop did not
return:

    for i in range(n):                       returned = False
        if x < 0:                            for i in range(n):
            return x                             if x < 0:
        x = x - 1                    ->              returned = True
    x = x * 2                                        break
    return x                                     x = x - 1
                                             if not returned:
                                                 x = x * 2
                                             return x

Otherwise, where the loop returns one value (every ``return`` in it the same expression), the
flag says the loop returned, and the value is returned right after the loop: a ``break``
leaves the loop in the state the ``return`` saw, so the value is the same:

    for i in range(n):                       returned = False
        total = total + x[i]                 for i in range(n):
        if total > cap:                          total = total + x[i]
            return cap * 2           ->          if total > cap:
    return total                                     returned = True
                                                     break
                                             if returned:
                                                 return cap * 2
                                             return total

Where the loop returns several values, the flag is an int, which of them (in the order they
are written, from 1; 0: none), and an ``if`` for each returns it after the loop:

    for i in range(n):                       which_return = 0
        total = total + x[i]                 for i in range(n):
        if total > cap:                          total = total + x[i]
            return cap * 2                       if total > cap:
        if total < -cap:             ->              which_return = 1
            return -total                            break
    return total                                 if total < -cap:
                                                     which_return = 2
                                                     break
                                             if which_return == 1:
                                                 return cap * 2
                                             if which_return == 2:
                                                 return -total
                                             return total

A loop anywhere else (in an ``if``, say; in no other loop, and the function always ends in a
``return``) takes the last form: the ``if`` after the loop is in the loop's own block, and
the ``if`` around it then returns on one path, which the conditional rewrite takes as any
early return.

The ``break`` is the loop rewrite's to take (one inside an ``if`` through
``jump_lowering``), and the ``if`` the conditional rewrite's; the restructuring is offered
only when they do (``rules/lowering.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from jitfix.analysis.blocks import always_leaves, assigned_names, loaded_names, nodes_of, own_nodes
from jitfix.analysis.imports import ImportTable
from jitfix.cst_text import code, cst
from jitfix.findings import EditError
from jitfix.naming import unique_name

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class LoopReturns:
    loop: ast.For | ast.While  # a loop of the function, in no other
    ordinal: int  # among the loops of the function in the order they are written, counted from 0
    result: str | None  # the name the returned value is kept in; None: each returns what the last return does
    returned: str | None  # the flag set where the loop returned; None: there is none
    # With the flag: whether the loop's values are returned after the loop when it is set (else
    # the code between the loop and the last return is skipped). With several, the flag is an
    # int: which one.
    return_after: bool = False
    several: bool = False  # whether the loop returns several values (compared as code)


def plan_loop_returns(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST,
                      imports: ImportTable) -> LoopReturns | str:
    """How to make the returns of the loop of the function's body that holds ``node`` (or is
    it) breaks, or why it cannot be."""
    loops = [statement for statement in own_nodes(function.body) if isinstance(statement, _LOOPS)]
    loop = next((statement for statement in loops
                 if any(child is node for child in ast.walk(statement))), None)  # the outermost
    if not isinstance(loop, ast.For | ast.While):
        return "the `return` is not in a loop of the function"
    if not always_leaves(function.body):
        return "the function does not end with a `return` of a value after the loop"
    if loop.orelse:
        return "the loop has an `else:` clause"
    for found, nested in _returns(loop.body):
        if found.value is None:
            return f"a bare `return` in the loop (line {found.lineno})"
        if nested:
            return f"the `return` at line {found.lineno} sits in a loop inside the loop"
    taken = {child.id for child in nodes_of(function) if isinstance(child, ast.Name)} | {
        arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    rest = function.body[function.body.index(loop) + 1:] if loop in function.body else []
    after = rest[-1].value if rest and isinstance(rest[-1], ast.Return) else None
    if after is not None and all(ast.dump(found.value) == ast.dump(after)  # type: ignore[arg-type]
                                 for found, _ in _returns(loop.body)):
        # `return x` in the loop and last: leaving the loop (and skipping what follows it), the
        # function returns the same.
        return LoopReturns(loop, loops.index(loop), None, unique_name("returned", taken) if len(rest) > 1 else None)
    if after is not None and len(rest) == 1 and not loaded_names([after]) & assigned_names([loop]) \
            and _pure(after, imports):
        return LoopReturns(loop, loops.index(loop), unique_name("result", taken), None)
    # The loop's values, each read after the break in the state its return saw: the flag says
    # whether the loop returned, or (an int) which value.
    several = len({ast.dump(found.value) for found, _ in _returns(loop.body)}) > 1  # type: ignore[arg-type]
    flag = unique_name("which_return" if several else "returned", taken)
    return LoopReturns(loop, loops.index(loop), None, flag, return_after=True, several=several)


def returns_from_loop(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST, imports: ImportTable) -> bool:
    """Whether the returns of the loop holding ``node`` can be made breaks."""
    return isinstance(plan_loop_returns(function, node, imports), LoopReturns)


def _returns(statements: list[ast.stmt]) -> list[tuple[ast.Return, bool]]:
    """The returns of the statements (not of a def or lambda in them), each with whether it
    sits in a loop nested in them."""
    found: list[tuple[ast.Return, bool]] = []
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in statements]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        if isinstance(node, ast.Return):
            found.append((node, nested))
        stack.extend((child, nested or isinstance(node, _LOOPS)) for child in ast.iter_child_nodes(node))
    return found


def _pure(expr: ast.expr, imports: ImportTable) -> bool:
    """Whether evaluating ``expr`` earlier changes nothing: no call but JAX's, no walrus."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and not (imports.resolve(node.func) or "").startswith("jax."):
            return False
        if isinstance(node, ast.NamedExpr | ast.Lambda | ast.Await | ast.Yield | ast.YieldFrom):
            return False
    return True


class ReturnsAsBreaks:
    """The edit of the function (``cst.FunctionDef``) that the plan describes."""

    def __init__(self, plan: LoopReturns):
        self.plan = plan

    def __call__(self, node: cst.CSTNode, context: object) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        if not isinstance(node.body, cst.IndentedBlock):
            raise EditError("the function's body is on its line")
        if self.plan.return_after:
            edited = node.visit(_at_loop(self.plan.ordinal, self._returning_after))
            assert isinstance(edited, cst.FunctionDef)
            return edited
        body = list(node.body.body)
        at = _body_index(body, self.plan.ordinal)
        last = body[-1]
        if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1
                and isinstance(last.body[0], cst.Return) and last.body[0].value is not None):
            raise EditError("the function does not end with a `return` of a value")
        between = body[at + 1:-1]
        original = body[at]
        assert isinstance(original, cst.For | cst.While)
        result, returned = self.plan.result, self.plan.returned
        if between and returned is None:
            raise EditError("code follows the loop that the plan did not see")
        values: list[cst.BaseExpression] = []
        loop = original.visit(_breaking_returns(result, returned, values, numbered=self.plan.several))
        assert isinstance(loop, cst.For | cst.While)
        if returned is not None:
            if not between:
                raise EditError("no code follows the loop")
            skipped = cst.parse_statement(f"if not {returned}:\n    pass\n")
            assert isinstance(skipped, cst.If)
            following = between[0]
            assert isinstance(following, cst.SimpleStatementLine | cst.BaseCompoundStatement)
            block = skipped.body.with_changes(body=[following.with_changes(leading_lines=[]), *between[1:]])
            body[at:-1] = [cst.parse_statement(f"{returned} = False").with_changes(leading_lines=original.leading_lines),
                           loop.with_changes(leading_lines=[]),
                           skipped.with_changes(body=block, leading_lines=following.leading_lines)]
        elif result is None:
            body[at] = loop
        else:
            first = cst.parse_statement(f"{result} = {code(last.body[0].value)}")
            ending = last.with_changes(body=[last.body[0].with_changes(value=cst.Name(result))])
            # The loop's comments and blank lines go before the new first line.
            body[at:] = [first.with_changes(leading_lines=original.leading_lines), loop.with_changes(leading_lines=[]),
                         ending]
        return node.with_changes(body=node.body.with_changes(body=body))


    def _returning_after(self, original: cst.For | cst.While) -> list[cst.BaseStatement]:
        """The loop with its returns made breaks that set the flag, the flag first made, and
        after the loop a `return` of each value where the flag says the loop returned it."""
        returned, several = self.plan.returned, self.plan.several
        assert returned is not None
        values: list[cst.BaseExpression] = []
        loop = original.visit(_breaking_returns(None, returned, values, numbered=several))
        assert isinstance(loop, cst.For | cst.While)
        tests = [f"{returned} == {number}" for number in range(1, len(values) + 1)] if several else [returned]
        return [cst.parse_statement(f"{returned} = {0 if several else False}").with_changes(
                    leading_lines=original.leading_lines),
                loop.with_changes(leading_lines=[]),
                *(cst.parse_statement(f"if {test}:\n    return {code(value)}\n") for test, value in zip(tests, values))]


def _body_index(body: list[cst.BaseStatement], ordinal: int) -> int:
    """Where in the body the loop of that ordinal is (loops counted as written)."""
    counted = 0
    for index, statement in enumerate(body):
        if counted == ordinal and isinstance(statement, cst.For | cst.While):
            return index
        counter = _at_loop(-1, lambda loop: [loop])
        statement.visit(counter)
        counted += counter.count + 1  # type: ignore[attr-defined]
    raise EditError("the loop the plan names is not a statement of the function's body")


def _at_loop(ordinal: int, replace: Callable[[cst.For | cst.While], list[cst.BaseStatement]]) -> cst.CSTTransformer:
    """The transformer that replaces the loop of that ordinal (loops counted as written, not
    in nested defs and classes; ``count``: the last ordinal it saw) by the statements
    ``replace`` makes of it; a class made when first used, as below."""

    class AtLoop(cst.CSTTransformer):
        def __init__(self) -> None:
            super().__init__()
            self.count = -1
            self.scopes = 0
            self.target: cst.CSTNode | None = None

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            self.scopes += 1
            return self.scopes == 1  # the function edited, not one it defines

        def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
            self.scopes -= 1
            return updated

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def _visit_loop(self, node: cst.For | cst.While) -> bool:
            self.count += 1
            if self.count == ordinal:
                self.target = node
            return True

        def _leave_loop(self, original: cst.For | cst.While, updated: cst.For | cst.While
                        ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
            return cst.FlattenSentinel(replace(updated)) if original is self.target else updated

        def visit_For(self, node: cst.For) -> bool:
            return self._visit_loop(node)

        def visit_While(self, node: cst.While) -> bool:
            return self._visit_loop(node)

        def leave_For(self, original: cst.For, updated: cst.For
                      ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
            return self._leave_loop(original, updated)

        def leave_While(self, original: cst.While, updated: cst.While
                        ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
            return self._leave_loop(original, updated)

    return AtLoop()


def _breaking_returns(result: str | None, returned: str | None, values: list[cst.BaseExpression],
                      numbered: bool = False) -> cst.CSTTransformer:
    """The transformer that makes the loop's returns breaks, adding their values to ``values``
    once each (``numbered``: the flag set to the value's number in it, from 1), a class made
    when first used: libcst loads only when code changes."""

    class BreakingReturns(cst.CSTTransformer):
        """``return v`` as ``result = v`` and ``break`` (just ``break`` with no ``result``: the
        function returns the same expression after the loop), ``returned = True`` before the
        ``break`` when there is that flag; not in a def, class or lambda inside. What follows
        a return on its line never ran: it goes."""

        def __init__(self, result: str | None, returned: str | None):
            super().__init__()
            self.result = result
            self.returned = returned

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def _instead(self, small: list[cst.BaseSmallStatement]) -> list[cst.BaseSmallStatement] | None:
            """The small statements up to a return, the return replaced; None if none returns."""
            at = next((index for index, statement in enumerate(small) if isinstance(statement, cst.Return)), None)
            if at is None:
                return None
            value = small[at].value  # type: ignore[attr-defined]
            number = _number(value, values)
            keep = [cst.Assign(targets=[cst.AssignTarget(cst.Name(self.result))], value=value)] if self.result else []
            if self.returned:
                flag = cst.Integer(str(number)) if numbered else cst.Name("True")
                keep.append(cst.Assign(targets=[cst.AssignTarget(cst.Name(self.returned))], value=flag))
            return [*small[:at], *keep, cst.Break()]

        def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
                                      ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
            small = self._instead(list(updated.body))
            if small is None:
                return updated
            lines = [cst.SimpleStatementLine(body=[statement]) for statement in small]
            lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
            lines[-1] = lines[-1].with_changes(trailing_whitespace=updated.trailing_whitespace)
            return cst.FlattenSentinel(lines)

        def leave_SimpleStatementSuite(self, original: cst.SimpleStatementSuite,
                                       updated: cst.SimpleStatementSuite) -> cst.SimpleStatementSuite:
            small = self._instead(list(updated.body))  # `if c: return v` keeps its one line
            return updated if small is None else updated.with_changes(body=small)

    return BreakingReturns(result, returned)


def _number(value: cst.BaseExpression, values: list[cst.BaseExpression]) -> int:
    """The number of ``value`` among ``values`` (from 1), compared as code; added if new."""
    def key(expr: cst.BaseExpression) -> str:
        return ast.dump(ast.parse(f"(\n{code(expr)}\n)", mode="eval"))

    found = next((number for number, known in enumerate(values, 1) if key(known) == key(value)), None)
    if found is None:
        values.append(value)
        found = len(values)
    return found
