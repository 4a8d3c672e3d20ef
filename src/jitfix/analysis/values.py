"""Is an expression a tracer inside a traced function, or a plain Python value?

The answer is deliberately conservative in both directions that matter:

* ``is_traced`` is True only when the value is certainly a tracer (computed from a traced
  parameter, or produced by a ``jax.numpy``/``lax`` operation, which is staged under jit).
* ``is_static`` is True only when the value is certainly a Python value known at trace
  time (a literal, ``x.shape``, ``len(x)``, a static argument, ...).

Anything else is unknown, and a rule that needs to be sure leaves such code alone.
"""

from __future__ import annotations

import ast

from jitfix.analysis.imports import ImportTable

# Attributes of an array that are Python values at trace time.
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "itemsize", "nbytes", "weak_type", "sharding"})

# Builtins and jax/numpy helpers whose result is a Python value even for a traced argument.
STATIC_CALLS = frozenset(
    {
        "len",
        "isinstance",
        "issubclass",
        "type",
        "callable",
        "hasattr",
        "id",
        "jax.numpy.shape",
        "jax.numpy.ndim",
        "jax.numpy.size",
        "jax.numpy.result_type",
        "jax.numpy.dtype",
        "jax.numpy.issubdtype",
        "jax.numpy.iinfo",
        "jax.numpy.finfo",
        "jax.numpy.promote_types",
        "numpy.shape",
        "numpy.ndim",
        "numpy.size",
        "numpy.dtype",
        "numpy.issubdtype",
        "jax.numpy.iscomplexobj",
        "jax.numpy.isrealobj",
        "jax.numpy.isscalar",
        "jax.numpy.issubsctype",
        "jax.lax.axis_size",
        "jax.tree_util.tree_structure",
        "jax.tree.structure",
        "jax.tree_util.treedef_is_leaf",
        "jax.core.is_constant_dim",
        "jax.dtypes.issubdtype",
        "jax.dtypes.result_type",
    }
)

# Transforms whose result, called, is a Python description of the function, not tracers.
STATIC_RESULT_TRANSFORMS = frozenset({"jax.make_jaxpr", "jax.eval_shape"})

STATIC_BUILTINS = frozenset(name for name in STATIC_CALLS if "." not in name)

# Modules whose functions stage operations under jit, so their results are tracers.
STAGING_MODULES = ("jax.numpy", "jax.lax", "jax.random", "jax.nn", "jax.scipy")


def _is_staging_call(name: str | None) -> bool:
    return name is not None and name not in STATIC_CALLS and name.startswith(STAGING_MODULES)


class ValueAnalysis:
    """Traced/static classification of expressions for one function."""

    def __init__(self, imports: ImportTable, traced_names: set[str], static_names: set[str]):
        self.imports = imports
        self.traced_names = traced_names
        self.static_names = static_names

    def _call_name(self, call: ast.Call) -> str | None:
        if isinstance(call.func, ast.Name) and call.func.id in STATIC_BUILTINS:
            return call.func.id
        return self.imports.resolve(call.func)

    def is_traced(self, expr: ast.AST) -> bool:
        """True when expr is certainly a tracer under jit."""
        if isinstance(expr, ast.Name):
            return expr.id in self.traced_names
        if isinstance(expr, ast.Constant | ast.Lambda | ast.JoinedStr):
            return False
        if isinstance(expr, ast.Attribute):
            if isinstance(expr.value, ast.Name) and expr.value.id in {"self", "cls"}:
                return False  # a module's field may be static config (eqx.field(static=True))
            return expr.attr not in STATIC_ATTRIBUTES and self.is_traced(expr.value)
        if isinstance(expr, ast.Subscript):
            return self.is_traced(expr.value) or self.is_traced(expr.slice)
        if isinstance(expr, ast.Call):
            name = self._call_name(expr)
            if name in STATIC_CALLS:
                return False
            if isinstance(expr.func, ast.Call) and self._call_name(expr.func) in STATIC_RESULT_TRANSFORMS:
                return False  # jax.make_jaxpr(f)(x) is a jaxpr, jax.eval_shape(f)(x) shapes
            if _is_staging_call(name):
                return True
            if isinstance(expr.func, ast.Attribute) and self.is_traced(expr.func.value):
                return True  # a method of a traced array: x.sum(), x.astype(...)
            return any(self.is_traced(arg) for arg in expr.args) or any(
                self.is_traced(keyword.value) for keyword in expr.keywords
            )
        if isinstance(expr, ast.Compare):
            if all(isinstance(op, ast.Is | ast.IsNot) for op in expr.ops):
                return False
            if any(isinstance(op, ast.In | ast.NotIn) for op in expr.ops):
                return False  # membership in a Python container is a Python bool
            return any(self.is_traced(part) for part in (expr.left, *expr.comparators))
        if isinstance(expr, ast.BinOp):
            return self.is_traced(expr.left) or self.is_traced(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self.is_traced(expr.operand)
        if isinstance(expr, ast.BoolOp):
            return any(self.is_traced(value) for value in expr.values)
        if isinstance(expr, ast.IfExp):
            return self.is_traced(expr.body) or self.is_traced(expr.orelse)
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):
            return any(self.is_traced(element) for element in expr.elts)
        if isinstance(expr, ast.Starred):
            return self.is_traced(expr.value)
        if isinstance(expr, ast.NamedExpr):
            return self.is_traced(expr.value)
        return False

    def is_static(self, expr: ast.AST) -> bool:
        """True when expr is certainly a Python value known at trace time."""
        if isinstance(expr, ast.Constant):
            return True
        if isinstance(expr, ast.Name):
            return expr.id in self.static_names
        if isinstance(expr, ast.Attribute):
            return expr.attr in STATIC_ATTRIBUTES or self.is_static(expr.value)
        if isinstance(expr, ast.Subscript):
            return self.is_static(expr.value) and self.is_static(expr.slice)
        if isinstance(expr, ast.Call):
            return self._call_name(expr) in STATIC_CALLS
        if isinstance(expr, ast.Compare):
            if all(isinstance(op, ast.Is | ast.IsNot) for op in expr.ops):
                return True
            return all(self.is_static(part) for part in (expr.left, *expr.comparators))
        if isinstance(expr, ast.BinOp):
            return self.is_static(expr.left) and self.is_static(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self.is_static(expr.operand)
        if isinstance(expr, ast.BoolOp):
            return all(self.is_static(value) for value in expr.values)
        if isinstance(expr, ast.Tuple | ast.List | ast.Set):
            return all(self.is_static(element) for element in expr.elts)
        if isinstance(expr, ast.JoinedStr):
            return all(self.is_static(value) for value in expr.values)
        if isinstance(expr, ast.FormattedValue):
            return self.is_static(expr.value)
        return False


def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [arg.arg for arg in (*arguments.posonlyargs, *arguments.args)]
    if arguments.vararg:
        names.append(arguments.vararg.arg)
    names.extend(arg.arg for arg in arguments.kwonlyargs)
    if arguments.kwarg:
        names.append(arguments.kwarg.arg)
    return names


# Attributes only arrays have (not lists, tuples or dicts).
ARRAY_ONLY_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "T", "at", "astype", "reshape", "sum", "mean",
                                   "max", "min", "any", "all", "squeeze", "transpose", "ravel", "flatten"})


class ArrayEvidence:
    """Whether a traced expression is certainly an array rather than a container of arrays.

    Python takes the truth of a tuple or dict from its length, which is static even when it
    holds tracers; only the truth of an array needs ``lax.cond``. A parameter may be either
    (a pytree of arrays is a common argument), so its bare truth is left alone.
    """

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef):
        self.function = function
        self.params = set(parameter_names(function))
        self._bindings: dict[str, list[ast.AST | None]] | None = None
        self._array_params: set[str] | None = None

    @property
    def bindings(self) -> dict[str, list[ast.AST | None]]:
        """Every value each local name is bound to (None where not a plain expression),
        collected the first time a name's evidence is needed."""
        if self._bindings is None:
            self._bindings = {}
            self._collect()
        return self._bindings

    @property
    def array_params(self) -> set[str]:
        """Parameters the body treats as arrays (``xs.shape``, ``xs.astype(...)``): a list
        or dict has none of these."""
        if self._array_params is None:
            self._array_params = {
                node.value.id for node in ast.walk(self.function)
                if isinstance(node, ast.Attribute) and node.attr in ARRAY_ONLY_ATTRIBUTES
                and isinstance(node.value, ast.Name) and node.value.id in self.params
            }
        return self._array_params

    def _collect(self) -> None:
        for node in ast.walk(self.function):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._record(target, node.value)
            elif isinstance(node, ast.AugAssign):
                self._record(node.target, ast.BinOp(left=node.target, op=node.op, right=node.value))
            elif isinstance(node, ast.AnnAssign | ast.For | ast.NamedExpr | ast.withitem):
                target = getattr(node, "target", None) or getattr(node, "optional_vars", None)
                value = getattr(node, "value", None) if not isinstance(node, ast.For) else None
                if target is not None:
                    self._record(target, value)

    def _record(self, target: ast.AST, value: ast.AST | None) -> None:
        assert self._bindings is not None
        if isinstance(target, ast.Name):
            self._bindings.setdefault(target.id, []).append(value)
        else:  # tuple targets bind their names; `x[i] = v` and `x.a = v` rebind nothing
            for node in ast.walk(target):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    self._bindings.setdefault(node.id, []).append(None)

    def certain(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(expr, ast.Compare | ast.BinOp | ast.Call | ast.Constant):
            return True
        if isinstance(expr, ast.UnaryOp):
            return self.certain(expr.operand, seen)
        if isinstance(expr, ast.BoolOp):
            return all(self.certain(value, seen) for value in expr.values)
        if isinstance(expr, ast.IfExp):
            return self.certain(expr.body, seen) and self.certain(expr.orelse, seen)
        if isinstance(expr, ast.Subscript):
            return self.certain(expr.value, seen)
        if isinstance(expr, ast.NamedExpr):
            return self.certain(expr.value, seen)
        if isinstance(expr, ast.Name):
            if expr.id in self.params:
                return expr.id in self.array_params
            if expr.id in seen or expr.id not in self.bindings:
                return False
            return all(value is not None and self.certain(value, seen | {expr.id})
                       for value in self.bindings[expr.id])
        return False

    def certain_truth(self, test: ast.AST, values: ValueAnalysis) -> bool:
        """Whether every traced value whose truth ``test`` takes is certainly an array
        (static operands of and/or/not are fine: Python takes their truth itself)."""
        if isinstance(test, ast.BoolOp):
            return all(self.certain_truth(value, values) for value in test.values if values.is_traced(value))
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.certain_truth(test.operand, values)
        return self.certain(test)


# Constructors whose size a literal argument gives: jnp.zeros((2, 3)) has 6 elements.
SHAPED_CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "full"})
REDUCTIONS = frozenset({"sum", "any", "all", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin"})


def _literal_size(shape: ast.AST) -> int | None:
    if isinstance(shape, ast.Constant) and isinstance(shape.value, int) and not isinstance(shape.value, bool):
        return shape.value
    if isinstance(shape, ast.Tuple | ast.List):
        size = 1
        for element in shape.elts:
            dimension = _literal_size(element)
            if dimension is None:
                return None
            size *= dimension
        return size
    return None


class SizeEvidence:
    """How many elements an array certainly has, where the code spells it out
    (``jnp.zeros(3)``, ``jnp.array([a, b])``); None when unknown."""

    def __init__(self, arrays: ArrayEvidence, imports: ImportTable):
        self.arrays = arrays
        self.imports = imports

    def size(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> int | None:
        if isinstance(expr, ast.Call):
            return self._call_size(expr)
        if isinstance(expr, ast.BinOp):
            return _broadcast(self.size(expr.left, seen), self.size(expr.right, seen))
        if isinstance(expr, ast.Compare):
            sizes = [self.size(part, seen) for part in (expr.left, *expr.comparators)]
            result = sizes[0]
            for size in sizes[1:]:
                result = _broadcast(result, size)
            return result
        if isinstance(expr, ast.UnaryOp):
            return self.size(expr.operand, seen)
        if isinstance(expr, ast.Constant):
            return 1
        if isinstance(expr, ast.Name) and expr.id not in seen and expr.id not in self.arrays.params:
            values = self.arrays.bindings.get(expr.id, [])
            sizes = {self.size(value, seen | {expr.id}) if value is not None else None for value in values}
            return sizes.pop() if len(sizes) == 1 else None
        return None

    def _call_size(self, call: ast.Call) -> int | None:
        name = self.imports.resolve(call.func) or ""
        function = name.rpartition(".")[2] if name.startswith("jax.numpy.") else None
        if isinstance(call.func, ast.Attribute) and call.func.attr in REDUCTIONS and function is None:
            return 1 if not call.args and not call.keywords else None  # x.sum(): one element
        if function in REDUCTIONS:
            return 1 if len(call.args) == 1 and not call.keywords else None
        if function in SHAPED_CONSTRUCTORS and call.args:
            return _literal_size(call.args[0])
        if function == "arange" and len(call.args) == 1:
            return _literal_size(call.args[0])
        if function in {"array", "asarray"} and call.args and isinstance(call.args[0], ast.List | ast.Tuple):
            if not any(isinstance(element, ast.List | ast.Tuple | ast.Starred) for element in call.args[0].elts):
                return len(call.args[0].elts)
        return None


def _broadcast(first: int | None, second: int | None) -> int | None:
    if first is None or second is None:
        return None if (first or 0) <= 1 and (second or 0) <= 1 else max(first or 0, second or 0)
    return max(first, second)
