"""Small helpers for writing generated code with libcst."""

from __future__ import annotations

import ast
from functools import cache
from typing import TYPE_CHECKING, Iterator, Sequence

from jitfix.findings import EditError
from jitfix.lazy import lazy_module

if TYPE_CHECKING:
    import libcst as cst
else:  # every rule takes libcst from here: it loads when a fix is first built
    cst = lazy_module("libcst")


@cache
def _empty_module() -> cst.Module:
    return cst.Module(body=[])


def code(node: cst.CSTNode) -> str:
    """A node's source, as it would appear in a module."""
    return _empty_module().code_for_node(node)


def with_keywords(call: cst.Call, keywords: Sequence[tuple[str, cst.BaseExpression]]) -> cst.Call:
    """``call`` with ``name=value`` arguments added after its own: ``f(a)`` -> ``f(a, k=v)``."""
    args = list(call.args)
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    added = [cst.Arg(value=value, keyword=cst.Name(name), equal=equal,
                     comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for name, value in keywords]
    added[-1] = added[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=[*args, *added])


NOT_LITERAL = object()


def literal_value(node: cst.BaseExpression) -> object:
    """The value of a literal (``"n"``, ``3``, ``("a", "b")``), else ``NOT_LITERAL``."""
    try:
        return ast.literal_eval(code(node).strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_LITERAL


def small_statement(text: str) -> cst.BaseSmallStatement:
    """One simple statement (``a = b``) parsed from its text."""
    line = cst.parse_statement(text + "\n")
    assert isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1
    return line.body[0]


def blank_line() -> cst.EmptyLine:
    return cst.EmptyLine(indent=False)


def suite_statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block; those of a one-line block (``if c: a = 1``) as one line."""
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    assert isinstance(suite, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=suite.body)]


def leading_lines(statement: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    """The comments and blank lines above a statement (every kind of statement has them;
    libcst's base class does not say so)."""
    assert isinstance(statement, cst.SimpleStatementLine | cst.BaseCompoundStatement)
    return statement.leading_lines


def separated(statements: list[cst.BaseStatement], after: bool) -> list[cst.BaseStatement]:
    """``statements`` with a blank line above the first, when ``after`` generated definitions."""
    if not (after and statements) or any(line.comment is None for line in leading_lines(statements[0])[:1]):
        return statements
    first = statements[0]
    assert isinstance(first, cst.SimpleStatementLine | cst.BaseCompoundStatement)
    return [first.with_changes(leading_lines=[blank_line(), *first.leading_lines]), *statements[1:]]


def lay_out(generated: list[cst.BaseStatement], replaced: cst.BaseStatement,
            after_code: bool) -> list[cst.BaseStatement]:
    """Blank lines as black writes them around generated helper functions.

    The replaced statement's own leading lines (its comments) go first; code before a nested
    def is followed by a blank line; each later def and the final call get one blank line.
    """
    laid_out = []
    for index, statement in enumerate(generated):
        if index == 0:
            leading = list(leading_lines(replaced))
            if after_code and isinstance(statement, cst.FunctionDef) \
                    and not any(line.comment is None for line in leading[:1]):
                leading.insert(0, blank_line())
        elif isinstance(statement, cst.FunctionDef) or index == len(generated) - 1:
            leading = [blank_line(), *leading_lines(statement)]
        else:
            leading = list(leading_lines(statement))
        laid_out.append(statement.with_changes(leading_lines=leading))
    return laid_out


def pair_statements(statements: Sequence[cst.BaseStatement],
                    nodes: list[ast.stmt]) -> Iterator[tuple[cst.BaseStatement, list[ast.stmt]]]:
    """Each libcst statement with its ast statements (``a = 1; b = 2`` is one line, two nodes)."""
    index = 0
    for statement in statements:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        yield statement, nodes[index:index + count]
        index += count
    if index != len(nodes):
        raise EditError(f"{index} statements found where {len(nodes)} were analysed: the libcst tree does not "
                        "line up with the ast the plans were made on")
