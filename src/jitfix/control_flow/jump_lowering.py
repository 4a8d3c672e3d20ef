"""A loop whose ``break``/``continue`` sits inside an ``if`` of its body, or that has an
``else:``, rewritten so that every jump is a top-level guard (``if breaking: break``), the
form the loop rewrite takes, and the ``else:`` follows the loop (``if not breaking:``; as it
is when nothing breaks).

Inside the body a jump becomes a flag (``breaking = True``; ``breaking = c`` for a simple
``if c: break`` with a boolean test), and what follows it in each enclosing block runs only
while the flag is down (``if not breaking:``). After the statement that holds the jump, at the
top of the body, ``if breaking: break`` leaves the loop as the jump did. The flags are reset
at the top of every pass. This is plain Python with the original's meaning; it is offered only
when the loop rewrite then takes the loop (the caller checks that on the lowered text), so a
loop is never left half-done.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TypeGuard

import libcst as cst

from jitfix.analysis.blocks import nodes_of
from jitfix.cst_text import code
from jitfix.naming import unique_name

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_LOOPS = (cst.For, cst.While)


def _jumps(node: cst.CSTNode) -> set[type]:
    """The kinds of jump (Break, Continue) in ``node``, a statement of a loop's body, that
    leave that loop: not those of a loop nested in it, but those of its ``else:``, which runs
    in the body."""
    found: set[type] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Break | cst.Continue):
            found.add(type(current))
        elif isinstance(current, _LOOPS):
            stack.extend([current.orelse] if current.orelse is not None else [])
        elif not isinstance(current, _SCOPES):
            stack.extend(current.children)
    return found


def _guard_jump(statement: cst.BaseStatement) -> cst.Break | cst.Continue | None:
    """The jump of ``if c: break`` / ``if c: continue`` -- already the form the loop rewrite
    takes -- or None for any other statement."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return None
    suite = statement.body
    if isinstance(suite, cst.IndentedBlock):
        if len(suite.body) != 1 or not isinstance(suite.body[0], cst.SimpleStatementLine):
            return None
        small = suite.body[0].body
    else:
        assert isinstance(suite, cst.SimpleStatementSuite)
        small = suite.body
    return small[0] if len(small) == 1 and isinstance(small[0], cst.Break | cst.Continue) else None


def _is_guard(statement: cst.BaseStatement) -> TypeGuard[cst.If]:
    return _guard_jump(statement) is not None


def _is_boolean(test: cst.BaseExpression) -> bool:
    """A test whose value is a boolean by its form (a comparison, ``not``, and/or of those)."""
    if isinstance(test, cst.Comparison):
        return True
    if isinstance(test, cst.UnaryOperation):
        return isinstance(test.operator, cst.Not)
    if isinstance(test, cst.BooleanOperation):
        return _is_boolean(test.left) and _is_boolean(test.right)
    return False


class JumpLowering:
    def __init__(self, function: ast.AST, loop: cst.For | cst.While):
        taken = {node.id for node in nodes_of(function) if isinstance(node, ast.Name)}
        taken |= {node.arg for node in nodes_of(function) if isinstance(node, ast.arg)}
        # With an `else:`, every break goes through the flag: after the loop it says whether
        # the loop broke (then it is set once, before the loop, not on every pass).
        self.has_else = loop.orelse is not None
        statements = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        kinds = set().union(*(_jumps(statement) for statement in statements if not self._kept(statement)))
        self.flags: dict[type, str] = {}
        if cst.Break in kinds:
            self.flags[cst.Break] = unique_name("breaking", taken)
        if cst.Continue in kinds:
            self.flags[cst.Continue] = unique_name("skipping", taken)

    def _kept(self, statement: cst.BaseStatement) -> bool:
        """A top-level guard the loop rewrite takes as it is."""
        return _is_guard(statement) and not (self.has_else and cst.Break in _jumps(statement))

    def loop(self, loop: cst.For | cst.While) -> cst.BaseStatement | cst.FlattenSentinel | None:
        """The loop with every jump a top-level guard (and its ``else:`` after it, run when
        no break fired), or None when a jump sits where this cannot reach it (in a ``with``,
        ``try`` or ``match`` block)."""
        if not isinstance(loop.body, cst.IndentedBlock) or not (self.flags or self.has_else):
            return None
        body = self._body(loop.body.body)
        if body is None:
            return None
        lowered = loop.with_changes(body=loop.body.with_changes(body=body), orelse=None)
        if not self.has_else:
            return lowered
        assert loop.orelse is not None
        orelse = list(loop.orelse.body.body) if isinstance(loop.orelse.body, cst.IndentedBlock) else None
        if orelse is None:
            return None
        breaking = self.flags.get(cst.Break)
        if breaking is None:  # nothing breaks: the `else:` always runs
            return cst.FlattenSentinel([lowered, *orelse])
        start = cst.parse_statement(f"{breaking} = False\n").with_changes(leading_lines=loop.leading_lines)
        after = cst.parse_statement(f"if not {breaking}:\n    pass\n").with_changes(
            body=cst.IndentedBlock(body=orelse))
        return cst.FlattenSentinel([start, lowered.with_changes(leading_lines=[]), after])

    def _body(self, statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        reset = [flag for kind, flag in self.flags.items() if not (kind is cst.Break and self.has_else)]
        body: list[cst.BaseStatement] = [cst.parse_statement(f"{flag} = False\n") for flag in reset]
        for statement in statements:
            kinds = _jumps(statement)
            if not kinds or self._kept(statement):
                body.append(statement)
                continue
            if not isinstance(statement, cst.If):
                return None  # a bare jump, or one in a with/try/match block
            lowered = self._if(statement) if not _is_guard(statement) else self._guard(statement)
            if lowered is None:
                return None
            body.append(lowered)
            for kind in (cst.Break, cst.Continue):
                if kind in kinds:
                    word = "break" if kind is cst.Break else "continue"
                    body.append(cst.parse_statement(f"if {self.flags[kind]}:\n    {word}\n"))
        return body

    def _guard(self, statement: cst.If) -> cst.BaseStatement:
        """A top-level ``if c: break`` of a loop with ``else:``: the flag records the break."""
        lowered = self._block([statement])
        return lowered[0] if lowered and len(lowered) == 1 else statement

    def _if(self, statement: cst.If) -> cst.If | None:
        body = self._block(statement.body.body) if isinstance(statement.body, cst.IndentedBlock) else None
        if body is None:
            return None
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            orelse = self._if(orelse)
        elif isinstance(orelse, cst.Else):
            block = self._block(orelse.body.body) if isinstance(orelse.body, cst.IndentedBlock) else None
            orelse = None if block is None else orelse.with_changes(body=orelse.body.with_changes(body=block))
        if statement.orelse is not None and orelse is None:
            return None
        return statement.with_changes(body=statement.body.with_changes(body=body), orelse=orelse)

    def _block(self, statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement] | None:
        """A nested block: a jump sets its flag (what follows it is dead), and what follows a
        statement that may jump runs only while the flags it may set are down."""
        result: list[cst.BaseStatement] = []
        for index, statement in enumerate(statements):
            kinds = _jumps(statement)
            if not kinds:
                result.append(statement)
                continue
            if isinstance(statement, cst.SimpleStatementLine):
                return result + [self._jump_line(statement)]
            if _is_guard(statement) and _is_boolean(statement.test):  # `if c: break` -> `breaking = c`
                kind = type(_guard_jump(statement))
                lowered: cst.BaseStatement | None = cst.parse_statement(
                    f"{self.flags[kind]} = {code(statement.test)}\n").with_changes(
                        leading_lines=statement.leading_lines)
            elif isinstance(statement, cst.If):
                lowered = self._if(statement)
            else:
                return None
            if lowered is None:
                return None
            result.append(lowered)
            rest = statements[index + 1:]
            if not rest:
                return result
            inner = self._block(rest)
            if inner is None:
                return None
            for kind in (cst.Continue, cst.Break):
                if kind in kinds:
                    inner = [cst.parse_statement(f"if not {self.flags[kind]}:\n    pass\n").with_changes(
                        body=cst.IndentedBlock(body=inner))]
            return result + inner
        return result

    def _jump_line(self, line: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """``a = 1; break`` -> ``a = 1; breaking = True`` (what follows a jump never runs)."""
        small = list(line.body)
        at = next(index for index, part in enumerate(small) if isinstance(part, cst.Break | cst.Continue))
        flag = cst.parse_statement(f"{self.flags[type(small[at])]} = True\n")
        assert isinstance(flag, cst.SimpleStatementLine)
        return line.with_changes(body=[*small[:at], *flag.body])
