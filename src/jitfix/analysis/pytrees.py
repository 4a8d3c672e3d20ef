"""Which fields of the module's pytree classes are traced, static, or not known.

Under ``jax.jit`` a pytree's leaves become tracers and its auxiliary data stays Python. The
classes declare which is which, and jitfix reads the declaration:

- ``flax.struct.dataclass`` / ``PyTreeNode``: ``flax.struct.field(pytree_node=False)`` is static;
- ``equinox.Module``: ``eqx.field(static=True)`` (or ``dataclasses.field(metadata={"static": True})``);
- ``jax.tree_util.register_dataclass``: its ``meta_fields`` are static, ``data_fields`` leaves;
- ``register_pytree_node_class``: what ``tree_flatten`` returns as aux data is static;
- ``NamedTuple`` and ``chex.dataclass``: every field is a leaf;
- ``flax.nnx.Module``: its attributes are set in ``__init__``, not declared, so none is known
  (an array in an ``nnx.Variable`` is traced, a Python value static): the class is known, so
  ``model(x)`` in ``nnx.jit`` code runs its ``__call__``, and its attributes stay unknown.

A leaf is known to be traced only when it is annotated as an array (an ``int`` leaf is
traced by ``jax.jit`` but static under ``eqx.filter_jit``); any other leaf is unknown, as is
every attribute of a class jitfix cannot see.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jitfix.analysis.catalogue import is_array_annotation
from jitfix.analysis.imports import ImportTable

TRACED_FIELD, STATIC_FIELD, UNKNOWN_FIELD = "traced", "static", "unknown"

DATACLASS_DECORATORS = frozenset({"flax.struct.dataclass", "chex.dataclass", "chex.mappable_dataclass",
                                  "jax.tree_util.register_dataclass"})
PYTREE_BASES = frozenset({"equinox.Module", "flax.struct.PyTreeNode", "flax.nnx.Module", "typing.NamedTuple",
                          "NamedTuple"})
NODE_CLASS_DECORATORS = frozenset({"jax.tree_util.register_pytree_node_class",
                                   "jax.tree_util.register_pytree_with_keys_class"})
STATIC_FIELD_CALLS = {"flax.struct.field": ("pytree_node", False), "equinox.field": ("static", True),
                      "equinox.static_field": (None, True)}


@dataclass
class PytreeClass:
    name: str
    fields: dict[str, str] = field(default_factory=dict)
    # The constructor's parameters, in order, where they are the declared fields (a
    # dataclass or NamedTuple with no `__init__` of its own and no fields from another base).
    made_with: tuple[str, ...] | None = None

    def field_kind(self, name: str) -> str:
        return self.fields.get(name, UNKNOWN_FIELD)

    def given(self, call: ast.Call) -> dict[str, ast.expr] | None:
        """What a call of the class gives each field, by name; None when it cannot be read
        (the constructor's parameters are not known, ``*args``/``**kwargs``, an unknown name)."""
        if self.made_with is None or len(call.args) > len(self.made_with) \
                or any(isinstance(argument, ast.Starred) for argument in call.args):
            return None
        given = dict(zip(self.made_with, call.args))
        for keyword in call.keywords:
            if keyword.arg is None or keyword.arg not in self.made_with or keyword.arg in given:
                return None
            given[keyword.arg] = keyword.value
        return given


def _keyword(call: ast.Call, name: str) -> ast.AST | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _is_constant(node: ast.AST | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


def _static_metadata(node: ast.AST | None) -> bool:
    """``metadata={"static": True}`` or ``metadata=dict(static=True)``."""
    if isinstance(node, ast.Dict):
        return any(isinstance(key, ast.Constant) and key.value == "static" and _is_constant(value, True)
                   for key, value in zip(node.keys, node.values))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return _is_constant(_keyword(node, "static"), True)
    return False


def _literal_names(node: ast.AST | None) -> set[str]:
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return {element.value for element in node.elts
                if isinstance(element, ast.Constant) and isinstance(element.value, str)}
    return set()


class PytreeIndex:
    """The pytree classes defined in one module, by name."""

    def __init__(self, classes: list[ast.ClassDef], imports: ImportTable, calls: list[ast.Call]):
        self.imports = imports
        self.classes: dict[str, PytreeClass] = {}
        registered = self._registered_by_call(calls)
        for node in classes:
            found = self._read(node, registered.get(node.name))
            if found is not None:
                self.classes[node.name] = found

    def get(self, name: str | None) -> PytreeClass | None:
        return self.classes.get(name) if name else None

    def _registered_by_call(self, calls: list[ast.Call]) -> dict[str, tuple[set[str], set[str]]]:
        """``jax.tree_util.register_dataclass(Cls, data_fields=[...], meta_fields=[...])``."""
        found = {}
        for call in calls:
            if self.imports.resolve(call.func) == "jax.tree_util.register_dataclass" and call.args \
                    and isinstance(call.args[0], ast.Name):
                found[call.args[0].id] = (_literal_names(_keyword(call, "data_fields")),
                                          _literal_names(_keyword(call, "meta_fields")))
        return found

    def _decorator(self, decorator: ast.AST) -> tuple[str | None, ast.Call | None]:
        """What a decorator names, and the call that configures it (``partial(f, ...)`` too)."""
        if not isinstance(decorator, ast.Call):
            return self.imports.resolve(decorator), None
        name = self.imports.resolve(decorator.func)
        if name == "functools.partial" and decorator.args:
            return self.imports.resolve(decorator.args[0]), decorator
        return name, decorator

    def _read(self, node: ast.ClassDef, registered: tuple[set[str], set[str]] | None) -> PytreeClass | None:
        described = [self._decorator(d) for d in node.decorator_list]
        decorators = [name for name, _ in described]
        bases = {self.imports.resolve(base) or (base.id if isinstance(base, ast.Name) else None)
                 for base in node.bases}
        klass = PytreeClass(node.name)
        if any(name in NODE_CLASS_DECORATORS for name in decorators):
            self._read_flatten(node, klass)
            return klass
        is_dataclass = any(name in DATACLASS_DECORATORS for name in decorators) or bool(bases & PYTREE_BASES)
        if not is_dataclass and registered is None:
            return None
        meta: set[str] = set()
        for name, call in described:
            if call is not None and name == "jax.tree_util.register_dataclass":
                meta |= _literal_names(_keyword(call, "meta_fields"))
        if registered is not None:
            meta |= registered[1]
        own_init = any(isinstance(statement, ast.FunctionDef) and statement.name == "__init__"
                       for statement in node.body)
        if bases <= PYTREE_BASES - {"flax.nnx.Module"} and not own_init:
            klass.made_with = tuple(statement.target.id for statement in node.body
                                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                                    and not self._outside_init(statement.value)
                                    and "ClassVar" not in ast.dump(statement.annotation))
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                name = statement.target.id
                if name in meta or self._declared_static(statement.value):
                    klass.fields[name] = STATIC_FIELD
                elif self._array_annotation(statement.annotation):
                    klass.fields[name] = TRACED_FIELD
                else:
                    klass.fields[name] = UNKNOWN_FIELD
        return klass

    def _outside_init(self, value: ast.AST | None) -> bool:
        """A field the constructor does not take (``field(init=False)``), or a ``ClassVar``-like
        one cannot be told: any ``field(...)`` call with ``init=`` counts."""
        return isinstance(value, ast.Call) and _keyword(value, "init") is not None

    def _declared_static(self, value: ast.AST | None) -> bool:
        if not isinstance(value, ast.Call):
            return False
        called = self.imports.resolve(value.func)
        if called in STATIC_FIELD_CALLS:
            keyword, expected = STATIC_FIELD_CALLS[called]
            return keyword is None or _is_constant(_keyword(value, keyword), expected)
        if called == "dataclasses.field":
            return _static_metadata(_keyword(value, "metadata"))
        return False

    def _array_annotation(self, annotation: ast.AST) -> bool:
        if isinstance(annotation, ast.Subscript):  # Float[Array, "n"]
            annotation = annotation.value
        return is_array_annotation(self.imports.resolve(annotation))

    @staticmethod
    def _read_flatten(node: ast.ClassDef, klass: PytreeClass) -> None:
        """``def tree_flatten(self): return (self.a, self.b), (self.n,)``: a and b are
        leaves (kind unknown), n is static."""
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef) and statement.name in {"tree_flatten",
                                                                              "tree_flatten_with_keys"}:
                for inner in ast.walk(statement):
                    if isinstance(inner, ast.Return) and isinstance(inner.value, ast.Tuple) \
                            and len(inner.value.elts) == 2:
                        children, aux = inner.value.elts
                        for attribute in ast.walk(aux):
                            if isinstance(attribute, ast.Attribute) and isinstance(attribute.value, ast.Name):
                                klass.fields[attribute.attr] = STATIC_FIELD
                        for attribute in ast.walk(children):
                            if isinstance(attribute, ast.Attribute) and isinstance(attribute.value, ast.Name):
                                klass.fields.setdefault(attribute.attr, UNKNOWN_FIELD)
