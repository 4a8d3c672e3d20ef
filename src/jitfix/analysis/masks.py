"""Boolean masks: an index that selects as many elements as the data says.

``x[x > 0]``, ``x[mask] = 0`` and ``x.at[mask].set(0)`` need the number of selected elements
while tracing, which a traced mask does not give: each raises under jit and vmap
(``NonConcreteBooleanIndexError``). ``jnp.where(mask, new, x)`` and a reduction's
``where=mask`` keep the shape.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import AbstractSet, Callable, Mapping, Sequence

from jitfix.analysis.blocks import reaching_assignment, unchanged_parameter, walk_body
from jitfix.analysis.catalogue import is_elementwise
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.passed_values import argument_for
from jitfix.analysis.scopes import Scopes
from jitfix.analysis.values import ArrayEvidence, compared_with_text, parameter_names, positional_names

# jax.numpy functions whose result is a boolean array of their arguments' shape.
PREDICATES = frozenset(f"jax.numpy.{name}" for name in (
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit", "isclose", "logical_and", "logical_or",
    "logical_not", "logical_xor", "greater", "greater_equal", "less", "less_equal", "equal", "not_equal"))
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def is_boolean_mask(expr: ast.AST, imports: ImportTable,
                    bindings: Mapping[str, Sequence[ast.AST | None]] | None = None,
                    masks: AbstractSet[str] = frozenset()) -> bool:
    """Whether ``expr`` is certainly a boolean array when its operands are arrays: one
    comparison (``x > 0``; not ``is``, ``in`` or one with a string), ``~`` of a mask, ``&``,
    ``|`` or ``^`` of masks, a jnp predicate (``jnp.isnan(x)``) or boolean reduction
    (``x.any(axis=2)``), a name every binding of
    which (in ``bindings``) is one (``mask = x > 0``), or a parameter among ``masks`` the
    function does not rebind (every call gives it a mask: ``MaskParameters``)."""
    if isinstance(expr, ast.Compare):
        return len(expr.ops) == 1 and isinstance(expr.ops[0], _COMPARISONS) and compared_with_text(expr) is None
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return is_boolean_mask(expr.operand, imports, bindings, masks)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitAnd | ast.BitOr | ast.BitXor):
        return is_boolean_mask(expr.left, imports, bindings, masks) \
            and is_boolean_mask(expr.right, imports, bindings, masks)
    if isinstance(expr, ast.Call):
        name = imports.resolve(expr.func)
        # `x.any(axis=2)`, `jnp.all(x, axis=-1)`: a boolean reduction (of an array: a
        # Python object has no `any` method)
        return name in PREDICATES or name in ("jax.numpy.any", "jax.numpy.all") \
            or name is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in ("any", "all")
    if isinstance(expr, ast.Name):
        bound = bindings.get(expr.id, ()) if bindings is not None else ()
        if not bound:
            return expr.id in masks
        return all(value is not None and is_boolean_mask(value, imports, masks=masks) for value in bound)
    return False


class MaskParameters:
    """The parameters every call of a function of the module gives a boolean mask -- by its
    form at the call (``f(x, x > t)``), or a parameter of the caller that is one the same way
    (``apply_mask(x, mask)`` in a jitted ``f`` whose callers pass ``x > t``) --, for a function
    the module only calls by its name (never hands on), and calls at least once. A helper
    that indexes with such a parameter (``x[mask]``) indexes with a traced mask whenever
    traced code calls it."""

    def __init__(self, scopes: Scopes, imports: ImportTable,
                 bindings_of: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], Mapping[str, Sequence[ast.AST | None]]]):
        self.scopes = scopes
        self.imports = imports
        self.bindings_of = bindings_of
        self._found: dict[int, frozenset[str]] = {}
        self._pairs: dict[int, frozenset[tuple[str, str]]] = {}

    def of(self, function: ast.AST) -> frozenset[str]:
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            return frozenset()
        if id(function) not in self._found:
            self._found[id(function)] = frozenset()  # (a recursive call knows nothing more)
            self._found[id(function)] = self._given(function)
        return self._found[id(function)]

    def _given(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
        home = self.scopes.parent.get(function, self.scopes.tree)
        if isinstance(home, ast.ClassDef) or not self.scopes.only_called(function.name, home):
            return frozenset()
        calls, names = self._calls(function)
        given: set[str] | None = None
        for call, scope in calls:
            bindings = self.bindings_of(scope) if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) else None
            masks = self.of(scope)
            here = {name for name in names if (argument := argument_for(call, function, name)) is not None
                    and is_boolean_mask(argument, self.imports, bindings, masks)}
            given = here if given is None else given & here
            if not given:
                return frozenset()
        return frozenset(given or ())

    def _calls(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[tuple[ast.Call, ast.AST]], list[str]]:
        """The module's calls of the function by its name (with the scope each is in), and its
        parameters a call can give."""
        home = self.scopes.parent.get(function, self.scopes.tree)
        calls = [(call, scope) for call, scope in self.scopes.calls_to(function.name)
                 if isinstance(call.func, ast.Name) and self.scopes.binding_scope(scope, function.name) is home]
        return calls, [*positional_names(function), *(arg.arg for arg in function.args.kwonlyargs)]

    def elementwise_pairs(self, function: ast.AST) -> frozenset[tuple[str, str]]:
        """(mask, array): parameters every call gives a mask computed elementwise from what it
        gives the other (``masked_total(x, x > t)``; the caller's own such pair), so
        ``array[mask]`` in the function selects element for element."""
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or not self.of(function):
            return frozenset()
        if id(function) not in self._pairs:
            self._pairs[id(function)] = frozenset()  # (a recursive call knows nothing more)
            self._pairs[id(function)] = self._paired(function)
        return self._pairs[id(function)]

    def _paired(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[tuple[str, str]]:
        calls, names = self._calls(function)
        candidates = [(mask, array) for mask in self.of(function) for array in names if array != mask]
        paired: set[tuple[str, str]] | None = None
        for call, scope in calls:
            caller = scope if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) else None
            bindings = self.bindings_of(caller) if caller is not None else {}
            caller_pairs = self.elementwise_pairs(caller) if caller is not None else frozenset()
            here = set()
            for mask, array in candidates:
                given_mask, given_array = argument_for(call, function, mask), argument_for(call, function, array)
                if not isinstance(given_array, ast.Name) or given_mask is None:
                    continue
                rebound = len(bindings.get(given_array.id, ())) > (
                    0 if caller is not None and given_array.id in parameter_names(caller) else 1)
                if rebound and caller is not None and _same_array_since(caller, given_mask, given_array.id, call, bindings):
                    rebound = False  # (`m = x == 0` then `x = f(x, m)`: the mask read the `x` passed)
                if selects_elementwise(given_mask, given_array.id, self.imports, bindings, rebound) \
                        or isinstance(given_mask, ast.Name) and (given_mask.id, given_array.id) in caller_pairs \
                        and not bindings.get(given_mask.id) and not bindings.get(given_array.id):
                    here.add((mask, array))
            paired = here if paired is None else paired & here
            if not paired:
                return frozenset()
        return frozenset(paired or ())


def module_masks(scopes: Scopes, imports: ImportTable) -> MaskParameters:
    """``MaskParameters`` of a module, reading each caller's bindings once."""
    evidence: dict[int, ArrayEvidence] = {}

    def bindings_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Mapping[str, Sequence[ast.AST | None]]:
        return evidence.setdefault(id(function), ArrayEvidence(function)).bindings

    return MaskParameters(scopes, imports, bindings_of)


def _same_array_since(function: ast.FunctionDef | ast.AsyncFunctionDef, mask: ast.expr, array: str, call: ast.Call,
                      bindings: Mapping[str, Sequence[ast.AST | None]]) -> bool:
    """Whether ``mask``, a name bound once, was computed from the ``array`` that ``call`` passes:
    nothing binds ``array`` between the mask's binding and the call (the call's own statement
    may bind it after, from what the call returns)."""
    if not isinstance(mask, ast.Name):
        return False
    bound = bindings.get(mask.id, ())
    if len(bound) != 1 or bound[0] is None or not hasattr(bound[0], "lineno"):
        return False
    since = bound[0].lineno
    return not any(isinstance(node, ast.Name) and node.id == array and not isinstance(node.ctx, ast.Load)
                   and since < node.lineno < call.lineno for node in walk_body(function))


def selects_elementwise(mask: ast.AST, array: str, imports: ImportTable,
                        bindings: Mapping[str, Sequence[ast.AST | None]], array_rebound: bool) -> bool:
    """Whether ``array[mask]`` selects elements one for one, so a reduction of the selection
    is the reduction of ``array`` with ``where=mask``: ``array`` is among the mask's
    elementwise operands (``x > 0``, ``~jnp.isnan(x)``). An elementwise result has at least
    its operands' dimensions and an index that works has at most the array's, so the two
    shapes are the same. A named mask counts through its one binding, unless ``array`` is
    rebound (``array_rebound``: the mask may have read another array of that name)."""

    def reaches(expr: ast.AST, through_names: bool) -> bool:
        if isinstance(expr, ast.Name):
            if expr.id == array:
                return True
            bound = bindings.get(expr.id, ())
            return through_names and not array_rebound and len(bound) == 1 and bound[0] is not None \
                and reaches(bound[0], False)
        if isinstance(expr, ast.Compare):
            return len(expr.ops) == 1 and any(reaches(side, through_names) for side in (expr.left, *expr.comparators))
        if isinstance(expr, ast.BinOp):
            return reaches(expr.left, through_names) or reaches(expr.right, through_names)
        if isinstance(expr, ast.UnaryOp):
            return reaches(expr.operand, through_names)
        if isinstance(expr, ast.Call) and not expr.keywords:
            name = imports.resolve(expr.func)
            return (name in PREDICATES or is_elementwise(name)) and any(reaches(argument, through_names)
                                                                        for argument in expr.args)
        return False

    return reaches(mask, True)


# Module constants that are Python floats: an operand of one keeps the other's shape and dtype.
_PYTHON_FLOATS = frozenset(f"{module}.{name}" for module in ("math", "numpy", "jax.numpy")
                           for name in ("pi", "e", "inf", "nan", "tau"))
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


@dataclass(frozen=True)
class ElementwiseOrigin:
    """The values an expression of a function is computed from element by element.

    ``out = -((-x + math.pi) % (2 * math.pi) - math.pi)`` and ``no_wrap = jnp.abs(x) <
    jnp.pi`` both come from ``x`` alone, with Python numbers: each has ``x``'s shape, so
    ``out.at[no_wrap]`` selects element for element. Names are followed through the
    function's straight-line assignments (the one a name holds at each read); a parameter
    the function never rebinds is an origin, and so is a local whose value is not elementwise.
    """

    function: ast.FunctionDef | ast.AsyncFunctionDef
    imports: ImportTable

    def roots(self, expr: ast.AST, at: ast.stmt, depth: int = 0) -> frozenset[str] | None:
        """The origins of ``expr`` read at ``at`` (empty: a Python number), or None when some
        part is not elementwise or not a stable value."""
        if isinstance(expr, ast.Constant):
            return frozenset() if type(expr.value) in (int, float) else None
        if isinstance(expr, ast.Attribute):
            return frozenset() if self.imports.resolve(expr) in _PYTHON_FLOATS else None
        if isinstance(expr, ast.Name):
            return self._name_roots(expr.id, at, depth)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd | ast.Invert):
            return self.roots(expr.operand, at, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITHMETIC + (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self._union([expr.left, expr.right], at, depth)
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(expr.ops[0], _COMPARISONS):
            return self._union([expr.left, *expr.comparators], at, depth)
        if isinstance(expr, ast.Call) and not expr.keywords and expr.args \
                and not any(isinstance(argument, ast.Starred) for argument in expr.args):
            name = self.imports.resolve(expr.func)
            if name in PREDICATES or is_elementwise(name):
                return self._union(expr.args, at, depth)
        return None

    def arithmetic_of(self, expr: ast.AST, root: str, at: ast.stmt, depth: int = 0) -> bool:
        """Whether ``expr`` is arithmetic (``+ - * / // % **``, negation) of ``root`` and
        Python numbers only: its dtype is ``root``'s or the one a Python number promotes it
        to, so selecting ``root``'s elements into it (``jnp.where``) keeps its dtype."""
        if isinstance(expr, ast.Constant | ast.Attribute):
            return self.roots(expr, at) == frozenset()
        if isinstance(expr, ast.Name):
            if expr.id == root and unchanged_parameter(self.function, root):
                return True
            binding = reaching_assignment(self.function, expr.id, at)
            return binding is not None and depth < 8 and self.arithmetic_of(binding.value, root, binding, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
            return self.arithmetic_of(expr.operand, root, at, depth)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITHMETIC):
            return self.arithmetic_of(expr.left, root, at, depth) and self.arithmetic_of(expr.right, root, at, depth)
        return False

    def _name_roots(self, name: str, at: ast.stmt, depth: int) -> frozenset[str] | None:
        if unchanged_parameter(self.function, name):
            return frozenset({name})
        binding = reaching_assignment(self.function, name, at)
        if binding is None or depth >= 8:
            return None
        followed = self.roots(binding.value, binding, depth + 1)
        # (a local bound once to what is not elementwise, `y = jnp.fft.fft(x)`, is a value of its own)
        once = [node for node in walk_body(self.function) if isinstance(node, ast.Name) and node.id == name
                and not isinstance(node.ctx, ast.Load)]
        return followed if followed is not None else frozenset({name}) if len(once) == 1 else None

    def _union(self, operands: Sequence[ast.AST], at: ast.stmt, depth: int) -> frozenset[str] | None:
        found: frozenset[str] = frozenset()
        for operand in operands:
            roots = self.roots(operand, at, depth)
            if roots is None:
                return None
            found |= roots
        return found


# -- what a run saw: the shapes and dtypes of the traced names at a line ------------------------

@dataclass(frozen=True)
class SeenArray:
    """A tracer's abstract value as a run recorded it (``float32[9,9]``), or a Python number
    beside it (``float``: a scalar, its dtype JAX's weak one of the array it meets)."""

    dtype: str
    shape: tuple[int, ...]
    python: bool = False

    @property
    def floating(self) -> bool:
        return self.dtype.startswith(("float", "bfloat", "complex"))

    def keeps_dtype_of(self, array: SeenArray) -> bool:
        """Whether selecting this scalar into ``array`` keeps ``array``'s dtype."""
        if self.shape != ():
            return False
        if self.python:  # weak: an int keeps any number's dtype, a float any float's
            return array.dtype != "bool" and (self.dtype == "int" or array.floating)
        return self.dtype == array.dtype

    @staticmethod
    def parse(text: str) -> SeenArray | None:
        if text in ("int", "float"):
            return SeenArray(text, (), python=True)
        found = re.fullmatch(r"(\w+)\[([\d,]*)\]", text)
        if found is None:
            return None
        dimensions = found.group(2)
        return SeenArray(found.group(1), tuple(int(d) for d in dimensions.split(",")) if dimensions else ())


def _broadcast(shapes: Sequence[tuple[int, ...] | None]) -> tuple[int, ...] | None:
    """NumPy's broadcast of ``shapes`` (None: a shape is unknown, or they do not broadcast)."""
    if any(shape is None for shape in shapes):
        return None
    result: list[int] = []
    for shape in shapes:
        assert shape is not None
        padded = [1] * (len(shape) - len(result)) + result
        mine = [1] * (len(padded) - len(shape)) + list(shape)
        if any(a != b and 1 not in (a, b) for a, b in zip(padded, mine)):
            return None
        result = [max(a, b) for a, b in zip(padded, mine)]
    return tuple(result)


def seen_shape(expr: ast.AST, seen: Mapping[str, SeenArray], imports: ImportTable) -> tuple[int, ...] | None:
    """The shape of an elementwise expression whose every name a run saw holding an array
    (``r < radius``, ``~mask``, ``jnp.isnan(x) | (x > 0)``); numbers are scalars. None when
    any part is not such (a call of unknown shape, a name the run did not see traced)."""
    if isinstance(expr, ast.Name):
        array = seen.get(expr.id)
        return array.shape if array is not None else None
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int | float) and not isinstance(expr.value, bool):
        return ()
    if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
        return _broadcast([seen_shape(side, seen, imports) for side in (expr.left, *expr.comparators)])
    if isinstance(expr, ast.BinOp):
        return _broadcast([seen_shape(expr.left, seen, imports), seen_shape(expr.right, seen, imports)])
    if isinstance(expr, ast.UnaryOp):
        return seen_shape(expr.operand, seen, imports)
    if isinstance(expr, ast.Call) and not expr.keywords and expr.args:
        name = imports.resolve(expr.func)
        if name in PREDICATES or is_elementwise(name):
            return _broadcast([seen_shape(argument, seen, imports) for argument in expr.args])
    if isinstance(expr, ast.Call):
        return _reduced_shape(expr, seen, imports)
    if isinstance(expr, ast.Subscript):
        shape = seen_shape(expr.value, seen, imports) if isinstance(expr.value, ast.Name | ast.Subscript) else None
        return _indexed_shape(shape, expr.slice) if shape is not None else None
    return None


# Reductions over one axis, as a method (``x.any(axis=2)``) or a function (``jnp.any(x, axis=2)``).
REDUCTIONS = frozenset({"any", "all", "sum", "prod", "mean", "max", "min", "std", "var"})


def _reduced_shape(call: ast.Call, seen: Mapping[str, SeenArray], imports: ImportTable) -> tuple[int, ...] | None:
    """The shape of a reduction of an array of seen shape over a literal ``axis`` (or all of
    them), without ``keepdims``: that axis dropped."""
    name = imports.resolve(call.func) or ""
    if isinstance(call.func, ast.Attribute) and not name and call.func.attr in REDUCTIONS and not call.args:
        array: ast.expr = call.func.value
    elif name.removeprefix("jax.numpy.") in REDUCTIONS and name.startswith("jax.numpy.") and len(call.args) == 1:
        array = call.args[0]
    else:
        return None
    if any(keyword.arg != "axis" for keyword in call.keywords):
        return None
    shape = seen_shape(array, seen, imports)
    if shape is None:
        return None
    axis = next((keyword.value for keyword in call.keywords), None)
    if axis is None:
        return ()
    index = _literal_int(axis)
    if index is None or not -len(shape) <= index < len(shape):
        return None
    index %= len(shape)
    return (*shape[:index], *shape[index + 1:])


def made_array(expr: ast.AST, seen: Mapping[str, SeenArray], imports: ImportTable) -> SeenArray | None:
    """The array an expression makes, where its shape and dtype follow from what a run saw:
    ``jnp.ones(x.shape)`` or ``jnp.zeros((3, 4))`` (float32 unless ``dtype=`` says), ``jnp.ones_like(x)``,
    a comparison or a boolean reduction (``x.any(axis=2)``), or an array seen indexed."""
    if isinstance(expr, ast.Call):
        name = imports.resolve(expr.func) or ""
        if name in ("jax.numpy.ones", "jax.numpy.zeros", "jax.numpy.empty") and len(expr.args) == 1 \
                and all(keyword.arg == "dtype" for keyword in expr.keywords):
            dtype = next((imports.resolve(keyword.value) for keyword in expr.keywords), "jax.numpy.float32")
            shape = _literal_shape(expr.args[0], seen, imports)
            if shape is None or dtype is None or not dtype.startswith("jax.numpy."):
                return None
            return SeenArray(dtype.removeprefix("jax.numpy."), shape)
        if name in ("jax.numpy.ones_like", "jax.numpy.zeros_like", "jax.numpy.empty_like") \
                and len(expr.args) == 1 and not expr.keywords and isinstance(expr.args[0], ast.Name):
            return seen.get(expr.args[0].id)
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id in seen:
        shape = seen_shape(expr, seen, imports)
        return SeenArray(seen[expr.value.id].dtype, shape) if shape is not None else None
    tests = isinstance(expr, ast.Compare) or isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
        and expr.func.attr in ("any", "all")
    shape = seen_shape(expr, seen, imports) if tests else None
    return SeenArray("bool", shape) if shape is not None else None


def _literal_shape(expr: ast.AST, seen: Mapping[str, SeenArray], imports: ImportTable) -> tuple[int, ...] | None:
    """A shape written as a tuple of literal ints or read off an array of seen shape (``x.shape``)."""
    if isinstance(expr, ast.Attribute) and expr.attr == "shape":
        return seen_shape(expr.value, seen, imports)
    if isinstance(expr, ast.Tuple):
        sizes = [_literal_int(element) for element in expr.elts]
        return tuple(size for size in sizes if size is not None) if None not in sizes else None
    size = _literal_int(expr)
    return (size,) if size is not None else None


def _indexed_shape(shape: tuple[int, ...], index: ast.expr) -> tuple[int, ...] | None:
    """The shape of an array of ``shape`` indexed by literal ints and slices (``x[0]``,
    ``x[:, 1:3]``); None for any other index."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if len(parts) > len(shape):
        return None
    result: list[int] = []
    for size, part in zip(shape, parts):
        if isinstance(part, ast.Slice):
            bounds = [None if bound is None else _literal_int(bound) for bound in (part.lower, part.upper, part.step)]
            if any(bound is None and given is not None for bound, given in zip(bounds, (part.lower, part.upper,
                                                                                       part.step))) or bounds[2] == 0:
                return None
            result.append(len(range(size)[slice(*bounds)]))
        elif _literal_int(part) is None or not -size <= _literal_int(part) < size:  # type: ignore[operator]
            return None
    return (*result, *shape[len(parts):])


def _literal_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return -inner if inner is not None else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None
