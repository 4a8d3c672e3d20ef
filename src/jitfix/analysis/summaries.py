"""Summaries of the module's own functions: what a call returns, for the kinds it is given.

``def is_array(x): return isinstance(x, jax.Array)`` returns a Python bool whatever ``x``
is; ``def loss(w): return jnp.sum(w ** 2)`` returns a tracer when ``w`` is one. A call to a
function of the module is judged by analysing that function's body with the parameters
bound to the kinds of the call's arguments (each pair of function and argument kinds once,
recursion and depth bounded). Code outside the module is never guessed: unknown.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Callable, Iterable

from jitfix.analysis.blocks import (
    FunctionNode,
    assigned_names,
    closure_reads,
    local_names,
    own_expressions,
    own_nodes,
    walk_body,
)
from jitfix.analysis.catalogue import (
    GRADIENT_TRANSFORMATION_METHODS,
    GRADIENT_TRANSFORMATIONS,
    OPTIMIZER_TRIPLES,
    RECEIVERS,
)
from jitfix.analysis.flow import FlowAnalysis, State, module_static_names
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.project import Project
from jitfix.analysis.pytrees import STATIC_FIELD, PytreeIndex
from jitfix.analysis.scopes import scope_index
from jitfix.analysis.values import (
    MODULE_CONSTANT,
    STATIC_KIND,
    TRACED_KIND,
    UNKNOWN_KIND,
    Program,
    ValueAnalysis,
    Verdict,
    defaults_left,
    named_parameters,
    parameter_names,
    positional_names,
)

if TYPE_CHECKING:
    from jitfix.analysis.traced_function import TracedFunction

MAX_SUMMARIES = 400  # per module: beyond this, calls are unknown (a bound on the work)
RETURNS_NONE = Verdict(STATIC_KIND, "returns None")


def _own_returns(function: FunctionNode) -> tuple[list[ast.Return], bool]:
    """The function's own ``return`` statements, and whether it is a generator."""
    returns: list[ast.Return] = []
    generator = False
    for node in walk_body(function):
        if isinstance(node, ast.Return):
            returns.append(node)
        elif isinstance(node, ast.Yield | ast.YieldFrom):
            generator = True
    return returns, generator


def _passes_a_tracer(call: ast.Call, values: ValueAnalysis) -> bool:
    arguments = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.args]
    return any(values.verdict(argument).traced for argument in (*arguments, *(k.value for k in call.keywords)))


# A field the class declares static: its aux data, a Python value whatever it is given.
DECLARED_STATIC = Verdict(STATIC_KIND, "a field the class declares static")


class ModuleProgram(Program):
    """The module around a traced function, as its value analysis sees it; with the run's
    ``project``, calls into the run's other modules are summarised from their source."""

    def __init__(self, tree: ast.Module, imports: ImportTable, scopes, module_static: State,
                 path: str | None = None, project: Project | None = None):
        self.tree = tree
        self.imports = imports
        self.scopes = scopes
        self.module_static = module_static
        self.path = path
        self.project = project
        self.text: str | None = None  # the source, when read as another module's dependency
        top_level_calls = [statement.value for statement in tree.body
                           if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)]
        self.pytrees = PytreeIndex(scopes.class_list, imports, top_level_calls)
        self._cache: dict[tuple, Verdict] = {}
        self._active: set[tuple] = set()
        # The function a parameter holds where every call passes the same one, a lambda too
        # (set by the finder of traced functions, which follows those calls).
        self.passed_callable: Callable[[ast.AST, str], FunctionNode | None] | None = None

    @classmethod
    def of_module(cls, tree: ast.Module, imports: ImportTable, text: str | None, path: str | None,
                  project: Project | None) -> ModuleProgram:
        """A module with no traced function of its own, read for the summaries of its functions."""
        scopes = scope_index(tree, imports, text)
        module_static = module_static_names(tree, scopes.global_names)
        return cls(tree, imports, scopes, dict.fromkeys(module_static, MODULE_CONSTANT), path, project)

    @classmethod
    def at(cls, project: Project, path: str) -> ModuleProgram | None:
        """The program of the run's module at ``path``, read once (None when it cannot be)."""
        return project.program(path, lambda tree, text: cls.of_module(tree, ImportTable(tree, text), text, path,
                                                                      project))

    def defines(self, scope: ast.AST, name: str) -> bool:
        return self.scopes.lookup(scope, name) is not None or self.scopes.lookup_class(scope, name) is not None

    def class_of_annotation(self, annotation: ast.AST | None) -> str | None:
        """The pytree class a parameter annotation names (``state: TrainState``)."""
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            name = annotation.value
        elif isinstance(annotation, ast.Name):
            name = annotation.id
        else:
            return None
        return name if self.pytrees.get(name) is not None else None

    # -- calls ---------------------------------------------------------------------------------

    def summary(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> Verdict | None:
        callee, bound_self = self._resolve(scope, call, values)
        owner: ModuleProgram = self
        if callee is None and self._optimizer_function(scope, call.func):
            given = [values.verdict(argument) for argument in (*call.args, *(k.value for k in call.keywords))]
            traced = next((verdict for verdict in given if verdict.traced), None)
            return Verdict(TRACED_KIND, "an optimizer's function of a traced pytree", traced) if traced \
                else Verdict(UNKNOWN_KIND, "an optimizer's function of values not known to be traced")
        if callee is None:
            # Another module's function can prove a tracer only from a traced argument (its
            # own staged operations aside): without one, it is not worth reading the module.
            imported = self._imported(call.func) if _passes_a_tracer(call, values) else None
            if imported is None:
                return self._constructor(scope, call, values)
            owner, callee = imported
        params = owner._bind(callee, call, values, bound_self)
        if owner is not self and values.staged and self.project is not None and owner.path is not None:
            self.project.note_traced_call(owner.path, callee, [name for name, kind in params.items() if kind.traced],
                                          [name for name, kind in params.items() if kind.static],
                                          f"{os.path.basename(self.path or '')}:{call.lineno}",
                                          defaults_left(callee, call, int(bound_self is not None)))
        if owner is self:
            params = {**self._closure_reads(scope, callee, values), **params}
        return owner._summarise(callee, params, values.staged)

    def _optimizer_function(self, scope: ast.AST, func: ast.AST) -> bool:
        """Whether ``func`` is a function of an optimizer (``catalogue.OPTIMIZER_TRIPLES``,
        ``GRADIENT_TRANSFORMATIONS``): ``get_params`` of ``opt_init, opt_update, get_params =
        optimizers.sgd(0.1)``, or ``tx.update`` of ``tx = optax.adam(1e-3)``, each name bound
        so once (in the function, or at module level where the function does not bind it)."""
        if isinstance(func, ast.Name):
            value = self._bound_once(scope, func.id, unpacked=True)
            return isinstance(value, ast.Call) and self.imports.resolve(value.func) in OPTIMIZER_TRIPLES
        if isinstance(func, ast.Attribute) and func.attr in GRADIENT_TRANSFORMATION_METHODS \
                and isinstance(func.value, ast.Name):
            value = self._bound_once(scope, func.value.id, unpacked=False)
            return isinstance(value, ast.Call) and self.imports.resolve(value.func) in GRADIENT_TRANSFORMATIONS
        return False

    def _bound_once(self, scope: ast.AST, name: str, unpacked: bool) -> ast.AST | None:
        """The value of the one statement binding ``name`` where ``scope`` reads it (``name =
        value``, or with ``unpacked`` a name of ``a, b = value``); None where it is bound
        otherwise or more than once."""
        home = self.scopes.binding_scope(scope, name)
        if home is None:
            return None
        body = home.body if isinstance(home, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) else []
        found = []
        for node in own_nodes(body):
            if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
                found.append(node)
        if len(found) != 1:
            return None
        for statement in own_nodes(body):
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target = statement.targets[0]
                if target is found[0] or (unpacked and isinstance(target, ast.Tuple)
                                          and any(element is found[0] for element in target.elts)):
                    return statement.value
        return None

    def _closure_reads(self, scope: ast.AST, callee: FunctionNode, values: ValueAnalysis) -> State:
        """A function defined in the calling function, or in a function around it, reads that
        function's names as they are when it is called: each has the kind it has at the call
        (a branch function calling a helper of the function around it sees the same names),
        unless a function between them binds the name itself (the helper does not see that
        binding: its kind there is not known)."""
        definer = self.scopes.parent.get(callee)
        if not isinstance(definer, ast.FunctionDef | ast.AsyncFunctionDef):
            return {}
        between = self._scopes_between(scope, definer)
        if between is None:
            return {}
        reads = closure_reads(definer, callee)
        if not reads:
            return {}
        shadowed = {name for function in between for name in local_names(function)}
        unknown = Verdict(UNKNOWN_KIND, "a name a function between the helper and its caller binds again")
        return {name: unknown if name in shadowed else values.verdict(ast.Name(id=name, ctx=ast.Load()))
                for name in reads}

    def _scopes_between(self, scope: ast.AST, definer: ast.AST) -> list[FunctionNode] | None:
        """The functions from ``scope`` out to ``definer`` (excluded), when ``definer`` is
        ``scope`` or encloses it through functions only; else None."""
        between: list[FunctionNode] = []
        current: ast.AST | None = scope
        while current is not definer:
            if not isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
                return None
            between.append(current)
            current = self.scopes.parent.get(current)
        return between

    def _summarise(self, callee: FunctionNode, params: State, staged: bool) -> Verdict:
        key = (id(callee), tuple((name, v.kind, v.klass, _held(v)) for name, v in params.items()), staged)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if key in self._active or len(self._cache) >= MAX_SUMMARIES:
            return Verdict(UNKNOWN_KIND, f"`{callee.name}` is recursive or too deep to summarise")
        self._active.add(key)
        try:
            result = self._result(callee, params, staged)
        finally:
            self._active.discard(key)
        self._cache[key] = result
        return result

    def note_calls_out(self, traced: Iterable[TracedFunction]) -> None:
        """Give the project every call that traced code of this module makes into another
        module of the run with tracers (``Project.note_traced_call``, through ``summary``):
        each call is evaluated here, whether or not a rule asks for its value."""
        if self.project is None or self.path is None:
            return
        for function in traced:
            if not function.staged or not isinstance(function.node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            self.project.note_traced_here(function.node, function.traced_params)
            flow = None
            for node, statement in own_expressions(function.node):
                # The module is read only if the call passes it a tracer (``summary``).
                if isinstance(node, ast.Call) and self._imported_from(node.func) is not None:
                    flow = flow or function.flow(self.imports)
                    flow.at(statement).verdict(node)

    def _imported_from(self, func: ast.AST) -> tuple[str, str] | None:
        """(file, name) of a function ``func`` names through an import from another module
        of the run, without reading that module."""
        if self.project is None or self.path is None:
            return None
        relative = self.imports.resolve_relative(func)
        level, dotted = relative if relative else (0, self.imports.resolve(func))
        if not dotted or "." not in dotted:
            return None
        module, _, name = dotted.rpartition(".")
        found = self.project.module_file(self.path, module, level)
        return None if found is None else (found, name)

    def imported_def(self, func: ast.AST) -> tuple[ModuleProgram, FunctionNode] | None:
        """The program and def of the function another module of the run defines that
        ``func`` names through an import (``rng.next_key`` after ``from . import rng``)."""
        return self._imported(func)

    def _imported(self, func: ast.AST, hops: int = 0) -> tuple[ModuleProgram, FunctionNode] | None:
        """The program and def of a function another module of the run defines, that ``func``
        names through an import (followed through re-exports such as a package's
        ``__init__.py``, a few hops at most)."""
        imported = self._imported_from(func) if hops <= 3 else None
        if imported is None:
            return None
        found, name = imported
        assert self.project is not None
        owner = ModuleProgram.at(self.project, found)
        if owner is None:
            return None
        callee = owner.scopes.lookup(owner.tree, name)
        if callee is not None:
            return owner, callee
        return owner._imported(ast.Name(id=name, ctx=ast.Load()), hops + 1)

    def _resolve(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> tuple[FunctionNode | None, Verdict | None]:
        func = call.func
        if isinstance(func, ast.Name):
            found = self.scopes.lookup(scope, func.id, call.lineno)
            if found is None and self.passed_callable is not None:  # `cond_fun(val)`, `cond_fun` given a lambda
                found = self.passed_callable(scope, func.id)
            return found, None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in RECEIVERS:
            method = self.scopes.method(scope, func.attr)
            if method is not None and not any(isinstance(d, ast.Name) and d.id == "property"
                                              for d in method.decorator_list):
                return method, values.verdict(func.value)
            if method is None:  # self.linear(x), self.linear = Linear(...): Linear.__call__
                return self._instance_method(scope, func, "__call__", call, values)
        if isinstance(func, ast.Attribute):  # model.run(x), self.norm.scale(h)
            return self._instance_method(scope, func.value, func.attr, call, values)
        return None, None

    def _instance_method(self, scope: ast.AST, instance: ast.expr, name: str, call: ast.Call,
                         values: ValueAnalysis) -> tuple[FunctionNode | None, Verdict | None]:
        """The undecorated method ``name`` of the module's class ``instance`` is made of, and
        the instance's verdict (its ``self``)."""
        klass = self.scopes.instance_class(scope, instance, call.lineno)
        method = self.scopes.defs.get(klass, {}).get(name) if klass is not None else None
        if method is None or method.decorator_list:
            return None, None
        return method, values.verdict(instance)

    def _constructor(self, scope: ast.AST, call: ast.Call, values: ValueAnalysis) -> Verdict | None:
        """An instance of one of the module's classes; of a pytree class whose constructor takes
        its fields, with what each field is given (traced when one is: its leaves are tracers)."""
        if not isinstance(call.func, ast.Name):
            return None
        klass = self.scopes.lookup_class(scope, call.func.id)
        if klass is None:
            return None
        pytree = self.pytrees.get(klass.name)
        if pytree is None:
            fields = self._plain_fields(klass, call, values)
            if fields is not None and any(verdict.traced or verdict.fields for _, verdict in fields):
                return Verdict(UNKNOWN_KIND, f"an instance of `{klass.name}` made with a traced attribute",
                               fields=fields, made=klass.name)
            return Verdict(UNKNOWN_KIND, f"an instance of `{klass.name}`")
        given = pytree.given(call)
        if given is None:
            return Verdict(UNKNOWN_KIND, f"an instance of `{klass.name}`", klass=klass.name)
        fields = tuple((name, DECLARED_STATIC if pytree.field_kind(name) == STATIC_FIELD else values.verdict(value))
                       for name, value in given.items())
        traced = any(verdict.traced for _, verdict in fields)
        return Verdict(TRACED_KIND if traced else UNKNOWN_KIND,
                       f"an instance of `{klass.name}`" + (" made with a traced field" if traced else ""),
                       klass=klass.name, fields=fields)

    def property_value(self, scope: ast.AST, instance: Verdict, name: str, staged: bool) -> Verdict | None:
        """What the property ``name`` of an object of the module's class (a plain object, or a
        pytree) returns (its getter run with that object as ``self``); None where the class
        has no such property."""
        owner = instance.made or instance.klass
        klass = self.scopes.lookup_class(scope, owner) if owner else None
        if klass is not None and instance.made is None and any(
                other is not klass and name in self.scopes.defs.get(other, {}) for other in self.scopes.class_list):
            return None  # (an instance of a subclass may be there, its own property read instead)
        getter = self.scopes.defs.get(klass, {}).get(name) if klass is not None else None
        if getter is None or len(getter.decorator_list) != 1 or not isinstance(getter.decorator_list[0], ast.Name) \
                or getter.decorator_list[0].id != "property" or not positional_names(getter):
            return None
        return self._summarise(getter, {positional_names(getter)[0]: instance}, staged)

    def _plain_fields(self, klass: ast.ClassDef, call: ast.Call,
                      values: ValueAnalysis) -> tuple[tuple[str, Verdict], ...] | None:
        """What an instance of a plain class (no pytree) holds in each attribute its
        ``__init__`` sets to a parameter as it is (``self.xyz = xyz``), by what the call gives
        that parameter: an object made in traced code of traced arrays holds tracers there,
        which its methods read. None where the call's arguments are not all seen."""
        init = self.scopes.defs.get(klass, {}).get("__init__")
        if init is None or init.decorator_list or any(isinstance(argument, ast.Starred) for argument in call.args) \
                or any(keyword.arg is None for keyword in call.keywords):
            return None
        positional = positional_names(init)
        if not positional:
            return None
        me, parameters = positional[0], positional[1:]
        given = dict(zip(parameters, call.args))
        given.update((keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None)
        rebound = assigned_names(init.body)
        fields = []
        for statement in init.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(target := statement.targets[0], ast.Attribute) \
                    and isinstance(target.value, ast.Name) and target.value.id == me \
                    and isinstance(statement.value, ast.Name) and statement.value.id in given \
                    and statement.value.id not in rebound:
                fields.append((target.attr, values.verdict(given[statement.value.id])))
        stored = [node.attr for node in ast.walk(klass) if isinstance(node, ast.Attribute)
                  and isinstance(node.ctx, ast.Store)]
        return tuple((name, verdict) for name, verdict in fields if stored.count(name) == 1)  # set once, in `__init__`

    def _bind(self, callee: FunctionNode, call: ast.Call, values: ValueAnalysis,
              bound_self: Verdict | None) -> State:
        arguments = callee.args
        positional = positional_names(callee)
        params: State = {}
        if bound_self is not None and positional:
            params[positional[0]] = bound_self
            positional = positional[1:]
        unknown = Verdict(UNKNOWN_KIND, "filled by `*args`/`**kwargs` of the call")
        starred = any(isinstance(arg, ast.Starred) for arg in call.args)
        for name, arg in zip(positional, call.args):
            if isinstance(arg, ast.Starred):
                break
            params[name] = values.verdict(arg)
        for keyword in call.keywords:
            if keyword.arg is not None:
                params[keyword.arg] = values.verdict(keyword.value)
        double_starred = any(keyword.arg is None for keyword in call.keywords)
        for name in parameter_names(callee):
            if name not in params:
                default_given = name not in (arguments.vararg.arg if arguments.vararg else "",
                                             arguments.kwarg.arg if arguments.kwarg else "")
                params[name] = unknown if starred or double_starred or not default_given \
                    else Verdict(STATIC_KIND, f"`{name}` keeps its default")
        for parameter in named_parameters(callee):
            klass = self.class_of_annotation(parameter.annotation)
            if klass is not None and params[parameter.arg].klass is None:
                found = params[parameter.arg]
                params[parameter.arg] = Verdict(found.kind, found.why, found.via, found.elements, klass)
        return params

    def _result(self, callee: FunctionNode, params: State, staged: bool) -> Verdict:
        returns, generator = _own_returns(callee)
        if generator:
            return Verdict(UNKNOWN_KIND, f"`{callee.name}` is a generator")
        if not returns:
            return Verdict(STATIC_KIND, f"`{callee.name}` returns None")
        flow = FlowAnalysis(callee, self.imports, params, self.module_static, staged=staged, program=self,
                            module_level=self.scopes.parent.get(callee) is self.tree)
        results = [flow.at(ret).verdict(ret.value) if ret.value is not None else RETURNS_NONE for ret in returns]
        strongest = max(results, key=lambda result: result.kind)
        elements = None
        shapes = {len(result.elements) if result.elements is not None else -1 for result in results}
        if len(shapes) == 1 and -1 not in shapes:
            size = shapes.pop()
            elements = tuple(max((result.elements[i] for result in results if result.elements),
                                 key=lambda element: element.kind) for i in range(size))
        kind = strongest.kind
        classes = {result.klass for result in results}
        klass = classes.pop() if len(classes) == 1 else None
        makers = {result.made for result in results}
        return Verdict(kind, f"`{callee.name}(...)` returns a {kind.label} value for these arguments",
                       strongest, elements=elements, array=all(result.array for result in results),
                       scalar=all(result.scalar for result in results), klass=klass,
                       fields=_merged_fields(results),  # (a pytree's, or a plain object's made in traced code)
                       made=makers.pop() if len(makers) == 1 else None)


def _held(verdict: Verdict) -> tuple:
    """What an object's fields hold, by kind (a summary of a call depends on it)."""
    return (verdict.made, tuple((name, field.kind, _held(field)) for name, field in verdict.fields or ()))


def _merged_fields(results: list[Verdict]) -> tuple[tuple[str, Verdict], ...] | None:
    """The fields of instances a function returns at each ``return`` (all of one class), each
    the strongest it is given anywhere; None unless every return says what each field holds."""
    if any(result.fields is None for result in results):
        return None
    names = [name for name, _ in results[0].fields or ()]
    if any([name for name, _ in result.fields or ()] != names for result in results):
        return None
    return tuple((name, max((dict(result.fields or ())[name] for result in results), key=lambda v: v.kind))
                 for name in names)
