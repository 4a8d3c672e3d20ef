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


@dataclass(frozen=True)
class ConfigField:
    """``param.name`` where ``param`` is a pytree of the module's class ``klass`` whose field
    ``name`` (declared ``statement``) is an ``int`` leaf."""

    expr: ast.Attribute
    klass: ast.ClassDef
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
            given = _given(node, self.klass, self.name, module)
            if given is not None and not _python_int(given):
                return (f"line {given.lineno} gives `{self.name}` `{module.segment(given)}`, not known to be a "
                        "Python int (a static field must hold one: it is hashed, and never traced)")
        return None

    def fix(self, module: ModuleContext) -> Fix:
        function, keywords = _STATIC_FIELD[self.registration]
        default = self.statement.value
        given = f"default={module.segment(default)}, " if default is not None else ""

        def replace(node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            assert isinstance(node, cst.AnnAssign)
            value = cst.parse_expression(f"{context.name(function)}({given}{keywords})")
            return node.with_changes(value=value, equal=node.equal if default is not None else cst.AssignEqual())

        edit = Edit(module.start_of(self.statement), cst.AnnAssign, replace, imports=(function,))
        return Fix(Safety.SAFE, f"declare `{self.klass.name}.{self.name}` static", [edit])


def config_field(expr: ast.AST, traced: TracedFunction, module: ModuleContext) -> ConfigField | None:
    """``expr`` as such a field read in ``traced``, a function ``jax.jit`` traces (under
    ``eqx.filter_jit`` an int leaf is static already), with ``param`` a traced parameter whose
    class the analysis knows (an annotation, or what every call gives it)."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)
            and expr.value.id in traced.traced_params and _jitted_by_jax(traced, module)):
        return None
    class_name = traced.param_classes.get(expr.value.id)
    program = traced.program
    if class_name is None or program is None:
        return None
    klass = next((node for node in ast.walk(module.tree) if isinstance(node, ast.ClassDef)
                  and node.name == class_name), None)
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
    return ConfigField(expr, klass, statement, registration)


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


def _given(call: ast.Call, klass: ast.ClassDef, name: str, module: ModuleContext) -> ast.expr | None:
    """What ``call`` gives field ``name`` of ``klass``: a construction (by keyword, or by
    position in the declared order) or a ``replace(obj, name=...)`` / ``obj.replace(name=...)``."""
    keyword = next((k.value for k in call.keywords if k.arg == name), None)
    resolved = module.imports.resolve(call.func)
    if isinstance(call.func, ast.Name) and call.func.id == klass.name:
        if any(isinstance(argument, ast.Starred) for argument in call.args) \
                or any(k.arg is None for k in call.keywords):
            return call  # (what `*args`/`**kwargs` give it is not known)
        if keyword is not None:
            return keyword
        fields = [node.target.id for node in klass.body if isinstance(node, ast.AnnAssign)
                  and isinstance(node.target, ast.Name)]
        index = fields.index(name) if name in fields else len(call.args)
        return call.args[index] if index < len(call.args) else None
    if keyword is not None and (resolved == "dataclasses.replace"
                                or isinstance(call.func, ast.Attribute) and call.func.attr == "replace"):
        return keyword
    return None


def _python_int(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) is int \
        or isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and _python_int(expr.operand)
