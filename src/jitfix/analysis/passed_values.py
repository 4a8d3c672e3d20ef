"""What a call certainly passes: the Python objects (functions, classes, instances of the
module's classes) an argument holds, followed through names bound in one place and through
the calls of the function whose parameter it is.

A jitted function may only be given arrays, Python scalars and pytrees of them in its traced
positions, and only hashable values in its static ones: the rules that say which parameter
must change (JF507, JF508) need to know what the callers hand over, not just that it is
"not traced".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterable

from jitfix.analysis.blocks import kept_on_node, own_nodes
from jitfix.analysis.scopes import Scopes
from jitfix.analysis.values import parameter_defaults, positional_names

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# What may skip the code it holds: a call inside one may not run on the first pass.
_CONDITIONAL = (ast.If, ast.While, ast.Try, ast.Match, ast.IfExp, ast.BoolOp, ast.comprehension, ast.FunctionDef,
                ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

# How many calls deep a parameter is followed to the values its callers give.
_DEPTH = 3


@dataclass(frozen=True)
class Passed:
    """One object an argument holds: a def (``function``), a class (``klass`` with
    ``instance`` False), or an instance of the module's class ``klass``; ``made_in`` is the
    scope that makes it (the module, or the function whose every call makes a new one)."""

    node: ast.AST  # where the value is made: the def, the class, the lambda or the constructor call
    made_in: ast.AST
    function: FunctionNode | ast.Lambda | None = None
    klass: ast.ClassDef | None = None
    instance: bool = False
    library: str | None = None  # a function of JAX's (`jax.nn.relu`), as the code spells it
    # A library's object holding leaves jit cannot trace (`eqx.nn.MLP(...)`, whose activation
    # is a function), as the code spells its class.
    library_object: str | None = None

    def describe(self) -> str:
        if self.library is not None:
            return f"the function `{self.library}`"
        if self.library_object is not None:
            return f"an `{self.library_object}`"
        if self.function is not None:
            return "a lambda" if isinstance(self.function, ast.Lambda) else f"the function `{self.function.name}`"
        assert self.klass is not None
        return f"an instance of `{self.klass.name}`" if self.instance else f"the class `{self.klass.name}`"


class PassedValues:
    """Resolves arguments of a module's calls to the objects they hold (see ``of``)."""

    def __init__(self, scopes: Scopes, library_function: Callable[[ast.AST], bool] = lambda node: False,
                 library_object: Callable[[ast.Call], bool] = lambda node: False):
        self.scopes = scopes
        # Whether a name or attribute is a function of a library the module imports (`jnp.tanh`).
        self.library_function = library_function
        # Whether a call makes a library's object with leaves jit cannot trace (`eqx.nn.MLP(...)`).
        self.library_object = library_object
        self._called_only: dict[str, bool] = {}

    def of(self, expr: ast.AST, scope: ast.AST, depth: int = 0) -> list[Passed] | None:
        """Every object ``expr`` (code in ``scope``) may hold, or None when something else
        may be there (an array, a value made elsewhere, a name bound more than one way)."""
        if isinstance(expr, ast.Lambda):
            return [Passed(expr, scope, function=expr)]
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) \
                and (klass := self._class_named(scope, expr.func.id)) is not None:
            return [Passed(expr, scope, klass=klass, instance=True)]
        if isinstance(expr, ast.Call) and self.library_object(expr):
            return [Passed(expr, scope, instance=True, library_object=ast.unparse(expr.func))]
        if isinstance(expr, ast.Call):
            return None
        if isinstance(expr, ast.Attribute) and self.library_function(expr):
            return [Passed(expr, self.scopes.tree, library=ast.unparse(expr))]
        if isinstance(expr, ast.Name):
            if self.scopes.binding_scope(scope, expr.id) is None and self.library_function(expr):
                return [Passed(expr, self.scopes.tree, library=expr.id)]  # `from jax.nn import relu`
            return self._name(expr.id, scope, expr.lineno, depth)
        return None

    def _name(self, name: str, scope: ast.AST, line: int, depth: int) -> list[Passed] | None:
        home = self.scopes.binding_scope(scope, name)
        if home is None:
            return None
        function = self.scopes.defs.get(home, {}).get(name)
        klass = self.scopes.classes.get(home, {}).get(name)
        bindings = list(_bindings(home, name))
        if function is not None or klass is not None:
            if (function is not None) + (klass is not None) + len(bindings) != 1 or (home, name) in self.scopes.redefined:
                return None
            if function is not None:
                return [Passed(function, home, function=function)]
            return [Passed(klass, home, klass=klass)]  # type: ignore[arg-type]
        if isinstance(home, ast.FunctionDef | ast.AsyncFunctionDef) and name in positional_names(home) + [
                arg.arg for arg in home.args.kwonlyargs]:
            return self._parameter(home, name, depth) if not bindings else None
        if len(bindings) != 1:
            return None
        found: list[Passed] = []
        for value in bindings[0]:
            objects = self.of(value, home, depth)
            if objects is None:
                return None
            found += objects
        return found or None

    def on_first_call(self, expr: ast.AST, scope: ast.AST, call: ast.Call) -> list[Passed] | None:
        """What ``expr``, a parameter of ``scope`` read by ``call``, holds at least the first
        time ``call`` runs: what every call of ``scope`` passes, where every other binding of
        the name comes after ``call`` in the source (a training loop's ``loss, model =
        step(model, ...)``: the first pass reads the parameter) and nothing but a loop holds
        the call (an ``if`` may skip it on that pass); None otherwise."""
        if not (isinstance(expr, ast.Name) and isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
                and expr.id in positional_names(scope) + [arg.arg for arg in scope.args.kwonlyargs]
                and self.scopes.binding_scope(scope, expr.id) is scope):
            return None
        parents = {id(child): node for node in ast.walk(scope) for child in ast.iter_child_nodes(node)}
        node: ast.AST | None = parents.get(id(call))
        while node is not None and node is not scope:  # the call runs on the first pass of what holds it
            if isinstance(node, _CONDITIONAL):
                return None
            node = parents.get(id(node))
        assigned_by_call = {id(node) for statement in own_nodes(scope.body)
                            if isinstance(statement, ast.Assign) and any(part is call for part in ast.walk(statement.value))
                            for target in statement.targets for node in ast.walk(target)}
        stores = [node for node in own_nodes(scope.body) if isinstance(node, ast.Name) and node.id == expr.id
                  and not isinstance(node.ctx, ast.Load) and id(node) not in assigned_by_call]
        if any((node.lineno, node.col_offset) < (call.lineno, call.col_offset) for node in stores):
            return None
        return self._parameter(scope, expr.id, 0)

    def _parameter(self, function: FunctionNode, name: str, depth: int) -> list[Passed] | None:
        """What every call of ``function`` in the module passes for its parameter ``name`` (its
        default where a call leaves it out); None when the function is used other than by
        calls of its name, or a call passes ``*args``/``**kwargs``."""
        if depth >= _DEPTH:
            return None
        owner = self.scopes.parent.get(function, self.scopes.tree)
        if isinstance(owner, ast.ClassDef) or not self._only_called(function):
            return None
        calls = [(call, scope) for call, scope in self.scopes.calls_to(function.name)
                 if isinstance(call.func, ast.Name) and self.scopes.binding_scope(scope, function.name) is owner]
        if not calls:
            return None
        found: list[Passed] = []
        for call, scope in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            argument = argument_for(call, function, name)
            if argument is None:
                argument = parameter_defaults(function).get(name)
                scope = owner
            objects = self.of(argument, scope, depth + 1) if argument is not None else None
            if objects is None:
                return None
            found += objects
        return found

    def _only_called(self, function: FunctionNode) -> bool:
        """Whether every read of the def's name in the module is the callee of a call."""
        if function.name not in self._called_only:
            self._called_only[function.name] = self._read_only_as_callee(function.name)
        return self._called_only[function.name]

    def _read_only_as_callee(self, name: str) -> bool:
        called = {id(call.func) for call, _ in self.scopes.calls_to(name)}
        return all(id(node) in called for node in ast.walk(self.scopes.tree) if isinstance(node, ast.Name)
                   and node.id == name and isinstance(node.ctx, ast.Load))

    def _class_named(self, scope: ast.AST, name: str) -> ast.ClassDef | None:
        home = self.scopes.binding_scope(scope, name)
        if home is None:
            return None
        klass = self.scopes.classes.get(home, {}).get(name)
        if klass is None or list(_bindings(home, name)) or name in self.scopes.defs.get(home, {}):
            return None
        return klass


def argument_for(call: ast.Call, function: FunctionNode, name: str, skipped: int = 0) -> ast.expr | None:
    """The argument ``call`` passes for ``function``'s parameter ``name`` (``skipped``
    leading parameters the call does not pass: a bound method's ``self``); None where it
    passes none, or may through ``*args``/``**kwargs``."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) or any(k.arg is None for k in call.keywords):
        return None
    positional = positional_names(function)[skipped:]
    if name in positional and positional.index(name) < len(call.args):
        return call.args[positional.index(name)]
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _bindings(scope: ast.AST, name: str) -> list[list[ast.expr]]:
    """Each statement of ``scope`` (not of defs or classes in it) that binds ``name``, as the
    values it may bind: ``[v]`` for ``name = v``, the elements of a literal for ``for name in
    (a, b)``, and ``[]`` (unknown) for any other binding. Every name's are found in one pass
    over the scope, kept on it: a module is asked about many names."""
    return kept_on_node(scope, "bindings_by_name", lambda: _bindings_by_name(scope)).get(name, [])


def _bindings_by_name(scope: ast.AST) -> dict[str, list[list[ast.expr]]]:
    found: dict[str, list[list[ast.expr]]] = {}

    def bind(names: Iterable[str], values: list[ast.expr]) -> None:
        for name in dict.fromkeys(names):  # a statement binds a name once
            found.setdefault(name, []).append(values)

    body = scope.body if isinstance(scope, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef) else []
    for node in own_nodes(body):  # (a comprehension's variables are its own: not bindings)
        if isinstance(node, ast.Assign):
            plain = {target.id for target in node.targets if isinstance(target, ast.Name)}
            bind(plain, [node.value])
            bind((name for target in node.targets for name in _stored(target) if name not in plain), [])
        elif isinstance(node, ast.For | ast.AsyncFor):
            if isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Tuple | ast.List) \
                    and not any(isinstance(element, ast.Starred) for element in node.iter.elts):
                bind([node.target.id], list(node.iter.elts))
            else:
                bind(_stored(node.target), [])
        elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr):
            known = isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None \
                and isinstance(node.target, ast.Name)
            bind(_stored(node.target), [node.value] if known else [])  # type: ignore[list-item]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bind((alias.asname or alias.name.partition(".")[0] for alias in node.names), [])
        elif isinstance(node, ast.With | ast.AsyncWith | ast.ExceptHandler | ast.Global | ast.Nonlocal | ast.Delete):
            bind(_names_bound_by(node), [])
    return found


def _stored(target: ast.AST) -> list[str]:
    """The names a target stores to (or deletes)."""
    return [node.id for node in ast.walk(target) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)]


def _names_bound_by(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Global | ast.Nonlocal):
        return set(node.names)
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    if isinstance(node, ast.Delete):
        return {n.id for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    assert isinstance(node, ast.With | ast.AsyncWith)
    return {n.id for item in node.items if item.optional_vars is not None for n in ast.walk(item.optional_vars)
            if isinstance(n, ast.Name)}

