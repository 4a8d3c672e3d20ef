"""Python objects handed to a jitted function: traced where they must be static (JF507), or
static where they cannot be hashed (JF508).

jit traces every argument it does not keep static, and only arrays, Python scalars and
pytrees of them can be traced; a static argument is hashed to find its compiled variant. A
function, a class, a plain object or a NamedTuple of functions passed in a traced position,
or a dataclass instance (unhashable unless frozen) passed in a static one, raises at every
call. What the callers pass comes from ``PassedValues``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Iterator

from jitfix.analysis.blocks import assigned_names, walk_body
from jitfix.analysis.catalogue import EQUINOX_SEQUENTIAL, EQUINOX_UNTRACEABLE_LAYERS, function_category
from jitfix.analysis.passed_values import Passed, PassedValues, argument_for
from jitfix.analysis.scopes import Bound, Scopes
from jitfix.analysis.traced import jit_static_parameters
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.values import positional_names
from jitfix.cst_text import cst, with_keywords
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.attributes import (
    SET_UP_METHODS,
    _certainly_no_pytree,
    _changed_attributes,
    _why_self_cannot_be_static,
)
from jitfix.rules.base import CacheKey, ModuleContext, Rule, RuleDoc
from jitfix.rules.static_arguments import static_argnames_edit
from jitfix.rules.threaded_state import hashable_instances, registered_pytree

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class JittedCallable:
    """A name callers use to call a jitted function: a decorated def's own name, or ``g`` of
    ``g = jax.jit(f)`` / ``g = jax.jit(obj.method)`` (then ``skipped`` is 1: a call does not
    pass ``self``)."""

    function: FunctionNode
    name: str
    home: ast.AST  # the scope whose binding of `name` the calls read
    static: frozenset[str]
    skipped: int = 0
    traced: TracedFunction | None = None  # None for a bound method the analysis did not trace

    def calls(self, scopes: Scopes) -> Iterator[tuple[ast.Call, ast.AST]]:
        for call, scope in scopes.calls_to(self.name):
            if isinstance(call.func, ast.Name) and scopes.binding_scope(scope, self.name) is self.home:
                yield call, scope

    def parameters(self) -> list[str]:
        function = self.function
        return [*positional_names(function)[self.skipped:], *(arg.arg for arg in function.args.kwonlyargs)]


JITTED = CacheKey[list[JittedCallable]]("jitted callables with their callers' names")


def jitted_callables(module: ModuleContext) -> list[JittedCallable]:
    return module.cached(JITTED, lambda: list(_find_jitted(module)))


def _find_jitted(module: ModuleContext) -> Iterator[JittedCallable]:
    program = module.traced.program
    if program is None:
        return
    scopes: Scopes = program.scopes
    site_scopes = {id(call): scope for scope, call in scopes.calls}
    for traced in module.traced.values():
        function = traced.node
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) or traced.bound_jit_sites:
            continue
        for site in traced.jit_sites:
            if site in function.decorator_list and not _other_jax_decorators(module, function, site):
                yield JittedCallable(function, function.name, scopes.parent.get(function, scopes.tree),
                                     traced.static_params, traced=traced)
            elif id(site) in scopes.assigned_to and not scopes.assigned_to[id(site)][1] and id(site) in site_scopes:
                yield JittedCallable(function, scopes.assigned_to[id(site)][0], site_scopes[id(site)],
                                     traced.static_params, traced=traced)
    for scope, call in scopes.calls:
        bound = _bound_method_jit(module, scopes, scope, call)
        if bound is not None:
            yield bound


def _other_jax_decorators(module: ModuleContext, function: FunctionNode, jit: ast.expr) -> bool:
    """Whether another decorator from jax wraps the def too (`@jax.jit @jax.vmap`): what the
    jit's arguments meet is then that transform, which a static argument does not get past."""
    return any(decorator is not jit and (module.imports.resolve(decorator.func if isinstance(decorator, ast.Call)
                                                                else decorator) or "").startswith("jax.")
               for decorator in function.decorator_list)


def _bound_method_jit(module: ModuleContext, scopes: Scopes, scope: ast.AST, call: ast.Call) -> JittedCallable | None:
    """``g = jax.jit(obj.method, static_argnums=...)`` with ``obj`` an instance of the module's
    class (``scopes.instance_class``): the method, with its static parameters as the bound
    method's positions count them."""
    if module.imports.resolve(call.func) != "jax.jit" or len(call.args) != 1 \
            or not isinstance(call.args[0], ast.Attribute) or id(call) not in scopes.assigned_to \
            or scopes.assigned_to[id(call)][1]:
        return None
    target = call.args[0]
    klass = scopes.instance_class(scope, target.value, call.lineno)
    method = next((node for node in klass.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                   and node.name == target.attr), None) if klass is not None else None
    if method is None or any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list):
        return None
    static = jit_static_parameters(method, call, Bound(method, 1))
    if static is None:
        return None
    return JittedCallable(method, scopes.assigned_to[id(call)][0], scope, static, skipped=1)


@dataclass(frozen=True)
class _Argument:
    """One call's argument for a parameter, and the objects it holds (None: unknown)."""

    call: ast.Call
    expr: ast.expr
    objects: list[Passed] | None
    scope: ast.AST  # the code the call is in


def _arguments(module: ModuleContext, jitted: JittedCallable, parameter: str,
               values: PassedValues) -> list[_Argument] | None:
    """What each call of ``jitted`` passes for ``parameter`` (calls that leave it out are
    skipped); None when a call may pass it through ``*args``/``**kwargs``."""
    found: list[_Argument] = []
    for call, scope in jitted.calls(values.scopes):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        argument = argument_for(call, jitted.function, parameter, jitted.skipped)
        if argument is not None:
            found.append(_Argument(call, argument, values.of(argument, scope), scope))
    return found


def _passed_values(module: ModuleContext) -> PassedValues | None:
    program = module.traced.program
    if program is None:
        return None
    return module.cached(PASSED_VALUES, lambda: PassedValues(
        program.scopes, lambda node: function_category(module.imports.resolve(node)) is not None,
        lambda call: _untraceable_layer(module, call)))


def _untraceable_layer(module: ModuleContext, call: ast.Call) -> bool:
    """``eqx.nn.MLP(...)`` (a layer holding a function or a string among its leaves), or an
    ``eqx.nn.Sequential([...])`` of one."""
    made = module.imports.resolve(call.func)
    if made in EQUINOX_UNTRACEABLE_LAYERS:
        return True
    return made == EQUINOX_SEQUENTIAL and bool(call.args) and isinstance(call.args[0], ast.List | ast.Tuple) \
        and any(isinstance(layer, ast.Call) and _untraceable_layer(module, layer) for layer in call.args[0].elts)


def _equinox_module_holding_functions(module: ModuleContext, klass: ast.ClassDef, made: ast.AST | None = None) -> bool:
    """An ``eqx.Module`` of the module with a field jit cannot trace: one its class body gives a
    function as its default, its ``__init__`` sets to a function (a lambda, a def of the
    module, one of JAX's) or to a layer that holds one, or -- without an ``__init__`` -- the
    construction ``made`` gives a function; and that is not declared static."""
    if not any(module.imports.resolve(base) == "equinox.Module" for base in klass.bases):
        return False
    fields = [node for node in klass.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)]
    static = {node.target.id for node in fields if isinstance(node.value, ast.Call)  # type: ignore[union-attr]
              and _declares_static(module, node.value)}
    for node in fields:
        if node.target.id not in static and node.value is not None and _a_function(module, node.value):  # type: ignore[union-attr]
            return True
    init = next((node for node in klass.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
    if init is None and isinstance(made, ast.Call) and not any(isinstance(a, ast.Starred) for a in made.args):
        names = [node.target.id for node in fields]  # type: ignore[union-attr]
        given = {**dict(zip(names, made.args)), **{k.arg: k.value for k in made.keywords if k.arg is not None}}
        return any(name not in static and _a_function(module, value) for name, value in given.items())
    return init is not None and any(
        isinstance(node, ast.Assign) and any(isinstance(target, ast.Attribute) and target.attr not in static
                                             for target in node.targets)
        and (isinstance(node.value, ast.Call) and _untraceable_layer(module, node.value)
             or _a_function(module, node.value)) for node in ast.walk(init))


def _a_function(module: ModuleContext, value: ast.expr) -> bool:
    """A lambda, a def of the module, or a function of JAX's (``jax.nn.relu``)."""
    if isinstance(value, ast.Lambda):
        return True
    if isinstance(value, ast.Name) and any(isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef)
                                           and statement.name == value.id for statement in module.tree.body):
        return True
    return isinstance(value, ast.Name | ast.Attribute) and function_category(module.imports.resolve(value)) is not None


def _declares_static(module: ModuleContext, field: ast.Call) -> bool:
    """``eqx.field(static=True)``, ``eqx.static_field()``, ``dataclasses.field(metadata=
    dict(static=True))`` (or ``{"static": True}``)."""
    made = module.imports.resolve(field.func)
    if made == "equinox.static_field":
        return True
    keywords = {keyword.arg: keyword.value for keyword in field.keywords}
    if made == "equinox.field":
        return _true(keywords.get("static"))
    metadata = keywords.get("metadata")
    if made != "dataclasses.field" or metadata is None:
        return False
    if isinstance(metadata, ast.Dict):
        return any(isinstance(key, ast.Constant) and key.value == "static" and _true(value)
                   for key, value in zip(metadata.keys, metadata.values))
    return isinstance(metadata, ast.Call) and isinstance(metadata.func, ast.Name) and metadata.func.id == "dict" \
        and any(keyword.arg == "static" and _true(keyword.value) for keyword in metadata.keywords)


def _true(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is True


PASSED_VALUES = CacheKey[PassedValues]("what calls pass")


class PythonObjectArgument(Rule):
    code = "JF507"
    name = "python-object-argument"
    summary = "a function, class or plain object passed to a jitted function must be static; add it to static_argnames"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls of a jitted function of the module that pass, for a parameter jit traces, "
        "an object that is no array: a function (a def, a lambda, or one of JAX's: `jax.nn.relu`, "
        "`jnp.tanh`), a class, an instance of a class of the module that is no pytree, or a NamedTuple whose fields are annotated `Callable`. What a "
        "call passes is followed through names bound once and through the calls of the function whose "
        "parameter it is. The parameter becomes static at every jit of the function. Also an equinox "
        "module with functions or strings among its leaves (`eqx.nn.MLP`, `eqx.nn.Lambda`, the pooling "
        "layers, a `Sequential` of one, a module of the file with a `Callable` field not declared "
        "static), also on the first pass of a training loop that feeds the model back: the function "
        "is jitted with `eqx.filter_jit` instead.",
        why="jit traces every argument it does not keep static, and only arrays, Python scalars and "
        "pytrees of them can be traced: each such call raises `TypeError: ... is not a valid JAX type`. "
        "A static argument is hashed instead (a function or plain object by identity), and jit "
        "compiles once for each one.",
        example="@jax.jit\ndef step(f, t, x, dt):\n    return x + f(t, x) * dt\n\n\n"
        "def decay(t, x):\n    return -x\n\n\ndef solve(x):\n    return step(decay, 0.0, x, 0.1)\n",
        fixed="from functools import partial\n\n\n"
        "@partial(jax.jit, static_argnames=(\"f\",))\ndef step(f, t, x, dt):\n    return x + f(t, x) * dt\n\n\n"
        "def decay(t, x):\n    return -x\n\n\ndef solve(x):\n    return step(decay, 0.0, x, 0.1)\n",
        safety="Safe where fixed: every such call raised before, and every call of the module gives "
        "that parameter a hashable object of this kind (a def, a class, a NamedTuple of functions, or "
        "an object whose attributes nothing changes after set-up, which a static argument would freeze "
        "at its trace). An object made anew on each call of a function compiles again for each new one. "
        "Reported without a fix where a call passes something else there (perhaps an array), an "
        "object's attributes change, or the jit's static arguments are not literals. `eqx.filter_jit` "
        "computes what `jax.jit` does for every argument `jax.jit` accepts, and keeps every leaf that "
        "is no array static (a Python number too: one compilation per value); only a plain `jax.jit` "
        "(a decorator, or `jax.jit(f)` with no other argument) becomes one, a jit with arguments of "
        "its own is reported.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        values = _passed_values(module)
        if values is None:
            return
        reported: set[tuple[int, str]] = set()  # (argument, parameter): a def redefined is jitted twice
        for jitted in jitted_callables(module):
            traced = jitted.traced
            if traced is None:
                continue
            receiver = positional_names(jitted.function)[:1]
            found: list[tuple[str, list[_Argument], _Argument]] = []
            for parameter in jitted.parameters():
                if parameter in jitted.static or parameter in receiver and _is_method(values.scopes, jitted.function):
                    continue  # a traced `self` is JF303's
                arguments = _arguments(module, jitted, parameter, values)
                if not arguments:
                    continue
                offending = [a for a in arguments if a.objects is not None
                             and any(_not_a_jax_type(module, passed) for passed in a.objects)]
                if not offending:  # a training loop feeds the model back: its first pass gets the layer
                    offending = [replace(a, objects=first) for a in arguments if a.objects is None
                                 and (first := values.on_first_call(a.expr, a.scope, a.call)) is not None
                                 and any(_equinox_object(module, passed) for passed in first)]
                if offending and (id(offending[0].expr), parameter) not in reported:
                    reported.add((id(offending[0].expr), parameter))
                    found.append((parameter, arguments, offending[0]))
            # An equinox module among them: `eqx.filter_jit` keeps every argument that is no array
            # static -- a function beside it too --, which a static argument would keep from it.
            filtered = any(_equinox_object(module, passed) for _, _, offender in found
                           for passed in offender.objects or [])
            for parameter, arguments, offender in found:
                yield self._finding(module, jitted, traced, parameter, arguments, offender, filtered)

    def _finding(self, module: ModuleContext, jitted: JittedCallable, traced: TracedFunction, parameter: str,
                 arguments: list[_Argument], first: _Argument, filtered: bool) -> Finding:
        passed = next(p for p in first.objects or [] if _not_a_jax_type(module, p))
        if _equinox_object(module, passed):
            where = (f"`{jitted.name}` is jitted with `{parameter}` traced, but this call gives it {passed.describe()}, "
                     "an equinox module with functions or strings among its leaves, which jit cannot trace: the "
                     "call raises `TypeError` (not a valid JAX type)")
            return self._filter_jit_finding(module, jitted, traced, first, where)
        if filtered:
            where = (f"`{jitted.name}` is jitted with `{parameter}` traced, but this call gives it {passed.describe()}, "
                     "which is no array: every call raises `TypeError` (not a valid JAX type)")
            return self._filter_jit_finding(module, jitted, traced, first, where)
        where = (f"`{jitted.name}` is jitted with `{parameter}` traced, but this call gives it {passed.describe()}, "
                 "which is no array: every call raises `TypeError` (not a valid JAX type)")
        why_not = self._why_not_static(module, jitted, traced, arguments)
        if why_not is not None:
            return self.finding(module, first.expr, f"{where}; not auto-fixable: {why_not}", function=traced)
        edits = [static_argnames_edit(module, site, [parameter], jitted.function) for site in traced.jit_sites]
        if not edits or any(edit is None for edit in edits):
            return self.finding(module, first.expr, f"{where}; not auto-fixable: the jit's static arguments are "
                                "not literals", function=traced)
        fix = Fix(Safety.SAFE, f"add `{parameter}` to static_argnames", edits)  # type: ignore[arg-type]
        return self.finding(module, first.expr, f"{where}; make `{parameter}` static (hashed, and compiled once "
                            "for each object)", fix, function=traced)

    def _filter_jit_finding(self, module: ModuleContext, jitted: JittedCallable, traced: TracedFunction,
                            first: _Argument, where: str) -> Finding:
        """An equinox object with such leaves: ``eqx.filter_jit`` traces its arrays and keeps the
        rest static (a static argument would hash its arrays, which cannot be hashed)."""
        why_not = _why_not_filter_jit(module, jitted)
        edits = [_filter_jit_edit(module, site) for site in traced.jit_sites] if why_not is None else []
        if why_not is None and (not edits or any(edit is None for edit in edits)):
            why_not = ("this jit is not a plain `jax.jit` that can become one: it has arguments of its own, or wraps "
                       "another transform")
        if why_not is not None:
            return self.finding(module, first.expr, f"{where}; not auto-fixable: jit it with `eqx.filter_jit`, which "
                                f"keeps what is no array static ({why_not})", function=traced)
        fix = Fix(Safety.SAFE, "jit it with `eqx.filter_jit`", edits)  # type: ignore[arg-type]
        return self.finding(module, first.expr, f"{where}; jit it with `eqx.filter_jit`, which traces the arrays "
                            "and keeps the rest static (a Python number passed to it too: one compilation for each "
                            "value)", fix, function=traced)

    @staticmethod
    def _why_not_static(module: ModuleContext, jitted: JittedCallable, traced: TracedFunction,
                        arguments: list[_Argument]) -> str | None:
        for argument in arguments:
            if argument.objects is None:
                return (f"the call at line {argument.call.lineno} passes `{module.segment(argument.expr)}`, "
                        "which may be an array (a static argument must be hashable)")
            for passed in argument.objects:
                why = _why_not_hashable_and_fixed(module, passed, jitted.function)
                if why is not None:
                    return why
        return None


def _is_method(scopes: Scopes, function: FunctionNode) -> bool:
    return isinstance(scopes.parent.get(function), ast.ClassDef) and not any(
        isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list)


def _not_a_jax_type(module: ModuleContext, passed: Passed) -> bool:
    """Whether jit cannot trace the object: a function, a class, an instance of a class that
    is certainly no pytree, or a NamedTuple holding functions."""
    if passed.function is not None or passed.library is not None or not passed.instance \
            or passed.library_object is not None:
        return True
    assert passed.klass is not None
    if _equinox_module_holding_functions(module, passed.klass, passed.node):
        return True
    fields = _namedtuple_fields(module, passed.klass)
    if fields is not None:
        return any(_callable_annotation(module, annotation) for annotation in fields.values())
    return _certainly_no_pytree(passed.klass, module)


def _equinox_object(module: ModuleContext, passed: Passed) -> bool:
    return passed.library_object is not None or passed.klass is not None and passed.instance \
        and _equinox_module_holding_functions(module, passed.klass, passed.node)


def _why_not_filter_jit(module: ModuleContext, jitted: JittedCallable) -> str | None:
    """Why ``eqx.filter_jit`` would not compute what ``jax.jit`` does where it works: it
    gives back a Python number it was passed as it is (``jax.jit`` makes it an array), so a
    function returning one of its parameters (not rebound) is left; and a module that imports
    equinox only in a block (``if __name__ == "__main__":``) has no name for it at its top level."""
    top_level = {id(statement) for statement in module.tree.body}
    if any(isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top_level and _imports_equinox(node)
           for node in ast.walk(module.tree)):
        return "the module imports equinox inside a block, where a decorator at its top level cannot name it"
    parameters = set(jitted.parameters()) - assigned_names(jitted.function.body)
    for node in walk_body(jitted.function):
        if isinstance(node, ast.Return) and node.value is not None:
            returned = node.value.elts if isinstance(node.value, ast.Tuple | ast.List) else [node.value]
            given_back = [part.id for part in returned if isinstance(part, ast.Name) and part.id in parameters]
            if given_back:
                return f"it returns its parameter `{given_back[0]}` as it is, which filter_jit would not make an array"
    return None


def _imports_equinox(statement: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(statement, ast.Import):
        return any(alias.name.split(".")[0] == "equinox" for alias in statement.names)
    return not statement.level and (statement.module or "").split(".")[0] == "equinox"


def _filter_jit_edit(module: ModuleContext, site: ast.AST) -> Edit | None:
    """``@jax.jit`` (or ``jax.jit(f)``, with no other argument) spelled ``eqx.filter_jit``;
    None for another jit."""
    jit = site.func if isinstance(site, ast.Call) else site
    if module.imports.resolve(jit) != "jax.jit" or not isinstance(jit, ast.Name | ast.Attribute) \
            or isinstance(site, ast.Call) and (len(site.args) != 1 or site.keywords):
        return None
    start, end = module.span_of(jit)
    return Edit(start, cst.Name if isinstance(jit, ast.Name) else cst.Attribute,
                lambda node, context: cst.parse_expression(context.name("equinox.filter_jit")),
                imports=("equinox.filter_jit",), end=end)


def _why_not_hashable_and_fixed(module: ModuleContext, passed: Passed, reader: FunctionNode) -> str | None:
    """Why the object would not do as a static argument: unhashable, an array among a
    NamedTuple's fields, or attributes that change (a static object is read once, at its trace)."""
    if passed.function is not None or passed.library is not None:
        return None
    klass = passed.klass
    assert klass is not None
    if not passed.instance:  # a class: its own attributes are what a trace reads
        store = _attribute_store_outside(module, klass)
        return None if store is None else (f"line {store.lineno} sets `.{store.attr}`, which a static "
                                           f"`{klass.name}` would not see after its trace")
    fields = _namedtuple_fields(module, klass)
    if fields is not None:
        mixed = [name for name, annotation in fields.items() if not _callable_annotation(module, annotation)]
        return f"`{klass.name}.{mixed[0]}` may hold an array, which is unhashable" if mixed else None
    if not _certainly_no_pytree(klass, module):
        return f"`{klass.name}` may be a pytree"
    if not hashable_instances(klass):
        return f"instances of `{klass.name}` compare by value and are unhashable"
    changed = _changed_attributes(module.tree, klass, reader)
    if changed:
        attribute, how = next(iter(changed.items()))
        return f"`{attribute}` of a `{klass.name}` is {how}, which a static argument would freeze at its trace"
    store = _attribute_store_outside(module, klass)
    if store is not None:
        return (f"line {store.lineno} sets `.{store.attr}`, which a static `{klass.name}` would not see after "
                "its trace")
    return None


def _attribute_store_outside(module: ModuleContext, klass: ast.ClassDef) -> ast.Attribute | None:
    """A store to an attribute named like one the class's instances have (``obj.by = 2.0``),
    anywhere but in the class's set-up methods: it may change an instance after a trace read it."""
    attributes = {target.attr for method in klass.body if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
                  for target in ast.walk(method) if isinstance(target, ast.Attribute)
                  and isinstance(target.ctx, ast.Store)}
    attributes |= {target.id for node in klass.body if isinstance(node, ast.Assign | ast.AnnAssign)
                   for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                   if isinstance(target, ast.Name)}
    set_up = [method for method in klass.body if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
              and method.name in SET_UP_METHODS]
    inside = {id(node) for method in set_up for node in ast.walk(method)}
    return next((node for node in ast.walk(module.tree) if isinstance(node, ast.Attribute)
                 and isinstance(node.ctx, ast.Store) and node.attr in attributes and id(node) not in inside), None)


def _namedtuple_fields(module: ModuleContext, klass: ast.ClassDef) -> dict[str, ast.expr] | None:
    """The annotated fields of a ``typing.NamedTuple`` class (None for another class)."""
    if not any(module.imports.resolve(base) in ("typing.NamedTuple", "typing_extensions.NamedTuple")
               for base in klass.bases):
        return None
    return {node.target.id: node.annotation for node in klass.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def _callable_annotation(module: ModuleContext, annotation: ast.expr) -> bool:
    """``Callable`` or ``Callable[...]`` (typing's or collections.abc's)."""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    return module.imports.resolve(annotation) in ("typing.Callable", "collections.abc.Callable")


class UnhashableStaticArgument(Rule):
    code = "JF508"
    name = "unhashable-static-argument"
    summary = "a static argument must be hashable: a dataclass instance is not unless frozen; freeze the class"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls of a jitted function of the module that pass, for a static parameter "
        "(`static_argnums`/`static_argnames`), an instance of a dataclass of the module that is not "
        "frozen (nor `unsafe_hash=True`, nor with its own `__hash__`), and makes the class "
        "`frozen=True`; and `static_argnums` of a method jitted by its decorator counted as if `self` "
        "were not (jax#17158: `static_argnums=(1,)` meant for the flag after `x`).",
        why="jit finds the compiled variant for a static argument by its hash. A dataclass compares "
        "by value (`eq=True`), so Python sets its `__hash__` to None unless it is frozen: every call "
        "raises `ValueError: Non-hashable static arguments are not supported`.",
        example="import dataclasses\nfrom functools import partial\n\n\n@dataclasses.dataclass\nclass Config:\n    width: int\n    scale: float = 1.0\n\n\n"
        "@partial(jax.jit, static_argnums=1)\ndef head(x, config):\n    return x[:, : config.width] * config.scale\n\n\n"
        "def run(x):\n    return head(x, Config(2))\n",
        fixed="import dataclasses\nfrom functools import partial\n\n\n@dataclasses.dataclass(frozen=True)\nclass Config:\n    width: int\n    scale: float = 1.0\n\n\n"
        "@partial(jax.jit, static_argnums=1)\ndef head(x, config):\n    return x[:, : config.width] * config.scale\n\n\n"
        "def run(x):\n    return head(x, Config(2))\n",
        safety="Safe where fixed: every such call raised before. A frozen dataclass hashes and compares "
        "by its fields, so equal configurations share one compiled variant. Made only where nothing in "
        "the module sets an attribute of any object to one of the class's field names (a frozen "
        "instance raises on it), the class has no base, no subclass in the module, no `__init__` or "
        "`__post_init__` of its own, and every field is annotated with a hashable type (`int`, "
        "`float`, `bool`, `str`, `None`, tuples and `Optional`/`Literal` of those); reported without "
        "a fix otherwise. On a method, `static_argnums` counts `self` as 0: where every static position "
        "is given a JAX array by every call of the module (`t.f(jnp.array(...), True)`: unhashable, so "
        "every call raised) and the next position a constant, each number is shifted by one, and `self` "
        "joins them where its class is a plain object (`static_argnums=(1,)` -> `(0, 2)`; safe: every such "
        "call raised before).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        values = _passed_values(module)
        if values is None:
            return
        for traced in {id(traced.node): traced for traced in module.traced.values()}.values():
            miscounted = _argnums_counted_without_self(module, traced)
            if miscounted is not None:
                yield self._miscounted_finding(module, traced, miscounted)
        reported: set[tuple[int, str]] = set()
        for jitted in jitted_callables(module):
            for parameter in sorted(jitted.static):
                for argument in _arguments(module, jitted, parameter, values) or []:
                    unhashable = [p.klass for p in argument.objects or [] if p.instance and p.klass is not None
                                  and _dataclass_decorator(module, p.klass) is not None
                                  and not hashable_instances(p.klass)]
                    if unhashable and (id(argument.expr), parameter) not in reported:
                        reported.add((id(argument.expr), parameter))
                        yield self._finding(module, jitted, parameter, argument, unhashable[0])
                        break

    def _finding(self, module: ModuleContext, jitted: JittedCallable, parameter: str, argument: _Argument,
                 klass: ast.ClassDef) -> Finding:
        where = (f"`{jitted.name}` is jitted with `{parameter}` static, but this call gives it a `{klass.name}`, "
                 "a dataclass that is not frozen and so unhashable: every call raises `ValueError` (non-hashable "
                 "static arguments are not supported)")
        function = jitted.traced
        why_not = _why_not_frozen(module, klass)
        if why_not is not None:
            return self.finding(module, argument.expr, f"{where}; not auto-fixable: {why_not}; give `{klass.name}` "
                                "a `__hash__`, or make it a pytree and the parameter traced", function=function)
        decorator = _dataclass_decorator(module, klass)
        assert decorator is not None
        fix = Fix(Safety.SAFE, f"freeze `{klass.name}`", [_frozen_edit(module, decorator)])
        return self.finding(module, argument.expr, f"{where}; make `{klass.name}` a frozen dataclass (hashed by "
                            "its fields)", fix, function=function)


    def _miscounted_finding(self, module: ModuleContext, traced: TracedFunction, miscounted: _Miscounted) -> Finding:
        function = traced.node
        names = positional_names(function)
        given = ", ".join(f"`{names[index]}`" for index in miscounted.given)
        meant = ", ".join(f"`{names[index]}`" for index in miscounted.meant)
        where = (f"`static_argnums={module.segment(miscounted.keyword.value)}` of the method `{traced.qualname}` "
                 f"counts `{names[0]}` as 0, so it makes {given} static, which every call gives a JAX array: "
                 "every call raises `ValueError` (non-hashable static arguments are not supported)")
        numbers = tuple(miscounted.meant if not miscounted.static_self else (0, *miscounted.meant))
        spelled = f"({numbers[0]},)" if len(numbers) == 1 else str(numbers)
        fix = Fix(Safety.SAFE, f"count `{names[0]}`: static_argnums={spelled}",
                  [_argnums_edit(module, miscounted.keyword, spelled)])
        why = f"{meant} meant, and `{names[0]}` too (a plain object)" if miscounted.static_self else f"{meant} meant"
        return self.finding(module, miscounted.keyword, f"{where}; count `{names[0]}`: `static_argnums={spelled}` "
                            f"({why})", fix, function=traced)


@dataclass(frozen=True)
class _Miscounted:
    """``static_argnums`` of a jitted method written as if ``self`` were not counted: the
    positions it makes static (``given``) and those meant (one further each)."""

    keyword: ast.keyword
    given: tuple[int, ...]
    meant: tuple[int, ...]
    static_self: bool  # `self` is a plain object: static too


def _argnums_counted_without_self(module: ModuleContext, traced: TracedFunction) -> _Miscounted | None:
    """A method jitted by its decorator (``@partial(jax.jit, static_argnums=(1,))``) whose
    every static position, counting ``self`` as 0, is given a JAX array by every call of the
    module (``t.f(jnp.array(...), True)``: unhashable, so every call raises), while the next
    position is given a Python constant: the numbers were counted without ``self`` (jax#17158)."""
    function = traced.node
    klass = module.traced.parents.get(function)
    if not isinstance(klass, ast.ClassDef) or not isinstance(function, ast.FunctionDef) \
            or len(function.decorator_list) != 1:
        return None
    decorator = function.decorator_list[0]
    if not (isinstance(decorator, ast.Call) and module.imports.resolve(decorator.func) == "functools.partial"
            and decorator.args and module.imports.resolve(decorator.args[0]) == "jax.jit" and len(decorator.args) == 1):
        return None
    keyword = next((item for item in decorator.keywords if item.arg == "static_argnums"), None)
    if keyword is None or len(decorator.keywords) != 1:
        return None  # (`donate_argnums` or `static_argnames` beside it may count otherwise)
    given = _literal_ints(keyword.value)
    names = positional_names(function)
    if not given or 0 in given or any(not 0 < index < len(names) - 1 for index in given) \
            or function.args.vararg is not None:
        return None
    calls = list(_method_calls(module, klass, function.name))
    if not calls:
        return None
    for call, scope in calls:
        if any(isinstance(argument, ast.Starred) for argument in call.args) or call.keywords:
            return None
        for index in given:  # (the call does not pass `self`: its arguments count from 1)
            if index - 1 >= len(call.args) or not _a_jax_array(module, call.args[index - 1], scope, call.lineno):
                return None
            if index < len(call.args) and not isinstance(call.args[index], ast.Constant):
                return None
    meant = tuple(sorted(index + 1 for index in given))
    if registered_pytree(module, klass):
        return _Miscounted(keyword, tuple(given), meant, static_self=False)
    if not _certainly_no_pytree(klass, module) or "__hash__" in assigned_names(klass.body) \
            or _why_self_cannot_be_static(module, traced, klass, names[0]) is not None:
        return None  # (`self` must be static, and it may not hash or may change after set-up)
    return _Miscounted(keyword, tuple(given), meant, static_self=True)


def _literal_ints(node: ast.expr) -> list[int] | None:
    parts = node.elts if isinstance(node, ast.Tuple | ast.List) else [node]
    if all(isinstance(part, ast.Constant) and type(part.value) is int for part in parts):
        return [part.value for part in parts]  # type: ignore[attr-defined]
    return None


def _method_calls(module: ModuleContext, klass: ast.ClassDef, name: str) -> Iterator[tuple[ast.Call, ast.AST]]:
    """Every call ``obj.name(...)`` of the module whose ``obj`` is an instance of ``klass``
    (``scopes.instance_class``), with the scope it is in."""
    program = module.traced.program
    if program is None:
        return
    scopes: Scopes = program.scopes
    stack: list[tuple[ast.AST, ast.AST]] = [(module.tree, module.tree)]
    while stack:
        node, scope = stack.pop()
        inner = node if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else scope
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
                and scopes.instance_class(scope, node.func.value, node.lineno) is klass:
            yield node, scope
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def _a_jax_array(module: ModuleContext, value: ast.expr, scope: ast.AST, line: int) -> bool:
    """Whether ``value`` is certainly a JAX array: made by an array function of JAX
    (``jnp.array([1, 2])``), arithmetic on one, or a name last bound so before ``line``."""
    if isinstance(value, ast.Call):
        return function_category(module.imports.resolve(value.func)) in ("array", "one array")
    if isinstance(value, ast.BinOp):
        return _a_jax_array(module, value.left, scope, line) or _a_jax_array(module, value.right, scope, line)
    if isinstance(value, ast.Name) and module.traced.program is not None:
        bound = module.traced.program.scopes.assignment_before(scope, value.id, line)
        return isinstance(bound, ast.expr) and _a_jax_array(module, bound, scope, line)
    return False


def _argnums_edit(module: ModuleContext, keyword: ast.keyword, spelled: str) -> Edit:
    """The keyword argument ``static_argnums=...`` given the value ``spelled``."""
    def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Arg)
        return node.with_changes(value=cst.parse_expression(spelled))

    return Edit(module.start_of(keyword), cst.Arg, replace)


def _dataclass_decorator(module: ModuleContext, klass: ast.ClassDef) -> ast.expr | None:
    for decorator in klass.decorator_list:
        if module.imports.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator) \
                == "dataclasses.dataclass":
            return decorator
    return None


_HASHABLE_TYPES = frozenset({"int", "float", "bool", "str", "bytes", "complex", "None", "tuple", "Tuple",
                             "Optional", "Literal", "Union", "typing.Optional", "typing.Literal", "typing.Union",
                             "typing.Tuple", "frozenset"})


def _why_not_frozen(module: ModuleContext, klass: ast.ClassDef) -> str | None:
    """Why ``frozen=True`` could break the class or its users (None: it cannot)."""
    if klass.bases or klass.keywords:
        return f"`{klass.name}` has a base class"
    own = {node.name for node in klass.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    if own & {"__init__", "__post_init__", "__setattr__"}:
        return f"`{klass.name}` sets its own attributes up (`{sorted(own & {'__init__', '__post_init__'})[0]}`)"
    fields: dict[str, ast.expr] = {node.target.id: node.annotation for node in klass.body
                                   if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}
    for name, annotation in fields.items():
        if not _hashable_annotation(module, annotation):
            return f"the field `{name}: {module.segment(annotation)}` may hold an unhashable value"
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ClassDef) and any(isinstance(base, ast.Name) and base.id == klass.name
                                                  for base in node.bases):
            return f"`{node.name}` derives from `{klass.name}`"
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
        for target in targets:
            for item in ast.walk(target):
                if isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store) and item.attr in fields:
                    return f"line {item.lineno} sets `.{item.attr}`, which a frozen `{klass.name}` refuses"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            return f"line {node.lineno} calls `setattr`, which a frozen `{klass.name}` may refuse"
    return None


def _hashable_annotation(module: ModuleContext, annotation: ast.expr) -> bool:
    """Whether the annotation names only hashable types (``int``, ``Optional[str]``,
    ``tuple[int, ...]``, ``Literal["a"]``, ``float | None``)."""
    if isinstance(annotation, ast.Constant):
        return annotation.value is None or annotation.value is Ellipsis or isinstance(annotation.value, str | int)
    if isinstance(annotation, ast.Name | ast.Attribute):
        name = module.imports.resolve(annotation) or (annotation.id if isinstance(annotation, ast.Name) else None)
        return name in _HASHABLE_TYPES
    if isinstance(annotation, ast.Subscript):
        return _hashable_annotation(module, annotation.value) and _hashable_annotation(module, annotation.slice)
    if isinstance(annotation, ast.Tuple):
        return all(_hashable_annotation(module, element) for element in annotation.elts)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _hashable_annotation(module, annotation.left) and _hashable_annotation(module, annotation.right)
    return False


def _frozen_edit(module: ModuleContext, decorator: ast.expr) -> Edit:
    """``@dataclass`` -> ``@dataclass(frozen=True)``; ``@dataclass(order=True)`` gets the keyword."""
    start, end = module.span_of(decorator)
    node_type = cst.Call if isinstance(decorator, ast.Call) else cst.Name if isinstance(decorator, ast.Name) \
        else cst.Attribute

    def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        frozen = [("frozen", cst.Name("True"))]
        if isinstance(node, cst.Call):
            return with_keywords(node, frozen)
        assert isinstance(node, cst.BaseExpression)
        return with_keywords(cst.Call(func=node), frozen)

    return Edit(start, node_type, replace, end=end)

