"""An ``if`` every path through which ends by appending one value to the same list, with the
append moved after it: each branch binds the value to a name, and one ``append`` follows.

    if x > lam:                         if x > lam:
        out.append(x - lam)                 out_item = x - lam
    else:                       ->      else:
        out.append(0.0)                     out_item = 0.0
                                        out.append(out_item)

A branch that appends cannot become a ``lax.cond`` branch (both branches run at trace time,
so both appends would happen). Every path appending exactly once, last, the list gets the
same value in the same order either way; the ``if`` then only binds a name, which a
``lax.cond`` returns. Offered only when the rewrite then takes the ``if`` (the caller checks).
"""

from __future__ import annotations

import ast

from jitfix.cst_text import code, cst
from jitfix.findings import EditError


def hoisted_list(node: ast.If) -> str | None:
    """The list every path through ``node`` appends one value to as its last statement, where
    nothing else in ``node`` (its test included) uses the list; None otherwise."""
    appends: list[ast.Call] = []
    name = _appended_last(node, appends)
    if name is None:
        return None
    uses = [child for child in ast.walk(node) if isinstance(child, ast.Name) and child.id == name]
    return name if len(uses) == len(appends) else None


def _appended_last(node: ast.If, appends: list[ast.Call]) -> str | None:
    """The one list both branches of ``node`` end by appending to (see ``_block_appends``)."""
    names = {_block_appends(block, appends) for block in (node.body, node.orelse)}
    return names.pop() if len(names) == 1 else None


def _block_appends(block: list[ast.stmt], appends: list[ast.Call]) -> str | None:
    """The list ``block`` ends by appending one value to (`out.append(v)`, or an ``if`` both
    of whose branches do), collecting those calls in ``appends``; None otherwise."""
    if not block:
        return None
    last = block[-1]
    if isinstance(last, ast.If):
        return _appended_last(last, appends)
    call = last.value if isinstance(last, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords \
            and not isinstance(call.args[0], ast.Starred):
        appends.append(call)
        return call.func.value.id
    return None


def hoist_appends(node: cst.CSTNode, name: str, item: str) -> cst.FlattenSentinel[cst.BaseStatement]:
    """The ``if`` with each final ``name.append(v)`` made ``item = v``, then ``name.append(item)``."""
    if not isinstance(node, cst.If):
        raise EditError("expected an if whose branches append")
    appended = cst.parse_statement(f"{name}.append({item})\n")
    return cst.FlattenSentinel([_bound_in_if(node, item), appended])


def _bound_in_if(node: cst.If, item: str) -> cst.If:
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _bound_in_if(orelse, item)
    elif isinstance(orelse, cst.Else):
        orelse = orelse.with_changes(body=_bound_in_block(orelse.body, item))
    else:
        raise EditError("a path through the if appends nothing")
    return node.with_changes(body=_bound_in_block(node.body, item), orelse=orelse)


def _bound_in_block(block: cst.BaseSuite, item: str) -> cst.BaseSuite:
    if isinstance(block, cst.SimpleStatementSuite):  # `if c: out.append(v)` on one line
        return block.with_changes(body=[*block.body[:-1], _bound(block.body[-1], item)])
    assert isinstance(block, cst.IndentedBlock)
    last = block.body[-1]
    if isinstance(last, cst.If):
        replaced: cst.BaseStatement = _bound_in_if(last, item)
    elif isinstance(last, cst.SimpleStatementLine):
        replaced = last.with_changes(body=[*last.body[:-1], _bound(last.body[-1], item)])
    else:
        raise EditError("a branch does not end with its append")
    return block.with_changes(body=[*block.body[:-1], replaced])


def _bound(statement: cst.BaseSmallStatement, item: str) -> cst.BaseSmallStatement:
    """``out.append(v)`` as ``item = v``; comments inside the call's brackets stay, in brackets
    of the value's own."""
    if not (isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)
            and len(statement.value.args) == 1):
        raise EditError("a branch does not end with its append")
    call = statement.value
    value = code(call.args[0].value)
    if isinstance(call.args[0].value, cst.NamedExpr) and not call.args[0].value.lpar:
        value = f"({value})"
    written = code(call)
    inside = written[written.index("(", len(code(call.func))) + 1:written.rindex(")")]
    if "#" in inside:
        if isinstance(call.args[0].comma, cst.Comma):
            raise EditError("a commented append with a trailing comma")
        value = f"({inside})"
    made = cst.parse_statement(f"{item} = {value}\n")
    assert isinstance(made, cst.SimpleStatementLine)
    return made.body[0]
