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

A draw is a call of Python's or NumPy's module-level generator (``np.random.normal()``) or
a method of a generator object (``rng.integers(0, n)``): a module-level name bound once to
``np.random.default_rng(...)`` (``RandomState``, ``Generator``, ``random.Random``), or a
static parameter every call of the module passes one (scipy#24412).

Made only where the call is certain to run exactly once per call (a statement of the
function's own body, not in a branch, loop, comprehension or lambda), reads only module
names (a draw also the function's parameters it never rebinds: a def or method given them
may be the model itself, which must stay compiled, and the locals the body binds once,
before it, to sizes of those: ``n = data.shape[0]``, which the def with the old name binds
too), and certainly gives back what jit takes (numbers or arrays made by JAX, NumPy or a
host generator).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable

from jitfix.analysis.blocks import assigned_names, local_names, own_nodes, statement_holding, walk_body
from jitfix.analysis.catalogue import ARRAY, HOST_GENERATORS, ONE_ARRAY, function_category, numpy_member
from jitfix.analysis.passed_values import PassedValues
from jitfix.analysis.summaries import ModuleProgram
from jitfix.analysis.traced_function import TracedFunction
from jitfix.analysis.tracer_uses import used_as_traced
from jitfix.analysis.values import parameter_names
from jitfix.naming import unique_name
from jitfix.rules.base import CacheKey, ModuleContext, Source
from jitfix.rules.function_context import arrays_of
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


# The methods of a NumPy generator that give back numbers or arrays (not `choice`, `permutation`,
# `shuffle`: of a list of anything; nor `bytes`, `spawn` or the state's).
NUMPY_GENERATOR_DRAWS = frozenset({
    "integers", "random", "random_sample", "rand", "randn", "randint", "normal", "standard_normal", "uniform",
    "exponential", "standard_exponential", "poisson", "binomial", "beta", "gamma", "standard_gamma", "lognormal",
    "laplace", "logistic", "gumbel", "chisquare", "multivariate_normal", "dirichlet", "multinomial", "geometric",
    "negative_binomial", "rayleigh", "weibull", "pareto", "power", "vonmises", "wald", "triangular", "standard_t",
    "standard_cauchy", "f", "noncentral_chisquare", "noncentral_f", "hypergeometric", "logseries", "zipf"})
# Their draws that may give back what jit cannot take (the items of a list of anything; an int
# beyond int32): reported, not passed in.
GENERATOR_DRAWS_OF_ANYTHING = {"numpy": frozenset({"choice", "permutation", "permuted", "shuffle", "bytes"}),
                               "random": frozenset({"choice", "choices", "sample", "shuffle", "randint", "randrange",
                                                    "getrandbits", "randbytes"})}
GENERATOR_PASSED: CacheKey[PassedValues] = CacheKey("what the module's calls pass, generators known")


@dataclass(frozen=True)
class HostCall:
    """A call to hoist out of the trace, what it changes on the host (said in the finding), and
    the statements of the body binding what it reads there (``n = data.shape[0]``), which the
    def with the old name makes too."""

    call: ast.Call
    effect: str
    prelude: tuple[ast.Assign, ...] = ()


def generator_draw(module: ModuleContext, traced: TracedFunction, call: ast.AST) -> str | None:
    """Whether ``call`` (in ``traced``) is a method of a host generator object that draws:
    ``rng.integers(0, n)`` with ``rng`` a module-level name bound once to
    ``np.random.default_rng(...)``, or a static parameter every call of the module passes one.
    The effect, said in a finding; None otherwise."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)):
        return None
    receiver, method = call.func.value.id, call.func.attr
    if receiver in parameter_names(traced.node) and receiver not in traced.static_params:
        return None  # a traced argument holds arrays: jit takes no generator there
    kind = _generator_kind(module, traced.node, receiver)
    if kind is None or method not in GENERATOR_NUMBER_DRAWS[kind] | GENERATOR_DRAWS_OF_ANYTHING[kind]:
        return None
    return f"`{receiver}.{method}` draws from {'a NumPy' if kind == 'numpy' else 'a Python'} generator on the host"


def draws_numbers(call: ast.Call) -> bool:
    """Whether a generator's draw (``generator_draw``) certainly gives back numbers or arrays."""
    method = call.func.attr  # type: ignore[attr-defined]
    return method in NUMPY_GENERATOR_DRAWS | _PYTHON_DRAW_METHODS \
        and method not in GENERATOR_DRAWS_OF_ANYTHING["numpy"] | GENERATOR_DRAWS_OF_ANYTHING["random"]


_PYTHON_DRAW_METHODS = frozenset(name.removeprefix("random.") for name in NUMBER_DRAWS)
GENERATOR_NUMBER_DRAWS = {"numpy": NUMPY_GENERATOR_DRAWS, "random": _PYTHON_DRAW_METHODS}


def _generator_kind(module: ModuleContext, function: ast.AST, name: str) -> str | None:
    """``numpy`` or ``random`` where every value ``name`` holds in ``function`` is a generator
    object of that library (a module-level name bound once in all, a parameter every call
    passes one); None otherwise."""
    program = module.traced.program
    if program is None:
        return None
    scopes = program.scopes
    home = scopes.binding_scope(function, name)
    if home is scopes.tree and scopes.name_stores().get(name) != 1:
        return None  # bound again somewhere (`global rng` in a function)
    passed = module.cached(GENERATOR_PASSED, lambda: PassedValues(
        scopes, library_object=lambda made: module.imports.resolve(made.func) in HOST_GENERATORS))
    found = passed.of(ast.Name(id=name, ctx=ast.Load(), lineno=getattr(function, "lineno", 1), col_offset=0), function)
    if not found or any(value.library_object is None or not isinstance(value.node, ast.Call) for value in found):
        return None
    kinds = {HOST_GENERATORS.get(module.imports.resolve(value.node.func) or "")  # type: ignore[attr-defined]
             for value in found}
    return kinds.pop() if len(kinds) == 1 and None not in kinds else None


HOST_PLANS: CacheKey[dict[int, tuple[list[HostCall], dict[int, str]]]] = CacheKey("host calls passed in, by function")


def host_calls(module: ModuleContext, traced: TracedFunction) -> list[HostCall]:
    """The calls of a jitted function's own body that do host work and can be evaluated at each
    call instead: each runs once per call, reads nothing the function computes, and gives back
    what jit takes."""
    return _planned(module, traced)[0]


def why_draw_stays(module: ModuleContext, traced: TracedFunction, call: ast.Call) -> str | None:
    """Why a draw of the function's body is not evaluated at each call and passed in (None:
    it is, or it was not considered: the function is not jitted so)."""
    return _planned(module, traced)[1].get(id(call))


def _planned(module: ModuleContext, traced: TracedFunction) -> tuple[list[HostCall], dict[int, str]]:
    plans = module.cached(HOST_PLANS, dict)
    if id(traced.node) not in plans:
        plans[id(traced.node)] = _plan(module, traced)
    return plans[id(traced.node)]


def _plan(module: ModuleContext, traced: TracedFunction) -> tuple[list[HostCall], dict[int, str]]:
    function = traced.node
    if not isinstance(function, ast.FunctionDef) or not traced.staged \
            or not (decorated_with_its_jit(traced) or jitted_by_assignment(module, traced) is not None):
        return [], {}
    if function not in module.tree.body and not _static_self_method(module, traced):
        return [], {}
    found: list[HostCall] = []
    texts: list[str] = []
    why: dict[int, str] = {}  # the draws left in the body, and why
    unsure = _inside_nested_expressions(function)
    rebound = assigned_names(function.body)
    locals_ = local_names(function)
    parameters = {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)}
    draws_before: list[ast.Call] = []  # the host draws met so far, in the body's order
    for node in walk_body(function):
        if not isinstance(node, ast.Call):
            continue
        drawn = generator_draw(module, traced, node)
        draw = drawn is not None or (module.imports.resolve(node.func) or "").startswith(("random.", "numpy.random."))
        earlier = list(draws_before)
        if draw:
            draws_before.append(node)
        reason = _left_in_body(module, traced, node, earlier, found, unsure, draw,
                               (locals_, parameters, rebound))
        if isinstance(reason, str):
            if draw:
                why[id(node)] = reason
            continue
        prelude = reason
        effect = drawn or _host_effect(module, node, frozenset())
        if effect is None or not (draws_numbers(node) if drawn else _gives_back_values(module, node, frozenset())):
            if draw:
                why[id(node)] = "it may give back what jit cannot take in (a list's item, an int beyond int32)"
            continue
        found.append(HostCall(node, effect, prelude))
        texts.append(ast.unparse(node))
    if not found or jit_attributes_used(module, function):
        return [], why
    kept = [host for host in found if texts.count(ast.unparse(host.call)) == 1]
    why.update((id(host.call), "another call of the body is spelled the same") for host in found if host not in kept)
    return kept, why


def _left_in_body(module: ModuleContext, traced: TracedFunction, node: ast.Call, earlier: list[ast.Call],
                  found: list[HostCall], unsure: set[int], draw: bool,
                  names: tuple[set[str], set[str], set[str]]) -> str | tuple[ast.Assign, ...]:
    """Why the call stays in the body (a reason), or the statements binding the sizes it reads
    (it may be passed in, if it is host work)."""
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    locals_, parameters, rebound = names
    statement = statement_holding(function, node)
    if id(node) in unsure or statement not in function.body:
        return "it may run other than once a call (in a branch, a loop, a comprehension or a lambda)"
    if isinstance(statement, ast.Expr) and statement.value is node:
        return "it is a statement of its own (a seed, or a draw whose value is not used)"
    if _may_leave_before(function, statement):
        return "a `return` or `raise` before it: some calls never reach it"
    # A draw may take the call's arguments (``np.random.normal(x)``: cheap host work); a
    # def or method given them may be the model itself, which must stay compiled.
    prelude = _prelude(function, node, statement, locals_, parameters, rebound) if draw else ()
    if prelude is None or not _reads_only_fixed_names(
            node, locals_, (parameters - rebound) | _bound_names(prelude) if draw else set()):
        return "it reads what the function computes"
    if not draw:
        return prelude
    hoisted = [host.call for host in found]
    if any(earlier_draw not in hoisted for earlier_draw in earlier):
        return "a draw or seed the body keeps comes before it, and eagerly runs first"
    if not _fits_int32(node, _bound_names(prelude)):
        return "its integers may not fit the int32 jit makes of a Python int"
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    integers = method in _INTEGER_DRAWS or (module.imports.resolve(node.func) or "") in ("numpy.random.randint",)
    if not used_as_traced(function, [node], integers, module.imports, traced.values(module.imports),
                          arrays_of(module, traced)):
        return "Python needs its value (a boolean mask, a size, a test), and passed in it would be a tracer"
    return prelude


def hoisting(module: ModuleContext, traced: TracedFunction, hosts: list[HostCall]) -> Threading:
    """The split that passes each host call's result in (the call spelled as the user wrote it)."""
    function = traced.node
    assert isinstance(function, ast.FunctionDef)
    taken = names_in(function) | {node.id for node in ast.walk(module.tree) if isinstance(node, ast.Name)}
    state = []
    absorbed = []
    for host in hosts:
        called = host.call.func
        stem = called.attr if isinstance(called, ast.Attribute) else called.id if isinstance(called, ast.Name) \
            else "value"
        local = stem if stem not in taken else unique_name(f"{stem}_value", taken)
        binding = _bound_whole(module, function, host.call)
        if binding is not None:  # `idx = rng.integers(...)`: `idx` is what is passed in
            local = binding.targets[0].id  # type: ignore[attr-defined]
            absorbed.append(binding)
        taken.add(local)
        state.append(State(module.segment(host.call), local, passed_in=True, returned=False, hoisted=True))
    self_name = function.args.args[0].arg if _static_self_method(module, traced) else None
    prelude = sorted({statement for host in hosts for statement in host.prelude}, key=lambda statement: statement.lineno)
    return named(module, traced, Threading(function, tuple(state), self_name, "", returns_value=True,
                                           prelude=tuple(prelude), absorbed=tuple(absorbed),
                                           prelude_source=tuple(_as_written(module, statement)
                                                                for statement in prelude)))


def _as_written(module: ModuleContext, statement: ast.stmt) -> str:
    """A one-line statement as the user wrote it, with the comment that ends its line."""
    line = module.text.splitlines()[statement.lineno - 1]
    if statement.end_lineno != statement.lineno or statement.end_col_offset is None:
        return ast.unparse(statement)
    rest = line[statement.end_col_offset:].strip()
    return module.segment(statement) + (f"  {rest}" if rest.startswith("#") else "")


def _bound_whole(module: ModuleContext, function: ast.FunctionDef, call: ast.Call) -> ast.Assign | None:
    """The statement ``name = call`` of the body, where it alone binds ``name`` (not a
    parameter) and has no comment of its own: the jitted body then takes ``name`` itself."""
    binding = next((statement for statement in function.body if isinstance(statement, ast.Assign)
                    and statement.value is call), None)
    if binding is None or len(binding.targets) != 1 or not isinstance(binding.targets[0], ast.Name):
        return None
    name = binding.targets[0].id
    if name in {argument.arg for argument in ast.walk(function.args) if isinstance(argument, ast.arg)} \
            or _single_binding(function, name) is not binding or _commented(module, binding):
        return None
    return binding


def _commented(module: ModuleContext, statement: ast.stmt) -> bool:
    """Whether a comment ends the statement's last line or stands on the line above it."""
    lines = module.text.splitlines()
    after = lines[(statement.end_lineno or statement.lineno) - 1][statement.end_col_offset or 0:]
    above = lines[statement.lineno - 2].strip() if statement.lineno >= 2 else ""
    return "#" in after or above.startswith("#")


def _static_self_method(module: ModuleContext, traced: TracedFunction) -> bool:
    function = traced.node
    return isinstance(module.traced.parents.get(function), ast.ClassDef) and bool(function.args.args) \
        and function.args.args[0].arg in traced.static_params


def _prelude(function: ast.FunctionDef, call: ast.Call, statement: ast.stmt, locals_: set[str],
             parameters: set[str], rebound: set[str]) -> tuple[ast.Assign, ...] | None:
    """The statements of the body, before ``statement``, that bind the locals ``call`` reads,
    each a name bound once in the function to a size of the parameters (never rebound), of
    module names and of such locals (``n = data.shape[0]``, ``m = 2 * n``): the def with the
    old name, which has the same parameters, binds them to the same values. None where a local
    is bound otherwise (or a parameter rebound)."""
    fixed = parameters - rebound
    needed = [node.id for node in ast.walk(call) if isinstance(node, ast.Name) and node.id in locals_
              and node.id not in fixed]
    bindings: dict[str, ast.Assign] = {}
    while needed:
        name = needed.pop()
        if name in bindings:
            continue
        binding = _single_binding(function, name) if name not in parameters else None
        if binding is None or function.body.index(binding) >= function.body.index(statement) \
                or not _a_size(binding.value) or _changed_before(function, binding):
            return None
        bindings[name] = binding
        needed += [node.id for node in ast.walk(binding.value) if isinstance(node, ast.Name)
                   and node.id in locals_ and node.id not in fixed]
    return tuple(sorted(set(bindings.values()), key=lambda binding: binding.lineno))


def _may_leave_before(function: ast.FunctionDef, statement: ast.stmt) -> bool:
    """Whether a ``return`` or ``raise`` of the body (not of a nested def) comes before ``statement``."""
    for earlier in function.body[:function.body.index(statement)]:
        stack: list[ast.AST] = [earlier]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Return | ast.Raise):
                return True
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                stack.extend(ast.iter_child_nodes(node))
    return False


# Draws of integers, and the arguments that bound them: passed into jit, an int is an int32.
_INTEGER_DRAWS = frozenset({"integers", "randint", "random_integers"})
# Draws of integers with no bound jit can keep (heavy tails): not passed in.
_UNBOUNDED_INTEGER_DRAWS = frozenset({"zipf", "geometric", "negative_binomial", "logseries", "poisson"})
_INT32 = 2 ** 31


def _fits_int32(call: ast.Call, sizes: set[str]) -> bool:
    """Whether the draw's numbers fit the int32 jit makes of an int: not an integer draw, or
    one whose bounds are int literals within int32 or sizes: the arrays' (``x.shape[0]``, the
    locals ``sizes`` bound to them), halved or summed with small literals. A name of another
    kind (a module constant, a static argument) may hold anything."""
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if method in _UNBOUNDED_INTEGER_DRAWS:
        return False
    if method not in _INTEGER_DRAWS:
        return True
    bounds = [*call.args[:2], *(keyword.value for keyword in call.keywords if keyword.arg in ("low", "high"))]
    for bound in bounds:
        constant = _constant_int(bound)
        if constant is not None:
            if abs(constant) >= _INT32:
                return False
            continue
        if not _a_size(bound) or any(isinstance(node, ast.Name) and node.id not in sizes for node in ast.walk(bound)
                                     if not _an_array_size_base(node, bound)):
            return False
        if any(isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) >= 2 ** 16
               for node in ast.walk(bound)):
            return False  # a size times a large literal
    return True


def _an_array_size_base(node: ast.AST, bound: ast.AST) -> bool:
    """A name whose ``.shape``/``.size``/``.ndim`` (or ``len``) the bound reads: its size is an array's."""
    for part in ast.walk(bound):
        if isinstance(part, ast.Attribute) and part.value is node and part.attr in _SIZE_ATTRIBUTES:
            return True
        if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "len" \
                and node in part.args:
            return True
    return False


def _constant_int(expr: ast.AST) -> int | None:
    """The value of integer arithmetic on literals (``2**32``, ``-5``), where small enough to compute."""
    if isinstance(expr, ast.Constant) and type(expr.value) is int:
        return expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        inner = _constant_int(expr.operand)
        return None if inner is None else -inner if isinstance(expr.op, ast.USub) else inner
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub | ast.Mult | ast.Pow | ast.LShift):
        left, right = _constant_int(expr.left), _constant_int(expr.right)
        if left is None or right is None or isinstance(expr.op, ast.Pow | ast.LShift) and not 0 <= right <= 128:
            return None
        operations: dict[type, Callable[[int, int], int]] = {
            ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.Pow: int.__pow__,
            ast.LShift: int.__lshift__}
        return operations[type(expr.op)](left, right)
    return None


def _changed_before(function: ast.FunctionDef, binding: ast.Assign) -> bool:
    """Whether a statement before ``binding`` may change in place what it reads (``xs.append(...)``
    before ``n = len(xs)``, a store into an item or attribute): the def with the old name, which
    binds it first, would read it unchanged."""
    read = {node.id for node in ast.walk(binding.value) if isinstance(node, ast.Name)}
    for earlier in function.body[:function.body.index(binding)]:
        for node in ast.walk(earlier):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in read:
                return True
            if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del) \
                    and isinstance(node.value, ast.Name) and node.value.id in read:
                return True
    return False


def _single_binding(function: ast.FunctionDef, name: str) -> ast.Assign | None:
    """The statement of the function's own body that alone binds ``name``, as ``name = value``."""
    stores = [node for node in walk_body(function) if isinstance(node, ast.Name) and node.id == name
              and not isinstance(node.ctx, ast.Load)]
    found = [statement for statement in function.body if isinstance(statement, ast.Assign)
             and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
             and statement.targets[0].id == name]
    return found[0] if len(stores) == 1 and len(found) == 1 else None


# What a size may be made of: the arrays' static attributes, `len`, and Python arithmetic.
_SIZE_ATTRIBUTES = frozenset({"shape", "ndim", "size"})
_SIZE_CALLS = frozenset({"len", "int", "min", "max", "abs"})


def _a_size(value: ast.AST) -> bool:
    """An expression Python computes from sizes alone, the same inside the trace as outside:
    names, literals, ``x.shape[0]``, ``len(xs)``, tuples and arithmetic of those."""
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute) and node.attr not in _SIZE_ATTRIBUTES:
            return False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _SIZE_CALLS):
            return False
        if isinstance(node, ast.Lambda | ast.NamedExpr | ast.Await | ast.Yield | ast.YieldFrom | ast.ListComp
                      | ast.DictComp | ast.SetComp | ast.GeneratorExp | ast.Starred):
            return False
    return True


def _bound_names(statements: tuple[ast.Assign, ...]) -> set[str]:
    return {statement.targets[0].id for statement in statements}  # type: ignore[attr-defined]


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
