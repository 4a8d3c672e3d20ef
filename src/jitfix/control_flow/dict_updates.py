"""Item writes into a dict of the function, written as new dicts: ``d[k] = v`` ->
``d = {**d, k: v}``, ``d[k] += v`` -> ``d = {**d, k: d[k] + v}``.

A branch or loop body that writes into a dict cannot become a ``lax`` function: both
branches run at trace time, so both writes would happen. When nothing else can hold the dict
(``analysis.blocks.private_dicts``: made in the function, used only through its items), the
write means the same as binding the name to a new dict, which a branch function returns
like any value. Offered only when the rewrite then takes the statement (the caller checks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from jitfix.cst_text import code
from jitfix.findings import EditError

# Augmented operators and the binary operators they stand for.
_BINARY: dict[type[cst.BaseAugOp], Callable[[], cst.BaseBinaryOp]] = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
           cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
           cst.PowerAssign: cst.Power}


class DictUpdates(cst.CSTTransformer):
    """Rewrites the item writes into ``names`` in the statement (or function) it visits; not
    in a def or class inside it, where the name would become a local of its own."""

    def __init__(self, names: Sequence[str]):
        super().__init__()
        self.names = frozenset(names)
        self.visited_root = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef | cst.ClassDef) and self.visited_root:
            return False
        self.visited_root = True
        return super().on_visit(node)

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.BaseSmallStatement:
        if len(updated.targets) != 1:
            return updated
        written = self._written(updated.targets[0].target)
        if written is None:
            return updated
        name, key = written
        return _new_dict(name, key, updated.value)

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign) -> cst.BaseSmallStatement:
        written = self._written(updated.target)
        if written is None:
            return updated
        name, key = written
        operator = _BINARY.get(type(updated.operator))
        if operator is None or not isinstance(key, cst.Name | cst.SimpleString | cst.Integer):
            raise EditError("an augmented write into a dict whose key or operator cannot be written twice")
        value = cst.BinaryOperation(left=cst.parse_expression(f"{name}[{code(key)}]"), operator=operator(),
                                    right=updated.value)
        return _new_dict(name, key, value)

    def _written(self, target: cst.BaseExpression) -> tuple[str, cst.BaseExpression] | None:
        """(dict name, key) of ``d[k]`` for a dict of ``names``."""
        if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)
                and target.value.value in self.names and len(target.slice) == 1):
            return None
        index = target.slice[0].slice
        if not isinstance(index, cst.Index):
            raise EditError("a slice written into a dict")
        return target.value.value, index.value


def _new_dict(name: str, key: cst.BaseExpression, value: cst.BaseExpression) -> cst.Assign:
    made = cst.parse_statement(f"{name} = {{**{name}, {code(key)}: {code(value)}}}\n")
    assert isinstance(made, cst.SimpleStatementLine) and isinstance(made.body[0], cst.Assign)
    return made.body[0]
