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
        "jax.tree_util.tree_structure",
        "jax.dtypes.issubdtype",
        "jax.dtypes.result_type",
    }
)

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
            return expr.attr not in STATIC_ATTRIBUTES and self.is_traced(expr.value)
        if isinstance(expr, ast.Subscript):
            return self.is_traced(expr.value) or self.is_traced(expr.slice)
        if isinstance(expr, ast.Call):
            name = self._call_name(expr)
            if name in STATIC_CALLS:
                return False
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


def _assigned_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in _assigned_names(element)]
    if isinstance(target, ast.Starred):
        return _assigned_names(target.value)
    return []


def _local_bindings(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[list[str], ast.AST | None]]:
    """(names, value) for each binding in the function body, outside nested functions.

    value is None where the bound value is not a plain expression (loop targets over a
    traced iterable are given the iterable, which is the right answer for tracedness).
    """
    bindings: list[tuple[list[str], ast.AST | None]] = []
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bindings.append((_assigned_names(target), node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            bindings.append((_assigned_names(node.target), node.value))
        elif isinstance(node, ast.AugAssign):
            names = _assigned_names(node.target)
            bindings.append((names, ast.BinOp(left=node.target, op=node.op, right=node.value)))
        elif isinstance(node, ast.For | ast.AsyncFor):
            bindings.append((_assigned_names(node.target), node.iter))
        elif isinstance(node, ast.NamedExpr):
            bindings.append((_assigned_names(node.target), node.value))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    bindings.append((_assigned_names(item.optional_vars), None))
        stack.extend(ast.iter_child_nodes(node))
    return bindings


def analyse_function(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    imports: ImportTable,
    traced_params: frozenset[str],
    static_params: frozenset[str],
) -> ValueAnalysis:
    """Flow-insensitive classification of the function's local names.

    A name is traced if any binding of it is traced; static if every binding is static.
    """
    bindings = _local_bindings(function)
    traced = set(traced_params)
    analysis = ValueAnalysis(imports, traced, set())
    changed = True
    while changed:
        changed = False
        for names, value in bindings:
            if value is not None and analysis.is_traced(value):
                for name in names:
                    if name not in traced:
                        traced.add(name)
                        changed = True
    bound_locally: dict[str, list[ast.AST | None]] = {name: [] for name in static_params}
    for names, value in bindings:
        for name in names:
            bound_locally.setdefault(name, []).append(value)
    # Candidates: static parameters and locals (other parameters are traced or unknown).
    params = set(parameter_names(function))
    candidates = {
        name for name in bound_locally if name not in traced and (name not in params or name in static_params)
    }
    static = analysis.static_names
    changed = True
    while changed:
        changed = False
        for name in candidates - static:
            if all(value is not None and _is_static_binding(analysis, value) for value in bound_locally[name]):
                static.add(name)
                changed = True
    return analysis


def _is_static_binding(analysis: ValueAnalysis, value: ast.AST) -> bool:
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in {"range", "enumerate"}:
        return all(analysis.is_static(arg) for arg in value.args)  # loop index over a static range
    return analysis.is_static(value)
