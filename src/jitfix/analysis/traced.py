"""Which functions of a module run under a JAX trace, and which of their parameters are static.

A function is traced when it is

* decorated with ``jax.jit`` in any import spelling, ``partial(jax.jit, ...)``,
  ``equinox.filter_jit``, or another tracing transform (``jax.grad``, ``jax.vmap``, ...);
* wrapped by a call to one: ``g = jax.jit(f)``, ``jax.jit(jax.grad(f))``, ``jax.vmap(f)``;
* passed as a body to ``lax.scan`` / ``lax.fori_loop`` / ``lax.while_loop`` / ``lax.cond`` /
  ``lax.switch`` / ``lax.map``;
* called from a traced function of the same module.

Parameters named by ``static_argnums``/``static_argnames`` are static; the other parameters
of a jitted function are traced. For a helper reached through the call graph a parameter is
traced only when a traced call site passes it a traced value.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from jitfix.analysis.blocks import FunctionNode, walk_body, walk_tree
from jitfix.analysis.catalogue import (BODY_ARGUMENTS, BODY_TRACED_COUNT, FILTERED_TRANSFORMS, FLAX_APPLY_METHODS, call_category,
                                       FLAX_APPLY_OPTIONS, GRAD_TRANSFORMS, JIT_TRANSFORMS, MAPPING_TRANSFORMS,
                                       ONE_ARRAY, PARTIAL, RECEIVERS, REVERSE_AD_TRANSFORMS, STAGING_TRANSFORMS,
                                       SWITCH, TRACING_TRANSFORMS, is_array_annotation)
from jitfix.analysis.flow import State, module_static_names
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.observations import CALLED, CHANGED, STAGED, STATIC, Observation
from jitfix.analysis.project import Project
from jitfix.analysis.frameworks import flax_apply
from jitfix.analysis.scopes import Bound, CalledAs, Scopes, scope_index
from jitfix.analysis.summaries import ModuleProgram
from jitfix.analysis.traced_function import (
    LAMBDA_NAME,
    EntryKind,
    TracedFunction,
    TracedFunctions,
    lambda_as_function,
)
from jitfix.analysis.values import (
    LOOP_CARRIES,
    MODULE_CONSTANT,
    SCANNED,
    TRACED_KIND,
    TREE_MAPS,
    UNKNOWN_KIND,
    UNKNOWN_VALUE,
    ValueAnalysis,
    Verdict,
    carried,
    defaults_left,
    lax_operand,
    named_parameters,
    parameter_names,
    positional_names,
    positional_parameters,
    pytree_form,
)


@dataclass(frozen=True)
class _Transform:
    """What a decorator or wrapping call does to the function it receives."""

    name: str
    keywords: tuple[ast.keyword, ...]
    # vmap/pmap's in_axes given positionally: jax.vmap(f, (0, None)).
    in_axes: ast.AST | None = None


def _holding_tracers(verdict: Verdict, name: str) -> Verdict | None:
    """A plain object's verdict with only its attributes that hold tracers -- or objects that
    hold some --, each as one verdict whatever the call (so calls that give alike objects
    agree); None where it holds none."""
    held: list[tuple[str, Verdict]] = []
    for attribute, value in verdict.fields or ():
        if value.traced:
            held.append((attribute, Verdict(TRACED_KIND, f"`.{attribute}` holds a tracer each call gives it",
                                            array=value.array)))
        elif value.klass is None and (inner := _holding_tracers(value, f"{name}.{attribute}")) is not None:
            held.append((attribute, inner))
    if not held:
        return None
    return Verdict(UNKNOWN_KIND, f"`{name}` is an object made in traced code, with tracers in it", fields=tuple(held),
                   made=verdict.made)


@dataclass(frozen=True)
class _TracedLambda:
    """A lambda a transform traces (``jax.jit(lambda x: f(x, cfg))``, a ``lax`` body): the
    functions its body calls receive the tracers its parameters pass them."""

    scope: ast.AST
    node: ast.Lambda
    traced: frozenset[str]
    traced_as: str  # how the lambda itself is traced: "wrapped by jax.jit at line 3"
    staged: bool
    lax_body: bool = False
    # What a lax loop passes its parameters, where the call shows it (``_body_shapes``).
    shapes: tuple[Verdict, ...] = ()

    @property
    def how(self) -> str:
        """How the functions its body calls are traced."""
        return f"called from a lambda, {self.traced_as}" if self.lax_body else f"called from a lambda {self.traced_as}"

    @property
    def entry(self) -> EntryKind:
        return EntryKind.LAX_BODY if self.lax_body else EntryKind.TRANSFORM


# How often what one call passes may change freely while calls are followed (see _follow).
MAX_FREE_CHANGES = 4


def _one_value(verdict: Verdict) -> bool:
    """One array, or a Python number or bool: never a tuple or dict."""
    return verdict.array or verdict.scalar or verdict.single


def _literal_strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [value for element in node.elts for value in _literal_strings(element)]
    return []


def _literal_ints(node: ast.AST) -> list[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return [node.value]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return [-value for value in _literal_ints(node.operand)]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [value for element in node.elts for value in _literal_ints(element)]
    return []


def _positional_reached(positional: list[str], call: ast.Call) -> list[str]:
    """The positional parameters a call's positional arguments reach, in order: after `self`
    or `cls` where the function is called as a method (`obj.step(x)`)."""
    method = isinstance(call.func, ast.Attribute) and bool(positional) and positional[0] in RECEIVERS
    return positional[1:] if method else positional


def _static_params(function: FunctionNode | ast.Lambda, transform: _Transform,
                   bound: Bound | None = None) -> frozenset[str]:
    """The parameters the transform's keywords make static: ``static_argnames``, and the
    positions of ``static_argnums`` (pmap's ``static_broadcasted_argnums``) among the
    arguments of what it wraps: with ``bound``, `partial(f, a)` or flax's `model.apply`,
    whose first argument (the variables) does not reach `__call__`."""
    argnums = "static_broadcasted_argnums" if transform.name == "jax.pmap" else "static_argnums"
    keywords = transform.keywords
    positional = positional_names(function)
    if bound is not None:
        positional = [""] * bound.skipped + positional[bound.positional:]
    static: set[str] = set()
    for keyword in keywords:
        if keyword.arg == "static_argnames":
            static.update(_literal_strings(keyword.value))
        elif keyword.arg == argnums:
            for index in _literal_ints(keyword.value):
                if -len(positional) <= index < len(positional):
                    static.add(positional[index])
    return frozenset(static)


def jit_static_parameters(function: FunctionNode, call: ast.Call, bound: Bound | None = None) -> frozenset[str] | None:
    """The parameters ``jax.jit(..., static_argnums=..., static_argnames=...)`` (``call``)
    makes static in ``function`` (reached through ``bound``: a bound method's `self` is not
    passed); None where its keywords are not literals the analysis can read."""
    keywords = tuple(call.keywords)
    if not _readable_static_arguments(keywords):
        return None
    return _static_params(function, _Transform("jax.jit", keywords), bound)


def _is_literal_of(node: ast.AST, types: tuple[type, ...]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, types)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _is_literal_of(node.operand, types)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_is_literal_of(element, types) for element in node.elts)
    return False


def _readable_static_arguments(keywords: tuple[ast.keyword, ...]) -> bool:
    """Whether the analysis can tell which arguments are static (literal values only)."""
    for keyword in keywords:
        if keyword.arg is None:
            return False  # **options may hold static_argnums
        if keyword.arg in {"static_argnames"} and not _is_literal_of(keyword.value, (str,)):
            return False
        if keyword.arg in {"static_argnums", "static_broadcasted_argnums"} and not _is_literal_of(keyword.value, (int,)):
            return False
    return True


def _mapped_params(function: FunctionNode | ast.Lambda, transform: _Transform) -> frozenset[str]:
    """Parameters vmap/pmap pass tracers to: those whose in_axes entry is not None.

    An in_axes the analysis cannot read (a variable, a dict) leaves every parameter unknown.
    """
    in_axes = transform.in_axes
    for keyword in transform.keywords:
        if keyword.arg == "in_axes":
            in_axes = keyword.value
    params = parameter_names(function)
    if in_axes is None:
        return frozenset(params)  # the default, in_axes=0
    if isinstance(in_axes, ast.Constant):
        return frozenset() if in_axes.value is None else frozenset(params)
    if isinstance(in_axes, ast.Tuple | ast.List):
        positional = positional_names(function)
        return frozenset(
            name for name, axis in zip(positional, in_axes.elts)
            if not (isinstance(axis, ast.Constant) and axis.value is None)
        )
    return frozenset()


def _python_scalar(argument: ast.AST) -> bool:
    """A literal bool or number (`True`, `3`, `-0.5`)."""
    if isinstance(argument, ast.UnaryOp) and isinstance(argument.op, ast.USub | ast.UAdd):
        argument = argument.operand
    return isinstance(argument, ast.Constant) and type(argument.value) in (bool, int, float, complex)


def _body_operands(primitive: str, call: ast.Call) -> dict[int, ast.AST | None]:
    """What a lax call passes its body, by parameter position, where the call plainly shows
    it: the argument expression, or None for a loop's index."""
    carry = lax_operand(call, *LOOP_CARRIES[primitive]) if primitive in LOOP_CARRIES else None
    if primitive == "jax.lax.fori_loop":
        return {0: None, 1: carry} if carry is not None else {0: None}
    if primitive == "jax.lax.while_loop":
        return {0: carry} if carry is not None else {}
    if primitive == "jax.lax.scan":
        return {index: operand for index, operand in enumerate([carry, lax_operand(call, *SCANNED)])
                if operand is not None}
    if primitive in ("jax.lax.cond", SWITCH) and not any(isinstance(arg, ast.Starred) for arg in call.args):
        return dict(enumerate(call.args[3 if primitive == "jax.lax.cond" else 2:]))
    return {}


class TracedFinder:
    def __init__(self, tree: ast.Module, imports: ImportTable, text: str | None = None,
                 path: str | None = None, project: Project | None = None, scopes: Scopes | None = None):
        self.tree = tree
        self.imports = imports
        self.path = path
        self.project = project
        self.scopes = scopes or scope_index(tree, imports, text)
        self.traced: dict[FunctionNode, TracedFunction] = {}
        self.program: ModuleProgram | None = None
        self._given_classes: dict[FunctionNode, dict[str, str]] = {}  # (`_classes_given`)
        self._passed: dict[tuple[FunctionNode, str], Bound | None] = {}  # (`_passed_function`)
        self._classes_of: dict[tuple[int, str, int], str | None] = {}  # (`_class_of`)
        self._bindings_by_scope: dict[ast.AST, dict[str, list[_Binding]]] = {}
        self._bound_to_calls: dict[str, set[str]] | None = None  # (`_names_bound_to_calls_naming`)
        self.lambdas: list[_TracedLambda] = []
        self._properties: frozenset[str] | None = None
        # A property read (by id) -> it and the call of its getter it stands for.
        self._property_calls: dict[int, tuple[ast.Attribute, ast.Call]] = {}
        self._getitem: bool | None = None  # a class of the module defines `__getitem__`
        self._lambda_defs: dict[int, tuple[ast.Lambda, ast.FunctionDef]] = {}  # (`_lambda_def`)
        # An item read (by id) -> it and the call of `__getitem__` it stands for.
        self._item_calls: dict[int, tuple[ast.Subscript, ast.Call]] = {}
        # The check a dataclass or an equinox Module runs once it is made (`__check_init__`,
        # `__post_init__`), as a call of it with the traced object: by the construction's id.
        self._init_checks: dict[int, tuple[ast.Call, ast.Call]] = {}
        self._made_checks: dict[int, tuple[ast.Call, Bound]] = {}
        self.lambda_scopes: dict[ast.AST, ast.AST] = {}  # a traced lambda's function -> the scope it is in

    # -- classification of decorators and wrapping calls -----------------------------------

    def _transform(self, expr: ast.AST) -> _Transform | None:
        """Describe a decorator expression: ``jax.jit``, ``partial(jax.jit, static_argnames=...)``."""
        name = self.imports.resolve(expr)
        if name in JIT_TRANSFORMS or name in TRACING_TRANSFORMS or name in GRAD_TRANSFORMS:
            return _Transform(name, ())
        if isinstance(expr, ast.Call):
            called = self.imports.resolve(expr.func)
            if called == PARTIAL and expr.args:
                inner = self._transform(expr.args[0])
                if inner is not None:
                    return _Transform(inner.name, inner.keywords + tuple(expr.keywords))
            elif called in JIT_TRANSFORMS and not expr.args:
                return _Transform(called, tuple(expr.keywords))  # jax.jit(static_argnames=...) as a factory
        return None

    def _mark(self, function: FunctionNode, transform: _Transform, how: str, called_as: CalledAs | None = None,
              bound: Bound | None = None) -> None:
        """Mark ``function`` as traced by ``transform``; ``called_as``: how its callers name
        it (the def's own name for a decorator), to see what they pass it; ``bound``: how
        the transform reaches it, if not as the function itself (see ``_static_params``)."""
        params = set(parameter_names(function))
        static: frozenset[str] = frozenset()
        unknown_why: dict[str, str] = {}
        if not _readable_static_arguments(transform.keywords):
            traced: frozenset[str] = frozenset()  # static_argnums=some_variable: any parameter may be static
            unknown_why = dict.fromkeys(params, "the static arguments are not literal, so any may be static")
        elif transform.name in FILTERED_TRANSFORMS:
            # equinox traces arrays and keeps every other argument static: only parameters
            # annotated as arrays are known to be traced.
            traced = frozenset(name for name in params if self._annotated_array(function, name)) \
                | self._given_arrays(function, called_as)
            unknown_why = dict.fromkeys(params - traced, f"{transform.name} keeps it static unless it is an array")
        elif transform.name in JIT_TRANSFORMS:
            static = _static_params(function, transform, bound)
            traced = frozenset(params - static)
        elif transform.name in GRAD_TRANSFORMS:
            traced = frozenset()  # differentiation alone does not stage Python control flow
            unknown_why = dict.fromkeys(params, f"{transform.name} alone does not stage control flow")
        elif transform.name in MAPPING_TRANSFORMS:
            static = _static_params(function, transform, bound)
            traced = _mapped_params(function, transform) - static
        else:  # jax.checkpoint takes static_argnums too
            static = _static_params(function, transform, bound)
            traced = frozenset(params - static)
        if transform.name not in GRAD_TRANSFORMS:
            unpassed = self._defaults_not_passed(function, called_as)
            traced = traced - unpassed.keys()
            unknown_why.update(unpassed)
        self._mark_params(function, traced, static, how, EntryKind.TRANSFORM)
        entry = self.traced[function]
        entry.given_arrays = entry.given_arrays | self._given_arrays(function, called_as)
        if transform.name in JIT_TRANSFORMS:
            entry.given_arrays = entry.given_arrays | self._given_python_scalars(function, called_as)
        left = self._none_defaults_left(function, called_as)
        entry.optional_arrays = (entry.optional_arrays | (entry.given_arrays & left & traced)) \
            - self._given_other_than_values(function, called_as)
        entry.given_arrays = entry.given_arrays - left
        for name, why in unknown_why.items():
            entry.unknown_why.setdefault(name, why)
        if transform.name in STAGING_TRANSFORMS:
            entry.staged = True
        if transform.name in REVERSE_AD_TRANSFORMS:
            entry.differentiated = True

    def _defaults_not_passed(self, function: FunctionNode, called_as: CalledAs | None) -> dict[str, str]:
        """Parameters with a default that no call of ``called_as`` in the module passes: jit
        traces only what callers pass, and a default stays the Python value it is. A method
        call on any object counts: it may be this method, and then the parameter is traced."""
        arguments = function.args
        positional = positional_names(function)
        with_default = positional[len(positional) - len(arguments.defaults):] if arguments.defaults else []
        with_default += [arg.arg for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
                         if default is not None]
        if not with_default:
            return {}
        passed: set[str] = set()
        for call in self.scopes.calls_of(called_as, any_receiver=True) if called_as else []:
            if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
                return {}  # f(*args) / f(**kwargs) may pass anything
            passed.update(_positional_reached(positional, call)[:len(call.args)])
            passed.update(keyword.arg for keyword in call.keywords if keyword.arg)
        why = "has a default that no call in this module overrides (jit keeps a default a Python value)"
        return {name: why for name in with_default if name not in passed}

    def _none_defaults_left(self, function: FunctionNode, called_as: CalledAs | None) -> frozenset[str]:
        """Parameters defaulting to ``None`` that some call of ``called_as`` leaves out (an
        optional array, `scale=None`): in that trace the value is ``None``, so however another
        call gives an array there, the parameter is not certainly one."""
        arguments = function.args
        positional = positional_names(function)
        defaults = dict(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
        defaults.update((arg.arg, default) for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
                        if default is not None)
        optional = {name for name, default in defaults.items()
                    if isinstance(default, ast.Constant) and default.value is None}
        left: set[str] = set()
        for call in self.scopes.calls_of(called_as, any_receiver=True) if called_as and optional else []:
            if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
                continue  # f(*args) / f(**kwargs) may pass anything
            passed = set(_positional_reached(positional, call)[:len(call.args)]) \
                | {keyword.arg for keyword in call.keywords if keyword.arg}
            left |= optional - passed
        return frozenset(left)

    def _given_arrays(self, function: FunctionNode, called_as: CalledAs | None) -> frozenset[str]:
        """Parameters that some call certainly of this function (``calls_of``) certainly gives
        an array (``jnp.ones(3)``, or a module-level name bound once, to one): equinox traces
        those."""
        return self._given(function, called_as, self._certainly_an_array)

    def _given_other_than_values(self, function: FunctionNode, called_as: CalledAs | None) -> frozenset[str]:
        """Parameters some call gives what is not certainly an array or a Python number (a
        name of unknown value, a container): such a parameter may be anything there."""
        positional = positional_names(function)
        given: set[str] = set()
        for call in self.scopes.calls_of(called_as, any_receiver=True) if called_as else []:
            if any(isinstance(arg, ast.Starred) for arg in call.args) or any(k.arg is None for k in call.keywords):
                return frozenset(parameter_names(function))  # `f(*args)` may pass anything
            passed = [*zip(_positional_reached(positional, call), call.args),
                      *((keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg)]
            given.update(name for name, argument in passed
                         if not (self._certainly_an_array(argument) or _python_scalar(argument)))
        return frozenset(given)

    def _given_python_scalars(self, function: FunctionNode, called_as: CalledAs | None) -> frozenset[str]:
        """Parameters some call certainly of this function (``calls_of``) passes a Python bool
        or number (`step(x, True)`): jit traces it as a scalar array, unless it is static."""
        return self._given(function, called_as, _python_scalar)

    def _given(self, function: FunctionNode, called_as: CalledAs | None,
               is_kind: Callable[[ast.AST], bool]) -> frozenset[str]:
        """Parameters some call certainly of this function passes an argument ``is_kind`` holds of."""
        positional = positional_names(function)
        given: set[str] = set()
        for call in self.scopes.calls_of(called_as) if called_as else []:
            for name, argument in zip(_positional_reached(positional, call), call.args):
                if isinstance(argument, ast.Starred):
                    break
                if is_kind(argument):
                    given.add(name)
            given.update(keyword.arg for keyword in call.keywords
                         if keyword.arg in positional and is_kind(keyword.value))
        return frozenset(given)

    def _certainly_an_array(self, argument: ast.AST) -> bool:
        """A call of a JAX function that returns one array, or a name the module binds once in
        all (no function binds it, nor takes it as a parameter), at its top level, to one."""
        if isinstance(argument, ast.Name):
            name = argument.id
            bindings = self.scopes.assignments.get((self.tree, name), [])
            if self.scopes.name_stores().get(name) != 1 or len(bindings) != 1:
                return False
            argument = bindings[0][1]
        return isinstance(argument, ast.Call) and call_category(self.imports.resolve(argument.func), argument) == ONE_ARRAY

    def _annotated_array(self, function: FunctionNode, name: str) -> bool:
        for arg in named_parameters(function):
            if arg.arg == name and arg.annotation is not None:
                annotation = arg.annotation
                if isinstance(annotation, ast.Subscript):  # Float[Array, "n"]
                    annotation = annotation.value
                return is_array_annotation(self.imports.resolve(annotation))
        return False

    def _mark_params(self, function: FunctionNode, traced: frozenset[str], static: frozenset[str], how: str,
                     kind: EntryKind, shapes: dict[str, Verdict] | None = None, from_elsewhere: bool = False,
                     kept_defaults: frozenset[str] | None = frozenset()) -> None:
        """Mark parameters traced or static; ``shapes``: what a lax primitive passes them;
        ``from_elsewhere``: the evidence is a call from another module; ``kept_defaults``:
        the parameters this way in leaves at their defaults (None: it is no way in)."""
        entry = self.traced.get(function)
        if entry is None:
            entry = TracedFunction(function, self.scopes.qualnames[function], how, kind, from_elsewhere=from_elsewhere)
            self.traced[function] = entry
        if kept_defaults is not None:
            entry.entered_by(kept_defaults)
        entry.from_elsewhere = entry.from_elsewhere and from_elsewhere
        entry.calls.unseen = True
        # A parameter some way in traces is traced -- `jax.jit(f)` fails where
        # `jax.jit(f, static_argnums=1)` would not -- unless a run showed it is to be static.
        entry.static_params = entry.static_params | static
        for name in traced - entry.traced_params:
            entry.traced_by.setdefault(name, how)  # the first way in that traces it, for `why`
        entry.traced_params = (entry.traced_params | traced) - entry.seen.static.keys()
        if shapes is None:
            entry.operands.reached_otherwise = True
        for name, shape in shapes.items() if shapes else ():
            seen = entry.operands.shapes.get(name, shape)
            entry.operands.shapes[name] = shape if seen is not None and pytree_form(seen) == pytree_form(shape) else None

    def function_argument(self, scope: ast.AST, expr: ast.AST, line: int | None = None,
                           depth: int = 0) -> Bound | None:
        """The def an argument names (``f``, ``self.f``, ``partial(f, a, k=v)``) and what
        ``partial`` already bound; also the def a call makes (``make_body(alpha)`` returning
        its nested ``body``; ``Layer(...)``, whose ``__call__`` runs). ``f`` rebound before
        ``line`` (``f = partial(f, flag=True)``, ``f = make(...)``) is followed through that
        assignment; any other rebinding leaves it unknown."""
        if depth > 3:
            return None
        if isinstance(expr, ast.Name):
            rebound = self.scopes.assignment_before(scope, expr.id, line)
            if rebound is not None:
                if isinstance(rebound, ast.Call) and self.imports.resolve(rebound.func) == PARTIAL:
                    return self.function_argument(scope, rebound, rebound.lineno, depth + 1)
                if isinstance(rebound, ast.Call) and self._transform(rebound.func) is not None:
                    return None  # f = jax.vmap(f): that call marks f
                if isinstance(rebound, ast.Call):  # layer = Layer(...); body = make_body(...)
                    return self._made_by(scope, rebound, depth)
                return None
            found = self.scopes.lookup(scope, expr.id, line)
            if found is None and (passed := self._passed_function(scope, expr.id, depth)) is not None:
                return passed
            if found is None:  # layer = Layer(2.0) at module level, called in a function
                value = self.scopes.module_value(scope, expr.id)
                if isinstance(value, ast.Call):
                    return self._made_by(self.scopes.tree, value, depth)
                return self._constructor(scope, expr.id) if value is None else None
            return Bound(found)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in RECEIVERS:
            found = self.scopes.method(scope, expr.attr)
            if found is not None:
                return Bound(found, 1)
            # self.layer = Layer(...) in __init__: calling it runs Layer.__call__
            klass = self.scopes.instance_class(scope, expr, line)
            method = self.scopes.defs.get(klass, {}).get("__call__") if klass is not None else None
            return Bound(method, 1) if method is not None and not method.decorator_list else None
        if isinstance(expr, ast.Attribute):
            return self._bound_method(scope, expr, line)
        if isinstance(expr, ast.Call) and self.imports.resolve(expr.func) == PARTIAL and expr.args:
            inner = self.function_argument(scope, expr.args[0], expr.lineno, depth + 1)
            if inner and not any(isinstance(arg, ast.Starred) for arg in expr.args) \
                    and all(keyword.arg for keyword in expr.keywords):
                keywords = inner.keywords | {keyword.arg for keyword in expr.keywords if keyword.arg}
                return Bound(inner.function, inner.positional + len(expr.args) - 1, frozenset(keywords))
            return None
        if isinstance(expr, ast.Call):
            return self._made_by(scope, expr, depth)
        return None

    def _passed_function(self, scope: ast.AST, name: str, depth: int) -> Bound | None:
        """The def a function's parameter holds where every call of that function in the
        module passes the same one: ``make_train_step(learning_rate_fn)`` with the schedule
        a factory made, then ``learning_rate_fn(state.step)`` in the jitted step it defines.
        None where the function is not called by name, a call passes it nothing the module
        resolves, or calls pass different functions (which one runs is then not known here)."""
        function = self.scopes.binding_scope(scope, name)
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) \
                or (function, name) in self.scopes.assignments or name not in parameter_names(function):
            return None
        key = (function, name)
        if key not in self._passed:
            self._passed[key] = None  # (while it is worked out: a call passing it on is not followed round)
            self._passed[key] = self._passed_to(function, name, depth)
        return self._passed[key]

    def _passed_callable(self, scope: ast.AST, name: str) -> FunctionNode | None:
        """What calling the parameter ``name`` of the function ``scope`` is in runs, for the
        value analysis: the def every call of that function passes (``_passed_function``,
        with no argument bound), or the lambda (``while_loop(lambda s: ~jnp.all(s.done),
        body, state)``), as a def of its own."""
        bound = self._passed_function(scope, name, 0)
        if bound is not None:
            return None if bound.positional or bound.keywords else bound.function
        function = self.scopes.binding_scope(scope, name)
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) \
                or (function, name) in self.scopes.assignments or name not in parameter_names(function):
            return None
        given = self._given_by_every_call(function, name)
        found: set[ast.AST | None] = set()
        for argument, call, call_scope in given or ():
            # (`body = lambda s: ...`, then `while_loop(cond, body, s)`)
            found.add(self.scopes.assignment_before(call_scope, argument.id, call.lineno)
                      if isinstance(argument, ast.Name) else argument)
        lambda_ = found.pop() if len(found) == 1 else None
        return self._lambda_def(lambda_) if isinstance(lambda_, ast.Lambda) else None

    def _lambda_def(self, node: ast.Lambda) -> ast.FunctionDef:
        """The lambda as a def of its own (``lambda_as_function``), made once."""
        if id(node) not in self._lambda_defs:
            self._lambda_defs[id(node)] = (node, lambda_as_function(node))
        return self._lambda_defs[id(node)][1]

    def _passed_to(self, function: FunctionNode, name: str, depth: int) -> Bound | None:
        found: set[FunctionNode] = set()
        for argument, call, call_scope in self._given_by_every_call(function, name) or ():
            if argument is None:
                return None  # (its default, or nothing: not a function the module passes)
            bound = self.function_argument(call_scope, argument, call.lineno, depth + 1)
            if bound is None or bound.positional or bound.keywords:
                return None
            found.add(bound.function)
        return Bound(found.pop()) if len(found) == 1 else None

    def _given_by_every_call(self, function: FunctionNode,
                             name: str) -> list[tuple[ast.expr | None, ast.Call, ast.AST]] | None:
        """What each call of ``function`` by its name passes its parameter ``name`` (None
        where a call leaves it to its default), with the call and the scope it is in; None
        where the function is handed on as a value (calls elsewhere may pass anything) or a
        call spreads its arguments."""
        definer = self.scopes.parent.get(function, self.tree)
        if not self.scopes.only_called(function.name, definer):
            return None
        positional = positional_names(function)
        index = positional.index(name) if name in positional else None
        found: list[tuple[ast.expr | None, ast.Call, ast.AST]] = []
        for call, call_scope in self.scopes.calls_to(function.name):
            if not isinstance(call.func, ast.Name) or self.scopes.binding_scope(call_scope, call.func.id) is not definer:
                continue  # (`obj.make(...)`, or another function of that name)
            if any(isinstance(argument, ast.Starred) for argument in call.args) \
                    or any(keyword.arg is None for keyword in call.keywords):
                return None
            given = next((keyword.value for keyword in call.keywords if keyword.arg == name), None)
            if given is None and index is not None and index < len(call.args):
                given = call.args[index]
            found.append((given, call, call_scope))
        return found

    def _bound_method(self, scope: ast.AST, expr: ast.Attribute, line: int | None) -> Bound | None:
        """The method ``model.run`` names when ``model`` is an instance of one of the module's
        classes (see ``_instance_class``): ``jax.jit(model.run)`` traces ``Model.run`` with
        ``self`` bound. A decorated method (a ``staticmethod``, a property, a wrapper) is left
        unknown."""
        klass = self.scopes.instance_class(scope, expr.value, line)
        method = self.scopes.defs.get(klass, {}).get(expr.attr) if klass is not None else None
        if method is None or method.decorator_list:
            return None
        return Bound(method, 1)

    def _made_by(self, scope: ast.AST, call: ast.Call, depth: int) -> Bound | None:
        """The callable a call returns, where the module says: an instance of one of its
        classes runs ``__call__``; a factory whose every ``return`` names the same nested def
        returns that def."""
        if isinstance(call.func, ast.Name):
            klass = self.scopes.lookup_class(scope, call.func.id)
            if klass is not None:
                method = self.scopes.defs.get(klass, {}).get("__call__")
                return Bound(method, 1) if method is not None else None
        factory = self.function_argument(scope, call.func, call.lineno, depth + 1)
        if factory is None or factory.positional or factory.keywords:
            return None
        returned = {node.value.id if isinstance(node.value, ast.Name) else None
                    for node in walk_body(factory.function) if isinstance(node, ast.Return)}
        if len(returned) != 1 or None in returned:
            return None
        made = self.scopes.defs.get(factory.function, {}).get(returned.pop())  # type: ignore[arg-type]
        return Bound(made) if made is not None else None

    def _wrapped(self, scope: ast.AST, call: ast.Call, outer: _Transform | None = None,
                 outer_call: ast.Call | None = None, called_as: CalledAs | None = None) -> None:
        """Handle ``jax.jit(f)``, ``jax.jit(jax.grad(f), static_argnums=1)``, ``partial(jax.jit)(f)``."""
        transform = self._transform(call.func)
        if transform is None or not call.args:
            return
        if outer is None:
            called_as = self._assigned_name(scope, call)
        # The call's own keywords (jax.jit(f, static_argnums=1)) configure the transform.
        in_axes = call.args[1] if transform.name in MAPPING_TRANSFORMS and len(call.args) > 1 else transform.in_axes
        transform = _Transform(transform.name, transform.keywords + tuple(call.keywords), in_axes)
        target = call.args[0]
        named = self._named_lambda(scope, target, call.lineno)
        if named is not None:  # f = lambda i: ...; jax.jit(f): the lambda, where it was written
            scope, target = named
        if isinstance(target, ast.Lambda):
            self._wrapped_lambda(scope, target, transform if outer is None or transform.name not in GRAD_TRANSFORMS
                                 else outer, call.lineno)
            return
        resolved = self.function_argument(scope, target, call.lineno)
        if resolved is None and isinstance(target, ast.Attribute) and target.attr in FLAX_APPLY_METHODS:
            # jax.jit(model.apply): the module's __call__ runs with the arguments after the variables
            resolved = flax_apply(self, scope, target.value,
                                        ast.copy_location(ast.Call(func=target, args=[], keywords=[]), target))
            if resolved is not None and resolved.skipped != resolved.positional:
                called_as = None  # its callers' arguments do not line up with the function's parameters
        if resolved is None:
            if isinstance(target, ast.Call):
                # jax.jit(jax.grad(f)): an outer jit's static arguments reach f; an outer
                # vmap traces f however it is differentiated.
                if transform.name in JIT_TRANSFORMS:
                    self._wrapped(scope, target, transform, call if transform.name == "jax.jit" else None, called_as)
                elif transform.name in TRACING_TRANSFORMS and outer is None:
                    self._wrapped(scope, target, transform, None, called_as)
                else:
                    self._wrapped(scope, target, outer, outer_call, called_as)
            return
        function = resolved.function
        how = f"wrapped by {transform.name} at line {call.lineno}"
        self._mark(function, transform, how, called_as if outer is None else None, resolved)
        if transform.name == "jax.jit" and outer is None and isinstance(target, ast.Name):
            self.traced[function].jit_sites.append(call)
        elif transform.name in JIT_TRANSFORMS - FILTERED_TRANSFORMS and resolved.positional == 1 \
                and isinstance(target, ast.Attribute):  # equinox's filter_jit traces a Module's self
            self.traced[function].bound_jit_sites.append(call)
        elif outer_call is not None and isinstance(target, ast.Name):
            self.traced[function].jit_sites.append(outer_call)  # jax.jit(jax.grad(f)) keeps f's signature
        if outer is not None:
            self._mark(function, outer, how, called_as, resolved)
        self._unbind(resolved)

    def _assigned_name(self, scope: ast.AST, call: ast.Call) -> CalledAs | None:
        """How callers name what ``call`` makes, where it is assigned: `g = jax.jit(f)` in
        ``scope``, or `self.step = jax.jit(...)` in a method of a class."""
        assigned = self.scopes.assigned_to.get(id(call))
        if assigned is None:
            return None
        name, attribute = assigned
        if not attribute:
            return CalledAs(name, scope)
        klass = self.scopes.enclosing_class(scope)
        return CalledAs(name, klass, attribute=True) if klass is not None else None

    def _named_lambda(self, scope: ast.AST, target: ast.AST, line: int) -> tuple[ast.AST, ast.Lambda] | None:
        """The lambda a name holds where it is transformed (``f = lambda i: ...``, assigned
        before in the same scope, or once at module level), and the scope it was written in."""
        if not isinstance(target, ast.Name):
            return None
        value = self.scopes.assignment_before(scope, target.id, line)
        if isinstance(value, ast.Lambda):
            return scope, value
        if value is None and self.scopes.lookup(scope, target.id, line) is None:
            value = self.scopes.module_value(scope, target.id)
            if isinstance(value, ast.Lambda):
                return self.scopes.tree, value
        return None

    def _wrapped_lambda(self, scope: ast.AST, node: ast.Lambda, transform: _Transform, line: int) -> None:
        if transform.name in GRAD_TRANSFORMS or transform.name in FILTERED_TRANSFORMS \
                or not _readable_static_arguments(transform.keywords):
            return  # nothing staged, or which parameters are traced is not known
        static = _static_params(node, transform)
        traced = _mapped_params(node, transform) if transform.name in MAPPING_TRANSFORMS \
            else frozenset(parameter_names(node))
        wrapped = _TracedLambda(scope, node, traced - static, f"wrapped by {transform.name} at line {line}",
                                transform.name in STAGING_TRANSFORMS)
        for index, earlier in enumerate(self.lambdas):
            if earlier.node is node:  # (a named lambda jitted twice: traced where either traces it)
                self.lambdas[index] = replace(earlier, traced=earlier.traced | wrapped.traced,
                                              staged=earlier.staged or wrapped.staged)
                return
        self.lambdas.append(wrapped)

    def _unbind(self, bound: Bound) -> None:
        """Parameters bound by partial(f, a, k=b) receive the bound values, not tracers."""
        positional = positional_names(bound.function)
        held = frozenset(positional[:bound.positional]) | bound.keywords
        if held:
            entry = self.traced[bound.function]
            entry.traced_params = entry.traced_params - held

    def _body_arguments(self, scope: ast.AST, call: ast.Call) -> None:
        name = self.imports.resolve(call.func)
        indices = BODY_ARGUMENTS.get(name or "")
        bodies: list[ast.AST] = []
        if indices:
            bodies = [call.args[index] for index in indices if index < len(call.args)]
            for keyword in call.keywords:
                if keyword.arg in {"f", "body_fun", "cond_fun", "true_fun", "false_fun"}:
                    bodies.append(keyword.value)
        elif name == SWITCH and len(call.args) > 1 and isinstance(call.args[1], ast.List | ast.Tuple):
            bodies = list(call.args[1].elts)
        primitive = name or SWITCH
        count = BODY_TRACED_COUNT.get(primitive, 0)
        if count is None:  # branches receive the operands after the functions
            first_operand = 2 if primitive == SWITCH else 3
            operands = call.args[first_operand:]
            count = 10**6 if any(isinstance(arg, ast.Starred) for arg in operands) else len(operands)
        for body in bodies:
            if isinstance(body, ast.Lambda):
                positional = positional_names(body)
                how = f"the body of {primitive} at line {call.lineno}"
                self.lambdas.append(_TracedLambda(scope, body, frozenset(positional[:count]), how, True, lax_body=True,
                                                  shapes=tuple(self._body_shapes(scope, primitive, call, how))))
                continue
            resolved = self.function_argument(scope, body, call.lineno)
            if resolved:
                free = resolved.free_positional()
                traced = set(free[:count])
                vararg = resolved.function.args.vararg
                if vararg is not None and count > len(free):
                    traced.add(vararg.arg)
                how = f"body of {primitive} at line {call.lineno}"
                shapes = dict(zip(free, self._body_shapes(scope, primitive, call, how)))
                self._mark_params(resolved.function, frozenset(traced), frozenset(), how, EntryKind.LAX_BODY, shapes)
                for index, operand in _body_operands(primitive, call).items():
                    if index < len(free):
                        self.traced[resolved.function].operands.calls.setdefault(free[index], []).append((call, operand))
                self.traced[resolved.function].is_lax_body = True
                self.traced[resolved.function].staged = True

    def _body_shapes(self, scope: ast.AST, primitive: str, call: ast.Call, how: str) -> list[Verdict]:
        """What a lax loop passes its body, parameter by parameter, where the call shows it:
        fori_loop ``(index, carry)``, while_loop ``(carry)``, scan ``(carry, row of xs)``. A
        leaf is one array where the call's own expression shows it (a number, a jnp array); a
        pytree of the module's classes where ``scope`` builds one there (``state =
        LbfgsState(...)``), whose fields are then known."""
        if primitive not in LOOP_CARRIES:
            return []

        def shown(expr: ast.AST) -> Verdict:
            category = call_category(self.imports.resolve(expr.func), expr) if isinstance(expr, ast.Call) else None
            if category == ONE_ARRAY:
                return Verdict(TRACED_KIND, how, array=True)
            klass = self._class_of(scope, expr)
            return replace(UNKNOWN_VALUE, klass=klass) if klass is not None else UNKNOWN_VALUE

        carry = carried(lax_operand(call, *LOOP_CARRIES[primitive]), shown, how)
        if primitive == "jax.lax.fori_loop":
            return [Verdict(TRACED_KIND, how, array=True), carry]
        if primitive == "jax.lax.scan":
            return [carry, carried(lax_operand(call, *SCANNED), shown, how)]
        return [carry]

    # -- the passes ---------------------------------------------------------------------------

    def _seed_observed(self, observed: Iterable[Observation]) -> None:
        """Functions a run saw traced: their parameters that held tracers are traced."""
        for seen in observed:
            function = self._observed_function(seen)
            if function is None:
                continue
            held = frozenset(set(parameter_names(function)) & set(seen.traced))
            static = frozenset(set(parameter_names(function)) & set(seen.static)) - held
            # A failure is no new way in: the carry structure a lax primitive passes still
            # holds. A jit the run saw is one (any structure may come in).
            self._mark_params(function, held, static, seen.reason, EntryKind.OBSERVED,
                              None if not seen.holds_arrays else {},
                              from_elsewhere=seen.error == CALLED,
                              kept_defaults=frozenset(seen.defaults) if seen.error == CALLED else frozenset())
            entry = self.traced[function]
            entry.staged = True
            if seen.error == STAGED and seen.failing:
                entry.seen.held_constants[seen.failing] = seen
            elif seen.error == STAGED:
                entry.seen.staged[seen.line] = seen
            if seen.holds_arrays:
                if seen.is_failure:
                    entry.seen.failures[seen.line] = seen.error
                    if seen.failing:
                        entry.seen.failing[seen.line] = seen.failing
                entry.seen.arrays = entry.seen.arrays | held
                at_line = entry.seen.types.setdefault(seen.line, {})
                at_line.update(seen.types)
                at_line.update(seen.host)

    def _seed_static(self, observed: Iterable[Observation]) -> None:
        """Parameters a run saw always given Python values, whose values a failure needed:
        static, where this module holds the jit that can be told so (else the failure is
        fixed as traced code is)."""
        for seen in observed:
            function = self._observed_function(seen)
            entry = self.traced.get(function) if function is not None else None
            if entry is not None and entry.jit_sites:
                new = frozenset(seen.static) - entry.static_params  # not static at its jit yet
                entry.seen.static.update(dict.fromkeys(new, seen))
                self._mark_params(entry.node, frozenset(), new, seen.reason, EntryKind.OBSERVED, kept_defaults=None)

    def _observed_function(self, seen: Observation) -> FunctionNode | None:
        """The def a run's observation is about: its name, at the code object's first line; for
        a comprehension's own code object (``<genexpr>``), the innermost def holding it."""
        if seen.function in COMPREHENSION_CODE:
            holding = [function for function in self.scopes.functions
                       if function.lineno <= seen.first_line <= (function.end_lineno or function.lineno)]
            return max(holding, key=lambda function: function.lineno, default=None)
        for function in self.scopes.functions:
            lines = {function.lineno, *(decorator.lineno for decorator in function.decorator_list)}
            if function.name == seen.function and seen.first_line in lines:
                return function
        return None

    def _seed(self) -> None:
        for function in self.scopes.functions:
            for decorator in function.decorator_list:
                transform = self._transform(decorator)
                if transform is not None:
                    self._mark(function, transform, f"decorated with {transform.name}",
                               CalledAs(function.name, self.scopes.parent.get(function, self.tree)))
                    if transform.name == "jax.jit":
                        self.traced[function].jit_sites.append(decorator)
        for scope, call in self.scopes.calls:
            self._wrapped(scope, call)
            self._body_arguments(scope, call)

    def _calls_in(self, function: FunctionNode) -> list[ast.Call]:
        """The calls a function makes, and its reads of a property of one of the module's
        classes (``out.converged``), as calls of the property's getter."""
        calls = [node for node in walk_body(function) if isinstance(node, ast.Call)]
        calls += [self._property_read(node) for node in walk_body(function)
                  if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)
                  and node.attr in self._property_names()]
        if self._defines_getitem():
            calls += [self._item_read(node) for node in walk_body(function)
                      if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)]
        return calls

    def _defines_getitem(self) -> bool:
        """Whether a class of the module defines ``__getitem__`` (an item read may run it)."""
        if self._getitem is None:
            self._getitem = any("__getitem__" in methods for methods in self.scopes.defs.values())
        return self._getitem

    def _item_read(self, subscript: ast.Subscript) -> ast.Call:
        """``d[i]`` as the call it is on an instance of the module's class, ``d.__getitem__(i)``
        (resolved as any method call: a value of no such class resolves to nothing), made once
        per read (a call site is kept by identity)."""
        found = self._item_calls.get(id(subscript))
        if found is None:
            method = ast.copy_location(ast.Attribute(value=subscript.value, attr="__getitem__", ctx=ast.Load()),
                                       subscript)
            found = (subscript, ast.copy_location(ast.Call(func=method, args=[subscript.slice], keywords=[]),
                                                  subscript))
            self._item_calls[id(subscript)] = found
        return found[1]

    def _property_names(self) -> frozenset[str]:
        """The names of the module's ``@property`` getters."""
        if self._properties is None:
            self._properties = frozenset(method.name for methods in self.scopes.defs.values()
                                         for method in methods.values() if _is_property(method))
        return self._properties

    def _property_read(self, attribute: ast.Attribute) -> ast.Call:
        """The getter's call a property read is, made once per read (a call site is kept by
        identity)."""
        found = self._property_calls.get(id(attribute))
        if found is None:
            found = (attribute, ast.copy_location(ast.Call(func=attribute, args=[], keywords=[]), attribute))
            self._property_calls[id(attribute)] = found
        return found[1]

    def _property_getter(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> Bound | None:
        """The getter a property read runs: of the class its object is an instance of (``self``'s
        own class; an instance made in the scope, at module level or in ``__init__``; a value
        whose class the analysis knows)."""
        attribute = call.func
        assert isinstance(attribute, ast.Attribute)
        instance = attribute.value
        if isinstance(instance, ast.Name) and instance.id in RECEIVERS:
            klass = self.scopes.enclosing_class(scope)
        else:
            klass = self.scopes.instance_class(scope, instance, call.lineno)
            known = values.verdict(instance).klass if klass is None else None
            klass = self.scopes.lookup_class(scope, known) if known is not None else klass
        getter = self.scopes.defs.get(klass, {}).get(attribute.attr) if klass is not None else None
        return Bound(getter, 1) if getter is not None and _is_property(getter) else None

    def _propagate(self) -> None:
        """Follow calls out of traced functions (and traced lambdas) until nothing new is
        found: a worklist of the functions whose traced parameters (or staging) changed."""
        dirty: set[FunctionNode] = set(self.traced)
        first = True
        while dirty:
            changed: set[FunctionNode] = set()
            for pending in self.lambdas:
                enclosing = self._traced_at(pending.scope)
                if not first and (enclosing is None or enclosing.node not in dirty):
                    continue
                values = self._lambda_values(pending, enclosing)
                staged = pending.staged or (enclosing is not None and enclosing.staged)
                calls = [node for node in walk_tree(pending.node.body) if isinstance(node, ast.Call)]
                changed |= self._follow(pending.scope, calls, values, pending.how, EntryKind.CALLED_FROM_LAMBDA,
                                        staged,
                                        enclosing is not None and enclosing.differentiated,
                                        enclosing is not None and enclosing.from_elsewhere)
            for function in [function for function in self.traced if function in dirty]:
                caller = self.traced[function]
                changed |= self._follow(caller.node, self._calls_in(caller.node), caller.values(self.imports),
                                        f"called from {caller.qualname}", EntryKind.CALLED, caller.staged,
                                        caller.differentiated,
                                        caller.from_elsewhere)
            dirty, first = changed, False

    def _lambda_values(self, pending: _TracedLambda, enclosing: TracedFunction | None) -> ValueAnalysis:
        """What a traced lambda's body sees: its traced parameters, and the names of the
        traced function around it as that function binds them."""
        state: State = dict(enclosing.flow(self.imports).merged_kinds()) if enclosing is not None else {}
        shapes = dict(zip(positional_names(pending.node), pending.shapes))
        for name in parameter_names(pending.node):
            why = f"`{name}` is a traced argument of the lambda at line {pending.node.lineno}"
            state[name] = (replace(shapes[name], why=why) if name in shapes else Verdict(TRACED_KIND, why)) \
                if name in pending.traced else Verdict(UNKNOWN_KIND, f"`{name}` of a lambda: not known to receive a tracer")
        return ValueAnalysis(self.imports, state, staged=pending.staged, program=self.program, scope=pending.scope)

    def _follow(self, scope: ast.AST, calls: list[ast.Call], values: ValueAnalysis, how: str, kind: EntryKind,
                staged: bool, differentiated: bool, from_elsewhere: bool = False) -> set[FunctionNode]:
        """Mark the functions ``calls`` run with the tracers they pass; those that changed."""
        changed: set[FunctionNode] = set()
        calls = list(calls)
        for call in calls:
            site = id(call)  # (the call as written: the one followed may be made anew below)
            check = self._init_check(scope, call, values)
            if check is not None:
                calls.append(check)
            mapped_from: ast.Call | None = None  # (`tree_map(f, tree)`: f gets the leaves, not the tree)
            if self.imports.resolve(call.func) in TREE_MAPS:
                mapped_from = call
                mapped = self._mapped_call(scope, call, values, staged)
                if isinstance(mapped, _TracedLambda):  # followed in the next pass, with the function it is in
                    self.lambdas.append(mapped)
                    if self._traced_at(scope) is not None:
                        changed.add(scope)  # type: ignore[arg-type]
                if not isinstance(mapped, ast.Call):
                    continue
                call = mapped
            read = self._property_calls.get(id(call.func))
            made_check = self._made_checks.get(id(call))
            resolved: Bound | None
            if made_check is not None and made_check[0] is call:
                resolved = made_check[1]
            elif read is not None and read[1] is call:
                resolved = self._property_getter(scope, call, values)
            else:
                resolved = self._callee(scope, call) or self._called_instance(scope, call, values)
            if resolved is None:
                continue
            callee = resolved.function
            if resolved.skipped:
                call = ast.Call(func=call.func, args=call.args[resolved.skipped:],
                                keywords=[k for k in call.keywords if k.arg not in FLAX_APPLY_OPTIONS])
            spread = self._spread(scope, call, values)
            traced = self._traced_arguments(callee, resolved.positional, call, values, spread) - resolved.keywords
            if read is not None and read[1] is call and values.is_traced(call.func.value):  # type: ignore[attr-defined]
                traced |= set(positional_names(callee)[:1])  # a traced object: its getter's `self`
            entry = self.traced.get(callee)
            if entry is None:
                entry = TracedFunction(callee, self.scopes.qualnames[callee], how, kind, from_elsewhere=from_elsewhere,
                                       program=self.program)  # (its fields' kinds known while it is followed)
                self.traced[callee] = entry
                changed.add(callee)
            entry.entered_by(defaults_left(callee, call, resolved.positional, resolved.keywords))
            entry.calls.callers[id(scope)] = scope
            if entry.from_elsewhere and not from_elsewhere:  # reached from this module too
                entry.from_elsewhere = False
                changed.add(callee)
            new = (entry.traced_params | traced) - entry.seen.static.keys()
            if differentiated and not entry.differentiated:
                entry.differentiated = True
                changed.add(callee)
            if staged and not entry.staged:
                entry.staged = True
                entry.forget_analysis()
                changed.add(callee)
            if not entry.operands.reached_otherwise:
                entry.operands.reached_otherwise = True
                if entry.operands.shapes:  # a lax body called directly too: its shapes do not hold
                    entry.forget_analysis()
                    changed.add(callee)
            if new != entry.traced_params:
                entry.traced_params = new
                entry.forget_analysis()
                changed.add(callee)
            definer = self.scopes.parent.get(callee)
            entry.definer = definer if isinstance(definer, ast.FunctionDef | ast.AsyncFunctionDef) else None
            singles = self._single_arguments(callee, resolved.positional, call, values)
            if entry.calls.singles.get(site) != singles:
                # What a call passes is known better as its caller's parameters are: after a
                # few changes, only ever narrowed, so that the worklist ends.
                entry.calls.changes[site] = entry.calls.changes.get(site, 0) + 1
                if entry.calls.changes[site] > MAX_FREE_CHANGES and site in entry.calls.singles:
                    singles &= entry.calls.singles[site]
            if entry.calls.singles.get(site) != singles:
                entry.calls.singles[site] = singles
                entry.forget_analysis()
                changed.add(callee)
            fields = {} if mapped_from is not None else self._argument_fields(callee, resolved, call, values)
            if entry.calls.fields.get(site) != fields and entry.calls.field_changes.get(site, 0) <= MAX_FREE_CHANGES:
                entry.calls.field_changes[site] = entry.calls.field_changes.get(site, 0) + 1
                entry.calls.fields[site] = fields
                if (agreed := entry.calls.agreed_fields()) != entry.param_fields:
                    entry.param_fields = agreed
                    entry.forget_analysis()
                    changed.add(callee)
            classes = {} if mapped_from is not None else \
                self._argument_classes(callee, resolved.positional, call, values, spread)
            if entry.calls.classes.get(site) != classes and entry.calls.class_changes.get(site, 0) <= MAX_FREE_CHANGES:
                # (as the singles: after a few changes, kept, so that the worklist ends)
                entry.calls.class_changes[site] = entry.calls.class_changes.get(site, 0) + 1
                entry.calls.classes[site] = classes
                if self.program is not None and (known := self._param_classes(callee)) != entry.param_classes:
                    entry.param_classes = known
                    entry.forget_analysis()
                    changed.add(callee)
        return changed

    def _spread(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> dict[int, tuple[Verdict, ...]]:
        """The elements of each ``*carry`` of ``call`` (by the id of its node) where they are
        known for certain: ``carry`` a parameter -- of the function ``scope`` (never rebound or
        changed in place there) or of a lambda in it -- whose value says its elements (a lax
        carry). A local list or tuple may have grown since it was made (``.append``, ``+=``)."""
        spread: dict[int, tuple[Verdict, ...]] = {}
        for argument in call.args:
            if not (isinstance(argument, ast.Starred) and isinstance(argument.value, ast.Name)):
                continue
            name = argument.value.id
            elements = values.verdict(argument.value).elements
            home = self.scopes.binding_scope(scope, name)
            if elements is None:
                continue
            if home is scope and isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
                if name not in parameter_names(scope) or any(
                        isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
                        or isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name
                        for node in walk_body(scope)):
                    continue
            elif home is not None and home is not self.tree:
                continue  # (the lambda's parameter shadows nothing of the function around it)
            spread[id(argument)] = elements
        return spread

    def _argument_fields(self, callee: FunctionNode, resolved: Bound, call: ast.Call,
                         values: ValueAnalysis) -> dict[str, Verdict]:
        """The parameters ``call`` gives a plain object holding tracers in its attributes (see
        ``ModuleProgram._plain_fields``): its arguments, and ``self`` of a method called on one
        (``p.distance(q)``)."""
        positional = positional_names(callee)
        given: dict[str, Verdict] = {}
        if isinstance(call.func, ast.Attribute) and resolved.positional == 1 and positional \
                and isinstance(self.scopes.parent.get(callee), ast.ClassDef):
            given[positional[0]] = values.verdict(call.func.value)
        for name, argument in zip(positional[resolved.positional:], call.args):
            if isinstance(argument, ast.Starred):
                break
            given[name] = values.verdict(argument)
        given.update((keyword.arg, values.verdict(keyword.value)) for keyword in call.keywords if keyword.arg is not None)
        found = {name: _holding_tracers(verdict, name) for name, verdict in given.items() if verdict.klass is None}
        return {name: held for name, held in found.items() if held is not None}

    @staticmethod
    def _argument_classes(callee: FunctionNode, bound: int, call: ast.Call, values: ValueAnalysis,
                          spread: dict[int, tuple[Verdict, ...]]) -> dict[str, str]:
        """The parameters ``call`` gives an instance of a pytree class the value analysis knows."""
        verdicts: list[Verdict] = []
        for argument in call.args:
            if isinstance(argument, ast.Starred):
                if id(argument) not in spread:
                    break  # (which places the rest fill is not known)
                verdicts.extend(spread[id(argument)])
            else:
                verdicts.append(values.verdict(argument))
        given = dict(zip(positional_names(callee)[bound:], verdicts))
        given.update((keyword.arg, values.verdict(keyword.value)) for keyword in call.keywords if keyword.arg is not None)
        return {name: verdict.klass for name, verdict in given.items() if verdict.klass is not None}

    def _mapped_call(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis,
                     staged: bool) -> ast.Call | _TracedLambda | None:
        """``tree_map(f, t1, t2)`` as the call ``f(t1, t2)``: ``f`` runs on the leaves, and a
        leaf of a traced tree is a tracer. A lambda ``f`` not yet known: it, as traced code.
        None with ``is_leaf=`` (``f`` may then receive subtrees), or nothing new to follow."""
        if len(call.args) < 2 or call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
            return None
        function, trees = call.args[0], call.args[1:]
        if not isinstance(function, ast.Lambda):
            return ast.copy_location(ast.Call(func=function, args=trees, keywords=[]), call)
        traced = frozenset(name for name, tree in zip(positional_names(function), trees) if values.verdict(tree).traced)
        if not traced or any(pending.node is function for pending in self.lambdas):
            return None
        return _TracedLambda(scope, function, traced, f"mapped by {self.imports.resolve(call.func)} at line "
                                                      f"{call.lineno}", staged)

    def _init_check(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> ast.Call | None:
        """For ``Potential(**params)`` of a module's class that checks itself once made
        (``__check_init__``, equinox's; ``__post_init__``, a dataclass's) with a traced
        argument: a call of that check with a traced object, ``self`` -- its fields hold those
        tracers. Made once per construction."""
        known = self._init_checks.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        if id(call) in self._made_checks or not (isinstance(call.func, ast.Name) and self.scopes.lookup(scope, call.func.id) is None):
            return None
        klass = self.scopes.lookup_class(scope, call.func.id)
        methods = self.scopes.defs.get(klass, {}) if klass is not None else {}
        check = methods.get("__check_init__") or methods.get("__post_init__")
        given = [argument.value if isinstance(argument, ast.Starred) else argument for argument in call.args]
        traced = [argument for argument in [*given, *(keyword.value for keyword in call.keywords)]
                  if values.is_traced(argument)]
        if check is None or not traced:
            return None
        made = ast.copy_location(ast.Call(func=call.func, args=traced[:1], keywords=[]), call)
        self._init_checks[id(call)] = (call, made)
        self._made_checks[id(made)] = (made, Bound(check, 0))
        return made

    def _constructor(self, scope: ast.AST, name: str) -> Bound | None:
        """The ``__init__`` that calling the module's class ``name`` runs (``jax.jit(Spline)``,
        ``Layer(x)``): the arguments reach it after ``self``."""
        klass = self.scopes.lookup_class(scope, name)
        init = self.scopes.defs.get(klass, {}).get("__init__") if klass is not None else None
        return Bound(init, 1) if init is not None else None

    def _callee(self, scope: ast.AST, call: ast.Call) -> Bound | None:
        """The def a call runs: ``f(x)``, ``self.f(x)``, and through a transform applied on
        the spot or bound to a name first (``jax.grad(f)(x)``, ``g = jax.vmap(f); g(x)``):
        the arguments reach ``f`` in the same places."""
        func: ast.AST = call.func
        for _ in range(4):
            if isinstance(func, ast.Name):
                rebound = self.scopes.assignment_before(scope, func.id, call.lineno)
                if rebound is None and scope is not self.tree:
                    rebound = self.scopes.assignment_before(self.tree, func.id, 10**9)
                if isinstance(rebound, ast.Call) and self._transform(rebound.func) is not None and rebound.args:
                    func = rebound.args[0]
                    continue
            if isinstance(func, ast.Call) and self._transform(func.func) is not None and func.args:
                func = func.args[0]
                continue
            break
        if isinstance(func, ast.Name) and self.scopes.lookup(scope, func.id) is None \
                and self.scopes.lookup_class(scope, func.id) is not None:
            return self._constructor(scope, func.id)  # Layer(x): its __init__ runs, with x
        if isinstance(func, ast.Attribute) and func.attr in FLAX_APPLY_METHODS:
            return flax_apply(self, scope, func.value, call)
        return self.function_argument(scope, func, call.lineno)

    def _called_instance(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> Bound | None:
        """``net(x)`` of a value whose class the analysis knows (an annotated parameter, a
        pytree made here): that class's ``__call__`` runs with ``x``."""
        if not isinstance(call.func, ast.Name):
            return None
        klass_name = values.verdict(call.func).klass
        klass = self.scopes.lookup_class(scope, klass_name) if klass_name else None
        method = self.scopes.defs.get(klass, {}).get("__call__") if klass is not None else None
        return Bound(method, 1) if method is not None else None

    @staticmethod
    def _traced_arguments(callee: FunctionNode, bound: int, call: ast.Call, values: ValueAnalysis,
                          spread: dict[int, tuple[Verdict, ...]] | None = None) -> frozenset[str]:
        positional = positional_names(callee)[bound:]
        traced: set[str] = set()

        def given_tracer(index: int) -> None:
            if index < len(positional):
                traced.add(positional[index])
            elif callee.args.vararg:
                traced.add(callee.args.vararg.arg)

        index = 0
        for argument in call.args:
            if isinstance(argument, ast.Starred):
                # f(*carry) of a tuple whose elements are known (a lax carry): each fills the next
                # place. Otherwise which parameters it fills is unknown, unless only *args is left.
                elements = (spread or {}).get(id(argument))
                if elements is not None:
                    for element in elements:
                        if element.traced:
                            given_tracer(index)
                        index += 1
                    continue
                if values.is_traced(argument.value) and callee.args.vararg and index >= len(positional):
                    traced.add(callee.args.vararg.arg)
                break
            if values.is_traced(argument):
                given_tracer(index)
            index += 1
        keyword_params = set(positional) | {arg.arg for arg in callee.args.kwonlyargs}
        for keyword in call.keywords:
            if values.is_traced(keyword.value):
                if keyword.arg in keyword_params:
                    traced.add(keyword.arg)
                elif callee.args.kwarg:
                    traced.add(callee.args.kwarg.arg)
        return frozenset(traced)

    @staticmethod
    def _single_arguments(callee: FunctionNode, bound: int, call: ast.Call, values: ValueAnalysis) -> frozenset[str]:
        """The parameters ``call`` passes one value: an array, or a Python number or bool."""
        positional = positional_names(callee)[bound:]
        given = dict(zip(positional, call.args))
        if any(isinstance(argument, ast.Starred) for argument in call.args[:len(positional)]):
            return frozenset()
        given.update((keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None)
        return frozenset(name for name, argument in given.items()
                         if isinstance(argument, ast.expr) and _one_value(values.verdict(argument)))

    def run(self, observed: Iterable[Observation] = ()) -> dict[FunctionNode, TracedFunction]:
        observed = list(observed)
        self._seed_observed([seen for seen in observed if seen.error not in (STATIC, CHANGED)])
        self._seed()
        self._seed_static([seen for seen in observed if seen.error == STATIC])
        self._link_scopes()
        self._propagate()
        self._add_lambda_bodies()
        self._link_scopes()
        return self.traced

    def _add_lambda_bodies(self) -> None:
        """A lambda that a transform traces is traced code too: its body is checked as
        a function of its own (``def <lambda>(params): return body``, made from the lambda's
        nodes, so that findings point into it). Only fixes that rewrite expressions inside it
        are kept (``Rule.finding``): a lambda holds no statements."""
        for pending in self.lambdas:
            if not pending.traced:
                continue
            function = lambda_as_function(pending.node)
            enclosing = self._traced_at(pending.scope)
            qualname = f"{enclosing.qualname}.{LAMBDA_NAME}" if enclosing is not None else LAMBDA_NAME
            self.lambda_scopes[function] = pending.scope
            staged = pending.staged or (enclosing is not None and enclosing.staged)  # as `_propagate` follows it
            self.traced[function] = TracedFunction(function, qualname, pending.traced_as, pending.entry,
                                                   traced_params=pending.traced,
                                                   is_lax_body=pending.lax_body, staged=staged,
                                                   differentiated=enclosing is not None and enclosing.differentiated)

    def _link_scopes(self) -> None:
        """Give each traced function the module's constants and its traced enclosing function."""
        if not self.traced:
            return
        module_static = module_static_names(self.tree, self.scopes.global_names)
        self._module_program(module_static)
        for function, entry in self.traced.items():
            scope = self.lambda_scopes.get(function) or self.scopes.parent.get(function)
            enclosing = self._traced_at(scope)
            classes = self._param_classes(function)
            module_level = scope is self.tree or isinstance(scope, ast.ClassDef) and self.scopes.parent.get(scope) is self.tree
            if entry.enclosing is not enclosing or entry.program is not self.program \
                    or entry.imports is not self.imports or entry.module_static != module_static \
                    or entry.param_classes != classes or entry.module_level != module_level:
                # what the analysis read changed: redo it
                entry.module_static, entry.enclosing, entry.program = module_static, enclosing, self.program
                entry.imports, entry.param_classes, entry.module_level = self.imports, classes, module_level
                entry.forget_analysis()

    def _module_program(self, module_static: frozenset[str] | None = None) -> ModuleProgram:
        """The module as the value analysis sees it (its pytree classes, its functions'
        summaries): made once, when first needed."""
        if self.program is None:
            if module_static is None:
                module_static = module_static_names(self.tree, self.scopes.global_names)
            self.program = ModuleProgram(self.tree, self.imports, self.scopes,
                                         dict.fromkeys(module_static, MODULE_CONSTANT), self.path, self.project)
            self.program.passed_callable = self._passed_callable
        return self.program

    def _traced_at(self, node: ast.AST | None) -> TracedFunction | None:
        """The traced function ``node`` is, if it is one."""
        return self.traced.get(node) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else None

    def _param_classes(self, function: FunctionNode) -> dict[str, str]:
        """Parameters whose pytree class is known: ``self`` of a method, or an annotation."""
        assert self.program is not None  # made before the functions are analysed
        classes: dict[str, str] = {}
        positional = positional_parameters(function)
        owner = self.scopes.parent.get(function)
        if isinstance(owner, ast.ClassDef) and positional and self.program.pytrees.get(owner.name) is not None \
                and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in function.decorator_list):
            classes[positional[0].arg] = owner.name
        for arg in named_parameters(function):
            klass = self.program.class_of_annotation(arg.annotation)
            if klass is not None:
                classes[arg.arg] = klass
        entry = self.traced.get(function)
        if entry is not None and entry.jit_sites:
            for name, klass in self._classes_given(function).items():
                classes.setdefault(name, klass)
        if entry is not None:
            for name, klass in entry.calls.agreed_classes().items():
                classes.setdefault(name, klass)
        return classes

    def _classes_given(self, function: FunctionNode) -> dict[str, str]:
        """Parameters of a jitted function that every call of it in the module gives an
        instance of one of the module's pytree classes: ``TrainState(...)``, or a name the
        caller binds only to such an instance and to what the function itself returns in that
        place (``state, metrics = train_step(state, batch)``, its returns building a
        ``TrainState``) -- the training loop's shape. Its fields are then known: a data field
        is traced, a static one is not."""
        if function in self._given_classes:  # (read from the module's code alone: once)
            return self._given_classes[function]
        calls = self._calls_running(function)
        given: dict[str, str] = {}
        for index, name in enumerate(positional_names(function) if calls else []):
            found = {self._class_passed(scope, call, index, name, function) for call, scope in calls}
            if len(found) == 1 and (klass := found.pop()) is not None:
                given[name] = klass
        self._given_classes[function] = given
        return given

    def _calls_running(self, function: FunctionNode) -> list[tuple[ast.Call, ast.AST]]:
        """The module's calls that run ``function`` with its own parameters: by its name, by
        a name bound to its jit (``g = jax.jit(f)``) or to what its factory returns (``step =
        make_step(...)``). Empty when some call of one of those names may run another."""
        definer = self.scopes.parent.get(function)
        names = {function.name, *self._names_bound_to_calls_naming().get(function.name, ())}
        if isinstance(definer, ast.FunctionDef | ast.AsyncFunctionDef):
            names.update(self._names_bound_to_calls_naming().get(definer.name, ()))
        found = []
        for name in names:
            for call, scope in self.scopes.calls_to(name):
                if not isinstance(call.func, ast.Name):
                    continue  # (`obj.step(...)`: another object's method of that name)
                bound = self._callee(scope, call)
                if bound is None or bound.function is not function:
                    if bound is None and self.scopes.binding_scope(scope, name) is not None:
                        return []  # (a call of that name the module cannot resolve: it may be this function)
                    continue
                if bound.positional or bound.keywords or not self.scopes.only_called(
                        name, self.scopes.binding_scope(scope, name) or self.tree):
                    return []  # (bound arguments, or the function handed on as a value)
                found.append((call, scope))
        return found

    def _names_bound_to_calls_naming(self) -> dict[str, set[str]]:
        """For each name a call's function or first argument is (``make_step`` of ``step =
        make_step(...)``, ``f`` of ``g = jax.jit(f)``), the names such calls are bound to:
        one pass over the module's assignments, kept."""
        if self._bound_to_calls is None:
            self._bound_to_calls = {}
            for (_, name), values in self.scopes.assignments.items():
                for _, value in values:
                    if not isinstance(value, ast.Call):
                        continue
                    named = [value.func, *value.args[:1]]
                    for part in named:
                        if isinstance(part, ast.Name):
                            self._bound_to_calls.setdefault(part.id, set()).add(name)
        return self._bound_to_calls

    def _class_passed(self, scope: ast.AST, call: ast.Call, index: int, name: str,
                      function: FunctionNode) -> str | None:
        """The pytree class of what ``call`` passes ``function``'s parameter ``name`` (at
        ``index``), where the code says so; None otherwise."""
        assert self.program is not None
        if any(isinstance(argument, ast.Starred) for argument in call.args):
            return None
        given = next((keyword.value for keyword in call.keywords if keyword.arg == name), None)
        if given is None and index < len(call.args):
            given = call.args[index]
        return self._class_of(scope, given, function) if given is not None else None

    def _class_of(self, scope: ast.AST, expr: ast.AST, function: FunctionNode | None = None) -> str | None:
        """The module's pytree class ``expr`` in ``scope`` is an instance of: a construction
        (``TrainState(...)``), or a local name the function ``scope`` binds only by plain
        assignments of constructions of that class -- and, given ``function``, of what
        ``function`` returns in that place (``state, metrics = step(state, batch)``)."""
        if isinstance(expr, ast.Call):
            return self._class_made_by(scope, expr)
        if not isinstance(expr, ast.Name) or not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef) \
                or self.scopes.binding_scope(scope, expr.id) is not scope or expr.id in parameter_names(scope):
            return None  # (a parameter, or a name of another scope: bound where this does not see)
        key = (id(scope), expr.id, id(function))
        if key not in self._classes_of:
            self._classes_of[key] = None  # (while it is worked out: `a = loop(b)`, `b = loop(a)`)
            self._classes_of[key] = self._class_bound(scope, expr.id, function)
        return self._classes_of[key]

    def _class_bound(self, scope: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                     function: FunctionNode | None) -> str | None:
        bindings = self._scope_bindings(scope).get(name, [])
        if any(value is None for value, _ in bindings):
            return None  # (bound in a way not read here: a loop, `+=`, `:=`, an import...)
        classes: set[str | None] = set()
        for value, path in bindings:
            carry = self._loop_carry_at(value, path or ()) if isinstance(value, ast.Call) else False
            if carry is not False:
                if isinstance(carry, ast.Name) and carry.id == name:
                    continue  # the loop gives back the value it was given: of the same class
                classes.add(self._class_of(scope, carry) if isinstance(carry, ast.AST) else None)
            elif path is None:
                classes.add(self._class_made_by(scope, value) if isinstance(value, ast.Call) else None)
            elif len(path) == 1 and value and function:
                classes.add(self._returned_class(scope, value, path[0], function))
            else:
                classes.add(None)
        return classes.pop() if len(classes) == 1 else None

    def _scope_bindings(self, scope: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[_Binding]]:
        """Each name the function binds, with how: ``(value, None)`` for ``name = value``,
        ``(value, (i,))`` for the ``i``-th name of ``a, b = value`` (``(value, (0, 1))`` for
        ``b`` of ``(a, b), c = value``), ``(None, None)`` for any other way. One walk of the
        function, kept."""
        found = self._bindings_by_scope.get(scope)
        if found is not None:
            return found
        found = {}
        read: set[int] = set()

        def unpacked(target: ast.Tuple | ast.List, value: ast.AST, path: tuple[int, ...]) -> None:
            for position, element in enumerate(target.elts):
                if isinstance(element, ast.Name):
                    read.add(id(element))
                    found.setdefault(element.id, []).append((value, (*path, position)))
                elif isinstance(element, ast.Tuple | ast.List):
                    unpacked(element, value, (*path, position))

        for node in walk_body(scope):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        read.add(id(target))
                        found.setdefault(target.id, []).append((node.value, None))
                    elif isinstance(target, ast.Tuple | ast.List):
                        unpacked(target, node.value, ())
            elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in read:
                found.setdefault(node.id, []).append((None, None))
            for other in _bound_otherwise(node):
                found.setdefault(other, []).append((None, None))
        self._bindings_by_scope[scope] = found
        return found

    def _loop_carry_at(self, call: ast.Call, path: tuple[int, ...]) -> ast.AST | None | bool:
        """Where ``call`` is a lax loop: the expression of its initial carry that holds what
        the loop gives back at ``path`` of its result (a loop gives back the structure it was
        given: ``state = lax.while_loop(cond, body, state)``), None where the carry's literal
        does not show it; False where ``call`` is not a lax loop."""
        name = self.imports.resolve(call.func)
        if name not in LOOP_CARRIES:
            return False
        if name == "jax.lax.scan":  # (carry, stacked outputs)
            if not path or path[0] != 0:
                return None
            path = path[1:]
        expr = lax_operand(call, *LOOP_CARRIES[name])
        for position in path:
            if not (isinstance(expr, ast.Tuple | ast.List) and position < len(expr.elts)) \
                    or any(isinstance(element, ast.Starred) for element in expr.elts):
                return None
            expr = expr.elts[position]
        return expr

    def _constructed(self, scope: ast.AST, call: ast.Call) -> str | None:
        """The module's pytree class ``call`` makes an instance of (``TrainState(...)``)."""
        if not isinstance(call.func, ast.Name):
            return None
        klass = self.scopes.lookup_class(scope, call.func.id)
        return klass.name if klass is not None and self._module_program().pytrees.get(klass.name) is not None \
            else None

    def _class_made_by(self, scope: ast.AST, call: ast.Call) -> str | None:
        """The module's pytree class an instance of which ``call`` gives: a construction, or a
        call of a def of the module every ``return`` of which constructs that class
        (``state = self.init_state(params)``)."""
        constructed = self._constructed(scope, call)
        if constructed is not None:
            return constructed
        bound = self._callee(scope, call)
        if bound is None or self._overridden(bound.function):
            return None
        classes = {self._constructed(bound.function, node.value) if isinstance(node.value, ast.Call) else None
                   for node in walk_body(bound.function) if isinstance(node, ast.Return)}
        return classes.pop() if len(classes) == 1 else None

    def _overridden(self, function: FunctionNode) -> bool:
        """Whether ``function`` is a method that another class of the module defines too
        (``self.init_state()`` may then run a subclass's)."""
        owner = self.scopes.parent.get(function)
        return isinstance(owner, ast.ClassDef) and any(
            klass is not owner and function.name in self.scopes.defs.get(klass, {}) for klass in self.scopes.class_list)

    def _returned_class(self, scope: ast.AST, value: ast.AST, position: int, function: FunctionNode) -> str | None:
        """The class ``function`` returns at ``position`` of its result tuple, where ``value``
        is a call of it and every ``return`` builds the same pytree class there."""
        if not isinstance(value, ast.Call) or (bound := self._callee(scope, value)) is None \
                or bound.function is not function:
            return None
        classes = set()
        for node in walk_body(function):
            if isinstance(node, ast.Return):
                returned = node.value
                element = returned.elts[position] if isinstance(returned, ast.Tuple) \
                    and position < len(returned.elts) else None
                classes.add(self._constructed(function, element) if isinstance(element, ast.Call) else None)
        return classes.pop() if len(classes) == 1 else None


# How a function binds a name: (value, None) for `name = value`, (value, path) for a place in a
# tuple target (`(a, b), c = value`: `b` at (0, 1)), (None, None) for any other way.
_Binding = tuple[ast.AST | None, tuple[int, ...] | None]

# The names of the code objects Python makes for comprehensions (3.12 inlines list, set and
# dict comprehensions; a generator expression keeps its own): run in the function holding them.
COMPREHENSION_CODE = frozenset({"<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>"})


def find_traced_functions(tree: ast.Module, imports: ImportTable, text: str | None = None,
                          path: str | None = None, project: Project | None = None,
                          scopes: Scopes | None = None, observed: Iterable[Observation] = ()) -> TracedFunctions:
    """Every traced function of the module, keyed by its def node. With the module's
    ``text``, only the expressions whose lines name a transform are walked (faster); with its
    ``path`` and the run's ``project``, calls into the run's other modules are summarised
    (``scopes``: the module's index, when the project already built it); ``observed``: what a
    run saw traced in this module."""
    finder = TracedFinder(tree, imports, text, path, project, scopes)
    traced = finder.run(observed)
    program = finder.program  # made by `_link_scopes`
    return TracedFunctions(traced, finder.scopes, traces_lambdas=bool(finder.lambdas), program=program,
                           lambda_scopes=finder.lambda_scopes)


def _bound_otherwise(node: ast.AST) -> list[str]:
    """The names ``node`` binds by something other than a name target: a declaration,
    ``except ... as``, an import, a def or class, a ``match`` capture."""
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    return []


def _is_property(function: FunctionNode) -> bool:
    """A getter: decorated ``@property`` and nothing else."""
    return len(function.decorator_list) == 1 and isinstance(function.decorator_list[0], ast.Name) \
        and function.decorator_list[0].id == "property"
