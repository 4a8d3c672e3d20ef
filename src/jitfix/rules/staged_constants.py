"""Values traced only because jnp staged arithmetic on Python values, written in Python.

``n_actual = jnp.minimum(n, x.shape[0])`` or ``depth = jnp.log2(n) + 1`` of Python numbers is
a tracer under jit, though nothing in it depends on a traced input: where a Python value is
needed (a shape, ``range``, a test's truth) it is written in Python (``min``, ``math.log2``).
Shared by the size places of JF501 and the checks of JF101/JF105.
"""

from __future__ import annotations

import ast

from jitfix.analysis.blocks import nodes_of, parents_in, reaching_assignment, walk_body
from jitfix.analysis.python_arithmetic import TO_INT, PythonSpelling, python_spelling
from jitfix.analysis.values import STATIC_KIND, UNKNOWN_KIND, Verdict
from jitfix.findings import Fix, Safety
from jitfix.rules.arrays import PYTHON_SPELLABLE, python_arithmetic_fix
from jitfix.rules.base import ModuleContext
from jitfix.rules.function_context import FunctionContext


def staged_constants(module: ModuleContext, entry: FunctionContext, expr: ast.AST,
                      statement: ast.stmt) -> tuple[Fix, str] | str | None:
    """The fix that makes ``expr`` a Python value when it is traced only because jnp staged
    arithmetic on values not shown traced: the names it needs, each bound to such arithmetic
    in the function's straight-line body (``n_actual = jnp.minimum(n, x.shape[0])``; ``depth =
    jnp.log2(n) + 1`` then ``depth = depth.astype(int)``) and followed through the names that
    reads, are written in Python at their bindings (and ``expr``'s own jnp calls too); and the
    Python functions used. Why not, when a name it needs is such arithmetic but is also read
    where a Python number would not do (``n[0]``; returned from a helper); None when some part
    is not such arithmetic.

    A leaf the analysis cannot place (a helper's parameter no call shows traced) counts as a
    Python value: ``expr`` reaches a place that needs one, so were the leaf a tracer the
    original would fail there too -- and as written, jnp's staging makes it fail for certain."""
    followed: dict[int, str] = {}  # binding (by id) -> the name it binds, to be a Python value
    refused: set[int] = set()
    spelled: list[tuple[ast.AST, PythonSpelling]] = []  # what to write in Python

    def spelling_of(value: ast.AST, at: ast.stmt, depth: int) -> bool:
        values = entry.values_at(at)

        def verdict(node: ast.AST) -> Verdict:
            found = values.verdict(node)
            if isinstance(node, ast.Name) and found.traced:
                binding = reaching_assignment(entry.traced.node, node.id, at)
                if binding is not None and (id(binding) in followed or follow(node.id, binding, depth)):
                    return Verdict(STATIC_KIND, f"`{node.id}`, computed in Python", scalar=True)
            if found.kind is UNKNOWN_KIND:
                return Verdict(STATIC_KIND, "not shown traced, and needed as a Python value", via=found)
            return found

        spelling = python_spelling(value, verdict, values.imports.resolve, values.is_builtin)
        if spelling is not None:
            spelled.append((value, spelling))
            return True
        # `num_steps + 1`: no jnp of its own, of names written in Python
        return not values.assuming_static(names_followed()).is_traced(value)

    def follow(name: str, binding: ast.Assign, depth: int) -> bool:
        if id(binding) in refused or depth >= 8 or not spelling_of(binding.value, binding, depth + 1):
            refused.add(id(binding))
            return False
        followed[id(binding)] = name
        return True

    def names_followed() -> dict[str, str]:
        return {name: f"`{name}`, computed in Python" for name in followed.values()}

    if not spelling_of(expr, statement, 0) or not spelled:
        return None
    converted = {id(call.func.value) for value, spelling in spelled for call in ast.walk(value)  # type: ignore[attr-defined]
                 if isinstance(call, ast.Call) and spelling.calls.get(id(call)) == TO_INT}
    for name in names_followed():
        use = _array_use(entry.traced.node, name, converted, returned_as_array=bool(entry.traced.jit_sites))
        if use is not None:
            return f"`{name}` is also read where a Python number would not do (line {use.lineno})"
    edits, functions, exact = [], set(), True
    for value, spelling in spelled:
        if type(value) not in PYTHON_SPELLABLE:
            return None
        fix, named = python_arithmetic_fix(module, value, value, spelling)
        edits += fix.edits
        functions.add(named)
        exact = exact and fix.safety is Safety.SAFE
    description = "write the arithmetic in Python" + ("" if exact else " (unsafe: math raises where jnp gives nan or inf)")
    return Fix(Safety.SAFE if exact else Safety.UNSAFE, description, edits), ", ".join(sorted(functions))


def _array_use(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, converted: set[int],
               returned_as_array: bool) -> ast.Name | None:
    """A read of ``name`` that a Python number would not do for as a 0-d array does
    (``name.astype``, ``name[0]``, a yielded value; a returned one unless the function is the
    jitted one, whose results become arrays), but for the reads in ``converted`` (by id: the
    ``n`` of an ``n.astype(int)`` written ``int(n)``); None when every read is an operand of
    arithmetic or a comparison, an argument, an element, an index or a bound."""
    parents = parents_in(function)
    own = {id(node) for node in walk_body(function)}
    for node in nodes_of(function):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)) \
                or id(node) in converted:
            continue
        parent = parents.get(id(node))
        while isinstance(parent, ast.Tuple | ast.List | ast.Starred):
            parent = parents.get(id(parent))
        if isinstance(parent, ast.Return) and returned_as_array and id(parent) in own:
            continue
        if isinstance(parent, ast.Attribute | ast.Return | ast.Yield | ast.YieldFrom | ast.Await) \
                or isinstance(parent, ast.Subscript) and parent.value is node \
                or isinstance(parent, ast.Call) and parent.func is node:
            return node
    return None
