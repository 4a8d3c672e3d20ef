"""A reduction of element-by-element arithmetic on selections by one boolean mask.

``n, mu = observed[keep], expected[keep]`` then ``jnp.sum(mu - n + n * jnp.log(n / mu))``:
each selection is as long as the data says, which jit cannot trace. The arithmetic pairs the
selected elements one for one, so it can run on the whole arrays instead, and the reduction
keep only what the mask selects: ``jnp.sum(expected - observed + observed * jnp.log(observed /
expected), where=keep)``. The elements the mask leaves out are computed too (a log of 0 there
is -inf) but never reach the result: a reduction's ``where=`` selects, it does not multiply.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jitfix.analysis.blocks import nodes_of, parents_in, walk_body
from jitfix.analysis.catalogue import is_elementwise
from jitfix.analysis.masks import PREDICATES, is_boolean_mask, selects_elementwise
from jitfix.analysis.values import parameter_names
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext
from jitfix.rules.base import ModuleContext, inlined_at, inlined_edits
from jitfix.rules.function_context import FunctionContext

# Reductions whose `where=` keeps exactly the selected elements, with no other argument needed.
WHERE_REDUCTIONS = frozenset({"sum", "mean", "prod", "var", "std", "any", "all"})
_WHERE_FUNCTIONS = frozenset(f"jax.numpy.{name}" for name in WHERE_REDUCTIONS)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)


@dataclass(frozen=True)
class Selected:
    """One operand of the arithmetic: ``array[mask]`` as written, or a name bound once to it."""

    node: ast.expr  # the `array[mask]` subscript, or the name read in the arithmetic
    array: ast.Name  # what the mask selects from
    selection: ast.Subscript  # `array[mask]` itself (in the binding, for a name)
    binding: ast.Assign | None = None  # `n = observed[keep]` (or a tuple of such), for a name


@dataclass(frozen=True)
class MaskedReduction:
    """``jnp.sum(E)`` / ``E.sum()`` of an elementwise ``E`` whose arrays are all selections by
    one mask (``mask``), each of an array of the mask's shape."""

    call: ast.Call
    operand: ast.expr
    mask: ast.expr  # the mask as the first selection writes it
    selected: tuple[Selected, ...]
    linear: bool  # E is a sum of the selections times numbers: its gradient is finite everywhere

    @property
    def selections(self) -> list[ast.Subscript]:
        return [part.selection for part in self.selected]

    @property
    def bindings(self) -> list[ast.Assign]:
        return list({id(part.binding): part.binding for part in self.selected if part.binding is not None}.values())

    @staticmethod
    def of(call: ast.Call, entry: FunctionContext, module: ModuleContext) -> MaskedReduction | None:
        """The reduction ``call`` is, when its operand is such arithmetic (not a bare selection:
        that is the plain ``where=`` rewrite), and every name it reads a selection through is
        bound once, in a statement that binds only such names, and read nowhere else."""
        operand = _reduced_operand(call, module)
        if operand is None or isinstance(operand, ast.Subscript):
            return None
        finder = _Operands(entry, module, call)
        if not finder.collect(operand) or not finder.selected:
            return None
        masks = {module.segment(part.selection.slice) for part in finder.selected}
        if len(masks) != 1:
            return None
        return MaskedReduction(call, operand, finder.selected[0].selection.slice, tuple(finder.selected),
                               _linear(operand))

    def edits(self, module: ModuleContext, function: ast.AST) -> list[Edit]:
        """The reduction with the whole arrays and ``where=`` the mask; the bindings of the
        selections go (their comments above the reduction's statement)."""
        start, end = module.span_of(self.call)
        replacements = {id(part.node): part.array.id for part in self.selected}
        operand = _segment_with(module, self.operand, replacements)
        mask = module.segment(self.mask)
        func = self.call.func
        if isinstance(func, ast.Attribute) and not self.call.args:  # `E.sum()`
            held = operand if isinstance(self.operand, ast.Name | ast.Call | ast.Attribute | ast.Subscript) \
                else f"({operand})"
            source = f"{held}.{func.attr}(where={mask})"
        else:
            source = f"{module.segment(func)}({operand}, where={mask})"

        def replace(updated: cst.CSTNode, context: EditContext) -> cst.CSTNode:
            assert isinstance(updated, cst.Call)
            return cst.parse_expression(source).with_changes(lpar=updated.lpar, rpar=updated.rpar)

        return [Edit(start, cst.Call, replace, end=end),
                *(edit for binding in self.bindings for edit in inlined_edits(module, binding, self.call, function))]


def _reduced_operand(call: ast.Call, module: ModuleContext) -> ast.expr | None:
    """``E`` of ``E.sum()`` or ``jnp.sum(E)``, with no other argument."""
    if call.keywords:
        return None
    if isinstance(call.func, ast.Attribute) and call.func.attr in WHERE_REDUCTIONS and not call.args \
            and module.imports.resolve(call.func) is None:
        return call.func.value
    if len(call.args) == 1 and not isinstance(call.args[0], ast.Starred) \
            and module.imports.resolve(call.func) in _WHERE_FUNCTIONS:
        return call.args[0]
    return None


class _Operands:
    """Walks an operand of a reduction, collecting its selections; False where any part is not
    elementwise arithmetic of selections and Python numbers."""

    def __init__(self, entry: FunctionContext, module: ModuleContext, call: ast.Call):
        self.entry = entry
        self.module = module
        self.call = call
        self.selected: list[Selected] = []

    def collect(self, expr: ast.AST) -> bool:
        if isinstance(expr, ast.Constant):
            return type(expr.value) in (int, float)
        if isinstance(expr, ast.Subscript):
            return self._selection(expr, expr, None)
        if isinstance(expr, ast.Name):
            return self._name(expr)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd | ast.Invert):
            return self.collect(expr.operand)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ARITHMETIC + (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.collect(expr.left) and self.collect(expr.right)
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            return self.collect(expr.left) and self.collect(expr.comparators[0])
        if isinstance(expr, ast.Call) and not expr.keywords and expr.args \
                and not any(isinstance(argument, ast.Starred) for argument in expr.args):
            name = self.module.imports.resolve(expr.func)
            return (name in PREDICATES or is_elementwise(name)) and all(self.collect(a) for a in expr.args)
        return False

    def _selection(self, node: ast.expr, selection: ast.Subscript, binding: ast.Assign | None) -> bool:
        """``array[mask]`` with a boolean ``mask`` computed elementwise from ``array`` (so of its
        shape), ``array`` a name."""
        if not isinstance(selection.value, ast.Name):
            return False
        bindings = self.entry.arrays.bindings
        if not is_boolean_mask(selection.slice, self.module.imports, bindings, self.entry.masks) \
                or not _of_the_arrays_shape(selection, self.entry, self.module):
            return False
        self.selected.append(Selected(node, selection.value, selection, binding))
        return True

    def _name(self, name: ast.Name) -> bool:
        """A name bound once, by a statement that binds only selections, read only in this
        reduction: the binding can go when the reduction reads the arrays themselves."""
        function = self.entry.traced.node
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            return False
        own = {id(node) for node in walk_body(function)}
        if any(isinstance(node, ast.Name) and node.id == name.id and id(node) not in own for node in nodes_of(function)):
            return False  # (a def in the function reads or binds it too)
        stores = [node for node in walk_body(function) if isinstance(node, ast.Name) and node.id == name.id
                  and not isinstance(node.ctx, ast.Load)]
        binding = next((node for node in walk_body(function) if isinstance(node, ast.Assign)
                        and any(store in _target_names(node) for store in stores)), None)
        if len(stores) != 1 or binding is None or len(binding.targets) != 1:
            return False
        pairs = _bound_pairs(binding)
        if pairs is None or any(not isinstance(value, ast.Subscript) for _, value in pairs):
            return False
        reads = [node for node in walk_body(function) if isinstance(node, ast.Name) and node.id in
                 {target.id for target, _ in pairs} and isinstance(node.ctx, ast.Load)]
        inside = {id(node) for node in ast.walk(self.call)}
        if any(id(read) not in inside for read in reads):
            return False  # (read elsewhere too: the binding must stay, and it still raises)
        if not inlined_at(binding, self.call, function, parents_in(function), self.module):
            return False  # (the arrays or the mask rebound in between)
        value = next(value for target, value in pairs if target.id == name.id)
        assert isinstance(value, ast.Subscript)
        return self._selection(name, value, binding)


def _target_names(binding: ast.Assign) -> list[ast.Name]:
    return [node for target in binding.targets for node in ast.walk(target) if isinstance(node, ast.Name)]


def _bound_pairs(binding: ast.Assign) -> list[tuple[ast.Name, ast.expr]] | None:
    """``n = a[m]`` or ``n, mu = a[m], b[m]``: each name with its value."""
    target, value = binding.targets[0], binding.value
    if isinstance(target, ast.Name):
        return [(target, value)]
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List) \
            and len(target.elts) == len(value.elts) and all(isinstance(t, ast.Name) for t in target.elts):
        return list(zip(target.elts, value.elts))  # type: ignore[arg-type]
    return None


def _of_the_arrays_shape(selection: ast.Subscript, entry: FunctionContext, module: ModuleContext) -> bool:
    """Whether the mask is an elementwise expression of the array it selects from (so of its
    shape: the selection takes elements one for one)."""
    assert isinstance(selection.value, ast.Name)
    array = selection.value.id
    bindings = entry.arrays.bindings
    rebound = len(bindings.get(array, ())) > (0 if array in parameter_names(entry.traced.node) else 1)
    return selects_elementwise(selection.slice, array, module.imports, bindings, rebound) \
        or entry.given_elementwise(selection.slice, array)


def _linear(expr: ast.AST) -> bool:
    """Whether ``expr`` is a sum of its selections, each times a number: its derivative is a
    number, finite wherever the elements are."""
    if isinstance(expr, ast.Subscript | ast.Name | ast.Constant):
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub | ast.UAdd):
        return _linear(expr.operand)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Sub):
        return _linear(expr.left) and _linear(expr.right)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return (isinstance(expr.left, ast.Constant) and _linear(expr.right)) \
            or (isinstance(expr.right, ast.Constant) and _linear(expr.left))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return isinstance(expr.right, ast.Constant) and _linear(expr.left)
    return False


def _segment_with(module: ModuleContext, node: ast.AST, replacements: dict[int, str]) -> str:
    """``node``'s source with the sources of some nodes inside it replaced (by id)."""
    lines = module.lines
    first = node.lineno  # type: ignore[attr-defined]

    def offset(line: int, col: int) -> int:
        return sum(len(lines[index]) + 1 for index in range(first - 1, line - 1)) + module.char_col(line, col)

    text = "\n".join(lines[first - 1:node.end_lineno])  # type: ignore[attr-defined]
    begin = offset(first, node.col_offset)  # type: ignore[attr-defined]
    end = offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    inner = sorted((child for child in ast.walk(node) if id(child) in replacements),
                   key=lambda child: (child.lineno, child.col_offset))  # type: ignore[attr-defined]
    pieces, at = [], begin
    for child in inner:
        start = offset(child.lineno, child.col_offset)  # type: ignore[attr-defined]
        pieces += [text[at:start], replacements[id(child)]]
        at = offset(child.end_lineno, child.end_col_offset)  # type: ignore[attr-defined]
    pieces.append(text[at:end])
    return "".join(pieces)
