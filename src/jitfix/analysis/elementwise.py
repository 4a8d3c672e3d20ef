"""Where a value goes when it meets only element-by-element operations.

One walk of a function's body answers two questions the recompilation rules ask:

* ``traceable``: may the static parameter ``name`` be traced instead (JF503's fix)? Yes when
  it, and every name computed from it, is only used in arithmetic, comparisons and
  elementwise JAX functions (the catalogue's ``ELEMENTWISE``) whose other operands are
  numbers or tracers, and the results are assigned or returned. Each of those accepts a
  tracer where it took a Python number, and nothing asks for its Python value: no ``if``,
  ``range``, shape, index, f-string, attribute or call of code the catalogue does not know.
* ``row_wise``: does the function compute its result row by row from its parameter
  ``name`` (JF504's fix)? Yes when it returns such an expression of ``name`` whose other
  operands are number literals: then padding the argument with rows and cutting the result
  back to the argument's length gives exactly what the unpadded call gave.

Anything else -- control flow that touches the value, a tuple unpacked from it, a helper
-- is a reason, returned as text, and the rules then leave the code alone.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterable

from jitfix.analysis.catalogue import is_elementwise
from jitfix.analysis.imports import ImportTable

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr,
               ast.BitXor, ast.LShift, ast.RShift)
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_UNARY = (ast.USub, ast.UAdd, ast.Invert)

# Whether an operand that does not hold the followed value is fine beside it in the statement
# given: a number, a tracer, ... The flag says the operation would answer silently otherwise
# for a list or tuple of tracers than for an array (``==`` compares a sequence whole, and with
# a tracer elementwise): there the operand must be one array. (``*`` repeats a sequence by an
# int, and raises at trace time when the count is a tracer: that shows, and is left to runs.)
OperandTest = Callable[[ast.expr, ast.stmt, bool], bool]
_SEQUENCE_MEANINGS = (ast.Eq, ast.NotEq)


def traceable(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, imports: ImportTable,
              traced_operand: OperandTest) -> str | None:
    """Why the parameter ``name`` must stay a Python value, or None when it may be traced.
    ``traced_operand`` says whether an operand beside it is a tracer of the function (one
    array, with the flag)."""

    def operand(node: ast.expr, statement: ast.stmt, must_be_array: bool) -> bool:
        return is_number(node) or traced_operand(node, statement, must_be_array)

    why, _ = _follow(function, name, imports, operand, whole_returns=False, jax_ends=True)
    return why


def row_wise(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, imports: ImportTable) -> str | None:
    """Why the function's result is not computed row by row from its parameter ``name``
    alone, or None when it is (every return is an elementwise expression of ``name`` and
    number literals)."""
    why, returns = _follow(function, name, imports, lambda node, *_: is_number(node), whole_returns=True,
                           jax_ends=False)
    if why is None and not returns:
        return "it returns nothing computed from it"
    return why


def is_number(node: ast.expr) -> bool:
    """A number literal, or arithmetic of number literals (``-2.0``, ``1 / 3``)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float | complex)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
        return is_number(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        return is_number(node.left) and is_number(node.right)
    return False


def _follow(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, imports: ImportTable,
            operand: OperandTest, whole_returns: bool, jax_ends: bool) -> tuple[str | None, list[ast.expr]]:
    """Follow ``name`` through the function's body, statement by statement: (why it meets
    something that is not elementwise, or None; the returned expressions that hold it).
    ``whole_returns``: every return must be one such expression (not a tuple holding one);
    ``jax_ends``: see ``_elementwise``."""
    holding = {name}
    returns: list[ast.expr] = []
    for statement in function.body:
        if _is_docstring(statement) or isinstance(statement, ast.Pass):
            continue
        assigned = _assignment(statement)
        if assigned is not None:
            target, value = assigned
            if not _reads(value, holding):
                holding.discard(target)
                continue
            why, holds = _elementwise(value, holding, statement, imports, operand, jax_ends)
            if why is not None:
                return why, returns
            if holds:
                holding.add(target)
            else:
                holding.discard(target)
            continue
        if isinstance(statement, ast.Return) and statement.value is not None:
            value = statement.value
            if whole_returns:
                if not _reads(value, holding):
                    return f"line {statement.lineno} returns what it is not computed from", returns
                parts = [value]
            else:
                parts = list(value.elts) if isinstance(value, ast.Tuple) else [value]
            for part in parts:
                if _reads(part, holding):
                    why, _ = _elementwise(part, holding, statement, imports, operand, jax_ends)
                    if why is not None:
                        return why, returns
            returns.append(value)
            continue
        if _mentions(statement, holding):
            kind = type(statement).__name__.lower()
            return f"line {statement.lineno} uses it in {'an' if kind[0] in 'aeiou' else 'a'} `{kind}` statement", returns
    return None, returns


def _assignment(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    """(name, value) of ``name = value``, ``name: T = value`` and ``name op= value`` (as
    ``name op value``)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id, statement.value
    if isinstance(statement, ast.AnnAssign) and statement.value is not None and isinstance(statement.target, ast.Name):
        return statement.target.id, statement.value
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        left = ast.copy_location(ast.Name(statement.target.id, ast.Load()), statement.target)
        return statement.target.id, ast.copy_location(ast.BinOp(left, statement.op, statement.value), statement)
    return None


def _elementwise(node: ast.expr, holding: set[str], statement: ast.stmt, imports: ImportTable,
                 operand: OperandTest, jax_ends: bool, must_be_array: bool = False) -> tuple[str | None, bool]:
    """(why ``node``, which reads a held name, is not elementwise arithmetic of the held names
    and fitting operands, or None; whether its value still holds the followed one).

    With ``jax_ends`` (``traceable``) the following ends where the value enters a JAX
    operation -- an elementwise function, or arithmetic with a tracer: that result is a tracer
    whether the parameter is static or traced, so what is done with it after is the same."""
    if not _reads(node, holding):
        if operand(node, statement, must_be_array):
            return None, False
        kind = "an array" if must_be_array else "a tracer" if jax_ends else "a number literal"
        return f"`{_text(node)}` beside it is not known to be a number or {kind}" if kind != "a number literal" \
            else f"`{_text(node)}` beside it is not a number literal", False
    if isinstance(node, ast.Name):
        return None, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        sides = [node.left, node.right]
        array = isinstance(node.op, _SEQUENCE_MEANINGS)
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS):
        sides = [node.left, node.comparators[0]]
        array = isinstance(node.ops[0], _SEQUENCE_MEANINGS)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY):
        sides, array = [node.operand], False
    elif isinstance(node, ast.Call) and is_elementwise(imports.resolve(node.func)) \
            and not any(isinstance(argument, ast.Starred) for argument in node.args) \
            and all(keyword.arg is not None and isinstance(keyword.value, ast.Constant) for keyword in node.keywords):
        # A JAX function converts whatever else it is given the same way in both cases.
        held = [argument for argument in node.args if _reads(argument, holding)]
        checked = [_elementwise(argument, holding, statement, imports, operand, jax_ends) for argument in held]
        return _first(why for why, _ in checked), not jax_ends
    else:
        return f"line {node.lineno} uses it in `{_text(node)}`, which is not elementwise arithmetic", False
    reading = [side for side in sides if _reads(side, holding)]
    checked = [_elementwise(side, holding, statement, imports, operand, jax_ends, array) for side in reading]
    why = _first(why for why, _ in checked)
    if why is not None or not any(holds for _, holds in checked):
        return why, False  # every side that held it is a tracer now: so is this, either way
    others = [side for side in sides if not _reads(side, holding)]
    why = _first(_elementwise(side, holding, statement, imports, operand, jax_ends, array)[0] for side in others)
    # Python arithmetic of the value and numbers is still the value; with a tracer it is a tracer.
    return why, all(is_number(side) for side in others) or not jax_ends


def _first(reasons: Iterable[str | None]) -> str | None:
    return next((reason for reason in reasons if reason is not None), None)


def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(child, ast.Name) and child.id in names for child in ast.walk(node))


def _mentions(statement: ast.stmt, names: set[str]) -> bool:
    """Whether the statement reads or binds one of ``names`` anywhere inside it (nested
    functions and comprehensions included)."""
    return any(isinstance(child, ast.Name) and child.id in names
               or isinstance(child, ast.arg) and child.arg in names for child in ast.walk(statement))


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 40 else text[:37] + "..."
