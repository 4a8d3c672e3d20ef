"""State a jitted function writes -- a ``global`` it rebinds, an attribute of a static
``self`` -- threaded through the compiled code as an argument and a result.

Under ``jax.jit`` such a write runs once, while tracing: a counter stops counting, a PRNG key
never advances, a tracer leaks into the object. The fix a JAX user writes makes the state
explicit: the jitted body takes the state's value in and returns its new value. Callers keep
their code: the body moves to ``_name`` and a def with the old name and parameters passes the
state in and stores what comes back, as the eager code did::

    @jax.jit                              @jax.jit
    def init():                           def _init(*, key):
        global key                            key, subkey = random.split(key)
        key, subkey = random.split(key)  ->   return random.normal(subkey, ()), key
        return random.normal(subkey, ())
                                          def init():
                                              global key
                                              result, key = _init(key=key)
                                              return result

Only what is certainly so is threaded: a state every write of which is the function's own
(no helper, nested def or other method reads or writes it), and that either receives a traced
value or flows into what the function returns. A counter of traces (written with a static
value, never returned) is trace-time bookkeeping: it is left alone.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, replace

from jitfix.analysis.blocks import (FunctionNode, always_leaves, assigned_names, definitely_assigned, local_names,
                                   nodes_of, walk_body)
from jitfix.analysis.catalogue import ARRAY, ONE_ARRAY, function_category
from jitfix.analysis.stale_globals import is_config, passable
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.tracer_uses import PassedOn, used_as_traced
from jitfix.analysis.values import ValueAnalysis
from jitfix.cst_text import code, cst
from jitfix.findings import MAX_LINE_LENGTH, Edit, EditContext
from jitfix.naming import unique_name
from jitfix.rules.base import CacheKey, ModuleContext, Source
from jitfix.rules.function_context import arrays_of, name_position
from jitfix.rules.globals import Renamed


@dataclass(frozen=True)
class State:
    """One piece of state: how the caller spells it (``key``, ``self.v``), the name it has in
    the jitted body, whether the body needs its value from before (else it only sets it), and
    whether the body sets it (then it is returned; state only read is only passed in)."""

    spelled: str
    local: str
    passed_in: bool
    returned: bool = True
    hoisted: bool = False  # a host call evaluated at each call (``spelled`` is its source)
    # An attribute of a module-level object the body changes through the object's methods
    # (``wf.wavefront``): the body sets it from the parameter on entry and gives back the
    # attribute itself, as the methods left it.
    on_object: bool = False
    # Passed in as a static argument of the jitted body (a function the body calls: hashed
    # by identity, so a new one compiles anew), not traced.
    static: bool = False


@dataclass(frozen=True)
class Threading:
    """How a jitted function's state is threaded through it."""

    function: ast.FunctionDef
    state: tuple[State, ...]
    self_name: str | None  # the method's `self`, for state on it; None for globals
    inner: str  # the name of the def of the jitted body (the def's own, where an assignment jits it)
    returns_value: bool  # whether the function returns something besides the state
    wrapper: str = ""  # the name callers call (the def's own; the jit's target where one jits it)
    callee: str = ""  # what the wrapper calls (``inner``; the renamed jit's target)
    # The body's statements binding sizes a hoisted call reads (``n = data.shape[0]``): the
    # wrapper binds them too, and the jitted body keeps those it still reads.
    prelude: tuple[ast.Assign, ...] = ()
    # The body's assignments of a hoisted call's whole value (``idx = rng.integers(...)``):
    # their name is the parameter the value is passed in as, and they go.
    absorbed: tuple[ast.Assign, ...] = ()
    prelude_source: tuple[str, ...] = ()  # the prelude as written (with a comment ending its line)
    # Where ``jax.jit(obj.method)`` jitted the method: the jit as spelled there, which the
    # body's def now takes as its decorator, with ``self`` static.
    static_self_jit: str = ""

    @property
    def listed(self) -> str:
        return ", ".join(f"`{state.spelled}`" for state in self.state)

    @property
    def returned(self) -> list[State]:
        return [state for state in self.state if state.returned]


@dataclass(frozen=True)
class _Written:
    """The state a function writes (``written``: each name or attribute with the local it is
    analysed under, in ``body``) and which of it matters (``threaded``); for attributes of
    ``self``, those a method of the class the function calls reads too (``on_object``: they stay
    on the object, set from the value passed in on entry and given back from there)."""

    self_name: str | None
    written: dict[str, str]
    body: ast.FunctionDef
    threaded: list[str]
    on_object: frozenset[str]


def _written_state(module: ModuleContext, traced: TracedFunction) -> _Written | None:
    function = traced.node
    if not isinstance(function, ast.FunctionDef) or not traced.staged:
        return None
    self_name = method_self(module, traced)
    written = _written_globals(function) if self_name is None else _written_attributes(function, self_name)
    if not written:
        return None
    body = function if self_name is None else _with_attributes_as_names(function, self_name, written)
    values = traced.values(module.imports)
    owner = module.traced.parents.get(function)
    threaded, on_object = [], set()
    for name in written:
        helpers = helper_calls(function, self_name, methods_reading(owner, name, function)) \
            if self_name is not None and isinstance(owner, ast.ClassDef) else []
        if _matters(body, written[name], values) or _into_returns(function, helpers):
            threaded.append(name)
            if helpers:
                on_object.add(name)
    return _Written(self_name, written, body, threaded, frozenset(on_object))


def state_that_matters(module: ModuleContext, traced: TracedFunction) -> set[str]:
    """The state the function writes that is more than trace-time bookkeeping (``_matters``, or
    read by a method it calls whose result it returns), spelled as callers do (``self.n``,
    ``key``)."""
    found = _written_state(module, traced)
    if found is None:
        return set()
    return {name if found.self_name is None else f"{found.self_name}.{name}" for name in found.threaded}


def plan(module: ModuleContext, traced: TracedFunction) -> Threading | str | None:
    """How to thread the state ``traced`` writes; why it cannot be, or None where it writes
    no state this fix is for."""
    found = _written_state(module, traced)
    if found is None or not found.threaded:
        return None
    self_name, threaded, body = found.self_name, found.threaded, found.body
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    problem = _why_not(module, traced, self_name, threaded, found.on_object)
    if problem:
        return problem
    values = traced.values(module.imports)
    for name in threaded:
        if not _written_traced(body, found.written[name], values):
            problem = _why_counter_stays(module, traced, self_name, name)
            if problem:
                return problem
    taken = names_in(function)
    state = []
    for name in threaded:
        passed_in = name in found.on_object or _needs_value_from_before(body, found.written[name])
        if self_name is None and passed_in and (is_config(module.tree, name)
                                                or not passable(module.tree, module.imports, name, function)):
            return f"`{name}` holds configuration or an object, which jit cannot take in and give back"
        local = name if self_name is None else unique_name(name.lstrip("_") or name, taken)
        taken.add(local)
        spelled = name if self_name is None else f"{self_name}.{name}"
        state.append(State(spelled, local, passed_in, on_object=name in found.on_object))
    returns_value = any(isinstance(node, ast.Return) and node.value is not None for node in walk_body(function))
    return named(module, traced, Threading(function, tuple(state), self_name, "", returns_value))


def methods_reading(klass: ast.ClassDef, attribute: str, function: ast.FunctionDef) -> set[str]:
    """The methods of the class (other than ``function``) that read ``self.attribute``, in
    their own body or through a method of their ``self`` they call."""
    methods = {method.name: method for method in klass.body
               if isinstance(method, ast.FunctionDef) and method is not function and method.args.args}
    reading: set[str] = set()
    grown = True
    while grown:
        grown = False
        for name, method in methods.items():
            me = method.args.args[0].arg
            if name not in reading and any(
                    isinstance(node, ast.Attribute) and _on(node, me) and isinstance(node.ctx, ast.Load)
                    and (node.attr == attribute or node.attr in reading) for node in walk_body(method)):
                reading.add(name)
                grown = True
    return reading


def helper_calls(function: ast.FunctionDef, self_name: str, methods: set[str]) -> list[ast.Call]:
    """The function's calls of those of its ``self``'s methods (``self._schedule()``)."""
    return [node for node in walk_body(function) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and _on(node.func, self_name) and node.func.attr in methods]


def _into_returns(function: ast.FunctionDef, calls: list[ast.Call]) -> bool:
    """Whether what one of ``calls`` gives may reach a ``return``: in it, or bound to a name
    that does."""
    if not calls:
        return False
    inside = {id(node) for call in calls for node in ast.walk(call)}
    flowing = _flowing_into_returns(function)
    for statement in walk_body(function):
        value = getattr(statement, "value", None)
        if not isinstance(statement, ast.Return | ast.Assign | ast.AugAssign | ast.AnnAssign) or value is None \
                or not any(id(node) in inside for node in ast.walk(value)):
            continue
        if isinstance(statement, ast.Return) or _bound_by(statement) & flowing:
            return True
    return False


@dataclass(frozen=True)
class ObjectState:
    """What a jitted function does to module-level objects' attributes: how they are threaded
    (or why they cannot be), the first statement that changes them, and the objects' names."""

    threading: Threading | str
    site: ast.AST
    objects: frozenset[str]


def object_state(module: ModuleContext, traced: TracedFunction) -> ObjectState | None:
    """How to thread the array attributes of a module-level object that the jitted function
    changes through the object's methods (``wf.apply_aperture(radius)`` setting
    ``self.wavefront``): under jit those writes run while tracing, so a tracer leaks onto the
    object and every later call starts from the first call's value. Threaded, the body takes
    each attribute in, sets it on the object, runs as written and gives back what the methods
    left there; the wrapper stores it. With the first statement that changes the object; why
    it cannot be threaded instead of the threading; None where the function certainly changes
    no such object with a traced value."""
    function = traced.node
    if not isinstance(function, ast.FunctionDef) or not traced.staged or not traced.jit_sites:
        return None
    changed = _objects_changed(module, traced)
    if changed is None:
        return None
    found, site, problem = changed
    objects = frozenset(spelled.split(".")[0] for spelled in found)
    owner = module.traced.parents.get(function)
    self_name = method_self(module, traced) if isinstance(owner, ast.ClassDef) else None
    if not problem and isinstance(owner, ast.ClassDef) and self_name is None:
        problem = "the method's `self` is traced, so a def beside it cannot pass the state in"
    if not problem and traced.calls.singles:
        problem = "traced code calls it too, where the def that stores the state back would store a tracer"
    problem = problem or _why_not(module, traced, self_name, [])
    if problem:
        return ObjectState(problem, site, objects)
    taken = names_in(function)
    state = []
    for spelled in found:
        attribute = spelled.split(".")[-1]
        local = unique_name(attribute.lstrip("_") or attribute, taken)
        taken.add(local)
        state.append(State(spelled, local, passed_in=True, on_object=True))
    returns_value = any(isinstance(node, ast.Return) and node.value is not None for node in walk_body(function))
    return ObjectState(named(module, traced, Threading(function, tuple(state), self_name, "", returns_value)),
                       site, objects)


def threaded_entry(function: FunctionNode, statement: ast.AST) -> bool:
    """Whether ``statement`` sets an object's attribute from a parameter on entry
    (``wf.wavefront = wavefront``, among the body's first statements) of a function every
    ``return`` of which gives the attribute back last: state already threaded, as
    ``object_state`` threads it."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], ast.Attribute) or not isinstance(statement.value, ast.Name) \
            or statement.value.id not in {argument.arg for argument in function.args.kwonlyargs}:
        return False
    leading = [item for item in function.body if not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant))]
    entries = leading[:next((i for i, item in enumerate(leading) if not _sets_from_parameter(item)), len(leading))]
    if statement not in entries:
        return False
    spelled = ast.dump(statement.targets[0])
    returns = [node for node in walk_body(function) if isinstance(node, ast.Return)]
    return bool(returns) and all(
        any(ast.dump(_loaded(element)) == spelled for element in _returned_values(node.value)) for node in returns)


def threaded_attributes(module: ModuleContext, function: FunctionNode) -> set[str]:
    """The object attributes (``wf.wavefront``) the function already threads: set from a
    parameter on entry and given back by every ``return``."""
    return {module.segment(statement.targets[0]) for statement in function.body  # type: ignore[attr-defined]
            if threaded_entry(function, statement)}


def _returned_values(value: ast.expr | None) -> list[ast.expr]:
    if isinstance(value, ast.Tuple):
        return value.elts
    return [value] if value is not None else []


def _loaded(node: ast.expr) -> ast.expr:
    """The expression as a store would spell it (to compare a read with an assignment's target)."""
    if isinstance(node, ast.Attribute):
        return ast.Attribute(node.value, node.attr, ast.Store())
    return node


def _sets_from_parameter(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
        and isinstance(statement.targets[0], ast.Attribute) and isinstance(statement.value, ast.Name)


def _objects_changed(module: ModuleContext, traced: TracedFunction) -> tuple[list[str], ast.AST, str | None] | None:
    """The attributes (``wf.wavefront``) of module-level objects that the function's own
    statements set to traced values, directly or through the object's methods, with the
    first statement that does and why they cannot be threaded (the object passed on whole or
    reached from a nested def, a method that changes an attribute in place, one ``__init__``
    does not set); None where it sets none."""
    function = traced.node
    local = local_names(function)
    changed: list[str] = []
    site: ast.AST | None = None
    problems: list[str] = []
    threaded = threaded_attributes(module, function)
    for node in walk_body(function):
        if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name) \
                or node.value.id in local or module.segment(node) in threaded:
            continue
        owner = node.value
        klass = _module_object_class(module, owner.id)
        if klass is None:
            continue
        methods = {item.name: item for item in klass.body if isinstance(item, ast.FunctionDef)}
        written = _attributes_written(module, klass, methods, node, function, problems)
        written = [attribute for attribute in written if f"{owner.id}.{attribute}" not in threaded]
        if written and site is None:
            site = node
        changed += [f"{owner.id}.{attribute}" for attribute in written if f"{owner.id}.{attribute}" not in changed]
    if site is None:
        return None
    objects = {spelled.split(".")[0] for spelled in changed}
    problems += [problem for name in objects if (problem := _initialised(module, name, changed))]
    problems += [f"`{spelled}` is a property or descriptor of its class: setting it runs code"
                 for spelled in changed if _class_level(module, spelled)]
    if any(isinstance(node, ast.Try) and node.finalbody for node in walk_body(function)):
        problems.append("a `finally` block would run after the state is given back")
    for node in nodes_of(function):
        if isinstance(node, ast.FunctionDef | ast.Lambda) and node is not function \
                and any(isinstance(inner, ast.Name) and inner.id in objects for inner in ast.walk(node)):
            problems.append("a nested function reaches the object, where a tracer of its own trace would be stored")
    used_as_owner = {id(node.value) for node in walk_body(function) if isinstance(node, ast.Attribute)}
    problems += [f"`{node.id}` is passed on at line {node.lineno}, where it may be changed unseen"
                 for node in walk_body(function)
                 if isinstance(node, ast.Name) and node.id in objects and id(node) not in used_as_owner]
    return changed, site, problems[0] if problems else None


def _attributes_written(module: ModuleContext, klass: ast.ClassDef, methods: dict[str, ast.FunctionDef],
                        node: ast.Attribute, function: FunctionNode, problems: list[str]) -> list[str]:
    """The attributes of the object that ``node`` (``wf.method`` called, or ``wf.attr``
    written) sets to traced values, following the methods it runs on ``self``; what stands
    in the way of threading them goes to ``problems``."""
    if isinstance(node.ctx, ast.Store):
        in_function = module.traced[function].values(module.imports)
        statement = next((item for item in walk_body(function) if isinstance(item, ast.Assign | ast.AugAssign)
                          and node in (item.targets if isinstance(item, ast.Assign) else [item.target])), None)
        traced_value = statement is not None and (in_function.is_traced(statement.value)
                                                  or _computed_with_jax(module, statement.value))
        return [node.attr] if traced_value else []
    if node.attr not in methods or not isinstance(node.ctx, ast.Load):
        return []
    arrays = _array_attributes(module, methods.get("__init__"))
    written = _attributes_set_by(module, klass, methods, node.attr, arrays, problems)
    while True:  # until no attribute is found set from those found before
        found = _attributes_set_by(module, klass, methods, node.attr, [*arrays, *written], [])
        if found == written:
            return written
        written = found


def _array_attributes(module: ModuleContext, init: ast.FunctionDef | None) -> list[str]:
    """The attributes ``__init__`` sets to arrays JAX makes (``self.count = jnp.zeros(())``):
    arithmetic on one inside a trace makes a tracer."""
    if init is None or not init.args.args:
        return []
    self_name = init.args.args[0].arg
    return [target.attr for statement in init.body if isinstance(statement, ast.Assign)
            and _computed_with_jax(module, statement.value) for target in statement.targets
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name]


def _attributes_set_by(module: ModuleContext, klass: ast.ClassDef, methods: dict[str, ast.FunctionDef],
                       called: str, state: list[str], problems: list[str]) -> list[str]:
    """The attributes the method ``called`` and the methods it runs on ``self`` set to traced
    values (or to values read from ``state``, attributes that hold arrays); what stands in the
    way of threading them goes to ``problems``."""
    written: list[str] = []
    seen: set[str] = set()
    pending = [called]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        method = methods[name]
        if not method.args.args or any(not (isinstance(item, ast.Name) and item.id == "property")
                                       for item in method.decorator_list):
            continue  # a static or class method, or one whose decorator may run it otherwise
        self_name = method.args.args[0].arg
        traced_method = module.traced.get(method)
        values = traced_method.values(module.imports) if traced_method is not None else None
        owners = {id(item.value) for item in walk_body(method) if isinstance(item, ast.Attribute)}
        for item in walk_body(method):
            if isinstance(item, ast.Name) and item.id == self_name and id(item) not in owners:
                problems.append(f"`{klass.name}.{name}` passes `{self_name}` on, where it may be changed unseen")
            if not (isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name)
                    and item.value.id == self_name):
                continue
            if item.attr in methods and isinstance(item.ctx, ast.Load):
                pending.append(item.attr)
            elif isinstance(item.ctx, ast.Store) and item.attr not in written \
                    and _set_to_traced(module, method, item, values, state):
                written.append(item.attr)
            elif isinstance(item.ctx, ast.Del):
                problems.append(f"`{klass.name}.{name}` deletes `{self_name}.{item.attr}`")
        for item in walk_body(method):
            if isinstance(item, ast.Subscript | ast.Attribute) and isinstance(item.ctx, ast.Store | ast.Del) \
                    and isinstance(item.value, ast.Attribute) and isinstance(item.value.value, ast.Name) \
                    and item.value.value.id == self_name:
                problems.append(f"`{klass.name}.{name}` changes `{self_name}.{item.value.attr}` in place")
    return written


def _set_to_traced(module: ModuleContext, method: ast.FunctionDef, target: ast.Attribute,
                   values: ValueAnalysis | None, state: list[str]) -> bool:
    """Whether the assignment to ``target`` in a method traced code runs stores a traced value:
    a jnp result, one computed from the method's traced parameters, or one that reads an
    attribute already found to hold one (``state``)."""
    for statement in walk_body(method):
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, ast.AugAssign | ast.AnnAssign) else []
        if targets and statement.value is not None and any(target in ast.walk(item) for item in targets):  # type: ignore[attr-defined]
            value = statement.value  # type: ignore[attr-defined]
            return values is not None and values.is_traced(value) or _computed_with_jax(module, value) \
                or _reads_attributes(value, state) or isinstance(statement, ast.AugAssign) and target.attr in state
    return False


def _computed_with_jax(module: ModuleContext, value: ast.AST) -> bool:
    """A value an array function of JAX computes (``jnp.fft.fft2(...)``, ``x.at[i].set(v)``;
    not ``jnp.size``'s int or ``jax.devices()``): under jit, a tracer."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            if function_category(module.imports.resolve(node.func)) in (ARRAY, ONE_ARRAY):
                return True
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Subscript) \
                    and isinstance(node.func.value.value, ast.Attribute) and node.func.value.value.attr == "at":
                return True
    return False


def _class_level(module: ModuleContext, spelled: str) -> bool:
    """Whether the attribute's name is bound in its class's body (a property, a descriptor, a
    class attribute): setting it on the object may run code, reading it may not give it back."""
    owner, attribute = spelled.split(".")
    klass = _module_object_class(module, owner)
    return klass is None or attribute in assigned_names(klass.body)


def _initialised(module: ModuleContext, name: str, changed: list[str]) -> str | None:
    """Why the object ``name`` may lack one of its ``changed`` attributes when the first call
    passes it in: ``__init__`` does not set it in its own body."""
    klass = _module_object_class(module, name)
    init = next((item for item in klass.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"),
                None) if klass is not None else None
    if klass is None or init is None or not init.args.args:
        return f"`{name}` has no `__init__` that sets its attributes before the first call"
    self_name = init.args.args[0].arg
    set_first = {target.attr for statement in init.body if isinstance(statement, ast.Assign)
                 for target in statement.targets if isinstance(target, ast.Attribute)
                 and isinstance(target.value, ast.Name) and target.value.id == self_name}
    missing = [spelled for spelled in changed if spelled.startswith(f"{name}.")
               and spelled.split(".")[-1] not in set_first]
    if missing:
        return f"`{klass.name}.__init__` does not set `{missing[0]}` itself, so the first call may find none"
    return None


def module_instance_class(module: Source, name: str) -> ast.ClassDef | None:
    """The module's class of which the module-level ``name`` is the one instance it binds
    (``name = Class(...)``, once)."""
    bindings = [statement for statement in module.tree.body if name in assigned_names([statement])]
    if len(bindings) != 1 or not isinstance(bindings[0], ast.Assign) or not isinstance(bindings[0].value, ast.Call):
        return None
    made = bindings[0].value.func
    return next((node for node in module.tree.body if isinstance(node, ast.ClassDef) and isinstance(made, ast.Name)
                 and node.name == made.id), None)


_OBJECT_CLASSES = CacheKey[dict[str, "ast.ClassDef | None"]]("the class of each module-level object")


def _module_object_class(module: ModuleContext, name: str) -> ast.ClassDef | None:
    """The class of the module-level object ``name`` (``module_instance_class``) where what its
    methods set is all that changes on it: never declared ``global`` by a function, a class
    without bases, decorators or attribute hooks. (Asked of every name a traced function reads
    an attribute of: found once per name.)"""
    found = module.cached(_OBJECT_CLASSES, dict)
    if name not in found:
        found[name] = None if name in module.imports.aliases else _plain_object_class(module, name)
    return found[name]


def _plain_object_class(module: ModuleContext, name: str) -> ast.ClassDef | None:
    klass = module_instance_class(module, name)
    if klass is None or klass.decorator_list or klass.keywords \
            or any(not (isinstance(base, ast.Name) and base.id == "object") for base in klass.bases):
        return None
    hooks = {"__setattr__", "__getattr__", "__getattribute__", "__delattr__", "__slots__"}
    if hooks & assigned_names(klass.body):
        return None
    if any(isinstance(node, ast.Global) and name in node.names for node in ast.walk(module.tree)):
        return None
    return klass


def read_only(module: ModuleContext, traced: TracedFunction, self_name: str, attributes: list[str],
              static: list[str] = []) -> Threading:
    """Attributes of a static ``self`` the method only reads, passed in at each call (JF302's
    stale attributes): ``def compute(self, x): return x * self.w`` -> ``def _compute(self, x,
    *, w): return x * w`` and ``def compute(self, x): return self._compute(x, w=self.w)``."""
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    taken = names_in(function)
    state = tuple(State(f"{self_name}.{attribute}", unique_name(attribute.lstrip("_") or attribute, taken),
                        passed_in=True, returned=False, static=attribute in static) for attribute in attributes)
    return named(module, traced, Threading(function, state, self_name, "", returns_value=True))


def names_in(function: ast.FunctionDef) -> set[str]:
    """The names a function uses and its parameters: a new parameter must be none of them."""
    return {node.id for node in nodes_of(function) if isinstance(node, ast.Name)} | {
        argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)}


def named(module: ModuleContext, traced: TracedFunction, threading: Threading) -> Threading:
    """The threading with its names: where a module-level ``fast = jax.jit(step)`` jits the def
    under another name, the def keeps its name, ``fast`` becomes the wrapper and the jit is kept
    as ``_fast_jitted``; otherwise the body moves to ``_step`` and ``step`` is the wrapper."""
    function = threading.function
    assignment = jitted_by_assignment(module, traced)
    if assignment is not None and assignment.targets[0].id != function.name:  # type: ignore[attr-defined]
        target = assignment.targets[0].id  # type: ignore[attr-defined]
        callee = unique_name(f"_{target.lstrip('_')}_jitted", _taken_names(module))
        return replace(threading, inner=function.name, wrapper=target, callee=callee)
    inner = _inner_name(module, function)
    sites = bound_jit_sites(module, traced)
    jit = module.segment(sites[0].func) if sites else ""
    return replace(threading, inner=inner, wrapper=function.name, callee=inner, static_self_jit=jit)


def decorated_with_its_jit(traced: TracedFunction) -> bool:
    """Jitted by its own decorator alone (which the jitted body keeps)."""
    function = traced.node
    return len(function.decorator_list) == 1 and function.decorator_list[0] in traced.jit_sites \
        and len(traced.jit_sites) == 1 and not traced.bound_jit_sites


def bound_jit_sites(module: ModuleContext, traced: TracedFunction) -> list[ast.Call]:
    """The calls ``jax.jit(obj.method)`` that alone jit the method, where its body jitted with
    ``self`` static does what they do (``why_bound_jit_stays``); empty otherwise."""
    return [] if why_bound_jit_stays(module, traced) else list(traced.bound_jit_sites)


def why_bound_jit_stays(module: ModuleContext, traced: TracedFunction) -> str | None:
    """Why the method's body cannot be jitted in place of its ``jax.jit(obj.method)`` calls
    (None: it can). A jit of a bound method fixes ``self`` as a static argument does, and a
    plain class (no bases, decorators or ``__eq__``) hashes its instances by identity, so each
    instance gets its own trace, as each bound jit did. Not where another jit, a decorator or an
    option of the jit stands in the way, where the module reads attributes of the jit's result
    (``fast.lower``: a bound method lacks them), or where the method is also called with
    arguments (eagerly, it took any Python value; jitted, those must be arrays). A call with
    none passes only ``self``, which stays static."""
    function = traced.node
    owner = module.traced.parents.get(function)
    sites = traced.bound_jit_sites
    if not sites:
        return "the method is not jitted as `jax.jit(obj.method)`"
    if traced.jit_sites or not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return "the method has decorators or is jitted otherwise too"
    if function.name.startswith("__"):
        return f"`{function.name}` is called by Python itself (`obj(...)`), with any arguments"
    if traced.calls.singles:
        return "traced code calls it too, where the method that stores the state back would store a tracer"
    if not isinstance(owner, ast.ClassDef) or owner.bases or owner.keywords or owner.decorator_list \
            or {"__eq__", "__hash__"} & {node.name for node in owner.body if isinstance(node, ast.FunctionDef)} \
            or "__hash__" in assigned_names(owner.body):
        return "its class has bases, decorators, `__eq__` or `__hash__`, so its instances may not hash by identity"
    if any(isinstance(node, ast.ClassDef) and any(isinstance(base, ast.Name) and base.id == owner.name
                                                  for base in node.bases) for node in ast.walk(module.tree)):
        return f"a subclass of `{owner.name}` may override what the method calls, or how it hashes"
    if any(site.keywords or len(site.args) != 1 or module.imports.resolve(site.func) != "jax.jit"
           or not isinstance(site.args[0], ast.Attribute) for site in sites):
        return "a jit of it has options"
    allowed = {id(site.args[0]) for site in sites} | {
        id(node.func) for node in ast.walk(module.tree)
        if isinstance(node, ast.Call) and not node.args and not node.keywords}
    called = next((node for node in ast.walk(module.tree) if isinstance(node, ast.Attribute)
                   and node.attr == function.name and id(node) not in allowed), None)
    if called is not None:
        return (f"`{module.segment(called)}` at line {called.lineno} is used otherwise than jitted or called "
                "without arguments (eagerly, its arguments may be any Python value)")
    assigned = {target.id if isinstance(target, ast.Name) else target.attr for node in ast.walk(module.tree)
                if isinstance(node, ast.Assign) and node.value in sites
                for target in node.targets if isinstance(target, ast.Name | ast.Attribute)}
    if any(isinstance(node, ast.Attribute) and (isinstance(node.value, ast.Name) and node.value.id in assigned
                                                or isinstance(node.value, ast.Attribute) and node.value.attr in assigned)
           for node in ast.walk(module.tree)):  # (`fast.lower`, `self.apply.lower`)
        return "the module uses attributes of the jitted method (`.lower`), which the method itself lacks"
    return None


def _inner_name(module: ModuleContext, function: ast.FunctionDef) -> str:
    """The name the jitted body moves to: ``_step`` for ``step``, ``_step_jitted`` for ``_step``."""
    name = function.name
    return unique_name(f"{name}_jitted" if name.startswith("_") else f"_{name}", _taken_names(module))


def edits(module: ModuleContext, traced: TracedFunction, threading: Threading) -> list[Edit]:
    """The def split in two; where it is jitted by ``init = jit(init)``, that line jits the
    body's new name (``_init = jit(_init)``), and ``init`` stays the def callers call; where by
    ``fast = jit(step)``, the line keeps the jit as ``_fast_jitted`` and ``fast`` is the def."""
    found = [Edit(name_position(module, threading.function), cst.FunctionDef, _Threaded(threading))]
    sites = bound_jit_sites(module, traced)
    if sites:  # `jax.jit(counter.count)` -> `counter.count`; the jit moves onto the body's def
        found[0] = replace(found[0], imports=("functools.partial",))
        found += [Edit(*module.span_of(site)[:1], cst.Call, _Unwrapped(), end=module.span_of(site)[1]) for site in sites]
        return found
    assignment = jitted_by_assignment(module, traced)
    if assignment is not None:
        site = assignment.value
        assert isinstance(site, ast.Call)
        found.append(Edit(module.start_of(assignment.targets[0]), cst.Name, Renamed(threading.callee)))
        if threading.inner != threading.function.name:
            found.append(Edit(module.start_of(site.args[0]), cst.Name, Renamed(threading.inner)))
    return found


def jitted_by_assignment(module: ModuleContext, traced: TracedFunction) -> ast.Assign | None:
    """The module-level ``init = jit(init, ...)`` or ``fast = jit(step, ...)`` that alone jits
    the undecorated module-level def: under another name only where the def is used nowhere
    else and the name is bound nowhere else (callers of either keep what they call)."""
    function = traced.node
    name = function.name
    if function.decorator_list or function not in module.tree.body or len(traced.jit_sites) != 1 \
            or traced.bound_jit_sites:
        return None
    for statement in module.tree.body:
        if isinstance(statement, ast.Assign) and statement.value in traced.jit_sites \
                and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name) \
                and isinstance(statement.value, ast.Call) \
                and statement.value.args and isinstance(statement.value.args[0], ast.Name) \
                and statement.value.args[0].id == name:
            target = statement.targets[0].id
            if target == name:
                return statement
            uses = sum(1 for node in ast.walk(module.tree) if isinstance(node, ast.Name) and node.id == name)
            bindings = sum(1 for node in module.tree.body if target in assigned_names([node]))
            return statement if uses == 1 and bindings == 1 else None
    return None


# -- which state, and whether it is safe to thread ----------------------------------------------

def method_self(module: ModuleContext, traced: TracedFunction) -> str | None:
    """The name of ``self`` for a jitted method whose writes to ``self`` do not reach the
    caller's object: ``self`` static (the write runs once, while tracing), or ``self`` a traced
    pytree of a mutable class (the write goes to the copy jit rebuilds, and is lost)."""
    function = traced.node
    owner = module.traced.parents.get(function)
    if not isinstance(owner, ast.ClassDef) or not function.args.args:
        return None
    name = function.args.args[0].arg
    if name in traced.static_params or traced.bound_jit_sites:  # (`jax.jit(obj.method)` fixes `self`)
        return name
    traced_self = name in traced.traced_params or decorated_with_its_jit(traced)
    return name if traced_self and registered_pytree(module, owner) else None


def hashable_instances(klass: ast.ClassDef) -> bool:
    """Python hashes an instance by identity unless the class compares by value: a dataclass
    (``eq=True`` by default) unless frozen or ``unsafe_hash``, or ``__eq__`` without ``__hash__``;
    and not at all where the class sets ``__hash__ = None``."""
    methods = {node.name for node in klass.body if isinstance(node, ast.FunctionDef)}
    if "__hash__" in methods:
        return True
    if any(isinstance(node, ast.Assign) and any(isinstance(target, ast.Name) and target.id == "__hash__"
                                                for target in node.targets) for node in klass.body):
        return False  # (`__hash__ = None`; any other value is not a method jitfix can read)
    for decorator in klass.decorator_list:
        options = {k.arg: k.value for k in decorator.keywords} if isinstance(decorator, ast.Call) else {}

        def given(option: str, default: bool) -> bool:
            value = options.get(option)
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, bool) else default

        if given("frozen", False) or given("unsafe_hash", False):
            return True
        if given("eq", True):
            return False
    return "__eq__" not in methods


# How a class is made a pytree without freezing it (a flax struct, an equinox Module and a
# NamedTuple are frozen: a write to one fails with or without jit).
MUTABLE_PYTREE_DECORATORS = frozenset({"jax.tree_util.register_pytree_node_class",
                                       "jax.tree_util.register_pytree_with_keys_class"})
REGISTERING_CALLS = frozenset({"jax.tree_util.register_pytree_node", "jax.tree_util.register_pytree_with_keys",
                               "jax.tree_util.register_pytree_node_class"})


def registered_pytree(module: ModuleContext, klass: ast.ClassDef) -> bool:
    """The class is registered as a pytree by its decorator or a module-level call, and is
    not a frozen dataclass."""
    resolve = module.imports.resolve
    if any(resolve(decorator) in MUTABLE_PYTREE_DECORATORS for decorator in klass.decorator_list):
        return True
    return any(isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
               and resolve(statement.value.func) in REGISTERING_CALLS and statement.value.args
               and isinstance(statement.value.args[0], ast.Name) and statement.value.args[0].id == klass.name
               for statement in module.tree.body)


def _written_globals(function: ast.FunctionDef) -> dict[str, str]:
    """The globals the function declares and binds (each keyed, and named, as itself)."""
    declared = {name for node in walk_body(function) if isinstance(node, ast.Global) for name in node.names}
    return {name: name for name in sorted(declared & assigned_names(function.body))}


def _written_attributes(function: ast.FunctionDef, self_name: str) -> dict[str, str]:
    """The attributes of ``self`` the method binds (``self.v = ...``, ``self.v += ...``),
    keyed by attribute, each with the local name it is analysed under."""
    attributes: list[str] = []
    for node in walk_body(function):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _on(node, self_name) \
                and node.attr not in attributes:
            attributes.append(node.attr)
    return {attribute: f"{self_name}__{attribute}" for attribute in attributes}


def _on(node: ast.Attribute, self_name: str) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id == self_name


def _with_attributes_as_names(function: ast.FunctionDef, self_name: str, written: dict[str, str]) -> ast.FunctionDef:
    """A copy of the method in which each written ``self.v`` is a plain name: what the
    threaded body will read and bind."""
    class AsNames(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            if _on(node, self_name) and node.attr in written:
                return ast.copy_location(ast.Name(written[node.attr], node.ctx), node)
            return self.generic_visit(node)

    copied = copy.deepcopy(function)
    for node in ast.walk(copied):  # what the analysis kept on the original nodes is not the copy's
        for key in [key for key in node.__dict__ if key.startswith("_jitfix_")]:
            del node.__dict__[key]
    return AsNames().visit(copied)


def _matters(function: ast.FunctionDef, name: str, values: ValueAnalysis) -> bool:
    """Whether the state is more than trace-time bookkeeping: some write stores a traced value
    in it or is made under a traced test (a count of traces depends on no data), or its value
    flows into what the function returns."""
    return _written_traced(function, name, values) or name in _flowing_into_returns(function) \
        or name in _deciding_returns(function)


def _deciding_returns(function: ast.FunctionDef) -> set[str]:
    """The names an ``if`` tests whose branches return: they decide what the function gives
    back (``if self.n % 2 == 0: return x``). A test whose branches only log or warn (``if
    self.traces > 1: warnings.warn(...)``) decides nothing returned, and one that refreshes a
    cache keyed by a shape (``if self.length != x.shape[0]: self.table = ...``) is right under
    jit: each new shape traces it again."""
    return {node.id for statement in walk_body(function) if isinstance(statement, ast.If)
            and any(isinstance(inner, ast.Return) for branch in (*statement.body, *statement.orelse)
                    for inner in ast.walk(branch))
            for node in ast.walk(statement.test) if isinstance(node, ast.Name)}


def _written_traced(function: ast.FunctionDef, name: str, values: ValueAnalysis) -> bool:
    """Whether some write stores a traced value in the state or is made under a traced test:
    then the state holds a tracer, in the original too."""
    for node in walk_body(function):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None \
                and name in _bound_by(node) and values.is_traced(node.value):
            return True
        if isinstance(node, ast.If | ast.While) and name in assigned_names([*node.body, *node.orelse]) \
                and values.is_traced(node.test):
            return True
    return False


def _why_counter_stays(module: ModuleContext, traced: TracedFunction, self_name: str | None, name: str) -> str | None:
    """Why a state only ever set to Python values (``self.n += 1``, returned) cannot be passed
    in traced: eagerly a Python number, in the jitted body it would be a tracer. That changes
    nothing only for an integer counter (every write an int literal, or one added to it: an
    int32 holds it exactly; a Python float would be rounded to float32) whose every read takes
    a tracer as well (arithmetic, a JAX function, returned: not a test, a size or ``range``),
    in the body and in the methods of ``self`` it calls that read it (``k =
    self.current_step`` in ``self._schedule()``), following the value into the functions of the
    module it is passed to."""
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    owner = module.traced.parents.get(function)
    klass = owner if self_name is not None and isinstance(owner, ast.ClassDef) else None
    if not _counted_in_integers(module.tree, klass is not None, name):  # (a write from outside the class counts)
        return f"`{name}` holds a Python value that is not an integer count, which a tracer passed in would not be"
    outside = _read_outside_as_a_python_value(module, klass, name) if klass is not None else None
    if outside is not None:
        return (f"`{module.segment(outside)}` at line {outside.lineno} uses the count as a Python int (a key, an "
                "argument), which passed in and given back it would no longer be")
    reading = methods_reading(klass, name, function) if klass is not None else set()
    methods = {method.name: method for method in klass.body if isinstance(method, ast.FunctionDef)} if klass else {}
    for method in [function, *(methods[helper] for helper in sorted(reading))]:
        me = self_name if method is function else method.args.args[0].arg
        found = module.traced.get(method)
        if found is None:
            return f"`{method.name}` reads `{name}` where the analysis does not follow it"
        starts = [node for node in walk_body(method) if isinstance(node.__dict__.get("ctx"), ast.Load)
                  and _spells(node, me, name)] + (helper_calls(method, me, reading) if me else [])
        if any(isinstance(node, ast.FunctionDef | ast.Lambda) and node is not method
               and _reads_attributes(node, [name]) for node in nodes_of(method)):
            return f"a nested function in `{method.name}` reads `{name}`, where the analysis does not follow it"
        if not used_as_traced(method, starts, True, module.imports, found.values(module.imports),
                              arrays_of(module, found), _passed_on(module, klass, me)):
            return f"Python needs the value of `{name}` (a test, a size, `range`), which passed in would be a tracer"
    return None


def _passed_on(module: ModuleContext, klass: ast.ClassDef | None, me: str | None, depth: int = 0) -> PassedOn:
    """How ``used_as_traced`` follows a value into a call of a function of the module or a method
    of the class called on ``me`` (``self._time(i, n)``): through the uses of the parameter it
    lands in."""
    def follow(call: ast.Call, index: int) -> bool:
        callee, skipped = _callee(module, klass if me is not None else None, me, call)
        if callee is None or depth >= 3 or callee.args.vararg or call.keywords:
            return False
        parameters = [argument.arg for argument in [*callee.args.posonlyargs, *callee.args.args]][skipped:]
        found = module.traced.get(callee)
        if index >= len(parameters) or found is None or parameters[index] in assigned_names(callee.body):
            return False
        reads = [node for node in walk_body(callee) if isinstance(node, ast.Name) and node.id == parameters[index]]
        inner_self = callee.args.args[0].arg if skipped else None
        return used_as_traced(callee, reads, True, module.imports, found.values(module.imports),
                              arrays_of(module, found), _passed_on(module, klass, inner_self, depth + 1))
    return follow


def _callee(module: ModuleContext, klass: ast.ClassDef | None, me: str | None,
            call: ast.Call) -> tuple[ast.FunctionDef | None, int]:
    """The def a call runs, where it is certain (a module-level def called by its name; a
    method of the class called on ``me``: ``self._time(i, n)``), with how many of its
    parameters come before the call's arguments."""
    func = call.func
    if isinstance(func, ast.Name):
        defs = [node for node in module.tree.body if isinstance(node, ast.FunctionDef) and node.name == func.id]
        bound = sum(1 for node in module.tree.body if func.id in assigned_names([node]))  # (the def binds it once)
        return (defs[0], 0) if len(defs) == 1 and bound == 1 and not defs[0].decorator_list else (None, 0)
    if klass is not None and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == me:
        method = next((node for node in klass.body if isinstance(node, ast.FunctionDef) and node.name == func.attr
                       and not node.decorator_list and node.args.args), None)
        return method, 1
    return None, 0


def _read_outside_as_a_python_value(module: ModuleContext, klass: ast.ClassDef, name: str) -> ast.Attribute | None:
    """A read of the attribute outside the class (``trainer.step``) where an int32 array would
    not do what the Python int did: anywhere but a comparison, a ``return``, a formatted value or
    ``print``/``int``/``float``/``str`` (a dict key, a ``json.dumps`` argument, arithmetic that
    may pass int32's range: ``trainer.step * tokens_per_batch``)."""
    inside = {id(node) for node in ast.walk(klass)}
    parents = {id(child): node for node in ast.walk(module.tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(module.tree):
        if not (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load)) \
                or id(node) in inside:
            continue
        parent = parents.get(id(node))
        while isinstance(parent, ast.Tuple | ast.List):
            parent = parents.get(id(parent))
        if isinstance(parent, ast.Compare | ast.Return | ast.FormattedValue):
            continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
                and parent.func.id in ("print", "int", "float", "str") and node in parent.args:
            continue
        return node
    return None


def _spells(node: ast.AST, self_name: str | None, name: str) -> bool:
    """``node`` is the state: ``self.n`` (an attribute of ``self_name``) or the global ``n``."""
    if self_name is None:
        return isinstance(node, ast.Name) and node.id == name
    return isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name) \
        and node.value.id == self_name


# The most an integer count may step by (or start at): far from int32's limits in any run.
_COUNT_STEP = 1024


def _counted_in_integers(scope: ast.AST, attribute: bool, name: str) -> bool:
    """Whether every write of the state in ``scope`` (the class, for an attribute of ``self``;
    the module, for a global) is an int literal, or adds or subtracts one (``n += 1``,
    ``n = n - 1``)."""
    def integer(node: ast.AST | None) -> bool:  # (small: a count of calls stays far within int32)
        return isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) <= _COUNT_STEP

    def state(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == name if attribute else \
            isinstance(node, ast.Name) and node.id == name

    writes = 0
    for node in ast.walk(scope):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
        if not any(state(part) and isinstance(part.ctx, ast.Store)  # type: ignore[attr-defined]
                   for target in targets for part in ast.walk(target)):
            continue
        writes += 1
        value = node.value  # type: ignore[attr-defined]
        if len(targets) != 1 or not state(targets[0]):
            return False  # (`self.t, self.dt = 0.1, 1`: not read off one by one)
        if isinstance(node, ast.AugAssign):
            if not (isinstance(node.op, ast.Add | ast.Sub) and integer(value)):
                return False
        elif not (integer(value) or isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add | ast.Sub)
                  and state(value.left) and integer(value.right)):
            return False
    return writes > 0


def _bound_by(statement: ast.stmt) -> set[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]  # type: ignore[attr-defined]
    return {node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)}


def _flowing_into_returns(function: ast.FunctionDef) -> set[str]:
    """The names whose values may reach a ``return``: read there, or read by an assignment to
    a name that does (flow through control flow is not told apart: more names, never fewer)."""
    flowing = {node.id for statement in walk_body(function) if isinstance(statement, ast.Return)
               and statement.value is not None for node in ast.walk(statement.value) if isinstance(node, ast.Name)}
    assignments = [node for node in walk_body(function)
                   if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None]
    changed = True
    while changed:
        changed = False
        for statement in assignments:
            if _bound_by(statement) & flowing:
                assert statement.value is not None
                reads = {node.id for node in ast.walk(statement.value) if isinstance(node, ast.Name)}
                if isinstance(statement, ast.AugAssign):
                    reads |= _bound_by(statement)
                if not reads <= flowing:
                    flowing |= reads
                    changed = True
    return flowing


def _needs_value_from_before(function: ast.FunctionDef, name: str) -> bool:
    """Whether the body may read the state before it certainly binds it (or leave before it
    does): then its value from before is passed in. Counted conservatively, statement by
    statement from the top of the body."""
    for statement in function.body:
        reads = {node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        reads |= {name for node in ast.walk(statement) if isinstance(node, ast.AugAssign) for name in _bound_by(node)}
        if name in reads or any(isinstance(node, ast.Return) for node in ast.walk(statement)):
            return True
        if name in definitely_assigned([statement]):
            return False
    return True


def _why_not(module: ModuleContext, traced: TracedFunction, self_name: str | None, names: list[str],
             on_object: frozenset[str] = frozenset()) -> str | None:
    """Why the state cannot be threaded (None: it can)."""
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    if not (decorated_with_its_jit(traced) or jitted_by_assignment(module, traced) is not None
            or bound_jit_sites(module, traced)):
        if self_name is not None and traced.bound_jit_sites:
            return f"the body cannot be jitted in place of `jax.jit(obj.{function.name})`: " \
                   f"{why_bound_jit_stays(module, traced)}"
        return ("the function is not jitted by its own decorator or a module-level `name = jax.jit(f)` alone, so "
                "its callers cannot be given the state")
    if any(isinstance(node, ast.Yield | ast.YieldFrom | ast.Nonlocal) for node in walk_body(function)):
        return "the function yields or declares `nonlocal`"
    if any(isinstance(node, ast.Try) and node.finalbody or isinstance(node, ast.Raise | ast.Assert)
           for node in walk_body(function)):
        return ("the function raises or has a `finally` block, where the state eagerly changed before would "
                "not be given back")
    if self_name is None and function not in module.tree.body:
        return "only a module-level function is given its globals as parameters"
    if self_name is None and jit_attributes_used(module, function):
        return (f"the module uses attributes of the jitted `{function.name}` (`.lower`, `.trace`), which the "
                "def that would pass the state in lacks")
    if self_name is not None:
        return _self_used_otherwise(module, function, self_name, names, on_object)
    return _globals_used_elsewhere(module, function, names)


def jit_attributes_used(module: ModuleContext, function: FunctionNode) -> bool:
    """Whether the module reads attributes of the jitted function by its name (``f.lower(x)``,
    ``f.clear_cache()``): a plain def that wraps the jit would lack them."""
    if f"{function.name}." not in module.text:  # (a walk of the module only where the text spells one)
        return False
    return any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == function.name
               for node in ast.walk(module.tree))


def _self_used_otherwise(module: ModuleContext, function: ast.FunctionDef, self_name: str,
                         attributes: list[str], on_object: frozenset[str] = frozenset()) -> str | None:
    """Where ``self`` reaches code that may see the state on the object while it is threaded:
    passed on whole, a method of its class or a nested def that reads a threaded attribute
    (not one kept ``on_object``, where they find it), or a write into the attribute's object
    (``self.cache[k] = v``, ``self.log.append(v)``)."""
    renamed = [attribute for attribute in attributes if attribute not in on_object]
    owner = module.traced.parents.get(function)
    class_level = assigned_names(owner.body) if isinstance(owner, ast.ClassDef) else set()
    if class_level & set(attributes):  # (a property's setter, a descriptor: setting it runs code)
        return f"`{self_name}.{sorted(class_level & set(attributes))[0]}` is a property or other attribute of the class"
    methods = {node.name: node for node in owner.body if isinstance(node, ast.FunctionDef)} \
        if isinstance(owner, ast.ClassDef) else {}
    attribute_of = {id(node.value) for node in walk_body(function)
                    if isinstance(node, ast.Attribute) and _on(node, self_name)}
    for node in walk_body(function):
        if isinstance(node, ast.Name) and node.id == self_name and id(node) not in attribute_of:
            return f"`{self_name}` is passed on at line {node.lineno}, where the state would be read from the object"
        if isinstance(node, ast.Attribute) and _on(node, self_name) and node.attr in methods \
                and _reads_attributes(methods[node.attr], renamed):
            return f"`{self_name}.{node.attr}` reads the state from the object"
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del) \
                and isinstance(node.value, ast.Attribute) and _on(node.value, self_name) \
                and node.value.attr in attributes:
            return f"`{self_name}.{node.value.attr}` is changed in place, not rebound"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Attribute) and _on(node.func.value, self_name) \
                and node.func.value.attr in attributes:
            return f"`{self_name}.{node.func.value.attr}.{node.func.attr}(...)` may change it in place"
    for node in nodes_of(function):  # nested defs and lambdas see the object, not the local
        if isinstance(node, ast.FunctionDef | ast.Lambda) and node is not function \
                and _reads_attributes(node, renamed):
            return "a nested function reads the state from the object"
    return None


def _reads_attributes(function: ast.AST, attributes: list[str]) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr in attributes for node in nodes_of(function))


def _globals_used_elsewhere(module: ModuleContext, function: ast.FunctionDef, names: list[str]) -> str | None:
    """Where code the function runs reads or writes a threaded global itself: a module-level
    def it calls, a nested def that declares it ``global``, or a write into its object."""
    defs = {node.name: node for node in module.tree.body if isinstance(node, ast.FunctionDef)}
    for node in nodes_of(function):
        if isinstance(node, ast.Global) and node not in walk_body(function) and set(node.names) & set(names):
            return "a nested function declares the global too"
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del) \
                and isinstance(node.value, ast.Name) and node.value.id in names:
            return f"`{node.value.id}` is changed in place, not rebound"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defs \
                and any(isinstance(inner, ast.Name) and inner.id in names for inner in ast.walk(defs[node.func.id])):
            return f"`{node.func.id}` reads or writes the global itself"
    return None


def _taken_names(module: ModuleContext) -> set[str]:
    return {node.id for node in ast.walk(module.tree) if isinstance(node, ast.Name)} | {
        node.name for node in ast.walk(module.tree) if isinstance(node, ast.FunctionDef | ast.ClassDef)} | {
        node.attr for node in ast.walk(module.tree) if isinstance(node, ast.Attribute)}


# -- the rewrite --------------------------------------------------------------------------------

class _Threaded:
    """The def split into the jitted body, which takes the state in and gives it back, and a
    def of the old name and parameters that passes the state and stores what comes back."""

    def __init__(self, threading: Threading):
        self.threading = threading

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        threading = self.threading
        from jitfix.rules.transformers import ThreadedBody

        locals_ = {state.spelled.split(".")[-1]: state.local for state in threading.state
                   if not state.hoisted and not state.on_object}
        hoisted = {state.spelled: state.local for state in threading.state if state.hoisted}
        unread = _prelude_left_unread(threading)
        returned = (lambda value: _returned(threading, value)) if threading.returned else None
        block = node.body if isinstance(node.body, cst.IndentedBlock) else cst.IndentedBlock(
            body=[cst.SimpleStatementLine(body=[statement.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)])
                  for statement in node.body.body if isinstance(statement, cst.BaseSmallStatement)])
        # (a one-line def, `def f(x): a(x); return x`: a line each)
        body = block.visit(ThreadedBody(threading.self_name, locals_, returned, hoisted, unread))
        assert isinstance(body, cst.IndentedBlock)
        entered = [cst.parse_statement(f"{state.spelled} = {state.local}") for state in threading.state
                   if state.on_object]
        if entered:
            at = 1 if _docstring(node) else 0
            body = body.with_changes(body=[*body.body[:at], *entered, *body.body[at:]])
        if threading.returned and not always_leaves(threading.function.body):
            final = cst.parse_statement(f"return {_returned(threading, None)}")
            body = body.with_changes(body=[*body.body, final])
        passed = [cst.Param(name=cst.Name(state.local)) for state in threading.state if state.passed_in]
        params = node.params
        if passed:
            star = params.star_arg if isinstance(params.star_arg, cst.Param | cst.ParamStar) else cst.ParamStar()
            params = params.with_changes(star_arg=star, kwonly_params=[*params.kwonly_params, *passed])
        # (what the body returns is the caller's annotation only where it gives back no state)
        inner = node.with_changes(name=cst.Name(threading.inner), params=params, body=_without_docstring(body)
                                  if _docstring(node) else body, returns=None if threading.returned else node.returns)
        if threading.static_self_jit:
            jit = f"{context.name('functools.partial')}({threading.static_self_jit}, static_argnums=0)"
            inner = inner.with_changes(decorators=[cst.Decorator(cst.parse_expression(jit))])
        static = [state.local for state in threading.state if state.static]
        if static:
            inner = inner.with_changes(decorators=[_with_static_names(decorator, static, context)
                                                   for decorator in inner.decorators])
        wrapper = cst.parse_statement(_wrapper_source(threading, node))
        blank = cst.EmptyLine(indent=False)
        lines = [blank] if threading.self_name else [blank, blank]
        return cst.FlattenSentinel([inner, wrapper.with_changes(leading_lines=lines)])  # type: ignore[return-value]


def _with_static_names(decorator: cst.Decorator, names: list[str], context: EditContext) -> cst.Decorator:
    """The jit decorator with ``names`` (keyword-only parameters) added to its
    ``static_argnames``; another decorator as it is."""
    from jitfix.rules.static_arguments import add_static_names

    return decorator.with_changes(decorator=add_static_names(decorator.decorator, names, context))


class _Unwrapped:
    """``jax.jit(counter.count)`` -> ``counter.count``: the method jits its own body now."""

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        return node.args[0].value


def _prelude_left_unread(threading: Threading) -> frozenset[str]:
    """The prelude's statements (as ``ast.unparse`` spells them) the jitted body no longer
    reads once the hoisted calls are passed in: dropped from it (one with a comment of its
    own stays)."""
    body = [node for statement in threading.function.body for node in ast.walk(statement)]  # nested defs too
    hoisted = {id(node) for node in body if isinstance(node, ast.Call)
               and any(state.hoisted and state.spelled == ast.unparse(node) for state in threading.state)}
    inside = {id(part) for node in body if id(node) in hoisted for part in ast.walk(node)}
    unread: set[int] = set()
    for statement in reversed(threading.prelude):
        name = statement.targets[0].id  # type: ignore[attr-defined]
        reads = [node for node in body if isinstance(node, ast.Name) and node.id == name
                 and isinstance(node.ctx, ast.Load) and id(node) not in inside]
        if all(any(node is part for dropped in threading.prelude if dropped.lineno in unread
                   for part in ast.walk(dropped.value)) for node in reads):
            unread.add(statement.lineno)
    return frozenset(ast.unparse(statement) for statement in (*threading.prelude, *threading.absorbed)
                     if statement.lineno in unread or statement in threading.absorbed)


def _returned(threading: Threading, value: cst.BaseExpression | None) -> str:
    """What a ``return`` of the jitted body gives back: the value (when the function returns
    one) and then the state."""
    state = [state.spelled if state.on_object else state.local for state in threading.returned]
    if not threading.returns_value:
        return ", ".join(state)
    shown = "None" if value is None else code(value)
    if isinstance(value, cst.Tuple) and not value.lpar:
        shown = f"({shown})"
    return ", ".join([shown, *state])


def _docstring(node: cst.FunctionDef) -> str | None:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else []
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine) and isinstance(first.body[0], cst.Expr) \
            and isinstance(first.body[0].value, cst.SimpleString | cst.ConcatenatedString):
        return code(first.body[0].value)
    return None


def _without_docstring(body: cst.IndentedBlock) -> cst.IndentedBlock:
    """The jitted body loses the docstring to the def callers see (it documents the call)."""
    rest = list(body.body[1:])
    if rest:
        rest[0] = rest[0].with_changes(leading_lines=[])
    return body.with_changes(body=rest)


def _wrapper_source(threading: Threading, node: cst.FunctionDef) -> str:
    """``def step(self, dt):`` / ``self.v, self.p = self._step(dt, v=self.v, p=self.p)``."""
    function = threading.function
    arguments = function.args
    positional = [argument.arg for argument in [*arguments.posonlyargs, *arguments.args]]
    callee = threading.callee
    if threading.self_name is not None:
        positional = positional[1:]
        callee = f"{threading.self_name}.{callee}"
    passed = positional + ([f"*{arguments.vararg.arg}"] if arguments.vararg else [])
    passed += [f"{argument.arg}={argument.arg}" for argument in arguments.kwonlyargs]
    passed += [f"{state.local}={state.spelled}" for state in threading.state if state.passed_in]
    passed += [f"**{arguments.kwarg.arg}"] if arguments.kwarg else []
    state = ", ".join(state.spelled for state in threading.returned)
    indent = "    "
    nested = len(indent) if threading.self_name is not None else 0  # a method: in its class's block

    def call(prefix: str) -> str:
        return _call_fitted(prefix, callee, passed, len(indent), nested)
    returns = f" -> {code(node.returns.annotation)}" if node.returns is not None else ""
    lines = [f"def {threading.wrapper}({code(node.params)}){returns}:"]
    docstring = _docstring(node)
    if docstring:
        lines.append(indent + docstring)
    lines += [indent + source for source in threading.prelude_source]
    rebound = ", ".join(state.spelled for state in threading.returned if not state.on_object)
    if threading.self_name is None and rebound:
        lines.append(f"{indent}global {rebound}")
    if not state:
        lines.append(f"{indent}{call('return ')}")
    elif threading.returns_value:
        result = unique_name("result", {argument.arg for argument in ast.walk(arguments)
                                        if isinstance(argument, ast.arg)})
        lines += [f"{indent}{call(f'{result}, {state} = ')}", f"{indent}return {result}"]
    else:
        lines.append(f"{indent}{call(f'{state} = ')}")
    return "\n".join(lines) + "\n"


def _call_fitted(prefix: str, callee: str, arguments: list[str], column: int, nested: int) -> str:
    """``prefix callee(a, b)`` at ``column`` of the wrapper's source, which goes ``nested``
    columns deeper in the file, split as black splits a call that does not fit in 88 columns:
    the arguments on one line of their own, else one a line."""
    flat = f"{prefix}{callee}({', '.join(arguments)})"
    if nested + column + len(flat) <= MAX_LINE_LENGTH:
        return flat
    inner = "    "
    hugged = f"{inner}{', '.join(arguments)}"
    if nested + column + len(hugged) <= MAX_LINE_LENGTH:
        return f"{prefix}{callee}(\n{' ' * column}{hugged}\n{' ' * column})"
    listed = "".join(f"{' ' * column}{inner}{argument},\n" for argument in arguments)
    return f"{prefix}{callee}(\n{listed}{' ' * column})"
