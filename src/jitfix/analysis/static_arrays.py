"""What the code alone proves of a module's arrays, without a run: how many axes an expression
has, whether it is certainly inexact, and what every call gives a helper's parameters.

* **rank**: exactly, or relative to a parameter's (``x[0]`` has one axis fewer than ``x``): a
  ``Rank`` is ``(base, offset)``, ``base`` None for a number of axes, else the parameter whose
  rank it adds ``offset`` to. Elementwise arithmetic has its operands' largest rank; a literal
  index drops an axis, ``None`` adds one; a reduction over a literal axis drops it;
  ``reshape(a, b)`` has two, ``ravel()`` one; ``jnp.zeros((n, m))`` two.
* **inexact**: a float (or complex) array whatever the dtypes it is made of: a division, a
  jnp function whose result is always inexact (``jnp.std``, ``jnp.sqrt``, ``jnp.linspace``,
  ``jnp.zeros`` without ``dtype=``), arithmetic with a float literal or with such a value.
* **number**: the Python number literal every call gives a parameter (``value=-1e6``).

A helper's parameter takes what every call of the module gives it, where the module only ever
calls the helper by its name (a helper handed on may get anything): ``sequence_mask(X.reshape(
-1, d), lens)`` gives ``X`` two axes. A masked write needs no more than ranks: an index with a
boolean mask works only where the mask has the shape of the axes it covers, so where the
original works, a mask of ``x``'s rank has ``x``'s shape (``jnp.where(mask, v, x)`` is the write).
"""

from __future__ import annotations

import ast
from typing import Callable, Mapping, Sequence

from jitfix.analysis.catalogue import is_elementwise, jnp_member
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.passed_values import argument_for
from jitfix.analysis.scopes import Scopes
from jitfix.analysis.values import parameter_defaults, positional_names

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
Rank = tuple[str | None, int]

# How many calls deep a helper's parameter is followed to what its callers give.
_DEPTH = 3

# jnp functions whose result is inexact whatever their arguments' dtypes.
_INEXACT_FUNCTIONS = frozenset({
    "mean", "std", "var", "median", "average", "nanmean", "nanstd", "nanvar", "sqrt", "cbrt", "exp", "exp2", "expm1",
    "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "hypot", "true_divide", "divide", "linspace", "logspace", "geomspace",
    "deg2rad", "rad2deg", "radians", "degrees", "reciprocal"})
# Constructors whose dtype, without `dtype=`, is the default float.
_FLOAT_CONSTRUCTORS = frozenset({"zeros", "ones", "empty", "eye", "identity"})
# Constructors given a shape first.
_SHAPED = frozenset({"zeros", "ones", "empty", "full"})
_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
_REDUCTIONS = frozenset({"sum", "prod", "mean", "std", "var", "max", "min", "any", "all", "argmax", "argmin",
                         "median", "nansum", "nanmean", "nanmax", "nanmin"})
_KEEPS_RANK = frozenset({"astype", "conj", "clip", "round", "copy"})
_INEXACT_METHODS = frozenset({"mean", "std", "var"})
# Decorators that call the function with what its callers give.
_AS_GIVEN = frozenset({"jax.jit", "equinox.filter_jit", "jax.checkpoint", "jax.remat"})
# Elementwise jnp functions whose result has their (promoted) operands' dtype: an inexact
# operand makes an inexact result (not `jnp.isnan`, a comparison, `jnp.int32`).
_KEEPS_DTYPE = frozenset({
    "abs", "absolute", "negative", "positive", "add", "subtract", "multiply", "power", "square", "maximum", "minimum",
    "fmax", "fmin", "clip", "floor", "ceil", "round", "rint", "trunc", "fix", "sign", "copysign", "fmod", "remainder",
    "mod", "where", "float_power"})


class StaticArrays:
    """The ranks and inexactness of a module's array expressions (see the module's doc)."""

    def __init__(self, scopes: Scopes, imports: ImportTable,
                 bindings_of: Callable[[FunctionNode], Mapping[str, Sequence[ast.AST | None]]],
                 public_callers: bool = False):
        self.scopes = scopes
        self.imports = imports
        self.bindings_of = bindings_of
        # Whether a public function's parameters take what the module's calls give them too:
        # other modules may call it with anything, so a rewrite resting on that is unsafe.
        self.public_callers = public_callers
        self._parameters: dict[tuple[int, str, str], object] = {}

    # -- rank -------------------------------------------------------------------------------------

    def rank(self, expr: ast.AST, function: FunctionNode, depth: int = 0, seen: frozenset[str] = frozenset()
             ) -> Rank | None:
        """How many axes ``expr`` (code of ``function``) has; None where the code does not say."""
        if isinstance(expr, ast.Constant):
            return (None, 0) if isinstance(expr.value, int | float | complex) else None
        if isinstance(expr, ast.Name):
            return self._name_rank(expr, function, depth, seen)
        if isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.MatMult):
            return _broadcast([self.rank(side, function, depth, seen) for side in (expr.left, expr.right)])
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            return _broadcast([self.rank(side, function, depth, seen) for side in (expr.left, *expr.comparators)])
        if isinstance(expr, ast.UnaryOp) and not isinstance(expr.op, ast.Not):
            return self.rank(expr.operand, function, depth, seen)
        if isinstance(expr, ast.Subscript):
            return self._subscript_rank(expr, function, depth, seen)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "real", "imag"):
            return self.rank(expr.value, function, depth, seen)
        if isinstance(expr, ast.Call):
            return self._call_rank(expr, function, depth, seen)
        return None

    def _name_rank(self, name: ast.Name, function: FunctionNode, depth: int, seen: frozenset[str]) -> Rank | None:
        if name.id in seen:
            return None
        values = self._reaching(name, function)
        if values is None:
            return None
        if not values:  # a parameter the function never rebinds
            if name.id not in _parameter_names(function):
                return None
            given = self._given(function, name.id, "rank", depth)
            return given if given is not None else (name.id, 0)  # type: ignore[return-value]
        ranks = {self.rank(value, function, depth, seen | {name.id}) for value in values}
        return ranks.pop() if len(ranks) == 1 else None

    def _subscript_rank(self, expr: ast.Subscript, function: FunctionNode, depth: int, seen: frozenset[str]
                        ) -> Rank | None:
        base = self.rank(expr.value, function, depth, seen)
        if base is None:
            return None
        parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        change = 0
        for part in parts:
            if isinstance(part, ast.Constant) and part.value is None:
                change += 1
            elif isinstance(part, ast.Constant) and type(part.value) is int \
                    or isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub) \
                    and isinstance(part.operand, ast.Constant) and type(part.operand.value) is int:
                change -= 1
            elif not isinstance(part, ast.Slice) and not (isinstance(part, ast.Constant) and part.value is Ellipsis):
                return None  # an array or a name: it may drop an axis or add several
        return _shifted(base, change)

    def _call_rank(self, call: ast.Call, function: FunctionNode, depth: int, seen: frozenset[str]) -> Rank | None:
        name = self.imports.resolve(call.func) or ""
        member = jnp_member(name)
        short = name.rpartition(".")[2] if member is not None else None
        method = call.func.attr if isinstance(call.func, ast.Attribute) and member is None and not name.startswith(
            ("jax.", "numpy.")) else None
        if method is not None:
            return self._method_rank(call, method, function, depth, seen)
        if short is None:
            return None
        keywords = {keyword.arg for keyword in call.keywords}
        if is_elementwise(name) or short == "where" and len(call.args) == 3:
            return _broadcast([self.rank(argument, function, depth, seen) for argument in call.args])
        if short in _SHAPED and call.args:
            return self._shape_rank(call.args[0], function, depth, seen)
        if short in _LIKE and call.args:
            return self.rank(call.args[0], function, depth, seen)
        if short in ("arange", "linspace", "ravel", "flatnonzero"):
            return None if short == "ravel" and not call.args else (None, 1)
        if short in ("eye", "identity"):
            return (None, 2)
        if short in ("asarray", "array") and call.args and not isinstance(call.args[0], ast.List | ast.Tuple):
            return self.rank(call.args[0], function, depth, seen)
        if short == "repeat" and "axis" not in keywords and len(call.args) <= 2:
            return (None, 1)
        if short in _REDUCTIONS and len(call.args) == 1:
            return self._reduced_rank(self.rank(call.args[0], function, depth, seen), call.keywords)
        return None

    def _method_rank(self, call: ast.Call, method: str, function: FunctionNode, depth: int, seen: frozenset[str]
                     ) -> Rank | None:
        owner = call.func.value  # type: ignore[attr-defined]
        if method in ("ravel", "flatten") and not call.args:
            return (None, 1)
        if method == "reshape" and call.args and not call.keywords:
            if len(call.args) > 1:
                return (None, len(call.args))
            shape = call.args[0]
            if isinstance(shape, ast.Tuple | ast.List):
                return (None, len(shape.elts)) if not any(isinstance(e, ast.Starred) for e in shape.elts) else None
            return (None, 1) if _an_int_literal(shape) else None
        if method in _KEEPS_RANK:
            return self.rank(owner, function, depth, seen)
        if method in _REDUCTIONS and not call.args:
            return self._reduced_rank(self.rank(owner, function, depth, seen), call.keywords)
        return None

    def _shape_rank(self, shape: ast.AST, function: FunctionNode, depth: int, seen: frozenset[str]) -> Rank | None:
        """The rank of an array of shape ``shape``: a tuple's length, one for an int, ``x``'s for ``x.shape``."""
        if isinstance(shape, ast.Tuple | ast.List):
            return (None, len(shape.elts)) if not any(isinstance(e, ast.Starred) for e in shape.elts) else None
        if _an_int_literal(shape):
            return (None, 1)
        if isinstance(shape, ast.Attribute) and shape.attr == "shape":
            return self.rank(shape.value, function, depth, seen)
        return None

    @staticmethod
    def _reduced_rank(rank: Rank | None, keywords: list[ast.keyword]) -> Rank | None:
        if rank is None or any(keyword.arg not in ("axis", "dtype") for keyword in keywords):
            return None
        axis = next((keyword.value for keyword in keywords if keyword.arg == "axis"), None)
        if axis is None:
            return (None, 0)
        return _shifted(rank, -1) if _an_int_literal(axis) else None

    # -- inexact ------------------------------------------------------------------------------------

    def inexact(self, expr: ast.AST, function: FunctionNode, depth: int = 0, seen: frozenset[str] = frozenset()
                ) -> bool:
        """Whether ``expr`` is certainly a float or complex array (or number)."""
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, float | complex)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Div):
                return True
            return not isinstance(expr.op, ast.MatMult | ast.FloorDiv | ast.Mod | ast.BitAnd | ast.BitOr | ast.BitXor
                                  | ast.LShift | ast.RShift) \
                and any(self.inexact(side, function, depth, seen) for side in (expr.left, expr.right))
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
            return self.inexact(expr.operand, function, depth, seen)
        if isinstance(expr, ast.Subscript):
            return self.inexact(expr.value, function, depth, seen)
        if isinstance(expr, ast.Name):
            if expr.id in seen:
                return False
            values = self._reaching(expr, function)
            if values is None:
                return False
            if not values:
                return expr.id in _parameter_names(function) and self._given(function, expr.id, "inexact", depth) is True
            return all(value is not None and self.inexact(value, function, depth, seen | {expr.id}) for value in values)
        if isinstance(expr, ast.Call):
            return self._inexact_call(expr, function, depth, seen)
        return False

    def _inexact_call(self, call: ast.Call, function: FunctionNode, depth: int, seen: frozenset[str]) -> bool:
        name = self.imports.resolve(call.func) or ""
        member = jnp_member(name)
        if member is not None:
            short = name.rpartition(".")[2]
            if any(keyword.arg == "dtype" for keyword in call.keywords):
                return False
            if short in _INEXACT_FUNCTIONS or short in _FLOAT_CONSTRUCTORS:
                return True
            if short in ("normal", "uniform", "truncated_normal") and name.startswith("jax.random."):
                return True
            if short in _KEEPS_DTYPE and call.args:
                return any(self.inexact(argument, function, depth, seen) for argument in call.args)
            return False
        if name.startswith(("jax.", "numpy.")) or not isinstance(call.func, ast.Attribute):
            return False
        method = call.func.attr
        if method in _INEXACT_METHODS:
            return True
        if method in ("reshape", "ravel", "flatten", "sum", "max", "min", "copy", "clip", "round", "conj"):
            return self.inexact(call.func.value, function, depth, seen)
        return False

    # -- number -------------------------------------------------------------------------------------

    def number(self, expr: ast.AST, function: FunctionNode) -> ast.Constant | None:
        """The Python number ``expr`` is: a literal, or a parameter every call gives one (all of
        one type: an int, or a float)."""
        literal = _literal_number(expr)
        if literal is not None:
            return literal
        if isinstance(expr, ast.Name) and expr.id in _parameter_names(function) \
                and self._reaching(expr, function) == []:
            given = self._given(function, expr.id, "number", 0)
            return given if isinstance(given, ast.Constant) else None
        return None

    # -- what callers give ----------------------------------------------------------------------------

    def _given(self, function: FunctionNode, name: str, fact: str, depth: int) -> object:
        """What every call of ``function`` gives its parameter ``name``, as ``fact`` asks (its
        rank, whether inexact, the Python number): the same for every call, or None."""
        key = (id(function), name, fact)
        if key in self._parameters:
            return self._parameters[key]
        self._parameters[key] = None  # (a recursive call knows nothing more)
        found = self._from_callers(function, name, fact, depth) if depth < _DEPTH else None
        self._parameters[key] = found
        return found

    def _from_callers(self, function: FunctionNode, name: str, fact: str, depth: int) -> object:
        home = self.scopes.parent.get(function, self.scopes.tree)
        if isinstance(home, ast.ClassDef) or not self.scopes.only_called(function.name, home) \
                or not all(self._passes_as_given(decorator) for decorator in function.decorator_list):
            return None  # (a decorator may call it with anything: `vmap` drops an axis)
        if not self.public_callers and home is self.scopes.tree and not function.name.startswith("_"):
            return None  # a public function: other modules may call it with anything
        calls = [(call, scope) for call, scope in self.scopes.calls_to(function.name)
                 if isinstance(call.func, ast.Name) and self.scopes.binding_scope(scope, function.name) is home]
        answers = []
        for call, scope in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return None
            argument = argument_for(call, function, name)
            caller = scope if isinstance(scope, FunctionNode) else None
            if argument is None:
                argument, caller = parameter_defaults(function).get(name), None
            if argument is None:
                return None
            answers.append(self._fact(fact, argument, caller, depth + 1))
        if not answers or any(answer is None or answer is False for answer in answers):
            return None
        if fact == "number":  # one type of number: the dtype it keeps does not change
            kinds = {type(answer.value) for answer in answers}  # type: ignore[attr-defined]
            return answers[0] if len(kinds) == 1 else None
        return answers[0] if all(answer == answers[0] for answer in answers) else None

    def _passes_as_given(self, decorator: ast.expr) -> bool:
        """A decorator that calls the function with what its callers give (``jax.jit``,
        ``partial(jax.jit, static_argnames=...)``)."""
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(decorator, ast.Call) and self.imports.resolve(func) == "functools.partial" and decorator.args:
            func = decorator.args[0]
        return self.imports.resolve(func) in _AS_GIVEN

    def _fact(self, fact: str, argument: ast.AST, caller: FunctionNode | None, depth: int) -> object:
        """``fact`` of what a call gives (``caller`` None: a default, or a call at the module's
        top level, where only a literal says anything)."""
        if fact == "number":
            return self.number(argument, caller) if caller is not None else _literal_number(argument)
        if caller is None:
            literal = _literal_number(argument)
            if fact == "rank":
                return (None, 0) if literal is not None else None
            return literal is not None and isinstance(literal.value, float)
        if fact == "rank":
            rank = self.rank(argument, caller, depth)
            return rank if rank is not None and rank[0] is None else None  # relative to the caller's own: unknown
        return self.inexact(argument, caller, depth)

    def _reaching(self, name: ast.Name, function: FunctionNode) -> list[ast.AST] | None:
        """The values ``name`` may hold where it is read, following the body's statements to the
        read through ``if``/``else`` (either arm's last binding): none for a parameter nothing
        rebinds on the way; None where a loop, a ``try`` or anything but ``name = value`` binds
        it on the way, or the read is not in the function's own body."""
        held, found = _values_at(function.body, name.id, name, [_PARAMETER])
        if not held or found is None:
            return None
        if _PARAMETER in found:
            return [] if found == [_PARAMETER] and name.id in _parameter_names(function) else None
        return found


# What a name holds before any binding: the parameter's own value (or nothing, for a local).
_PARAMETER = ast.Pass()


def _values_at(statements: list[ast.stmt], name: str, read: ast.AST, current: list[ast.AST] | None
               ) -> tuple[bool, list[ast.AST] | None]:
    """(whether one of ``statements`` holds ``read``, what ``name`` may hold there -- or after
    the statements, where none does), given ``current`` before them; None where a binding on
    the way is not a plain ``name = value`` or an ``if``/``else`` of those."""
    for statement in statements:
        if any(node is read for node in ast.walk(statement)):
            return True, _values_at_read(statement, name, read, current) if current is not None else None
        if current is not None:
            current = _values_after(statement, name, current)
    return False, current


def _values_at_read(statement: ast.stmt, name: str, read: ast.AST, current: list[ast.AST]) -> list[ast.AST] | None:
    """What ``name`` holds at ``read``, a part of ``statement`` that sees ``current`` before it."""
    if isinstance(statement, ast.If | ast.With):
        for block in (statement.body, statement.orelse) if isinstance(statement, ast.If) else (statement.body,):
            held, found = _values_at(block, name, read, current)
            if held:
                return found
        return current  # in the test, or the `with` items
    if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None \
            and any(node is read for node in ast.walk(statement.value)):
        return current  # `x = f(x)`: the value reads what `x` held before
    if _binds(statement, name):
        return None  # a loop or a `try` that binds it
    return current


def _values_after(statement: ast.stmt, name: str, current: list[ast.AST]) -> list[ast.AST] | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == name:
        return [statement.value]
    if not _binds(statement, name):
        return current
    if isinstance(statement, ast.If):
        merged: list[ast.AST] = []
        for block in (statement.body, statement.orelse):
            _, after = _values_at(block, name, _UNREAD, current)
            if after is None:
                return None
            merged += [value for value in after if not any(value is known for known in merged)]
        return merged
    return None


_UNREAD = ast.Pass()  # a read no statement holds: `_values_at` follows a block to its end


def _binds(statement: ast.stmt, name: str) -> bool:
    """Whether ``statement`` (nested defs and classes aside) binds ``name``."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node is not statement:
            if node.name == name:
                return True
            continue
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            continue
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _literal_number(node: ast.AST) -> ast.Constant | None:
    """The int or float literal ``node`` is (``-1e6`` too)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return node if isinstance(node, ast.Constant) and type(node.value) in (int, float) else None


def _parameter_names(function: FunctionNode) -> list[str]:
    return [*positional_names(function), *(arg.arg for arg in function.args.kwonlyargs)]


def _an_int_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _shifted(rank: Rank, change: int) -> Rank | None:
    base, offset = rank
    if base is None and offset + change < 0:
        return None
    return base, offset + change


def _broadcast(ranks: list[Rank | None]) -> Rank | None:
    """The rank elementwise arithmetic of operands of ``ranks`` has: the largest, where that is
    known (a scalar beside a parameter's rank adds nothing; two parameters' ranks, or a number
    beside one, may compare either way)."""
    if any(rank is None for rank in ranks):
        return None
    symbolic = {rank for rank in ranks if rank[0] is not None}  # type: ignore[index]
    concrete = [rank[1] for rank in ranks if rank[0] is None]  # type: ignore[index]
    if not symbolic:
        return (None, max(concrete))
    bases = {base for base, _ in symbolic}  # type: ignore[misc]
    if len(bases) != 1 or any(value > 0 for value in concrete):
        return None
    return next(iter(bases)), max(offset for _, offset in symbolic)  # type: ignore[misc]
