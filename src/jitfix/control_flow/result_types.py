"""Make the branches of a ``lax.cond`` agree on their result type.

``lax.cond`` requires every branch to return the same dtype; Python does not. What an
expression's dtype is made of can be read from the source: the arrays whose dtypes it
combines (``x * 2`` follows ``x``; ``n`` and ``x`` follow different arguments, an int and a
float when called so), and the Python scalars mixed in (``3. * x`` is a float whatever ``x``
is; a true division or ``jnp.sin`` makes any input inexact). Arms whose *signatures* are the
same have the same dtype for every input; where they differ, each arm that may not have the
common type is cast to it, ``jnp.result_type(a, b)`` -- exactly the value the eager code
computes, in the one type the compiled code can return.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import chain

from jitfix.analysis.blocks import (
    always_leaves,
    definitely_assigned,
    kept_on_node,
    own_nodes,
    reaching,
    returns_with_paths,
    rows_iterated,
    upward_exposed,
)
from jitfix.analysis.catalogue import is_range

# jax.numpy functions (and array methods) whose result is inexact for any input.
INEXACT_FUNCTIONS = frozenset(
    {"mean", "average", "var", "std", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
     "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
     "sigmoid", "softmax", "log_softmax", "logsumexp", "norm", "erf", "true_divide", "divide",
     "reciprocal", "hypot", "deg2rad", "rad2deg", "relu", "gelu", "silu", "softplus"}
)
# ... whose result has the dtype of its array with a Python int (a sum of bools is an int).
SUMMING_FUNCTIONS = frozenset({"sum", "prod", "cumsum", "cumprod", "trace"})
# ... whose result has the dtype its array arguments promote to.
FOLLOWING_FUNCTIONS = frozenset(
    {"abs", "absolute", "negative", "positive", "maximum", "minimum", "clip", "square",
     "max", "min", "amax", "amin", "sort", "flip", "roll", "reshape", "transpose",
     "ravel", "squeeze", "expand_dims", "sign", "dot", "matmul", "outer", "add", "subtract", "multiply",
     "zeros_like", "ones_like", "broadcast_to", "atleast_1d", "atleast_2d", "tile", "repeat"}
)
# ... whose result, with no dtype given, has JAX's default float dtype.
DEFAULT_FLOAT_FUNCTIONS = frozenset({"zeros", "ones", "empty", "eye", "identity", "linspace"})
# jax.numpy functions that make an array of their one argument (a Python scalar: the
# default of its kind; NumPy makes an int64).
ARRAY_FUNCTIONS = frozenset({"array", "asarray"})
# Attributes that are Python ints whatever the array.
INT_ATTRIBUTES = frozenset({"shape", "ndim", "size"})
# Attributes that keep the array's dtype.
SAME_ATTRIBUTES = frozenset({"T", "mT"})
# Methods of `x.at[i]`: an indexed update or read has `x`'s dtype (an update casts its value).
INDEXED_UPDATES = frozenset({"set", "add", "subtract", "multiply", "divide", "power", "min", "max", "apply", "get"})
WEAK_ORDER = ("", "int", "float", "complex")


@dataclass(frozen=True)
class Signature:
    """What an expression's dtype is made of: the source texts of the values whose dtypes it
    combines, and the widest Python scalar kind mixed in (weakly typed: it only widens).
    ``varies``: the value has one of several types, which one Python picks (the return of a
    helper that runs, the arm of a conditional expression on a Python value); the signature
    is the type that holds them all, not the value's own."""

    follows: frozenset[str] = frozenset()
    weak: str = ""
    varies: bool = False

    def join(self, other: Signature) -> Signature:
        return Signature(self.follows | other.follows, max(self.weak, other.weak, key=WEAK_ORDER.index),
                         self.varies or other.varies)

    def one_of(self, other: Signature) -> Signature:
        """The signature of a value that is either: their join, which varies unless they agree."""
        joined = self.join(other)
        return joined if self.key == other.key else Signature(joined.follows, joined.weak, True)

    @property
    def key(self) -> tuple[frozenset[str], str]:
        """What decides the type: a Python int does not change an array's dtype (kept in
        ``weak`` all the same, as ``jnp.result_type`` of a bool array and ``0`` is an int)."""
        return self.follows, "" if self.follows and self.weak == "int" else self.weak

    @property
    def inexact(self) -> bool:
        return self.weak in ("float", "complex")


WEAK_INT = Signature(weak="int")
WEAK_FLOAT = Signature(weak="float")
BOOLEAN = Signature(frozenset({"bool"}))
# JAX's default float dtype (`jnp.result_type(float)`), of `jnp.zeros(3)`
DEFAULT_FLOAT = Signature(frozenset({"float"}))
INDEX = "int"  # the dtype source of a lax loop's index: a strong int32 (`jnp.result_type(int)`)
# What the source alone fixes the type of (with Python scalars): these signatures are types.
FIXED_TYPES = frozenset({INDEX, "float", "bool"})


# What a name is known to hold, for its type: the expression it was last given, or the
# signature of its type (a lax loop's carry, in the body, holds the one type of every pass).
Known = ast.expr | Signature
# What each name holds at a point of a block, where known (None: unknown).
Environment = dict[str, Signature | None]
# What a path through statements that leaves them (a `return`, a jump) holds at their end:
# nothing, told apart by identity.
LEFT: Environment = {}


@dataclass(frozen=True)
class Helper:
    """A function of the module whose result's signature its body tells: each path ends in a
    ``return`` of a value (``returns``: each with the statements run before it)."""

    parameters: tuple[str, ...]
    defaults: Mapping[str, ast.expr]
    returns: Sequence[tuple[Sequence[ast.stmt], ast.expr]]
    # Names the calling function binds that the helper's free names are not (it is defined
    # outside it): a signature reading one of them cannot be told at the call.
    shadowed: frozenset[str]
    # The helper's own names: each with the def it is bound to once (a continuation it
    # calls), else None (a call of it runs nothing known).
    local: Mapping[str, ast.FunctionDef | None]


def helper_of(node: ast.AST, shadowed: frozenset[str]) -> Helper | None:
    """``node`` (a def, or a lambda) as a Helper; None when its result cannot be read from
    its returns (a decorator, ``*args``, a generator, a path that returns nothing, a return
    in a ``with`` or ``try``)."""
    arguments = node.args if isinstance(node, ast.FunctionDef | ast.Lambda) else None
    if arguments is None or arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
        return None
    parameters = tuple(arg.arg for arg in [*arguments.posonlyargs, *arguments.args])
    defaults = {parameter: default for parameter, default
                in zip(parameters[len(parameters) - len(arguments.defaults):], arguments.defaults)
                if isinstance(default, ast.Constant)}  # (another is evaluated where the def is)
    if isinstance(node, ast.Lambda):
        return Helper(parameters, defaults, [((), node.body)], shadowed, dict.fromkeys(parameters))
    assert isinstance(node, ast.FunctionDef)
    if node.decorator_list or not always_leaves(node.body):
        return None
    returns = returns_with_paths(node.body)
    leaves = [part for part in own_nodes(node.body) if isinstance(part, ast.Return | ast.Yield | ast.YieldFrom)]
    if len(leaves) != len(returns) or any(found.value is None for found, _ in returns):
        return None
    bindings = bound_values(node.body)
    defs = {part.name: part for part in own_nodes(node.body) if isinstance(part, ast.FunctionDef)}
    local = {name: defs[name] if name in defs and len(bindings[name]) == 1 else None
             for name in [*parameters, *bindings]}
    return Helper(parameters, defaults, [(path, found.value) for found, path in returns if found.value],
                  shadowed, local)


class Callees:
    """What a call in one function runs: a library function, by its qualified name from the
    module's imports; or a helper of the module (``helper``, by the name called). And which
    tests there are tracers (``traced_test``): a conditional expression on one becomes a
    ``lax.cond`` whose value has the type of both its arms; and which loops take the rows of
    an array (``iterates_rows``)."""

    def __init__(self, resolve: Callable[[ast.AST], str | None],
                 find_helper: Callable[[str], Helper | None] = lambda name: None,
                 traced_test: Callable[[ast.expr], bool] = lambda test: False,
                 iterates_rows: Callable[[ast.For], bool] = lambda loop: False):
        self.resolve = resolve
        self.traced_test = traced_test
        self.iterates_rows = iterates_rows  # a loop over an array's rows: each has its dtype
        self._find_helper = find_helper
        self._helpers: dict[str, Helper | None] = {}
        # Helpers whose result is being read, by the id of the Helper (a recursive one is
        # unknown): not by name, as a continuation may define another of the same name.
        self.inlining: set[int] = set()
        # Read once: what a helper's body calls (by the helper's id), a lambda as a helper (by
        # its node's id), and what each return gives, in the helper's own terms (by ids).
        self._within: dict[int, Callees] = {}
        self._lambdas: dict[int, Helper | None] = {}
        self.returned: dict[tuple[int, int], Signature | None] = {}
        self._items: dict[tuple[int, int], ast.Subscript] = {}

    def item_node(self, value: ast.expr, index: int) -> ast.Subscript:
        """``value[index]``, made once (its id keys what is read of it)."""
        key = (id(value), index)
        if key not in self._items:
            self._items[key] = ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(index), ctx=ast.Load()),
                                                 value)
        return self._items[key]

    def helper(self, name: str) -> Helper | None:
        if name not in self._helpers:
            self._helpers[name] = self._find_helper(name)
        return self._helpers[name]

    def within(self, helper: Helper) -> Callees:
        """What a call in the body of ``helper`` runs: a def of its own, else what it runs here."""
        def find_helper(name: str) -> Helper | None:
            if name not in helper.local:
                return self.helper(name)
            definition = helper.local[name]
            return helper_of(definition, frozenset()) if definition is not None else None

        if id(helper) not in self._within:
            inner = Callees(self.resolve, find_helper, self.traced_test, self.iterates_rows)
            inner.inlining, inner.returned, inner._items = self.inlining, self.returned, self._items
            self._within[id(helper)] = inner
        return self._within[id(helper)]

    def lambda_helper(self, node: ast.Lambda) -> Helper | None:
        if id(node) not in self._lambdas:
            self._lambdas[id(node)] = helper_of(node, frozenset())
        return self._lambdas[id(node)]


class Signatures:
    """Dtype signatures of expressions in one function (``callees`` tells a JAX or NumPy
    function from a method of a value, and what a helper returns); a name ``values`` knows the value of has that
    value's signature (`k = 0`: `k * 0.5` is a Python float; `r = jnp.ones_like(x)` follows
    `x`). ``results``: names bound once to a call before any read, whose items are that
    call's (`result = _after_if(c)`, then `result[0]`).
    """

    def __init__(self, callees: Callees, values: Mapping[str, Known] | None = None,
                 results: Mapping[str, ast.Call] | None = None):
        self.callees = callees
        self.values = values or {}
        self.results = results or {}
        self._resolving: set[str] = set()

    def of(self, expr: ast.AST) -> Signature | None:
        """The expression's dtype signature; None when the source does not say."""
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, bool):
                return BOOLEAN  # a Python bool is a bool array's own type, not a weak int
            if isinstance(expr.value, int):
                return WEAK_INT
            if isinstance(expr.value, float):
                return WEAK_FLOAT
            if isinstance(expr.value, complex):
                return Signature(weak="complex")
            return None
        if isinstance(expr, ast.Name):
            return self._name(expr.id)
        if isinstance(expr, ast.UnaryOp):
            return BOOLEAN if isinstance(expr.op, ast.Not) else self.of(expr.operand)
        if isinstance(expr, ast.BinOp):
            return self._joined([expr.left, expr.right], inexact=isinstance(expr.op, ast.Div))
        if isinstance(expr, ast.Compare):
            return BOOLEAN
        if isinstance(expr, ast.IfExp | ast.BoolOp):  # the value of one of its operands
            arms = [self.of(part) for part in ([expr.body, expr.orelse] if isinstance(expr, ast.IfExp) else expr.values)]
            if any(arm is None for arm in arms):
                return None
            known = [arm for arm in arms if arm is not None]
            if isinstance(expr, ast.IfExp) and self.callees.traced_test(expr.test):
                return known[0].join(known[1])  # rewritten as a `lax.cond` cast to what holds both (JF102)
            return reduce(Signature.one_of, known)
        if isinstance(expr, ast.NamedExpr):
            return self.of(expr.value)
        if isinstance(expr, ast.Attribute):
            if expr.attr in INT_ATTRIBUTES:
                return WEAK_INT
            if expr.attr in SAME_ATTRIBUTES:
                return self.of(expr.value)
            return None if expr.attr == "dtype" else _own(expr)
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Attribute) and expr.value.attr in INT_ATTRIBUTES:
                return WEAK_INT
            if isinstance(expr.value, ast.Name) and expr.value.id in self.results:
                return self.of(ast.Subscript(value=self.results[expr.value.id], slice=expr.slice, ctx=ast.Load()))
            items = helper_item(self.callees, expr)
            if items is not None:  # `_after_if(c)[2]`: the helper's third returned item
                return self._joined_runs([(run, elements) for run, elements in items])
            # An item of the display a name holds (`st["p"]` of `st = {"p": x * 0.0}`) is that item.
            if isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant) \
                    and expr.value.id not in self._resolving:
                item = dict((key.value, value) for key, value in
                            updated_items(self.values.get(expr.value.id), expr.value.id) or []).get(expr.slice.value)
                if item is not None:
                    self._resolving.add(expr.value.id)
                    try:
                        return self.of(item)
                    finally:
                        self._resolving.discard(expr.value.id)
            # `x[i]`, `x[1:]`: an element or slice of an array has its dtype; a constant key
            # may pick one of several values (`state["count"]`, `pair[0]`): it stands for itself.
            constant = all(isinstance(node, ast.Constant | ast.Tuple | ast.Load) for node in ast.walk(expr.slice))
            return _own(expr) if constant else self.of(expr.value)
        if isinstance(expr, ast.Call):
            return self._call(expr)
        return None

    def _name(self, name: str) -> Signature | None:
        value = self.values.get(name)
        if isinstance(value, Signature):
            return value
        if value is None or name in self._resolving:
            return Signature(frozenset({name}))
        self._resolving.add(name)
        try:
            found = self.of(value)
        finally:
            self._resolving.discard(name)
        # What the value is made of names values that are still as they were; unknown, the name
        # stands for itself.
        return found if found is not None else Signature(frozenset({name}))

    def _joined(self, parts: Sequence[ast.AST], inexact: bool = False) -> Signature | None:
        found = WEAK_FLOAT if inexact else Signature()
        for part in parts:
            one = self.of(part)
            if one is None:
                return None
            found = found.join(one)
        return found

    def _call(self, call: ast.Call) -> Signature | None:
        func = call.func
        qualified = self.callees.resolve(func) or ""
        library = qualified.startswith(("jax.", "numpy."))
        if (runs := called_helpers(self.callees, call)) is not None:  # a helper; a `lax.cond` of them
            return self._joined_runs([(run, run[1].returns) for run in runs])
        if library:
            name, operands = qualified.rpartition(".")[2], list(call.args)
        elif isinstance(func, ast.Attribute) and func.attr in INDEXED_UPDATES and (
                updated := _indexed_array(func.value)) is not None:
            return self.of(updated)  # `x.at[i].set(v)`
        elif isinstance(func, ast.Attribute):  # a method of a value: `x.sum()`, `x.astype(t)`
            name, operands = func.attr, [func.value, *call.args]
        else:
            return None
        if name == "astype" and not library and len(call.args) == 1:
            return self._dtype(call.args[0])
        if any(keyword.arg == "dtype" for keyword in call.keywords) or any(
                isinstance(arg, ast.Starred) for arg in call.args):
            return None
        if qualified.startswith("jax.numpy.") and name in ARRAY_FUNCTIONS and call.args:
            dtype = [*call.args[1:2], *(keyword.value for keyword in call.keywords if keyword.arg == "dtype")]
            if dtype:  # `jnp.asarray(v, bool)`: its dtype's own (`bool`, `float` and `int` are the markers')
                return self._dtype(dtype[0]) if len(call.args) + len(call.keywords) == 2 else None
            return self._array(call.args[0]) if len(call.args) == 1 and not call.keywords else None
        start = _lax_loop_start(call)
        if start is not None and qualified.startswith("jax.lax."):
            return self.of(start)  # a lax loop returns its carry, in the type it starts with
        if qualified == "jax.numpy.result_type" and not call.keywords:
            return _strong(self._joined(call.args))  # the dtype the values promote to (for `jnp.asarray(v, d)`)
        if qualified == "jax.numpy.arange" and call.args and not call.keywords:
            return _strong(self._joined(call.args))  # `jnp.arange(n)`: int32 for a Python int `n`
        if name in INEXACT_FUNCTIONS:
            return self._joined(operands, inexact=True)
        if library and name in DEFAULT_FLOAT_FUNCTIONS:
            return DEFAULT_FLOAT
        if name in SUMMING_FUNCTIONS:
            summed = self.of(operands[0]) if operands else None
            return summed.join(WEAK_INT) if summed is not None else None
        if name in FOLLOWING_FUNCTIONS:
            # The arguments of a method are axes and shapes (`x.sum(0)`, `x.reshape(2, 3)`).
            return self._joined(operands if library else operands[:1])
        return None


    def _joined_runs(self, runs: Sequence[tuple[HelperCall, Sequence[tuple[Sequence[ast.stmt], ast.expr]]]]
                     ) -> Signature | None:
        """The type that holds what each helper run returns (the branches of a `lax.cond`
        return one type; a helper's call runs one)."""
        found: Signature | None = Signature()
        for (name, helper, call), returned in runs:
            one = self._inlined(name, helper, call, returned)
            found = None if one is None or found is None else found.join(one)
        return found

    def _inlined(self, name: str, helper: Helper, call: ast.Call,
                 returned: Sequence[tuple[Sequence[ast.stmt], ast.expr]]) -> Signature | None:
        """What a helper's result (``returned``: what each of its returns gives, or the item
        of the tuple it is, with the statements before it) is made of, in terms of the call's
        arguments (`shifted(a)`, `def shifted(w): return w * 2.0 + b`: `a` and `b`, with a
        Python float). Several returns: whichever runs, so the type that holds them all."""
        arguments = _bound_arguments(helper, call)
        if arguments is None or id(helper) in self.callees.inlining:
            return None
        self.callees.inlining.add(id(helper))
        try:
            inner = self.callees.within(helper)
            each = []
            for path, value in returned:
                key = (id(helper), id(value))
                if key not in inner.returned:
                    inner.returned[key] = resolved_after(value, path, inner, {})
                each.append(inner.returned[key])
        finally:
            self.callees.inlining.discard(id(helper))
        if not each or any(one is None for one in each):
            return None
        found = reduce(Signature.one_of, [one for one in each if one is not None])
        result = Signature(weak=found.weak, varies=found.varies)
        for source in found.follows:
            if source in arguments:
                one = self.of(arguments[source])
            elif source in FIXED_TYPES:
                one = Signature(frozenset({source}))
            elif (item := _parameter_item(source, arguments)) is not None:
                one = self.of(item)  # `p["a"]` of a parameter: that item of the argument
            elif _reads(source) & (set(helper.parameters) | helper.shadowed):
                return None  # (an item of a parameter by another key; a name the caller binds otherwise)
            elif _reads(source) & set(helper.local):
                return None  # a name the helper binds itself, unresolved at its return: no name of the caller's
            else:  # a free name, read when called
                one = self._name(source) if source.isidentifier() else Signature(frozenset({source}))
            if one is None:
                return None
            result = result.join(one)
        return result

    def _dtype(self, dtype: ast.AST) -> Signature | None:
        """A value of the dtype ``dtype`` names: ``v.dtype`` is the dtype of ``v``'s arrays."""
        if isinstance(dtype, ast.Attribute) and dtype.attr == "dtype":
            found = self.of(dtype.value)
            return found if found is not None and found.follows else None  # (a weak scalar's is strong)
        if isinstance(dtype, ast.Name):  # `result_dtype`: what it was given, where known
            return self._name(dtype.id)
        if isinstance(dtype, ast.Call) and self.callees.resolve(dtype.func) == "jax.numpy.result_type":
            return self.of(dtype)
        return _own(dtype)

    def _array(self, value: ast.AST) -> Signature | None:
        """`jnp.asarray(v)`: an array keeps its dtype; a Python scalar becomes the default
        array of its kind (`jnp.array(0)` is an int32, as a lax loop's index is)."""
        return _strong(self.of(value))


def _indexed_array(expr: ast.expr) -> ast.expr | None:
    """``x`` where ``expr`` is ``x.at[i]``."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "at":
        return expr.value.value
    return None


def _parameter_item(source: str, arguments: Mapping[str, ast.expr]) -> ast.expr | None:
    """``argument["a"]`` where ``source`` is ``p['a']`` of a parameter ``p`` (a constant key)."""
    node = ast.parse(source, mode="eval").body
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in arguments \
            and isinstance(node.slice, ast.Constant):
        return ast.Subscript(value=arguments[node.value.id], slice=node.slice, ctx=ast.Load())
    return None


def _strong(found: Signature | None) -> Signature | None:
    """An array made of values of that signature: the values' dtype, or, made of Python
    scalars alone, the default array of their kind."""
    if found is None or found.follows:
        return found
    return {"int": Signature(frozenset({INDEX})), "float": DEFAULT_FLOAT}.get(found.weak)


def _bound_arguments(helper: Helper, call: ast.Call) -> dict[str, ast.expr] | None:
    """Each parameter of the helper with the expression the call gives it (or its default)."""
    if len(call.args) > len(helper.parameters) or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    bound = {**helper.defaults, **dict(zip(helper.parameters, call.args))}
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in helper.parameters:
            return None
        bound[keyword.arg] = keyword.value
    return bound if len(bound) == len(helper.parameters) else None


# What one run of a helper is: its name (for recursion), the helper, and a call giving its
# parameters their values.
HelperCall = tuple[str, Helper, ast.Call]


def called_helpers(callees: Callees, call: ast.Call) -> list[HelperCall] | None:
    """The helpers a call runs, each with a call of it: the call of a helper, itself; a
    ``lax.cond(p, f, g, *operands)`` or ``lax.switch(i, [f, g, h], *operands)`` of helpers or
    lambdas (branch functions jitfix wrote), each branch called with the operands -- lax makes
    every branch return the one type. None for any other call."""
    if isinstance(call.func, ast.Name):
        helper = callees.helper(call.func.id)
        return [(call.func.id, helper, call)] if helper is not None else None
    if call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
        return None
    function = callees.resolve(call.func)
    if function == "jax.lax.cond" and len(call.args) >= 3:
        branches, operands = call.args[1:3], call.args[3:]
    elif function == "jax.lax.switch" and len(call.args) >= 2 and isinstance(call.args[1], ast.List | ast.Tuple):
        branches, operands = call.args[1].elts, call.args[2:]
    else:
        return None
    found: list[HelperCall] = []
    for branch in branches:
        if isinstance(branch, ast.Name):
            name, helper = branch.id, callees.helper(branch.id)
        elif isinstance(branch, ast.Lambda):
            name, helper = f"<lambda at {branch.lineno}:{branch.col_offset}>", callees.lambda_helper(branch)
        else:
            return None
        if helper is None:
            return None
        found.append((name, helper, ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=operands, keywords=[])))
    return found


def helper_item(callees: Callees, expr: ast.expr) -> list[tuple[HelperCall, list[tuple[Sequence[ast.stmt], ast.expr]]]] | None:
    """``expr`` as an item of the tuple displays what a call runs returns (``_after_if(c)[2]``):
    for each helper it runs, the item of each of its returns, with the statements before it;
    None for anything else."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant)
            and type(expr.slice.value) is int and isinstance(expr.value, ast.Call)):
        return None
    call, index = expr.value, expr.slice.value
    width = returned_width(callees, call)
    runs = called_helpers(callees, call)
    if not 0 <= index < width or runs is None:
        return None
    # A return of a call of another helper (one continuation calling the next) gives that
    # call's item, read in the helper's body.
    return [((name, helper, run), [(path, value.elts[index] if isinstance(value, ast.Tuple)
                                     else callees.item_node(value, index)) for path, value in helper.returns])
            for name, helper, run in runs]


def returned_width(callees: Callees, value: ast.expr) -> int:
    """How many items a returned value has: of a tuple display, or of a call whose helpers
    all return that many (a continuation, ``return _after_if(c)``; a ``lax.cond`` of branch
    functions); -1 for any other value."""
    if isinstance(value, ast.Tuple):
        return -1 if any(isinstance(item, ast.Starred) for item in value.elts) else len(value.elts)
    runs = called_helpers(callees, value) if isinstance(value, ast.Call) else None
    if runs is None or any(id(helper) in callees.inlining for _, helper, _ in runs):
        return -1
    widths: set[int] = set()
    for _, helper, _ in runs:
        callees.inlining.add(id(helper))
        try:
            inner = callees.within(helper)
            widths |= {returned_width(inner, returned) for _, returned in helper.returns}
        finally:
            callees.inlining.discard(id(helper))
    return widths.pop() if len(widths) == 1 else -1


def _own(expr: ast.AST) -> Signature:
    return Signature(frozenset({ast.unparse(expr)}))


def arms_to_cast(arms: Sequence[Sequence[ast.AST | Signature]], callees: Callees,
                 values: Mapping[str, Known] | None = None) -> list[int]:
    """Indices of the arms to cast to the common result type (empty: they already agree).
    Each arm is the expressions it may end with (one, or those of an inner ``if``), or their
    signatures where already known.

    An arm needs no cast when each of its expressions has the common signature, or is a
    Python float and the common type is inexact (``lax.cond`` widens a weakly typed arm to
    the other's float). When the source does not say what an arm is made of, only literals
    decide.
    """
    signatures = Signatures(callees, values)
    found = [[candidate if isinstance(candidate, Signature) else signatures.of(candidate) for candidate in arm]
             for arm in arms]
    every = [one for arm in found for one in arm]
    if any(one is None for one in every):
        return _literals_to_cast(found)
    known = [one for one in every if one is not None]
    if len({one.key for one in known}) <= 1 and not any(one.varies for one in known):
        return []
    common = Signature()
    for one in known:
        common = common.join(one)
    return [index for index, arm in enumerate(found)
            if any(one is not None and (one.varies or one.key != common.key
                   and not (not one.follows and one.weak == "float" and common.inexact)) for one in arm)]


def _literals_to_cast(found: list[list[Signature | None]]) -> list[int]:
    """Among arms the source does not describe (None): a Python int arm is cast to the
    arrays' type, and once a Python float is among them every arm that may be exact is."""
    def literal(arm: list[Signature | None]) -> bool:
        return all(one is not None and not one.follows for one in arm)

    def inexact(arm: list[Signature | None]) -> bool:
        return all(one is not None and one.inexact for one in arm)

    floats = any(literal(arm) and any(one is not None and one.inexact for one in arm) for arm in found)
    if floats:
        return [index for index, arm in enumerate(found) if not inexact(arm)]
    return [index for index, arm in enumerate(found) if literal(arm)]


# -- loop carries ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CarryCast:
    sources: list[str]  # of the one `jnp.result_type` that holds every value the carry takes
    each_pass: bool  # a pass may bind it to a narrower value (`acc = n`): its result is cast too


def carry_casts(carry: Sequence[str], body: Sequence[ast.stmt], index: str | None, callees: Callees,
                values: Mapping[str, Known], starts: Mapping[str, ast.expr],
                items: Mapping[str, Sequence[ast.expr]] | None = None) -> tuple[dict[str, CarryCast],
                                                                                 dict[str, Signature]]:
    """The carries whose type the loop body may change, each with how it is cast; and the type
    each carry holds in the body, where that is a type by itself (a flag's `bool`).

    A lax loop's carry keeps one type; eager Python lets a pass change it (``acc = n`` with an
    int ``n``, then ``acc = acc * 0.5``). Such a carry starts cast to the type that holds every
    value it takes (its sources are evaluable before the loop), and a pass that may bind it to
    a narrower value returns it cast; one whose values have that type when every carry has
    its own (``acc = acc * 0.5``, ``x_new = x - f(x)``) returns it already. A carry whose start is a Python scalar
    and that every pass binds to an array needs no cast: ``lax`` widens a weakly typed start
    itself. Either way each pass starts with the carry in that one type. When the source does
    not say what a value is made of, nothing is cast (as before: the trace says so).
    ``values``: what names hold before the loop; ``starts``: a carry's start where it is not the
    name's value before the loop; ``items``: the items of a dict carry each pass makes anew
    (`st['p']`, which are among ``carry``), with the values passes give them.
    """
    block = Block(body, callees, values, {index: Signature(frozenset({INDEX}))} if index is not None else {}, items)
    environment = block.environment({name: block.before.of(starts.get(name, ast.Name(id=name, ctx=ast.Load())))
                                     for name in carry})
    # What each carry holds at the end of a pass that starts with every carry of its full
    # type, path by path: a name a pass rebinds is read with this pass's value (`a = m * 2`
    # then `b, a = a, b + b` leaves an int in `b`). None: the body is not followed.
    ends = block.pass_ends(body, {**block.fixed, **{name: environment.get(name) for name in carry}})
    casts: dict[str, CarryCast] = {}
    held: dict[str, Signature] = {}
    for name in carry:
        start = block.before.of(starts.get(name, ast.Name(id=name, ctx=ast.Load())))
        every = environment.get(name)
        passes = block.closed(block.bindings.get(name, []), Signature(), environment)
        if start is None or every is None or passes is None:
            continue
        if every.follows <= FIXED_TYPES and not every.varies and name.isidentifier():
            held[name] = every
        if start.key == every.key and not every.varies:
            continue
        # What a pass ends with, path by path (a pass may bind it more than once: `c = x * 0.5`,
        # then `c = m * 2` on some paths).
        end = ends.get(name) if ends is not None else None
        if not start.follows and end is not None and end.follows and end.key == every.key and not end.varies:
            continue  # a Python scalar start: lax widens it to the type every pass returns
        if not block.evaluable_before(every):
            held.pop(name, None)
            continue
        # A pass that ends with the carry of its full type needs no cast.
        each_pass = bool(block.bindings.get(name)) and (end is None or end.varies or end.key != every.key)
        casts[name] = CarryCast(dtype_sources(every), each_pass)
    return casts, held


def resolved_after(expr: ast.expr, statements: Sequence[ast.stmt], callees: Callees,
                   values: Mapping[str, Known]) -> Signature | None:
    """The signature of ``expr`` evaluated after ``statements``, in terms of values before
    them: each name they bind stands for every value it may hold there (or its value before,
    where it is read before a binding or no binding may have run). None: unknown, or made of
    what the statements change (`st["a"]`)."""
    block = Block(statements, callees, values, {})
    env = block.after(statements, {})  # path by path where every statement is followed
    if env is not None:
        found = block.path_value(expr, env)
        return found if found is not None and block.evaluable_before(found) else None
    reads = {node.id for node in ast.walk(expr) if isinstance(node, ast.Name)}
    exposed = upward_exposed(list(statements), live_out=reads) & set(block.bindings)
    starts = {name: block.before.of(ast.Name(id=name, ctx=ast.Load())) for name in exposed}
    # A dict item holds its value before too (a binding may not run, or read it first).
    starts.update({item: Signature(frozenset({item})) for item in block.items})
    environment = block.environment(starts)
    found = block.closed([expr], Signature(), environment)
    if found is None or not block.evaluable_before(found):
        return None
    # The environment holds the type of every value a name may have; the value itself is one
    # of them, which one the path decides (`k` or `k * 0.5`): it varies unless they agree. (A
    # name every path through the statements binds no longer holds its start.)
    kept = reads - definitely_assigned(list(statements))
    # An item of a dict or tuple the statements make anew (`t[0]`) is one of its values too.
    items = {text for node in ast.walk(expr) if isinstance(node, ast.Subscript)
             and (text := ast.unparse(node)) in block.items}
    if any(block.alternatives_differ(name, starts.get(name) if name in kept else None, environment)
           for name in reads & set(block.bindings)) \
            or any(block.alternatives_differ(item, starts[item], environment) for item in items):
        return Signature(found.follows, found.weak, True)
    return found


class Block:
    """Statements (a loop body, a branch) whose bindings the types of later values depend on.

    ``before`` reads names as they are before the block (through the values known there);
    ``inside`` leaves a name the block binds as itself, to be replaced by what it may hold.
    """

    def __init__(self, statements: Sequence[ast.stmt], callees: Callees, values: Mapping[str, Known],
                 fixed: Mapping[str, Signature], items: Mapping[str, Sequence[ast.expr]] | None = None):
        # An item of a dict or tuple each binding makes anew (`st['p']`, see ``updated_items``) is
        # bound like a name, to the values the bindings give it; a dict's other items keep theirs.
        # (The items of a loop's carries are given; a block's are found.)
        self.iterates_rows = callees.iterates_rows
        named = bound_values(reaching(statements), callees.iterates_rows)
        self.items = dict(items) if items is not None else _updated_items(named)
        self.bindings: dict[str, list[Known | None]] = {**named, **{item: list(given) for item, given in self.items.items()}}
        self.carriers = {_reads(item).pop() for item in self.items}
        self.fixed = fixed  # names whose signature is known (a loop's index)
        # Where the paths of the loops followed jump, innermost last: each `continue`'s and each `break`'s.
        self._jumps: list[tuple[list[Environment], list[Environment]]] = []
        bound = set(self.bindings) | set(fixed)
        self.before = Signatures(callees, values)
        results = {name: given[0] for name, given in self.bindings.items()
                   if len(given) == 1 and isinstance(given[0], ast.Call)}
        if results:  # (only a name no statement reads before it is bound)
            results = {name: call for name, call in results.items()
                       if name not in upward_exposed(list(statements), live_out={name})}
        self.inside = Signatures(callees, {name: value for name, value in values.items()
                                           if name not in bound and not _reads_any(value, bound)}, results)

    def environment(self, starts: Mapping[str, Signature | None]) -> Environment:
        """What each name the block binds may hold, over every pass: the least fixpoint, from
        nothing (a name with a start holds it too); None is unknown."""
        environment: Environment = {**dict.fromkeys(self.bindings, Signature()), **self.fixed}
        for name, start in starts.items():
            if start is None and name in self.bindings:
                environment[name] = None
        changed = True
        while changed:  # each round widens a signature or makes it unknown, and there are finitely many
            changed = False
            for name, values in self.bindings.items():
                if name in self.fixed or environment[name] is None:
                    continue
                found = self.closed(values, starts.get(name) or Signature(), environment)
                if found != environment[name]:
                    environment[name], changed = found, True
        return environment

    def closed(self, values: Sequence[Known | None], start: Signature,
               environment: Environment) -> Signature | None:
        """The join of the start and the values, each name the block binds replaced by what
        the environment says it holds."""
        found = start
        for value in values:
            one = value if isinstance(value, Signature) else self.inside.of(value) if value is not None else None
            if one is None:
                return None
            for name in one.follows:
                replaced = environment.get(name, Signature(frozenset({name})))
                if replaced is None:
                    return None
                found = found.join(replaced)
            found = found.join(Signature(weak=one.weak))
        return found

    # -- path by path ---------------------------------------------------------------------------
    # The environment above holds, for each name, every value it takes in the block at once
    # (what a loop's carry must hold). Code after the block sees one path's value: ``a, b =
    # b, a + a`` then ``a, b = b, a + c`` leaves in ``a`` what ``a + a`` was, not a mix of
    # both. `after` follows the statements in order, joining where paths meet (`one_of`: the
    # value varies where they disagree). A path that leaves (a `return`, `raise`, `continue`
    # or `break`) reaches no statement after; where it goes, a loop, it is joined there.

    def after(self, statements: Sequence[ast.stmt], env: Environment) -> Environment | None:
        """What each name the statements bind holds after them, in terms of values before
        the block (None: unknown); None when a statement is not followed (a `with`, `try`,
        def, a loop's `else`) or no path reaches the end."""
        found = self._through(statements, env)
        return None if found is LEFT else found

    def pass_ends(self, body: Sequence[ast.stmt], env: Environment) -> Environment | None:
        """What each name holds where a pass of a loop with this body ends: at its end, a
        `continue` or a `break` (each is a carry the pass hands on); None as for ``after``."""
        self._jumps.append(([], []))
        found = self._through(body, env)
        continues, breaks = self._jumps.pop()
        if found is None:
            return None
        ends = [end for end in [found, *continues, *breaks] if end is not LEFT]
        return self._joined(env, ends) if ends else None

    def _through(self, statements: Sequence[ast.stmt], env: Environment) -> Environment | None:
        for statement in statements:
            found = self._after_statement(statement, env)
            if found is None or found is LEFT:
                return found
            env = found
        return env

    def _after_statement(self, statement: ast.stmt, env: Environment) -> Environment | None:
        if any(isinstance(node, ast.NamedExpr) for node in ast.walk(statement)):
            return None
        if isinstance(statement, ast.Assign):
            return self._assigned(statement, env)
        if isinstance(statement, ast.AugAssign | ast.AnnAssign):
            if statement.value is None:  # (`x: int` declares, binds nothing followed)
                return None
            if self._writes_an_element(statement.target):
                return env
            if not isinstance(statement.target, ast.Name):
                return None
            value = statement.value if isinstance(statement, ast.AnnAssign) else ast.BinOp(
                left=ast.Name(id=statement.target.id, ctx=ast.Load()), op=statement.op, right=statement.value)
            return {**env, statement.target.id: self.path_value(value, env)}
        if isinstance(statement, ast.If):
            branches = [self._through(block, dict(env)) for block in (statement.body, statement.orelse)]
            if any(branch is None for branch in branches):
                return None
            reached = [branch for branch in branches if branch is not None and branch is not LEFT]
            return self._joined(env, reached) if reached else LEFT
        if isinstance(statement, ast.For | ast.While):
            return self._after_loop(statement, env)
        if isinstance(statement, ast.Continue | ast.Break):
            if self._jumps:  # (outside the loops followed, the path leaves the statements)
                self._jumps[-1][isinstance(statement, ast.Break)].append(env)
            return LEFT
        if isinstance(statement, ast.Return | ast.Raise):
            return LEFT
        if isinstance(statement, ast.Expr | ast.Pass | ast.Assert):
            return env
        return None

    def _assigned(self, statement: ast.Assign, env: Environment) -> Environment | None:
        bound: Environment = {}
        for target in statement.targets:
            if self._writes_an_element(target):
                continue
            pairs = paired_values(target, statement.value) or unpacked_items(target, statement.value)
            if not pairs:
                return None
            bound.update((name, self.path_value(value, env)) for name, value in pairs)
            for name, value in pairs:  # a new dict or tuple of items the block follows: each item too
                if name in self.carriers:
                    items = updated_items(value, name) or []
                    bound.update((ast.unparse(item_of(name, key)), self.path_value(item, env)) for key, item in items)
        return {**env, **bound}

    def _writes_an_element(self, target: ast.expr) -> bool:
        """Whether ``target`` is an element or attribute of a name (`buf[1] = v`, which binds
        no name and leaves the object's type as it was), not of a container whose items the
        block follows."""
        base = target
        while isinstance(base, ast.Subscript | ast.Attribute):
            base = base.value
        return base is not target and isinstance(base, ast.Name) and base.id not in self.carriers

    def _after_loop(self, loop: ast.For | ast.While, env: Environment) -> Environment | None:
        """Any number of passes, none too: the join of the state before and where each pass
        ends or breaks."""
        if loop.orelse:
            return None
        bound: Environment = {}
        if isinstance(loop, ast.For):
            iterable = loop.iter
            if isinstance(loop.target, ast.Name) and is_range(iterable):
                bound = {loop.target.id: Signature(frozenset({INDEX}))}
            elif self.iterates_rows(loop):
                bound = {name: self.path_value(held, env) if not isinstance(held, Signature) else held
                         for name, held in _row_values(loop)}
            else:
                return None
        # A loop variable the block has not bound before is taken as bound by the loop (after
        # no pass it holds whatever it held before the block, if anything: not followed).
        env = {**{name: held for name, held in bound.items() if name not in env}, **env}
        head = env
        for _ in range(8):  # each round widens a signature or makes it vary: few rounds settle it
            self._jumps.append(([], []))
            passed = self._through(loop.body, {**head, **bound})
            continues, breaks = self._jumps.pop()
            if passed is None:
                return None
            ends = [end for end in [passed, *continues] if end is not LEFT]
            joined = self._joined(env, [env, *ends])
            if joined == head:
                return self._joined(head, [head, *breaks])
            head = joined
        return None

    def _joined(self, before: Environment, ends: list[Environment]) -> Environment:
        """Where paths meet: each name one of the values the paths leave in it (a path that
        does not bind it leaves what it held before)."""
        if not ends:
            return before
        joined = dict(before)
        for name in set().union(*ends):
            held = [end[name] if name in end else self._before(name, before) for end in ends]
            known = [one for one in held if one is not None]
            joined[name] = reduce(Signature.one_of, known) if len(known) == len(held) else None
        return joined

    def _before(self, name: str, env: Environment) -> Signature | None:
        return env[name] if name in env else self.before.of(ast.Name(id=name, ctx=ast.Load()))

    def path_value(self, value: Known, env: Environment) -> Signature | None:
        """The signature of ``value`` where ``env`` holds: each name the block binds is what
        this path left in it, or what it held before the block."""
        one = value if isinstance(value, Signature) else self.inside.of(value)
        if one is None:
            return None
        found = Signature(weak=one.weak, varies=one.varies)
        for name in one.follows:
            if name in env or name in self.bindings:
                replaced = self._before(name, env)
                if replaced is None:
                    return None
                found = found.join(replaced)
            else:
                found = found.join(Signature(frozenset({name})))
        return found

    def alternatives_differ(self, name: str, start: Signature | None,
                            environment: Environment) -> bool:
        """Whether the values ``name`` may hold after the block (its start, where a path may
        keep it, and each binding's) differ in type. (One of unknown type, a def's, is not
        what a known signature was made of.)"""
        alternatives = [start, *(self.closed([value], Signature(), environment)
                                 for value in self.bindings.get(name, []))]
        known = [one for one in alternatives if one is not None]
        return any(one.varies for one in known) or len({one.key for one in known}) > 1

    def evaluable_before(self, found: Signature) -> bool:
        """A name among the sources is a value before the block (a name the block binds is
        replaced by what it holds); `st["a"]` of a `st` the block binds is not."""
        bound = set(self.bindings) | set(self.fixed)
        unchanged = bound - self.carriers  # (an item of a carrier is bound itself, or keeps its value)
        return not any(not source.isidentifier() and _reads(source) & unchanged for source in found.follows)


def updated_items(value: Known | None, name: str) -> list[tuple[ast.Constant, ast.expr]] | None:
    """The items a binding of ``name`` to ``value`` gives it, where the value is a new one of
    its items: ``{**name, "k": v}`` (each key a string; the dict's other items keep theirs),
    as writes into a dict are restructured, a dict display of string keys (every item), or a
    tuple or list display ``(u, v)`` (keys 0, 1, ...: every item); None for any other value."""
    if isinstance(value, ast.Tuple | ast.List):
        if any(isinstance(item, ast.Starred) for item in value.elts):
            return None
        return [(ast.Constant(index), item) for index, item in enumerate(value.elts)]
    if not isinstance(value, ast.Dict):
        return None
    updated = bool(value.keys) and value.keys[0] is None and isinstance(value.values[0], ast.Name) \
        and value.values[0].id == name
    if not updated and None in value.keys:
        return None  # (`{**other, ...}`: what the other holds is not followed)
    found: list[tuple[ast.Constant, ast.expr]] = []
    for key, item in zip(value.keys[1:] if updated else value.keys, value.values[1:] if updated else value.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        found.append((key, item))
    return found


# How a dict or a tuple or list display a name is bound to is made anew with its items cast:
# the opening bracket, and the number of items ("{" and 0 for a dict, whose other items keep
# theirs).
Layout = tuple[str, int]


def container_layout(values: Iterable[Known | None]) -> Layout | None:
    """The layout of the new containers among ``values`` (the bindings of one name, see
    ``updated_items``); None when they mix dicts, tuples, lists or lengths, which no lax
    carry or branch output keeps (their items are not cast then)."""
    layouts = {("(" if isinstance(value, ast.Tuple) else "[", len(value.elts))
               if isinstance(value, ast.Tuple | ast.List) else ("{", 0)
               for value in values if isinstance(value, ast.Tuple | ast.List | ast.Dict)}
    return layouts.pop() if len(layouts) == 1 else None


def rebuilt(value: str, casts: Mapping[str, str], layout: Layout, jnp: str) -> str:
    """``value``, a dict, tuple or list, made anew with the items ``casts`` names (the source
    of their key -> the dtype) cast: `{**st, "p": jnp.asarray(st["p"], d)}`,
    `(jnp.asarray(t[0], d), t[1])`."""
    def cast(key: str) -> str:
        return f"{jnp}.asarray({value}[{key}], {casts[key]})" if key in casts else f"{value}[{key}]"

    bracket, width = layout
    if bracket == "{":
        return f"{{**{value}, {', '.join(f'{key}: {cast(key)}' for key in casts)}}}"
    items = ", ".join(cast(str(position)) for position in range(width))
    return f"({items},)" if bracket == "(" and width == 1 else f"({items})" if bracket == "(" else f"[{items}]"


def item_dtype_name(name: str, key: str) -> str:
    """The name of the dtype of item ``key`` (its source: `"p"`, `1`) of ``name``: `st_p_dtype`, `t_1_dtype`."""
    label = key.strip("\"'")
    return f"{name}_{label}_dtype" if label.isidentifier() or label.isdigit() else f"{name}_item_dtype"


def item_of(name: str, key: ast.Constant) -> ast.Subscript:
    """``name["k"]``, made here (it spans no source: it is written out from the tree)."""
    return ast.Subscript(value=ast.Name(id=name, ctx=ast.Load()), slice=ast.Constant(key.value), ctx=ast.Load())


def bound_values(body: Sequence[ast.stmt],
                 iterates_rows: Callable[[ast.For], bool] = lambda loop: False) -> dict[str, list[Known | None]]:
    """Each name the body binds, with the value of each binding (the variable of a loop over
    a ``range``: an int, the type of a lax loop's index; of a loop over an array's rows, which
    ``iterates_rows`` tells: a row, of the array's dtype); a name bound otherwise (another loop
    variable, an unpacking, a def) maps to None in its list, which makes it unknown."""
    bindings: dict[str, list[Known | None]] = {}
    stores: dict[str, int] = {}
    for node in own_nodes(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name, value in paired_values(target, node.value) or unpacked_items(target, node.value):
                    bindings.setdefault(name, []).append(value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            value = ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)
            bindings.setdefault(node.target.id, []).append(value)
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and isinstance(node.target, ast.Name) \
                and node.value is not None:
            bindings.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and is_range(node.iter):
            # (a Python int where the loop unrolls: the same type but for its weakness, which
            # `lax.cond` and lax loops do not compare)
            bindings.setdefault(node.target.id, []).append(Signature(frozenset({INDEX})))
        elif isinstance(node, ast.For) and iterates_rows(node):
            for name, held in _row_values(node):
                bindings.setdefault(name, []).append(held)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bindings.setdefault(node.name, []).append(None)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bindings.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
    for name, count in stores.items():
        if len(bindings.get(name, [])) != count:
            bindings.setdefault(name, []).append(None)
    return bindings


def _row_values(loop: ast.For) -> list[tuple[str, Known]]:
    """The names a loop over an array's rows binds (``v``; ``i, v`` of ``enumerate``), each
    with what it holds: a row, an element of the array for its type; or the count, an int."""
    array = rows_iterated(loop)
    assert array is not None
    row = ast.Subscript(value=array, slice=ast.Name(id="_", ctx=ast.Load()), ctx=ast.Load())
    if isinstance(loop.target, ast.Name):
        return [(loop.target.id, row)]
    assert isinstance(loop.target, ast.Tuple)
    count, item = loop.target.elts
    return [(name, value) for target, value in ((count, Signature(frozenset({INDEX}))), (item, row))
            if isinstance(target, ast.Name) for name in [target.id]]


def paired_values(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """The names an assignment binds to a value each: `a = v`, and `a, b = u, v` (a tuple
    display unpacked into as many names, each item evaluated before any is bound)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
            and len(target.elts) == len(value.elts) \
            and not any(isinstance(part, ast.Starred) for part in [*target.elts, *value.elts]):
        return [pair for item, item_value in zip(target.elts, value.elts) for pair in paired_values(item, item_value)]
    start = _lax_loop_start(value) if isinstance(target, ast.Tuple | ast.List) else None
    if isinstance(start, ast.Tuple):  # `i, c = lax.while_loop(cond, body, (0, c))`: each has its start's type
        return paired_values(target, start)
    return []


def unpacked_items(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]]:
    """For types only: the names a tuple target unpacks from one value that is not a display
    (`a, b = carry`, `a, b = lax.cond(p, f, g, ...)`, `a, b = helper(x)`), each to its item of
    the value (`carry[0]`, `lax.cond(...)[1]`), which the signatures read from what a helper
    or branch function returns, or take as a value of its own: two items are not known to
    share a type."""
    if not isinstance(target, ast.Tuple | ast.List) or isinstance(value, ast.Tuple | ast.List | ast.Starred):
        return []
    names = [item.id for item in target.elts if isinstance(item, ast.Name)]
    if len(names) != len(target.elts):
        return []
    return [(name, ast.Subscript(value=value, slice=ast.Constant(index), ctx=ast.Load()))
            for index, name in enumerate(names)]


def _updated_items(bindings: Mapping[str, Sequence[Known | None]]) -> dict[str, list[ast.expr]]:
    """The items of each dict, tuple or list every binding of which is a new one of its items (`st =
    {**st, "p": v}`, `t = (t[1], u)`), by their text in the types (`st['p']`, `t[1]`), with
    the values bindings give them."""
    found: dict[str, list[ast.expr]] = {}
    for name, given in bindings.items():
        updates = [updated_items(value, name) if not isinstance(value, Signature) else None for value in given]
        if not updates or any(update is None for update in updates) or container_layout(given) is None:
            continue
        for key, value in chain.from_iterable(update for update in updates if update is not None):
            found.setdefault(ast.unparse(item_of(name, key)), []).append(value)
    return found


# The lax loops, by name, with the position of their start: what they return is a carry of
# the type it starts with (lax requires every pass to keep it).
LAX_LOOP_STARTS = {"fori_loop": 3, "while_loop": 2}


def _lax_loop_start(call: ast.AST) -> ast.expr | None:
    """The start of the carry of ``lax.fori_loop(lower, upper, body, start)`` or
    ``lax.while_loop(cond, body, start)`` (told by name: these are types only)."""
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else ""
    position = LAX_LOOP_STARTS.get(name)
    return call.args[position] if position is not None and len(call.args) == position + 1 else None


def _reads(source: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(source, mode="eval")) if isinstance(node, ast.Name)}


def _reads_any(value: Known, names: set[str]) -> bool:
    return bool(known_reads(value) & names)


def known_reads(value: Known) -> set[str]:
    """The names what is known of a name depends on."""
    if isinstance(value, Signature):
        return {name for source in value.follows if source not in FIXED_TYPES for name in _reads(source)}
    return set(kept_on_node(value, "names_read_in_value", lambda: frozenset(
        node.id for node in ast.walk(value) if isinstance(node, ast.Name))))


def dtype_sources(found: Signature) -> list[str]:
    """Arguments of ``jnp.result_type`` for a signature: its values, then a Python scalar of
    its weak kind (``0.0``), which widens them as the scalar did."""
    literal = {"int": "0", "float": "0.0", "complex": "0j"}.get(found.weak)
    markers = [marker for marker in sorted(FIXED_TYPES) if marker in found.follows]
    return [*sorted(found.follows - set(markers)), *markers, *([literal] if literal else [])]



def as_spelled(text: str, source: str) -> str:
    """``text`` (written out from the tree) with each item by a string key, `st['p']`, in the
    quotes ``source`` spells it with, `st["p"]`, where it does."""
    def spelled(match: re.Match[str]) -> str:
        double = f'{match[1]}["{match[2]}"]'
        return double if double in source else match[0]

    return re.sub(r"\b(\w+)\['([^'\\\"]*)'\]", spelled, text)


def in_quotes(sources: list[str], name: str, key: str) -> list[str]:
    """Dtype sources with the item ``name[key]`` written with its key as the source spells it
    (``key``: `"p"`), not as the tree does (`st['p']`)."""
    unparsed = ast.unparse(ast.Subscript(value=ast.Name(id=name), slice=ast.Constant(ast.literal_eval(key))))
    return [f"{name}[{key}]" if source == unparsed else source for source in sources]
