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
        "step, a graph's shape vector `jnp.array(dims)` returned by a helper, `int(jnp.prod(jnp.array(self.grid)))` "
        "of a model's settings. Those calls are written with NumPy (`np.asarray`, `np.array`, `np.prod`), so the "
        "value is known at trace time, where it was needed (and an integer converted to a Python number is "
        "written in Python where the arithmetic has an exact Python form). So is a jax array made "
        "before tracing that such a value read, where the failing code reads it from an attribute of `self` set "
        "once in its class (`self.split_idxs = jnp.array(...)` in `__init__`) or a global bound once "
        "(`BLOCK_ENDS = jnp.array([2, 5])`): jit takes it for a constant of the trace, a tracer.",
        why="Under jit, jnp stages every operation, also one on Python values: its result is a tracer, with no "
        "value until the compiled function runs, so Python cannot take its truth, convert it or use it as a "
        "shape while tracing. NumPy and Python compute it at once.",
        example="class DiscreteSpec:\n    def __init__(self, num_values, dtype=jnp.int32):\n"
        "        num_values = jnp.asarray(num_values, dtype)\n        if not (num_values > 0).all():\n"
        "            raise ValueError(num_values)\n        self.maximum = num_values - 1\n",
        fixed="class DiscreteSpec:\n    def __init__(self, num_values, dtype=jnp.int32):\n"
        "        num_values = np.asarray(num_values, dtype)\n        if not (num_values > 0).all():\n"
        "            raise ValueError(num_values)\n        self.maximum = num_values - 1\n",
        safety="Made only where a run proved it: JAX traced the failing value to no argument of the jitted "
        "function, nor to a value of an enclosing trace, a host callback or a draw (a callback's result is a tracer "
        "whatever it is given), the call rewritten reads no value seen traced, and it is "
        "the one such call on its line. A jnp call is written with NumPy where NumPy's function of that name "
        "computes the same, and the values made there were integers or booleans of a fixed dtype (NumPy's int64 "
        "holds the same numbers as jnp's int32; its float64 does not round as jnp's float32 does, and a weakly "
        "typed jnp value -- `jnp.asarray(4)`, `jnp.maximum(n, 0)` of Python ints -- takes the dtype of what it "
        "meets, where NumPy's int64 does not: those are reported, not rewritten); a conversion of such an integer "
        "value to a Python number is written in Python. Every read of the value, followed through the names bound "
        "to it and the callers in the module of a function returning it, must be an argument, a comparison, an "
        "index, its shape or a reduction, or `+ - * // %` without a float literal; a read as `.at[...]` (which "
        "NumPy arrays lack), a division or arithmetic with a float is reported, and so is a value a public "
        "function of the module returns (other modules may call it outside traced code, where it would now "
        "return NumPy's array), a held array another binding (or `setattr`) may replace, and a function that "
        "binds `np` itself. A Python float held in a name and multiplied with the value is not seen: NumPy "
        "computes that product in float64.",
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
        where = (f"`{module.segment(binding)}`, which `{holder}` holds, is a jax array made before tracing: jit "
                 f"takes it for a constant of the trace, a tracer, and a run saw `{entry.traced.qualname}` fail at {seen.via}, "
                 "where Python needed its value")
        calls = _jnp_calls(module, binding)
        attribute = holder.rsplit(".", 1)[-1]
        reads = [node for node in ast.walk(module.tree) if isinstance(node, ast.Attribute | ast.Name)
                 and _names(node, attribute) and isinstance(node.ctx, ast.Load)]
        why_not = _why_not_numpy(module, calls, seen) or next(
            (why for read in reads for why in [_inexact_use(module, read)] if why), None)
        if why_not is not None:
            return self.finding(module, binding, f"{where}; not auto-fixable: {why_not}")
        fix = Fix(Safety.SAFE, "make it with NumPy", [_numpy_edit(module, inner) for inner in calls])
        return self.finding(module, binding, f"{where}; make it with NumPy, a constant known while tracing", fix)

    def _line_findings(self, module: ModuleContext, entry: FunctionContext, line: int,
                       seen: Observation) -> Iterator[Finding]:
        calls = [(node, statement) for node, statement in own_expressions(entry.traced.node)
                 if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno)
                 and (module.imports.resolve(node.func) or "").startswith("jax.numpy.")]
        outermost = [(call, statement) for call, statement in calls
                     if not any(call is not other and call in ast.walk(other) for other, _ in calls)]
        made_of_constants = [(call, statement) for call, statement in outermost
                             if not _reads_traced(entry.values_at(statement), call)]
        if len(made_of_constants) != 1:
            return  # none (what was made here also read traced values), or several: which one failed is not known
        call, statement = made_of_constants[0]
        where = self._where(module, call, entry, seen)
        conversion = next((node for node, _ in own_expressions(entry.traced.node) if isinstance(node, ast.Call)
                           and (operand := converted_operand(node)) is not None
                           and any(inner is call for inner in ast.walk(operand))), None)
        why_not = _why_not_numpy(module, _jnp_calls(module, call), seen)
        if conversion is not None and why_not is None:  # `int(jnp.prod(jnp.array(shape)))`: a Python number
            operand = converted_operand(conversion)
            assert operand is not None
            spelling = python_spelling(operand, _seen_constant(entry.values_at(statement)),
                                       module.imports.resolve, entry.values_at(statement).is_builtin)
            if spelling is not None and spelling.exact:
                fix, functions = python_arithmetic_fix(module, conversion, operand, spelling)
                yield self.finding(module, conversion, f"{where}; compute it in Python ({functions})", fix,
                                   function=entry.traced)
                return
        why_not = why_not or _inexact_use(module, call, entry.traced.node) or _shadowed_numpy(entry.traced.node)
        if why_not is not None:
            yield self.finding(module, call, f"{where}; not auto-fixable: {why_not}", function=entry.traced)
            return
        edits = [_numpy_edit(module, inner) for inner in _jnp_calls(module, call)]
        fix = Fix(Safety.SAFE, "build it with NumPy", edits)
        yield self.finding(module, call, f"{where}; build it with NumPy, at trace time", fix, function=entry.traced)

    @staticmethod
    def _where(module: ModuleContext, node: ast.AST, entry: FunctionContext, seen: Observation) -> str:
        return (f"`{module.segment(node)}` in `{entry.traced.qualname}` is computed from constants alone, and jnp "
                f"stages it: a run saw the value it makes fail under jit at {seen.via}, where Python needed it")


def _jnp_calls(module: ModuleContext, expr: ast.AST) -> list[ast.Call]:
    return [inner for inner in ast.walk(expr) if isinstance(inner, ast.Call)
            and (module.imports.resolve(inner.func) or "").startswith("jax.numpy.")]


def _reads_traced(values: ValueAnalysis, call: ast.Call) -> bool:
    """Whether ``call`` reads a value shown traced: a name, attribute or item it reads (not
    the jnp functions it calls, nor what those return, which is staged only)."""
    functions = {id(node) for inner in ast.walk(call) if isinstance(inner, ast.Call) for node in ast.walk(inner.func)}
    return any(values.is_traced(node) for node in ast.walk(call) if id(node) not in functions
               and isinstance(node, ast.Name | ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Load)
               and not any(isinstance(inner, ast.Call) for inner in ast.walk(node)))


def _why_not_numpy(module: ModuleContext, calls: list[ast.Call], seen: Observation) -> str | None:
    """Why NumPy would not make what these jnp calls made (the dtypes the run saw), if it would not."""
    made = seen.made
    if not seen.made_exactly:
        return (f"jnp made {', '.join(made) or 'values of no known dtype'} there, and NumPy or Python compute floats "
                "in float64, which rounds otherwise than jnp's float32 (and a weakly typed jnp value, `~`, takes the "
                "dtype of what it meets, where NumPy's int64 does not): compute it by hand, of the dtype it needs")
    names = {(module.imports.resolve(inner.func) or "").removeprefix("jax.numpy.") for inner in calls}
    if not names <= NUMPY_TWINS or not all(isinstance(inner.func, ast.Attribute) for inner in calls):
        return "no NumPy function of these names is known to compute the same: compute it with NumPy by hand"
    return None


_SAFE_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "all", "any", "max", "min", "sum", "prod", "item",
                              "tolist"})
_EXACT_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _inexact_use(module: ModuleContext, node: ast.AST, scope: ast.AST | None = None, depth: int = 0) -> str | None:
    """Where a NumPy array in ``node``'s place would not act as the jnp one did, if anywhere: a
    read of it (through names bound to it, and the callers of a function returning it) that is
    neither an argument, a comparison, an index, its shape or a reduction, nor `+ - * // %`
    with no float literal (NumPy's int64 holds what jnp's int32 did; with a traced operand jnp
    computes as before) -- not `.at`, a division, arithmetic with a float."""
    scope = scope if scope is not None else module.tree
    parent = parents_in(scope).get(id(node))
    if isinstance(parent, ast.keyword | ast.Compare | ast.FormattedValue) \
            or isinstance(parent, ast.Call) and node is not parent.func \
            or isinstance(parent, ast.Subscript) and parent.value is not node \
            or isinstance(parent, ast.Attribute) and parent.attr in _SAFE_ATTRIBUTES \
            or isinstance(parent, ast.Assign | ast.AnnAssign) and isinstance(_target(parent), ast.Attribute):
        return None
    if depth >= 4:
        return f"what line {node.lineno} makes of it is followed no further"  # type: ignore[attr-defined]
    if isinstance(parent, ast.Subscript | ast.UnaryOp | ast.Tuple | ast.List) \
            or isinstance(parent, ast.BinOp) and isinstance(parent.op, _EXACT_OPERATORS) \
            and not any(side is not node and _a_float(side) for side in (parent.left, parent.right)):
        return _inexact_use(module, parent, scope, depth + 1)
    if isinstance(parent, ast.Assign | ast.AnnAssign) and isinstance(_target(parent), ast.Name):
        name = _target(parent).id  # type: ignore[union-attr]
        reads = [read for read in ast.walk(scope) if isinstance(read, ast.Name) and read.id == name
                 and isinstance(read.ctx, ast.Load)]
        return next((why for read in reads for why in [_inexact_use(module, read, scope, depth + 1)] if why), None)
    if isinstance(parent, ast.Return) and isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        return _returned_use(module, scope, depth)
    where = f"line {parent.lineno}" if isinstance(parent, ast.expr | ast.stmt) else "its use"
    return f"{where} uses it where a NumPy array may not act as the jnp one does (`.at`, float arithmetic)"


def _returned_use(module: ModuleContext, function: FunctionNode, depth: int) -> str | None:
    """Why the value ``function`` returns may not be a NumPy array: a caller of the module
    outside traced code (which would then get NumPy's array: another repr, int64), or one that
    uses what it gets where NumPy's would not do."""
    top = {id(node) for node in module.tree.body} | {id(line) for node in module.tree.body
                                                     if isinstance(node, ast.ClassDef) for line in node.body}
    if id(function) in top and not function.name.startswith("_"):
        return (f"`{function.name}` returns it, and other modules may call it outside traced code, where it "
                "would return NumPy's array")
    traced = [entry.node for entry in module.traced.values()]
    calls = [node for node in ast.walk(module.tree) if isinstance(node, ast.Call)]
    for call in calls:
        called = call.func
        if not (isinstance(called, ast.Name) and called.id == function.name
                or isinstance(called, ast.Attribute) and called.attr == function.name):
            continue
        caller = next((node for node in traced if any(inner is call for inner in ast.walk(node))), None)
        if caller is None:
            return (f"`{function.name}` is also called outside traced code (line {call.lineno}), where it would "
                    "return NumPy's array")
        why = _inexact_use(module, call, caller, depth + 1)
        if why is not None:
            return why
    return None


def _target(statement: ast.Assign | ast.AnnAssign) -> ast.expr | None:
    if isinstance(statement, ast.AnnAssign):
        return statement.target
    return statement.targets[0] if len(statement.targets) == 1 else None


def _a_float(node: ast.AST) -> bool:
    """A float literal (``0.5``, ``-1e-3``): with it NumPy would compute in float64."""
    if isinstance(node, ast.UnaryOp):
        return _a_float(node.operand)
    return isinstance(node, ast.Constant) and type(node.value) in (float, complex)


def _shadowed_numpy(function: FunctionNode) -> str | None:
    """Why NumPy's name cannot be written in ``function``: it binds ``np`` or ``numpy`` itself."""
    bound = {name.id for name in ast.walk(function)
             if isinstance(name, ast.Name) and not isinstance(name.ctx, ast.Load)}
    bound |= {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)}
    shadowed = sorted(bound & {"np", "numpy"})
    return f"`{shadowed[0]}` is a name of `{function.name}`: import NumPy under another name" if shadowed else None


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
    return isinstance(node, ast.Attribute) and node.attr == attribute \
        or isinstance(node, ast.Name) and node.id == attribute


def _seen_constant(values: ValueAnalysis) -> Callable[[ast.AST], Verdict]:
    """The verdict of a leaf of arithmetic a run saw computed from constants alone: static
    where the analysis does not show it traced."""
    def verdict(node: ast.AST) -> Verdict:
        found = values.verdict(node)
        return found if found.traced else Verdict(STATIC_KIND, "computed from constants alone, as a run saw")
    return verdict


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
