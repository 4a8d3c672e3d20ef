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


def hoisted_lists(node: ast.If) -> tuple[str, ...] | None:
    """The lists every path through ``node`` ends by appending one value each to (`xs.append(a)`
    and `ys.append(b)`, last), where nothing else in ``node`` (its test included) uses them;
    None otherwise."""
    appends: list[ast.Call] = []
    names = _appended_last(node, appends)
    if names is None:
        return None
    for name in names:
        uses = [child for child in ast.walk(node) if isinstance(child, ast.Name) and child.id == name]
        if len(uses) != sum(1 for call in appends if appended_to(call) == name):
            return None
    return names


def _appended_last(node: ast.If, appends: list[ast.Call]) -> tuple[str, ...] | None:
    """The lists both branches of ``node`` end by appending to, in one order (see
    ``_block_appends``). (In another order, two names of one list would append differently.)"""
    true, false = (_block_appends(block, appends) for block in (node.body, node.orelse))
    if true is None or true != false or len(set(true)) < len(true):
        return None
    return true


def _block_appends(block: list[ast.stmt], appends: list[ast.Call]) -> tuple[str, ...] | None:
    """The lists ``block`` ends by appending one value each to (its last statements are
    `out.append(v)`, or its last is an ``if`` both of whose branches end so), collecting
    those calls in ``appends``; None otherwise."""
    if block and isinstance(block[-1], ast.If):
        return _appended_last(block[-1], appends)
    names: list[str] = []
    for statement in reversed(block):
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (isinstance(call, ast.Call) and appended_to(call) is not None):
            break
        appends.append(call)
        names.insert(0, appended_to(call))  # type: ignore[arg-type]
    return tuple(names) or None


def appended_to(call: ast.Call) -> str | None:
    """``out`` of ``out.append(v)``: one value appended to a name."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and isinstance(call.func.value, ast.Name) \
            and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred):
        return call.func.value.id
    return None


def hoist_appends(node: cst.CSTNode, items: dict[str, str]) -> cst.FlattenSentinel[cst.BaseStatement]:
    """The ``if`` with each final ``out.append(v)`` made ``out_item = v`` (``items``: each
    list's item name, in the order of the appends), then ``out.append(out_item)`` for each."""
    if not isinstance(node, cst.If):
        raise EditError("expected an if whose branches append")
    appended = [cst.parse_statement(f"{name}.append({item})\n") for name, item in items.items()]
    return cst.FlattenSentinel([_bound_in_if(node, items), *appended])


def _bound_in_if(node: cst.If, items: dict[str, str]) -> cst.If:
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _bound_in_if(orelse, items)
    elif isinstance(orelse, cst.Else):
        orelse = orelse.with_changes(body=_bound_in_block(orelse.body, items))
    else:
        raise EditError("a path through the if appends nothing")
    return node.with_changes(body=_bound_in_block(node.body, items), orelse=orelse)


def _bound_in_block(block: cst.BaseSuite, items: dict[str, str]) -> cst.BaseSuite:
    """The block with its last appends (one per list of ``items``) made bindings."""
    if isinstance(block, cst.SimpleStatementSuite):  # `if c: out.append(v)` on one line
        return block.with_changes(body=_bound_small(list(block.body), items))
    assert isinstance(block, cst.IndentedBlock)
    body = list(block.body)
    if isinstance(body[-1], cst.If):
        return block.with_changes(body=[*body[:-1], _bound_in_if(body[-1], items)])
    left = len(items)
    for index in range(len(body) - 1, -1, -1):
        line = body[index]
        if left == 0:
            break
        if not isinstance(line, cst.SimpleStatementLine):
            raise EditError("a branch does not end with its appends")
        count = min(left, len(line.body))
        body[index] = line.with_changes(body=[*line.body[:-count], *_bound_small(list(line.body[-count:]), items)])
        left -= count
    return block.with_changes(body=body)


def _bound_small(statements: list[cst.BaseSmallStatement], items: dict[str, str]) -> list[cst.BaseSmallStatement]:
    """Each trailing ``out.append(v)`` of ``statements`` (as many as ``items`` has lists) as
    ``out_item = v``."""
    count = min(len(items), len(statements))
    return [*statements[:-count], *(_bound(statement, items) for statement in statements[-count:])]


def _bound(statement: cst.BaseSmallStatement, items: dict[str, str]) -> cst.BaseSmallStatement:
    """``out.append(v)`` as ``out_item = v``; comments inside the call's brackets stay, in
    brackets of the value's own."""
    if not (isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)
            and isinstance(statement.value.func, cst.Attribute) and isinstance(statement.value.func.value, cst.Name)
            and statement.value.func.value.value in items and len(statement.value.args) == 1):
        raise EditError("a branch does not end with its appends")
    call = statement.value
    item = items[statement.value.func.value.value]
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
