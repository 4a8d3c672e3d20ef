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

    statement: ast.If | ast.Assert | ast.Expr  # (an Expr: a call of a CheckHelper)
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

    def caught_in(self, module: ast.Module, staged_exception: str = "RuntimeError") -> bool:
        """Whether a handler in ``module`` catches what the check raises (by its class or a base
        of it) but not what the staged check raises (equinox's error is a ``RuntimeError``,
        checkify's a ``ValueError``): there the exception is part of the program's flow, and the
        staged check would escape it."""
        catching, staged = _catching_names(self.exception), _catching_names(staged_exception)
        for node in ast.walk(module):
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                names = {_last_name(kind) for kind in types}
                if names & catching and not names & staged:
                    return True
        return False


@dataclass(frozen=True)
class CheckHelper:
    """A function that is one check of its parameters, ``def errorif(cond, err=ValueError,
    msg=""): if cond: raise err(msg)``: each call of it is a check, with the caller's test.

    ``test``, ``exception`` and ``message`` are parameter names; the exception may instead be
    a class the helper names (``exception_class``), the message a text it writes itself."""

    function: FunctionNode
    test: str
    fails_when_true: bool
    exception: str | None
    exception_class: str | None
    message: str | None
    message_text: ast.expr | None

    @staticmethod
    def of(function: FunctionNode) -> CheckHelper | None:
        body = function.body[1:] if ast.get_docstring(function) is not None else function.body
        if len(body) != 1 or function.args.vararg or function.args.kwarg or function.args.posonlyargs:
            return None
        check = RuntimeCheck.of(body[0])
        parameters = [argument.arg for argument in (*function.args.args, *function.args.kwonlyargs)]
        if check is None or check.prelude or not isinstance(check.statement, ast.If):
            return None
        test = check.statement.test
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        tested = test.operand if isinstance(test, ast.UnaryOp) and negated else test
        if not (isinstance(tested, ast.Name) and tested.id in parameters):
            return None
        message = check.message
        message_parameter = message.id if isinstance(message, ast.Name) and message.id in parameters else None
        if message is not None and message_parameter is None and not isinstance(message, ast.Constant):
            return None
        exception_parameter = check.exception if check.exception in parameters else None
        return CheckHelper(function, tested.id, not negated, exception_parameter,
                           None if exception_parameter else check.exception, message_parameter,
                           None if message_parameter else message)

    def check_at(self, statement: ast.stmt) -> RuntimeCheck | None:
        """The check a call statement of the helper makes (``errorif(x.ndim != 1, ValueError,
        "...")``), None where the call is not one this can read (``*args``, an exception that is
        not a class name)."""
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return None
        bound = _bound_arguments(self.function, statement.value)
        if bound is None or self.test not in bound:
            return None
        exception = bound.get(self.exception) if self.exception else None
        exception_name = exception.id if isinstance(exception, ast.Name) else self.exception_class
        if exception_name is None:
            return None
        message = bound.get(self.message) if self.message else self.message_text
        return RuntimeCheck(statement, _without_bool(bound[self.test]), self.fails_when_true, message, exception_name)


def _bound_arguments(function: FunctionNode, call: ast.Call) -> dict[str, ast.expr] | None:
    """The expression each parameter of ``function`` gets from ``call`` (defaults included)."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) \
            or any(keyword.arg is None for keyword in call.keywords):
        return None
    positional = [argument.arg for argument in function.args.args]
    if len(call.args) > len(positional):
        return None
    bound: dict[str, ast.expr] = {}
    defaults = function.args.defaults
    for name, default in zip(positional[len(positional) - len(defaults):], defaults):
        bound[name] = default
    for argument, keyword_default in zip(function.args.kwonlyargs, function.args.kw_defaults):
        if keyword_default is not None:
            bound[argument.arg] = keyword_default
    bound.update(zip(positional, call.args))
    bound.update((keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None)
    return bound


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
    """The traced name that the function reads after the check, before binding it again,
    among the names of the test and then those the test's names were computed from just
    before it (``dx = jnp.diff(x)``, then ``if jnp.any(dx <= 0): raise``: ``x``): threading it
    through the staged check keeps the check in what the function computes. None when there
    is none."""
    after = [node for node in walk_body(function) if isinstance(node, ast.Name)
             and (node.lineno, node.col_offset) > _end_of(check.statement)]
    parameters = {argument.arg for argument in (*function.args.posonlyargs, *function.args.args,
                                                 *function.args.kwonlyargs)}
    local = parameters | {node.id for node in walk_body(function)
                          if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    tested = [node for node in ast.walk(check.test) if isinstance(node, ast.Name)]
    origins = [node for name in tested if (value := _bound_before(function, check.statement, name.id)) is not None
               for node in ast.walk(value) if isinstance(node, ast.Name)]
    for node in tested + origins:
        if not (node.id in local and is_traced(node)):
            continue
        first = next((use for use in after if use.id == node.id), None)
        if first is not None and isinstance(first.ctx, ast.Load):
            return node.id
    return None


def _bound_before(function: FunctionNode, statement: ast.stmt, name: str) -> ast.expr | None:
    """The value of the last ``name = value`` before ``statement`` in its own block."""
    for node in [function, *walk_body(function)]:
        for block in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if isinstance(block, list) and statement in block:
                for line in reversed(block[:block.index(statement)]):
                    if isinstance(line, ast.Assign) and len(line.targets) == 1 \
                            and isinstance(line.targets[0], ast.Name) and line.targets[0].id == name:
                        return line.value
                return None
    return None


def _end_of(statement: ast.stmt) -> tuple[int, int]:
    return (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)


def inside_loop(function: FunctionNode, statement: ast.stmt) -> bool:
    """Whether ``statement`` is in a loop of ``function``: a value rebound there is carried
    from one iteration to the next, which a later rewrite of the loop would have to carry."""
    return any(isinstance(node, ast.For | ast.AsyncFor | ast.While)
               and any(child is statement for child in ast.walk(node)) for node in walk_body(function))
