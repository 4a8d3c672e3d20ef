"""Host work in a jitted function -- a draw from Python's or NumPy's generator, an object or
a global that advances its own state (``keys.next_key()``) -- that reads nothing the function
computes: evaluated at each call and passed in.

Under ``jax.jit`` such a call runs once, while tracing, and its result is baked into the
compiled function: every call reuses the same "random" numbers, the key sequence advances
once. Eagerly it runs at every call, with the values it has then. The faithful form evaluates
it where the eager code would, at each call, outside the trace: the jitted body moves to
``_name`` and takes the result as a keyword-only parameter, and a def with the old name and
parameters evaluates the call and passes it (``threaded_state`` makes the split)::

    @jit                                              @jit
    def noisy_step(params, grads):                    def _noisy_step(params, grads, *, next_key):
        noise = normal(keys.next_key(), params.shape)     noise = normal(next_key, params.shape)
        return params - 0.1 * grads + noise     ->        return params - 0.1 * grads + noise

                                                      def noisy_step(params, grads):
                                                          return _noisy_step(params, grads,
                                                                             next_key=keys.next_key())

Made only where the call is certain to run exactly once per call (a statement of the
function's own body, not in a branch, loop, comprehension or lambda), reads only module
names (a draw also the function's parameters it never rebinds: a def or method given them
may be the model itself, which must stay compiled), and certainly gives back what jit takes
(numbers or arrays made by JAX, NumPy or a host generator).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jitfix.analysis.blocks import assigned_names, local_names, own_nodes, statement_holding, walk_body
from jitfix.analysis.catalogue import ARRAY, ONE_ARRAY, function_category, numpy_member
from jitfix.analysis.traced_function import TracedFunction
from jitfix.naming import unique_name
from jitfix.analysis.summaries import ModuleProgram
from jitfix.rules.base import ModuleContext, Source
from jitfix.rules.threaded_state import (State, Threading, decorated_with_its_jit, jit_attributes_used,
                                         jitted_by_assignment, module_instance_class, named, names_in)

# Python's draws that are floats, which jit takes as it takes the float (``random.choice`` may
# give anything, and an int from ``randint`` or ``getrandbits`` may not fit the int32 jit makes
# of it: those are not passed in themselves).
NUMBER_DRAWS = frozenset({"random.random", "random.uniform", "random.gauss", "random.normalvariate",
                          "random.lognormvariate", "random.expovariate", "random.betavariate", "random.gammavariate",
                          "random.triangular"})
# NumPy's that may give back what jit cannot take: None, or the items of a list of anything.
NOT_NUMBERS = frozenset({"numpy.random.shuffle", "numpy.random.seed", "numpy.random.choice",
                         "numpy.random.permutation", "numpy.random.get_state", "numpy.random.set_state"})


@dataclass(frozen=True)
class HostCall:
    """A call to hoist out of the trace, and what it changes on the host (said in the finding)."""

    call: ast.Call
    effect: str


def host_calls(module: ModuleContext, traced: TracedFunction) -> list[HostCall]:
    """The calls of a jitted function's own body that do host work and can be evaluated at each
    call instead: each runs once per call, reads nothing the function computes, and gives back
    what jit takes."""
    function = traced.node
    if not isinstance(function, ast.FunctionDef) or not traced.staged \
            or not (decorated_with_its_jit(traced) or jitted_by_assignment(module, traced) is not None):
        return []
    if function not in module.tree.body and not _static_self_method(module, traced):
        return []
    found: list[HostCall] = []
    texts: list[str] = []
    unsure = _inside_nested_expressions(function)
    rebound = assigned_names(function.body)
    locals_ = local_names(function)
    parameters = {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)}
    for node in walk_body(function):
        if not isinstance(node, ast.Call) or id(node) in unsure:
            continue
        statement = statement_holding(function, node)
        if statement not in function.body or isinstance(statement, ast.Expr) and statement.value is node:
            continue  # in a branch or loop (may run other than once), or a value nobody uses
        # A draw may take the call's arguments (``np.random.normal(x)``: cheap host work); a
        # def or method given them may be the model itself, which must stay compiled.
        draw = (module.imports.resolve(node.func) or "").startswith(("random.", "numpy.random."))
        if not _reads_only_fixed_names(node, locals_, parameters - rebound if draw else set()):
            continue
        effect = _host_effect(module, node, frozenset())
        if effect is None or not _gives_back_values(module, node, frozenset()):
            continue
        found.append(HostCall(node, effect))
        texts.append(ast.unparse(node))
    if not found or jit_attributes_used(module, function):
        return []
    return [host for host in found if texts.count(ast.unparse(host.call)) == 1]


def hoisting(module: ModuleContext, traced: TracedFunction, hosts: list[HostCall]) -> Threading:
    """The split that passes each host call's result in (the call spelled as the user wrote it)."""
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    taken = names_in(function) | {node.id for node in ast.walk(module.tree) if isinstance(node, ast.Name)}
    state = []
    for host in hosts:
        called = host.call.func
        stem = called.attr if isinstance(called, ast.Attribute) else called.id if isinstance(called, ast.Name) \
            else "value"
        local = stem if stem not in taken else unique_name(f"{stem}_value", taken)
        taken.add(local)
        state.append(State(module.segment(host.call), local, passed_in=True, returned=False, hoisted=True))
    self_name = function.args.args[0].arg if _static_self_method(module, traced) else None
    return named(module, traced, Threading(function, tuple(state), self_name, "", returns_value=True))


def _static_self_method(module: ModuleContext, traced: TracedFunction) -> bool:
    function = traced.node
    return isinstance(module.traced.parents.get(function), ast.ClassDef) and bool(function.args.args) \
        and function.args.args[0].arg in traced.static_params


def _inside_nested_expressions(function: ast.FunctionDef) -> set[int]:
    """Nodes inside a lambda or comprehension of the body: they may run other than once."""
    inside: set[int] = set()
    for node in walk_body(function):
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp | ast.IfExp
                      | ast.BoolOp):
            inside |= {id(child) for child in ast.walk(node) if child is not node}
    return inside


def _reads_only_fixed_names(call: ast.Call, locals_: set[str], parameters: set[str]) -> bool:
    """Every name the call reads is the module's (or a builtin), or a parameter the function
    never rebinds: what the call sees is the same before the call as at its place."""
    return all(node.id not in locals_ or node.id in parameters
               for node in ast.walk(call) if isinstance(node, ast.Name))


def _host_effect(module: Source, call: ast.Call, seen: frozenset[ast.AST],
                 defaults: dict[str, str] | None = None) -> str | None:
    """What the call changes on the host each time it runs (None: nothing jitfix sees): a draw
    from Python's or NumPy's generator, an object of the module whose method sets its
    attributes, or a def of the module, or of another module of the run it imports, that does
    one of these or rebinds a global. (A clock read is not passed in: a float32 of
    ``time.time()`` is off by minutes.)"""
    name = module.imports.resolve(call.func) or ""
    if name.startswith(("random.", "numpy.random.")):
        return f"`{name}` draws on the host"
    receiver, method = _receiver_and_method(call, defaults or {})
    if receiver is not None:
        klass = module_instance_class(module, receiver)
        definition = _method(klass, method) if klass is not None else None
        if definition is not None and _sets_own_attributes(definition):
            return f"`{receiver}` advances its own state (`{klass.name}.{method}`, line {definition.lineno})"  # type: ignore[union-attr]
    home, definition = _def_called(module, call)
    if definition is None or definition in seen:
        return None
    if any(isinstance(node, ast.Global) and set(node.names) & assigned_names(definition.body)
           for node in own_nodes(definition.body)):
        return f"`{definition.name}` rebinds a global"
    inner_defaults = _default_names(definition)
    for node in own_nodes(definition.body):
        if isinstance(node, ast.Call):
            effect = _host_effect(home, node, seen | {definition}, inner_defaults)
            if effect is not None:
                return f"`{definition.name}` calls what does: {effect}" if "calls what does" not in effect else effect
    return None


def _receiver_and_method(call: ast.Call, defaults: dict[str, str]) -> tuple[str | None, str]:
    """``keys.next_key()`` -> (``keys``, ``next_key``); ``generator()`` -> (``generator``,
    ``__call__``), a parameter read as the module name it defaults to."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return defaults.get(func.value.id, func.value.id), func.attr
    if isinstance(func, ast.Name):
        return defaults.get(func.id, func.id), "__call__"
    return None, ""


def _default_names(definition: ast.FunctionDef) -> dict[str, str]:
    """The parameters of a def whose default is a module name (``generator=DEFAULT_GENERATOR``)."""
    arguments = definition.args
    positional = [*arguments.posonlyargs, *arguments.args]
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    pairs += [(argument, default) for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
              if default is not None]
    return {argument.arg: default.id for argument, default in pairs if isinstance(default, ast.Name)}


def _method(klass: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((node for node in klass.body if isinstance(node, ast.FunctionDef) and node.name == name), None)


def _sets_own_attributes(method: ast.FunctionDef) -> bool:
    if not method.args.args:
        return False
    me = method.args.args[0].arg
    return any(isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
               and node.value.id == me for node in own_nodes(method.body))


def _def_called(module: Source, call: ast.Call) -> tuple[Source, ast.FunctionDef | None]:
    """The def a call of a plain name calls, with the module that holds it: this module's, or
    one another module of the run defines and this one imports (``rng.next_key()``)."""
    local = _module_def(module, call)
    if local is not None:
        return module, local
    program = module.traced.program if isinstance(module, ModuleContext) else module
    found = program.imported_def(call.func) if isinstance(program, ModuleProgram) else None
    if found is None or not isinstance(found[1], ast.FunctionDef):
        return module, None
    return found[0], found[1]


def _module_def(module: Source, call: ast.Call) -> ast.FunctionDef | None:
    """The module's def a call of a plain name calls (the name bound once, by the def)."""
    if not isinstance(call.func, ast.Name):
        return None
    name = call.func.id
    bindings = [statement for statement in module.tree.body
                if getattr(statement, "name", None) == name or name in assigned_names([statement])]
    return bindings[0] if len(bindings) == 1 and isinstance(bindings[0], ast.FunctionDef) else None


def _gives_back_values(module: Source, call: ast.Call, seen: frozenset[ast.AST],
                       defaults: dict[str, str] | None = None) -> bool:
    """Whether the call certainly gives back numbers or arrays (what jit takes): a JAX or
    NumPy function's array, a host generator's number, or a def or method of the module every
    ``return`` of which gives back such a value (directly, through a name it binds from one,
    or arithmetic of those)."""
    name = module.imports.resolve(call.func)
    if function_category(name) in (ARRAY, ONE_ARRAY) or name in NUMBER_DRAWS:
        return True
    if numpy_member(name) is not None:
        return name not in NOT_NUMBERS
    receiver, method = _receiver_and_method(call, defaults or {})
    definition: ast.FunctionDef | None = None
    home = module
    if receiver is not None and (klass := module_instance_class(module, receiver)) is not None:
        definition = _method(klass, method)
    if definition is None:
        home, definition = _def_called(module, call)
    if definition is None or definition in seen:
        return False
    returns = [node for node in own_nodes(definition.body) if isinstance(node, ast.Return)]
    values = _bound_values(definition)
    inner_defaults = _default_names(definition)
    return bool(returns) and all(
        node.value is not None and _value_expression(home, node.value, values, seen | {definition}, inner_defaults)
        for node in returns)


def _bound_values(definition: ast.FunctionDef) -> dict[str, list[ast.expr]]:
    """What each name of a def is bound to (a call's value stands for every name of a tuple
    target it is unpacked to: ``key, subkey = split(key)``)."""
    values: dict[str, list[ast.expr]] = {}
    for node in own_nodes(definition.body):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Name):
                        values.setdefault(part.id, []).append(node.value)
    return values


def _value_expression(module: Source, node: ast.expr, values: dict[str, list[ast.expr]],
                      seen: frozenset[ast.AST], defaults: dict[str, str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float | complex) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return any(_value_expression(module, side, values, seen, defaults) for side in (node.left, node.right))
    if isinstance(node, ast.UnaryOp):
        return _value_expression(module, node.operand, values, seen, defaults)
    if isinstance(node, ast.Call):
        return _gives_back_values(module, node, seen, defaults)
    if isinstance(node, ast.Name) and node.id in values:
        return all(_value_expression(module, value, values, seen, defaults) for value in values[node.id])
    return False
