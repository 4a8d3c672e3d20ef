"""Runtime checks: ``if bad: raise E(msg)`` and ``assert ok, msg`` on traced values.

Under jit a traced test has no truth, so a check written in Python raises for every input,
valid or not. ``equinox.error_if(x, bad, msg)`` stages the check: the compiled function raises
with ``msg`` when ``bad`` holds. It returns ``x``, and a check whose result is never used is
compiled away, so the value threaded through it must be one the function goes on to use.
This module recognises the checks and what a staged check needs: the failing condition, a
message known at trace time, and the value to thread.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Callable

from jitfix.analysis.blocks import walk_body

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class RuntimeCheck:
    """``if test: raise E(message)`` (``fails_when_true``) or ``assert test, message``.

    ``test`` is the test as written, less a ``bool(...)`` around it (the statement takes its
    truth either way). ``prelude`` holds the assignments before the ``raise`` that build its
    message (``msg = "..."``); ``exception`` is the class raised (``AssertionError`` for an
    assert)."""

    statement: ast.If | ast.Assert
    test: ast.expr
    fails_when_true: bool
    message: ast.expr | None
    exception: str
    prelude: tuple[ast.Assign, ...] = ()

    @staticmethod
    def of(statement: ast.stmt) -> RuntimeCheck | None:
        if isinstance(statement, ast.Assert):
            return RuntimeCheck(statement, _without_bool(statement.test), False, statement.msg, "AssertionError")
        if not isinstance(statement, ast.If) or statement.orelse:
            return None
        *prelude, last = statement.body
        if not isinstance(last, ast.Raise) or last.exc is None \
                or not all(_is_name_assignment(line) for line in prelude):
            return None
        exception, arguments = (last.exc.func, last.exc.args) if isinstance(last.exc, ast.Call) \
            and not last.exc.keywords else (last.exc, [])
        if not isinstance(exception, ast.Name) or len(arguments) > 1 \
                or any(isinstance(argument, ast.Starred) for argument in arguments):
            return None
        return RuntimeCheck(statement, _without_bool(statement.test), True, arguments[0] if arguments else None,
                            exception.id, tuple(prelude))  # type: ignore[arg-type]

    def caught_in(self, module: ast.Module) -> bool:
        """Whether a handler in ``module`` would catch what the check raises (by its class, a
        base of it, or a bare ``except``): there the exception is part of the program's flow,
        and the staged check raises another class (equinox's runtime error)."""
        catching = _catching_names(self.exception)
        for node in ast.walk(module):
            if isinstance(node, ast.ExceptHandler):
                if node.type is None:
                    return True
                types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                if any(_last_name(kind) in catching for kind in types):
                    return True
        return False


def _without_bool(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "bool" \
            and len(test.args) == 1 and not test.keywords and not isinstance(test.args[0], ast.Starred):
        return test.args[0]
    return test


def _is_name_assignment(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
        and isinstance(statement.targets[0], ast.Name)


def _catching_names(exception: str) -> frozenset[str]:
    """The class names whose handler catches ``exception``: its own and, for a built-in, its
    bases; for a class of the program's, the catch-alls."""
    kind = getattr(builtins, exception, None)
    if isinstance(kind, type) and issubclass(kind, BaseException):
        return frozenset(base.__name__ for base in kind.__mro__ if base is not object)
    return frozenset({exception, "Exception", "BaseException"})


def _last_name(kind: ast.expr) -> str | None:
    if isinstance(kind, ast.Name):
        return kind.id
    return kind.attr if isinstance(kind, ast.Attribute) else None


def trace_time_text(expr: ast.expr, is_traced: Callable[[ast.AST], bool],
                    bindings: dict[str, ast.expr]) -> bool:
    """Whether ``expr`` is a string known at trace time: a literal, an f-string or ``%`` /
    ``.format`` / ``+`` of one whose formatted values are not traced, or a name of
    ``bindings`` (the check's own message assignments) bound to one."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, str)
    if isinstance(expr, ast.JoinedStr):
        return all(not isinstance(part, ast.FormattedValue) or not _reads_traced(part.value, is_traced)
                   for part in expr.values)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Mod):
        return trace_time_text(expr.left, is_traced, bindings) and not _reads_traced(expr.right, is_traced)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "format":
        return trace_time_text(expr.func.value, is_traced, bindings) and not any(
            _reads_traced(part, is_traced) for part in [*expr.args, *(keyword.value for keyword in expr.keywords)])
    if isinstance(expr, ast.Name) and expr.id in bindings:
        return trace_time_text(bindings[expr.id], is_traced, bindings={})
    return False


def _reads_traced(expr: ast.AST, is_traced: Callable[[ast.AST], bool]) -> bool:
    """Whether formatting ``expr`` formats a traced value (``x``, ``x.sum()``; not ``x.shape``)."""
    parts = expr.elts if isinstance(expr, ast.Tuple) else [expr]
    return any(is_traced(part) for part in parts)


def threaded_name(check: RuntimeCheck, function: FunctionNode, is_traced: Callable[[ast.AST], bool]) -> str | None:
    """The traced name of the test that the function reads after the check, before binding it
    again: threading it through the staged check keeps the check in what the function computes.
    The first such name of the test, None when there is none."""
    after = [node for node in walk_body(function) if isinstance(node, ast.Name)
             and (node.lineno, node.col_offset) > _end_of(check.statement)]
    parameters = {argument.arg for argument in (*function.args.posonlyargs, *function.args.args,
                                                 *function.args.kwonlyargs)}
    local = parameters | {node.id for node in walk_body(function)
                          if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    for node in ast.walk(check.test):
        if not (isinstance(node, ast.Name) and node.id in local and is_traced(node)):
            continue
        first = next((use for use in after if use.id == node.id), None)
        if first is not None and isinstance(first.ctx, ast.Load):
            return node.id
    return None


def _end_of(statement: ast.stmt) -> tuple[int, int]:
    return (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)


def inside_loop(function: FunctionNode, statement: ast.stmt) -> bool:
    """Whether ``statement`` is in a loop of ``function``: a value rebound there is carried
    from one iteration to the next, which a later rewrite of the loop would have to carry."""
    return any(isinstance(node, ast.For | ast.AsyncFor | ast.While)
               and any(child is statement for child in ast.walk(node)) for node in walk_body(function))
