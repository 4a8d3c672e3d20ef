"""JF302 — state on ``self`` read by a jitted method at trace time only.

A method jitted as a bound method (``self.step = jax.jit(self._step)``) or with ``self``
static (``@partial(jax.jit, static_argnums=0)``) sees ``self`` as a Python object fixed when
it is traced: the attributes it reads are baked into the compiled function, and another
method's ``self.lr = ...`` is silently ignored.

Where the method is jitted as a bound method in ``__init__`` and is private to the class, the
fix is the JAX documentation's: pass the value in. The jit is kept in ``self._step_jit``,
the changing attributes become keyword-only parameters of ``_step``, and a method ``step``
with ``_step``'s parameters passes their current values -- callers still write
``trainer.step(w, g)``. A method jitted with ``self`` static, by its decorator or by a bound
jit where it is used (``calc = jit(c.calc)``), is split the same way (``threaded_state``).
Elsewhere it is reported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator

from jitfix.analysis.blocks import (
    assigned_names,
    free_names_when_called,
    method_changes,
    nodes_seeing,
    own_nodes,
    parents_in,
    walk_body,
)
from jitfix.analysis.passed_values import argument_for
from jitfix.analysis.traced_function import TracedFunction, is_lambda_body
from jitfix.analysis.values import parameter_names, positional_names
from jitfix.cst_text import code, cst
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.naming import unique_name
from jitfix.rules import threaded_state
from jitfix.rules.base import ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import name_position
from jitfix.rules.static_arguments import static_argnames_edit


class StaleAttribute(Rule):
    code = "JF302"
    name = "stale-attribute"
    summary = "state on `self` that changes is frozen into a jitted method at trace time; pass it in"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds attributes of `self` that a jitted method reads -- a method jitted as a bound "
        "method (`self.step = jax.jit(self._step)`) or with `self` static "
        "(`@partial(jax.jit, static_argnums=0)`), or a def or lambda inside it (`tree_map(lambda p: "
        "p - self.lr * ...)`) -- and that another method of the class changes (`self.lr = ...`, "
        "`self.lr *= 0.5`, `self.history.append(...)`), or code outside the class changes on an "
        "instance after calling it (`t = Trainer(...)`, `t.update(...)`, then `t.lr = ...`; or in a "
        "loop that calls it; or on a parameter annotated `Trainer`).",
        why="`self` is then a Python object fixed at trace time: its attributes are read once, "
        "while tracing, and baked into the compiled function. A later `self.lr = ...` is "
        "silently ignored (a static `self` is hashed by identity, so the cache still matches).",
        example="class Trainer:\n    def __init__(self, lr):\n        self.lr = lr\n"
        "        self.update = jax.jit(self._update)\n\n    def _update(self, w, g):\n"
        "        return w - self.lr * g\n\n    def decay(self):\n        self.lr = self.lr * 0.5\n",
        fixed="class Trainer:\n    def __init__(self, lr):\n        self.lr = lr\n"
        "        self._update_jit = jax.jit(self._update)\n\n    def _update(self, w, g, *, lr):\n"
        "        return w - lr * g\n\n    def update(self, w, g):\n"
        "        return self._update_jit(w, g, lr=self.lr)\n\n    def decay(self):\n        self.lr = self.lr * 0.5\n",
        safety="Fixed as the example shows where the method is jitted once, as a bound method, in "
        "`__init__` (`self.update = jax.jit(self._update)`), is private (`_update`, used nowhere else), and "
        "uses each changing attribute only as an operand of arithmetic with a traced value (so passing "
        "it in as a traced argument changes nothing Python sees): callers keep writing `obj.update(w, g)`, "
        "and each call passes the attribute's current value. `obj.update` is then a method, not a jitted "
        "function (`.lower()` is on `obj._update_jit`). A method jitted by its own decorator with `self` "
        "static (`@partial(jax.jit, static_argnums=0)`) is split the same way: the body moves to `_compute` "
        "(`_step_jitted` for a private `_step`), still so jitted, taking the attributes as keyword-only "
        "parameters, and `compute`, with the method's parameters and docstring, passes their current "
        "values, so every caller, in the class or not, is unchanged. So is a method jitted where it is "
        "used, as a bound method (`calc = jit(c.calc)`, then `c.mul = 3.0`: a change on the instance after "
        "the jit's first call counts), its body's def jitted with `self` static in place of the bound jit "
        "(which fixed `self` just so) and the call keeping the method (`calc = c.calc`), where the class is a "
        "plain one whose instances hash by identity and the method is called nowhere else with arguments "
        "(JF402 says when not). A function the method calls through an attribute "
        "(`self.fn(x)`, jax#9023) is passed in as a static argument of the jitted body (`static_argnames`) where "
        "every value the module stores in that attribute is certainly a function -- a lambda, a def, a name bound "
        "only to those, or what every call of a setter method gives it --: a function hashes by identity, so a "
        "new one compiles anew. Reported otherwise -- a method with "
        "other decorators, an attribute used as a Python value (a callable object, which may not hash; a list it "
        "indexes), "
        "an attribute the method changes itself (JF402 threads that): pass the value in as an argument, or make the class "
        "a pytree whose changing fields are leaves (`flax.struct.dataclass`, `equinox.Module`, "
        "`jax.tree_util.register_pytree_node`) and pass the object itself. Set-up in `__init__`, "
        "`__post_init__` and `setup` is not a change, nor is a change on an instance before its first "
        "call (the first trace reads it); neither is a method that changes what the jitted method never "
        "reads.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        receivers = [(traced, receiver) for traced in module.traced.values()
                     if (receiver := _fixed_receiver(traced)) is not None]
        if not receivers:
            return
        classes = {id(method): klass for klass in module.traced.classes
                   for method in klass.body if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)}
        for traced, receiver in receivers:
            klass = classes.get(id(traced.node))
            if klass is None:
                continue
            changed = {**_changed_on_instances(module.tree, klass), **_changed_attributes(module.tree, klass, traced.node)}
            # Read by the method or by a def or lambda in it (`tree_map(lambda p: p - self.lr * ...)`):
            # both run while it is traced.
            reads = [node for node in nodes_seeing(traced.node.body, receiver) if isinstance(node, ast.Attribute)
                     and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                     and node.value.id == receiver and node.attr in changed]
            threading = threaded_state.plan(module, traced)
            if isinstance(threading, threaded_state.Threading):  # JF402 passes those in and gives them back
                threaded = {state.spelled for state in threading.state}
                reads = [node for node in reads if f"{receiver}.{node.attr}" not in threaded]
            if not reads:
                continue
            stale = list(dict.fromkeys(node.attr for node in reads))
            listed = ", ".join(f"`{receiver}.{name}`" for name in stale)
            hows = "; ".join(f"`{receiver}.{name}` is {changed[name]}" for name in stale)
            where = f"`{traced.qualname}` reads {listed} at trace time only ({hows})"
            fix = _attribute_fix(module, traced, klass, receiver, stale)
            if isinstance(fix, Fix):
                yield self.finding(module, reads[0], f"{where}; pass {'them' if len(stale) > 1 else 'it'} in", fix,
                                   function=traced)
                continue
            yield self.finding(module, reads[0], f"{where}; not auto-fixable: {fix}; pass the value in as an "
                               "argument, or make the class a pytree", function=traced)


class TracedSelf(Rule):
    code = "JF303"
    name = "traced-self"
    summary = "a jitted method whose `self` is a plain object, not a pytree, raises on every call; make `self` static"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds methods jitted with `self` traced (`@jax.jit` on a method) of a class that is "
        "certainly no pytree: no base class, no decorator but `dataclass`, no `tree_flatten`, and "
        "never handed to a function of the module (as `jax.tree_util.register_pytree_node(Model, "
        "...)` is); and makes `self` static.",
        why="jit traces every argument it does not keep static, `self` too, and only arrays, "
        "Python scalars and pytrees of them can be traced: each call raises `TypeError: ... is not "
        "a valid JAX type`. A static `self` is hashed instead (a plain object by identity) and read "
        "as a Python object while tracing.",
        example="class Model:\n    def __init__(self, w):\n        self.w = w\n\n"
        "    @jax.jit\n    def predict(self, x):\n        return x @ self.w\n",
        fixed="from functools import partial\n\n\n"
        "class Model:\n    def __init__(self, w):\n        self.w = w\n\n"
        "    @partial(jax.jit, static_argnames=(\"self\",))\n    def predict(self, x):\n"
        "        return x @ self.w\n",
        safety="Safe where fixed: every call raised before. The method then reads `self`'s attributes "
        "when it is traced, once per instance, so the fix is made only where nothing changes an "
        "attribute the method reads after set-up (another method of the class, or code on an instance "
        "after a call: JF302's test). Reported without a fix where something does, and for a class whose "
        "instances are unhashable (a `dataclass` with `eq=True`, the default, and no `frozen=True` or "
        "`unsafe_hash=True`; a class defining `__eq__` but not `__hash__`): make the class a pytree "
        "(`jax.tree_util.register_dataclass`, `flax.struct.dataclass`, `equinox.Module`) or pass the "
        "arrays in as arguments.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        classes = {id(method): klass for klass in module.traced.classes
                   for method in klass.body if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)}
        for traced in module.traced.values():
            klass = classes.get(id(traced.node))
            receiver = _traced_receiver(traced)
            if klass is None or receiver is None or not _certainly_no_pytree(klass, module):
                continue
            where = (f"`{receiver}` of `{traced.qualname}` is traced, but `{klass.name}` is no pytree: every call "
                     "raises `TypeError` (not a valid JAX type)")
            why_not = _why_self_cannot_be_static(module, traced, klass, receiver)
            edits = [static_argnames_edit(module, site, [receiver], traced.node) for site in traced.jit_sites]
            if why_not is None and (not edits or any(edit is None for edit in edits)):
                why_not = "the jit's static arguments are not literal"
            if why_not is not None:
                yield self.finding(module, traced.jit_sites[0], f"{where}; not auto-fixable: {why_not}; make "
                                   f"`{klass.name}` a pytree, or pass its arrays in as arguments", function=traced)
                continue
            fix = Fix(Safety.SAFE, f"add `{receiver}` to static_argnames", edits)  # type: ignore[arg-type]
            yield self.finding(module, traced.jit_sites[0], f"{where}; make `{receiver}` static (read at trace "
                               "time, once per instance)", fix, function=traced)


def _traced_receiver(traced: TracedFunction) -> str | None:
    """The name of ``self`` where a jit of the method, not bound, traces it."""
    function = traced.node
    positional = positional_names(function)
    if not positional or not traced.jit_sites or traced.bound_jit_sites or any(
            isinstance(d, ast.Name) and d.id in {"staticmethod", "classmethod"} for d in function.decorator_list):
        return None
    receiver = positional[0]
    return receiver if receiver in traced.traced_params else None


def _certainly_no_pytree(klass: ast.ClassDef, module: ModuleContext) -> bool:
    """A class of its own (no base, no decorator but ``dataclasses.dataclass`` -- flax's and
    chex's are pytrees --, no ``tree_flatten``) that the module never hands to a function
    (``register_pytree_node(Model, ...)``)."""
    tree = module.tree
    if klass.bases or klass.keywords or any(
            module.imports.resolve(d.func if isinstance(d, ast.Call) else d) != "dataclasses.dataclass"
            for d in klass.decorator_list):
        return False
    if any(isinstance(node, ast.FunctionDef) and node.name in ("tree_flatten", "tree_unflatten")
           for node in klass.body):
        return False
    return not any(isinstance(node, ast.Call) and any(isinstance(argument, ast.Name) and argument.id == klass.name
                                                      for argument in [*node.args, *(k.value for k in node.keywords)])
                   for node in ast.walk(tree))


def _why_self_cannot_be_static(module: ModuleContext, traced: TracedFunction, klass: ast.ClassDef,
                               receiver: str) -> str | None:
    """Why a static ``self`` would not do: its instances are unhashable, or an attribute the
    method reads changes after set-up (a static ``self`` would freeze it at the first trace)."""
    if not threaded_state.hashable_instances(klass):
        return (f"instances of `{klass.name}` compare by value and are unhashable, and a static argument "
                "must be hashable")
    changed = {**_changed_on_instances(module.tree, klass), **_changed_attributes(module.tree, klass, traced.node)}
    read = [node.attr for node in nodes_seeing(traced.node.body, receiver) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == receiver and node.attr in changed]
    if read:
        return f"`{receiver}.{read[0]}` is {changed[read[0]]}, which a static `{receiver}` would not see"
    return None


# Methods that set an object up before it is used: their assignments are not changes.
SET_UP_METHODS = frozenset({"__init__", "__post_init__", "setup", "__new__", "__setstate__"})


def _fixed_receiver(traced: TracedFunction) -> str | None:
    """The name of ``self`` when the jitted method sees it as a Python object fixed at trace
    time: jitted as a bound method, or with ``self`` static."""
    function = traced.node
    positional = positional_names(function)
    if not positional or any(isinstance(d, ast.Name) and d.id in {"staticmethod", "classmethod"}
                             for d in function.decorator_list):
        return None
    receiver = positional[0]
    if traced.bound_jit_sites or receiver in traced.static_params and traced.jit_sites:
        return receiver
    return None


def _changed_attributes(tree: ast.Module, klass: ast.ClassDef, reader: ast.AST) -> dict[str, str]:
    """Attributes of ``self`` that a method of the class (other than set-up and the reader)
    rebinds or changes in place, with how."""
    changed: dict[str, str] = {}
    set_up = _set_up_methods(tree, klass)
    for method in klass.body:
        if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) or method is reader \
                or method.name in set_up or not method.args.args:
            continue
        receiver = method.args.args[0].arg
        for node in walk_body(method):
            for attribute, how in _attribute_changes(node, receiver):
                changed.setdefault(attribute, f"{how} in `{method.name}`")
    return changed


def _set_up_methods(tree: ast.Module, klass: ast.ClassDef) -> set[str]:
    """The class's set-up methods (``SET_UP_METHODS``) and the methods only they call, on
    their own object (`self._precompute(area)` in `__init__`, nowhere else): what those
    assign, they assign while the object is set up, before any call can trace a method."""
    methods = {method.name: method for method in klass.body if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)}
    set_up = {name for name in methods if name in SET_UP_METHODS}
    grown = True
    while grown:
        grown = False
        for name, method in methods.items():
            if name in set_up:
                continue
            calls_from_set_up = sum(1 for caller in set_up if methods[caller].args.args
                                    for node in walk_body(methods[caller]) if _calls_own_method(node, methods[caller], name))
            if calls_from_set_up and calls_from_set_up == _attribute_mentions(tree, name):
                set_up.add(name)
                grown = True
    return set_up


def _calls_own_method(node: ast.AST, caller: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """``node`` is `self.name(...)`, ``self`` the first parameter of ``caller``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == caller.args.args[0].arg


def _changed_on_instances(tree: ast.Module, klass: ast.ClassDef) -> dict[str, str]:
    """Attributes changed on an instance of the class from outside it, where the change may
    come after the instance's jitted method was traced: ``t = Trainer(...)``, then a call on
    ``t`` and after it (or in a loop that also calls it) ``t.lr = ...``; and any change to a
    parameter annotated with the class, whose caller may have called it already. A change
    made before the first call is set-up: the first trace sees it."""
    changed: dict[str, str] = {}
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    scopes: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef | None, list[ast.AST]]] = [
        (None, list(own_nodes(tree.body))), *((function, list(walk_body(function))) for function in functions)]
    for function, nodes in scopes:
        instances = _instances(klass, function, nodes)
        if not instances:
            continue
        loops: list[ast.AST] = [node for node in nodes if isinstance(node, ast.For | ast.AsyncFor | ast.While)]
        for name, always in instances.items():
            through = {name, *_bound_methods_of(name, nodes)}
            calls = [node for node in nodes if isinstance(node, ast.Call)
                     and any(_calls_on(node, held) for held in through)]
            for node in nodes:
                for attribute, how in _attribute_changes(node, name):
                    if always or _after_a_call(node, calls, loops):
                        changed.setdefault(attribute, f"{how} on `{name}` at line {node.lineno}")  # type: ignore[attr-defined]
    return changed


def _instances(klass: ast.ClassDef, function: ast.FunctionDef | ast.AsyncFunctionDef | None,
               nodes: list[ast.AST]) -> dict[str, bool]:
    """Names of the scope that hold an instance of the class: made there (``t = Trainer()``:
    False) or a parameter annotated with it (True: it may have been called already)."""
    found: dict[str, bool] = {}
    if function is not None:
        for arg in ast.walk(function.args):
            if not isinstance(arg, ast.arg):
                continue
            annotation = arg.annotation
            if isinstance(annotation, ast.Name) and annotation.id == klass.name \
                    or isinstance(annotation, ast.Constant) and annotation.value == klass.name:
                found[arg.arg] = True
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                and node.value.func.id == klass.name:
            found.setdefault(node.targets[0].id, False)
    return found


def _bound_methods_of(name: str, nodes: list[ast.AST]) -> set[str]:
    """The names bound to a wrapper of one of the instance's methods (``calc = jit(c.calc)``):
    calling one calls the method on the instance."""
    return {node.targets[0].id for node in nodes if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)
            and any(isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name)
                    and argument.value.id == name for argument in node.value.args)}


def _calls_on(call: ast.Call, name: str) -> bool:
    """``name(...)`` or ``name.method(...)``."""
    func = call.func
    target = func.value if isinstance(func, ast.Attribute) else func
    return isinstance(target, ast.Name) and target.id == name


def _after_a_call(change: ast.AST, calls: list[ast.Call], loops: list[ast.AST]) -> bool:
    """Whether a call on the instance runs before ``change``: earlier in the source, or in a
    loop holding both (its next pass)."""
    where = (change.lineno, change.col_offset)  # type: ignore[attr-defined]
    if any((call.lineno, call.col_offset) < where for call in calls):
        return True
    return any(_inside(change, loop) and any(_inside(call, loop) for call in calls) for loop in loops)


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return outer.lineno <= node.lineno <= (outer.end_lineno or outer.lineno)  # type: ignore[attr-defined]


def _attribute_changes(node: ast.AST, receiver: str) -> Iterator[tuple[str, str]]:
    """``self.a = v`` (set), ``self.a[k] = v`` and ``self.a.append(v)`` (changed in place)."""
    def own(expr: ast.AST) -> str | None:
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == receiver:
            return expr.attr
        return None

    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            for item in target.elts if isinstance(target, ast.Tuple | ast.List) else [target]:
                if own(item):
                    yield own(item), "set"  # type: ignore[misc]
                elif isinstance(item, ast.Subscript) and own(item.value):
                    yield own(item.value), "changed in place"  # type: ignore[misc]
    for call in method_changes(node):
        if own(call.func.value):  # type: ignore[attr-defined]
            yield own(call.func.value), f"changed in place (`.{call.func.attr}`)"  # type: ignore[attr-defined, misc]


# -- the fix: pass the changing attributes in (a method jitted as a bound method in __init__) --


@dataclass
class _BoundJit:
    """``self.NAME = jax.jit(self.METHOD)`` in ``__init__``: where it is, and the names."""

    target: ast.Attribute  # `self.NAME`
    name: str
    method: ast.FunctionDef


def _attribute_fix(module: ModuleContext, traced: TracedFunction, klass: ast.ClassDef, receiver: str,
                   stale: list[str]) -> Fix | str:
    """The fix the JAX documentation recommends -- pass the value in -- where the method is
    jitted as a bound method in ``__init__`` and callers can keep calling ``obj.NAME(...)``:
    the jit is kept in ``self._NAME_jit``, the changing attributes become keyword-only
    parameters of the method, and a method ``NAME`` with its signature passes their current
    values. Otherwise why not."""
    bound = _bound_jit_in_init(traced, klass)
    if isinstance(bound, str):
        if receiver in traced.static_params and threaded_state.decorated_with_its_jit(traced) \
                or threaded_state.bound_jit_sites(module, traced):
            return _static_self_fix(module, traced, receiver, stale)
        return bound
    method = bound.method
    if method.decorator_list or method.args.vararg or method.args.kwarg:
        return "the method has decorators or `*args`/`**kwargs`, which a generated method cannot forward faithfully"
    if not method.name.startswith("_") or _attribute_mentions(module.tree, method.name) != 1:
        return f"`{method.name}` is used elsewhere than its jit, with the signature the fix changes"
    problem = _why_reads_stay(module, traced, method, receiver, stale)
    if problem:
        return problem
    taken = {node.id for node in ast.walk(method) if isinstance(node, ast.Name)} | {
        arg.arg for arg in ast.walk(method.args) if isinstance(arg, ast.arg)}
    parameters = {}
    for attribute in stale:
        parameters[attribute] = unique_name(attribute, taken)
    members = _member_names(klass)
    jitted = unique_name(f"_{bound.name.lstrip('_')}_jit", members)
    start, end = module.span_of(bound.target)
    edits = [
        Edit(start, cst.Attribute, _Renamed(jitted), end=end),
        Edit(name_position(module, method), cst.FunctionDef,
             _PassedIn(receiver, parameters, bound.name, jitted)),
    ]
    listed = ", ".join(f"`{receiver}.{name}`" for name in stale)
    return Fix(Safety.SAFE, f"pass {listed} to the jitted `{method.name}` at each call of `{bound.name}`", edits)


def _why_reads_stay(module: ModuleContext, traced: TracedFunction, method: ast.FunctionDef, receiver: str,
                    stale: list[str], functions: list[str] = []) -> str | None:
    """Why the attributes cannot become parameters of the method (None: they can);
    ``functions``: those that hold functions the method calls, to be passed in static."""
    if any(_own_receiver(node, receiver) for node in ast.walk(method) if node is not method):
        return f"a def or lambda in `{method.name}` has a `{receiver}` of its own"
    klass = module.traced.parents.get(method)
    for attribute in stale:
        if not isinstance(klass, ast.ClassDef):
            break
        calls = threaded_state.helper_calls(method, receiver, threaded_state.methods_reading(klass, attribute, method))
        if calls:  # (it would go on reading the object's value, frozen at the trace)
            return f"`{module.segment(calls[0].func)}` reads `{receiver}.{attribute}` too, from the object"
    class_level = assigned_names(klass.body) if isinstance(klass, ast.ClassDef) else set()
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) \
                and node.value.id == receiver and node.attr in class_level:  # (a property's setter runs code)
            return f"`{receiver}.{node.attr} = ...` at line {node.lineno} sets a property, which may change the state"
    values = traced.values(module.imports)
    lambdas = _traced_lambdas_in(module, method)
    for node in ast.walk(method):
        if _reads_attribute(node, receiver, stale) and getattr(node, "attr", None) not in functions \
                and not _in_traced_arithmetic(node, method, _values_where(node, lambdas, module) or values):
            return (f"`{receiver}.{node.attr}` is used at line {node.lineno} where its value may matter to "  # type: ignore[attr-defined]
                    "Python (not only as an operand of traced arithmetic)")
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del) \
                and isinstance(node.value, ast.Name) and node.value.id == receiver and node.attr in stale:
            return f"the method changes `{receiver}.{node.attr}` itself"
    return None


def _static_self_fix(module: ModuleContext, traced: TracedFunction, receiver: str, stale: list[str]) -> Fix | str:
    """A method jitted by its decorator with ``self`` static: the body moves to ``_NAME``
    (still so jitted), which takes the attributes as keyword-only parameters, and ``NAME``,
    with the method's parameters, passes their current values (``threaded_state``)."""
    method = traced.node
    assert isinstance(method, ast.FunctionDef)
    used = next((node for node in ast.walk(module.tree) if isinstance(node, ast.Attribute)
                 and isinstance(node.value, ast.Attribute) and node.value.attr == method.name), None)
    if used is not None:  # (`Model.apply.lower(...)`: the method that passes the state in is no jit)
        return f"`{module.segment(used)}` at line {used.lineno} uses an attribute of the jitted method, which the " \
               "method that would pass the state in lacks"
    functions = [name for name in stale if _only_called(method, receiver, name) and _holds_functions(module, name)]
    problem = _why_reads_stay(module, traced, method, receiver, stale, functions)
    if problem:
        return problem
    threading = threaded_state.read_only(module, traced, receiver, stale, static=functions)
    listed = ", ".join(f"`{receiver}.{name}`" for name in stale)
    static = ", ".join(f"`{receiver}.{name}`" for name in functions)
    how = f" ({static}, a function: as a static argument, so that a new one compiles anew)" if functions else ""
    return Fix(Safety.SAFE, f"pass {listed} to the jitted `{threading.inner}` at each call of `{method.name}`{how}",
               threaded_state.edits(module, traced, threading))


def _only_called(method: ast.FunctionDef, receiver: str, name: str) -> bool:
    """Whether every read of ``receiver.name`` in the method calls it (``self.fn(x)``)."""
    called = {id(node.func) for node in ast.walk(method) if isinstance(node, ast.Call)}
    reads = [node for node in ast.walk(method) if _reads_attribute(node, receiver, [name])]
    return bool(reads) and all(id(node) in called for node in reads)


def _holds_functions(module: ModuleContext, name: str) -> bool:
    """Whether every value the module stores in an attribute ``name`` (of any object) is
    certainly a function -- a lambda, a def, a name bound only to those, or a method's
    parameter every call of the method gives one --, which hashes by identity: a static
    argument that a new function compiles anew for."""
    if _set_otherwise(module.tree, name):
        return False
    stores = [node for node in ast.walk(module.tree) if isinstance(node, ast.Attribute) and node.attr == name
              and not isinstance(node.ctx, ast.Load)]
    parents = parents_in(module.tree)
    for store in stores:
        statement = parents.get(id(store))
        if not (isinstance(statement, ast.Assign) and statement.targets == [store]):
            return False
        if not _a_function(module, statement.value, _scope_of(statement, parents), 0):
            return False
    return bool(stores)


def _set_otherwise(tree: ast.Module, name: str) -> bool:
    """Whether the module may set attributes named ``name`` other than by ``obj.name =
    value``: a class body binding it (a class-level default), ``setattr``, ``__dict__``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and name in assigned_names(node.body):
            return True
        if isinstance(node, ast.Name) and node.id == "setattr" or isinstance(node, ast.Attribute) \
                and node.attr == "__dict__":
            return True
    return False


def _scope_of(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST:
    current = parents.get(id(node))
    while current is not None and not isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
        current = parents.get(id(current))
    return current if current is not None else node


def _a_function(module: ModuleContext, value: ast.AST, scope: ast.AST, depth: int) -> bool:
    if isinstance(value, ast.Lambda):
        return True
    if not isinstance(value, ast.Name) or depth > 3 or module.traced.program is None:
        return False
    scopes = module.traced.program.scopes
    home = scopes.binding_scope(scope, value.id)
    if home is None:
        return False
    stores = [node for node in ast.walk(module.tree) if isinstance(node, ast.Name) and node.id == value.id
              and not isinstance(node.ctx, ast.Load) and scopes.binding_scope(_scope_of(node, parents_in(module.tree)),
                                                                             value.id) is home]
    if scopes.defs.get(home, {}).get(value.id) is not None:  # (a def, bound by nothing else: no `global` rebinds it)
        return (home, value.id) not in scopes.redefined and not stores and not _declared_global(module.tree, value.id)
    if isinstance(home, ast.FunctionDef | ast.AsyncFunctionDef) and value.id in parameter_names(home):
        return not stores and _every_call_gives_a_function(module, home, value.id, depth)  # (never rebound)
    if home is module.tree and _declared_global(module.tree, value.id):
        return False
    parents = parents_in(home)
    bound = [parents.get(id(node)) for node in stores]
    return bool(bound) and all(isinstance(statement, ast.Assign) and len(statement.targets) == 1
                               and statement.targets[0] is node and _a_function(module, statement.value, home, depth + 1)
                               for node, statement in zip(stores, bound))


def _only_called_by_name(tree: ast.Module, method: str) -> bool:
    """Whether every ``obj.method`` in the module is the callee of a call."""
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    return all(id(node) in called for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == method)


def _declared_global(tree: ast.Module, name: str) -> bool:
    return any(isinstance(node, ast.Global | ast.Nonlocal) and name in node.names for node in ast.walk(tree))


def _every_call_gives_a_function(module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef,
                                 parameter: str, depth: int) -> bool:
    """Whether the module calls ``function`` -- a def by its name, a method by its name on
    any object where no other class of the module has a method of that name -- and every call
    passes ``parameter`` a function."""
    scopes = module.traced.program.scopes  # type: ignore[union-attr]
    owner = scopes.parent.get(function)
    method = isinstance(owner, ast.ClassDef)
    if method and sum(function.name in scopes.defs.get(klass, {}) for klass in scopes.class_list) != 1:
        return False
    if method and not _only_called_by_name(module.tree, function.name):
        return False  # (handed on as a value, `callbacks = [t.assign_fn]`: its calls are not all in sight)
    calls = [(call, scope) for call, scope in scopes.calls_to(function.name)
             if isinstance(call.func, ast.Attribute if method else ast.Name)]
    if not calls:
        return False
    for call, scope in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        argument = argument_for(call, function, parameter, skipped=1 if method else 0)
        if argument is None or not _a_function(module, argument, scope, depth + 1):
            return False
    return True


def _own_receiver(node: ast.AST, receiver: str) -> bool:
    """A def or lambda that binds ``receiver`` itself and uses it (the fix renames
    ``receiver.attr`` reads by their spelling)."""
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) \
        and receiver not in free_names_when_called(node) \
        and any(isinstance(child, ast.Name) and child.id == receiver for child in ast.walk(node))


def _bound_jit_in_init(traced: TracedFunction, klass: ast.ClassDef) -> _BoundJit | str:
    init = next((node for node in klass.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"), None)
    if len(traced.bound_jit_sites) != 1 or init is None or not init.args.args:
        return "the method is not jitted once, as a bound method, in `__init__`"
    site = traced.bound_jit_sites[0]
    me = init.args.args[0].arg
    for statement in init.body:
        if isinstance(statement, ast.Assign) and statement.value is site and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me \
                    and len(site.args) == 1 and not site.keywords:
                if target.attr in _member_names(klass) - {target.attr} or _attribute_stores(klass, target.attr) != 1:
                    return f"`{me}.{target.attr}` is also set or defined elsewhere in the class"
                return _BoundJit(target, target.attr, traced.node)  # type: ignore[arg-type]
    return "the jit is not assigned to an attribute of `self` in `__init__` with no other arguments"


def _member_names(klass: ast.ClassDef) -> set[str]:
    """The class's methods and class attributes, and the attributes its methods set on `self`."""
    names = {node.name for node in klass.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    names |= assigned_names(klass.body)
    names |= {node.attr for node in ast.walk(klass) if isinstance(node, ast.Attribute)
              and isinstance(node.ctx, ast.Store)}
    return names


def _attribute_stores(klass: ast.ClassDef, name: str) -> int:
    return sum(1 for node in ast.walk(klass) if isinstance(node, ast.Attribute) and node.attr == name
               and isinstance(node.ctx, ast.Store))


def _attribute_mentions(tree: ast.Module, name: str) -> int:
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == name)


def _reads_attribute(node: ast.AST, receiver: str, names: list[str]) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
        and node.value.id == receiver and node.attr in names


def _traced_lambdas_in(module: ModuleContext, method: ast.FunctionDef) -> list[TracedFunction]:
    """The traced lambdas inside ``method`` (``tree_map(lambda p, g: p - self.lr * g, ...)``),
    innermost first."""
    first, last = method.lineno, method.end_lineno or method.lineno
    found = [entry for entry in module.traced.values() if is_lambda_body(entry.node)
             and first <= entry.node.lineno <= last and entry.node.lineno != method.lineno]
    return sorted(found, key=lambda entry: (entry.node.lineno, entry.node.col_offset), reverse=True)


def _values_where(read: ast.AST, lambdas: list[TracedFunction], module: ModuleContext):
    """What is traced where ``read`` is, if it is in the body of one of ``lambdas``: the
    lambda's own parameters are known there, not in the method's analysis."""
    for entry in lambdas:
        body = entry.node.body[0]
        if any(node is read for node in ast.walk(body)):
            return entry.values(module.imports)
    return None


def _in_traced_arithmetic(read: ast.AST, method: ast.FunctionDef, values) -> bool:
    """Whether the read is an operand of arithmetic that meets a traced value (``self.lr * g``,
    ``self.lr * 2.0 * g``): the result is a tracer whatever the attribute holds, so passing the
    attribute in as a traced argument changes nothing Python sees."""
    parents = {id(child): node for node in ast.walk(method) for child in ast.iter_child_nodes(node)}
    node = read
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, ast.BinOp):
            if values.is_traced(parent.right if node is parent.left else parent.left):
                return True
        elif not isinstance(parent, ast.UnaryOp):
            return False
        node = parent


class _Renamed:
    """``self.step`` -> ``self._step_jit``."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.Attribute)
        return node.with_changes(attr=cst.Name(self.name))


class _PassedIn:
    """``def _step(self, w, g): ... self.lr ...`` -> ``def _step(self, w, g, *, lr): ... lr ...``
    and, after it, ``def step(self, w, g): return self._step_jit(w, g, lr=self.lr)``."""

    def __init__(self, receiver: str, parameters: dict[str, str], name: str, jitted: str):
        self.receiver, self.parameters, self.name, self.jitted = receiver, parameters, name, jitted

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        from jitfix.rules.transformers import AttributeReads

        assert isinstance(node, cst.FunctionDef)
        params = node.params
        star = params.star_arg if isinstance(params.star_arg, cst.ParamStar) else cst.ParamStar()
        extra = [cst.Param(name=cst.Name(name)) for name in self.parameters.values()]
        body = node.body.visit(AttributeReads({(self.receiver, attribute): parameter
                                                for attribute, parameter in self.parameters.items()}))
        method = node.with_changes(params=params.with_changes(star_arg=star, kwonly_params=[*params.kwonly_params,
                                                                                            *extra]),
                                   body=body)
        forwarded = [param.name.value for param in [*params.posonly_params, *params.params][1:]]
        keywords = [f"{param.name.value}={param.name.value}" for param in params.kwonly_params]
        keywords += [f"{parameter}={self.receiver}.{attribute}" for attribute, parameter in self.parameters.items()]
        call = f"{self.receiver}.{self.jitted}({', '.join([*forwarded, *keywords])})"
        wrapper = cst.parse_statement(f"def {self.name}({code(params)}):\n    return {call}\n")
        wrapper = wrapper.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return cst.FlattenSentinel([method, wrapper])  # type: ignore[return-value]
