"""A pytree's integer field that sets a shape: declare it static (JF501).

``@jax.tree_util.register_dataclass`` (or ``flax.struct.dataclass``) makes every field a leaf
unless it is declared static, and ``jax.jit`` traces every leaf -- a Python ``int`` too. A
configuration field used as a size (``jnp.zeros((params.max_iters,))``) is then a tracer
where a shape needs a Python value. Declared static (``dataclasses.field(metadata=dict(
static=True))``, ``flax.struct.field(pytree_node=False)``), it is part of the tree's
structure: a Python value in the trace, and a new value compiles again.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jitfix.analysis.pytrees import PytreeClass
from jitfix.analysis.traced_function import TracedFunction
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext, Fix, Safety
from jitfix.rules.base import ModuleContext

# How each registration declares a field static: the field call, and the keywords it needs.
_STATIC_FIELD = {
    "jax.tree_util.register_dataclass": ("dataclasses.field", "metadata=dict(static=True)"),
    "flax.struct.dataclass": ("flax.struct.field", "pytree_node=False"),
}
_JITS = frozenset({"jax.jit"})
# What no longer sees a field once it is static (the tree's leaves), by module.
_TREE_FUNCTIONS = ("jax.tree_util.", "jax.tree.", "flax.serialization.", "optax.", "orbax.")


@dataclass(frozen=True)
class ConfigField:
    """``param.name`` where ``param`` is a pytree of the module's class ``klass`` whose field
    ``name`` (declared ``statement``) is an ``int`` leaf."""

    expr: ast.Attribute
    klass: ast.ClassDef
    pytree: PytreeClass
    statement: ast.AnnAssign
    registration: str

    @property
    def name(self) -> str:
        assert isinstance(self.statement.target, ast.Name)
        return self.statement.target.id

    def why_not(self, module: ModuleContext) -> str | None:
        """Why declaring the field static could break the module (None: it cannot): every
        instance the module makes, or copies with ``replace``, gives it a Python int (or leaves
        its default), so it holds a hashable Python value wherever the tree is flattened."""
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            given = _given(node, self.klass, self.name, module, self.pytree)
            if given is not None and not _python_int(given):
                what = f"`{module.segment(given)}`" if given is not node else f"what `{module.segment(node.func)}(...)` " \
                    "passes"
                return (f"line {node.lineno} gives `{self.name}` {what}, not known to be a Python int (a static field "
                        "must hold one: it is hashed, and never traced)")
        return None

    def safety(self, module: ModuleContext) -> tuple[Safety, str]:
        """A static field leaves the tree's leaves: a `tree_map`, a flatten or a checkpoint of
        the object no longer sees it. Safe where the module does none of that to anything;
        flax's classes are checkpointed by their fields (`to_state_dict`), so never there."""
        if self.registration == "flax.struct.dataclass":
            return Safety.UNSAFE, " (unsafe: flax's serialization no longer writes or reads the field)"
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and (module.imports.resolve(node.func) or "").startswith(_TREE_FUNCTIONS):
                return Safety.UNSAFE, (f" (unsafe: line {node.lineno} calls `{module.segment(node.func)}`, which no "
                                       "longer sees the field if it is given this object)")
        return Safety.SAFE, ""

    def fix(self, module: ModuleContext) -> Fix:
        function, keywords = _STATIC_FIELD[self.registration]
        default = self.statement.value
        given = f"default={module.segment(default)}, " if default is not None else ""

        def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            assert isinstance(node, cst.AnnAssign)
            value = cst.parse_expression(f"{context.name(function)}({given}{keywords})")
            return node.with_changes(value=value, equal=node.equal if default is not None else cst.AssignEqual())

        edit = Edit(module.start_of(self.statement), cst.AnnAssign, replace, imports=(function,))
        safety, unsafe = self.safety(module)
        return Fix(safety, f"declare `{self.klass.name}.{self.name}` static{unsafe}", [edit])


def config_field(expr: ast.AST, traced: TracedFunction, module: ModuleContext) -> ConfigField | None:
    """``expr`` as such a field read in ``traced``, a function ``jax.jit`` traces (under
    ``eqx.filter_jit`` an int leaf is static already), with ``param`` a traced parameter whose
    class the analysis knows (an annotation, or what every call gives it)."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id in traced.traced_params and _jitted_by_jax(traced, module)):
        return None
    class_name = traced.param_classes.get(expr.value.id)
    program = module.traced.program
    if class_name is None or program is None:
        return None
    klass = program.scopes.lookup_class(traced.node, class_name)
    pytree = program.pytrees.get(class_name)
    if klass is None or pytree is None or pytree.field_kind(expr.attr) == "static":
        return None
    registration = _registration(klass, module)
    statement = next((node for node in klass.body if isinstance(node, ast.AnnAssign)
                      and isinstance(node.target, ast.Name) and node.target.id == expr.attr), None)
    if registration is None or statement is None or module.imports.resolve(statement.annotation) != "builtins.int" \
            and not (isinstance(statement.annotation, ast.Name) and statement.annotation.id == "int"):
        return None
    if isinstance(statement.value, ast.Call):
        return None  # (a `field(...)` of its own: its other options are the user's)
    return ConfigField(expr, klass, pytree, statement, registration)


def _jitted_by_jax(traced: TracedFunction, module: ModuleContext) -> bool:
    """Whether every jit of the function is ``jax.jit`` (a decorator, ``partial(jax.jit,
    ...)``, or a call), which traces an int leaf."""
    if not traced.jit_sites:
        return False
    for site in traced.jit_sites:
        func = site.func if isinstance(site, ast.Call) else site
        if isinstance(site, ast.Call) and module.imports.resolve(site.func) == "functools.partial" and site.args:
            func = site.args[0]
        if module.imports.resolve(func) not in _JITS:
            return False
    return True


def _registration(klass: ast.ClassDef, module: ModuleContext) -> str | None:
    """How the class is made a pytree, where it is one this module can declare a field of
    static in place: ``register_dataclass`` as a decorator that names no fields (above a
    ``dataclasses.dataclass``), or ``flax.struct.dataclass``."""
    names = {module.imports.resolve(d.func if isinstance(d, ast.Call) else d): d for d in klass.decorator_list}
    if "flax.struct.dataclass" in names:
        return "flax.struct.dataclass"
    register = names.get("jax.tree_util.register_dataclass")
    if register is not None and not isinstance(register, ast.Call) and "dataclasses.dataclass" in names:
        return "jax.tree_util.register_dataclass"
    return None


def _given(call: ast.Call, klass: ast.ClassDef, name: str, module: ModuleContext,
           pytree: PytreeClass) -> ast.expr | None:
    """What ``call`` gives field ``name`` of ``klass``: a construction (by keyword, or by
    position in the declared order) or a ``replace(obj, name=...)`` / ``obj.replace(name=...)``;
    the call itself where what it gives is not known (``cls(...)`` in a classmethod,
    ``type(self)(...)``, ``*args``/``**kwargs``); None where it gives the field nothing."""
    func = call.func
    replacing = module.imports.resolve(func) == "dataclasses.replace" \
        or isinstance(func, ast.Attribute) and func.attr == "replace"
    made_here = isinstance(func, ast.Name) and func.id == klass.name
    made_unseen = isinstance(func, ast.Name) and func.id == "cls" and _inside(call, klass) \
        or isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "type" \
        or isinstance(func, ast.Attribute) and func.attr == "__class__"
    if made_unseen or (made_here or replacing) and any(k.arg is None for k in call.keywords):
        return call
    if replacing:
        return next((k.value for k in call.keywords if k.arg == name), None)
    if not made_here:
        return None
    given = pytree.given(call)
    if given is None:
        return call  # (the constructor's parameters are not the declared fields, or `*args`)
    return given.get(name)


def _inside(node: ast.AST, klass: ast.ClassDef) -> bool:
    return any(inner is node for inner in ast.walk(klass))


def _python_int(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) is int \
        or isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and _python_int(expr.operand)
