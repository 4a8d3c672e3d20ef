"""One function's control flow: the walk that plans its traced ifs and loops, and the walk
that writes the enabled plans back with libcst.

Both walks go statement by statement through the function's blocks (nested function bodies
excluded) and hand each planned ``if``/loop to its own part (``ifs``, ``loops``, ``scans``);
the parts call back into the walk for the statements of the bodies they make.
"""

from __future__ import annotations

import ast
from typing import Callable, Sequence

from jitfix.analysis.blocks import always_leaves, definitely_assigned, target_names
from jitfix.analysis.flow import FlowAnalysis
from jitfix.analysis.imports import ImportTable
from jitfix.analysis.values import ArrayEvidence
from jitfix.control_flow.context import PlanContext
from jitfix.control_flow.ifs import IfPlanner, IfRenderer, cast_return, remember_values
from jitfix.control_flow.loops import LoopPlanner, LoopRenderer
from jitfix.control_flow.plans import IfPlan, LoopPlan, Plan, PlanningOptions, ScanPlan
from jitfix.control_flow.render_context import RenderContext, StatementPairs
from jitfix.control_flow.result_types import Known
from jitfix.control_flow.scans import ScanPlanner, ScanRenderer
from jitfix.cst_text import code, cst, leading_lines, pair_statements
from jitfix.findings import EditContext, EditError
from jitfix.naming import NameSet


class FunctionPlanner:
    """Plans for every traced ``if`` and loop of one function; the results are the fields
    of ``context`` (``plans``, ``problems``, ...)."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, flow: FlowAnalysis,
                 imports: ImportTable, text: str, taken_names: Callable[[], NameSet], arrays: ArrayEvidence,
                 options: PlanningOptions | None = None):
        self.context = PlanContext(function, flow, imports, text, arrays, options or PlanningOptions(), taken_names)
        self.loops = LoopPlanner(self.context, self.block)
        self.ifs = IfPlanner(self.context, self.block, self.loops.becomes_lax)
        self.scans = ScanPlanner(self.context, self.loops)

    def run(self) -> PlanContext:
        function = self.context.function
        params = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
        self.block(function.body, params, True, 0)
        return self.context

    def block(self, statements: list[ast.stmt], bound: set[str], tail: bool, loops: int,
              values: dict[str, Known] | None = None) -> None:
        """Plan a block: ``bound`` names have a value before it, ``tail`` when it ends the
        function, ``loops`` Python loops around it, ``values`` the literals names hold as it starts."""
        rests = self.context.rests
        bound = set(bound)
        values = dict(values or {})  # the value each name was last given, where simple
        for index, statement in enumerate(statements):
            rests.append(statements[index + 1:])
            try:
                if isinstance(statement, ast.If) and self.ifs.is_traced(statement):
                    if self.ifs.plan(statement, statements[index + 1:], bound, tail, loops, values):
                        return  # the rest of the block now lives in the branches
                elif isinstance(statement, ast.For | ast.While) and self.loops.is_traced(statement):
                    self.loops.plan(statement, bound, loops, values)
                elif isinstance(statement, ast.For) and self.scans.scannable(statement):
                    if not self.scans.plan(statement, bound, loops, values):
                        self._descend(statement, bound, tail, loops)  # a Python loop still: plan inside it
                else:
                    self._descend(statement, bound, tail, loops)
            finally:
                rests.pop()
            bound |= definitely_assigned([statement])
            remember_values(statement, values)

    def _descend(self, statement: ast.stmt, bound: set[str], tail: bool, loops: int) -> None:
        if isinstance(statement, ast.If):
            for block in (statement.body, statement.orelse):
                self.block(block, bound, tail and always_leaves(block), loops)
        elif isinstance(statement, ast.For | ast.AsyncFor):
            self.block(statement.body, bound | set(target_names(statement.target)), False, loops + 1)
            self.block(statement.orelse, bound, False, loops)
        elif isinstance(statement, ast.While):
            self.block(statement.body, bound, False, loops + 1)
            self.block(statement.orelse, bound, False, loops)
        elif isinstance(statement, ast.With | ast.AsyncWith):
            names = {n for item in statement.items if item.optional_vars for n in target_names(item.optional_vars)}
            self.block(statement.body, bound | names, tail and always_leaves(statement.body), loops)
        elif isinstance(statement, ast.Try):
            for block in (statement.body, statement.orelse, statement.finalbody,
                          *(handler.body for handler in statement.handlers)):
                self.block(block, bound, False, loops)


class FunctionRewriter:
    """Replaces the enabled planned ifs and loops of one function (an edit's ``replace``)."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, plans: dict[ast.stmt, Plan],
                 enabled: frozenset[ast.stmt], text: str):
        self.function = function
        self.text = text
        self.plans = plans
        # Statements a rewrite makes dead (`ys = []` before a loop that becomes a scan) go.
        self.dropped = {
            id(statement) for node in enabled
            if isinstance(plan := plans.get(node), LoopPlan) for statement in plan.dropped
        }
        # The ifs a loop's break/continue became are rewritten with the loop.
        self.enabled = enabled | {
            synthetic for node in enabled
            if isinstance(plan := plans.get(node), LoopPlan) for synthetic in plan.synthetic_ifs
        }
        # The returns the enabled ifs cast, and the names the calls among them are bound to.
        if_plans = [plan for node in self.enabled if isinstance(plan := plans.get(node), IfPlan)]
        self.return_casts = {returned: casts for plan in if_plans for returned, casts in plan.return_casts.items()}
        self.return_results = {returned: result for plan in if_plans for returned, result in plan.return_results.items()}

    def __call__(self, node: cst.CSTNode, edit: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        if not isinstance(node.body, cst.IndentedBlock):
            return node
        context = RenderContext(self.text, edit, edit.column)
        self.ifs = IfRenderer(context, self.block)
        self.loops = LoopRenderer(context, self.block)
        self.scans = ScanRenderer(context, self.block)
        body = self.block(node.body.body, self.function.body, 1)
        return node.with_changes(body=node.body.with_changes(body=body))

    def _contains_enabled(self, node: ast.AST) -> bool:
        """Whether a plan, or a return to cast, is inside the statement."""
        return any(child in self.enabled if isinstance(child, ast.If | ast.For | ast.While)
                   else isinstance(child, ast.Return) and id(child) in self.return_casts for child in ast.walk(node))

    def block(self, statements: Sequence[cst.BaseStatement], nodes: list[ast.stmt], depth: int) -> list[cst.BaseStatement]:
        """The statements of a block, the enabled plans among them written out."""
        pairs = list(pair_statements(statements, nodes))
        result: list[cst.BaseStatement] = []
        for index, (statement, analysed) in enumerate(pairs):
            first = analysed[0] if analysed else None
            if len(analysed) == 1 and id(first) in self.dropped and isinstance(statement, cst.SimpleStatementLine):
                if statement.leading_lines and index + 1 < len(pairs):  # keep its comments with the next line
                    follower, follower_nodes = pairs[index + 1]
                    pairs[index + 1] = (follower.with_changes(
                        leading_lines=[*statement.leading_lines, *leading_lines(follower)]), follower_nodes)
                continue
            plan = self.plans.get(first) if first is not None and first in self.enabled else None
            after_code = bool(result)
            if isinstance(plan, ScanPlan) and isinstance(statement, cst.For):
                result.extend(self.scans.render(plan, statement, depth, after_code))
            elif isinstance(plan, LoopPlan) and isinstance(statement, cst.For | cst.While):
                result.extend(self.loops.render(plan, statement, depth, after_code))
            elif isinstance(plan, IfPlan) and isinstance(statement, cst.If):
                rest: StatementPairs = pairs[index + 1:] if plan.absorbs_rest else []
                result.extend(self.ifs.render(plan, statement, rest, depth, after_code))
                if plan.absorbs_rest:
                    break
            elif isinstance(first, ast.Return) and id(first) in self.return_casts \
                    and isinstance(statement, cst.SimpleStatementLine):
                cast = cast_return(statement, self.return_casts[id(first)], self.ifs.context.name("jax.numpy"),
                                   self.return_results.get(id(first)))
                result.extend(self._fitted(line, depth) for line in cast)
            elif first is not None and self._contains_enabled(first):
                result.append(self._compound(statement, first, depth))
            else:
                result.append(statement)
        return result

    def _fitted(self, statement: cst.SimpleStatementLine, depth: int) -> cst.SimpleStatementLine:
        """A `return` the casts made too long for its line, split over lines as black would
        (its comments kept); any other statement as it is."""
        returned = statement.body[0]
        if len(statement.body) != 1 or not isinstance(returned, cst.Return) or returned.value is None:
            return statement
        value = code(returned.value)
        if self.ifs.context.fits(f"return {value}", depth):
            return statement
        split = self.ifs.context.returned(value, depth)
        if code(split).strip() == f"return {value}" or not isinstance(split, cst.SimpleStatementLine):
            return statement
        return split.with_changes(leading_lines=statement.leading_lines,
                                  trailing_whitespace=statement.trailing_whitespace)

    def _sub_block(self, block: cst.BaseSuite, nodes: list[ast.stmt], depth: int) -> cst.BaseSuite:
        if not isinstance(block, cst.IndentedBlock):
            return block
        return block.with_changes(body=self.block(block.body, nodes, depth))

    def _compound(self, statement: cst.BaseStatement, node: ast.stmt, depth: int) -> cst.BaseStatement:
        inner = depth + 1
        changes: dict[str, object]
        if isinstance(statement, cst.If) and isinstance(node, ast.If):
            changes = {"body": self._sub_block(statement.body, node.body, inner)}
            orelse = statement.orelse
            if isinstance(orelse, cst.Else):
                changes["orelse"] = orelse.with_changes(body=self._sub_block(orelse.body, node.orelse, inner))
            elif isinstance(orelse, cst.If):
                if node.orelse[0] in self.enabled:  # an elif that becomes statements: else + block
                    body = self.block([orelse], node.orelse, inner)
                    changes["orelse"] = cst.Else(body=cst.IndentedBlock(body=body))
                else:
                    changes["orelse"] = self._compound(orelse, node.orelse[0], depth)
            return statement.with_changes(**changes)
        if isinstance(statement, cst.For | cst.While) and isinstance(node, ast.For | ast.AsyncFor | ast.While):
            changes = {"body": self._sub_block(statement.body, node.body, inner)}
            if statement.orelse is not None:
                changes["orelse"] = statement.orelse.with_changes(
                    body=self._sub_block(statement.orelse.body, node.orelse, inner))
            return statement.with_changes(**changes)
        if isinstance(statement, cst.With) and isinstance(node, ast.With | ast.AsyncWith):
            return statement.with_changes(body=self._sub_block(statement.body, node.body, inner))
        if isinstance(statement, cst.Try) and isinstance(node, ast.Try):
            handlers = [
                handler.with_changes(body=self._sub_block(handler.body, analysed.body, inner))
                for handler, analysed in zip(statement.handlers, node.handlers)
            ]
            changes = {"body": self._sub_block(statement.body, node.body, inner), "handlers": handlers}
            if statement.orelse is not None:
                changes["orelse"] = statement.orelse.with_changes(
                    body=self._sub_block(statement.orelse.body, node.orelse, inner))
            if statement.finalbody is not None:
                changes["finalbody"] = statement.finalbody.with_changes(
                    body=self._sub_block(statement.finalbody.body, node.finalbody, inner))
            return statement.with_changes(**changes)
        raise EditError(f"cannot rewrite inside {type(statement).__name__}")
