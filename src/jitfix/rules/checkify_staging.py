"""Checks on traced values staged with ``checkify.check``, where equinox is not at hand.

``assert ok, msg`` (or ``if bad: raise E(msg)``) on a traced value raises under jit for every
input. ``checkify.check(ok, msg)`` stages it, but only a function ``checkify.checkify`` made
can run it under jit, and that function returns the error beside its result. So the check
is rewritten where it is, and each jit of this module whose trace reaches it -- the jit
boundary -- is wrapped so that its callers see the function they called: jitted and
checkified, then its error raised on the host (``_raise_failed_checks``, a helper added once
to the module; ``_checkified`` too where the jit finds static arguments by the signature). A boundary this module cannot wrap (a jit elsewhere, a jitted function that
traced code also calls) leaves the check reported.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable

from jitfix.analysis.blocks import assigned_names, nodes_of
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.runtime_checks import RuntimeCheck
from jitfix.analysis.traced_function import EntryKind, TracedFunction, TracedFunctions
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext, Fix, Safety
from jitfix.rules.base import ModuleContext
from jitfix.rules.function_context import FunctionContext, name_position

CHECKIFY = "jax.experimental.checkify"
# What a failed staged check raises: `checkify.JaxRuntimeError`, a ValueError.
STAGED_EXCEPTION = "ValueError"
RAISING = "_raise_failed_checks"
CHECKIFIED = "_checkified"
# The function `checkify.checkify` returns takes `(*args, **kwargs)`: `_checkified` keeps the
# signature, by which jit finds static arguments (given now, or by a later fix).

_HELPERS = {
    RAISING: '''def {name}(checked):
    """Call ``checked``, a function made by ``checkify.checkify``, as the function it checks:
    the error of a check that failed is raised here. With jit disabled the function itself
    (under the jit and ``_checkified``) runs, its checks raising where they are."""

    @{wraps}(checked)
    def call(*args, **kwargs):
        if {jax}.config.jax_disable_jit:
            return checked.__wrapped__.__wrapped__(*args, **kwargs)
        error, result = checked(*args, **kwargs)
        error.throw()
        return result

    return call
''',
    CHECKIFIED: '''def {name}(function):
    """``checkify.checkify(function)`` with ``function``'s signature, by which a jit finds its
    static arguments."""
    return {wraps}(function)({checkify}.checkify(function))
''',
}


# The helpers as `fix` writes them in a module that imports `wraps` and `checkify` by name.
HELPER_SOURCES = "".join(_HELPERS[name].format(name=name, wraps="wraps", checkify="checkify", jax="jax") + "\n\n"
                         for name in sorted(_HELPERS))


@dataclass(frozen=True)
class Boundary:
    """A jit of the module whose trace reaches a check: a decorator of ``function``'s def, or
    the ``jax.jit(f, ...)`` call that jits it."""

    function: TracedFunction
    site: ast.AST


@dataclass(frozen=True)
class CheckifiedCheck:
    """A check rewritten as ``checkify.check(ok, msg)``, with the jits that must checkify it."""

    fix: Fix
    exception: str
    caught: bool
    boundaries: tuple[Boundary, ...]

    def how(self) -> str:
        where = ", ".join(dict.fromkeys(f"`{boundary.function.qualname}`" for boundary in self.boundaries))
        raised = "a `ValueError` still" if self.exception == STAGED_EXCEPTION \
            else f"a `ValueError`, not `{self.exception}`"
        how = (f"stage it with `checkify.check` and checkify the jit of {where}, whose callers then get the error "
               f"raised when the compiled function has run (checkify's `JaxRuntimeError`, {raised})")
        if self.caught:
            how += (f"; unsafe: a handler in this file catches `{self.exception}`, which the staged check no "
                    "longer raises")
        return how


def checkified_check(module: ModuleContext, entry: FunctionContext, check: RuntimeCheck
                     ) -> CheckifiedCheck | str:
    """``check`` staged with ``checkify.check``, the jits that reach it checkified; or why not."""
    values = entry.values_at(check.statement)
    bindings = {line.targets[0].id: line.value for line in check.prelude}  # type: ignore[attr-defined]
    message = checkify_message(module, check, values.is_traced, bindings)
    if message is None:
        return ("its message is built in a way `checkify.check` cannot take as it is (a `%` or `.format`, "
                "or a name of a text that may hold braces): give it an f-string or a literal")
    checkifying = checkified_jits(module, entry)
    if isinstance(checkifying, str):
        return checkifying
    boundaries, jit_edits = checkifying
    caught = check.caught_in(module.tree, STAGED_EXCEPTION)
    edits = [_check_edit(module, check, values.is_traced, message), *jit_edits]
    fix = Fix(Safety.UNSAFE if caught else Safety.SAFE, "stage with checkify.check", merged(edits))
    return CheckifiedCheck(fix, check.exception, caught, tuple(boundaries))


def checkified_jits(module: ModuleContext, entry: FunctionContext) -> tuple[list[Boundary], list[Edit]] | str:
    """The jits that reach ``entry``'s function, and the edits that checkify them (with the
    helpers the module lacks); or why they cannot be."""
    boundaries = jit_boundaries(entry.traced, module.traced, module.imports)
    if isinstance(boundaries, str):
        return f"`checkify.check` needs its jit checkified, and {boundaries}"
    taken = _names_taken(module)
    if taken:
        return f"the module has a `{taken}` of its own, the name of a helper the staged check needs"
    edits = [_boundary_edit(module, boundary) for boundary in boundaries if not _checkified(boundary, module)]
    helper = _helper_edit(module, {RAISING, CHECKIFIED}) if edits else None
    return boundaries, edits + ([helper] if helper is not None else [])


def _names_taken(module: ModuleContext) -> str | None:
    """A helper's name the module binds to something other than that helper."""
    for statement in module.tree.body:
        for name in (RAISING, CHECKIFIED):
            binds = isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
                and statement.name == name or name in assigned_names([statement]) and not isinstance(
                    statement, ast.FunctionDef)
            if binds and not (isinstance(statement, ast.FunctionDef) and _is_the_helper(statement, name)):
                return name
    return None


def _is_the_helper(statement: ast.FunctionDef, name: str) -> bool:
    """Whether a def is the helper as `fix` writes it (its body compared, spelling aside)."""
    written = ast.parse(_HELPERS[name].format(name=name, wraps="wraps", checkify="checkify", jax="jax")).body[0]
    return ast.dump(_without_names(written)) == ast.dump(_without_names(statement))


def _without_names(node: ast.AST) -> ast.AST:
    """``node`` with the spellings of ``wraps`` and ``checkify`` (imports may alias them) left out."""
    copied = copy.deepcopy(node)
    for inner in ast.walk(copied):
        if isinstance(inner, ast.Name) and inner.id not in ("checked", "function", "args", "kwargs", "error",
                                                            "result", "call"):
            inner.id = "_"
        elif isinstance(inner, ast.Attribute):
            inner.value = ast.Name(id="_")
    return copied


def checkify_check_source(context: EditContext, holds: str, message: CheckMessage) -> str:
    """``checkify.check(holds, message, *arguments)``, laid out to fit."""
    return context.call_source(f"{context.name(CHECKIFY)}.check", [holds, message.text, *message.arguments])


# -- the jits that reach a check --------------------------------------------------------------


def jit_boundaries(target: TracedFunction, traced: TracedFunctions, imports: ImportTable
                   ) -> list[Boundary] | str:
    """The jits of this module through which tracing reaches ``target``: its own, or those of
    the traced functions that call it (or, for a lax body, that pass it), followed up to a
    jit. A description of what stands in the way where one way in is not such a jit."""
    found: list[Boundary] = []
    seen: set[int] = set()
    pending = [target]
    while pending:
        function = pending.pop()
        if id(function.node) in seen:
            continue
        seen.add(id(function.node))
        callers = _traced_callers(function, traced)
        sites = [*function.jit_sites, *function.bound_jit_sites]
        if sites and callers:
            return (f"`{function.qualname}` is jitted and also called from traced code (`{callers[0].qualname}`), "
                    "where its error could not be raised")
        if sites:
            other = next((site for site in sites if not _is_jax_jit(site, imports)), None)
            if other is not None:
                return (f"`{function.qualname}` is traced by `{ast.unparse(other)[:60]}`, which this fix does not "
                        "checkify (only `jax.jit`)")
            found.extend(Boundary(function, site) for site in sites)
            continue
        if not callers:
            return f"`{function.qualname}` is {function.how}, not jitted by this module"
        pending.extend(callers)
    return found


def _is_jax_jit(site: ast.AST, imports: ImportTable) -> bool:
    """Whether a jit site is ``jax.jit``: ``@jax.jit``, ``@partial(jax.jit, ...)``,
    ``jax.jit(f, ...)``, ``partial(jax.jit, ...)(f)`` (not ``pjit``, ``pmap``, equinox's
    ``filter_jit``: those pass arguments checkify does not take as they do)."""
    if isinstance(site, ast.Call):
        if imports.resolve(site.func) == "functools.partial":
            return bool(site.args) and imports.resolve(site.args[0]) == "jax.jit"
        return _is_jax_jit(site.func, imports)
    return imports.resolve(site) == "jax.jit"


def _jit_keywords(site: ast.AST) -> list[ast.keyword]:
    """The options given to a jit site: those of ``jax.jit(f, ...)``, of ``partial(jax.jit,
    ...)`` and of ``partial(jax.jit, ...)(f)``."""
    if not isinstance(site, ast.Call):
        return []
    return [*site.keywords, *_jit_keywords(site.func)]


def _traced_callers(function: TracedFunction, traced: TracedFunctions) -> list[TracedFunction]:
    """The traced functions whose code calls ``function`` as the analysis followed it (or,
    for a lax body, names it: the primitive it is passed to runs it)."""
    callers = [traced[scope] for scope in function.calls.callers.values()  # type: ignore[index]
               if scope in traced and scope is not function.node]
    if function.is_lax_body or function.entry is EntryKind.LAX_BODY:
        name = function.node.name
        callers += [other for other in traced.values() if other is not function and all(other is not known for known in callers)
                    and any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
                            for node in nodes_of(other.node))]
    return callers


def _checkified(boundary: Boundary, module: ModuleContext) -> bool:
    """Whether the jit already runs a checkified function (a second check of one function)."""

    def checkifies(node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == CHECKIFIED \
            or module.imports.resolve(node) == f"{CHECKIFY}.checkify"

    if isinstance(boundary.site, ast.Call) and boundary.site.args \
            and not any(boundary.site is decorator for decorator in boundary.function.node.decorator_list):
        wrapped = boundary.site.args[0]
        return isinstance(wrapped, ast.Call) and checkifies(wrapped.func)
    return any(checkifies(decorator) for decorator in boundary.function.node.decorator_list)


def _boundary_edit(module: ModuleContext, boundary: Boundary) -> Edit:
    site = boundary.site
    node = boundary.function.node
    if isinstance(site, ast.Call) and not any(site is decorator for decorator in node.decorator_list):
        return Edit(module.start_of(site), cst.Call, _checkified_call, end=module.span_of(site)[1])
    index = next(index for index, decorator in enumerate(node.decorator_list) if decorator is site)
    return Edit(name_position(module, node), cst.FunctionDef, _ModuleChange(decorated=frozenset({index})),
                merge=_merge_module_changes)


def _checkified_call(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
    """``jax.jit(f, ...)`` -> ``_raise_failed_checks(jax.jit(_checkified(f), ...))``."""
    assert isinstance(node, cst.Call) and node.args
    first = node.args[0]
    checkified = cst.Call(func=cst.Name(CHECKIFIED), args=[first.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
    jitted = node.with_changes(args=[first.with_changes(value=checkified), *node.args[1:]], lpar=[], rpar=[])
    return cst.Call(func=cst.Name(RAISING), args=[cst.Arg(jitted)], lpar=node.lpar, rpar=node.rpar)


def _helper_edit(module: ModuleContext, needed: set[str]) -> Edit | None:
    """The helpers ``needed`` that the module lacks, put before its first def or class (a jit
    they wrap comes after that: a decorator, or a call of a function defined there); None
    where it has them all."""
    statements = module.tree.body
    defined = {statement.name for statement in statements if isinstance(statement, ast.FunctionDef)}
    missing = frozenset(needed - defined)
    first = next((statement for statement in statements if isinstance(statement, ast.FunctionDef | ast.ClassDef)),
                 None)
    if not missing or first is None:
        return None
    imports = ("functools.wraps", CHECKIFY, "jax")
    if isinstance(first, ast.FunctionDef):
        return Edit(name_position(module, first), cst.FunctionDef, _ModuleChange(helpers=missing),
                    imports=imports, merge=_merge_module_changes)
    return Edit(module.start_of(first), cst.ClassDef, _ModuleChange(helpers=missing), imports=imports)


@dataclass(frozen=True)
class _ModuleChange:
    """A def (or class) given ``@_raise_failed_checks`` above and ``@_checkified`` below each
    jit decorator at ``decorated`` (its index), and/or the ``helpers`` put before it."""

    decorated: frozenset[int] = frozenset()
    helpers: frozenset[str] = frozenset()

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode | cst.FlattenSentinel:
        assert isinstance(node, cst.FunctionDef | cst.ClassDef)
        decorators: list[cst.Decorator] = []
        for index, decorator in enumerate(node.decorators):
            if index in self.decorated:
                decorators.append(cst.Decorator(cst.Name(RAISING)))
            decorators.append(decorator)
            if index in self.decorated:
                decorators.append(cst.Decorator(cst.Name(CHECKIFIED)))
        changed = node.with_changes(decorators=decorators)
        if not self.helpers:
            return changed
        made = [cst.parse_statement(_HELPERS[name].format(name=name, wraps=context.name("functools.wraps"),
                                                          checkify=context.name(CHECKIFY), jax=context.name("jax")))
                for name in sorted(self.helpers)]
        blank = [cst.EmptyLine(indent=False)] * 2
        made = [helper.with_changes(leading_lines=node.leading_lines if index == 0 else blank)
                for index, helper in enumerate(made)]
        return cst.FlattenSentinel([*made, changed.with_changes(leading_lines=blank)])


def _merge_module_changes(edits: list[Edit]) -> Edit:
    changes = [edit.replace for edit in edits]
    merged = _ModuleChange(frozenset().union(*(change.decorated for change in changes)),  # type: ignore[attr-defined]
                           frozenset().union(*(change.helpers for change in changes)))  # type: ignore[attr-defined]
    imports = tuple(dict.fromkeys(name for edit in edits for name in edit.imports))
    return Edit(edits[0].start, edits[0].node_type, merged, imports=imports, merge=_merge_module_changes)


def merged(edits: list[Edit]) -> list[Edit]:
    """One edit per node: the helper and a decorator of the same def are one change of it."""
    by_target: dict[tuple, list[Edit]] = {}
    for edit in edits:
        by_target.setdefault(edit.target, []).append(edit)
    return [group[0].merge(group) if group[0].merge and len(group) > 1 else group[0] for group in by_target.values()]


# -- the check and its message ----------------------------------------------------------------


@dataclass(frozen=True)
class CheckMessage:
    """The message as ``checkify.check`` takes it: a format text (its braces are fields) and
    the traced values it formats, in order."""

    text: str
    arguments: tuple[str, ...] = ()


def checkify_message(module: ModuleContext, check: RuntimeCheck, is_traced: Callable[[ast.AST], bool],
                     bindings: dict[str, ast.expr]) -> CheckMessage | None:
    """The check's message for ``checkify.check`` (which formats it with ``str.format``): a
    literal with its braces doubled, an f-string whose traced fields become ``{}`` and
    arguments (its static fields stay its own), a name the check's lines bind to a literal
    without braces; a text saying what failed where there is none. None for anything else."""
    message = check.message
    if message is None:
        text = f"assert {module.segment(check.test)}" if isinstance(check.statement, ast.Assert) else check.exception
        return CheckMessage(_literal(text))
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        if "{" in message.value or "}" in message.value:
            return CheckMessage(_literal(message.value))
        return CheckMessage(module.segment(message))
    if isinstance(message, ast.Name) and message.id in bindings:
        bound = bindings[message.id]
        if isinstance(bound, ast.Constant) and isinstance(bound.value, str) and not {"{", "}"} & set(bound.value):
            return CheckMessage(message.id)
        return None
    if isinstance(message, ast.JoinedStr):
        return _formatted(module, message.values, is_traced)
    parts = _concatenated(message)
    if parts is not None:  # "x too big: " + str(x)
        return _formatted(module, parts, is_traced)
    return None


def _concatenated(message: ast.expr) -> list[ast.expr] | None:
    """``"a: " + str(x) + f"..."`` as the parts of one f-string (``str(x)`` is ``{x}``); None
    for anything else."""
    if isinstance(message, ast.BinOp) and isinstance(message.op, ast.Add):
        left, right = _concatenated(message.left), _concatenated(message.right)
        return left + right if left is not None and right is not None else None
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        return [message]
    if isinstance(message, ast.JoinedStr):
        return list(message.values)
    if isinstance(message, ast.Call) and isinstance(message.func, ast.Name) and message.func.id == "str" \
            and len(message.args) == 1 and not message.keywords and not isinstance(message.args[0], ast.Starred):
        return [ast.FormattedValue(value=message.args[0], conversion=-1, format_spec=None)]
    return None


def _formatted(module: ModuleContext, parts: list[ast.expr], is_traced: Callable[[ast.AST], bool]
               ) -> CheckMessage | None:
    """The parts of ``f"... {x} ..."`` -> ``"... {} ...", x`` where ``x`` is traced; a static
    field stays an f-string's (its text is known when the check is traced)."""
    pieces: list[tuple[bool, str]] = []  # (a static field's source, else literal text of the format)
    arguments: list[str] = []
    for part in parts:
        if isinstance(part, ast.Constant):
            pieces.append((False, str(part.value).replace("{", "{{").replace("}", "}}")))
            continue
        assert isinstance(part, ast.FormattedValue)
        spec = part.format_spec
        if spec is not None and not all(isinstance(piece, ast.Constant) for piece in spec.values):  # type: ignore[attr-defined]
            return None
        spec_text = "".join(str(piece.value) for piece in spec.values) if spec is not None else ""  # type: ignore[attr-defined]
        conversion = f"!{chr(part.conversion)}" if part.conversion != -1 else ""
        suffix = conversion + (f":{spec_text}" if spec_text else "")
        if is_traced(part.value):
            pieces.append((False, "{" + suffix + "}"))
            arguments.append(module.segment(part.value))
        else:
            pieces.append((True, "{" + module.segment(part.value) + suffix + "}"))
    static = [source for is_field, source in pieces if is_field]
    if not static:
        return CheckMessage(_literal("".join(text for _, text in pieces)), tuple(arguments))
    quote = next((quote for quote in ('"', "'") if not any(quote in source or "\\" in source for source in static)),
                 None)
    if quote is None:
        return None
    body = "".join(source if is_field else _escaped(source.replace("{", "{{").replace("}", "}}"), quote)
                   for is_field, source in pieces)
    return CheckMessage(f"f{quote}{body}{quote}", tuple(arguments))


def _literal(text: str) -> str:
    """A string literal of ``text``, double-quoted where it can be."""
    return f'"{_escaped(text, chr(34))}"'


def _escaped(text: str, quote: str) -> str:
    return text.replace("\\", "\\\\").replace(quote, "\\" + quote).replace("\n", "\\n").replace("\t", "\\t")


def _check_edit(module: ModuleContext, check: RuntimeCheck, is_traced: Callable[[ast.AST], bool],
                message: CheckMessage) -> Edit:
    # `checkify.check` takes an array: a comparison of Python numbers (an eager call given
    # floats) is a Python bool, so what is not certainly an array is made one.
    as_array = not certainly_array(module, _holding_node(check))
    uses_jnp = as_array or "{jnp}" in condition_text(module, check, "{jnp}", failing=False)

    def staged(context: EditContext) -> str:
        jnp = context.name("jax.numpy") if uses_jnp else ""
        holds = condition_text(module, check, jnp, failing=False)
        return checkify_check_source(context, f"{jnp}.asarray({holds})" if as_array else holds, message)

    return staged_statement_edit(module, check, staged, (CHECKIFY, "jax.numpy") if uses_jnp else (CHECKIFY,))


def _holding_node(check: RuntimeCheck) -> ast.expr | None:
    """The expression ``condition_text`` writes as the check's passing condition, where it is
    written as it is (None where it becomes a ``jnp.logical_not`` of the test)."""
    if not check.fails_when_true:
        return check.test
    test = check.test
    return test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None


def certainly_array(module: ModuleContext, node: ast.expr | None) -> bool:
    """Whether an expression (as ``condition_text`` writes it) is an array whatever its
    inputs: a JAX function's result, a method's (``(x > 0).all()``), ``and``/``or``/``not``
    (written with ``jnp.logical_*``); not a comparison, which of Python numbers is a bool."""
    if node is None or isinstance(node, ast.BoolOp) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) \
            or isinstance(node, ast.Compare) and len(node.ops) > 1:
        return True
    if isinstance(node, ast.Call):
        resolved = module.imports.resolve(node.func)
        return resolved.startswith("jax.") if resolved else isinstance(node.func, ast.Attribute)
    return False


def staged_statement_edit(module: ModuleContext, check: RuntimeCheck, staged: Callable[[EditContext], str],
                          imports: tuple[str, ...]) -> Edit:
    """The check's statement replaced by the one ``staged`` writes: an ``assert`` or a check
    helper's call in its place, an ``if bad: raise`` by the lines that build its message and
    then it."""

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode | cst.FlattenSentinel:
        made = cst.parse_statement(f"{staged(context)}\n")
        if isinstance(updated, cst.Assert | cst.Expr):
            assert isinstance(made, cst.SimpleStatementLine)
            return made.body[0]
        assert isinstance(updated, cst.If) and isinstance(updated.body, cst.IndentedBlock)
        lines = [*updated.body.body[:-1], made]  # (the assignments that build the message, kept)
        lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel(lines)

    node_type: type[cst.CSTNode] = cst.Assert if isinstance(check.statement, ast.Assert) \
        else cst.Expr if isinstance(check.statement, ast.Expr) else cst.If
    return Edit(module.start_of(check.statement), node_type, replace, imports=imports)


_OPERATOR_TEXT = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
                  ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def condition_text(module: ModuleContext, check: RuntimeCheck, jnp: str, failing: bool) -> str:
    """The condition under which the check fails (``failing``) or passes, as an array
    expression: Python's ``and``/``or``/``not`` and chained comparisons written with
    ``jnp.logical_*`` (they take a tracer's truth), ``jnp`` spelled as given."""

    def text(node: ast.expr) -> str:
        if isinstance(node, ast.BoolOp):
            function = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
            result = text(node.values[0])
            for operand in node.values[1:]:
                result = f"{jnp}.{function}({result}, {text(operand)})"
            return result
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"{jnp}.logical_not({text(node.operand)})"
        if isinstance(node, ast.Compare) and len(node.ops) > 1:  # `0 <= i < n`: each comparison, and-ed
            operands = [node.left, *node.comparators]
            pairs = [f"{module.segment(left)} {_OPERATOR_TEXT[type(op)]} {module.segment(right)}"
                     for left, op, right in zip(operands, node.ops, operands[1:])]
            result = pairs[0]
            for pair in pairs[1:]:
                result = f"{jnp}.logical_and({result}, {pair})"
            return result
        return module.segment(node)

    test = check.test
    if check.fails_when_true == failing:
        return text(test)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return text(test.operand)
    return f"{jnp}.logical_not({text(test)})"
