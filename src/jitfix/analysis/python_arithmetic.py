"""Arithmetic on Python values written with ``jax.numpy``: ``int(jnp.ceil(n / k))``.

Under ``jax.jit`` every ``jnp`` call is staged, even on Python numbers, so
``jnp.round(t1 / dt)`` of two static arguments is a tracer and ``int()`` of it raises.
The same arithmetic written with Python's built-ins and ``math`` gives a Python number,
known at trace time -- what a loop bound or a shape needs. This module says when an
expression is such arithmetic (every leaf static, every ``jnp`` call one with a Python
equivalent) and what each call becomes; the values analysis then treats the conversion of it
as static, and JF601 writes it in Python.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from jitfix.analysis.values import Verdict

# jnp function -> (Python function, how many arguments, whether it is exact). Exact: the
# same number on every input (jnp.round rounds half to even, as round does). Not exact:
# math raises where jnp gives nan or inf (`math.sqrt(-1)`, `math.exp(1000)`); the same on
# every input jnp gives a finite value for.
_EXACT = {"round": "round", "floor": "math.floor", "ceil": "math.ceil", "trunc": "math.trunc", "abs": "abs",
          "absolute": "abs", "maximum": "max", "minimum": "min", "erf": "math.erf", "erfc": "math.erfc"}
_MATH = {"sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10",
         "log1p": "log1p", "sin": "sin", "cos": "cos", "tan": "tan", "sinh": "sinh", "cosh": "cosh",
         "tanh": "tanh", "hypot": "hypot", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
         "arctan2": "atan2", "deg2rad": "radians", "rad2deg": "degrees"}
_BINARY = frozenset({"maximum", "minimum", "hypot", "arctan2"})
PYTHON_FUNCTIONS: dict[str, tuple[str, int, bool]] = {
    **{function: (python, 2 if function in _BINARY else 1, True) for function, python in _EXACT.items()},
    **{function: (f"math.{python}", 2 if function in _BINARY else 1, False) for function, python in _MATH.items()},
}
# jnp functions that are a Python operator on two numbers (`jnp.add(x.size, 1)`: `x.size + 1`),
# spelled with the marker OPERATOR before the operator.
OPERATOR = "operator "
_OPERATOR_FUNCTIONS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/",
                       "floor_divide": "//", "power": "**", "mod": "%", "remainder": "%"}
# Reductions of one sequence of Python numbers (`jnp.prod(x.shape)`).
REDUCTIONS = {"prod": "math.prod", "sum": "sum", "max": "max", "amax": "max", "min": "min", "amin": "min"}
ARRAY_MAKERS = frozenset({"array", "asarray"})  # around a sequence a reduction reads: the sequence
# `x.astype(int)` of a Python number is `int(x)` (both truncate toward zero); the marker the
# spelling gives such a call.
TO_INT = "int()"
_INT_TYPES = frozenset({"int", "jax.numpy.int_", "jax.numpy.int32", "jax.numpy.int64", "numpy.int_", "numpy.int32",
                        "numpy.int64"})
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


@dataclass(frozen=True)
class PythonSpelling:
    """How to write an expression in Python: each jnp call (by node id) becomes the Python
    function named (dotted: ``math.floor``), or its argument where it is ``None``; a
    reduction method (``jnp.array(s).prod()``) becomes the function of the array it reduces."""

    calls: dict[int, str | None]
    exact: bool  # False where math's domain differs (math.sqrt(-1) raises, jnp gives nan)


def python_spelling(expr: ast.AST, verdict: Callable[[ast.AST], Verdict], resolve: Callable[[ast.AST], str | None],
                    builtin: Callable[[str], bool]) -> PythonSpelling | None:
    """The Python spelling of ``expr`` if it is arithmetic on static values with at least one
    jnp call, every call having a Python equivalent (``builtin(name)``: the built-in is not
    rebound where the expression is); None otherwise."""
    calls: dict[int, str | None] = {}
    exact = [True]

    def spelled(node: ast.AST) -> bool:
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, _OPERATORS) and spelled(node.left) and spelled(node.right)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, ast.USub | ast.UAdd | ast.Not) and spelled(node.operand)
        if isinstance(node, ast.Compare):  # a test of Python numbers: `erfc(b * c) > THRESHOLD`
            return all(isinstance(op, _COMPARISONS) for op in node.ops) and spelled(node.left) \
                and all(spelled(comparator) for comparator in node.comparators)
        if isinstance(node, ast.BoolOp):
            return all(spelled(value) for value in node.values)
        if isinstance(node, ast.Call):
            return call(node)
        return verdict(node).static

    def call(node: ast.Call) -> bool:
        if _to_int(node, resolve):  # jnp.ceil(n / k).astype(int): math.ceil(n / k)
            calls[id(node)] = TO_INT
            return number(node.func.value)  # type: ignore[attr-defined]
        if _array_reduction(node, resolve):  # jnp.array(x.shape).prod(): math.prod(x.shape)
            return named(node, REDUCTIONS[node.func.attr]) and sequence(node.func.value)  # type: ignore[attr-defined]
        function = _jnp_function(node, resolve)
        if function is None:
            return verdict(node).static
        if function in REDUCTIONS and len(node.args) == 1:
            return named(node, REDUCTIONS[function]) and sequence(node.args[0])
        if function in ARRAY_MAKERS and len(node.args) == 1:  # jnp.array(t // dt): the number itself
            if number(node.args[0]):
                calls[id(node)] = None
                return True
            # jnp.array([2, 2, 1]), jnp.array(offsets): NumPy's array of the same values, static
            calls[id(node)] = "numpy.array"
            return sequence(node.args[0]) or verdict(node.args[0]).static
        if function in _OPERATOR_FUNCTIONS and len(node.args) == 2 and not node.keywords:
            calls[id(node)] = OPERATOR + _OPERATOR_FUNCTIONS[function]
            return all(number(argument) for argument in node.args)
        python, arity, is_exact = PYTHON_FUNCTIONS.get(function, ("", 0, True))
        if arity != len(node.args) or not named(node, python):
            return False
        # (math.sqrt raises only below 0: never for a size, which jnp.sqrt takes as math does)
        exact[0] = exact[0] and (is_exact or function == "sqrt" and _array_metadata_int(node.args[0]))
        return all(spelled(argument) for argument in node.args)

    def named(node: ast.Call, python: str) -> bool:
        calls[id(node)] = python
        return "." in python or builtin(python)

    def number(node: ast.AST) -> bool:
        """One Python number (not a sequence, which `int()` or arithmetic would take otherwise)."""
        if isinstance(node, ast.BinOp | ast.UnaryOp | ast.Call):
            return spelled(node)
        found = verdict(node)
        return found.static and (found.scalar or _array_metadata_int(node))

    def sequence(node: ast.AST) -> bool:
        """A sequence of Python numbers a reduction can read."""
        if isinstance(node, ast.Call) and _jnp_function(node, resolve) in ARRAY_MAKERS and len(node.args) == 1:
            calls[id(node)] = None
            return sequence(node.args[0])
        if isinstance(node, ast.List | ast.Tuple):
            return all(spelled(element) for element in node.elts)
        found = verdict(node)
        return found.static and (found.elements is not None
                                 or isinstance(node, ast.Attribute) and node.attr == "shape")

    if not spelled(expr) or not calls:
        return None
    return PythonSpelling(calls, exact[0])


def _array_metadata_int(node: ast.AST) -> bool:
    """``x.size``, ``x.ndim`` or ``x.shape[i]`` (``i`` an int literal): an int, static."""
    if isinstance(node, ast.Attribute):
        return node.attr in ("size", "ndim")
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
        and isinstance(node.slice, ast.Constant | ast.UnaryOp) and not isinstance(node.slice, ast.Slice)


def _array_reduction(node: ast.Call, resolve: Callable[[ast.AST], str | None]) -> bool:
    """``jnp.array(seq).prod()`` and the like: a reduction method, without arguments, of an
    array jnp makes from a sequence."""
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr in REDUCTIONS and not node.args and not node.keywords \
        and isinstance(func.value, ast.Call) and _jnp_function(func.value, resolve) in ARRAY_MAKERS


def _to_int(node: ast.Call, resolve: Callable[[ast.AST], str | None]) -> bool:
    """``x.astype(int)`` (or ``jnp.int32``, ``"int32"``...): one positional integer type."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "astype" and len(node.args) == 1 and not node.keywords):
        return False
    kind = node.args[0]
    if isinstance(kind, ast.Constant):
        return kind.value in ("int32", "int64")
    return (kind.id if isinstance(kind, ast.Name) and kind.id == "int" else resolve(kind)) in _INT_TYPES


# Functions of the other JAX namespaces that are the jnp function of this name.
_SAME_AS_JNP = {"jax.scipy.special.erf": "erf", "jax.scipy.special.erfc": "erfc", "jax.lax.erf": "erf",
                "jax.lax.erfc": "erfc", "jax.lax.sqrt": "sqrt", "jax.lax.exp": "exp", "jax.lax.log": "log",
                "jax.lax.abs": "abs", "jax.lax.floor": "floor", "jax.lax.ceil": "ceil"}


def _jnp_function(node: ast.Call, resolve: Callable[[ast.AST], str | None]) -> str | None:
    """``round`` for ``jnp.round(...)`` (or ``erfc`` for ``jax.scipy.special.erfc(...)``) called
    with plain positional arguments, else None."""
    name = resolve(node.func) or ""
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if name in _SAME_AS_JNP:
        return _SAME_AS_JNP[name]
    return name.removeprefix("jax.numpy.") if name.startswith("jax.numpy.") else None
