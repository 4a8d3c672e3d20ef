"""Arrays built with jnp from Python values, where a concrete value is needed: built with NumPy.

``npad = jnp.zeros((ndim, 2), dtype=jnp.int32)`` then ``npad = npad.at[axis, 1].set(size)``,
passed as ``jnp.pad``'s ``pad_width``: every input is a Python value, but jnp stages what it
computes under jit, so the widths are a tracer where a concrete value is needed. NumPy builds
the same array at trace time: ``np.zeros((ndim, 2), dtype=np.int32)`` and ``npad[axis, 1] =
size`` (a NumPy array is updated in place, which is the same here because nothing else holds
it). Only integer and boolean arrays (a float array of NumPy's would be float64 where jnp's is
float32), and only where every read of the name is an argument of a call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jitfix.analysis.blocks import nodes_of, parents_in
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext, Fix, Safety
from jitfix.rules.base import ModuleContext
from jitfix.rules.function_context import FunctionContext

# jnp functions that build an array from Python values, each with a NumPy twin of its name.
_BUILDERS = frozenset({"zeros", "ones", "full", "array", "asarray", "arange", "eye", "identity"})
_EXACT_DTYPES = frozenset({"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
_IN_PLACE = {"set": "=", "add": "+=", "multiply": "*="}


@dataclass(frozen=True)
class NumpyBuilt:
    fix: Fix


def built_with_numpy(module: ModuleContext, entry: FunctionContext, expr: ast.AST,
                     statement: ast.stmt) -> NumpyBuilt | str | None:
    """The fix that builds ``expr``, a name, with NumPy: where every binding of it is a
    statement of the function's straight-line body before ``statement`` -- first a jnp
    builder of an integer or boolean dtype on values not traced, then ``.at[i].set(v)`` (or
    ``.add``, ``.multiply``) of it on such values -- and every other read of it is an argument
    of a call. Why not, where it is so built but of a float dtype or read otherwise; None
    where it is not so built."""
    if not isinstance(expr, ast.Name):
        return None
    function = entry.traced.node
    name = expr.id
    body = function.body
    bindings = [line for line in body if isinstance(line, ast.Assign) and len(line.targets) == 1
                and isinstance(line.targets[0], ast.Name) and line.targets[0].id == name]
    stores = [node for node in nodes_of(function) if isinstance(node, ast.Name) and node.id == name
              and not isinstance(node.ctx, ast.Load)]
    if not bindings or len(stores) != len(bindings) or not all(line.lineno < statement.lineno for line in bindings):
        return None
    first, *updates = bindings
    builder = _builder(module, first.value)
    if builder is None or _reads_traced(entry, first, builder.args, builder.keywords):
        return None
    update_calls = []
    for line in updates:
        update = _update_of(line.value, name)
        if update is None or _reads_traced(entry, line, [update.slice, update.value], []):
            return None
        update_calls.append((line, update))
    if not _exact_dtype(module, builder):
        return (f"it is built with jnp from Python values, but not of an integer or boolean dtype "
                f"given to `{module.segment(builder.func)}` (NumPy's floats are float64 where jnp's are "
                "float32): build it with NumPy, of the dtype it needs")
    misread = _read_otherwise(function, name, {id(update.array) for _, update in update_calls})
    if misread is not None:
        return (f"it is built with jnp from Python values, but `{name}` is also read where a NumPy array "
                f"would not do as the jnp one does (line {misread.lineno}): build it with NumPy there by hand")
    edits = [_numpy_builder_edit(module, builder), *(_in_place_edit(module, line, update, name)
                                                     for line, update in update_calls)]
    return NumpyBuilt(Fix(Safety.SAFE, "build it with NumPy", edits))


def _builder(module: ModuleContext, value: ast.expr) -> ast.Call | None:
    """``jnp.zeros(shape, dtype=jnp.int32)``: a jnp builder, its arguments plain."""
    if not isinstance(value, ast.Call):
        return None
    resolved = module.imports.resolve(value.func) or ""
    if not (resolved.startswith("jax.numpy.") and resolved.removeprefix("jax.numpy.") in _BUILDERS):
        return None
    if any(keyword.arg is None for keyword in value.keywords) \
            or any(isinstance(argument, ast.Starred) for argument in value.args):
        return None
    return value


def _exact_dtype(module: ModuleContext, builder: ast.Call) -> bool:
    """Whether the builder is given an integer or boolean dtype (``dtype=jnp.int32``, ``int``):
    NumPy then builds what jnp does."""
    dtype = next((keyword.value for keyword in builder.keywords if keyword.arg == "dtype"), None)
    if dtype is None:
        return False
    if isinstance(dtype, ast.Name) and dtype.id in ("int", "bool"):
        return True
    spelled = module.imports.resolve(dtype) or ""
    return spelled.startswith(("jax.numpy.", "numpy.")) and spelled.rsplit(".", 1)[-1] in _EXACT_DTYPES


@dataclass(frozen=True)
class _Update:
    array: ast.Name  # the `n` of `n.at[...]`
    slice: ast.expr
    operation: str
    value: ast.expr


def _update_of(value: ast.expr, name: str) -> _Update | None:
    """``n.at[i].set(v)`` (``add``, ``multiply``) of ``name``."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _IN_PLACE
            and len(value.args) == 1 and not value.keywords and isinstance(value.func.value, ast.Subscript)):
        return None
    at = value.func.value.value
    if not (isinstance(at, ast.Attribute) and at.attr == "at" and isinstance(at.value, ast.Name)
            and at.value.id == name):
        return None
    return _Update(at.value, value.func.value.slice, value.func.attr, value.args[0])


def _reads_traced(entry: FunctionContext, at: ast.stmt, arguments: list[ast.expr],
                  keywords: list[ast.keyword]) -> bool:
    values = entry.values_at(at)
    return any(values.is_traced(part) for part in [*arguments, *(keyword.value for keyword in keywords)])


def _read_otherwise(function: ast.AST, name: str, updated: set[int]) -> ast.Name | None:
    """A read of ``name`` (but the updated ones) that is not an argument of a call, where a
    NumPy array would not do what the jnp one did (``.at``, returned, aliased and updated in
    place); None when every read is such an argument."""
    parents = parents_in(function)
    for node in nodes_of(function):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)) \
                or id(node) in updated:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.keyword):
            parent = parents.get(id(parent))
        if not (isinstance(parent, ast.Call) and parent.func is not node):
            return node
    return None


def _numpy_builder_edit(module: ModuleContext, builder: ast.Call) -> Edit:
    start, end = module.span_of(builder)
    function = builder.func
    assert isinstance(function, ast.Attribute)
    dtype = next(keyword.value for keyword in builder.keywords if keyword.arg == "dtype")
    dtype_text = module.segment(dtype)
    dtype_name = (module.imports.resolve(dtype) or "").rsplit(".", 1)[-1]

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        numpy = context.name("numpy")
        new_dtype = dtype_text if isinstance(dtype, ast.Name) else f"{numpy}.{dtype_name}"
        arguments = [argument.with_changes(value=cst.parse_expression(new_dtype))
                     if argument.keyword is not None and argument.keyword.value == "dtype" else argument
                     for argument in updated.args]
        return updated.with_changes(func=cst.parse_expression(f"{numpy}.{function.attr}"), args=arguments)

    return Edit(start, cst.Call, replace, imports=("numpy",), end=end)


def _in_place_edit(module: ModuleContext, line: ast.Assign, update: _Update, name: str) -> Edit:
    index = module.segment(update.slice)
    value = module.segment(update.value)
    operator = _IN_PLACE[update.operation]

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        statement = cst.parse_statement(f"{name}[{index}] {operator} {value}\n")
        assert isinstance(statement, cst.SimpleStatementLine)
        return statement.body[0]

    return Edit(module.start_of(line), cst.Assign, replace)
