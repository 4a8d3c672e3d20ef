"""The indices of a mask's true elements, read only at their first positions.

``jnp.where(m)[0][0]`` (the first index where ``m`` holds), ``idx = jnp.nonzero(m)[0]`` then
``idx[0]``, ``i, j = jnp.where(m)`` then ``(i[0], j[0])``, ``jnp.flatnonzero(m)[k]``,
``jnp.argwhere(m)[k]``: the result is as long as the data says, which jit cannot trace, but the
code reads only its positions up to ``k``. ``size=k + 1`` keeps just those (JAX's own advice,
jax#9578): the same indices wherever the original has them. With fewer true elements the
result is padded with ``fill_value`` (0): for the first position that is where the original
raised (an index into an empty array); past it, the original reads the last true element (JAX
clamps an index past the end) and the rewrite the padding -- so only ``[0]`` is a safe fix.
A position the code computes (``[n]``) needs every index: ``size=`` the mask's size, unsafe
for the same reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Mapping

from jitfix.analysis.masks import ElementwiseOrigin
from jitfix.analysis.values import parameter_names
from jitfix.cst_text import cst, with_keywords
from jitfix.findings import Edit, EditContext, Fix, Safety
from jitfix.rules.base import ModuleContext

# The functions whose result holds the indices of a mask's true elements: a tuple of one index
# array per axis, or one array (flat indices; one row of indices per element).
_PER_AXIS = frozenset({"jax.numpy.nonzero", "jax.numpy.where"})
_ONE_ARRAY = frozenset({"jax.numpy.flatnonzero", "jax.numpy.argwhere"})


@dataclass(frozen=True)
class LeadingIndices:
    """A call of ``jnp.nonzero``/one-argument ``jnp.where``/``flatnonzero``/``argwhere``
    whose result is read only by position: the literal positions read, and whether some
    position is computed."""

    call: ast.Call
    positions: frozenset[int]
    computed: bool  # some read is at a position the code computes (`[n]`)

    def fix(self, module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> Fix | None:
        """``size=k + 1`` for literal positions up to ``k``; ``size=`` the mask's size where a
        position is computed (None when that size cannot be spelled at the call)."""
        if self.computed:
            bound = _mask_size(self.call.args[0], module, function)
            if bound is None:
                return None
            how = (f"pad to `size={bound}`, every index there can be (unsafe: where the code reads a position past "
                   "the true elements, the original reads the last of them, as JAX clamps an index past the end, "
                   "and this reads the padding, 0)")
            return Fix(Safety.UNSAFE, how, [self._edit(module, bound)])
        last = max(self.positions)
        if last == 0:
            how = ("keep the first index only, `size=1` (with no true element the original raised: an index into an "
                   "empty array; this reads the padding, 0)")
            return Fix(Safety.SAFE, how, [self._edit(module, "1")])
        how = (f"keep the first {last + 1} indices, `size={last + 1}` (unsafe: with fewer true elements the original "
               "reads the last of them at a position past the end, as JAX clamps it, and this reads the padding, 0)")
        return Fix(Safety.UNSAFE, how, [self._edit(module, str(last + 1))])

    def _edit(self, module: ModuleContext, size: str) -> Edit:
        def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            assert isinstance(updated, cst.Call)
            return with_keywords(updated, [("size", cst.parse_expression(size))])

        return Edit(module.start_of(self.call), cst.Call, replace)


def leading_indices(call: ast.Call, name: str | None, parents: Mapping[int, ast.AST],
                    function: ast.FunctionDef | ast.AsyncFunctionDef,
                    is_traced: Callable[[ast.expr], bool]) -> LeadingIndices | None:
    """The reads of ``call``'s result (``name`` is what it calls), where every one is by
    position: ``jnp.where(m)[0][k]``, a name bound once to one axis's indices or to the call
    and read only as ``idx[k]``, or the names of ``i, j = jnp.where(m)`` read so; a computed
    position is a traced integer (``is_traced``). None where the code may catch the error the
    original raises (``try: ... except IndexError``): the padding would be read instead."""
    if name not in _PER_AXIS | _ONE_ARRAY or len(call.args) != 1 or call.keywords \
            or isinstance(call.args[0], ast.Starred) or _in_try(call, parents, function):
        return None
    reads = _Reads(parents, function, is_traced)
    if name in _ONE_ARRAY:
        found = reads.of_array(call)
    else:
        found = reads.of_axes(call)
    if not found or reads.other:
        return None
    literal = frozenset(position for position in found if position is not None)
    return LeadingIndices(call, literal or frozenset({0}), computed=None in found)


class _Reads:
    """The positions an index array is read at: an int, or None for one the code computes.
    ``other`` is set when some read is not by position (the padding would show there)."""

    def __init__(self, parents: Mapping[int, ast.AST], function: ast.FunctionDef | ast.AsyncFunctionDef,
                 is_traced: Callable[[ast.expr], bool]):
        self.parents = parents
        self.function = function
        self.is_traced = is_traced
        self.other = False

    def of_axes(self, call: ast.Call) -> list[int | None]:
        """``jnp.where(m)[a]`` read by position; ``i, j = jnp.where(m)``: each name so."""
        parent = self.parents.get(id(call))
        if isinstance(parent, ast.Subscript) and parent.value is call and _literal_position(parent.slice) is not None:
            return self.of_array(parent)
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Tuple) \
                and all(isinstance(target, ast.Name) for target in parent.targets[0].elts):
            return [position for target in parent.targets[0].elts
                    for position in self._of_name(target.id)]  # type: ignore[attr-defined]
        self.other = True
        return []

    def of_array(self, array: ast.expr) -> list[int | None]:
        """``array[k]`` read at once, or a name bound once to ``array`` and read only so."""
        parent = self.parents.get(id(array))
        if isinstance(parent, ast.Subscript) and parent.value is array and isinstance(parent.ctx, ast.Load) \
                and not _in_try(parent, self.parents, self.function):
            return [_position(parent.slice, self)]
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            return self._of_name(parent.targets[0].id)
        self.other = True
        return []

    def _of_name(self, name: str) -> list[int | None]:
        stores = [node for node in ast.walk(self.function) if isinstance(node, ast.Name) and node.id == name
                  and not isinstance(node.ctx, ast.Load)]
        nested = any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) and node is not self.function
                     and any(isinstance(inner, ast.Name) and inner.id == name for inner in ast.walk(node))
                     for node in ast.walk(self.function))
        if len(stores) != 1 or nested or name in parameter_names(self.function):
            self.other = True  # (bound again, or read where its reads are not followed)
            return []
        found: list[int | None] = []
        for node in ast.walk(self.function):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                parent = self.parents.get(id(node))
                if not (isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load)) \
                        or _in_try(parent, self.parents, self.function):
                    self.other = True
                    return []
                found.append(_position(parent.slice, self))
        return found


def _position(index: ast.expr, reads: _Reads) -> int | None:
    """The position a read takes: a literal int, None for a computed one (a traced integer);
    a slice, a tuple, a negative position or a Python value the code computes (it may be a
    slice) is not one."""
    literal = _literal_position(index)
    if literal is not None:
        return literal
    if not isinstance(index, ast.Slice | ast.Tuple | ast.Constant) and reads.is_traced(index):
        return None
    reads.other = True
    return None


def _in_try(node: ast.AST, parents: Mapping[int, ast.AST], function: ast.AST) -> bool:
    """Whether ``node`` is in the body of a ``try`` with handlers (which may catch the
    IndexError of an index into an empty array)."""
    child: ast.AST = node
    parent = parents.get(id(node))
    while parent is not None and parent is not function:
        if isinstance(parent, ast.Try | ast.TryStar) and parent.handlers and any(child is s for s in parent.body):
            return True
        child, parent = parent, parents.get(id(parent))
    return False


def _literal_position(index: ast.expr) -> int | None:
    if isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0:
        return index.value
    return None


def _mask_size(mask: ast.expr, module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """How to spell the number of elements of ``mask`` at its call: ``m.size`` for a name, or
    ``x.size`` for an elementwise test of one name ``x`` with Python numbers (``arr == arr``,
    ``x > 0``: ``x``'s shape), ``x`` bound once in the function (a parameter never rebound)."""
    if isinstance(mask, ast.Name):
        return f"{mask.id}.size"
    statement = next((node for node in ast.walk(function) if isinstance(node, ast.stmt) and node is not function
                      and any(inner is mask for inner in ast.walk(node))), None)
    if statement is None or ElementwiseOrigin(function, module.imports).roots(mask, statement) is None:
        return None
    names = {node.id for node in ast.walk(mask) if isinstance(node, ast.Name) and module.imports.resolve(node) is None}
    if len(names) != 1:
        return None
    (name,) = names
    stores = sum(1 for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name
                 and not isinstance(node.ctx, ast.Load))
    bound_once = stores == 0 if name in parameter_names(function) else stores == 1
    return f"{name}.size" if bound_once else None
