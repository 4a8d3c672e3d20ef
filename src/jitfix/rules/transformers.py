"""The libcst transformers the rules' fixes run over the subtree they rewrite.

They live apart from the rules because a class must have its base when it is defined:
here, ``libcst`` loads only when a fix is built, and checking code that needs no fix never
loads it (a fifth of a run's start-up).
"""

from __future__ import annotations

import ast
from typing import Callable

from jitfix.analysis.python_arithmetic import OPERATOR, TO_INT
from jitfix.cst_text import code, cst
from jitfix.findings import EditContext


class AttributeReads(cst.CSTTransformer):
    """``config.LR`` -> ``LR`` (or ``self.lr`` -> ``lr``): each ``(name, attribute)`` read
    becomes the parameter it is passed in as."""

    def __init__(self, parameters: dict[tuple[str, str], str]):
        super().__init__()
        self.parameters = parameters

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(updated.value, cst.Name):
            parameter = self.parameters.get((updated.value.value, updated.attr.value))
            if parameter is not None:
                return cst.Name(parameter, lpar=updated.lpar, rpar=updated.rpar)
        return updated


def _binary_operators() -> dict[str, cst.BaseBinaryOp]:
    return {"+": cst.Add(), "-": cst.Subtract(), "*": cst.Multiply(), "/": cst.Divide(), "//": cst.FloorDivide(),
            "**": cst.Power(), "%": cst.Modulo()}


class InPython(cst.CSTTransformer):
    def __init__(self, functions: dict[str, str | None], context: EditContext):
        super().__init__()
        self.functions, self.context = functions, context

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        source = code(original.func)
        if source not in self.functions:
            return updated
        python = self.functions[source]
        if python is None:
            return updated.args[0].value
        if python == TO_INT:  # x.astype(int) -> int(x), or x itself where that is an int already
            assert isinstance(updated.func, cst.Attribute)
            number = updated.func.value
            math = self.context.name("math")
            if isinstance(number, cst.Call) and code(number.func) in {f"{math}.ceil", f"{math}.floor",
                                                                      f"{math}.trunc", "round"}:
                return number
            return cst.Call(func=cst.Name("int"), args=[cst.Arg(number)])
        if python.startswith(OPERATOR):  # jnp.add(n, 1) -> (n + 1)
            operator = _binary_operators()[python[len(OPERATOR):]]
            return cst.BinaryOperation(left=updated.args[0].value, operator=operator, right=updated.args[1].value,
                                       lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        module, _, function = python.rpartition(".")
        name = cst.parse_expression(f"{self.context.name(module)}.{function}" if module else function)
        if not updated.args and isinstance(updated.func, cst.Attribute):  # jnp.array(s).prod() -> math.prod(s)
            return cst.Call(func=name, args=[cst.Arg(updated.func.value)])
        return updated.with_changes(func=name)


def _unread_binding(line: cst.SimpleStatementLine, unread: frozenset[str]) -> bool:
    """A line of one statement, with no comment above it, that is one of ``unread`` (a comment
    ending its line goes with the statement into the def that binds it too)."""
    if len(line.body) != 1 or line.leading_lines and any(empty.comment for empty in line.leading_lines):
        return False
    return ast.unparse(ast.parse(code(line.body[0].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)))) in unread


class ThreadedBody(cst.CSTTransformer):
    """A jitted body with its state threaded through (``rules/threaded_state.py``): the
    ``global`` declarations of the threaded names dropped, ``self.v`` spelled as the local
    ``v``, every ``return`` giving back the state too (``returned`` spells what it returns;
    None where no state is returned), and each host call the wrapper now makes (``hoisted``,
    by its source) read as the parameter it is passed in as, the statements binding only what
    those calls read (``unread``, as ``ast.unparse`` spells them) dropped. Nested defs and lambdas keep their own
    returns."""

    def __init__(self, self_name: str | None, locals_: dict[str, str],
                 returned: Callable[[cst.BaseExpression | None], str] | None, hoisted: dict[str, str],
                 unread: frozenset[str] = frozenset()):
        super().__init__()
        self.self_name, self.locals, self.returned, self.hoisted = self_name, locals_, returned, hoisted
        self.unread = unread
        self.depth = 0

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        local = self.hoisted.get(code(original)) if not self.depth else None
        return cst.Name(local, lpar=updated.lpar, rpar=updated.rpar) if local else updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.depth += 1
        return True

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.Lambda:
        self.depth -= 1
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        if self.depth or self.returned is None:
            return updated
        value = cst.parse_expression(self.returned(updated.value))
        return updated.with_changes(value=value, whitespace_after_return=cst.SimpleWhitespace(" "))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self.self_name is not None and isinstance(updated.value, cst.Name) \
                and updated.value.value == self.self_name and updated.attr.value in self.locals:
            return cst.Name(self.locals[updated.attr.value], lpar=updated.lpar, rpar=updated.rpar)
        return updated

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
                                  ) -> cst.BaseStatement | cst.RemovalSentinel:
        if not self.depth and self.unread and _unread_binding(original, self.unread):
            return cst.RemovalSentinel.REMOVE
        if self.depth or self.self_name is not None:
            return updated
        body = []
        for small in updated.body:
            if isinstance(small, cst.Global):
                kept = [item for item in small.names if item.name.value not in self.locals]
                if not kept:
                    continue
                small = small.with_changes(names=[*kept[:-1], kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
            body.append(small)
        if not body:
            return cst.RemovalSentinel.REMOVE
        return updated.with_changes(body=body)
