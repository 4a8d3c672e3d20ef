"""On request (``scan-static-loops = true``): loops over the rows of an array -> ``lax.scan``,
the plan and the code.

``for x in xs`` over a traced array runs under jit as it is, unrolled: one copy of the body
per row, which compiles slowly for long arrays. ``lax.scan`` compiles the body once. The
carry is found as for the other loops; each ``ys.append(value)`` directly in the body (with
``ys = []`` before the loop, and ``ys`` read afterwards only through ``jnp.stack(ys)`` or
``jnp.array(ys)``) becomes a stacked output of the scan, which those calls leave as it is.
``enumerate(xs)`` scans the row numbers too, ``zip(xs, ys)`` both arrays.
"""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from jitfix.analysis.blocks import assigned_names, loaded_names, nodes_of, upward_exposed
from jitfix.control_flow.context import PlanContext
from jitfix.control_flow.loops import (
    LoopPlanner,
    body_obstacles,
    carry_parameter,
    carry_source,
    loop_obstacle,
    separate_first_def,
    unpack_carry,
)
from jitfix.control_flow.plans import LoopKind, Output, ScanPlan
from jitfix.control_flow.render_context import BlockRenderer, RenderContext
from jitfix.control_flow.result_types import Known
from jitfix.cst_text import code, cst, lay_out, pair_statements
from jitfix.naming import unique_name

STACKING = frozenset({"jax.numpy.stack", "jax.numpy.array", "jax.numpy.asarray"})

# (scanned arrays, the names that take their rows, enumerated?)
ScanShape = tuple[list[ast.expr], list[ast.Name], bool]


class ScanPlanner:
    """Plans the loops of one function that become a ``lax.scan``; their bodies are walked
    as the other loops' are."""

    def __init__(self, context: PlanContext, loops: LoopPlanner):
        self.context = context
        self.loops = loops

    def scannable(self, node: ast.stmt) -> bool:
        context = self.context
        if not (context.options.scan_static_loops and isinstance(node, ast.For)):
            return False
        shape = _scan_shape(node)
        if shape is None:
            return False
        values = context.values_at(node)
        # A traced parameter is scanned too (the option asks for it): were it a list of arrays
        # instead, the body would receive a list where it expects an array, and fail to trace.
        return all(values.is_traced(source) and (context.arrays.certain(source) or self._is_parameter(source))
                   for source in shape[0])

    def _is_parameter(self, source: ast.AST) -> bool:
        return isinstance(source, ast.Name) and source.id in self.context.arrays.params

    def _report(self, node: ast.For, reason: str, where: ast.AST | None = None) -> bool:
        self.context.report(node, reason, where, scan=True)
        return False

    def plan(self, node: ast.For, bound: set[str], loops: int, values: dict[str, Known]) -> bool:
        """Plan the loop as a scan; False (and the reason reported) when it stays a Python loop."""
        context = self.context
        shape = _scan_shape(node)
        assert shape is not None
        sources, targets, enumerated = shape
        names = [target.id for target in targets]
        if enumerated:
            assert isinstance(node.target, ast.Tuple)  # `for i, x in enumerate(xs)`
            count = node.target.elts[0]
            if not isinstance(count, ast.Name):
                return self._report(node, "the count of `enumerate` is not a single name")
            names.insert(0, count.id)
        if node.orelse:
            return self._report(node, "the loop has an `else:` clause")
        found = loop_obstacle(node.body)
        if found:
            return self._report(node, "`break`, `continue` or `return` in a loop to scan", found[0])
        outputs = self._outputs(node, values)
        if isinstance(outputs, str):
            return self._report(node, outputs)
        appends = {id(output.append) for output in outputs}
        body = [statement for statement in node.body if id(statement) not in appends]
        for where, reason in body_obstacles(context, body, node, loops):
            return self._report(node, reason, where)
        copies, _ = context.closure_copies([body], assigned_names(body) | set(names))
        if copies:
            return self._report(node, "a helper defined before the loop reads what the body changes")
        if any(context.live_after(name, node, loops) for name in names):
            return self._report(node, "the loop variable is read after the loop")
        assigned = assigned_names(body) - set(names)
        live_after = {name for name in assigned if context.live_after(name, node, loops)}
        exposed = upward_exposed(body, live_after)
        carry: list[str] = []
        for name in context.ordered(assigned, node):
            if name in exposed or name in live_after:
                if name not in bound:
                    return self._report(node, f"`{name}` is bound in the loop body but has no value before the "
                                              "loop, and is read after it")
                carry.append(name)
        body_name = unique_name(f"_{names[-1]}_scan_body", context.taken)
        initializers = [self._initializer(node, output.name) for output in outputs]
        plan = ScanPlan(node, LoopKind.SCAN, body_name, carry, node.body, sources=sources, targets=names,
                        enumerated=enumerated, outputs=outputs,
                        initializers=[statement for statement in initializers if statement is not None])
        context.plans[node] = plan
        self.loops.walk_body(node.body, set(carry), set(names), loops, mark=False)
        return True

    def _outputs(self, node: ast.For, values: dict[str, Known]) -> list[Output] | str:
        """The lists appended to directly in the body, or why the loop cannot be a scan."""
        outputs: list[Output] = []
        for statement in node.body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            if not (isinstance(statement, ast.Expr) and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
                    and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords):
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
                outputs.append(Output(name, value.id, statement, direct=True))
                continue
            singular = name[:-1] if name.endswith("s") and len(name) > 1 else name
            taken = self.context.taken
            item = singular if singular != name and singular not in taken else f"{singular}_out"
            outputs.append(Output(name, unique_name(item, taken), statement))
        return outputs

    def _initializer(self, node: ast.For, name: str) -> ast.stmt | None:
        """The `name = []` statement right before the loop in the same block, if there is one."""
        for block in _blocks(self.context.function):
            if node in block:
                for statement in reversed(block[:block.index(node)]):
                    if name in assigned_names([statement]):
                        return statement if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        return None

    def _only_stacked(self, name: str, node: ast.For) -> bool:
        context = self.context
        inside = {id(child) for child in ast.walk(node)}
        stacked = {
            id(call.args[0]) for call in ast.walk(context.function)
            if isinstance(call, ast.Call) and context.imports.resolve(call.func) in STACKING
            and len(call.args) == 1 and isinstance(call.args[0], ast.Name) and call.args[0].id == name
        }
        return not any(load.id == name and id(load) not in inside and id(load) not in stacked
                       for load in context.loads)


def _scan_shape(node: ast.For) -> ScanShape | None:
    """The loop forms a scan expresses: ``for x in xs``, ``enumerate(xs)``, ``zip(xs, ys)``."""
    iterable, target = node.iter, node.target
    enumerated = False
    if isinstance(iterable, ast.Call) and _call_of(iterable, "enumerate", 1) \
            and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        enumerated = True
        iterable, target = iterable.args[0], target.elts[1]
    if isinstance(iterable, ast.Call) and _call_of(iterable, "zip") and isinstance(target, ast.Tuple) \
            and len(target.elts) == len(iterable.args):
        sources, targets = list(iterable.args), list(target.elts)
    else:
        sources, targets = [iterable], [target]
    names = [name for name in targets if isinstance(name, ast.Name)]
    if len(names) != len(targets) or any(isinstance(source, ast.Starred) for source in sources):
        return None
    return sources, names, enumerated


def _blocks(function: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in nodes_of(function):
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(node, field_name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _call_of(node: ast.Call, name: str, count: int | None = None) -> bool:
    return (isinstance(node.func, ast.Name) and node.func.id == name
            and not node.keywords and (count is None or len(node.args) == count))


# -- writing ---------------------------------------------------------------------------------


class ScanRenderer:
    """Writes planned scans; the statements of their bodies through ``block``."""

    def __init__(self, context: RenderContext, block: BlockRenderer):
        self.context = context
        self.block = block

    def render(self, plan: ScanPlan, statement: cst.For, depth: int, after_code: bool) -> list[cst.BaseStatement]:
        context = self.context
        jnp = context.name("jax.numpy")
        sources = [context.source(source, "") for source in plan.sources]
        if plan.enumerated:
            sources.insert(0, f"{jnp}.arange(len({sources[0]}))")
        scanned = sources[0] if len(sources) == 1 else f"({', '.join(sources)})"
        single_target = len(plan.targets) == 1
        step = plan.targets[0] if single_target else "step"
        prologue = unpack_carry(plan)
        if not single_target:
            prologue.append(cst.parse_statement(f"{', '.join(plan.targets)} = step\n"))
        carry = carry_source(plan, jnp)
        items = [output.item for output in plan.outputs]
        stacked = items[0] if len(items) == 1 else f"({', '.join(items)})" if items else "None"
        assert isinstance(statement.body, cst.IndentedBlock)
        body_statements = self._with_items(plan, statement.body.body)
        direct = {id(output.append) for output in plan.outputs if output.direct}
        analysed = [node for node in plan.statements if id(node) not in direct]
        body = self.block(body_statements, analysed, depth + 1)
        separate_first_def(prologue, body)
        returned = cst.parse_statement(f"return {carry if plan.carry else 'carry'}, {stacked}\n")
        template = cst.parse_statement(f"def {plan.body_name}({carry_parameter(plan)}, {step}):\n    pass\n")
        assert isinstance(template, cst.FunctionDef)
        function = template.with_changes(body=statement.body.with_changes(body=[*prologue, *body, returned]))
        carried = ", ".join(plan.carry) if len(plan.carry) == 1 else carry if plan.carry else "_"
        outputs = [output.name for output in plan.outputs]
        results = outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})" if outputs else "_"
        call = context.call(f"{carried}, {results} = ", f"{context.name('jax.lax')}.scan",
                            [plan.body_name, carry if plan.carry else "None", scanned], depth)
        return lay_out([function, call], statement, after_code)

    @staticmethod
    def _with_items(plan: ScanPlan, statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """``ys.append(value)`` -> ``y = value``: the value becomes the step's stacked output."""
        by_append = {id(output.append): output for output in plan.outputs}
        result = []
        for written, analysed in pair_statements(statements, plan.statements):
            output = by_append.get(id(analysed[0])) if len(analysed) == 1 else None
            if output is not None and output.direct:
                continue  # `hs.append(h)`: h itself is the step's output
            if output is not None and isinstance(written, cst.SimpleStatementLine):
                statement = written.body[0]
                assert isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)
                value = code(statement.value.args[0].value)
                replacement = cst.parse_statement(f"{output.item} = {value}\n")
                written = replacement.with_changes(leading_lines=written.leading_lines,
                                                   trailing_whitespace=written.trailing_whitespace)
            result.append(written)
        return result
