"""JF5xx — traced values where a shape (a static Python value) is needed.

JF501 an argument of a jitted function that sets a shape (``jnp.zeros(n)``, ``x.reshape(n, -1)``,
``jnp.arange(n)``, ``num=n``, ``axis=k``, slice bounds ``x[:k]``, ``[f(i) for i in range(n)]``),
or that is compared with a string (``mode == "sum"``: callers pass strings) -> added to the jit's
``static_argnames``.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

from jitfix.analysis.blocks import assigned_names, nodes_of, own_expressions, parents_in, statement_holding, walk_body
from jitfix.analysis.catalogue import static_places
from jitfix.analysis.catalogue_data import SHAPE_PARAMETERS
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.masks import (ElementwiseOrigin, SeenArray, is_boolean_mask, made_array, seen_shape,
                                  selects_elementwise)
from jitfix.analysis.runtime_checks import RuntimeCheck
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import ValueAnalysis, compared_with_text, parameter_names
from jitfix.cst_text import code, cst
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.arrays import PYTHON_SPELLABLE, python_arithmetic_fix, whole_slot
from jitfix.rules.base import ModuleContext, Rule, RuleDoc, inlined_at, inlined_edits
from jitfix.rules.function_context import FunctionContext, function_contexts, static_arrays
from jitfix.rules.leading_indices import leading_indices
from jitfix.rules.masked_reductions import WHERE_REDUCTIONS, MaskedReduction
from jitfix.rules.numpy_constants import built_with_numpy
from jitfix.rules.staged_constants import staged_constants
from jitfix.rules.static_fields import ConfigField, config_field
from jitfix.rules.static_arguments import parameters_behind, static_argnames_edit


class ShapeArgument(Rule):
    code = "JF501"
    name = "traced-shape-argument"
    summary = "an argument that sets a shape must be static under jit; add it to static_argnames"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds arguments of jitted functions that reach a place needing a Python value: a "
        "shape (`jnp.zeros(n)`, `jnp.ones((n, m))`, `x.reshape(n, -1)`, `jnp.arange(n)`, "
        "`jnp.linspace(a, b, num=n)`, and NumPy's `np.zeros(n)`, `np.ones((n, m))`, ...), an `axis=` argument, a slice bound (`x[:k]`), or a "
        "`range(n)` that builds a Python list; and parameters compared with a string (`mode == "
        "\"sum\"`, `mode in (\"sum\", \"mean\")`), which callers give strings, or used only for their "
        "truth (`if training:`, `x if deterministic else y`, or passed to a helper that only tests "
        "them), which callers give bools; and adds them to the jit's `static_argnames`. An `int` field of "
        "a pytree argument that sets a shape (`jnp.zeros((params.max_iters,))`, with `params` of a "
        "`register_dataclass` or `flax.struct.dataclass` class of the module: annotated, or what every call "
        "gives) is declared static in the class.",
        why="Array shapes are fixed when a function is traced, so they cannot depend on traced "
        "values: `jnp.zeros(n)` with a traced `n` raises `ConcretizationTypeError` (or "
        "`TypeError: Shapes must be 1D sequences of concrete values`); a string passed to a "
        "traced parameter raises at the call (`not a valid JAX type`). The comparison itself is a "
        "Python bool either way (an array equals no string), so the `if` on it is left as it is.",
        example="@jax.jit\ndef pad_to(x, n):\n    return jnp.concatenate([x, jnp.zeros(n)])\n",
        fixed="from functools import partial\n\n\n"
        "@partial(jax.jit, static_argnames=(\"n\",))\ndef pad_to(x, n):\n"
        "    return jnp.concatenate([x, jnp.zeros(n)])\n",
        safety="Safe: every call that passed such an argument failed before. A pytree's field is a leaf "
        "unless declared static, and `jax.jit` traces every leaf, an int too (not `eqx.filter_jit`, which "
        "keeps it static: left alone there); declared static (`dataclasses.field(default=..., "
        "metadata=dict(static=True))`, `flax.struct.field(pytree_node=False)`) it is part of the tree's "
        "structure, a Python value in the trace. Made only where every instance the module makes or "
        "`replace`s gives the field an int literal or leaves its default (a static field must be hashable and "
        "is never traced; `cls(...)` in a classmethod or `**kwargs` may give anything); a field with a "
        "`field(...)` of its own, or a class registered otherwise, is reported. The field leaves the tree's "
        "leaves, so a `tree_map`, a flatten or a checkpoint no longer sees it: unsafe where the module calls "
        "`jax.tree_util`, `jax.tree`, `optax`, `orbax` or `flax.serialization`, and for a flax class "
        "(checkpointed by its fields). Each new value of a "
        "static argument compiles the function again, and static arguments must be hashable "
        "Python values (an `int`, not an array); the finding says so. `@jax.jit` becomes "
        "`@partial(jax.jit, static_argnames=(...))`, existing static arguments are kept. A shape "
        "computed with jnp from static values (`jnp.array(x.shape).prod()`, `jnp.maximum(4 - n, 0)`, "
        "`jnp.add(x.size, 1)`) is traced only because jnp stages it: it is written in Python instead "
        "(`math.prod(x.shape)`, `max(4 - n, 0)`, `x.size + 1`; see JF601), and a table of static numbers "
        "(`jnp.array([[0, 2], [0, 0]])` as pad widths, `jnp.array(offsets)` as split points) with NumPy. A name "
        "is followed through each of its bindings in the function's straight-line body (`depth = jnp.log2(n) + "
        "1` then `depth = depth.astype(int)`); a value no analysis shows traced (a helper's parameter every "
        "caller gives a literal) counts as a Python value there, since were it a tracer the shape would fail "
        "all the same. A jitted function may return such a name (its results become arrays); a helper may not. A "
        "`jnp.arange` whose bounds both move with one traced value by Python numbers (`jnp.arange(c - w, c + "
        "w)`, a window around a traced centre) has a static length: the range is shifted, `jnp.arange(-w, w) + "
        "c` (the same elements, up to the rounding of very large float bounds). An integer or boolean array "
        "built with jnp from Python values where a concrete one is needed (`npad = jnp.zeros((ndim, 2), "
        "dtype=jnp.int32)`, then `npad = npad.at[axis, 1].set(size)`, as `jnp.pad`'s widths) is built with "
        "NumPy at trace time (`np.zeros(..., dtype=np.int32)`, `npad[axis, 1] = size`: nothing else holds "
        "it, as every other read of it is an argument of a call); a float one is reported (NumPy's would be "
        "float64). A flag (a parameter used only for its "
        "truth) is made static by an unsafe fix: a caller that passes an array there would then fail. Under `jitfix run`, a parameter on whose value alone a failure "
        "under jit depends (JAX names it) is made static too when every call of the run gave it a Python "
        "scalar, with at most 4 distinct values (more would compile once each). Not "
        "fixed: a shape computed from array values (no static form exists), and helpers whose "
        "jit is elsewhere.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for traced in module.traced.values():
            if traced.seen.static and not _check_staged_instead(module, traced):
                yield self._observed_static(module, traced)
        for entry in function_contexts(module):
            traced = entry.traced
            params = traced.traced_params
            arrays = entry.arrays
            reported: set[int] = set()
            made_static: dict[int, set[str]] = {}  # node -> the names a finding made static for it
            strings: set[str] = set()
            flags = _truth_only_parameters(traced) if traced.jit_sites else {}
            for name, test in flags.items():
                found = entry.values_at(test[1]).verdict(ast.Name(id=name, ctx=ast.Load()))
                if found.static or found.array or name in arrays.array_params:
                    continue  # Python's truth, or a traced bool lax.cond takes (JF101)
                use = f"`{module.segment(test[0].func)}` tests it" if isinstance(test[0], ast.Call) \
                    else f"`{module.segment(test[0])}`"
                yield self._made_static(module, traced, test[0], [name], (
                    f"`{name}` is a traced argument of `{traced.qualname}` whose only use is its truth "
                    f"({use}, line {test[0].lineno}): a bool passed there arrives as a "
                    "tracer, whose truth raises"), safety=Safety.UNSAFE,
                    unsafe=" (unsafe: a caller that passes an array there would then fail: an array is not "
                           "hashable)")
            for node, statement in own_expressions(traced.node):
                string = _string_parameter(node, traced)
                if string is not None and string.id not in strings and entry.values_at(statement).is_traced(string):
                    strings.add(string.id)
                    yield self._made_static(module, traced, string, [string.id], (
                        f"`{string.id}` is compared with a string in `{traced.qualname}`: its callers pass "
                        "strings, which jit takes only as static arguments"))
                shifted = _ShiftedRange.of(node, module, entry.values_at(statement))
                if shifted is not None:
                    reported.update(id(bound) for bound in node.args)  # type: ignore[attr-defined]
                    yield shifted.finding(self, module, traced)
                    continue
                for place, expr in _static_items(node, module, entry, statement):
                    if id(expr) in reported:
                        continue
                    items = expr.elts if isinstance(expr, ast.Tuple | ast.List) else [expr]
                    fields = [field for item in items if id(item) not in reported
                              for field in [config_field(item, traced, module)] if field is not None]
                    for field in fields:
                        reported.add(id(field.expr))
                        yield self._field_finding(module, traced, field, place)
                    values = entry.values_at(statement)
                    if fields or not values.is_traced(expr):
                        continue
                    reported.add(id(expr))
                    where = f"{place} in `{traced.qualname}` needs a Python value, but `{module.segment(expr)}` is traced"
                    spelling = values.python_spelling(expr) if type(expr) in PYTHON_SPELLABLE else None
                    if spelling is not None:
                        fix, functions = python_arithmetic_fix(module, expr, expr, spelling)
                        yield self.finding(module, expr, f"{where}: jnp stages arithmetic on Python values; compute "
                                                         f"it in Python ({functions})", fix, function=traced)
                        continue
                    staged = staged_constants(module, entry, expr, statement)
                    if isinstance(staged, str):
                        yield self.finding(module, expr, f"{where}; not auto-fixable: it is computed with jnp from "
                                                         f"Python values, but {staged}: compute the size in Python "
                                                         "under a name of its own", function=traced)
                        continue
                    if staged is not None:
                        fix, functions = staged
                        yield self.finding(module, expr, f"{where}: it is computed with jnp from Python values, "
                                                         f"which jnp stages; compute it in Python ({functions})",
                                           fix, function=traced)
                        continue
                    numpy = built_with_numpy(module, entry, expr, statement)
                    if isinstance(numpy, str):
                        yield self.finding(module, expr, f"{where}; not auto-fixable: {numpy}", function=traced)
                        continue
                    if numpy is not None:
                        yield self.finding(module, expr, f"{where}: it is built with jnp from Python values, "
                                                         "which jnp stages; build it with NumPy", numpy.fix,
                                           function=traced)
                        continue
                    names = parameters_behind(expr, params, values, traced, arrays.bindings)
                    if names is None and not arrays.certain(expr):
                        continue  # e.g. `arr.n_sparse`: a pytree's metadata may well be static
                    if names is None:
                        yield self.finding(module, expr, f"{where}; not auto-fixable: it is computed from "
                                                         "array values, which have no static form", function=traced)
                        continue
                    if set(names) <= made_static.get(id(node), set()):
                        continue  # (`x[i:i + 3]`: one finding for the slice, not one per bound)
                    made_static.setdefault(id(node), set()).update(names)
                    yield self._made_static(module, traced, expr, names, where, _fixed_width_slice(node, expr, module))

    def _made_static(self, module: ModuleContext, traced: TracedFunction, expr: ast.AST, names: list[str],
                     where: str, alternative: str = "", safety: Safety = Safety.SAFE, unsafe: str = "") -> Finding:
        """The finding that makes ``names`` static at each jit of the function (``alternative``:
        another way, said after it; ``unsafe``: what an unsafe fix may break)."""
        edits = [static_argnames_edit(module, site, names, traced.node) for site in traced.jit_sites]
        listed = ", ".join(f"`{name}`" for name in names)
        if not edits or any(edit is None for edit in edits):
            return self.finding(module, expr, f"{where}; not auto-fixable: make {listed} static "
                                "at the jit that compiles this function", function=traced)
        fix = Fix(safety, f"add {listed} to static_argnames{unsafe}", edits)  # type: ignore[arg-type]
        return self.finding(module, expr, f"{where}; make {listed} static (each new value recompiles){alternative}"
                            f"{unsafe}", fix, function=traced)


    def _field_finding(self, module: ModuleContext, traced: TracedFunction, field: ConfigField, place: str) -> Finding:
        where = (f"{place} in `{traced.qualname}` needs a Python value, but `{module.segment(field.expr)}` is a "
                 f"field of the pytree `{field.klass.name}` that is a leaf, which `jax.jit` traces (an int too)")
        why_not = field.why_not(module)
        if why_not is not None:
            return self.finding(module, field.expr, f"{where}; not auto-fixable: {why_not}; declare it static in "
                                f"`{field.klass.name}`", function=traced)
        fix = field.fix(module)
        unsafe = field.safety(module)[1]
        return self.finding(module, field.expr, f"{where}; declare it static in `{field.klass.name}` (part of the "
                            f"tree's structure: each new value compiles again){unsafe}", fix, function=traced)

    def _observed_static(self, module: ModuleContext, traced: TracedFunction) -> Finding:
        """Parameters `jitfix run` saw given a Python value on every call, on which alone a
        value that failed under jit depends: static at the jit, so the code stays Python."""
        names = sorted(traced.seen.static)
        seen = traced.seen.static[names[0]]
        listed = ", ".join(f"`{name}`" for name in names)
        given = "; ".join(f"`{name}`: {kinds}" for name, kinds in seen.types if name in names)
        message = (f"{listed} of `{traced.qualname}` got a Python value on every call in the run with jit disabled "
                   f"({given}), and the value that failed under jit at line {seen.line} depends only on "
                   f"{'it' if len(names) == 1 else 'them'}; make {listed} static (each new value recompiles)")
        edits = [static_argnames_edit(module, site, names, traced.node) for site in traced.jit_sites]
        if any(edit is None for edit in edits):
            return self.finding(module, traced.jit_sites[0], f"{message}; not auto-fixable: the jit's static "
                                "arguments are not literal", function=traced)
        fix = Fix(Safety.SAFE, f"add {listed} to static_argnames", edits)  # type: ignore[arg-type]
        return self.finding(module, traced.jit_sites[0], message, fix, function=traced)


def _check_staged_instead(module: ModuleContext, traced: TracedFunction) -> bool:
    """Whether the failure a run made parameters static for is a check on a traced value
    (`assert ok`, `if bad: raise`) that JF101/JF105 stage: staged, it is compiled once for
    every value, as `fix` leaves it -- and a check rewritten for a traced value that the
    static argument then made a Python one would not take it."""
    from jitfix.rules.conditionals import staging  # (conditionals' rules are built on this module's)

    seen = next(iter(traced.seen.static.values()))
    if os.path.realpath(module.path) != os.path.realpath(seen.path):
        return False
    for entry in function_contexts(module):
        for node in walk_body(entry.traced.node):
            check = RuntimeCheck.of(node) if isinstance(node, ast.Assert | ast.If) and node.lineno == seen.line \
                else None
            if check is not None and entry.values_at(check.statement).is_traced(check.test) \
                    and not isinstance(staging(module, entry, check), str):
                return True
    return False


@dataclass(frozen=True)
class _ShiftedRange:
    """``jnp.arange(c - 1, c + 1)``: both bounds one traced value plus Python numbers, so the
    length is static though neither bound is -- ``jnp.arange(-1, 1) + c`` computes the same
    elements with a static range (a window around a traced centre)."""

    call: ast.Call
    base: ast.expr
    fixed: str  # the shifted range, as written

    @staticmethod
    def of(node: ast.AST, module: ModuleContext, values: ValueAnalysis) -> _ShiftedRange | None:
        if not (isinstance(node, ast.Call) and module.imports.resolve(node.func) == "jax.numpy.arange"
                and len(node.args) in (2, 3) and not node.keywords):
            return None
        first, second = (_base_and_offset(bound, module, values) for bound in node.args[:2])
        if first is None or second is None:
            return None
        (base, start), (other_base, stop) = first, second
        if ast.dump(base) != ast.dump(other_base) or not values.is_traced(base) or not _pure(base) \
                or len(node.args) == 3 and not _python_number(node.args[2], values):
            return None
        step = [module.segment(node.args[2])] if len(node.args) == 3 else []
        bounds = [stop] if start == "0" and not step else [start, stop, *step]
        fixed = f"{module.segment(node.func)}({', '.join(bounds)}) + {module.segment(base)}"
        return _ShiftedRange(node, base, fixed if whole_slot(module, node) else f"({fixed})")

    def finding(self, rule: Rule, module: ModuleContext, traced: TracedFunction) -> Finding:
        start, end = module.span_of(self.call)
        fixed = self.fixed

        def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            return cst.parse_expression(fixed)

        fix = Fix(Safety.SAFE, "shift a static range", [Edit(start, cst.Call, replace, end=end)])
        return rule.finding(module, self.call, f"`{module.segment(self.call)}` in `{traced.qualname}` needs "
                            f"Python bounds, but both move with the traced `{module.segment(self.base)}` while the "
                            f"length does not: shift a static range (`{fixed.strip('()')}`)", fix, function=traced)


def _base_and_offset(bound: ast.expr, module: ModuleContext,
                     values: ValueAnalysis) -> tuple[ast.expr, str] | None:
    """A bound as one value plus Python numbers, and the numbers' sum as written: ``c + 1``
    -> (c, ``1``), ``c - w + 1`` -> (c, ``-w + 1``), ``1 + c`` -> (c, ``1``), ``c`` -> (c,
    ``0``); None unless exactly one term, added, is not a Python number."""
    terms: list[tuple[bool, ast.expr]] = []  # (subtracted, term)

    def collect(expr: ast.expr, subtracted: bool) -> None:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
            collect(expr.left, subtracted)
            collect(expr.right, subtracted != isinstance(expr.op, ast.Sub))
        else:
            terms.append((subtracted, expr))

    collect(bound, False)
    moving = [(subtracted, term) for subtracted, term in terms if not _python_number(term, values)]
    if len(moving) != 1 or moving[0][0]:
        return None
    offset = ""
    for subtracted, term in terms:
        if term is moving[0][1]:
            continue
        text = module.segment(term)
        if not isinstance(term, ast.Name | ast.Constant | ast.Attribute | ast.Call | ast.Subscript):
            text = f"({text})"
        offset += (" - " if subtracted else " + ") + text if offset else ("-" if subtracted else "") + text
    return moving[0][1], offset or "0"


def _python_number(expr: ast.AST, values: ValueAnalysis) -> bool:
    """A static value: in a bound's sum, a Python number (were it anything else, the sum would
    fail as written too)."""
    return values.verdict(expr).static


def _pure(expr: ast.AST) -> bool:
    """A value read twice is read the same: a name, an attribute or an item by a literal."""
    if isinstance(expr, ast.Name):
        return True
    if isinstance(expr, ast.Attribute):
        return _pure(expr.value)
    return isinstance(expr, ast.Subscript) and _pure(expr.value) and isinstance(expr.slice, ast.Constant)


def _static_items(node: ast.AST, module: ModuleContext, entry: FunctionContext,
                  statement: ast.stmt) -> Iterator[tuple[str, ast.expr]]:
    """The places of ``node`` that need a Python value; a shape written as a display (``(n,
    m)``) whose traced items are not all parameters made static is taken item by item
    (``jnp.ones((count,))`` with ``count = jnp.add(x.size, 1)``: the item is what to fix)."""
    for place, expr in static_places(node, module.imports.resolve, module.segment):
        if isinstance(expr, ast.Tuple | ast.List) and expr.elts \
                and not any(isinstance(item, ast.Starred) for item in expr.elts):
            values = entry.values_at(statement)
            if values.is_traced(expr) and parameters_behind(expr, entry.traced.traced_params, values, entry.traced,
                                                           entry.arrays.bindings) is None:
                yield from ((f"an item of {place}", item) for item in expr.elts)
                continue
        yield place, expr


def _truth_only_parameters(traced: TracedFunction) -> dict[str, tuple[ast.expr, ast.stmt]]:
    """Traced parameters the function uses only for their truth (``if training:``, ``x if
    flag else y``, ``not verbose``, ``while keep_going``, or passed on to a helper of the module
    that uses it only so), with the first test: a flag, which a caller passes as a Python
    bool. A container's truth is Python's, but a container would be read some other way too;
    only ever tested, the value is one bool."""
    candidates = set(traced.traced_params) & set(parameter_names(traced.node))
    tests: dict[str, tuple[ast.expr, ast.stmt]] = {}
    reads: dict[str, int] = {}
    for node, statement in own_expressions(traced.node):
        if isinstance(node, ast.Name) and node.id in candidates and isinstance(node.ctx, ast.Load):
            reads[node.id] = reads.get(node.id, 0) + 1
            test = _truth_test_of(node, statement, lambda name: _helper_def(traced, name))
            if test is None:
                candidates.discard(node.id)
            else:
                tests.setdefault(node.id, (test, statement))
    for node in nodes_of(traced.node):  # bound again, or read by a nested function: not only a flag
        if isinstance(node, ast.Name) and node.id in candidates:
            if isinstance(node.ctx, ast.Store | ast.Del):
                candidates.discard(node.id)
            else:
                reads[node.id] = reads.get(node.id, 0) - 1
    return {name: test for name, test in tests.items() if name in candidates and reads.get(name) == 0}


def _helper_def(traced: TracedFunction, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    program = traced.program
    scopes = getattr(program, "scopes", None)
    return scopes.lookup(traced.node, name) if scopes is not None else None


def _truth_test_of(name: ast.Name, statement: ast.stmt,
                   helper: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None],
                   depth: int = 0) -> ast.expr | None:
    """The test of ``statement`` (an ``if``, ``while``, or an expression's ``... if t else
    ...``) whose truth ``name`` decides alone or through ``not``/``and``/``or``, or the call
    that passes it to a helper using it only so; None when the name is read any other way."""
    parents: dict[int, ast.AST] = {}
    for holder in ast.walk(statement):
        for child in ast.iter_child_nodes(holder):
            parents[id(child)] = holder
    node: ast.expr = name
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not) or isinstance(parent, ast.BoolOp):
            node = parent
            continue
        if isinstance(parent, ast.If | ast.While | ast.IfExp) and parent.test is node:
            return node
        if node is name and isinstance(parent, ast.Call) and depth < 2 \
                and _flag_of_helper(parent, name, helper, depth):
            return parent
        return None


def _flag_of_helper(call: ast.Call, argument: ast.Name,
                    helper: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None], depth: int) -> bool:
    """Whether ``call`` passes ``argument`` to a def of the module whose parameter there is
    used only for its truth."""
    if not isinstance(call.func, ast.Name) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(keyword.arg is None for keyword in call.keywords):
        return False
    definition = helper(call.func.id)
    if definition is None:
        return False
    positional = [arg.arg for arg in (*definition.args.posonlyargs, *definition.args.args)]
    parameter = next((positional[index] for index, value in enumerate(call.args)
                      if value is argument and index < len(positional)), None) \
        or next((keyword.arg for keyword in call.keywords if keyword.value is argument), None)
    if parameter is None:
        return False
    loads = [node for node in ast.walk(definition) if isinstance(node, ast.Name) and node.id == parameter]
    if not loads or any(not isinstance(node.ctx, ast.Load) for node in loads):
        return False
    own = {id(node): statement for node, statement in own_expressions(definition)}
    return all(id(node) in own and _truth_test_of(node, own[id(node)], helper, depth + 1) is not None
               for node in loads)


def _string_parameter(node: ast.AST, traced: TracedFunction) -> ast.Name | None:
    """A parameter of a jitted function compared with a string (``mode == "sum"``, ``mode in
    ("sum", "mean")``): its callers pass strings. (Whatever it holds, the test itself is a
    Python bool.)"""
    if not isinstance(node, ast.Compare) or not traced.jit_sites:
        return None
    operand = compared_with_text(node)
    if isinstance(operand, ast.Name) and operand.id in parameter_names(traced.node):
        return operand
    return None


def _fixed_width_slice(node: ast.AST, bound: ast.AST, module: ModuleContext) -> str:
    """For a bound of a one-dimensional slice of a width the code fixes (`x[i:i + 3]`), the
    jit-friendly way to take it at a traced start, which differs where Python's slice would
    be cut short at the end; else ''."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and node.slice.step is None
            and bound in (node.slice.lower, node.slice.upper)):
        return ""
    lower, upper = node.slice.lower, node.slice.upper
    if not (isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add) and lower is not None
            and ast.dump(upper.left) == ast.dump(lower) and isinstance(upper.right, ast.Constant)
            and type(upper.right.value) is int and upper.right.value > 0):
        return ""
    call = f"lax.dynamic_slice_in_dim({module.segment(node.value)}, {module.segment(lower)}, {upper.right.value})"
    return (f"; or, for one compilation, `{call}` (it clamps the start so that {upper.right.value} elements fit, "
            "where Python's slice would be shorter, or count a negative start from the end)")


class DataDependentShape(Rule):
    code = "JF506"
    name = "data-dependent-shape"
    summary = "a result whose length depends on the data (boolean masks, `jnp.nonzero` without `size=`) cannot be traced"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds, in traced code, indexing with a traced boolean mask (`x[x > 0]`, `x[mask]` with "
        "`mask = jnp.isnan(x)`, `x.at[mask]`), and calls of the jnp functions whose result is as long "
        "as the data says (`jnp.nonzero`, `argwhere`, `flatnonzero`, `unique`, `union1d`, "
        "`compress`, `extract`, one-argument `jnp.where`, ...) without `size=`, and comprehensions "
        "whose `if` tests a traced array (`[a for a in xs if a > 0]`). A reduction of the "
        "selection (`x[x > 0].sum()`, `jnp.mean(x[mask])`, `a[jnp.nonzero(a)].prod()`) becomes the "
        "reduction with `where=` (`where=a != 0` for the nonzero elements), and so does a reduction of "
        "element-by-element arithmetic on selections by one mask (`((x[x > 0] - 1.0) ** 2).mean()`, or "
        "`p, t = pred[valid], target[valid]` then `jnp.mean((p - t) ** 2)`), computed on the whole arrays; a "
        "write through the mask (`x.at[x < 5].set(0)`, `.add`, `.multiply`, `.min`, `.max`) becomes "
        "`jnp.where(mask, new, x)`, and so does a write through the indices of its true elements "
        "(`x.at[jnp.where(x < 0)]`, `x.at[jnp.nonzero(m)]`, or `rows, cols = jnp.where(m)` then "
        "`x.at[rows, cols]`). A count of what a mask selects (`len(x[m])`, `x[m].shape[0]`, "
        "`jnp.nonzero(m)[0].size`, `len(jnp.argwhere(m))`) becomes `jnp.count_nonzero(m)`. Indices read only "
        "at their first positions (`jnp.where(x > t)[0][0]`, `i, j = jnp.where(m)` then `i[0], j[0]`, "
        "`jnp.argwhere(m)[0]`) get `size=` one past the last position read.",
        why="Shapes are fixed when a function is traced: the number of elements a traced mask "
        "selects is not known then, so jit and vmap raise `NonConcreteBooleanIndexError` (or "
        "`ConcretizationTypeError`).",
        example="@jax.jit\ndef positive_mean(x):\n    return x[x > 0].mean()\n",
        fixed="@jax.jit\ndef positive_mean(x):\n    return x.mean(where=x > 0)\n",
        safety="Safe where fixed: `sum`, `mean`, `prod`, `var`, `std`, `any` or `all` of `x[mask]`, "
        "with no other argument, where the mask is an elementwise expression of `x` itself (`x > 0`, "
        "`~jnp.isnan(x)`, or a name bound once to one): the mask then has `x`'s shape, and the "
        "reduction over the selected elements is the reduction of `x` with `where=mask` (an empty "
        "selection too: 0, NaN for a mean, as before; the sum may round differently in the last bit, as "
        "the order of additions changes). Reported, not fixed: any other use of the selection -- the "
        "shape-keeping form depends on it (`jnp.where(mask, x, 0)`, or `size=` with a static upper bound "
        "and `fill_value=`, which pads the result to that length). "
        "Arithmetic on selections (`+ - * / // % **`, comparisons, negation, jnp's elementwise functions, Python "
        "numbers), reduced by `sum`, `mean`, `prod`, `var`, `std`, `any` or `all`, is fixed where every selection "
        "is by one mask that is an elementwise expression of the array it selects from (so of its shape): the "
        "arithmetic pairs the selected elements one for one, so on the whole arrays it gives the same values at "
        "the selected places, and `where=` keeps only those (the others may be -inf or NaN: a log of 0; `where=` "
        "selects them out, it does not multiply). A name bound to a selection goes with its binding where only "
        "the reduction reads it and nothing between rebinds what the selection reads; its comments move above "
        "the reduction's statement. In a differentiated function only arithmetic linear in the selections is fixed "
        "(`2 * x[m] - x[m] / 4`): otherwise the elements left out would get a gradient of 0 times the "
        "arithmetic's derivative there, NaN where that is infinite, so it is reported. "
        "A write `x.at[mask].set(v)` is "
        "`jnp.where(mask, v, x)` when the mask has `x`'s shape and `v` keeps `x`'s dtype: fixed where "
        "the mask is an elementwise test of `x` itself, or the mask and `x` are both computed element by element "
        "from one value and Python numbers (`out = 2 * x - 1` with `jnp.abs(x) < 1`), and `v` is an int literal, "
        "or `y[mask]` where `x` is arithmetic of `y` (`out.at[m].set(y[m])` -> `jnp.where(m, y, out)`, which "
        "keeps `out`'s dtype); or where `jitfix run` saw "
        "the shapes and dtypes at that line (the mask's names broadcast to `x`'s shape; `v` a Python "
        "number, a scalar of `x`'s dtype, or `y[mask]` with `y` of `x`'s shape and dtype, which selects "
        "`y`). A mask of fewer dimensions selects whole rows, and a float would make an int array "
        "float: those stay reported. Where `jitfix run` saw the mask of the shape of the array's leading "
        "dimensions (`labels == j` of shape (60,) on `X` of (60, 2)), the selection holds whole rows: a "
        "reduction of it with no axis or an `axis=` of the selection (`X[labels == j].mean(axis=0)`) is the "
        "reduction of the array over the mask's dimensions with `where=` the mask broadcast over the rest "
        "(`X.mean(axis=0, where=(labels == j)[:, None])`; an empty selection gives the same NaN mean); a write "
        "through such a mask is `jnp.where` with the mask broadcast so (`jnp.where((~mask)[..., None], v, X)`), "
        "and one through a mask after slices (`x.at[:4, m].set(0)`, `m` seen of the shape of `x`'s next axes) "
        "writes the sliced block (`x.at[:4].set(jnp.where(m, 0, x[:4]))`). Without a run, the code's "
        "ranks decide the same where they prove which axes a boolean mask covers (an index with one works "
        "only where the mask has the shape of those axes): ranks exact or relative to a parameter's "
        "(`x.at[:4, jnp.mod(x[0], 2) == 0]`, `x.at[x.sum(axis=1) > 10]`), a float written where the array is "
        "certainly inexact (a division, `jnp.std`), and for a private helper what every call of the module "
        "gives its parameters (a rank, a float array, a number); for a public helper that is an unsafe fix, "
        "as other modules may call it otherwise. "
        "The indices of a mask's true elements (`jnp.nonzero(m)`, one-argument `jnp.where(m)`) select "
        "what the mask does, each once: a write through them is the write through `m`, judged as above; "
        "where they were bound to names (`idx = jnp.nonzero(m)`, `i, j = jnp.where(m)`) that the write alone "
        "reads, in a simple statement of the same block with nothing between rebinding what `m` reads, the "
        "binding goes too, its comments above the write. "
        "A count is the number of elements the mask holds true, which `jnp.count_nonzero(m)` gives "
        "without selecting them: `len(x[m])` and `x[m].shape[0]` for any mask of `x`'s leading axes (the "
        "selection has one row per true element), `x[m].size` only where `m` has `x`'s shape, the length of "
        "one axis's indices from `jnp.nonzero`/one-argument `jnp.where`, of `jnp.flatnonzero`, and the rows "
        "of `jnp.argwhere`. It is a traced integer instead of a Python `int`: the same number in arithmetic; "
        "where a Python value is needed (a shape, `range`) it still fails, and is reported there. "
        "`size=1` for indices read only at position 0 is safe: where the mask holds a true element the index is the "
        "same, and with none the original raised (an index into an empty array) where the rewrite reads the "
        "padding, `fill_value` (0). Later positions (`idx[1]`, `size=2`) are an unsafe fix: with fewer true "
        "elements the original reads the last of them (JAX clamps an index past the end), the rewrite the "
        "padding; so is `size=` the mask's size for a position the code computes (`jnp.where(m)[0][n]`, "
        "JAX's advice in jax#9578), spelled `m.size` or the size of the one name an elementwise test "
        "is made of (a parameter never rebound, or a local bound once). Read any other way (returned, counted, iterated, from the end), the padding would show: "
        "reported. "
        "Item assignment through a mask (`x[mask] = 0`) is JF603's.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            traced = entry.traced
            stores = {id(target) for node in walk_body(traced.node) if isinstance(node, ast.Assign | ast.AugAssign)
                      for target in (node.targets if isinstance(node, ast.Assign) else [node.target])}
            expressions = list(own_expressions(traced.node))
            reductions = {id(selection): call for call, _ in expressions if isinstance(call, ast.Call)
                          and (selection := _reduced_selection(call, module)) is not None
                          and _selects_elementwise(selection, entry, traced, module)}
            # `X[labels == j].mean(axis=0)`, where a run saw the mask select X's rows
            rows = {id(row.selection): row for call, _ in expressions if isinstance(call, ast.Call)
                    and id(call) not in reductions.values()
                    and (row := RowReduction.of(call, module, seen_at(traced, call))) is not None}
            # `x[jnp.nonzero(m)]` selects what `x[m]` does: reduced, it is fixed as a mask is
            nonzero_reduced = {id(node.slice): node for node, _ in expressions if isinstance(node, ast.Subscript)
                               and id(node) in reductions and _nonzero_mask(node.slice, module) is not None}
            # `jnp.sum(mu - n + n * jnp.log(n / mu))` of `n, mu = observed[keep], expected[keep]`
            arithmetic = {id(selection): masked for call, statement in expressions if isinstance(call, ast.Call)
                          and (masked := MaskedReduction.of(call, entry, module)) is not None
                          and entry.values_at(statement).is_traced(masked.mask)
                          for selection in masked.selections}
            found_arithmetic: set[int] = set()
            writes = {id(write.selection): write for call, _ in expressions if isinstance(call, ast.Call)
                      and (write := MaskedWrite.of(call, module, traced.node)) is not None}
            reported = {id(node) for node, statement in expressions if isinstance(node, ast.Subscript)
                        and id(node) in writes and self._traced_mask(writes[id(node)], entry, module, statement)}
            # `jnp.where(m)` of `x.at[jnp.where(m)]` (or bound to the names it indexes with): found as the write
            written_through = {id(writes[selection].indices) for selection in reported}
            parents = parents_in(traced.node)
            counted: set[int] = set()  # the selections and calls inside a count found (`len(x[m])`)
            for node, statement in expressions:
                if id(node) in counted:
                    continue
                count = _selection_count(node, parents, module, entry)
                if count is not None and entry.values_at(statement).is_traced(count.mask):
                    counted.update(id(inner) for inner in ast.walk(count.node))
                    yield self._count_finding(module, count, traced)
                    continue
                if isinstance(node, ast.Subscript) and id(node) in reported:
                    write = writes[id(node)]
                    yield self._write_finding(module, write, entry, write.seen(traced, module.imports), statement)
                elif isinstance(node, ast.Call) and id(node) in nonzero_reduced:
                    if entry.values_at(statement).is_traced(node):
                        selection = nonzero_reduced[id(node)]
                        yield self._mask_finding(module, selection, traced, reductions[id(selection)],
                                                 entry.arrays.bindings)
                elif isinstance(node, ast.Subscript) and id(node) in arithmetic:
                    masked = arithmetic[id(node)]
                    if id(masked.call) not in found_arithmetic:
                        found_arithmetic.add(id(masked.call))
                        yield self._arithmetic_finding(module, masked, traced)
                elif isinstance(node, ast.Subscript) and id(node) in rows \
                        and entry.values_at(statement).is_traced(node.slice):
                    yield self._row_finding(module, rows[id(node)], traced)
                elif isinstance(node, ast.Subscript) and id(node) not in stores \
                        and (mask := _mask_in_index(node, module, entry)) is not None \
                        and entry.values_at(statement).is_traced(mask):
                    yield self._mask_finding(module, node, traced, reductions.get(id(node)) if mask is node.slice
                                             else None, entry.arrays.bindings)
                elif isinstance(node, ast.comprehension):
                    yield from self._filter_findings(module, node, entry, statement)
                elif isinstance(node, ast.Call) and id(node) not in written_through and _sized_by_data(node, module) \
                        and any(entry.values_at(statement).is_traced(argument) for argument in node.args):
                    yield self._sized_finding(module, node, parents, entry)

    def _sized_finding(self, module: ModuleContext, call: ast.Call, parents: Mapping[int, ast.AST],
                       entry: FunctionContext) -> Finding:
        """``jnp.nonzero(m)`` and its kind without ``size=``: fixed where only positions of the
        result are read (``jnp.where(m)[0][0]``), else reported."""
        traced = entry.traced
        message = (f"`{module.segment(call.func)}(...)` in `{traced.qualname}` returns as many elements as the data "
                   "holds, which is not known while tracing, so it raises under jit")

        def is_traced(node: ast.expr) -> bool:
            statement = statement_holding(traced.node, node)
            return statement is not None and entry.values_at(statement).is_traced(node)

        leading = leading_indices(call, module.imports.resolve(call.func), parents, traced.node, is_traced)
        fix = leading.fix(module, traced.node) if leading is not None else None
        if fix is None:
            return self.finding(module, call, f"{message}; not auto-fixable: pass `size=` (a static upper bound; the "
                                "result is padded with `fill_value=`, which all that reads it then sees)",
                                function=traced)
        return self.finding(module, call, f"{message}; the code reads it by position only: {fix.description}", fix,
                            function=traced)

    def _count_finding(self, module: ModuleContext, count: SelectionCount, traced: TracedFunction) -> Finding:
        message = (f"`{module.segment(count.node)}` in `{traced.qualname}` counts what a traced mask selects: "
                   "the selection's length is not known while tracing, so it raises under jit; count "
                   f"them with `jnp.count_nonzero({module.segment(count.mask)})`, which is traced as it is")
        fix = Fix(Safety.SAFE, "count with jnp.count_nonzero", [count.edit(module)])
        return self.finding(module, count.node, message, fix, function=traced)

    @staticmethod
    def _traced_mask(write: MaskedWrite, entry: FunctionContext, module: ModuleContext, statement: ast.stmt) -> bool:
        """Whether the write's mask is a boolean mask and traced where the write is."""
        return _is_mask(write.mask, entry, module, write.seen(entry.traced, module.imports)) \
            and entry.values_at(statement).is_traced(write.mask)

    def _filter_findings(self, module: ModuleContext, node: ast.comprehension, entry: FunctionContext,
                         statement: ast.stmt) -> Iterator[Finding]:
        """A comprehension's `if` on a traced array (`[a for a in xs if a > 0]`): it takes the
        test's truth, and what it keeps is as long as the data says."""
        values = entry.values_at(statement)
        for test in node.ifs:
            if values.is_traced(test) and entry.arrays.certain_truth(test, values):
                yield self.finding(module, test, f"the comprehension's `if {module.segment(test)}` in "
                                   f"`{entry.traced.qualname}` keeps the elements a traced test picks: how many is "
                                   "not known while tracing, so it raises under jit; not auto-fixable: keep every "
                                   "element and mask the rest (`jnp.where(test, a, 0)`, a reduction's `where=`)",
                                   function=entry.traced)

    def _mask_finding(self, module: ModuleContext, node: ast.Subscript, traced: TracedFunction,
                      reduction: ast.Call | None, bindings: Mapping[str, Sequence[ast.AST | None]]) -> Finding:
        how = "the indices of the nonzero elements of a traced array" if _nonzero_mask(node.slice, module) \
            else "a traced boolean mask"
        message = (f"`{module.segment(node)}` in `{traced.qualname}` indexes with {how}: how many "
                   "elements it selects is not known while tracing, so it raises under jit")
        if reduction is None:
            return self.finding(module, node, message + "; not auto-fixable: keep the shape with a reduction's "
                                "`where=` (`x.sum(where=mask)`) or `jnp.where(mask, x, 0)`", function=traced)
        fix = Fix(Safety.SAFE, "reduce with where=", [_where_edit(module, reduction, bindings)])
        return self.finding(module, node, message + "; reduce the whole array with `where=` the mask", fix,
                            function=traced)


    def _arithmetic_finding(self, module: ModuleContext, masked: MaskedReduction, traced: TracedFunction) -> Finding:
        selections = ", ".join(f"`{module.segment(selection)}`" for selection in masked.selections)
        message = (f"{selections} in `{traced.qualname}` {'index' if len(masked.selections) > 1 else 'indexes'} with "
                   "a traced boolean mask: how many elements it selects is not known while tracing, so it raises "
                   f"under jit")
        if traced.differentiated and not masked.linear:
            return self.finding(module, masked.selections[0], f"{message}; not auto-fixable: `{traced.qualname}` is "
                                "differentiated, and reducing the arithmetic of the whole arrays with `where=` would "
                                "give the elements the mask leaves out a gradient of 0 times the arithmetic's "
                                "derivative there, NaN where that is not finite (a log or a division at 0); keep "
                                "them out of the arithmetic too (`jnp.where(mask, x, 1.0)` where 1.0 is safe)",
                                function=traced)
        fix = Fix(Safety.SAFE, "reduce with where=", masked.edits(module, traced.node))
        return self.finding(module, masked.selections[0], f"{message}; compute `{module.segment(masked.operand)}` "
                            "on the whole arrays and reduce with `where=` the mask", fix, function=traced)

    def _row_finding(self, module: ModuleContext, row: RowReduction, traced: TracedFunction) -> Finding:
        message = (f"`{module.segment(row.selection)}` in `{traced.qualname}` indexes with a traced boolean mask "
                   f"of its rows (a run saw `{module.segment(row.selection.slice)}` of shape {row.mask_shape} and "
                   f"`{row.array}` of shape {row.array_shape}): how many rows it selects is not known while tracing, "
                   "so it raises under jit; reduce the whole array with `where=` the mask, broadcast over the rows")
        fix = Fix(Safety.SAFE, "reduce with where=", [row.edit(module)])
        return self.finding(module, row.selection, message, fix, function=traced)

    def _write_finding(self, module: ModuleContext, write: MaskedWrite, entry: FunctionContext,
                       seen: dict[str, SeenArray], statement: ast.stmt) -> Finding:
        through = "a traced boolean mask" if write.indices is None else \
            f"the indices of the elements the traced mask `{module.segment(write.mask)}` holds true"
        message = (f"`{module.segment(write.call)}` in `{entry.traced.qualname}` writes through {through}: how many "
                   "elements it selects is not known while tracing, so it raises under jit")
        new, why_not = write.selected_value(module, entry, seen, statement)
        unsafe = ""
        if new is None and write.selected_value(module, entry, seen, statement, public_callers=True)[0] is not None:
            new, unsafe = write.value, (f" (unsafe: `{entry.traced.qualname}` is public, and other modules may give it "
                                        "arrays of other ranks or dtypes than this module's calls do)")
        if new is None:  # (what it selects, `new`, the edit reads off the write again)
            return self.finding(module, write.selection, f"{message}; not auto-fixable: {why_not}",
                                function=entry.traced)
        trailing, rank = write.axes(seen, module, entry, public_callers=bool(unsafe))
        edits = [_masked_write_edit(module, write, trailing, rank)]
        if write.binding is not None:  # the indices are the mask's now: their binding goes
            edits += inlined_edits(module, write.binding, write.call, entry.traced.node)
        fix = Fix(Safety.UNSAFE if unsafe else Safety.SAFE, "select with jnp.where" + unsafe, edits)
        return self.finding(module, write.selection, f"{message}; select with `jnp.where(mask, new, old)`, "
                            f"which keeps the shape{unsafe}", fix, function=entry.traced)


def _mask_in_index(node: ast.Subscript, module: ModuleContext, entry: FunctionContext) -> ast.expr | None:
    """The boolean mask ``node`` indexes with: its whole index (``x[x > 0]``) or one part of a
    tuple index (``x.at[:4, row > 0]``, which selects as many columns as the data says too)."""
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return next((part for part in parts if is_boolean_mask(part, module.imports, entry.arrays.bindings, entry.masks)), None)


def _is_mask(mask: ast.expr, entry: FunctionContext, module: ModuleContext, seen: dict[str, SeenArray]) -> bool:
    """A boolean mask by its form (`x > 0`, a name bound to one), or a name a run saw holding one."""
    if isinstance(mask, ast.Name) and mask.id in seen:
        return seen[mask.id].dtype == "bool"
    return is_boolean_mask(mask, module.imports, entry.arrays.bindings, entry.masks)


# `x.at[mask].OP(v)` -> the value each selected element takes (`{x}` the old one, `{v}` v's).
_MASKED_UPDATES = {"set": "{v}", "add": "{x} + {v}", "multiply": "{x} * {v}", "mul": "{x} * {v}",
                   "min": "{jnp}.minimum({x}, {v})", "max": "{jnp}.maximum({x}, {v})"}


@dataclass(frozen=True)
class MaskedWrite:
    """``x.at[mask].OP(v)``: ``x`` a name, one positional value, no keywords."""

    call: ast.Call
    selection: ast.Subscript  # x.at[mask] (or x.at[:4, mask])
    array: ast.Name
    mask: ast.expr
    operation: str
    value: ast.expr
    prefix: tuple[ast.Slice, ...] = ()  # the slices before the mask (`:4` of `x.at[:4, mask]`)
    # The index as written where it is not the mask itself: `jnp.where(m)` (or `jnp.nonzero(m)`)
    # of `x.at[jnp.where(m)]`, the indices of the elements `m` holds true, which select what `m` does.
    indices: ast.Call | None = None
    # Where those indices were bound to names the write alone reads (`i, j = jnp.where(m)`
    # before `x.at[i, j]`): the statement goes with the rewrite.
    binding: ast.Assign | None = None

    @property
    def index(self) -> ast.expr:
        """The index at the mask's place, as written: the mask, the call giving its indices, or
        the names they were bound to."""
        if self.binding is not None:
            return self.selection.slice
        return self.indices if self.indices is not None else self.mask

    @staticmethod
    def of(call: ast.Call, module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef
           ) -> MaskedWrite | None:
        method = call.func
        if not (isinstance(method, ast.Attribute) and method.attr in _MASKED_UPDATES and len(call.args) == 1
                and not call.keywords and not isinstance(call.args[0], ast.Starred)):
            return None
        selection = method.value
        if not (isinstance(selection, ast.Subscript) and isinstance(selection.value, ast.Attribute)
                and selection.value.attr == "at" and isinstance(selection.value.value, ast.Name)
                and not isinstance(selection.slice, ast.Slice)):
            return None
        array, operation, value = selection.value.value, method.attr, call.args[0]
        index = selection.slice
        binding = _indices_bound_for(index, call, module, function)
        if binding is not None:  # idx = jnp.nonzero(m) ... x.at[idx]; i, j = jnp.where(m) ... x.at[i, j]
            assert isinstance(binding.value, ast.Call)
            return MaskedWrite(call, selection, array, binding.value.args[0], operation, value, indices=binding.value,
                               binding=binding)
        if isinstance(index, ast.Tuple):  # x.at[:4, mask]: slices, then the mask
            *prefix, mask = index.elts
            if not prefix or not all(isinstance(part, ast.Slice) for part in prefix) or isinstance(mask, ast.Slice):
                return None
            return MaskedWrite(call, selection, array, mask, operation, value, tuple(prefix))  # type: ignore[arg-type]
        nonzero = _nonzero_mask(index, module)
        if nonzero is not None:  # x.at[jnp.where(m)]
            assert isinstance(index, ast.Call)
            return MaskedWrite(call, selection, array, nonzero, operation, value, indices=index)
        return MaskedWrite(call, selection, array, index, operation, value)

    def trailing_axes(self, seen: dict[str, SeenArray], imports) -> int | None:
        """How many axes of the array follow those the mask covers, where a run saw the mask
        of the shape of the array's axes after the prefix (``m`` of (n,) on ``x`` of (n, d):
        one, ``m[:, None]`` broadcasts); None where it did not."""
        array = seen.get(self.array.id)
        mask = seen_shape(self.mask, seen, imports)
        if array is None or mask is None or not mask:
            return None
        start = len(self.prefix)
        covered = array.shape[start:start + len(mask)]
        return len(array.shape) - start - len(mask) if covered == mask else None

    def static_axes(self, module: ModuleContext, entry: FunctionContext, public_callers: bool = False
                    ) -> tuple[int, int] | None:
        """(the array's axes after those the mask covers, the mask's rank where it is a number,
        else 0) as the code's ranks prove them (``x.at[:4, jnp.mod(x[0], 2) == 0]``: the mask has
        ``x``'s rank less one, and covers the axis after the slice); None where they do not. A
        boolean index works only where the mask has the shape of the axes it covers, so where
        the original works, that is the mask's shape."""
        facts = static_arrays(module, public_callers)
        function = entry.traced.node
        if isinstance(function, ast.Lambda) or self.indices is not None:
            return None  # (indices of another array's mask out of this one's range are dropped, not raised)
        mask, array = facts.rank(self.mask, function), facts.rank(self.array, function)
        if mask is None or array is None or mask[0] != array[0]:
            return None
        trailing = array[1] - len(self.prefix) - mask[1]
        return (trailing, mask[1] if mask[0] is None else 0) if trailing >= 0 else None

    def axes(self, seen: dict[str, SeenArray], module: ModuleContext, entry: FunctionContext,
             public_callers: bool = False) -> tuple[int, int]:
        """(trailing axes, the mask's rank) for the rewrite: what a run saw, else what the code proves."""
        trailing = self.trailing_axes(seen, module.imports)
        if trailing is not None:
            return trailing, len(seen_shape(self.mask, seen, module.imports) or ()) if trailing else 0
        return self.static_axes(module, entry, public_callers) or (0, 0)

    def seen(self, traced: TracedFunction, imports: ImportTable) -> dict[str, SeenArray]:
        """What a run saw the traced names hold at the write's lines (empty without a run), and
        what follows from what it saw before: a parameter the function never rebinds holds
        what the run saw it hold at any line, and a name last bound, before the write, by an
        assignment of the function's own body (not in a branch or loop) the array its value
        makes of those (``mask = jnp.ones(x[:, 0].shape)``)."""
        found = seen_at(traced, self.call)
        if not traced.seen.types:
            return found
        function = traced.node
        parameters = set(parameter_names(function)) - assigned_names(function.body)
        for line, names in traced.seen.types.items():
            for name, text in names.items():
                array = SeenArray.parse(text)
                if name in parameters and array is not None and not array.python:
                    found.setdefault(name, array)
        at_write = set(found)
        for statement in function.body:
            if statement.lineno >= self.call.lineno:
                break
            for name in assigned_names([statement]) - at_write:
                found.pop(name, None)  # what it held before this statement
            made = made_array(statement.value, found, imports) if isinstance(statement, ast.Assign) \
                and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) else None
            if made is not None and statement.targets[0].id not in at_write:  # type: ignore[attr-defined]
                found[statement.targets[0].id] = made  # type: ignore[attr-defined]
        return found

    def selected_value(self, module: ModuleContext, entry: FunctionContext, seen: dict[str, SeenArray],
                       statement: ast.stmt, public_callers: bool = False) -> tuple[ast.expr | None, str]:
        """The value ``jnp.where`` selects where the mask holds (None, and why not: the mask may
        not have the array's shape, or the value may change the array's dtype or shape).
        ``jnp.where(mask, v, x)`` is ``x.at[mask].set(v)`` when the mask has ``x``'s shape and
        ``v`` is a scalar that keeps ``x``'s dtype, or ``y[mask]`` with ``y`` of ``x``'s shape
        and dtype (then ``y`` is selected)."""
        array = seen.get(self.array.id)
        origin = ElementwiseOrigin(entry.traced.node, module.imports)
        if not self._mask_fits(module, entry, array, seen, origin, statement) \
                and not (array is None and self.static_axes(module, entry, public_callers) is not None):
            return None, (f"the mask may not have `{self.array.id}`'s shape (a mask of fewer dimensions selects "
                          "whole rows): write `jnp.where(mask, new, old)` with the mask broadcast to it")
        facts = static_arrays(module, public_callers)
        function = entry.traced.node
        value: ast.expr | None = self.value
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            value = value.operand
        if array is None and isinstance(value, ast.Name) and not isinstance(function, ast.Lambda):
            value = facts.number(value, function) or value  # a parameter every call gives a number
        if array is None and is_boolean_mask(self.array, module.imports, entry.arrays.bindings, entry.masks):
            return None, (f"`{self.array.id}` is a boolean array: `jnp.where` would make it a number's dtype where "
                          "`.at[]` casts the value to bool")
        if isinstance(value, ast.Constant) and type(value.value) is int:
            if array is None or array.dtype != "bool":
                return self.value, ""
        elif isinstance(value, ast.Constant) and type(value.value) is float:
            if array is not None and array.floating or array is None and not isinstance(function, ast.Lambda) \
                    and facts.inexact(self.array, function):
                return self.value, ""
            return None, (f"the float `{module.segment(self.value)}` would make an int `{self.array.id}` float: "
                          "`jnp.where` keeps the dtype only for a float array")
        elif isinstance(self.value, ast.Name) and array is not None and self.value.id in seen:
            if seen[self.value.id].keeps_dtype_of(array):
                return self.value, ""
        elif isinstance(self.value, ast.Subscript) and isinstance(self.value.value, ast.Name) \
                and ast.dump(self.value.slice) == ast.dump(self.index) and array is not None and not self.prefix \
                and self.trailing_axes(seen, module.imports) == 0 \
                and self.operation == "set" and self.value.value.id in seen:
            source = seen[self.value.value.id]
            if source == array:
                return self.value.value, ""
        elif isinstance(self.value, ast.Subscript) and isinstance(self.value.value, ast.Name) \
                and ast.dump(self.value.slice) == ast.dump(self.index) and array is None and self.operation == "set" \
                and origin.arithmetic_of(self.array, self.value.value.id, statement):
            return self.value.value, ""  # out.at[m].set(x[m]), out arithmetic of x: jnp.where(m, x, out)
        return None, (f"`{module.segment(self.value)}` may not be a scalar of `{self.array.id}`'s dtype "
                      "(`jnp.where` would broadcast or promote it where `.at[]` casts it)")

    def _mask_fits(self, module: ModuleContext, entry: FunctionContext, array: SeenArray | None,
                   seen: dict[str, SeenArray], origin: ElementwiseOrigin, statement: ast.stmt) -> bool:
        """The mask has the array's shape: a run saw both, the mask is an elementwise test
        of the array itself (`x.at[x < 5]`), both are computed element by element from the
        same value (`out.at[jnp.abs(x) < 1]` with `out = 2 * x - 1`), or both are parameters
        every call gives so (`zero_out(x, jnp.isnan(x))`)."""
        if array is not None:
            return self.trailing_axes(seen, module.imports) is not None
        if self.prefix:
            return False  # (which axes the mask covers needs the shapes a run saw)
        mask_roots = origin.roots(self.mask, statement)
        if mask_roots is not None and len(mask_roots) == 1 and origin.roots(self.array, statement) == mask_roots:
            return True
        bindings = entry.arrays.bindings
        rebound = len(bindings.get(self.array.id, ())) > (0 if self.array.id in parameter_names(entry.traced.node)
                                                           else 1)
        tests = any(isinstance(node, ast.Compare) or isinstance(node, ast.Call) for node in ast.walk(self.mask))
        return tests and selects_elementwise(self.mask, self.array.id, module.imports, bindings, rebound) \
            or entry.given_elementwise(self.mask, self.array.id)


# The functions whose result holds one index (or one row of indices) per nonzero element of
# their argument: as long as the argument has nonzero elements.
_INDICES_OF_NONZERO = frozenset({"jax.numpy.nonzero", "jax.numpy.where", "jax.numpy.argwhere",
                                 "jax.numpy.flatnonzero"})


@dataclass(frozen=True)
class SelectionCount:
    """``len(x[m])``, ``x[m].shape[0]``, ``jnp.nonzero(m)[0].size``, ``len(jnp.argwhere(m))``:
    how many elements a mask selects, as ``jnp.count_nonzero(m)`` says with no selection."""

    node: ast.expr  # the whole count, replaced
    mask: ast.expr

    def edit(self, module: ModuleContext) -> Edit:
        start, end = module.span_of(self.node)
        mask = module.segment(self.mask)
        node_types: dict[type, type[cst.CSTNode]] = {ast.Call: cst.Call, ast.Subscript: cst.Subscript,
                                                     ast.Attribute: cst.Attribute}
        node_type = node_types[type(self.node)]

        def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            source = f"{context.name('jax.numpy')}.count_nonzero({mask})"
            return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)  # type: ignore[attr-defined]

        return Edit(start, node_type, replace, imports=("jax.numpy",), end=end)


def _selection_count(node: ast.AST, parents: Mapping[int, ast.AST], module: ModuleContext,
                     entry: FunctionContext) -> SelectionCount | None:
    """The count of the elements a traced selection holds, where ``node`` is what is counted:
    ``x[m]`` (a boolean mask by its form) of ``len(x[m])`` or ``x[m].shape[0]`` -- and of
    ``x[m].size`` where ``m`` has ``x``'s shape --, or the indices of a mask's nonzero elements
    (``jnp.nonzero(m)[0]``, ``jnp.where(m)[1]``, ``jnp.flatnonzero(m)``, ``jnp.argwhere(m)``)
    counted so."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and not isinstance(node.slice, ast.Tuple) \
            and is_boolean_mask(node.slice, module.imports, entry.arrays.bindings, entry.masks):
        whole = _selects_elementwise(node, entry, entry.traced, module)
        counted = _counted(node, parents, whole_size=whole)
        return SelectionCount(counted, node.slice) if counted is not None else None
    if not (isinstance(node, ast.Call) and _sized_by_data(node, module) and len(node.args) == 1
            and module.imports.resolve(node.func) in _INDICES_OF_NONZERO and not node.keywords
            and not isinstance(node.args[0], ast.Starred)):
        return None
    indices: ast.expr = node
    if module.imports.resolve(node.func) in ("jax.numpy.nonzero", "jax.numpy.where"):
        row = parents.get(id(node))  # one axis's indices: `jnp.nonzero(m)[0]`
        if not (isinstance(row, ast.Subscript) and row.value is node and isinstance(row.slice, ast.Constant)
                and type(row.slice.value) is int and row.slice.value >= 0):
            return None
        indices = row
    counted = _counted(indices, parents, whole_size=module.imports.resolve(node.func) != "jax.numpy.argwhere")
    return SelectionCount(counted, node.args[0]) if counted is not None else None


def _counted(node: ast.expr, parents: Mapping[int, ast.AST], whole_size: bool) -> ast.expr | None:
    """``len(node)``, ``node.shape[0]``, or (``whole_size``: its elements are one per selected
    element) ``node.size``: the expression that counts ``node``'s rows."""
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len" \
            and parent.args == [node] and not parent.keywords:
        return parent
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "size" and whole_size:
        return parent
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "shape":
        above = parents.get(id(parent))
        if isinstance(above, ast.Subscript) and above.value is parent and isinstance(above.slice, ast.Constant) \
                and above.slice.value == 0 and type(above.slice.value) is int:
            return above
    return None


def _indices_bound_for(index: ast.expr, write: ast.Call, module: ModuleContext,
                       function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Assign | None:
    """The statement ``idx = jnp.nonzero(m)`` (or ``i, j = jnp.where(m)``) that bound the names
    the write ``x.at[idx]`` (``x.at[i, j]``) indexes with, where the write is all that reads
    them and nothing between the two rebinds what ``m`` reads: the write then selects what
    ``x.at[m]`` would, and the statement goes with it (its comments go above the write). It
    must be a line of its own."""
    names = [index] if isinstance(index, ast.Name) else index.elts if isinstance(index, ast.Tuple) else []
    if not names or not all(isinstance(name, ast.Name) for name in names):
        return None
    spelled = [name.id for name in names]  # type: ignore[attr-defined]
    stores = [node for node in nodes_of(function) if isinstance(node, ast.Name) and node.id in spelled
              and not isinstance(node.ctx, ast.Load)]
    loads = [node for node in nodes_of(function) if isinstance(node, ast.Name) and node.id in spelled
             and isinstance(node.ctx, ast.Load)]
    if len(stores) != len(spelled) or len(loads) != len(spelled) or len(set(spelled)) != len(spelled):
        return None
    parents = parents_in(function)
    binding = parents.get(id(stores[0]))
    if isinstance(binding, ast.Tuple):
        binding = parents.get(id(binding))
    if not (isinstance(binding, ast.Assign) and len(binding.targets) == 1 and isinstance(binding.value, ast.Call)
            and _nonzero_mask(binding.value, module) is not None):
        return None
    target = binding.targets[0]
    if [name.id for name in ([target] if isinstance(target, ast.Name) else getattr(target, "elts", []))
            if isinstance(name, ast.Name)] != spelled or isinstance(index, ast.Name) != isinstance(target, ast.Name):
        return None
    return binding if inlined_at(binding, write, function, parents, module) else None


def _masked_write_edit(module: ModuleContext, write: MaskedWrite, trailing: int = 0, rank: int = 0) -> Edit:
    """``x.at[mask].OP(v)`` -> ``jnp.where(mask, NEW, x)``, NEW the updated element; the mask
    broadcast over ``trailing`` axes after those it covers (``m[:, None]``); after slices,
    ``x.at[:4, m].set(v)`` -> ``x.at[:4].set(jnp.where(m, v, x[:4]))``."""
    start, end = module.span_of(write.call)
    template = _MASKED_UPDATES[write.operation]
    selects_source = isinstance(write.value, ast.Subscript)
    mask = mask_broadcast(module.segment(write.mask), rank, trailing, is_simple(write.mask))
    whole = all(part.lower is None and part.upper is None and part.step is None for part in write.prefix)
    # `x.at[:, m]` with `m` covering the last axes: `m` broadcasts against the whole of `x`.
    prefix = "" if whole and not trailing else ", ".join(module.segment(part) for part in write.prefix)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Call) and isinstance(updated.func, cst.Attribute)
        jnp = context.name("jax.numpy")
        selection = updated.func.value
        assert isinstance(selection, cst.Subscript) and isinstance(selection.value, cst.Attribute)
        array = code(selection.value.value)
        value = updated.args[0].value
        if selects_source:  # x.at[m].set(y[m]) -> jnp.where(m, y, x)
            assert isinstance(value, cst.Subscript)
            value = value.value
        old = f"{array}[{prefix}]" if prefix else array
        chosen = f"{jnp}.where({mask}, {template.format(jnp=jnp, x=old, v=code(value))}, {old})"
        source = f"{array}.at[{prefix}].set({chosen})" if prefix else chosen
        return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)

    return Edit(start, cst.Call, replace, imports=("jax.numpy",), end=end)


# Reductions that take `where=` and reduce a selection's elements as the masked array's.
_WHERE_FUNCTIONS = frozenset(f"jax.numpy.{name}" for name in WHERE_REDUCTIONS)


def _reduced_selection(call: ast.Call, module: ModuleContext) -> ast.Subscript | None:
    """``x[m]`` of ``x[m].sum()`` or ``jnp.sum(x[m])`` (no other argument), ``x`` a name."""
    if call.keywords:
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr in WHERE_REDUCTIONS and not call.args:
        selection = call.func.value
    elif len(call.args) == 1 and module.imports.resolve(call.func) in _WHERE_FUNCTIONS:
        selection = call.args[0]
    else:
        return None
    if isinstance(selection, ast.Subscript) and isinstance(selection.value, ast.Name):
        return selection
    return None


def seen_at(traced: TracedFunction, node: ast.AST) -> dict[str, SeenArray]:
    """What a run saw the traced names (and the Python numbers beside them) hold at ``node``'s
    lines (empty without a run)."""
    found: dict[str, SeenArray] = {}
    first: int = getattr(node, "lineno", 0)
    for line in range(first, (getattr(node, "end_lineno", None) or first) + 1):
        for name, text in traced.seen.types.get(line, {}).items():
            array = SeenArray.parse(text)
            if array is not None:
                found[name] = array
    return found


def mask_broadcast(mask: str, rank: int, extra: int, simple: bool) -> str:
    """A mask (of ``rank`` axes) of a prefix of an array's axes, given ``extra`` trailing axes
    of length one so that it broadcasts against the whole array (``m[:, None]``, ``m[...,
    None]``); ``simple``: ``mask`` needs no parentheses to be indexed."""
    if extra == 0:
        return mask
    held = mask if simple else f"({mask})"
    return f"{held}[:{', None' * extra}]" if rank == 1 else f"{held}[...{', None' * extra}]"


def is_simple(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Name | ast.Attribute | ast.Subscript | ast.Call)


@dataclass(frozen=True)
class RowReduction:
    """``x[m].R(axis=a)`` / ``jnp.R(x[m], axis=a)`` (R takes ``where=``) where a run saw ``m``
    of the shape of ``x``'s leading dimensions: the selection keeps, for each row ``m`` picks,
    the rest of ``x``, so the reduction is ``R`` of ``x`` over the mask's dimensions (for the
    selection's axis 0) with ``where=`` the mask broadcast over the rest."""

    call: ast.Call
    selection: ast.Subscript
    array: str
    mask_shape: tuple[int, ...]
    array_shape: tuple[int, ...]
    axis: int | None  # the selection's axis reduced; None: all of them

    @staticmethod
    def of(call: ast.Call, module: ModuleContext, seen: dict[str, SeenArray]) -> RowReduction | None:
        if not seen:
            return None
        keywords = {keyword.arg: keyword.value for keyword in call.keywords}
        if set(keywords) - {"axis"}:
            return None
        if isinstance(call.func, ast.Attribute) and call.func.attr in WHERE_REDUCTIONS and not call.args:
            selection = call.func.value
        elif len(call.args) == 1 and module.imports.resolve(call.func) in _WHERE_FUNCTIONS:
            selection = call.args[0]
        else:
            return None
        if not (isinstance(selection, ast.Subscript) and isinstance(selection.value, ast.Name)
                and selection.value.id in seen and is_boolean_mask(selection.slice, module.imports)):
            return None
        axis_node = keywords.get("axis")
        axis = None if axis_node is None else _literal_int(axis_node)
        if axis_node is not None and (axis is None or axis < 0):
            return None
        array_shape = seen[selection.value.id].shape
        mask_shape = seen_shape(selection.slice, seen, module.imports)
        if mask_shape is None or not 0 < len(mask_shape) <= len(array_shape) \
                or array_shape[:len(mask_shape)] != mask_shape \
                or axis is not None and axis > len(array_shape) - len(mask_shape):
            return None
        return RowReduction(call, selection, selection.value.id, mask_shape, array_shape, axis)

    def edit(self, module: ModuleContext) -> Edit:
        start, end = module.span_of(self.call)
        rank = len(self.mask_shape)
        extra = len(self.array_shape) - rank
        if self.axis is None:
            axis = None
        elif self.axis == 0:
            axis = "0" if rank == 1 else f"({', '.join(str(dimension) for dimension in range(rank))})"
        else:
            axis = str(self.axis + rank - 1)
        where = mask_broadcast(module.segment(self.selection.slice), rank, extra, is_simple(self.selection.slice))
        keywords = ([f"axis={axis}"] if axis is not None else []) + [f"where={where}"]
        method = isinstance(self.call.func, ast.Attribute) and self.call.func.value is self.selection

        def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            assert isinstance(updated, cst.Call)
            if method:  # x[m].mean(axis=0) -> x.mean(axis=0, where=m[:, None])
                assert isinstance(updated.func, cst.Attribute)
                source = f"{self.array}.{updated.func.attr.value}({', '.join(keywords)})"
            else:  # jnp.mean(x[m], axis=0) -> jnp.mean(x, axis=0, where=m[:, None])
                source = f"{code(updated.func)}({', '.join([self.array, *keywords])})"
            return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)

        return Edit(start, cst.Call, replace, end=end)


def _literal_int(node: ast.AST) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _literal_int(node.operand)
        return -inner if inner is not None else None
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _selects_elementwise(selection: ast.Subscript, entry: FunctionContext, traced: TracedFunction,
                         module: ModuleContext) -> bool:
    assert isinstance(selection.value, ast.Name)
    array = selection.value.id
    bindings = entry.arrays.bindings
    rebound = len(bindings.get(array, ())) > (0 if array in parameter_names(traced.node) else 1)
    nonzero = _nonzero_mask(selection.slice, module)
    if nonzero is not None:
        return selects_elementwise(nonzero, array, module.imports, bindings, rebound)
    return selects_elementwise(selection.slice, array, module.imports, bindings, rebound) \
        or entry.given_elementwise(selection.slice, array)


def _nonzero_mask(index: ast.AST, module: ModuleContext) -> ast.expr | None:
    """``m`` of an index ``jnp.nonzero(m)`` (or one-argument ``jnp.where(m)``) without
    ``size=``: a tuple of index arrays that selects the elements ``m`` holds true (nonzero),
    in order, as the mask ``m != 0`` does."""
    if isinstance(index, ast.Call) and len(index.args) == 1 and not index.keywords \
            and not isinstance(index.args[0], ast.Starred) \
            and module.imports.resolve(index.func) in ("jax.numpy.nonzero", "jax.numpy.where"):
        return index.args[0]
    return None


def _where_edit(module: ModuleContext, call: ast.Call, bindings: Mapping[str, Sequence[ast.AST | None]]) -> Edit:
    """``x[m].sum()`` -> ``x.sum(where=m)``; ``jnp.sum(x[m])`` -> ``jnp.sum(x, where=m)``;
    ``x[jnp.nonzero(a)].prod()`` -> ``x.prod(where=a != 0)`` (``where=m`` for a boolean ``m``)."""
    start, end = module.span_of(call)
    selected = _reduced_selection(call, module)
    assert selected is not None
    nonzero = _nonzero_mask(selected.slice, module)
    boolean = nonzero is None or is_boolean_mask(nonzero, module.imports, bindings)

    def mask_of(selection: cst.Subscript) -> str:
        index = selection.slice[0].slice.value  # type: ignore[attr-defined]
        if nonzero is None:
            return code(index)
        argument = code(index.args[0].value)
        if boolean:
            return argument
        return f"({argument}) != 0" if not isinstance(nonzero, ast.Name | ast.Attribute | ast.Subscript) \
            else f"{argument} != 0"

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        if not updated.args:  # the method
            assert isinstance(updated.func, cst.Attribute)
            selection = updated.func.value
            assert isinstance(selection, cst.Subscript)
            source = f"{code(selection.value)}.{updated.func.attr.value}(where={mask_of(selection)})"
        else:
            selection = updated.args[0].value
            assert isinstance(selection, cst.Subscript)
            source = f"{code(updated.func)}({code(selection.value)}, where={mask_of(selection)})"
        return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)

    return Edit(start, cst.Call, replace, end=end)


# jnp functions whose result's length is set by the data unless `size=` is given.
_SIZED_BY_DATA = frozenset(name for name, parameters in SHAPE_PARAMETERS.items()
                           if name.startswith("jax.numpy.") and (None, "size") in parameters
                           and name != "jax.numpy.mask_indices")


def _sized_by_data(call: ast.Call, module: ModuleContext) -> bool:
    """A call of one of those without ``size=`` (``jnp.where`` only in its one-argument form)."""
    name = module.imports.resolve(call.func)
    if name not in _SIZED_BY_DATA or any(keyword.arg in ("size", None) for keyword in call.keywords):
        return False
    return name != "jax.numpy.where" or (len(call.args) == 1 and not call.keywords)
