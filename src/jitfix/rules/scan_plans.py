"""On request (``scan-static-loops = true``): loops over the rows of an array -> ``lax.scan``.

``for x in xs`` over a traced array runs under jit as it is, unrolled: one copy of the body
per row, which compiles slowly for long arrays. ``lax.scan`` compiles the body once. The
carry is found as for the other loops; each ``ys.append(value)`` directly in the body (with
``ys = []`` before the loop, and ``ys`` read afterwards only through ``jnp.stack(ys)`` or
``jnp.array(ys)``) becomes a stacked output of the scan, which those calls leave as it is.
``enumerate(xs)`` scans the row numbers too, ``zip(xs, ys)`` both arrays.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from jitfix.analysis.blocks import assigned_names, loaded_names, upward_exposed
from jitfix.rules.loop_plans import LoopPlan, _loop_obstacle
from jitfix.rules.naming import unique_name

STACKING = frozenset({"jax.numpy.stack", "jax.numpy.array", "jax.numpy.asarray"})


@dataclass(eq=False)
class Output:
    """A list the loop appends to, and the name of one step's value."""

    name: str
    item: str
    append: ast.Expr
    # The appended value is a name the body does not change afterwards: returned as it is,
    # and the append statement simply goes.
    direct: bool = False


@dataclass(eq=False)
class ScanPlan(LoopPlan):
    sources: list[ast.expr] = field(default_factory=list)  # what is scanned (xs, or xs and ys)
    targets: list[str] = field(default_factory=list)  # one name per scanned array
    enumerated: bool = False  # enumerate(xs): the first target counts rows
    outputs: list[Output] = field(default_factory=list)
    # `ys = []` statements the scan's outputs replace (dropped with the loop)
    initializers: list[ast.stmt] = field(default_factory=list)

    @property
    def needs_numpy(self) -> bool:
        return self.enumerated


class ScanPlanning:
    """Scans for FunctionPlanner."""

    def scannable(self, node: ast.AST) -> bool:
        if not (self.options.scan_static_loops and isinstance(node, ast.For)):
            return False
        shape = self._scan_shape(node)
        if shape is None:
            return False
        values = self.values_at(node)
        # A traced parameter is scanned too (the option asks for it): were it a list of arrays
        # instead, the body would receive a list where it expects an array, and fail to trace.
        return all(values.is_traced(source) and (self.arrays.certain(source) or _is_parameter(source, self))
                   for source in shape[0])

    def _scan_shape(self, node: ast.For) -> tuple[list[ast.expr], list[ast.expr], bool] | None:
        """(scanned arrays, their targets, enumerated?) for the loop forms a scan expresses."""
        iterable, target = node.iter, node.target
        enumerated = False
        if _call_of(iterable, "enumerate", 1) and _pair(target):
            enumerated = True
            iterable, target = iterable.args[0], target.elts[1]  # type: ignore[attr-defined]
        if _call_of(iterable, "zip") and isinstance(target, ast.Tuple) \
                and len(target.elts) == len(iterable.args):  # type: ignore[attr-defined]
            sources, targets = list(iterable.args), list(target.elts)  # type: ignore[attr-defined]
        else:
            sources, targets = [iterable], [target]
        if not all(isinstance(name, ast.Name) for name in targets):
            return None
        if any(isinstance(source, ast.Starred) for source in sources):
            return None
        return sources, targets, enumerated  # type: ignore[return-value]

    def _report_scan(self, node: ast.For, reason: str, where: ast.AST | None = None) -> None:
        self._report(node, reason, where, kind="scan")

    def _plan_scan(self, node: ast.For, bound: set[str], loops: int, values: dict[str, ast.expr]) -> None:
        sources, targets, enumerated = self._scan_shape(node)  # type: ignore[misc]
        names = [target.id for target in targets]  # type: ignore[attr-defined]
        if enumerated:
            names.insert(0, node.target.elts[0].id if isinstance(node.target.elts[0], ast.Name) else "")  # type: ignore[attr-defined]
            if not names[0]:
                return self._report_scan(node, "the count of `enumerate` is not a single name")
        if node.orelse:
            return self._report_scan(node, "the loop has an `else:` clause")
        found = _loop_obstacle(node.body)
        if found:
            return self._report_scan(node, "`break`, `continue` or `return` in a loop to scan", found[0])
        outputs = self._outputs(node, values)
        if isinstance(outputs, str):
            return self._report_scan(node, outputs)
        appends = {id(output.append) for output in outputs}
        body = [statement for statement in node.body if id(statement) not in appends]
        for where, reason in self._obstacles_of(body, node, loops):
            return self._report_scan(node, reason, where)
        if any(self._live_after(name, node, loops) for name in names):
            return self._report_scan(node, "the loop variable is read after the loop")
        assigned = assigned_names(body) - set(names)
        live_after = {name for name in assigned if self._live_after(name, node, loops)}
        exposed = upward_exposed(body, live_after)
        carry: list[str] = []
        for name in self._ordered(assigned, node):
            if name in exposed or name in live_after:
                if name not in bound:
                    return self._report_scan(node, f"`{name}` is bound in the loop body but has no value before the "
                                              "loop, and is read after it")
                carry.append(name)
        body_name = unique_name(f"_{names[-1]}_scan_body", self.taken)
        plan = ScanPlan(node, "scan", body_name, carry, node.body, sources=sources, targets=names,
                        enumerated=enumerated, outputs=outputs,
                        initializers=[self._initializer(node, output.name) for output in outputs])
        self.plans[node] = plan  # type: ignore[index]
        outer = self.carried
        self.carried = frozenset(outer | set(carry) | set(names))
        self._block(node.body, set(carry) | set(names), tail=False, loops=loops + 1)
        self.carried = outer
        return None

    def _outputs(self, node: ast.For, values: dict[str, ast.expr]) -> list[Output] | str:
        """The lists appended to directly in the body, or why the loop cannot be a scan."""
        outputs: list[Output] = []
        for statement in node.body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append" and isinstance(call.func.value, ast.Name)
                    and len(call.args) == 1 and not call.keywords):
                continue
            name = call.func.value.id
            start = values.get(name)
            if not (isinstance(start, ast.List) and not start.elts):
                return f"`{name}` is appended to but is not an empty list made just before the loop"
            if any(output.name == name for output in outputs):
                return f"`{name}` is appended to twice in one pass"
            others = [s for s in node.body if s is not statement]
            if name in loaded_names(others) or name in assigned_names(others):
                return f"`{name}` is used in the loop besides being appended to"
            if not self._only_stacked(name, node):
                return f"`{name}` is read after the loop other than by `jnp.stack({name})`/`jnp.array({name})`"
            value = call.args[0]
            later = node.body[node.body.index(statement) + 1:]
            if isinstance(value, ast.Name) and value.id not in assigned_names(later):
                outputs.append(Output(name, value.id, statement, direct=True))  # type: ignore[arg-type]
                continue
            singular = name[:-1] if name.endswith("s") and len(name) > 1 else name
            item = singular if singular != name and singular not in self.taken else f"{singular}_out"
            outputs.append(Output(name, unique_name(item, self.taken), statement))  # type: ignore[arg-type]
        return outputs

    def _initializer(self, node: ast.For, name: str) -> ast.stmt | None:
        """The `name = []` statement right before the loop in the same block, if there is one."""
        for block in _blocks(self.function):
            if node in block:
                for statement in reversed(block[:block.index(node)]):
                    if name in assigned_names([statement]):
                        return statement if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        return None

    def _only_stacked(self, name: str, node: ast.For) -> bool:
        inside = {id(child) for child in ast.walk(node)}
        stacked = {
            id(call.args[0]) for call in ast.walk(self.function)
            if isinstance(call, ast.Call) and self.imports.resolve(call.func) in STACKING
            and len(call.args) == 1 and isinstance(call.args[0], ast.Name) and call.args[0].id == name
        }
        for load in self._loads:
            if load.id == name and id(load) not in inside and id(load) not in stacked:
                return False
        return True


def _blocks(function: ast.AST):
    for node in ast.walk(function):
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(node, field_name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _is_parameter(source: ast.AST, planner) -> bool:
    return isinstance(source, ast.Name) and source.id in planner.arrays.params


def _call_of(node: ast.AST, name: str, count: int | None = None) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
            and not node.keywords and (count is None or len(node.args) == count))


def _pair(target: ast.AST) -> bool:
    return isinstance(target, ast.Tuple) and len(target.elts) == 2

