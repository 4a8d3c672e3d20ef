"""Values traced only because jnp staged arithmetic on Python values, written in Python.

``n_actual = jnp.minimum(n, x.shape[0])`` or ``depth = jnp.log2(n) + 1`` of Python numbers is
a tracer under jit, though nothing in it depends on a traced input: where a Python value is
needed (a shape, ``range``, a test's truth) it is written in Python (``min``, ``math.log2``).
Shared by the size places of JF501 and the checks of JF101/JF105.

JF509 (``StagedConstant``) does the same where only a run proves it: `jitfix run` saw a value
fail under jit that JAX traced to no argument of the jitted function, and the lines of the
project that made it (``RunEvidence.staged``); the jnp calls there are written with NumPy, or
in Python where the value is converted to a Python number.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from jitfix.analysis.blocks import FunctionNode, nodes_of, own_expressions, parents_in, reaching_assignment, walk_body
from jitfix.analysis.observations import Observation
from jitfix.analysis.python_arithmetic import TO_INT, PythonSpelling, python_spelling
from jitfix.analysis.values import STATIC_KIND, UNKNOWN_KIND, ValueAnalysis, Verdict
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.arrays import (
    PYTHON_SPELLABLE,
    converted_operand,
    python_arithmetic_fix,
)
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import FunctionContext, function_contexts


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


# jnp functions whose NumPy twin of the same name computes the same integers and booleans from
# the same arguments (not `take`, whose out-of-range indices NumPy refuses, nor the sorts,
# whose order of ties may differ): on constants they are built at trace time with NumPy.
NUMPY_TWINS = frozenset({
    "zeros", "ones", "full", "array", "asarray", "arange", "eye", "identity", "zeros_like", "ones_like", "full_like",
    "concatenate", "stack", "hstack", "vstack", "reshape", "ravel", "transpose", "atleast_1d", "atleast_2d",
    "expand_dims", "squeeze", "broadcast_to", "flip", "tile", "repeat", "diag", "cumsum", "cumprod", "sum", "prod",
    "max", "min", "maximum", "minimum", "abs", "clip", "where", "logical_and", "logical_or", "logical_not", "all",
    "any", "count_nonzero", "floor_divide", "mod", "remainder", "equal", "not_equal", "less", "greater", "isin",
})
_EXACT_KINDS = ("bool", "int", "uint")


class StagedConstant(Rule):
    code = "JF509"
    name = "staged-constant"
    summary = "a value jnp computed from constants alone (seen by `jitfix run`) is a tracer where Python needs it"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Where `jitfix run` saw a value fail under jit (an `if` on it, `int()` of it, a shape or an index "
        "made of it) and JAX said it depends on no argument of the jitted function, the run also saw where the "
        "project's code computed it: jnp calls on constants only (settings, shapes, literals), often in another "
        "function or module than the failure -- a spec's `jnp.asarray(num_values, dtype)` built inside a jitted "
        "step, a graph's shape vector `jnp.array(dims)` returned by a helper, `int(jnp.ceil(T / dt))` of a "
        "model's settings. Those calls are written with NumPy (`np.asarray`, `np.array`) or Python "
        "(`math.ceil`), so the value is known at trace time, where it was needed. So is a jax array made "
        "before tracing that such a value read, where the failing code reads it from an attribute of `self` set "
        "once in its class (`self.split_idxs = jnp.array(...)` in `__init__`) or a global bound once "
        "(`BLOCK_ENDS = jnp.array([2, 5])`): jit takes it for a constant of the trace, a tracer.",
        why="Under jit, jnp stages every operation, also one on Python values: its result is a tracer, with no "
        "value until the compiled function runs, so Python cannot take its truth, convert it or use it as a "
        "shape while tracing. NumPy and Python compute it at once.",
        example="def make_spec(num_values, dtype=jnp.int32):\n    num_values = jnp.asarray(num_values, dtype)\n"
        "    if not (num_values > 0).all():\n        raise ValueError(num_values)\n    return num_values\n",
        fixed="def make_spec(num_values, dtype=jnp.int32):\n    num_values = np.asarray(num_values, dtype)\n"
        "    if not (num_values > 0).all():\n        raise ValueError(num_values)\n    return num_values\n",
        safety="Made only where a run proved it: JAX traced the failing value to no argument of the jitted "
        "function (nor to a value of an enclosing trace), and the rewritten call reads no value seen traced. "
        "A jnp call is written with NumPy where NumPy's function of that name computes the same, and the "
        "values made at that line were integers or booleans (NumPy's int64 holds the same numbers as jnp's "
        "int32; its float64 would not round as jnp's float32 does, so a float value is reported, not "
        "rewritten); arithmetic converted to a Python number (`int(jnp.ceil(t / dt))`) is written in Python "
        "as JF601 does. A name bound to the value and read as `.at[...]` (which NumPy arrays lack) is "
        "reported, and so is a held array another binding (or `setattr`) may replace. The rewritten helper "
        "computes with NumPy for every caller: a caller that passes it traced "
        "values would then fail, which the next run of `jitfix run` shows (and takes the rewrite back).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        reported: set[int] = set()
        for entry in function_contexts(module):
            for line, seen in sorted(entry.traced.seen.staged.items()):
                yield from self._line_findings(module, entry, line, seen)
            for holder, seen in sorted(entry.traced.seen.held_constants.items()):
                binding = _binding_of(module, entry.traced.node, holder)
                if binding is not None and id(binding) not in reported:
                    reported.add(id(binding))
                    yield self._held_finding(module, entry, holder, binding, seen)

    def _held_finding(self, module: ModuleContext, entry: FunctionContext, holder: str, binding: ast.Call,
                      seen: Observation) -> Finding:
        """The array ``holder`` holds, made with jnp before tracing (in ``__init__``, at module
        level) by ``binding``: jit took it for a constant of the trace."""
        where = (f"`{module.segment(binding)}`, which `{holder}` holds, is a jax array made before tracing: jit takes it "
                 f"for a constant of the trace, a tracer, and a run saw `{entry.traced.qualname}` fail at {seen.via}, "
                 "where Python needed its value")
        calls = [inner for inner in ast.walk(binding) if isinstance(inner, ast.Call)
                 and (module.imports.resolve(inner.func) or "").startswith("jax.numpy.")]
        names = {(module.imports.resolve(inner.func) or "").removeprefix("jax.numpy.") for inner in calls}
        if not names <= NUMPY_TWINS or not all(isinstance(inner.func, ast.Attribute) for inner in calls):
            return self.finding(module, binding, f"{where}; not auto-fixable: make it with NumPy by hand")
        if not all(dtype.startswith(_EXACT_KINDS) for dtype in seen.made):
            return self.finding(module, binding, f"{where}; not auto-fixable: it is of {', '.join(seen.made)}, and "
                                "NumPy's float64 does not round as jnp's float32 does: make it with NumPy by hand, of "
                                "the dtype it needs")
        attribute = holder.rsplit(".", 1)[-1]
        if any(isinstance(node, ast.Attribute) and node.attr == "at" and _names(node.value, attribute)
               for node in ast.walk(module.tree)):
            return self.finding(module, binding, f"{where}; not auto-fixable: `{attribute}` is updated with "
                                "`.at[...]`, which a NumPy array lacks")
        fix = Fix(Safety.SAFE, "make it with NumPy", [_numpy_edit(module, inner) for inner in calls])
        return self.finding(module, binding, f"{where}; make it with NumPy, a constant known while tracing", fix)

    def _line_findings(self, module: ModuleContext, entry: FunctionContext, line: int,
                       seen: Observation) -> Iterator[Finding]:
        calls = [(node, statement) for node, statement in own_expressions(entry.traced.node)
                 if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno)
                 and (module.imports.resolve(node.func) or "").startswith("jax.numpy.")]
        converted: set[int] = set()
        for node, statement in own_expressions(entry.traced.node):
            operand = converted_operand(node) if isinstance(node, ast.Call) and node.lineno == line else None
            if operand is None or not any(inner is call for call, _ in calls for inner in ast.walk(operand)):
                continue
            spelling = python_spelling(operand, _seen_constant(entry.values_at(statement)),
                                       module.imports.resolve, entry.values_at(statement).is_builtin)
            if spelling is not None:
                converted.update(id(inner) for inner in ast.walk(operand))
                fix, functions = python_arithmetic_fix(module, node, operand, spelling)
                yield self.finding(module, node, f"{self._where(module, node, entry, seen)}; compute it in Python "
                                   f"({functions})", fix, function=entry.traced)
        outermost = [(call, statement) for call, statement in calls if id(call) not in converted
                     and not any(call is not other and call in ast.walk(other) for other, _ in calls)]
        for call, statement in outermost:
            finding = self._numpy_finding(module, entry, call, statement, seen)
            if finding is not None:
                yield finding

    def _numpy_finding(self, module: ModuleContext, entry: FunctionContext, call: ast.Call, statement: ast.stmt,
                       seen: Observation) -> Finding | None:
        values = entry.values_at(statement)
        jnp_calls = [inner for inner in ast.walk(call) if isinstance(inner, ast.Call)
                     and (module.imports.resolve(inner.func) or "").startswith("jax.numpy.")]
        leaves = [part for inner in jnp_calls for part in [*inner.args, *(k.value for k in inner.keywords)]]
        if any(values.is_traced(leaf) for leaf in leaves):
            return None  # it reads a traced value too: that is not what was made of constants here
        where = self._where(module, call, entry, seen)
        names = {(module.imports.resolve(inner.func) or "").removeprefix("jax.numpy.") for inner in jnp_calls}
        if not names <= NUMPY_TWINS or not all(isinstance(inner.func, ast.Attribute) for inner in jnp_calls):
            return self.finding(module, call, f"{where}; not auto-fixable: compute it with NumPy or Python by hand "
                                "(no NumPy function of these names is known to compute the same)", function=entry.traced)
        if not seen.made or not all(dtype.startswith(_EXACT_KINDS) for dtype in seen.made):
            return self.finding(module, call, f"{where}; not auto-fixable: it made {', '.join(seen.made) or 'values'} "
                                "there, and NumPy's float64 does not round as jnp's float32 does: compute it with "
                                "NumPy by hand, of the dtype it needs", function=entry.traced)
        updated = _updated_with_at(entry.traced.node, statement)
        if updated is not None:
            return self.finding(module, call, f"{where}; not auto-fixable: `{updated}` is updated with `.at[...]`, "
                                "which a NumPy array lacks", function=entry.traced)
        fix = Fix(Safety.SAFE, "build it with NumPy", [_numpy_edit(module, inner) for inner in jnp_calls])
        return self.finding(module, call, f"{where}; build it with NumPy, at trace time", fix, function=entry.traced)

    @staticmethod
    def _where(module: ModuleContext, node: ast.AST, entry: FunctionContext, seen: Observation) -> str:
        return (f"`{module.segment(node)}` in `{entry.traced.qualname}` is computed from constants alone, and jnp "
                f"stages it: a run saw the value it makes fail under jit at {seen.via}, where Python needed it")


def _binding_of(module: ModuleContext, function: FunctionNode, holder: str) -> ast.Call | None:
    """The one call that binds what ``holder`` names where ``function`` reads it: an attribute
    of the method's ``self`` (``self.split_idxs``) set once in its class -- in a method, on
    that method's own first parameter, or in the class body -- or a global of the module bound
    once at its top level; None where it is bound otherwise, more than once, or not here."""
    parts = holder.split(".")
    if len(parts) == 1 and holder.isidentifier():
        stores = [node for node in ast.walk(module.tree) if isinstance(node, ast.Name) and node.id == holder
                  and not isinstance(node.ctx, ast.Load)]
        values: list[ast.expr | None] = [
            line.value for line in module.tree.body if isinstance(line, ast.Assign)
            and [target for target in line.targets if isinstance(target, ast.Name) and target.id == holder]]
        found = values if len(stores) == 1 and not any(isinstance(node, ast.Global) and holder in node.names
                                                       for node in ast.walk(module.tree)) else []
    elif len(parts) == 2 and function.args.args and parts[0] == function.args.args[0].arg and parts[1].isidentifier():
        klass = next((node for node in ast.walk(module.tree) if isinstance(node, ast.ClassDef)
                      and any(line is function for line in node.body)), None)
        found = _attribute_values(klass, parts[1]) if klass is not None else []
    else:
        return None
    return found[0] if len(found) == 1 and isinstance(found[0], ast.Call) else None


def _attribute_values(klass: ast.ClassDef, attribute: str) -> list[ast.expr | None]:
    """What every binding of ``attribute`` in the class gives it (None for one that is not a
    plain assignment: an augmented one, a tuple target, a `setattr`)."""
    found: list[ast.expr | None] = []
    for line in klass.body:
        if isinstance(line, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attribute for t in line.targets):
            found.append(line.value)
        if not isinstance(line, ast.FunctionDef | ast.AsyncFunctionDef) or not line.args.args:
            continue
        receiver = line.args.args[0].arg
        for node in ast.walk(line):
            if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Store):
                plain = [statement for statement in ast.walk(line) if isinstance(statement, ast.Assign | ast.AnnAssign)
                         and node in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])]
                on_self = isinstance(node.value, ast.Name) and node.value.id == receiver
                found.append(plain[0].value if plain and on_self else None)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
                found.append(None)
    return found


def _names(node: ast.AST, attribute: str) -> bool:
    """Whether ``node`` reads ``attribute`` (``self.x`` or a global ``x``)."""
    return isinstance(node, ast.Attribute) and node.attr == attribute or isinstance(node, ast.Name) and node.id == attribute


def _seen_constant(values: ValueAnalysis) -> Callable[[ast.AST], Verdict]:
    """The verdict of a leaf of arithmetic a run saw computed from constants alone: static
    where the analysis does not show it traced."""
    def verdict(node: ast.AST) -> Verdict:
        found = values.verdict(node)
        return found if found.traced else Verdict(STATIC_KIND, "computed from constants alone, as a run saw")
    return verdict


def _updated_with_at(function: ast.AST, statement: ast.stmt) -> str | None:
    """The name ``statement`` binds, where the function reads it as ``name.at``."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return None
    name = statement.targets[0].id
    return name if any(isinstance(node, ast.Attribute) and node.attr == "at" and isinstance(node.value, ast.Name)
                       and node.value.id == name for node in nodes_of(function)) else None


def _numpy_edit(module: ModuleContext, call: ast.Call) -> Edit:
    """``jnp.f(...)`` written ``np.f(...)``, a dtype spelled with jnp (``dtype=jnp.int32``) with NumPy."""
    function = call.func
    assert isinstance(function, ast.Attribute)
    given = next((keyword.value for keyword in call.keywords if keyword.arg == "dtype"), None)
    resolved = (module.imports.resolve(given) or "") if given is not None else ""
    dtype = resolved.removeprefix("jax.numpy.") if resolved.startswith("jax.numpy.") else ""

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        numpy = context.name("numpy")
        arguments = [argument.with_changes(value=cst.parse_expression(f"{numpy}.{dtype}"))
                     if dtype in _NUMPY_DTYPES and argument.keyword is not None and argument.keyword.value == "dtype"
                     else argument for argument in updated.args]
        return updated.with_changes(func=cst.parse_expression(f"{numpy}.{function.attr}"), args=arguments)

    start, end = module.span_of(call)
    return Edit(start, cst.Call, replace, imports=("numpy",), end=end)


_NUMPY_DTYPES = frozenset({"bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                           "float16", "float32", "float64", "complex64", "complex128"})
