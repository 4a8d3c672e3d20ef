"""JF6xx — Python and NumPy operations on tracers, and in-place updates of JAX arrays.

JF601 ``float(x)``, ``int(x)``, ``bool(x)``, ``x.item()`` on a traced value used as a number
      -> ``jnp.asarray(x, dtype=float)`` ..., ``lax.stop_gradient(x.reshape(()))``; of jnp
      arithmetic on static values (``int(jnp.ceil(n / 2))``) -> the same in Python.
JF602 ``np.mean(x)`` and other NumPy functions on tracers -> the ``jnp`` function of that name.
JF603 ``x[i] = v``, ``x[i] += v`` on a JAX array -> ``x = x.at[i].set(v)`` / ``.add(v)`` ...
JF604 ``min``, ``max``, ``any``, ``all``, ``sorted`` of tracers (Python compares or tests them)
      -> ``jnp.minimum(a, b)``, ``jnp.min(x)``, ``jnp.any(...)`` ...
"""

from __future__ import annotations

import ast
import builtins
from typing import TYPE_CHECKING, Iterator, Mapping

from jitfix.analysis.blocks import nodes_of, own_expressions, parents_in, walk_body
from jitfix.analysis.catalogue import NUMPY_METADATA, function_category, is_range, numpy_member, shape_arguments
from jitfix.analysis.masks import is_boolean_mask
from jitfix.analysis.runtime_checks import RuntimeCheck
from jitfix.analysis.python_arithmetic import OPERATOR, TO_INT, PythonSpelling
from jitfix.analysis.values import PYTHON_CONVERSIONS, ArrayEvidence, is_none, parameter_names, positional_names
from jitfix.cst_text import code, cst, small_statement
from jitfix.findings import Edit, EditContext, Finding, Fix, Safety
from jitfix.rules.base import CacheKey, ModuleContext, Rule, RuleDoc
from jitfix.rules.function_context import FunctionContext, function_contexts

if TYPE_CHECKING:
    from jitfix.analysis.traced_function import TracedFunction
    from jitfix.findings import Replaced

# Keywords NumPy functions take that their jax.numpy namesakes refuse unless None (`kind=` of
# `argsort`: `stable=` says it there; `out=`: arrays are immutable).
TOP_LEVEL_BINDINGS: CacheKey[dict[str, list[ast.expr | None]]] = CacheKey("what the top level binds each name to")
NUMPY_ONLY_KEYWORDS = frozenset({"kind", "out", "casting", "subok"})


# NumPy functions jax.numpy provides under the same name, with the same meaning on arrays.
JNP_FUNCTIONS = frozenset(
    """abs absolute add all allclose amax amin any append arange arccos arccosh arcsin arcsinh arctan arctan2
    arctanh argmax argmin argsort around array array_equal asarray atleast_1d atleast_2d atleast_3d
    average bincount broadcast_to cbrt ceil clip concatenate conj convolve copy corrcoef cos cosh
    count_nonzero cov cross cumprod cumsum deg2rad delete diag diagonal diff divide dot einsum equal exp exp2
    expand_dims expm1 eye flip fliplr flipud float16 float32 float64 floor floor_divide fmax fmin fmod
    full full_like greater greater_equal hstack hypot identity indices inner insert int16 int32 int64 int8 interp
    isclose isfinite isinf isnan kron less less_equal linspace log log10 log1p log2 logaddexp
    logical_and logical_not logical_or logical_xor matmul max maximum mean median meshgrid min minimum
    mod moveaxis multiply nan_to_num nanmax nanmean nanmin nansum negative nonzero not_equal ones
    ones_like outer pad percentile power prod quantile rad2deg ravel real reciprocal remainder repeat
    reshape roll rot90 round sign sin sinh sort sqrt square squeeze stack std subtract sum swapaxes
    take tan tanh tensordot tile trace transpose tril triu true_divide uint8 unique var vstack where
    zeros zeros_like""".split()
)
JNP_SUBMODULE_FUNCTIONS = frozenset({"linalg.norm", "linalg.inv", "linalg.det", "linalg.solve", "linalg.eigh",
                                     "linalg.svd", "linalg.qr", "linalg.cholesky", "linalg.pinv", "fft.fft",
                                     "fft.ifft", "fft.rfft", "fft.irfft"})
# The jnp functions of JNP_FUNCTIONS that take a list or tuple of arrays where NumPy does
# (found by calling each with a list of arrays): the others take arrays only.
SEQUENCE_TAKING = frozenset("array array_equal asarray concatenate hstack stack vstack float16 float32 float64 int8 "
                            "int16 int32 int64 uint8".split())
UPDATE_METHODS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
                  ast.Pow: "power"}
# Where a Python number is needed, not an array: jnp would not help (JF5xx's job).
STATIC_POSITIONS = frozenset({"range", "len", "str", "repr", "format", "print", "round"})


def _parents(function: ast.AST) -> dict[int, ast.AST]:
    return parents_in(function)


class Concretization(Rule):
    code = "JF601"
    name = "concretization"
    summary = "`float(x)`, `int(x)`, `bool(x)`, `x.item()` on a tracer raise under jit; use jnp"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds `float()`, `int()`, `bool()`, `complex()` and `.item()` applied to traced values "
        "that are then used as numbers, and writes the same conversion with `jax.numpy`.",
        why="Under `jax.jit` a tracer has no concrete value: `float(x)` raises "
        "`ConcretizationTypeError`. The arithmetic it feeds works on arrays just as well.",
        example="@jax.jit\ndef scale(x, s):\n    return x * float(s)\n",
        fixed="@jax.jit\ndef scale(x, s):\n    return x * jnp.asarray(s, dtype=float)\n",
        safety="Safe where the result is used as a number (arithmetic, comparisons, jnp calls): the "
        "value is the same, held as a 0-d array of JAX's default type for that kind. `int()` of a "
        "float truncates toward zero, as `astype` does. `x.item()` becomes "
        "`lax.stop_gradient(x.reshape(()))`: like `.item()` it fails for arrays of more than one "
        "element, and like the Python number `.item()` returns it is a constant to `jax.grad`. "
        "Arithmetic on static values written with jnp (`int(jnp.ceil(n / 2))`, "
        "`int(jnp.prod(x.shape))` of a static `n` or a shape) is a tracer under jit only because jnp "
        "stages it: it is written in Python (`int(math.ceil(n / 2))`, `math.prod`, `round`, `max`), "
        "a number known at trace time, also where a shape or `range` needs one. Safe for `round`, "
        "`floor`, `ceil`, `trunc`, `abs`, `maximum`, `minimum` and the reductions `prod`, `sum`, "
        "`max`, `min` of a shape or a tuple; Python computes in double precision where jnp uses "
        "float32. Unsafe for `sqrt`, `exp`, `log` and the rest of `math`: they raise where jnp "
        "gives nan or inf. Not fixed: a conversion of a traced value feeding a "
        "shape, `range`, or string formatting (a Python value is really needed there; see JF5xx "
        "and JF401), an `int()`, `bool()` or `.item()` passed to a callable that is neither JAX's nor a "
        "container (a NamedTuple, a dataclass without an `__init__` of its own) and that the module "
        "does not define, or that uses it as a key of a module-level dict or list, formats it or "
        "hands it to `range`/`len` (a float is a number wherever it goes), and `.tolist()` "
        "(a list is not an array).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            function = entry.traced.node
            parents = None
            for node, statement in own_expressions(function):
                operand = converted_operand(node) if isinstance(node, ast.Call) else None
                if operand is None or not isinstance(node, ast.Call):
                    continue
                values = entry.values_at(statement)
                if not values.is_traced(operand) or _tests_a_check(node, statement):
                    continue
                staged = entry.traced.seen.staged.get(node.lineno)
                if staged is not None and staged.made_exactly:
                    continue  # a run saw integers made of constants alone: JF509 computes them at trace time
                spelling = values.python_spelling(operand) if not _is_tolist(node) else None
                if spelling is not None:
                    yield self._python_arithmetic(module, entry, node, operand, spelling)
                    continue
                parents = parents or _parents(function)
                where = f"`{module.segment(node)}` on a traced value in `{entry.traced.qualname}`"
                if _is_tolist(node):
                    yield self.finding(module, node, f"{where} raises under jit; not auto-fixable: a Python "
                                                     "list is not an array; keep the array", function=entry.traced)
                    continue
                # An int (or a bool, or what `.item()` gives) may be a key, an index, a shape in a
                # callee; a float is a number wherever it goes.
                float_like = isinstance(node.func, ast.Name) and node.func.id in ("float", "complex")
                needs_python = _needs_python_value(node, parents, function,
                                                   callees=None if float_like else module)
                if needs_python:
                    yield self.finding(module, node, f"{where} raises under jit; not auto-fixable: "
                                                     f"{needs_python}", function=entry.traced)
                    continue
                fix = Fix(Safety.SAFE, "convert with jax.numpy", [_conversion_edit(module, node)])
                yield self.finding(module, node, f"{where} raises under jit; convert with `jnp`", fix,
                                   function=entry.traced)


    def _python_arithmetic(self, module: ModuleContext, entry: FunctionContext, node: ast.Call, operand: ast.AST,
                           spelling: PythonSpelling) -> Finding:
        """``int(jnp.ceil(n / k))`` of Python values: jnp stages it (a tracer under jit); the
        same arithmetic in Python is a number known at trace time."""
        fix, functions = python_arithmetic_fix(module, node, operand, spelling)
        message = (f"`{module.segment(node)}` in `{entry.traced.qualname}` raises under jit: jnp stages arithmetic "
                   f"on Python values; compute it in Python ({functions})")
        return self.finding(module, node, message, fix, function=entry.traced)


def python_arithmetic_fix(module: ModuleContext, node: ast.AST, operand: ast.AST,
                          spelling: PythonSpelling) -> tuple[Fix, str]:
    """The fix writing ``operand`` (``node`` itself, or the operand of the conversion or
    ``.item()`` that ``node`` is) in Python, and the Python functions it uses, for messages."""
    functions = {module.segment(call.func): spelling.calls[id(call)] for call in ast.walk(operand)
                 if isinstance(call, ast.Call) and id(call) in spelling.calls}
    named = ", ".join(sorted({f"`{'int' if python == TO_INT else python.removeprefix(OPERATOR)}`"
                              for python in functions.values() if python})) or "without jnp"
    if spelling.exact:
        safety, description = Safety.SAFE, "write the arithmetic in Python"
    else:
        safety = Safety.UNSAFE
        description = "write the arithmetic in Python (unsafe: math raises where jnp gives nan or inf)"
    return Fix(safety, description, [_python_arithmetic_edit(module, node, functions)]), named


def _is_tolist(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Attribute) and node.func.attr == "tolist"


# The expressions the Python spelling replaces, by the name of their libcst node.
_CST_EXPRESSIONS = {ast.Call: "Call", ast.BinOp: "BinaryOperation", ast.UnaryOp: "UnaryOperation",
                    ast.Compare: "Comparison", ast.BoolOp: "BooleanOperation"}
PYTHON_SPELLABLE = frozenset(_CST_EXPRESSIONS)


def whole_slot(module: ModuleContext, node: ast.AST) -> bool:
    """Whether ``node`` is a whole value slot -- what a name is bound to, what is returned, an
    argument, an index, a list's element -- so an operator written in its place needs no parentheses."""
    for parent in ast.walk(module.tree):
        if isinstance(parent, ast.Assign | ast.AnnAssign | ast.Return) and parent.value is node:
            return True
        if isinstance(parent, ast.Call) and (any(argument is node for argument in parent.args)
                                             or any(keyword.value is node for keyword in parent.keywords)):
            return True
        if isinstance(parent, ast.Subscript) and parent.slice is node \
                or isinstance(parent, ast.List) and any(element is node for element in parent.elts):
            return True
    return False


def _python_arithmetic_edit(module: ModuleContext, node: ast.AST, functions: dict[str, str | None]) -> Edit:
    """Each jnp call in ``node`` spelled as the Python function named (``None``: the call is
    left out, its argument kept); ``x.item()`` of it is the number itself."""
    start, end = module.span_of(node)
    item = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item"
    bare = whole_slot(module, node)

    def replace(updated: cst.CSTNode, context: EditContext) -> Replaced:
        from jitfix.rules.transformers import InPython

        in_python = InPython(functions, context)
        if item:  # x.item() -> the Python number itself
            return updated.func.value.visit(in_python)  # type: ignore[attr-defined]
        written = updated.visit(in_python)
        if bare and isinstance(written, cst.BinaryOperation) and isinstance(updated, cst.Call):
            return written.with_changes(lpar=updated.lpar, rpar=updated.rpar)  # `n = jnp.add(a, 1)`: `n = a + 1`
        return written

    needed = tuple(sorted({python.rpartition(".")[0] for python in functions.values()
                           if python and "." in python and not python.startswith(OPERATOR)}))
    return Edit(start, getattr(cst, _CST_EXPRESSIONS[type(node)]), replace, imports=needed, end=end)


def converted_operand(node: ast.Call) -> ast.expr | None:
    """The operand of float(x)/int(x)/bool(x)/complex(x)/x.item()/x.tolist()."""
    if node.keywords:
        return None
    if isinstance(node.func, ast.Name) and node.func.id in PYTHON_CONVERSIONS and len(node.args) == 1:
        return node.args[0]
    if isinstance(node.func, ast.Attribute) and node.func.attr in {"item", "tolist"} and not node.args:
        return node.func.value
    return None


def _needs_python_value(node: ast.AST, parents: dict[int, ast.AST], function: ast.AST,
                        followed: frozenset[str] = frozenset(), subject: str = "it",
                        callees: ModuleContext | None = None) -> str | None:
    """Why the value of ``node`` must stay a Python value (a jnp array would raise there), if it
    must: where it is used, or where the name it is bound to is (``lo = max(0, i - w)``, then
    ``x[lo:]``), through arithmetic. None when nothing shows it must. ``subject`` names the
    value in the reason (the last name followed). With ``callees``, a value passed to a callable
    that is not JAX's counts as needing a Python value too: a conversion (``int(handle)``) says
    the callee wants a Python number, and what it does with one (a dict key, a shape) is not seen
    here."""
    expression = node
    while True:
        why = _python_value_position(expression, parents, subject) \
            or (_passed_to_unknown_callable(expression, parents, subject, callees) if callees else None)
        if why is not None:
            return why
        parent = parents.get(id(expression))
        if not isinstance(parent, ast.BinOp | ast.UnaryOp):
            break
        expression = parent
    statement = parents.get(id(expression))
    if not (isinstance(statement, ast.Assign) and statement.value is expression and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)) or statement.targets[0].id in followed:
        return None
    name = statement.targets[0].id
    for use in nodes_of(function):
        if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load):
            why = _needs_python_value(use, parents, function, followed | {name}, f"`{name}`", callees)
            if why is not None:
                return why
    return None


def _python_value_position(node: ast.AST, parents: dict[int, ast.AST], subject: str) -> str | None:
    parent = parents.get(id(node))
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in STATIC_POSITIONS:
        return f"`{parent.func.id}()` needs a Python value"
    if isinstance(parent, ast.FormattedValue | ast.JoinedStr):
        return f"{subject} is formatted as text"
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr in {
            "reshape", "zeros", "ones", "empty", "full", "arange", "eye"}:
        return f"{subject} sets a shape (make the argument static: JF5xx)"
    if isinstance(parent, ast.Slice):
        return f"{subject} is a slice bound"
    return None


def _tests_a_check(node: ast.Call, statement: ast.stmt) -> bool:
    """``if bool(bad): raise ...`` / ``assert bool(ok)``: the check's rule (JF101, JF105) owns
    the truth of its test, and drops the ``bool``."""
    check = RuntimeCheck.of(statement)
    return check is not None and isinstance(check.statement, ast.If | ast.Assert) and node is check.statement.test


def _passed_to_unknown_callable(node: ast.AST, parents: dict[int, ast.AST], subject: str,
                                module: ModuleContext) -> str | None:
    """Why a value passed to a call may need to be a Python number: the callee is neither
    JAX's nor a container that only holds it (a NamedTuple, a dataclass without an
    ``__init__`` of its own, ``tuple``/``list``/``dict``)."""
    call = parents.get(id(node))
    if isinstance(call, ast.keyword):
        call = parents.get(id(call))
    if not isinstance(call, ast.Call) or call.func is node:
        return None
    callee = module.imports.resolve(call.func)
    if callee is not None and callee.split(".")[0] == "jax" or _is_container(call.func, module):
        return None
    shown = ast.unparse(call.func)
    definition = _module_callee(call.func, module)
    if definition is None:
        return f"{subject} is passed to `{shown}`, which may need a Python number (a dict key, a shape)"
    function, skipped = definition
    parameter = _parameter_for(call, node, function, skipped)
    use = _python_use(function, parameter, module) if parameter is not None else "it is passed through `*args`"
    return f"{subject} is passed to `{shown}`, where {use}" if use else None


def _module_callee(func: ast.expr, module: ModuleContext) -> tuple[ast.FunctionDef, int] | None:
    """The def a call of the module's own reaches, and how many of its parameters the call
    does not pass (``self``): a function, a class's ``__init__``, or ``self.method`` of the one
    class of the module that defines ``method``."""
    classes = [statement for statement in module.tree.body if isinstance(statement, ast.ClassDef)]
    if isinstance(func, ast.Name):
        for statement in module.tree.body:
            if isinstance(statement, ast.FunctionDef) and statement.name == func.id:
                return statement, 0
            if isinstance(statement, ast.ClassDef) and statement.name == func.id:
                init = _method(statement, "__init__")
                return (init, 1) if init is not None else None
        return None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        defining = [method for klass in classes if (method := _method(klass, func.attr)) is not None]
        return (defining[0], 1) if len(defining) == 1 else None
    return None


def _method(klass: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((statement for statement in klass.body
                 if isinstance(statement, ast.FunctionDef) and statement.name == name), None)


def _parameter_for(call: ast.Call, argument: ast.AST, function: ast.FunctionDef, skipped: int) -> str | None:
    positional = [parameter.arg for parameter in (*function.args.posonlyargs, *function.args.args)][skipped:]
    for index, given in enumerate(call.args):
        if given is argument:
            return positional[index] if index < len(positional) and not any(
                isinstance(before, ast.Starred) for before in call.args[:index + 1]) else None
    return next((keyword.arg for keyword in call.keywords if keyword.value is argument), None)


def _python_use(function: ast.FunctionDef, parameter: str, module: ModuleContext) -> str | None:
    """Where ``function`` uses ``parameter`` as only a Python value can be used: a key (``d[p]``
    of a module-level dict or list, ``{p: ...}``), formatted as text, or given to a built-in
    that needs one (``range``, ``len``, ...). None when it does not (it stores it, computes with
    it, hands it on)."""
    parents = parents_in(function)
    containers = {target.id for statement in module.tree.body if isinstance(statement, ast.Assign)
                  and isinstance(statement.value, ast.Dict | ast.List | ast.Set | ast.Tuple)
                  for target in statement.targets if isinstance(target, ast.Name)}
    for node in nodes_of(function):
        if not (isinstance(node, ast.Name) and node.id == parameter and isinstance(node.ctx, ast.Load)):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.slice is node and isinstance(parent.value, ast.Name) \
                and parent.value.id in containers:
            return f"`{parameter}` is a key of `{ast.unparse(parent.value)}` (line {node.lineno})"
        if isinstance(parent, ast.Dict) and any(key is node for key in parent.keys):
            return f"`{parameter}` is a dict key (line {node.lineno})"
        why = _python_value_position(node, parents, f"`{parameter}`")
        if why is not None:
            return f"{why} (line {node.lineno})"
    return None


_CONTAINER_BUILTINS = frozenset({"tuple", "list", "dict"})
_DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass", "flax.struct.dataclass", "chex.dataclass"})


def _is_container(func: ast.expr, module: ModuleContext) -> bool:
    if isinstance(func, ast.Name) and func.id in _CONTAINER_BUILTINS and func.id not in module.imports.aliases:
        return not any(isinstance(statement, ast.FunctionDef | ast.ClassDef) and statement.name == func.id
                       for statement in module.tree.body)
    if not isinstance(func, ast.Name):
        return False
    klass = next((statement for statement in module.tree.body
                  if isinstance(statement, ast.ClassDef) and statement.name == func.id), None)
    if klass is None:
        return False
    if any(module.imports.resolve(base) == "typing.NamedTuple" for base in klass.bases):
        return True
    decorated = any(module.imports.resolve(decorator.func if isinstance(decorator, ast.Call) else decorator)
                    in _DATACLASS_DECORATORS for decorator in klass.decorator_list)
    own = {statement.name for statement in klass.body if isinstance(statement, ast.FunctionDef)}
    return decorated and not own & {"__init__", "__post_init__"}


def _conversion_edit(module: ModuleContext, node: ast.Call) -> Edit:
    start, end = module.span_of(node)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        if isinstance(updated.func, cst.Attribute):  # x.item(): a number, constant to jax.grad
            source = f"{context.name('jax.lax')}.stop_gradient({code(updated.func.value)}.reshape(()))"
        else:
            kind = updated.func.value  # type: ignore[attr-defined]  # float(x) -> dtype=float
            source = f"{context.name('jax.numpy')}.asarray({code(updated.args[0].value)}, dtype={kind})"
        return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)

    needed = ("jax.lax",) if isinstance(node.func, ast.Attribute) else ("jax.numpy",)
    return Edit(start, cst.Call, replace, imports=needed, end=end)


class NumpyOnTracer(Rule):
    code = "JF602"
    name = "numpy-on-tracer"
    summary = "NumPy, SciPy and `math` functions cannot take tracers; use the jax.numpy or jax.scipy function"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds calls to NumPy functions (`np.mean(x)`, `np.sqrt(x)`, `np.linalg.norm(x)`, ...) "
        "and to Python's `math` (`math.sqrt(x)`, `math.atan2(y, x)`) whose arguments are traced, and "
        "calls the `jax.numpy` function of the same meaning instead (`jnp.sqrt`, `jnp.arctan2`); and "
        "NumPy arrays indexed with a traced index (`TABLE[i]`, `np.arange(n)[order]`), which index "
        "the jnp array instead (`jnp.asarray(TABLE)[i]`, `jnp.arange(n)[order]`); and SciPy functions "
        "on traced values (`special.gammaln(x)`), which call `jax.scipy`'s of the same name.",
        why="NumPy converts its arguments to NumPy arrays, which a tracer refuses: "
        "`TracerArrayConversionError`; `math` converts them to Python floats, which a tracer refuses "
        "too (`ConcretizationTypeError`). A dict of tracers NumPy takes as one object, converting "
        "nothing: not reported. A traced shape (`np.zeros(n)`) is not data jnp could take "
        "instead: JF501 makes it static.",
        example="@jax.jit\ndef rms(x):\n    return np.sqrt(np.mean(x ** 2))\n",
        fixed="@jax.jit\ndef rms(x):\n    return jnp.sqrt(jnp.mean(x ** 2))\n",
        safety="Safe for the functions listed in the rule (same name, same meaning in jax.numpy; "
        "`math`'s that return a float, with the number of arguments jnp takes: not `math.floor`, "
        "which returns an int, nor `math.log(x, base)`). "
        "Other NumPy functions, and `np.random`, are reported: there is no same-named equivalent "
        "(use `jax.random` with an explicit key for randomness). A list or tuple of tracers "
        "is rewritten only for the jnp functions that take one (`stack`, `concatenate`, "
        "`array`, ...); for the others (`np.mean([a, b])`) it is reported: jnp takes arrays only. "
        "A call with a keyword jnp refuses (`kind=`, `out=`, `casting=`, `subok=`: "
        "`np.argsort(x, kind=\"stable\")`) is reported too. Where `jitfix run` saw NumPy convert a "
        "tracer on a line, the NumPy calls there whose arguments are not certainly static count as "
        "taking tracers (an attribute of an object made in the trace, a property). "
        "A NumPy array indexed with a tracer is rewritten where it is certainly one array: a NumPy "
        "function's result (not one of those that return several), an ndarray method's or "
        "arithmetic's of one, a name bound once to one in the function or at module level, or a "
        "name `jitfix run` saw holding one at that line, or a parameter every call in the module gives "
        "one made at module level (a caller elsewhere may pass a jax array: its jnp array is the same); "
        "every call that reached it failed before. A row of a NumPy function's result that a comprehension "
        "iterates (`[x[i] for x in np.indices(shape)]`) is indexed as a jnp array by making the result with "
        "the jnp function of that name (`jnp.indices(shape)`). The jnp array holds "
        "JAX's dtype (float32 for NumPy's float64 unless x64 is on). A SciPy function becomes "
        "`jax.scipy`'s of the same path where JAX has one and the call passes positional arguments only "
        "(JAX's keywords may be named otherwise: reported); float32 as for NumPy. A conversion "
        "(`np.array`, `np.asarray`) whose array is handed to code written for NumPy -- a call of a "
        "parameter, a class or a function of the module the analysis does not trace, or an attribute "
        "another method gives to NumPy -- is reported, not rewritten: that code would get a tracer and fail "
        "there instead (`jax.pure_callback` runs it on the host).",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        if not any(module.imports.mentions(library) for library in ("numpy", "math", "scipy")):
            return
        for entry in function_contexts(module):
            for node, statement in own_expressions(entry.traced.node):
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                    finding = self._numpy_indexed(module, entry, node, statement)
                    if finding is not None:
                        yield finding
                    continue
                if not isinstance(node, ast.Call):
                    continue
                name = module.imports.resolve(node.func) or ""
                if name.startswith("math."):
                    finding = self._math_call(module, entry, node, statement, name[len("math."):])
                    if finding is not None:
                        yield finding
                    continue
                if name.startswith("scipy."):
                    finding = self._scipy_call(module, entry, node, statement, name)
                    if finding is not None:
                        yield finding
                    continue
                if numpy_member(name) is None or name in NUMPY_METADATA:
                    continue  # (`np.shape(x)` reads x.shape: fine on a tracer)
                values = entry.values_at(statement)
                shapes = {id(argument) for _, argument in shape_arguments(node, name)}
                arguments = [argument for argument in (*node.args, *(keyword.value for keyword in node.keywords))
                             if id(argument) not in shapes]  # a traced shape must be static: JF501
                # NumPy converts each traced argument to an array, which raises -- but a
                # dict it takes as one object (`np.sum(metrics, -1)` returns the dict).
                converted = [verdict for verdict in map(values.verdict, arguments)
                             if verdict.traced and verdict.container != "dict"]
                if not converted and entry.traced.seen.failed_with(node, "TracerArrayConversionError"):
                    # The run saw NumPy convert a tracer on this line: what the analysis cannot
                    # prove static there (an object's attribute, a property) was traced.
                    converted = [verdict for argument, verdict in zip(arguments, map(values.verdict, arguments))
                                 if not values.is_static(argument) and verdict.container != "dict"]
                if not converted:
                    continue
                function = name[len("numpy."):]
                if function.startswith("random."):
                    continue  # randomness at trace time: JF402
                where = f"`{module.segment(node.func)}(...)` on a traced value in `{entry.traced.qualname}`"
                listed = any(verdict.container is not None for verdict in converted) \
                    and function not in SEQUENCE_TAKING
                refused = [k.arg for k in node.keywords if k.arg in NUMPY_ONLY_KEYWORDS and not is_none(k.value)]
                handed = _handed_to_numpy_code(module, entry, node) if function in _CONVERSIONS else None
                if handed is not None:
                    yield self.finding(module, node, f"{where} raises under jit; not auto-fixable: the array it makes "
                                       f"is handed to {handed}, code written for a NumPy array, which would get a "
                                       "tracer instead; run that NumPy code on the host with `jax.pure_callback` "
                                       "(giving the result's shape and dtype), or write it with jnp",
                                       function=entry.traced)
                    continue
                if (function in JNP_FUNCTIONS or function in JNP_SUBMODULE_FUNCTIONS) and not listed and not refused:
                    fix = Fix(Safety.SAFE, f"call jnp.{function}", [_numpy_edit(module, node.func, function)])
                    yield self.finding(module, node, f"{where} raises under jit; use `jnp.{function}`", fix,
                                       function=entry.traced)
                else:
                    why = f"`jnp.{function}` takes arrays, not a list or tuple of them: stack them first " \
                          "(`jnp.stack`)" if listed else f"`jnp.{function}` refuses `{refused[0]}=`" if refused \
                        else "no jax.numpy function of that name is known to behave the same"
                    yield self.finding(module, node, f"{where} raises under jit; not auto-fixable: {why}",
                                       function=entry.traced)


    def _numpy_indexed(self, module: ModuleContext, entry: FunctionContext, node: ast.Subscript,
                       statement: ast.stmt) -> Finding | None:
        """``table[i]`` of a NumPy array with a traced index: NumPy converts the index to an
        array, which a tracer refuses; the jnp array of the table takes it."""
        values = entry.values_at(statement)
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if not any(values.is_traced(part) for part in parts if not isinstance(part, ast.Slice)):
            return None
        row = self._numpy_row_indexed(module, entry, node)  # (its source made with jnp, before its row)
        if row is not None:
            return row
        if not NumpyArrays(module, entry, node).holds(node.value):
            return None
        table = module.segment(node.value)
        where = (f"`{module.segment(node)}` in `{entry.traced.qualname}` indexes the NumPy array `{table}` with a "
                 "traced index, which raises under jit")
        made = module.imports.resolve(node.value.func) if isinstance(node.value, ast.Call) else None
        function = (made or "").removeprefix("numpy.")
        if made and function in JNP_FUNCTIONS:  # np.arange(n)[i] -> jnp.arange(n)[i]
            fix = Fix(Safety.SAFE, f"call jnp.{function}", [_numpy_edit(module, node.value.func, function)])  # type: ignore[attr-defined]
            return self.finding(module, node, f"{where}; make it with `jnp.{function}`", fix, function=entry.traced)
        fix = Fix(Safety.SAFE, "index the jnp array of it", [_jnp_table_edit(module, node)])
        return self.finding(module, node, f"{where}; index `jnp.asarray({table})`", fix, function=entry.traced)

    def _numpy_row_indexed(self, module: ModuleContext, entry: FunctionContext, node: ast.Subscript) -> Finding | None:
        """``x[i]`` with a traced index, ``x`` a row of a NumPy function's result that a
        comprehension iterates (``[x[i] for x in np.indices(shape)]``): made with the jnp
        function of that name, its rows are jnp arrays, which take the index."""
        if not isinstance(node.value, ast.Name):
            return None
        made = _iterated_by_comprehension(node, node.value.id, parents_in(entry.traced.node))
        if not isinstance(made, ast.Call) or not NumpyArrays(module, entry, made).holds(made):
            return None
        function = (module.imports.resolve(made.func) or "").removeprefix("numpy.")
        if function not in JNP_FUNCTIONS:
            return None
        where = (f"`{module.segment(node)}` in `{entry.traced.qualname}` indexes `{node.value.id}`, a row of the NumPy "
                 f"array `{module.segment(made)}`, with a traced index, which raises under jit")
        fix = Fix(Safety.SAFE, f"call jnp.{function}", [_numpy_edit(module, made.func, function)])
        return self.finding(module, node, f"{where}; make it with `jnp.{function}`", fix, function=entry.traced)

    def _scipy_call(self, module: ModuleContext, entry: FunctionContext, node: ast.Call, statement: ast.stmt,
                    name: str) -> Finding | None:
        """``special.gammaln(x)`` of a tracer: SciPy converts it to a NumPy array, which a
        tracer refuses; ``jax.scipy`` has the same function for many (same name, same
        positional parameters)."""
        values = entry.values_at(statement)
        if not any(values.verdict(argument).traced for argument in (*node.args, *(k.value for k in node.keywords))):
            return None
        where = f"`{module.segment(node.func)}(...)` on a traced value in `{entry.traced.qualname}` raises under jit"
        twin = f"jax.{name}"
        if function_category(twin) is None:
            return self.finding(module, node, f"{where}; not auto-fixable: `jax.scipy` has no `{name[len('scipy.'):]}`",
                                function=entry.traced)
        if node.keywords or any(isinstance(argument, ast.Starred) for argument in node.args):
            return self.finding(module, node, f"{where}; not auto-fixable: call `{twin}` (its keyword arguments "
                                "may differ from SciPy's)", function=entry.traced)
        fix = Fix(Safety.SAFE, f"call {twin}", [_jax_function_edit(module, node.func, twin)])
        return self.finding(module, node, f"{where}; use `{twin}`", fix, function=entry.traced)

    def _math_call(self, module: ModuleContext, entry: FunctionContext, node: ast.Call, statement: ast.stmt,
                   function: str) -> Finding | None:
        """``math.sqrt(x)`` of a tracer: ``math`` takes a Python float, which a tracer refuses."""
        values = entry.values_at(statement)
        if node.keywords or not any(values.is_traced(argument) for argument in node.args):
            return None
        where = f"`{module.segment(node.func)}(...)` on a traced value in `{entry.traced.qualname}` raises under jit"
        same = MATH_AS_JNP.get(function)
        if same is None or len(node.args) != same[1]:
            return self.finding(module, node, f"{where}; not auto-fixable: no jax.numpy function is known to "
                                "behave the same", function=entry.traced)
        fix = Fix(Safety.SAFE, f"call jnp.{same[0]}", [_numpy_edit(module, node.func, same[0])])
        return self.finding(module, node, f"{where}; use `jnp.{same[0]}`", fix, function=entry.traced)


# NumPy functions that return a tuple or list of arrays (of sizes of their own), not one array.
_NUMPY_SEQUENCES = frozenset(f"numpy.{name}" for name in (
    "split", "array_split", "hsplit", "vsplit", "dsplit", "meshgrid", "nonzero", "where", "unravel_index",
    "histogram", "histogram2d", "histogramdd", "unique", "gradient", "broadcast_arrays", "atleast_1d", "atleast_2d",
    "atleast_3d", "linalg.eig", "linalg.eigh", "linalg.svd", "linalg.qr", "linalg.slogdet", "linalg.lstsq"))
# Methods of an ndarray that return an ndarray.
_NDARRAY_METHODS = frozenset({"reshape", "astype", "copy", "ravel", "flatten", "transpose", "squeeze", "clip", "cumsum",
                              "round"})


class PythonSequences:
    """Which expressions are certainly a list or tuple that ``jnp.asarray`` stacks whole: a
    display of numbers (``[1.0, 2.0, 0.5]``), a name bound once to one (in the function, or at
    the module's top level when the function binds it not) that nothing in the module changes
    in place, or a name `jitfix run` saw holding a list or tuple at that line (its items the
    run showed; a list of arrays of several shapes fails in the run that proves the fix)."""

    def __init__(self, module: ModuleContext, entry: FunctionContext, at: ast.AST):
        self.module, self.entry = module, entry
        lines = range(at.lineno, (getattr(at, "end_lineno", None) or at.lineno) + 1)  # type: ignore[attr-defined]
        self.seen = {name for line in lines for name, kind in entry.traced.seen.types.get(line, {}).items()
                     if kind in ("list", "tuple")}

    def holds(self, expr: ast.AST) -> bool:
        if isinstance(expr, ast.List | ast.Tuple):
            return bool(expr.elts) and all(_is_number(element) for element in expr.elts)
        if not isinstance(expr, ast.Name):
            return False
        if expr.id in self.seen:
            return True
        local = self.entry.arrays.bindings.get(expr.id)
        if local is not None:
            bound = local[0] if len(local) == 1 else None
        elif self.entry.traced.enclosing is None and expr.id not in parameter_names(self.entry.traced.node):
            bound = _bound_once_at_top_level(self.module, expr.id)
        else:
            return False
        # (where the module changes a list of that name in place -- `.append`, `[i] = v` -- it
        # may not hold numbers only by the time the function runs)
        return isinstance(bound, ast.List | ast.Tuple) and not self.module.traced.changes_of([expr.id]) \
            and self.holds(bound)


class NumpyArrays:
    """Which expressions are certainly one NumPy array where ``at`` is: a NumPy function's
    result (not one that returns several arrays), an ndarray method's or arithmetic's of one,
    a name bound once to one (in the function, or at module level when the function binds
    it not), or a name `jitfix run` saw holding one at that line."""

    def __init__(self, module: ModuleContext, entry: FunctionContext, at: ast.AST):
        self.module, self.entry = module, entry
        lines = range(at.lineno, (getattr(at, "end_lineno", None) or at.lineno) + 1)  # type: ignore[attr-defined]
        self.seen = {name for line in lines for name, kind in entry.traced.seen.types.get(line, {}).items()
                     if kind == "numpy.ndarray"}

    def holds(self, expr: ast.AST, depth: int = 0) -> bool:
        if depth > 8:
            return False
        if isinstance(expr, ast.Call):
            name = self.module.imports.resolve(expr.func) or ""
            if numpy_member(name) is not None:
                return name not in NUMPY_METADATA and name not in _NUMPY_SEQUENCES \
                    and not name.startswith("numpy.random.")
            return isinstance(expr.func, ast.Attribute) and expr.func.attr in _NDARRAY_METHODS \
                and self.holds(expr.func.value, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr == "T":
            return self.holds(expr.value, depth + 1)
        if isinstance(expr, ast.BinOp):
            sides = (expr.left, expr.right)
            return any(self.holds(side, depth + 1) for side in sides) and all(
                self.holds(side, depth + 1) or _is_number(side) for side in sides)
        if isinstance(expr, ast.Name):
            return expr.id in self.seen or self._bound_to_one(expr.id, depth)
        return False

    def _bound_to_one(self, name: str, depth: int) -> bool:
        function = self.entry.traced.node
        if name in parameter_names(function):
            return self._given_by_every_call(name, depth)
        local = self.entry.arrays.bindings.get(name)
        if local is not None:
            return len(local) == 1 and local[0] is not None and self.holds(local[0], depth + 1)
        if self.entry.traced.enclosing is not None:
            return False  # a name of the function around it: not followed
        bound = _bound_once_at_top_level(self.module, name)
        return bound is not None and self.holds(bound, depth + 1)


    def _given_by_every_call(self, parameter: str, depth: int) -> bool:
        """Whether every call of the function in the module (one at least) gives ``parameter``
        a NumPy array the module makes at its top level (`interp(z, Z_TABLE, CHI_TABLE)`): a
        caller elsewhere might give a jax array, but the jnp array of either is the same."""
        function = self.entry.traced.node
        if self.entry.traced.enclosing is not None or not isinstance(function, ast.FunctionDef):
            return False
        positional = positional_names(function)
        calls = self.module.traced.calls_to(function.name)
        if not calls:
            return False
        for call, scope in calls:
            argument = _argument_for(call, positional, parameter)
            if argument is None or isinstance(argument, ast.Name) and _binds_locally(scope, argument.id) \
                    or not self.holds(argument, depth + 1):
                return False
        return True


def _argument_for(call: ast.Call, positional: list[str], parameter: str) -> ast.expr | None:
    """What a call passes a parameter (None: a default, or unpacked)."""
    if any(isinstance(argument, ast.Starred) for argument in call.args) \
            or any(keyword.arg is None for keyword in call.keywords):
        return None
    if parameter in positional and positional.index(parameter) < len(call.args):
        return call.args[positional.index(parameter)]
    return next((keyword.value for keyword in call.keywords if keyword.arg == parameter), None)


def _binds_locally(scope: ast.AST, name: str) -> bool:
    """Whether a function scope binds ``name`` itself (a parameter or a store)."""
    if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return False
    return name in parameter_names(scope) or any(isinstance(node, ast.Name) and node.id == name
                                                 and not isinstance(node.ctx, ast.Load) for node in ast.walk(scope))


def _made_static_by_the_run(index: ast.expr, traced: TracedFunction) -> bool:
    """Whether ``index`` reads only parameters `jitfix run` makes static (every call gave them a
    Python value, and the failure depends on them alone, JF501): then it is a Python int."""
    names = {node.id for node in ast.walk(index) if isinstance(node, ast.Name)}
    return bool(names) and names <= traced.seen.static.keys()


def _range_loop_index(index: ast.expr, function: ast.AST) -> bool:
    """Whether ``index`` is the variable of a ``for ... in range(...)`` loop of the function."""
    return isinstance(index, ast.Name) and any(
        isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == index.id
        and is_range(node.iter) for node in nodes_of(function))


def _iterated_by_comprehension(node: ast.AST, name: str, parents: Mapping[int, ast.AST]) -> ast.expr | None:
    """What the comprehension around ``node`` that binds ``name`` (alone, as its target)
    iterates, if one does."""
    around = parents.get(id(node))
    while around is not None and not isinstance(around, ast.stmt):
        if isinstance(around, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            for generator in around.generators:
                if isinstance(generator.target, ast.Name) and generator.target.id == name:
                    return generator.iter
        around = parents.get(id(around))
    return None


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _bound_once_at_top_level(module: ModuleContext, name: str) -> ast.expr | None:
    """The value of ``name = value`` when that is the one binding of ``name`` at the module's
    top level (an imported name is bound by its import)."""
    bindings = module.cached(TOP_LEVEL_BINDINGS, lambda: _top_level_bindings(module.tree))
    values = bindings.get(name, [])
    return values[0] if len(values) == 1 and name not in module.imports.aliases else None


def _top_level_bindings(tree: ast.Module) -> dict[str, list[ast.expr | None]]:
    """What each statement of the module's top level binds each name to, in one pass (None:
    not an ``=`` of the name alone)."""
    found: dict[str, list[ast.expr | None]] = {}
    for statement in tree.body:
        names: dict[str, ast.expr | None] = {}
        if isinstance(statement, ast.Assign):
            single = statement.value if len(statement.targets) == 1 else None
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = single
                else:
                    names.update((node.id, None) for node in ast.walk(target)
                                 if isinstance(node, ast.Name) and node.id not in names)
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names[statement.target.id] = None
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[statement.name] = None
        elif isinstance(statement, ast.Import | ast.ImportFrom | ast.For | ast.With | ast.If | ast.Try):
            names.update((node.id, None) for node in ast.walk(statement)
                         if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
        for name, value in names.items():
            found.setdefault(name, []).append(value)
    return found


def _jnp_table_edit(module: ModuleContext, node: ast.Subscript) -> Edit:
    """``table[i]`` -> ``jnp.asarray(table)[i]``."""
    start, end = module.span_of(node)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Subscript)
        table = cst.parse_expression(f"{context.name('jax.numpy')}.asarray({code(updated.value)})")
        return updated.with_changes(value=table)

    return Edit(start, cst.Subscript, replace, imports=("jax.numpy",), end=end)


# Functions of Python's `math` with a jax.numpy function of the same meaning on numbers
# (a float result, as `math`'s), each with how many arguments both take. (`floor`, `ceil`
# and `trunc` return ints, `log` takes a base, `hypot` any count: not here.)
MATH_AS_JNP: dict[str, tuple[str, int]] = {
    **{name: (name, 1) for name in ("sqrt", "exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan",
                                    "sinh", "cosh", "tanh", "cbrt", "exp2", "degrees", "radians",
                                    "isnan", "isinf", "isfinite")},
    **{name: ("arc" + name[1:], 1) for name in ("asin", "acos", "atan", "asinh", "acosh", "atanh")},
    "log": ("log", 1), "fabs": ("abs", 1), "atan2": ("arctan2", 2), "pow": ("power", 2),
    "copysign": ("copysign", 2), "fmod": ("fmod", 2),
}


# Built-ins that take the truth of a comparison (or of each element) of their arguments: with
# a tracer among them they raise under jit. The jnp reduction over one array, and the
# element-wise jnp function for several arguments.
BUILTIN_REDUCTIONS = {"min": ("min", "minimum"), "max": ("max", "maximum"), "any": ("any", None),
                      "all": ("all", None), "sorted": (None, None)}


class BuiltinOnTracer(Rule):
    code = "JF604"
    name = "builtin-on-tracer"
    summary = "`min`, `max`, `any`, `all`, `sorted` take the truth of tracers, a list an `int` index; use jnp"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds the built-ins `min`, `max`, `any`, `all` and `sorted` called on traced values, "
        "and writes the `jax.numpy` function: `min(a, b)` becomes `jnp.minimum(a, b)`, `max(x)` of "
        "an array `jnp.max(x)`, `any(v > 0 for v in xs)` `jnp.any(jnp.stack([v > 0 for v in xs]))`; and a Python list or tuple indexed by a traced "
        "integer (`CLASS_WEIGHTS[label]`), which becomes the jnp array of it indexed so "
        "(`jnp.asarray(CLASS_WEIGHTS)[label]`).",
        why="These built-ins compare their arguments (or take the truth of each element) in Python; "
        "a comparison of tracers is a traced boolean, and its truth raises "
        "`TracerBoolConversionError` under `jax.jit`. `abs`, `round`, `sum`, `pow` and `divmod` "
        "call the array's own methods and work as written. A list or tuple asks its index for an "
        "`int`, which a tracer refuses (`TracerIntegerConversionError`).",
        example="@jax.jit\ndef clip(x, limit):\n    return min(x, limit)\n",
        fixed="@jax.jit\ndef clip(x, limit):\n    return jnp.where(limit < x, limit, x)\n",
        safety="`min(a, b)` and `max(a, b)` of two plain operands (names, constants, attributes, "
        "items, and arithmetic of those: `min(1.0, max_norm / norm)`) become `jnp.where(b < a, "
        "b, a)` (`>` for `max`): exactly Python's choice, also for NaN and for the gradient at a "
        "tie (it flows to `a`) -- a safe fix. Otherwise (three arguments, operands that call "
        "something, one array) the fix is `jnp.minimum`/`jnp.min`... and unsafe: at a tie "
        "`jax.grad` splits the gradient between the equal values, and a NaN wins, where Python "
        "keeps the first. `any` and `all` are safe. The value comes back "
        "as a JAX array rather than a Python number or bool. The one-argument form is fixed "
        "for an expression that is certainly an array, and for a list, tuple or generator of "
        "values (stacked with `jnp.stack`). Reported, not fixed: `key=` or `default=`, `sorted` "
        "(it returns a list; `jnp.sort` returns an array), a built-in whose name the module "
        "rebinds, and a result that must be a Python value (a shape, `range`, formatting, a slice "
        "bound -- also through the name it is bound to: `lo = max(0, i - w)`, then `x[lo:]`). One "
        "argument that may be a dict of tracers (`sorted(params)`) is not reported: Python iterates "
        "its keys, which are Python values. A list or tuple indexed by a traced integer is rewritten where "
        "it certainly holds numbers only (a display of numbers, or a name bound once to one -- in the "
        "function, or at the module's top level -- that nothing in the module changes in place), or where "
        "`jitfix run` saw the name hold a list or tuple at that line (the run that proves the fix shows its "
        "items stack: arrays of one shape); every call that reached it failed before. The item comes back "
        "as a 0-d array of JAX's default dtype rather than a Python number (a weak type): beside an array "
        "of a narrower dtype (bfloat16, int8) the result is promoted to it.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        rebound = _module_bindings(module)
        for entry in function_contexts(module):
            function = entry.traced.node
            local = entry.arrays.params | set(entry.arrays.bindings)
            parents = None
            for node, statement in own_expressions(function):
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                    if entry.values_at(statement).is_traced(node.slice):
                        found = self._sequence_indexed(module, entry, node)
                        if found is not None:
                            yield found
                    continue
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id in BUILTIN_REDUCTIONS) or node.func.id in rebound | local:
                    continue
                values = entry.values_at(statement)
                arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
                if not any(values.is_traced(argument) for argument in arguments):
                    continue
                if len(node.args) == 1 and not (entry.arrays.proven(node.args[0], values)
                                                or isinstance(node.args[0], _SEQUENCES)):
                    continue  # one argument that may be a dict of tracers: `sorted(params)` sorts its keys
                parents = parents or _parents(function)
                name = node.func.id
                where = f"`{name}()` of a traced value in `{entry.traced.qualname}`"
                problem = _builtin_unfixable(node, parents, function)
                if problem:
                    yield self.finding(module, node, f"{where} raises under jit; not auto-fixable: {problem}",
                                       function=entry.traced)
                    continue
                reduction, elementwise = BUILTIN_REDUCTIONS[name]
                if _as_choice(node):
                    replacement, safety = "jnp.where", Safety.SAFE
                elif len(node.args) > 1:
                    replacement, safety = f"jnp.{elementwise}", Safety.UNSAFE
                else:
                    replacement = f"jnp.{reduction}"
                    safety = Safety.SAFE if name in {"any", "all"} else Safety.UNSAFE
                description = f"call {replacement}" + (
                    "" if safety is Safety.SAFE else " (unsafe: at a tie jax.grad splits the gradient, and NaN wins)")
                fix = Fix(safety, description, [_builtin_edit(module, node)])
                yield self.finding(module, node, f"{where} raises under jit; use `{replacement}`", fix,
                                   function=entry.traced)

    def _sequence_indexed(self, module: ModuleContext, entry: FunctionContext, node: ast.Subscript) -> Finding | None:
        """``seq[i]`` of a Python list or tuple with a traced index: the list asks the tracer for
        an ``int`` (``TracerIntegerConversionError``); the jnp array of a list of numbers, or of
        arrays of one shape, takes it."""
        if isinstance(node.slice, ast.Tuple | ast.Slice) or _range_loop_index(node.slice, entry.traced.node) \
                or _made_static_by_the_run(node.slice, entry.traced) \
                or not PythonSequences(module, entry, node).holds(node.value):
            return None  # (a `range` loop's index: the loop's rule makes the bound static or the loop lax's)
        table = module.segment(node.value)
        where = (f"`{module.segment(node)}` in `{entry.traced.qualname}` indexes the Python sequence `{table}` with a "
                 "traced index: it needs an `int`, so it raises under jit")
        fix = Fix(Safety.SAFE, "index the jnp array of it", [_jnp_table_edit(module, node)])
        return self.finding(module, node, f"{where}; index `jnp.asarray({table})`", fix, function=entry.traced)


_SEQUENCES = (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)
_CHOICE_TESTS = {"min": "<", "max": ">"}  # Python keeps the first argument unless the second beats it


def _as_choice(node: ast.Call) -> bool:
    """``min(a, b)`` of two plain operands: written as the choice Python makes, each operand
    spelled twice. Arithmetic of plain values computes the same value twice (XLA computes it
    once); a call might not (a random draw, a side effect), and is not plain."""
    return node.func.id in _CHOICE_TESTS and len(node.args) == 2 and all(map(_plain, node.args))  # type: ignore[attr-defined]


def _plain(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Name | ast.Constant):
        return True
    if isinstance(expr, ast.Attribute):
        return _plain(expr.value)
    if isinstance(expr, ast.Subscript):
        return _plain(expr.value) and _plain(expr.slice)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _plain(expr.operand)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITHMETIC):
        return _plain(expr.left) and _plain(expr.right)
    return False


# Binary operators that bind tighter than the comparison the choice adds (all of Python's do).
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _builtin_unfixable(node: ast.Call, parents: dict[int, ast.AST], function: ast.AST) -> str | None:
    name = node.func.id  # type: ignore[attr-defined]
    if name == "sorted":
        return "`sorted` returns a Python list; `jnp.sort(x)` returns an array"
    if node.keywords:
        return f"`{node.keywords[0].arg or '**'}=` has no jnp equivalent"
    if not node.args or any(isinstance(argument, ast.Starred) for argument in node.args):
        return "its arguments are unpacked"
    if len(node.args) > 1 and BUILTIN_REDUCTIONS[name][1] is None:
        return f"`{name}()` takes one iterable"
    return _needs_python_value(node, parents, function)


def _module_bindings(module: ModuleContext) -> set[str]:
    """Names the module binds at its top level (a def, class, import or assignment): there a
    built-in's name means something else."""
    names = set(module.imports.aliases)
    for statement in module.tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for target in statement.targets if isinstance(statement, ast.Assign) else [statement.target]:
                names.update(node.id for node in ast.walk(target) if isinstance(node, ast.Name))
    return names


def _builtin_edit(module: ModuleContext, node: ast.Call) -> Edit:
    start, end = module.span_of(node)
    name = node.func.id  # type: ignore[attr-defined]
    reduction, elementwise = BUILTIN_REDUCTIONS[name]
    choice = _as_choice(node)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(updated, cst.Call)
        jnp = context.name("jax.numpy")
        arguments = [code(argument.value) for argument in updated.args]
        if choice:  # min(a, b) -> jnp.where(b < a, b, a)
            first, second = arguments
            source = f"{jnp}.where({second} {_CHOICE_TESTS[name]} {first}, {second}, {first})"
        elif len(arguments) > 1:  # min(a, b, c) -> jnp.minimum(jnp.minimum(a, b), c)
            source = arguments[0]
            for argument in arguments[1:]:
                source = f"{jnp}.{elementwise}({source}, {argument})"
        else:
            value = updated.args[0].value
            if isinstance(value, cst.GeneratorExp):  # a generator is not a sequence: its list is
                value = cst.ListComp(elt=value.elt, for_in=value.for_in)
            stacked = code(value)
            if isinstance(value, cst.List | cst.Tuple | cst.ListComp):
                stacked = f"{jnp}.stack({stacked})"
            source = f"{jnp}.{reduction}({stacked})"
        return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)

    return Edit(start, cst.Call, replace, imports=("jax.numpy",), end=end)


def _jax_function_edit(module: ModuleContext, func: ast.AST, dotted: str) -> Edit:
    """The function a call names (``special.gammaln``, ``gammaln``) -> JAX's, by its path."""
    start, end = module.span_of(func)

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        return cst.parse_expression(context.name(dotted))

    return Edit(start, cst.Attribute if isinstance(func, ast.Attribute) else cst.Name, replace, imports=(dotted,),
                end=end)


def _numpy_edit(module: ModuleContext, func: ast.AST, function: str) -> Edit:
    start, end = module.span_of(func)
    node_type = cst.Attribute

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        return cst.parse_expression(f"{context.name('jax.numpy')}.{function}")

    return Edit(start, node_type, replace, imports=("jax.numpy",), end=end)


class InPlaceUpdate(Rule):
    code = "JF603"
    name = "in-place-update"
    summary = "JAX arrays are immutable: `x[i] = v` fails; use `x = x.at[i].set(v)`"
    fixable = "sometimes"
    doc = RuleDoc(
        what="Finds item assignments and augmented item assignments to JAX arrays in traced code "
        "(`x[i] = v`, `x[i, j] += v`, `x[1:3] *= 2`) and writes the functional update.",
        why="JAX arrays cannot be changed in place; under `jax.jit` the assignment raises "
        "`TypeError: JAX arrays are immutable`. `x.at[i].set(v)` returns the updated array, and "
        "XLA performs it in place when it can.",
        example="@jax.jit\ndef bump(x, i):\n    y = jnp.zeros(3)\n    y[i] += x\n    return y\n",
        fixed="@jax.jit\ndef bump(x, i):\n    y = jnp.zeros(3)\n    y = y.at[i].add(x)\n    return y\n",
        safety="Safe when the array is made in the function (`jnp.zeros(...)`, arithmetic): nobody "
        "else sees it; and when it is an argument annotated a JAX array (`x: jax.Array`) of a function "
        "jitted where it is defined that reads the updated array afterwards (returns it): every call "
        "raised before, and the update reaches the result. Unsafe for another argument: a NumPy array "
        "passed in used to be changed for the caller too, and no longer is (under jit it could not be "
        "changed at all). `+=`, "
        "`-=`, `*=`, `/=`, `**=` map to `add`, `subtract`, `multiply`, `divide`, `power`; other "
        "operators, and items of attributes (`self.x[i] = v`), are reported.",
    )

    def check(self, module: ModuleContext) -> Iterator[Finding]:
        for entry in function_contexts(module):
            arrays = entry.arrays
            for statement in _own_statements(entry.traced.node):
                target = _item_target(statement)
                if target is None:
                    continue
                values = entry.values_at(statement)
                made_by_numpy = _numpy_allocations(module, arrays, target.value)
                traced_array = values.is_traced(target.value) and arrays.proven(target.value, values)
                # A NumPy array cannot hold a tracer either: it becomes a jnp array.
                numpy_receiving_tracer = made_by_numpy is not None and (
                    values.is_traced(statement.value) or values.is_traced(target.slice))
                if not (traced_array or numpy_receiving_tracer):
                    continue
                where = f"item assignment to traced array `{module.segment(target.value)}` in `{entry.traced.qualname}`"
                if not isinstance(target.value, ast.Name):
                    yield self.finding(module, statement, f"{where}; not auto-fixable: the array is an "
                                       "attribute or item of something else", function=entry.traced)
                    continue
                if isinstance(statement, ast.AugAssign) and type(statement.op) not in UPDATE_METHODS:
                    yield self.finding(module, statement, f"{where}; not auto-fixable: `.at[]` has no method "
                                       "for this operator", function=entry.traced)
                    continue
                argument = target.value.id in arrays.params
                safety = Safety.UNSAFE if argument and not _update_always_failed(
                    module, entry.traced, statement, target.value.id) else Safety.SAFE
                masked = is_boolean_mask(target.slice, module.imports, arrays.bindings, entry.masks) \
                    and values.is_traced(target.slice)
                if masked and _number(statement.value) is None:
                    yield self.finding(module, statement, f"{where}; not auto-fixable: a traced boolean mask "
                                       "selects a number of elements known only from the data, and `.at[mask]` "
                                       "raises under jit too: write `x = jnp.where(mask, new, x)`",
                                       function=entry.traced)
                    continue
                method = "jnp.where" if masked else ".at[...]"
                description = f"use {method}" + (" (unsafe: an argument; the caller's array is no longer "
                                                 "changed)" if safety is Safety.UNSAFE else "")
                edits = [_masked_edit(module, statement) if masked else _update_edit(module, statement)]
                for call in made_by_numpy or []:
                    function = (module.imports.resolve(call.func) or "")[len("numpy."):]
                    edits.append(_numpy_edit(module, call.func, function))
                if made_by_numpy:
                    description += "; the NumPy array it updates becomes a jnp array"
                fix = Fix(safety, description, edits)
                yield self.finding(module, statement, f"{where}: JAX arrays are immutable; use `{method}`", fix,
                                   function=entry.traced)


def _update_always_failed(module: ModuleContext, traced: TracedFunction, statement: ast.stmt, name: str) -> bool:
    """Whether writing into argument ``name`` never changed a caller's array: the parameter
    is annotated a JAX array (immutable, eagerly too: `.at` then works with jit disabled as
    well), the function is jitted where it is defined (every call passes tracers, and the
    write raised), and the code reads the updated array afterwards (returned, or used), so
    the update reaches the result rather than being lost."""
    node = traced.node
    annotation = next((arg.annotation for arg in ast.walk(node.args) if isinstance(arg, ast.arg) and arg.arg == name),
                      None)
    if annotation is None or module.imports.resolve(annotation) not in JAX_ARRAY_TYPES:
        return False
    decorated = any(site is decorator or any(part is site for part in ast.walk(decorator))
                    for site in traced.jit_sites for decorator in node.decorator_list)
    if not decorated:
        return False
    loops = [loop for loop in ast.walk(node) if isinstance(loop, ast.For | ast.While)
             and any(part is statement for part in ast.walk(loop))]
    after = (statement.end_lineno or statement.lineno, statement.end_col_offset or 0)
    for read in walk_body(node):
        if isinstance(read, ast.Name) and read.id == name and isinstance(read.ctx, ast.Load) \
                and not any(part is read for part in ast.walk(statement)):
            if (read.lineno, read.col_offset) > after or any(part is read for loop in loops for part in ast.walk(loop)):
                return True
    return False


JAX_ARRAY_TYPES = frozenset({"jax.Array", "jax.numpy.ndarray"})  # never a NumPy array


# NumPy constructors jax.numpy has under the same name.
NUMPY_ALLOCATIONS = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "full_like",
                               "empty_like", "array", "asarray", "copy", "arange", "eye", "identity"})


def _numpy_allocations(module: ModuleContext, arrays: ArrayEvidence, array: ast.AST) -> list[ast.Call] | None:
    """The np.zeros(...)-like calls that make a local array, if every binding of it is one."""
    if not isinstance(array, ast.Name) or array.id in arrays.params:
        return None
    bindings = arrays.bindings.get(array.id, [])
    calls: list[ast.Call] = []
    for value in bindings:
        name = module.imports.resolve(value.func) if isinstance(value, ast.Call) else None
        if numpy_member(name) not in NUMPY_ALLOCATIONS:
            return None
        calls.append(value)  # type: ignore[arg-type]
    return calls or None


def _own_statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Assign | ast.AugAssign]:
    for node in walk_body(function):
        if isinstance(node, ast.Assign | ast.AugAssign):
            yield node


def _item_target(statement: ast.stmt) -> ast.Subscript | None:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Subscript):
        return statement.targets[0]
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Subscript):
        return statement.target
    return None


def _number(value: ast.AST) -> ast.AST | None:
    """A number literal (``0.0``, ``-1``): the same for every element a mask selects."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub | ast.UAdd):
        return value if _number(value.operand) is not None else None
    is_number = isinstance(value, ast.Constant) and isinstance(value.value, int | float) \
        and not isinstance(value.value, bool)
    return value if is_number else None


def _masked_edit(module: ModuleContext, statement: ast.Assign | ast.AugAssign) -> Edit:
    """``x[mask] = 0.0`` -> ``x = jnp.where(mask, 0.0, x)``; ``x[mask] += 1.0`` -> ``x =
    jnp.where(mask, x + 1.0, x)``: the shape kept, each selected element given its value."""
    start = module.start_of(statement)
    operator = None if isinstance(statement, ast.Assign) else _OPERATOR_TEXT[type(statement.op)]
    # An int keeps any array's dtype (it is weakly typed); a float would make an int array
    # float, where the write casts it back: the result is cast to the array's dtype.
    number = _number(statement.value)
    cast = not (isinstance(number, ast.Constant) and isinstance(number.value, int)
                or isinstance(number, ast.UnaryOp) and isinstance(number.operand, ast.Constant)
                and isinstance(number.operand.value, int)) or operator in ("/", "**")

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        target = updated.targets[0].target if isinstance(updated, cst.Assign) else updated.target  # type: ignore[attr-defined]
        value = code(updated.value)  # type: ignore[attr-defined]
        assert isinstance(target, cst.Subscript)
        array, mask = code(target.value), code(target.slice[0].slice.value)  # type: ignore[attr-defined]
        new = value if operator is None else f"{array} {operator} {value}"
        where = f"{context.name('jax.numpy')}.where({mask}, {new}, {array})"
        return small_statement(f"{array} = {where}.astype({array}.dtype)" if cast else f"{array} = {where}")

    node_type = cst.Assign if isinstance(statement, ast.Assign) else cst.AugAssign
    return Edit(start, node_type, replace, imports=("jax.numpy",))


_OPERATOR_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def _update_edit(module: ModuleContext, statement: ast.Assign | ast.AugAssign) -> Edit:
    start = module.start_of(statement)
    method = "set" if isinstance(statement, ast.Assign) else UPDATE_METHODS[type(statement.op)]

    def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        if isinstance(updated, cst.Assign):
            target, value = updated.targets[0].target, updated.value
        else:
            assert isinstance(updated, cst.AugAssign)
            target, value = updated.target, updated.value
        assert isinstance(target, cst.Subscript)
        array = code(target.value)
        index = code(target).removeprefix(array)
        return small_statement(f"{array} = {array}.at{index}.{method}({code(value)})")

    node_type = cst.Assign if isinstance(statement, ast.Assign) else cst.AugAssign
    return Edit(start, node_type, replace)


# NumPy's conversions: code that calls one wants a NumPy array to hand on.
_CONVERSIONS = frozenset({"array", "asarray", "asanyarray", "ascontiguousarray"})


def _handed_to_numpy_code(module: ModuleContext, entry: FunctionContext, conversion: ast.Call) -> str | None:
    """The call (``cls(values, ...)``, ``algorithm(values)``) that the array a NumPy conversion
    makes is handed to -- directly, or through the name it is bound to -- where that callee is
    neither JAX's nor a function of the module the analysis traces: code written for the NumPy
    array, which the jnp one would not help (it fails there instead). None where every use is
    JAX's to take."""
    function = entry.traced.node
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    parents = parents_in(function)
    parent = parents.get(id(conversion))
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Attribute):
        return _stored_for_numpy(module, function, parent.targets[0])
    uses: list[ast.AST] = [conversion]
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        uses = [node for node in walk_body(function) if isinstance(node, ast.Name) and node.id == name
                and isinstance(node.ctx, ast.Load) and node.lineno >= parent.lineno and node is not parent.targets[0]]
    program = module.traced.program
    for use in uses:
        call = parents.get(id(use))
        if not isinstance(call, ast.Call) or use is call.func:
            continue
        resolved = module.imports.resolve(call.func) or ""
        callee = call.func.id if isinstance(call.func, ast.Name) else None
        if resolved or callee is None or _builtin(module, function, callee):
            continue  # (a library's function, a method, `len`)
        definition = program.scopes.lookup(function, callee, call.lineno) if program is not None else None
        if definition is not None and definition in module.traced:
            continue  # (a def of the module the analysis traces: its own NumPy calls are found there)
        return f"`{module.segment(call.func)}(...)` at line {call.lineno}"
    return None


def _stored_for_numpy(module: ModuleContext, function: ast.FunctionDef | ast.AsyncFunctionDef,
                      target: ast.Attribute) -> str | None:
    """``self.values = np.asarray(...)`` in a method, where another method of the class gives
    ``self.values`` to NumPy (``np.empty_like(self.values)``): the class keeps a NumPy array
    for NumPy code."""
    if not isinstance(target.value, ast.Name):
        return None
    program = module.traced.program
    klass = program.scopes.parent.get(function) if program is not None else None
    if not isinstance(klass, ast.ClassDef):
        return None
    for method in klass.body:
        if method is function or not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for call in ast.walk(method):
            if isinstance(call, ast.Call) and (module.imports.resolve(call.func) or "").startswith("numpy.") \
                    and any(isinstance(read, ast.Attribute) and read.attr == target.attr
                            and isinstance(read.value, ast.Name) and read.value.id == target.value.id
                            for argument in call.args for read in ast.walk(argument)):
                return (f"`{module.segment(target)}`, which `{klass.name}.{method.name}` gives to "
                        f"`{module.segment(call.func)}` at line {call.lineno}")
    return None


def _builtin(module: ModuleContext, function: ast.AST, name: str) -> bool:
    """Whether ``name``, read in ``function``, is Python's builtin of that name."""
    program = module.traced.program
    return hasattr(builtins, name) and (program is None or program.scopes.binding_scope(function, name) is None)

