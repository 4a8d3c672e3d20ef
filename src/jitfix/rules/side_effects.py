"""JF4xx — side effects inside traced code.

JF401: ``print`` in a traced function runs once, at trace time, and prints tracers.
``jax.debug.print`` runs every time the compiled function does and prints values.
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
import string
from functools import partial
from typing import Callable, Iterator, Mapping

from jitfix.analysis.blocks import (assigned_names, local_names, own_expressions, own_nodes, statement_holding,
                                   trace_time_effect, walk_body, walk_tree, writes_outside)
from jitfix.analysis.catalogue import STATIC, STATIC_ATTRIBUTES, function_category
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.traced_function import EntryKind
from jitfix.analysis.values import TREE_MAPS, ValueAnalysis
from jitfix.naming import MODULE_WORDS
from jitfix.cst_text import code, cst, literal_value
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules import host_calls, threaded_state
from jitfix.rules.function_context import FunctionContext, function_contexts

# Keyword arguments of jax.debug.print itself: a field may not use these names.
DEBUG_PRINT_KEYWORDS = frozenset({"fmt", "ordered", "partitioned", "skip_format_check"})
OPERATOR_WORDS = {
    "+": " plus ", "-": " minus ", "*": " times ", "/": " div ", "%": " mod ",
    "@": " matmul ", "<": " lt ", ">": " gt ", "==": " eq ",
}
MAX_NAME_WORDS = 4


class PrintInTracedCode(Rule):
    code = "JF401"
    name = "print-in-traced-code"
    summary = "`print` in a traced function runs once at trace time; use `jax.debug.print`"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls to the builtin `print` inside functions that JAX traces (jitted, "
        "vmapped, differentiated, lax loop and branch bodies, and the helpers they call); "
        "`jax.debug.print(f\"x={x}\")`, whose f-string formats the tracer while tracing; and a "
        "helper that prints progress (`progress_bar(i, n_iter=n)`) called with the index of a "
        "loop in a jitted function.",
        why="Under `jax.jit` the Python body runs once, while tracing. A `print` there fires "
        "only on the first call (and on each retrace), and shows abstract tracers such as "
        "`Traced<ShapedArray(float32[3])>` instead of values. Later calls print nothing.",
        example="@jax.jit\ndef step(x):\n    print(f\"x = {x}\")\n    return x * 2\n",
        fixed="@jax.jit\ndef step(x):\n    jax.debug.print(\"x = {x}\", x=x)\n    return x * 2\n",
        safety="Safe when the printed values are traced: `jax.debug.print` prints them on every "
        "call, as the code does without jit. f-string fields become keyword arguments; format "
        "specs and conversions are kept; a positional argument prints with `!s`, as `print` "
        "writes `str(x)` (a float32 scalar shows the same shortest digits, `0.1`, not the float64 "
        "`0.10000000149011612` a plain field would); literal braces are escaped; values known at trace time "
        "(shapes, dtypes, static arguments) are formatted in Python (`str(x.shape)`) so they print "
        "exactly as before, but for Python numbers and bools, which are passed as they are (a float "
        "prints float32's shortest digits): a later rewrite may make one an operand of a lax "
        "function, and it then prints each call's value. Safe too in a branch or loop body that the same fix makes a lax function, "
        "whatever it prints: lax traces that code once, so a Python print there would run once, "
        "whichever branch is taken and however many trips the loop makes; what the lax function "
        "takes in (its operands and carry) prints as the tracer it becomes there. Safe where `jitfix "
        "run` saw a tracer fail on the print's line (`f\"{err:.4f}\"` of a tracer raises TypeError: a "
        "tracer takes no format spec): that is the proof a printed value is traced. Unsafe elsewhere "
        "when no printed value is certainly traced: such a print may be "
        "meant to run once per trace (a retrace log), so it is only rewritten with `--unsafe-fixes`; "
        "in a helper that traced code calls (not jitted, mapped or a loop body itself), such a "
        "print is a trace-time message and is not reported; nor is, anywhere, a print of only what "
        "tracing knows of traced values (`x.shape`, `x.dtype`, `jax.typeof(x)`, `len(x)`, or a Python value "
        "computed from them: `tree_map(lambda p: p.shape, params)`, a helper that returns shapes, a name bound once to one, "
        "`\"{}\".format(...)` of these; not `str(x)` or `repr(x)`, the tracer's text): the "
        "trace-time inspection JAX's docs show; nor, in a function only `grad` or `vmap` traces "
        "(no `jit`: traced again at every call), a print of values not certainly traced: it runs "
        "at every call, as it does eagerly. "
        "No fix for `file=`, a custom `end=`, a non-literal `sep=`, `*args`/`**kwargs`, or "
        "nested format specs: `jax.debug.print` always writes one line to stdout. "
        "`jax.debug.print` of an f-string with a traced field becomes the template and keywords "
        "(safe); one whose text has braces (`f\"{name}: {{x}}\"`, a template built on purpose) is "
        "left alone. A statement calling a module helper that only reports (it prints or logs, "
        "returns nothing, changes nothing outside and calls no JAX), given the index of a `range` "
        "loop around it and otherwise Python numbers, becomes `jax.debug.callback(helper, i, ..., "
        "ordered=True)` (safe): a progress line means each call; a helper given only "
        "configuration outside a loop, or a loop's string items, is a trace-time log and is left "
        "alone.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        if "print" in module.imports.aliases:
            return  # `print` is rebound by an import: not the builtin
        calls = [(node, traced) for traced in module.traced.values() for node in walk_body(traced.node)
                 if isinstance(node, ast.Call)]
        prints = [(node, traced) for node, traced in calls
                  if isinstance(node.func, ast.Name) and node.func.id == "print"]
        # Unordered debug prints may run in any order; with several, or one that runs more
        # than once per trace (in a Python loop, unrolled as it is traced; in a lax body; in a
        # helper, which may be called more than once), keep the program's order. Debug prints
        # already there count: those written by the user, and those an earlier round of fixes
        # made of prints.
        debug_prints = sum(1 for node, _ in calls if module.imports.resolve(node.func) == "jax.debug.print")
        several = sum(1 for call, _ in prints if unsupported_print(call) is None) + debug_prints >= 2
        in_loops = {id(node) for traced in {id(t.node): t for _, t in prints}.values()
                    for loop in walk_body(traced.node) if isinstance(loop, ast.For | ast.AsyncFor | ast.While)
                    for node in walk_tree(loop)} if prints else set()
        planned = {id(entry.traced.node): entry for entry in function_contexts(module)}
        for call, traced in prints:
            values, in_rewritten = _values_at_print(call, traced, planned.get(id(traced.node)), module)
            if _reached_by_calls_only(traced) and not _prints_tracer(call, values):
                continue  # a helper's message about Python values: a trace-time log, as a library means it
            if _describes_the_trace(call, values, module, traced.node):
                continue  # `print(x.shape)`: inspecting the trace, as JAX's docs show it
            if not traced.staged and not _prints_tracer(call, values):
                continue  # grad or vmap alone trace again at each call: the print runs at each call
            ordered = several or traced.is_lax_body or id(call) in in_loops or _reached_by_calls_only(traced)
            yield self._finding(module, call, values, traced, ordered, in_rewritten)
        helpers = {node.name: node for node in module.tree.body if isinstance(node, ast.FunctionDef)}
        for call, traced in calls:
            if isinstance(call.func, ast.Name) and call.func.id in helpers and traced.staged \
                    and _reports_progress(module, call, traced, helpers):
                yield self._callback_finding(module, call, traced, helpers[call.func.id])
        for call, traced in calls:
            if module.imports.resolve(call.func) == "jax.debug.print":
                values, _ = _values_at_print(call, traced, planned.get(id(traced.node)), module)
                if _formats_tracers_in_python(call, values):
                    yield self._fstring_finding(module, call, values, traced)

    def _callback_finding(self, module: ModuleContext, call: ast.Call, traced, helper: ast.FunctionDef) -> Finding:
        """``progress_bar(i, n_iter=n)`` in a loop of a jitted function: the helper's print runs
        while tracing, so the progress shows on the first call only; ``jax.debug.callback``
        runs it on every call, in loop order, with each pass's values."""
        def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            called = _as_call(node)
            arguments = [code(called.func), *(code(argument).rstrip(", ") for argument in called.args), "ordered=True"]
            return cst.parse_expression(context.call_source(context.name("jax.debug.callback"), arguments))

        edit = Edit(start=module.start_of(call), node_type=cst.Call, replace=replace, imports=("jax.debug.callback",))
        effect = trace_time_effect(helper, lambda name: None, module.imports.resolve)
        line = f" (line {effect.lineno})" if effect is not None else ""
        fix = Fix(Safety.SAFE, f"call `{helper.name}` with jax.debug.callback on every call", [edit])
        message = (f"`{helper.name}(...)` prints{line} while traced function `{traced.qualname}` is traced, given the "
                   "loop's index: the progress shows on the first call only; call it with `jax.debug.callback`")
        return self.finding(module, call, message, fix, function=traced)

    def _fstring_finding(self, module: ModuleContext, call: ast.Call, values: ValueAnalysis, traced) -> Finding:
        """``jax.debug.print(f"x={x}")``: the f-string is formatted while tracing, so every call
        prints the tracer's text; its fields become the template's, the values its keywords."""
        ordered = any(keyword.arg == "ordered" and isinstance(keyword.value, ast.Constant)
                      and keyword.value.value is True for keyword in call.keywords)

        def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            builder = _FormatBuilder(values)
            builder.add_argument(_as_call(node).args[0].value)
            return builder.build(context.name("jax.debug.print"), context, ordered)

        edit = Edit(start=module.start_of(call), node_type=cst.Call, replace=replace)
        fix = Fix(Safety.SAFE, "pass the values as the template's fields", [edit])
        message = (f"`jax.debug.print` of an f-string in traced function `{traced.qualname}`: the f-string is "
                   "formatted while tracing, so every call prints the tracers' text; pass the values as fields")
        return self.finding(module, call, message, fix, function=traced)

    def _finding(self, module: ModuleContext, call: ast.Call, values: ValueAnalysis, traced,
                 ordered: bool, in_rewritten: bool) -> Finding:
        problem = unsupported_print(call) or _formats_in_python(call, values)
        where = f"`print` in traced function `{traced.qualname}` ({traced.how})"
        if problem:
            message = f"{where} runs only at trace time; not auto-fixable: {problem}"
            return self.finding(module, call, message, function=traced)
        # Safe when a printed value is certainly a tracer, or when the print is in a branch or
        # loop body the same fix makes a lax function (which runs the Python print once at
        # trace time, whichever branch or however many trips): elsewhere a print of Python
        # values (or of values the analysis cannot place) may be meant to run once per trace.
        # A run that saw a tracer fail on the print's line (`f"{x:.4f}"` of a tracer) proved it.
        seen_failing = any(line in traced.seen.failures for line in range(call.lineno, (call.end_lineno or
                                                                                       call.lineno) + 1))
        prints_tracer = _prints_tracer(call, values) or seen_failing
        safety = Safety.SAFE if prints_tracer or in_rewritten else Safety.UNSAFE
        description = "replace with jax.debug.print"
        if safety is Safety.UNSAFE:
            description += " (unsafe: no printed value is known to be traced; a trace-time log may be intended)"
        edit = Edit(
            start=module.start_of(call),
            node_type=cst.Call,
            replace=lambda node, context: debug_print_call(_as_call(node), context, values, ordered),
            imports=("jax.debug.print",),
        )
        shows = "and prints tracers" if prints_tracer and call.args else \
            "in a branch or loop body the fix makes a lax function (once, however the call goes)" if in_rewritten \
            else "(once per compilation, not per call)"
        message = f"{where} runs only at trace time {shows}; use `jax.debug.print`"
        fix = Fix(safety, description, [edit], assumes_static=_formats_static(call, values))
        return self.finding(module, call, message, fix, function=traced)


def _values_at_print(call: ast.Call, traced, entry: FunctionContext | None,
                     module: ModuleContext) -> tuple[ValueAnalysis, bool]:
    """What is traced where the print is, as the rewrite will see it: inside a branch or a
    loop body that the same fix turns into a lax function, its operands and carry are
    tracers (``k = 0`` passed to a ``lax.cond`` branch prints as the tracer it becomes).
    And whether the print is in such a branch or body."""
    if entry is None:
        return traced.values(module.imports), False
    statement = next(statement for node, statement in own_expressions(traced.node) if node is call)
    return entry.values_at(statement), id(statement) in entry.planned.carried_at


def _formats_static(call: ast.Call, values: ValueAnalysis) -> bool:
    """Whether the fix formats a printed value in Python, as static (literals aside)."""
    printed = _printed_values(call)
    return any(not isinstance(value, ast.Constant) and not values.is_traced(value)
               and not values.verdict(value).scalar for value in printed)


def _formatted_in_python(value: ast.AST, values: ValueAnalysis) -> bool:
    """Whether the fix formats a printed value in Python (``str(n)``): it is static and not a
    Python number or bool. A number is passed to jax.debug.print as it is, which prints it as
    Python does (a float with float32's shortest digits); a later rewrite may make it an
    operand or carry of a lax function, a tracer, and it then prints each call's value."""
    return values.is_static(value) and not values.verdict(value).scalar


def _reports_progress(module: ModuleContext, call: ast.Call, traced, helpers: dict[str, ast.FunctionDef]) -> bool:
    """A statement calling a module helper that only reports -- it prints or logs, returns
    nothing, changes nothing outside and calls no JAX -- given the index of a loop around it
    (a progress line a user means per call), every other argument a Python number (what
    ``jax.debug.callback`` can pass). A helper given a traced value prints a tracer: its
    print is fixed where it is (``jax.debug.print`` runs at every call already)."""
    helper = helpers[call.func.id]  # type: ignore[attr-defined]
    if call.func.id in local_names(traced.node):  # type: ignore[attr-defined]
        return False
    statement = statement_holding(traced.node, call)
    if not (isinstance(statement, ast.Expr) and statement.value is call):
        return False
    indices = {loop.target.id for loop in walk_body(traced.node) if isinstance(loop, ast.For)
               and isinstance(loop.target, ast.Name) and isinstance(loop.iter, ast.Call)
               and isinstance(loop.iter.func, ast.Name) and loop.iter.func.id == "range"
               and "range" not in module.imports.aliases and any(node is call for node in ast.walk(loop))}
    arguments = [*call.args, *(keyword.value for keyword in call.keywords)]
    if not any(isinstance(argument, ast.Name) and argument.id in indices for argument in arguments):
        return False
    values = traced.values(module.imports)
    if not all(isinstance(argument, ast.Name | ast.Constant) and (
            argument.id in indices if isinstance(argument, ast.Name) and argument.id in indices
            else values.verdict(argument).scalar) for argument in arguments) \
            or any(keyword.arg is None for keyword in call.keywords):
        return False
    resolve = module.imports.resolve
    if any(isinstance(node, ast.Return) and node.value is not None for node in own_nodes(helper.body)) \
            or any(isinstance(node, ast.Call) and (resolve(node.func) or "").startswith("jax")
                   for node in own_nodes(helper.body)):
        return False
    return trace_time_effect(helper, helpers.get, resolve) is not None \
        and writes_outside(helper, set(module.imports.aliases), helpers.get, resolve) is None


def _formats_tracers_in_python(call: ast.Call, values: ValueAnalysis) -> bool:
    """``jax.debug.print(f"...")`` alone (``ordered=`` aside) with a traced value among the
    f-string's fields. Not one whose text has braces: ``f"{name}: {{x}}"`` builds a template
    on purpose, with Python values formatted in."""
    if len(call.args) != 1 or not isinstance(call.args[0], ast.JoinedStr) \
            or any(keyword.arg != "ordered" or not isinstance(keyword.value, ast.Constant)
                   for keyword in call.keywords):
        return False
    parts = call.args[0].values
    if any(isinstance(part, ast.Constant) and ("{" in str(part.value) or "}" in str(part.value)) for part in parts):
        return False
    return any(isinstance(part, ast.FormattedValue) and values.is_traced(part.value) for part in parts)


def _prints_tracer(call: ast.Call, values: ValueAnalysis) -> bool:
    """A printed value is certainly traced (or nothing is printed: a bare line per call)."""
    return not call.args or any(_is_traced_argument(arg, values) for arg in call.args)


def _reached_by_calls_only(traced) -> bool:
    """A helper traced only because traced code calls it (not jitted, mapped or a lax body
    itself): what it prints about Python values is a trace-time message of its own."""
    return traced.entry is EntryKind.CALLED


def _describes_the_trace(call: ast.Call, values: ValueAnalysis, module: ModuleContext, function: ast.AST) -> bool:
    """Whether a print shows only what tracing knows of traced values (``x.shape``,
    ``x.dtype``, ``jax.typeof(x)``, ``len(x)``, ``tree_map(lambda p: p.shape, params)``, a
    helper of the module that returns shapes) beside literal text and configuration: the
    trace-time inspection JAX documents. It prints the same on every call of one
    compilation; printing it once per compilation is what it is for."""
    described = False
    for value in _printed_values(call):
        for part in _formatted_parts(value):
            if isinstance(part, ast.Constant):
                continue
            if not _metadata(part, values, module) and not _bound_to_metadata(part, values, module, function):
                return False
            described = True
    return described


def _metadata(node: ast.expr, values: ValueAnalysis, module: ModuleContext) -> bool:
    return _array_metadata(node, values, module.imports) or _metadata_only(node, values, module)


def _bound_to_metadata(node: ast.expr, values: ValueAnalysis, module: ModuleContext, function: ast.AST) -> bool:
    """A static name the function binds once, plainly, to what tracing knows (``n =
    x.shape[0]`` then ``print(f"batch {n}")``)."""
    if not (isinstance(node, ast.Name) and values.is_static(node)):
        return False
    stores = [target for target in ast.walk(function) if isinstance(target, ast.Name) and target.id == node.id
              and not isinstance(target.ctx, ast.Load)]
    bindings = [statement for statement in ast.walk(function) if isinstance(statement, ast.Assign)
                and len(statement.targets) == 1 and statement.targets[0] in stores]
    return len(stores) == 1 and len(bindings) == 1 and _metadata(bindings[0].value, values, module)


def _formatted_parts(value: ast.expr) -> list[ast.expr]:
    """What a printed string is made of: ``"{}".format(a, b)`` and ``"%s" % (a, b)`` show
    ``a`` and ``b``; anything else shows itself."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "format" \
            and isinstance(value.func.value, ast.Constant) and isinstance(value.func.value.value, str):
        return [*value.args, *(keyword.value for keyword in value.keywords)]
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod) and isinstance(value.left, ast.Constant) \
            and isinstance(value.left.value, str):
        return list(value.right.elts) if isinstance(value.right, ast.Tuple) else [value.right]
    return [value]


def _metadata_only(node: ast.expr, values: ValueAnalysis, module: ModuleContext) -> bool:
    """A value computed from values that may be tracers through what tracing knows of them
    alone (``tree_map(lambda p: p.shape, params)``, ``tree_shape(params)`` of a helper that
    returns shapes), beside configuration: every name that is not static is read only for its
    shape, dtype, rank or length. (A print of configuration alone reads no such name.)"""
    free = {name.id for name in ast.walk(node) if isinstance(name, ast.Name)
            and module.imports.resolve(name) is None and not values.is_static(name)}
    return bool(free) and values.is_static(node) and _reads_metadata_only(node, free, module, depth=0)


# Python's functions that read only what tracing knows of an array.
_METADATA_BUILTINS = frozenset({"len", "type", "isinstance"})


def _reads_metadata_only(node: ast.AST, free: set[str], module: ModuleContext, depth: int) -> bool:
    """Whether every read of a name in ``free`` under ``node`` is of its metadata: ``x.shape``
    (any static attribute), ``len(x)``, ``jnp.ndim(x)``; the tree of a ``tree_map`` whose
    lambda reads its leaves so; an argument of a module helper that reads its parameter so."""
    parents = {id(child): parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
    for name in ast.walk(node):
        if not (isinstance(name, ast.Name) and name.id in free):
            continue
        read: ast.expr = name  # (a part of it: `params.gen`, `params["w"]`)
        parent = parents.get(id(read))
        while isinstance(parent, ast.Attribute | ast.Subscript) and parent.value is read \
                and not (isinstance(parent, ast.Attribute) and parent.attr in STATIC_ATTRIBUTES):
            read, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.Attribute) and parent.value is read and parent.attr in STATIC_ATTRIBUTES:
            continue
        if isinstance(parent, ast.Call) and read in parent.args:
            called = parent.func
            if isinstance(called, ast.Name) and called.id in _METADATA_BUILTINS \
                    and called.id not in module.imports.aliases:
                continue
            if function_category(module.imports.resolve(called)) == STATIC:
                continue
            if depth < 2 and _passes_to_metadata(parent, read, module, depth):
                continue
        return False
    return True


def _passes_to_metadata(call: ast.Call, argument: ast.expr, module: ModuleContext, depth: int) -> bool:
    """``tree_map(lambda p: p.shape, argument)``, or ``helper(argument)`` where the module's
    ``helper`` is one ``return`` that reads the parameter it gets only for its metadata."""
    if module.imports.resolve(call.func) in TREE_MAPS:
        function = call.args[0] if call.args else None
        if not isinstance(function, ast.Lambda) or argument is function or call.keywords:
            return False
        params = {arg.arg for arg in function.args.args}
        return _reads_metadata_only(function.body, params, module, depth + 1)
    if not isinstance(call.func, ast.Name) or call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
        return False
    helper = next((node for node in module.tree.body if isinstance(node, ast.FunctionDef)
                   and node.name == call.func.id), None)
    if helper is None or helper.args.vararg or helper.args.posonlyargs or helper.decorator_list:
        return False
    index = call.args.index(argument)
    body = [statement for statement in helper.body
            if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))]  # (a docstring)
    if index >= len(helper.args.args) or len(body) != 1 or not isinstance(body[0], ast.Return) \
            or body[0].value is None:
        return False
    return _reads_metadata_only(body[0].value, {helper.args.args[index].arg}, module, depth + 1)


def _array_metadata(node: ast.AST, values: ValueAnalysis, imports: ImportTable) -> bool:
    """``x.shape``, ``x.shape[0]``, ``x.dtype``, ``jnp.ndim(x)``, ``jax.typeof(x)`` (only
    arrays have these), ``len(x)`` of a traced ``x``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr in STATIC_ATTRIBUTES
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id == "len" and "len" not in imports.aliases:
            return values.is_traced(node.args[0])
        return function_category(imports.resolve(node.func)) == STATIC
    return False


def _printed_values(call: ast.Call) -> list[ast.expr]:
    """What a print writes: its arguments, an f-string's fields in place of the f-string."""
    return [part.value if isinstance(part, ast.FormattedValue) else part for arg in call.args
            for part in (arg.values if isinstance(arg, ast.JoinedStr) else [arg])]


def _is_traced_argument(arg: ast.AST, values: ValueAnalysis) -> bool:
    if isinstance(arg, ast.JoinedStr):
        return any(values.is_traced(part.value) for part in arg.values if isinstance(part, ast.FormattedValue))
    return values.is_traced(arg)


def unsupported_print(call: ast.Call) -> str | None:
    """Why a print has no faithful jax.debug.print form, or None when it has one."""
    for keyword_arg in call.keywords:
        if keyword_arg.arg is None:
            return "`**kwargs` hides which arguments reach print"
        if keyword_arg.arg == "file" and not _is_stdout(keyword_arg.value):
            return "`file=` writes to a stream; jax.debug.print writes only to stdout (use jax.debug.callback)"
        if keyword_arg.arg == "end" and not _is_string(keyword_arg.value, "\n"):
            return "a custom `end=`; jax.debug.print always ends the line"
        if keyword_arg.arg == "sep" and not _is_string(keyword_arg.value):
            return "`sep=` is not a string literal"
        if keyword_arg.arg not in {"sep", "end", "flush", "file"}:
            return f"unknown keyword `{keyword_arg.arg}=`"
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            return "`*args` hides how many values are printed"
        if isinstance(arg, ast.Constant) and isinstance(arg.value, bytes):
            return "bytes literal"
        if isinstance(arg, ast.JoinedStr):
            for part in arg.values:
                if isinstance(part, ast.FormattedValue) and isinstance(part.format_spec, ast.JoinedStr):
                    if any(isinstance(spec, ast.FormattedValue) for spec in part.format_spec.values):
                        return "a format spec computed at run time (`{x:{width}}`)"
    return None


def _formats_in_python(call: ast.Call, values: ValueAnalysis) -> str | None:
    """A printed value turned into text by Python (`"%.3f" % x`, `str(x)`, `"{}".format(x)`)
    would format a tracer at trace time: there is no faithful form to move it to."""
    for value in _printed_values(call):
        for node in ast.walk(value):
            formats = (
                isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_text(node.left)
            ) or (
                isinstance(node, ast.Call) and (
                    (isinstance(node.func, ast.Attribute) and node.func.attr == "format" and _is_text(node.func.value))
                    or (isinstance(node.func, ast.Name) and node.func.id in {"str", "repr", "format", "ascii"})
                )
            ) or isinstance(node, ast.JoinedStr) and node is not value
            if formats and not values.is_static(node) and values.is_traced(node) or _maps_to_text(node, values):
                return "a printed value is formatted by Python (`%`, `str()`, `.format`), which would format a " \
                    "tracer; put the value in an f-string field or a jax.debug.print format instead"
    return None


def _maps_to_text(node: ast.AST, values: ValueAnalysis) -> bool:
    """``tree_map(str, params)`` or ``tree_map(lambda a: f"{a}", params)`` of a traced tree:
    the text of each tracer, made while tracing."""
    if not (isinstance(node, ast.Call) and values.imports.resolve(node.func) in TREE_MAPS and len(node.args) >= 2):
        return False
    function = node.args[0]
    body = function.body if isinstance(function, ast.Lambda) else function
    texts = any(isinstance(inner, ast.JoinedStr) or isinstance(inner, ast.Name) and inner.id in _TEXT_FUNCTIONS
                for inner in ast.walk(body))
    return texts and any(values.is_traced(tree) for tree in node.args[1:])


_TEXT_FUNCTIONS = frozenset({"str", "repr", "format", "ascii"})


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _is_stdout(node: ast.AST) -> bool:
    """``file=None`` and ``file=sys.stdout`` print where jax.debug.print does."""
    if isinstance(node, ast.Constant) and node.value is None:
        return True
    return isinstance(node, ast.Attribute) and node.attr == "stdout" and isinstance(node.value, ast.Name) \
        and node.value.id == "sys"


def _is_string(node: ast.AST, value: str | None = None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (value is None or node.value == value)


# -- building the jax.debug.print call (on libcst nodes, to keep the user's spelling) ---------


def keyword_name(code: str) -> str:
    """A readable keyword for an expression: ``x.shape`` -> x_shape, ``jnp.sum(x)`` -> sum_x."""
    text = code
    for operator, word in OPERATOR_WORDS.items():
        text = text.replace(operator, word)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+", text)
    if len(words) > 1:
        words = [word for word in words if word not in MODULE_WORDS] or words
    words = [word.strip("_") or word for word in words][:MAX_NAME_WORDS]
    name = "_".join(words) or "value"
    if name[0].isdigit():
        name = f"v{name}"
    if keyword.iskeyword(name) or name in DEBUG_PRINT_KEYWORDS:
        name += "_"
    return name


def _literal_text(string: cst.BaseExpression) -> str:
    """The text of a (plain, non-bytes) string literal."""
    value = literal_value(string)
    assert isinstance(value, str)
    return value


def _escape_braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def string_literal(value: str, quote: str) -> str:
    """Source for a string literal, in the user's quote style when it can be."""
    literal = repr(value)
    if literal[0] == quote or quote in value:
        return literal
    return quote + literal[1:-1] + quote


class _FormatBuilder:
    """Accumulates the format string and keyword arguments of one jax.debug.print call."""

    def __init__(self, values: ValueAnalysis):
        self.values = values
        self.text: list[str] = []
        self.keywords: dict[str, cst.BaseExpression] = {}
        self.names_by_code: dict[str, str] = {}
        self.quote: str | None = None

    def _classify(self, code: str) -> ast.AST | None:
        try:
            return ast.parse(code.strip(), mode="eval").body
        except SyntaxError:
            return None

    def _name_for(self, key: str, code: str, value: cst.BaseExpression) -> str:
        """One keyword per distinct value: f"{x} {x}" passes x once."""
        if key in self.names_by_code:
            return self.names_by_code[key]
        base = keyword_name(code)
        name, counter = base, 2
        while name in self.keywords:
            name, counter = f"{base}_{counter}", counter + 1
        self.names_by_code[key] = name
        self.keywords[name] = value
        return name

    def add_field(self, expression: cst.BaseExpression, conversion: str | None = None, spec: str = "") -> None:
        text = code(expression).strip()
        parsed = self._classify(text)
        if isinstance(parsed, ast.Constant) and not isinstance(parsed.value, bytes) and not conversion and not spec:
            self.text.append(_escape_braces(str(parsed.value)))
            return
        if parsed is not None and _formatted_in_python(parsed, self.values):
            # Format a trace-time value in Python so it prints exactly as before
            # (a shape passed as an argument would print as a tuple of arrays).
            key = f"{conversion}:{spec}:{text}"
            shown = _formatted(expression, conversion, spec, self.quote or '"')
            self.text.append("{" + self._name_for(key, text, shown) + "}")
            return
        field = self._name_for(text, text, expression)
        if conversion:
            field += f"!{conversion}"
        if spec:
            field += f":{spec}"
        self.text.append("{" + field + "}")

    def add_argument(self, expression: cst.BaseExpression) -> None:
        if isinstance(expression, cst.SimpleString | cst.ConcatenatedString) and _plain_string(expression):
            self.quote = self.quote or _quote_of(expression)
            self.text.append(_escape_braces(_literal_text(expression)))
        elif isinstance(expression, cst.FormattedString):
            self.quote = self.quote or expression.end[0]
            self._add_fstring(expression)
        elif isinstance(expression, cst.ConcatenatedString):
            for part in _string_parts(expression):
                self.add_argument(part)
        else:
            # `print(x)` writes str(x): for a float32 scalar the shortest digits (0.1), where
            # a plain field would format the float64 it converts to (0.10000000149011612).
            parsed = self._classify(code(expression).strip())
            traced = parsed is not None and not isinstance(parsed, ast.Constant) \
                and not _formatted_in_python(parsed, self.values)
            self.add_field(expression, "s" if traced else None)

    def _add_fstring(self, string: cst.FormattedString) -> None:
        prefix = string.start[: -len(string.end)].lower().replace("f", "")
        quote = string.end
        for part in string.parts:
            if isinstance(part, cst.FormattedStringText):
                # The text is source; evaluating it as a non-f literal keeps `{{`/`}}` escaped.
                self.text.append(ast.literal_eval(f"{prefix}{quote}{part.value}{quote}"))
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            conversion = part.conversion
            spec = "".join(code(spec_part) for spec_part in part.format_spec or ())
            if part.equal is not None:  # f"{x=}" prints the expression's text, then its repr
                self.text.append(_escape_braces(
                    code(part.whitespace_before_expression) + code(part.expression)
                    + code(part.whitespace_after_expression) + code(part.equal)
                ))
                if conversion is None and not spec:
                    conversion = "r"
            self.add_field(part.expression, conversion, spec)

    def build(self, function: str, context: EditContext, ordered: bool) -> cst.BaseExpression:
        self._move_escaped_lead()
        fmt = string_literal("".join(self.text), self.quote or '"')
        args = [fmt] + [f"{name}={code(value)}" for name, value in self.keywords.items()]
        if ordered:
            args.append("ordered=True")
        return cst.parse_expression(context.call_source(function, args))


    def _move_escaped_lead(self) -> None:
        """jax.debug.print decides whether a format has fields from its first chunk only (and
        prints a format without fields unformatted), so text with an escaped brace before the
        first field would print wrongly: pass that text as a value instead."""
        fmt = "".join(self.text)
        if "{{" not in fmt and "}}" not in fmt:
            return
        chunks = list(string.Formatter().parse(fmt))
        if self.keywords and chunks and chunks[0][1] is not None:
            return  # the first chunk is a field: jax formats the whole string
        lead = ""
        for literal, field_name, _, _ in chunks:
            lead += literal
            if field_name is not None:
                break
        escaped_lead = _escape_braces(lead)
        name = self._name_for("\0lead", "text", cst.SimpleString(string_literal(lead, self.quote or '"')))
        self.keywords = {name: self.keywords.pop(name), **self.keywords}  # first, as in the text
        self.text = ["{" + name + "}", fmt[len(escaped_lead):]]


def _plain_string(expression: cst.BaseExpression) -> bool:
    return isinstance(getattr(expression, "evaluated_value", None), str)


def _quote_of(expression: cst.BaseExpression) -> str:
    if isinstance(expression, cst.ConcatenatedString):
        return _quote_of(expression.left)
    return expression.quote[0] if isinstance(expression, cst.SimpleString) else '"'


def _string_parts(expression: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expression, cst.ConcatenatedString):
        return _string_parts(expression.left) + _string_parts(expression.right)
    return [expression]


def _formatted(expression: cst.BaseExpression, conversion: str | None, spec: str, quote: str) -> cst.BaseExpression:
    """``str(e)``, ``repr(e)``, ``ascii(e)`` or ``format(e, spec)``: the text an f-string shows."""
    converter = {"r": "repr", "a": "ascii"}.get(conversion or "", "str")
    inner = expression.with_changes(lpar=[], rpar=[]) if hasattr(expression, "lpar") else expression
    if spec:
        if conversion:
            inner = cst.Call(cst.Name(converter), [cst.Arg(inner)])
        return cst.Call(cst.Name("format"), [cst.Arg(inner), cst.Arg(cst.SimpleString(string_literal(spec, quote)))])
    return cst.Call(cst.Name(converter), [cst.Arg(inner)])


def _as_call(node: cst.CSTNode) -> cst.Call:
    assert isinstance(node, cst.Call)
    return node


def debug_print_call(call: cst.Call, context: EditContext, values: ValueAnalysis,
                     ordered: bool) -> cst.BaseExpression:
    sep = " "
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "sep":
            # a string literal, checked before the fix was offered
            sep = _literal_text(arg.value)
    builder = _FormatBuilder(values)
    positional = [arg for arg in call.args if arg.keyword is None]
    for index, arg in enumerate(positional):
        if index:
            builder.text.append(_escape_braces(sep))
        builder.add_argument(arg.value)
    return builder.build(context.name("jax.debug.print"), context, ordered)


# Calls that act on the world (or read it) when they run: under jit they run once, at trace time.
TRACE_TIME_CALLS: dict[str, str] = {
    "open": "write results from the caller, or use `jax.debug.callback`",
    "input": "read input before calling the compiled function",
    "time.time": "every call of the compiled function sees the trace's time; time the call from outside",
    "time.perf_counter": "time the compiled call from outside",
    "time.monotonic": "time the compiled call from outside",
    "time.sleep": "it does not sleep on later calls",
}
RANDOMNESS = "every call reuses the trace's numbers; pass a `jax.random` key and use `jax.random`"
TRACE_TIME_MODULES: dict[str, str] = {
    "random": RANDOMNESS,
    "numpy.random": RANDOMNESS,
    "logging": "it logs tracers, not values; use `jax.debug.print` or `jax.debug.callback`",
    "os": "do it outside the compiled function",
    "subprocess": "do it outside the compiled function",
    "shutil": "do it outside the compiled function",
}
# List methods: on a name from outside the function they change outer state. (`update`, `add`,
# `pop` are left alone: optax's `opt.update(...)` and the like are pure.)
OUTER_MUTATIONS = frozenset({"append", "extend", "insert"})


class TraceTimeSideEffect(Rule):
    code = "JF402"
    name = "trace-time-side-effect"
    summary = "side effects in traced code (files, clocks, random, logging, outer state) run once, at trace time"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls in traced functions that read or change the world — `open()`, `time.time()`, "
        "Python's `random` and `np.random`, `logging`, `os` — and changes to state outside the "
        "function: appending a traced value to a module-level or enclosing list, storing one in its "
        "item or attribute (`CACHE[name] = jnp.ones(3)`, a get-or-create accessor), or on the `self` "
        "of a method jitted with a static `self` (`self.history.append(y)`, `self.total += x`), "
        "writing a `global`. "
        "A stack the function pushes and pops again (`stack.append(params)` ... `stack.pop()`, a "
        "context stack) is as it was once the call returns: not reported. Nor is a function only "
        "`grad` or `vmap` trace (no `jit`): they trace it again at every call, so its effects run "
        "at every call, as they do eagerly; only a tracer leaking out of it is reported there.",
        why="`jax.jit` runs the Python body once to trace it; the compiled function does not run "
        "Python. A clock read, a random draw or a log line happens at that one trace and is then "
        "frozen into (or missing from) every later call; a list appended to grows by one per "
        "trace, not per call.",
        example="@jax.jit\ndef noisy(x):\n    return x + np.random.normal()\n",
        fixed="@jax.jit\ndef _noisy(x, *, normal):\n    return x + normal\n\n\ndef noisy(x):\n"
        "    return _noisy(x, normal=np.random.normal())\n",
        safety="A log call that passes tracers (`logging.info(\"loss %s\", loss)`, or a module-level "
        "`logger = logging.getLogger(...)`'s method), every argument a traced name or a Python value, "
        "becomes `jax.debug.callback` of it, which logs each call's values (safe; ordered in a loop or "
        "a lax body). State the function rebinds -- a `global` (a counter, a PRNG key split in place, "
        "a value stashed for later) or an attribute of a static `self` (`self.v += a * dt`, "
        "`self.cache = out`) or of a traced `self` of a mutable pytree class (registered with "
        "`register_pytree_node` or `register_pytree_node_class`: the write goes to the copy jit "
        "rebuilds, and is lost) -- is passed into the jitted body and returned from it (safe): the body "
        "moves to `_name`, and a def with the old name and parameters passes the state in and stores "
        "what comes back (`result, key = _init(key=key)`, `self.v, self.p = self._step(dt, v=self.v, "
        "p=self.p)`), so every caller is unchanged and the state evolves call by call, as eagerly. "
        "So are the array attributes of a module-level object of a class of the file that the function "
        "sets to traced values, through the object's methods (`wf.apply_aperture(radius)` setting "
        "`self.wavefront`, jax#4714) or directly (`log.last = loss`): the body takes each attribute in, "
        "sets it on the object first, runs as written and gives back what is left there (`result, "
        "wf.wavefront = _propagate(radius, opd, wavefront=wf.wavefront)`), where `__init__` sets each "
        "attribute, no nested def or lambda reaches the object, neither it nor `self` in its methods is "
        "passed on whole, and no method changes an attribute in place (the reason is given otherwise). "
        "That is done for a function jitted by its own decorator, by `name = jax.jit(name)`, by a "
        "module-level `fast = jax.jit(step)` (the def used nowhere else: it takes the state itself, the "
        "jit is kept as `_fast_jitted`, and `fast` becomes the def callers call), or, for a method, by "
        "`jax.jit(obj.method)` (jax#5980's `jax.jit(counter.count)`, or `self.apply = "
        "jax.jit(self._apply)`): the jit of a bound method fixes `self` as a static argument does, so "
        "the body's def is jitted with `static_argnums=0` in its place and the call keeps the method "
        "(`fast_count = counter.count`), where the class is a plain one (no bases, subclasses, decorators, "
        "`__eq__` or `__hash__`: its instances hash by identity, one trace each, as before; the jit's cache "
        "then holds each instance, as a decorated method's does), the jit has no options and its attributes "
        "are not used, the method is no dunder Python calls itself, no traced code calls it, and it is "
        "called nowhere else with arguments (eagerly those may be any Python value). No state is threaded "
        "through a function that raises or has a `finally` block (the state changed before would not be "
        "given back), nor an attribute the class binds itself (a property's setter runs code). "
        "The state is threaded where it receives a traced value, is "
        "written under a traced test, flows into the result or decides what is returned (`if self.n % "
        "2 == 0: return x`), or a method of `self` the function calls reads it into the result "
        "(bayesflow#223's schedule reading `self.current_step`); a count of traces that nothing "
        "returned depends on is left as it is. A state set only to Python values (`self.n += 1`) is "
        "a tracer once passed in: it is threaded only where it is an integer count (every write in "
        "the class an int literal or one added to it, which int32 holds exactly; a Python float is "
        "not, float32 would round it), every read -- in the body, in the methods it calls, and in "
        "the functions of the module the value is passed to -- takes a tracer too (arithmetic, a JAX "
        "function, returned; not a test, a size, `range`, an index into a list), and code outside the "
        "class reads it only to compare, format, print or return it (an int32 array is no dict key, and "
        "arithmetic on it may overflow). Arithmetic with Python floats on a count passed in is then "
        "float32 arithmetic, as optax computes Adam's bias correction (`1 - b1 ** t`), where eagerly "
        "Python computed it in float64: the results agree to float32's precision. An attribute a "
        "method of `self` reads stays on the object: the body sets it from the value passed in on "
        "entry and gives it back from there. Nothing else may read the state meanwhile: a helper "
        "reading a global, `self` passed on whole, a write into the state's object "
        "(`self.log.append(y)`) are reported with the reason. Host work that reads "
        "nothing the function computes -- a draw from Python's or NumPy's generator, or from a generator "
        "object (`rng.integers(...)` of a module-level `rng = np.random.default_rng(0)` or of a static "
        "argument every call passes one, scipy#24412), an object of the "
        "module whose method advances its own state (`keys.next_key()`), a helper that does either "
        "(`rand(2, 2)` seeding from `random`), here or in another module of the run that rebinds a global "
        "there (`rng.next_key()` splitting `rng.key`, jax#5206) -- is evaluated at each call by the same kind of def and "
        "passed in (`return _step(params, grads, next_key=keys.next_key())`; safe: the stream is the "
        "eager one, draw for draw), where it runs exactly once per call (a statement of the function's "
        "own body, not in a branch, loop, comprehension or lambda, with no `return` or `raise` before it), "
        "reads only module names (a draw "
        "also parameters the function never rebinds, and locals bound once before it to sizes of those, "
        "`n = data.shape[0]`, which the def with the old name binds too; a def or method given the "
        "function's parameters may be the model itself, which stays compiled), and certainly gives back "
        "numbers or arrays (and a draw: no draw or seed the body keeps comes before it, its integers fit "
        "int32, and every use of its value takes a tracer -- arithmetic, a JAX function, an index of ints -- "
        "until a traced value joins it, not a boolean mask, a size or a test; the finding says which "
        "failed) (not a generator's `choice` of a list, not "
        "`random.randint`'s int, which may not fit int32, nor a clock's float, which float32 rounds "
        "by minutes). Otherwise no "
        "automatic fix: the faithful form (an explicit PRNG key argument, returning a value instead "
        "of mutating, `jax.debug.callback` for I/O) changes the function's signature or its callers. "
        "`print` has its own rule (JF401).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for traced in module.traced.values():
            local = functools.cache(partial(_local_names, traced, module.traced.parents))
            discarded = {id(node.value) for node in walk_body(traced.node)
                         if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)}
            loops = {id(node) for loop in walk_body(traced.node) if isinstance(loop, ast.For | ast.AsyncFor | ast.While)
                     for node in walk_tree(loop)}
            threading: threaded_state.Threading | str | None | bool = False  # False: not planned yet
            hosts = host_calls.host_calls(module, traced)
            if hosts:
                yield self._hoisted_finding(module, traced, hosts)
            inside_hosts = {id(node) for host in hosts for node in ast.walk(host.call)}
            threaded_here = functools.cache(partial(threaded_state.threaded_attributes, module, traced.node))
            objects = None if hosts else threaded_state.object_state(module, traced)
            if objects is not None:
                yield self._object_state_finding(module, traced, objects)
            for node in walk_body(traced.node):
                if id(node) in inside_hosts:
                    continue  # said by the finding that hoists the call
                if objects is not None and _writes_into(node, objects.objects) \
                        or _writes_into(node, threaded_here()):
                    continue  # said by the object's finding, or its state already threaded
                problem = self._problem(module, node, local, discarded, traced)
                if not problem and _carried_update(node) and (state := _state_written(node, traced, module)) \
                        and state & threaded_state.state_that_matters(module, traced):
                    # A Python value carried from call to call (`self.n += 1`) where the state
                    # reaches the result: it changes once per trace, not per call (a count of
                    # traces alone is left as it is, and so is a value each call sets afresh).
                    problem = "the state changes once per trace, not at each call"
                if not problem:
                    continue
                state = _state_written(node, traced, module)
                if state:
                    if threading is False:
                        threading = threaded_state.plan(module, traced)
                    if isinstance(threading, threaded_state.Threading) \
                            and state & {item.spelled for item in threading.state}:
                        yield self._threaded_finding(module, node, traced, threading)
                        threading = None  # one finding says it for all the function's state
                        continue
                    if isinstance(threading, str):
                        problem = f"{problem} ({threading})"
                where = f"`{module.segment(node)[:40]}` in traced function `{traced.qualname}`"
                logged = _logged_tracers(module, node, traced, discarded) if isinstance(node, ast.Call) else None
                if logged is not None:
                    ordered = traced.is_lax_body or id(node) in loops
                    fix = Fix(Safety.SAFE, "log the values with jax.debug.callback",
                              [_callback_edit(module, node, logged, ordered)])  # type: ignore[arg-type]
                    yield self.finding(module, node, f"{where} runs once, at trace time, and logs tracers; log the "
                                       "values with `jax.debug.callback`, on every call", fix, function=traced)
                    continue
                yield self.finding(module, node, f"{where} runs once, at trace time; not auto-fixable: {problem}",
                                   function=traced)

    def _hoisted_finding(self, module: ModuleContext, traced, hosts: list[host_calls.HostCall]) -> Finding:
        threading = host_calls.hoisting(module, traced, hosts)
        listed = ", ".join(f"`{module.segment(host.call)[:40]}`" for host in hosts)
        why = "; ".join(host.effect for host in hosts)
        several = len(hosts) > 1
        fix = Fix(Safety.SAFE, f"evaluate {listed} at each call of `{threading.wrapper}` and pass "
                  f"{'them' if several else 'it'} into the jitted `{threading.inner}`",
                  threaded_state.edits(module, traced, threading))
        return self.finding(module, hosts[0].call, f"{listed} in traced function `{traced.qualname}` "
                            f"{'run' if several else 'runs'} once, at trace time ({why}): every call reuses "
                            f"{'their results' if several else 'its result'}; evaluate "
                            f"{'them' if several else 'it'} at each call and pass "
                            f"{'them' if several else 'it'} in", fix, function=traced)

    def _object_state_finding(self, module: ModuleContext, traced, objects: threaded_state.ObjectState) -> Finding:
        """A jitted function that sets attributes of a module-level object to traced values,
        through the object's methods or directly (``wf.apply_aperture(radius)``)."""
        threading, site = objects.threading, objects.site
        where = f"`{module.segment(site)[:40]}` in traced function `{traced.qualname}`"
        leak = ("sets attributes of an object that outlives the call while tracing: a tracer leaks onto it "
                "(a later use meets it: UnexpectedTracerError), and every later call starts from what it held then")
        if isinstance(threading, str):
            return self.finding(module, site, f"{where} {leak}; not auto-fixable: {threading}", function=traced)
        fix = Fix(Safety.SAFE, f"thread {threading.listed} through the jitted `{threading.inner}`: passed in, set on "
                  f"the object and given back, stored by `{threading.wrapper}`",
                  threaded_state.edits(module, traced, threading))
        return self.finding(module, site, f"{where} {leak}; pass {threading.listed} in and return the new "
                            f"{'values' if len(threading.state) > 1 else 'value'}", fix, function=traced)

    def _threaded_finding(self, module: ModuleContext, node: ast.AST, traced,
                          threading: threaded_state.Threading) -> Finding:
        several = len(threading.state) > 1
        fix = Fix(Safety.SAFE, f"thread {threading.listed} through the jitted `{threading.inner}`: passed in and "
                  f"returned, stored back by `{threading.wrapper}`", threaded_state.edits(module, traced, threading))
        return self.finding(module, node, f"{threading.listed} in traced function `{traced.qualname}` "
                            f"{'are' if several else 'is'} set while tracing, not at each call; pass "
                            f"{'them' if several else 'it'} in and return the new "
                            f"{'values' if several else 'value'}", fix, function=traced)

    @staticmethod
    def _problem(module: ModuleContext, node: ast.AST, local: Callable[[], set[str]], discarded: set[int],
                 traced) -> str | None:
        """Why ``node`` runs only at trace time, if it does. (``local()`` is found only when asked:
        most statements need no names.) Under grad or vmap alone (not staged) the function is
        traced again at every call: a clock, a draw, a log line or a write of a global runs at
        every call, as it does eagerly; only a tracer leaking out of the trace is a problem."""
        if isinstance(node, ast.Call) and traced.staged:
            if isinstance(node.func, ast.Name) and node.func.id in TRACE_TIME_CALLS \
                    and node.func.id not in module.imports.aliases and node.func.id not in local():
                return TRACE_TIME_CALLS[node.func.id]
            name = module.imports.resolve(node.func) or ""
            if name in TRACE_TIME_CALLS:
                return TRACE_TIME_CALLS[name]
            if name.startswith("logging.") or isinstance(node.func, ast.Attribute) \
                    and node.func.attr in LOG_METHODS and _is_logger(module, node.func.value):
                # A log line of what tracing knows (a shape, a setting) is a trace-time log, as
                # a library means it; one that passes a tracer logs the tracer, not its value.
                values = traced.values(module.imports)
                if any(values.is_traced(argument) for argument in node.args):
                    return TRACE_TIME_MODULES["logging"]
                return None
            draw = name.startswith(("random.", "numpy.random.")) \
                or host_calls.generator_draw(module, traced, node) is not None  # `rng.integers(...)`
            if draw:
                stays = host_calls.why_draw_stays(module, traced, node)
                return f"{RANDOMNESS} (not drawn at each call and passed in: {stays})" if stays else RANDOMNESS
            for prefix, problem in TRACE_TIME_MODULES.items():
                if name.startswith(prefix + "."):
                    return problem
        if isinstance(node, ast.Call):
            func = node.func
            # `outer.append(tracer)` as a statement: the tracer leaks out of the trace. A result
            # that is used (`state = buffer.insert(x)`) is a functional update, and a static
            # value appended (a shape, a trace counter) is deliberate trace-time bookkeeping.
            if isinstance(func, ast.Attribute) and func.attr in OUTER_MUTATIONS and id(node) in discarded \
                    and any(traced.values(module.imports).is_traced(arg) for arg in node.args):
                owner = _self_owner(func.value, traced, module)
                if owner is None and isinstance(func.value, ast.Name) \
                        and func.value.id not in module.imports.aliases and func.value.id not in local() \
                        and not _popped_later(traced.node, node):
                    owner = func.value.id
                if owner is not None:
                    return (f"`{owner}` lives outside the function: it receives a tracer, which leaks out "
                            "of the trace, once per trace rather than once per call; return the value instead")
        if isinstance(node, ast.Global) and traced.staged:
            # A declaration alone changes nothing (reading a global needs none): only a name the
            # function binds is module state it changes.
            written = [name for name in node.names if name in assigned_names(traced.node.body)]
            if not written:
                return None
            return f"module state (`{'`, `'.join(written)}`) changes once per trace; pass the value in and return the new one"
        if isinstance(node, ast.Assign | ast.AugAssign):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                owner = _global_owner(target, local, module) or _self_owner(target, traced, module)
                if owner and traced.values(module.imports).is_traced(node.value):
                    return (f"`{owner}` lives outside the function: a tracer stored in it leaks out of the "
                            "trace (a later call meets it: UnexpectedTracerError); return the value instead")
        return None


LOG_LEVELS = frozenset({"debug", "info", "warning", "error", "critical"})
LOG_METHODS = LOG_LEVELS | {"log", "exception", "warn"}


def _logged_tracers(module: ModuleContext, call: ast.Call, traced, discarded: set[int]) -> list[str] | None:
    """The traced names a log call (a statement: ``logging.info("loss %s", loss)``, or a method of
    a module-level logger, ``logger.info(...)``) passes, when it can log them at run time instead:
    every argument a traced name or a Python value, no keywords, at least one traced. None
    otherwise."""
    func = call.func
    if id(call) not in discarded or call.keywords or not call.args or not isinstance(func, ast.Attribute) \
            or func.attr not in LOG_LEVELS or not _is_logger(module, func.value):
        return None
    values = traced.values(module.imports)
    names: list[str] = []
    for argument in call.args:
        if isinstance(argument, ast.Name) and values.is_traced(argument):
            if argument.id not in names:
                names.append(argument.id)
        elif not values.is_static(argument) or any(isinstance(part, ast.Starred) for part in ast.walk(argument)):
            return None
    return names or None


def _is_logger(module: ModuleContext, owner: ast.expr) -> bool:
    """``logging`` itself, or a name the module binds once, at its top level, to
    ``logging.getLogger(...)``."""
    if module.imports.resolve(owner) == "logging":
        return True
    if not isinstance(owner, ast.Name):
        return False
    bindings = [statement for statement in module.tree.body if owner.id in assigned_names([statement])]
    return len(bindings) == 1 and isinstance(bindings[0], ast.Assign) and isinstance(bindings[0].value, ast.Call) \
        and module.imports.resolve(bindings[0].value.func) == "logging.getLogger"


def _callback_edit(module: ModuleContext, call: ast.Call, names: list[str], ordered: bool) -> Edit:
    """``logging.info(loss)`` -> ``jax.debug.callback(logging.info, loss)``; with Python values
    among the arguments, ``jax.debug.callback(lambda loss: logging.info("loss %s", loss), loss)``:
    the callback runs with each call's values (NumPy arrays), where the log line is written."""
    direct = all(isinstance(argument, ast.Name) for argument in call.args) and len(names) == len(call.args)

    def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        logged = code(node.func) if direct else f"lambda {', '.join(names)}: {code(node)}"
        arguments = [logged, *names] + (["ordered=True"] if ordered else [])
        return cst.parse_expression(f"{context.name('jax.debug.callback')}({', '.join(arguments)})")

    return Edit(start=module.start_of(call), node_type=cst.Call, replace=replace, imports=("jax.debug.callback",))


def _popped_later(function: ast.AST, push: ast.Call) -> bool:
    """Whether the function pops what ``stack.append(v)`` pushed, after it (``stack.pop()``,
    in the same body or a ``finally:``): a context stack, as it was once the call returns, so
    nothing leaks out of the trace."""
    stack = push.func.value.id  # type: ignore[attr-defined]
    return any(isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not node.value.keywords
               and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "pop"
               and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == stack
               and not node.value.args and node.lineno > push.lineno
               for node in walk_body(function))  # type: ignore[arg-type]


def _local_names(traced, parents: Mapping[ast.AST, ast.AST]) -> set[str]:
    """The names that are the traced function's own. A def called by the function around it
    runs in that function's trace: what it puts in that function's names stays in the trace.
    (A lax body or a jitted def has a trace of its own: a tracer it leaves there leaks.)"""
    local = local_names(traced.node)
    if traced.entry in (EntryKind.CALLED, EntryKind.CALLED_FROM_LAMBDA) and not traced.is_lax_body \
            and not traced.jit_sites:
        local |= _enclosing_names(traced.node, parents)
    return local


def _carried_update(node: ast.AST) -> bool:
    """A write that updates a value from the one before (``self.n += 1``, ``self.n = self.n +
    1``): what it stores carries from call to call."""
    if isinstance(node, ast.AugAssign):
        return True
    if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Attribute):
        return False
    target = ast.dump(ast.Attribute(node.targets[0].value, node.targets[0].attr, ast.Load()))
    return any(ast.dump(part) == target for part in ast.walk(node.value) if isinstance(part, ast.Attribute))


def _state_written(node: ast.AST, traced, module: ModuleContext) -> set[str]:
    """The state a statement of a traced function rebinds, spelled as its callers do: the
    names a ``global`` declares, or ``self.v`` for a write to an attribute of a static self."""
    if isinstance(node, ast.Global):
        return set(node.names)
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {owner for target in targets for part in ast.walk(target)
                if isinstance(part, ast.Attribute) and (owner := _self_owner(part, traced, module))}
    return set()


def _writes_into(statement: ast.AST, owners: frozenset[str] | set[str]) -> bool:
    """Whether the statement sets an attribute of one of the objects or one of the attributes
    ``owners`` spells (``wf``, ``wf.x``: ``wf.x = v``)."""
    if not isinstance(statement, ast.Assign | ast.AugAssign) or not owners:
        return False
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return any(isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
               and (target.value.id in owners or f"{target.value.id}.{target.attr}" in owners) for target in targets)


def _global_owner(target: ast.AST, local: Callable[[], set[str]], module: ModuleContext) -> str | None:
    """The module-level name whose item or attribute ``target`` writes (``CACHE[k] = v``,
    ``STATE.w = v``). Not an enclosing function's name: that may be a mutable ref (Pallas
    kernels write their refs from loop bodies), and an array there fails eagerly too."""
    if isinstance(target, ast.Subscript | ast.Attribute) and isinstance(target.value, ast.Name) \
            and target.value.id not in module.imports.aliases \
            and target.value.id in module.traced.module_bindings() and target.value.id not in local():
        return target.value.id
    return None


def _self_owner(target: ast.AST, traced, module: ModuleContext) -> str | None:
    """``self.history`` for a write into the state of ``self`` (``self.total = v``,
    ``self.cache[k] = v``, ``self.history.append(v)``) in a method jitted with a static
    ``self``: the object outlives the trace, as a global does; or a traced pytree ``self`` of
    a mutable class, whose write goes to the copy jit rebuilds and is lost. (A frozen pytree
    class cannot be written to with or without jit.)"""
    function = traced.node
    if not isinstance(module.traced.parents.get(function), ast.ClassDef) or not function.args.args:
        return None
    name = function.args.args[0].arg
    if threaded_state.method_self(module, traced) != name:
        return None
    node = target
    while isinstance(node, ast.Subscript | ast.Attribute) and not (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        node = node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
            and name not in assigned_names(function.body):
        return f"{name}.{node.attr}"
    return None


def _enclosing_names(function: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> set[str]:
    """The names the functions around ``function`` bind."""
    names: set[str] = set()
    scope = parents.get(function)
    while scope is not None:
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            names |= local_names(scope)
        scope = parents.get(scope)
    return names

