"""Which expression a failure that `jitfix run` saw proves traced.

A run reports the line where JAX raised and the error's class. Some errors name what Python
did with a tracer: ``TracerBoolConversionError`` asked for its truth (an ``if``, a ``while``,
``and``/``or``/``not``, a conditional expression, an ``assert``, ``bool()``);
``TracerIntegerConversionError`` used it as an index (``range(n)``, ``items[i]``);
``ConcretizationTypeError`` may have converted it to a Python number (``float(x)``,
``int(x)``, ``x.item()``) -- or needed a shape, which no candidate here stands for. On the
failing line, the expressions where Python does that are the candidates; when exactly one
of them is not already known (static or traced) to the analysis, the failure proves that one
traced -- a solver's output, a property of a pytree, the result of a callable parameter, which
the analysis alone could not tell.
"""

from __future__ import annotations

import ast
from typing import Iterator

from jitfix.analysis.blocks import child_nodes

TRUTH_ERROR = "TracerBoolConversionError"
INDEX_ERROR = "TracerIntegerConversionError"
CONVERSION_ERROR = "ConcretizationTypeError"
EXPLAINED_ERRORS = frozenset({TRUTH_ERROR, INDEX_ERROR, CONVERSION_ERROR})
# A boolean mask's size: its sites are named in messages, but prove nothing traced (an index
# may be an array's, which takes tracers).
MASK_ERROR = "NonConcreteBooleanIndexError"
_CONVERSIONS = frozenset({"float", "int", "complex"})

# Statements whose own expressions are their head (the body's statements are visited alone).
_HEADS = {ast.If: ("test",), ast.While: ("test",), ast.For: ("iter",), ast.AsyncFor: ("iter",),
          ast.With: ("items",), ast.AsyncWith: ("items",), ast.Try: (), ast.Match: ("subject",),
          ast.FunctionDef: (), ast.AsyncFunctionDef: (), ast.ClassDef: ()}


def candidate_sites(statement: ast.stmt, line: int, error: str) -> list[ast.expr]:
    """The expressions of ``statement`` (its head, for a compound one) on ``line`` where
    Python does what ``error`` says it did with a tracer."""
    finders = {TRUTH_ERROR: _truth_sites, INDEX_ERROR: _index_sites, CONVERSION_ERROR: _conversion_sites,
               MASK_ERROR: _mask_sites}
    sites = finders[error](statement) if error in finders else iter(())
    on_line = {id(site): site for site in sites if site.lineno <= line <= (site.end_lineno or site.lineno)}
    return list(on_line.values())  # (a test's operand is one of its `and`'s too: once)


def _own_expressions(statement: ast.stmt) -> Iterator[ast.AST]:
    """Every expression node the statement evaluates itself (not those of nested statements,
    nor of nested functions and lambdas, which run elsewhere)."""
    fields = _HEADS.get(type(statement))
    roots = [getattr(statement, name) for name in fields] if fields is not None else [statement]
    stack: list[ast.AST] = []
    for root in roots:
        stack.extend(root if isinstance(root, list) else [root])
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda | ast.stmt) and node not in roots:
            continue
        yield node
        stack.extend(child_nodes(node))


def _truth_sites(statement: ast.stmt) -> Iterator[ast.expr]:
    """Where Python takes an expression's truth: each operand of a test (an ``and``/``or`` in
    a test takes the truth of every operand, in a value of all but the last), a ``not``'s
    operand, a conditional expression's test, a comprehension's ``if``, ``bool(x)``."""
    if isinstance(statement, ast.If | ast.While | ast.Assert):
        yield from _tested(statement.test)
    for node in _own_expressions(statement):
        if isinstance(node, ast.IfExp):
            yield from _tested(node.test)
        elif isinstance(node, ast.comprehension):
            for test in node.ifs:
                yield from _tested(test)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield from _tested(node.operand)
        elif isinstance(node, ast.BoolOp):
            for value in node.values[:-1]:
                yield from _tested(value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" \
                and len(node.args) == 1 and not node.keywords:
            yield from _tested(node.args[0])


def _tested(test: ast.expr) -> Iterator[ast.expr]:
    """The operands whose truth a test takes (``a and not b``: ``a`` and ``b``)."""
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            yield from _tested(value)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yield from _tested(test.operand)
    else:
        yield test


def _index_sites(statement: ast.stmt) -> Iterator[ast.expr]:
    """Where Python needs an integer: ``range``'s arguments, a subscript's index (of a list or
    tuple; an array's index takes tracers) and its slice bounds."""
    for node in _own_expressions(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range":
            yield from (argument for argument in node.args if not isinstance(argument, ast.Starred))
        elif isinstance(node, ast.Subscript):
            index = node.slice
            if isinstance(index, ast.Slice):
                yield from (bound for bound in (index.lower, index.upper, index.step) if bound is not None)
            elif not isinstance(index, ast.Tuple):
                yield index


def _conversion_sites(statement: ast.stmt) -> Iterator[ast.expr]:
    """What Python converts to a number: ``float(x)``, ``int(x)``, ``complex(x)``'s argument,
    ``x.item()``'s array."""
    for node in _own_expressions(statement):
        if not isinstance(node, ast.Call) or node.keywords:
            continue
        if isinstance(node.func, ast.Name) and node.func.id in _CONVERSIONS and len(node.args) == 1 \
                and not isinstance(node.args[0], ast.Starred):
            yield node.args[0]
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "item" and not node.args:
            yield node.func.value


def _mask_sites(statement: ast.stmt) -> Iterator[ast.expr]:
    """Where an array may be indexed with a boolean mask: each subscript whose index is not a
    constant or a slice (nor a tuple of only those)."""
    static = (ast.Constant, ast.Slice)
    for node in _own_expressions(statement):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, static) \
                and not (isinstance(node.slice, ast.Tuple) and all(isinstance(part, static) for part in node.slice.elts)):
            yield node


# What each explained error says Python wanted of the tracer, for messages.
WANTED = {TRUTH_ERROR: "its truth", INDEX_ERROR: "an `int`", CONVERSION_ERROR: "a Python number",
          MASK_ERROR: "how many elements a mask selects"}

# What a failure of each kind says was missing, and the forms that do without it: what `jitfix
# run` says of a failure no rule rewrites.
MISSING = {
    TRUTH_ERROR: "Python took the truth of a traced value (an `if`, `while`, `and`/`or`, `assert`); compute "
                 "the test from static values, or select with `jnp.where`/`lax.cond`",
    INDEX_ERROR: "Python needed an `int` of a traced value (an index of a list or tuple, `range`); make the "
                 "value static, or index an array instead",
    CONVERSION_ERROR: "a concrete value (a Python number, a shape, a size) was computed from a traced one; "
                      "compute it from static values (shapes, static arguments) or keep it an array",
    MASK_ERROR: "an index with a traced boolean mask selects as many elements as the data holds; keep the "
                "shape (`jnp.where(mask, x, 0)`, a reduction's `where=`), or keep the mask out of the traced "
                "values (a NumPy array, a static field)",
    "TracerArrayConversionError": "a NumPy (or other host) function was given a traced array; use the "
                                  "`jax.numpy` function, or call it outside the jitted code on concrete values",
    "UnexpectedTracerError": "a tracer of a trace that has ended was used: state kept between calls (a global, "
                             "an attribute, a cache) was set while tracing; pass it in and return it",
}


def sites_on_line(tree: ast.Module, line: int, error: str) -> list[ast.expr]:
    """The candidate expressions of the innermost statement of ``tree`` holding ``line``."""
    innermost: ast.stmt | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and (innermost is None or node.lineno >= innermost.lineno):
            innermost = node
    return candidate_sites(innermost, line, error) if innermost is not None else []
