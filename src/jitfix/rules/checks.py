"""JF105's fix: an `assert` on a traced value becomes a check JAX computes.

``assert cond, "msg"`` in traced code becomes ``checkify.check(cond, "msg")``. Each jitted
function the check is traced under (the function itself, the jitted functions that call it,
or the function that passes it to a lax primitive) is wrapped in ``checkify.checkify`` below
its ``@jax.jit`` under a new name, and a function of its old name and parameters calls it and
throws the error: every caller, here or in another module, is unchanged, and a failing check
raises at call time from compiled code (checkify's ``JaxRuntimeError``, a ``ValueError``).

The fix is made only where every way into the check is such a jitted function, and every
use of their names is a call from eager code (an error cannot be thrown while tracing); what
stands in the way is said instead.
"""

from __future__ import annotations

import ast

from jitfix.analysis.blocks import walk_body
from jitfix.analysis.traced_function import EntryKind, TracedFunction
from jitfix.cst_text import code, cst
from jitfix.findings import Edit, EditContext, Fix, Safety
from jitfix.naming import unique_name
from jitfix.rules.base import ModuleContext
from jitfix.rules.function_context import name_position

CHECKIFY = "jax.experimental.checkify"


def checkify_fix(module: ModuleContext, traced: TracedFunction, node: ast.Assert) -> Fix | str:
    """The fix of one traced ``assert``, or why there is none."""
    wrapped = _jitted_around(module, traced)
    if isinstance(wrapped, str):
        return wrapped
    taken = _names_of(module.tree)
    edits = [Edit(module.start_of(node), cst.Assert, _AsCheck(_message(module, node)), imports=(CHECKIFY,))]
    for jitted in wrapped:
        by_keyword = _passed_by_keyword(jitted)
        if by_keyword is None:
            return f"the static arguments of `{jitted.node.name}`'s jit are not written out as names or positions " \
                   "that a call passing each parameter on can keep"
        inner = unique_name(f"_{jitted.node.name.lstrip('_')}_checked", set(taken))
        edits.append(Edit(name_position(module, jitted.node), cst.FunctionDef,
                          _Checkified(inner, unique_name("err", set(taken)), unique_name("result", set(taken)),
                                      by_keyword), imports=(CHECKIFY,)))
    names = ", ".join(f"`{jitted.node.name}`" for jitted in wrapped)
    return Fix(Safety.SAFE, f"check with `checkify.check`; {names} wrapped in `checkify.checkify`, its callers "
                            "unchanged (a failing check raises checkify's `JaxRuntimeError`, a `ValueError`)", edits)


def _jitted_around(module: ModuleContext, traced: TracedFunction) -> list[TracedFunction] | str:
    """The functions jitted by their decorator that every way into ``traced`` goes through;
    why there are none."""
    wrapped: list[TracedFunction] = []
    pending, seen = [traced], set()
    while pending:
        function = pending.pop()
        if function.node in seen:
            continue
        seen.add(function.node)
        decorators = getattr(function.node, "decorator_list", [])
        if function.jit_sites and all(site in decorators for site in function.jit_sites):
            problem = _called_eagerly_only(module, function)
            if problem:
                return problem
            wrapped.append(function)
        elif function.entry is EntryKind.LAX_BODY and function.enclosing is not None:
            pending.append(function.enclosing)  # its check is traced where the primitive is called
        elif function.entry in (EntryKind.CALLED, EntryKind.CALLED_FROM_LAMBDA, EntryKind.OBSERVED) \
                and not function.jit_sites:
            callers = _traced_callers(module, function)
            if isinstance(callers, str):
                return callers
            pending.extend(callers)
        else:
            return f"`{function.qualname}` is {function.how}: only a function jitted by its decorator can be " \
                   "wrapped in `checkify.checkify`"
    return wrapped


def _passed_by_keyword(jitted: TracedFunction) -> frozenset[str] | None:
    """The parameters the wrapper passes on by keyword: those the jit names static (a
    ``checkify.checkify`` function takes ``*args, **kwargs``, so jit finds a static argument
    by name only among the keywords), and every positional one after the first of them. None
    when a position the jit makes static would have to be passed by keyword."""
    names: set[str] = set()
    positions: set[int] = set()
    for site in jitted.jit_sites:
        call = site if isinstance(site, ast.Call) else None
        for keyword in call.keywords if call is not None else ():
            if keyword.arg not in ("static_argnames", "static_argnums"):
                continue
            try:
                value = ast.literal_eval(keyword.value)
            except ValueError:
                return None
            values = value if isinstance(value, tuple | list) else (value,)
            (names if keyword.arg == "static_argnames" else positions).update(values)
    positional = [arg.arg for arg in [*jitted.node.args.posonlyargs, *jitted.node.args.args]]
    first = min((index for index, name in enumerate(positional) if name in names), default=len(positional))
    if any(position >= first or position < 0 for position in positions):
        return None
    return frozenset(positional[first:]) | names


def _uses(module: ModuleContext, name: str) -> list[ast.Name]:
    return [node for node in ast.walk(module.tree) if isinstance(node, ast.Name) and node.id == name
            and isinstance(node.ctx, ast.Load)]


def _at_top_level(module: ModuleContext, function: TracedFunction) -> bool:
    return module.traced.parents.get(function.node) is module.tree and isinstance(function.node, ast.FunctionDef)


def _traced_callers(module: ModuleContext, function: TracedFunction) -> list[TracedFunction] | str:
    """The traced functions of the module that call ``function`` (a def of the module's top
    level); why not, where its name is used otherwise."""
    name = function.node.name
    if not _at_top_level(module, function):
        return f"`{function.qualname}` is not a function of the module's top level"
    called_by: dict[int, TracedFunction] = {}
    for caller in module.traced.values():
        for node in walk_body(caller.node):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                called_by[id(node.func)] = caller
    for use in _uses(module, name):
        if id(use) not in called_by:
            return f"`{name}` is used outside the traced calls of it (line {use.lineno})"
    if not called_by:
        return f"`{name}` is not called from traced code of this module"
    return list({id(caller): caller for caller in called_by.values()}.values())


def _called_eagerly_only(module: ModuleContext, jitted: TracedFunction) -> str | None:
    """Why the error of a jitted function could not be thrown after each call of it: a call
    from traced code, or a use of its name that is not a call (``jax.vmap(f)`` traces it)."""
    name = jitted.node.name
    if not _at_top_level(module, jitted):
        return f"`{jitted.qualname}` is not a function of the module's top level"
    traced_nodes = {id(node) for traced in module.traced.values() for node in walk_body(traced.node)}
    called = {id(node.func) for node in ast.walk(module.tree) if isinstance(node, ast.Call)}
    for use in _uses(module, name):
        if id(use) in traced_nodes:
            return f"`{name}` is called from traced code (line {use.lineno}), where an error cannot be thrown"
        if id(use) not in called:
            return f"`{name}` is used other than by a call (line {use.lineno}): what it is passed to may trace it"
    return None


def _names_of(tree: ast.Module) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} | {
        node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def _message(module: ModuleContext, node: ast.Assert) -> str:
    """The assert's message as the user wrote it where it is a literal string, else the
    test's source, as a string literal."""
    if isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str):
        return module.segment(node.msg)
    text = f"assertion failed: {' '.join(module.segment(node.test).split())}"
    return f'"{text}"' if '"' not in text and "\\" not in text else repr(text)


class _AsCheck:
    def __init__(self, message: str):
        self.message = message  # a string literal
    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Assert)
        check = f"{context.name(CHECKIFY)}.check({code(node.test)}, {self.message})"
        return cst.Expr(cst.parse_expression(check))


class _Checkified:
    """The jitted def renamed and wrapped in ``checkify.checkify`` (the decorator nearest the
    def, below ``@jax.jit``), followed by a def of its old name and parameters that calls it
    and throws the error."""

    def __init__(self, inner: str, error: str, result: str, by_keyword: frozenset[str]):
        self.inner, self.error, self.result, self.by_keyword = inner, error, result, by_keyword

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        checkified = cst.Decorator(cst.parse_expression(f"{context.name(CHECKIFY)}.checkify"))
        inner = node.with_changes(name=cst.Name(self.inner), decorators=[*node.decorators, checkified])
        indent = " " * 4
        wrapper = cst.parse_statement(
            f"def {node.name.value}({code(node.params)}):\n"
            f"{indent}{self.error}, {self.result} = {self.inner}({_forwarded(node.params, self.by_keyword)})\n"
            f"{indent}{self.error}.throw()\n"
            f"{indent}return {self.result}\n")
        blank = cst.EmptyLine(indent=False)
        return cst.FlattenSentinel([inner, wrapper.with_changes(leading_lines=[blank, blank])])  # type: ignore[return-value]


def _forwarded(params: cst.Parameters, by_keyword: frozenset[str]) -> str:
    """The arguments that pass each parameter on as it was taken (``by_keyword``: by name)."""
    passed = [f"{param.name.value}={param.name.value}" if param.name.value in by_keyword else param.name.value
              for param in [*params.posonly_params, *params.params]]
    if isinstance(params.star_arg, cst.Param):
        passed.append(f"*{params.star_arg.name.value}")
    passed += [f"{param.name.value}={param.name.value}" for param in params.kwonly_params]
    if params.star_kwarg is not None:
        passed.append(f"**{params.star_kwarg.name.value}")
    return ", ".join(passed)
