"""Where a value goes in a function, and whether a tracer could go there too: what decides
whether a value the function was given as a Python or NumPy one (a host draw, a counter on
``self``) may be passed in traced instead without Python noticing."""

from __future__ import annotations

import ast
from typing import Callable, Sequence

from jitfix.analysis.catalogue import is_elementwise
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import ArrayEvidence, ValueAnalysis

# What a value may meet and stay what it was, a traced array among traced arrays.
_DERIVED = (ast.BinOp, ast.UnaryOp, ast.Compare)


# Whether a function of the module takes a traced value as its argument ``index`` of the
# call (following the parameter's uses there): how ``used_as_traced`` sees into the calls it
# meets (``self._time(i, n)``).
PassedOn = Callable[[ast.Call, int], bool]


def used_as_traced(function: ast.FunctionDef, starts: Sequence[ast.AST], integers: bool, imports: ImportTable,
                   values: ValueAnalysis, arrays: ArrayEvidence, passed_on: PassedOn | None = None) -> bool:
    """Whether every use of the value ``starts`` hold (a host draw, the reads of a state: through
    the names it is bound to, and what is made of it until a traced value joins it -- then it
    was a tracer before too) takes a traced array as well as the Python or NumPy value it was:
    an operand of arithmetic, an argument of a JAX function (or of a function of the module
    that ``passed_on`` follows it into), an index of ``integers`` into a traced array,
    returned. Not a boolean mask (it selects as many elements as it holds), a size, a test, a
    host call, an index into a Python or NumPy value (which a tracer cannot index)."""
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    # (a node holding the value, whether it is still the integers: an index of those gathers)
    pending: list[tuple[ast.AST, bool]] = [(start, integers) for start in starts]
    followed: set[str] = set()
    while pending:
        node, indices = pending.pop()
        parent = parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            if not indices or not values.is_traced(parent.value) or not arrays.certain(parent.value, calls=False):
                return False  # a mask selects as many elements as it holds; floats index nothing; a list
                # is indexed with Python ints alone
            continue  # gathered from a traced array: a tracer in the original too
        if isinstance(parent, ast.BinOp | ast.Compare) and any(
                part is not node and values.is_traced(part) for part in ast.iter_child_nodes(parent)
                if isinstance(part, ast.expr)):
            continue  # joined by a traced value: a tracer in the original too
        if isinstance(parent, _DERIVED) and not (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            pending.append((parent, False))
        elif isinstance(parent, ast.Subscript) and parent.value is node:
            pending.append((parent, indices))  # `noise[0]`
        elif isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _ARRAY_METHODS:
            above = parents.get(id(parent))
            if not (isinstance(above, ast.Call) and above.func is parent):
                return False
            pending.append((above, False))  # `noise.sum()`
        elif isinstance(parent, ast.Call) and node is not parent.func and node in parent.args \
                and _takes_tracers(imports.resolve(parent.func)):
            pending.append((parent, False))  # `jnp.tanh(noise)`, `jnp.where(p < 0.5, ...)`: an array
        elif isinstance(parent, ast.Call) and node in parent.args and passed_on is not None \
                and passed_on(parent, parent.args.index(node)):
            if not values.is_traced(parent):  # (what it returns may be made of the value: followed too)
                pending.append((parent, False))
        elif isinstance(parent, ast.Return):
            continue
        elif isinstance(parent, ast.Tuple):
            pending.append((parent, indices))
        elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
            if name in followed:
                continue
            followed.add(name)
            pending += [(read, indices) for read in ast.walk(function) if isinstance(read, ast.Name)
                        and read.id == name and isinstance(read.ctx, ast.Load)]
        else:
            return False
    return True


# JAX functions every positional argument of which may be a tracer.
_TAKING_TRACERS = frozenset({"jax.numpy.where", "jax.numpy.sum", "jax.numpy.mean", "jax.numpy.dot", "jax.numpy.matmul",
                             "jax.numpy.asarray", "jax.numpy.array", "jax.random.PRNGKey", "jax.random.key",
                             "jax.random.fold_in", "jax.numpy.outer", "jax.numpy.inner", "jax.numpy.vdot"})


def _takes_tracers(name: str | None) -> bool:
    """Whether a JAX function takes a tracer in each positional argument: an elementwise one,
    or one of a few (not `jnp.repeat`'s repeats, `jnp.triu`'s `k`, a shape)."""
    return is_elementwise(name) or name in _TAKING_TRACERS


_ARRAY_METHODS = frozenset({"sum", "mean", "std", "var", "max", "min", "prod", "reshape", "astype", "ravel", "T",
                            "transpose", "clip", "round", "cumsum", "squeeze"})
