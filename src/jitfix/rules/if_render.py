"""Write planned ``if`` statements as branch functions and a ``lax.cond`` call, with libcst.

The branch bodies are the user's own statements (comments, blank lines and formatting
kept); only the ``def`` lines, the ``return`` of the outputs and the ``lax.cond`` call are
new. The function is rewritten as a whole so an ``if`` may take the statements after it.
"""

from __future__ import annotations

import ast
from typing import Sequence

from jitfix.findings import EditContext
from jitfix.rules.cst_text import RewriteMismatch, code, cst, lay_out, pair_statements
from jitfix.rules.if_plans import Branch, IfPlan
from jitfix.rules.loop_plans import LoopPlan
from jitfix.rules.loop_render import LoopRendering

INDENT_WIDTH = 4


class FunctionRewriter(LoopRendering):
    """Replaces the enabled planned ifs and loops of one function."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef, plans: dict[ast.stmt, IfPlan | LoopPlan],
                 enabled: frozenset[ast.stmt], text: str):
        self.function = function
        self.text = text
        self.plans = plans
        # Statements a rewrite makes dead (`ys = []` before a loop that becomes a scan) go.
        self.dropped = {
            id(statement) for node in enabled
            for statement in getattr(plans.get(node), "initializers", []) if statement is not None
        }
        # The ifs a loop's break/continue became are rewritten with the loop.
        self.enabled = enabled | {
            synthetic for node in enabled if isinstance(plans.get(node), LoopPlan)
            for synthetic in plans[node].synthetic_ifs  # type: ignore[union-attr]
        }

    def __call__(self, node: cst.CSTNode, context: EditContext) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        if not isinstance(node.body, cst.IndentedBlock):
            return node
        self.context = context
        self.base_column = context.column
        body = self._block(node.body.body, self.function.body, depth=1)
        return node.with_changes(body=node.body.with_changes(body=body))

    # -- statement lists -------------------------------------------------------------------

    def _contains_enabled(self, node: ast.AST) -> bool:
        return any(child in self.enabled for child in ast.walk(node) if isinstance(child, ast.If | ast.For | ast.While))

    def _block(self, statements: Sequence[cst.BaseStatement], nodes: list[ast.stmt], depth: int) -> list[cst.BaseStatement]:
        pairs = list(pair_statements(statements, nodes))
        result: list[cst.BaseStatement] = []
        for index, (statement, analysed) in enumerate(pairs):
            first = analysed[0] if analysed else None
            if len(analysed) == 1 and id(first) in self.dropped and isinstance(statement, cst.SimpleStatementLine):
                if statement.leading_lines and index + 1 < len(pairs):  # keep its comments with the next line
                    follower, rest = pairs[index + 1]
                    pairs[index + 1] = (follower.with_changes(
                        leading_lines=[*statement.leading_lines, *follower.leading_lines]), rest)
                continue
            plan = self.plans.get(first) if first in self.enabled else None  # type: ignore[arg-type]
            if isinstance(plan, LoopPlan) and isinstance(statement, cst.For | cst.While):
                result.extend(self._render_loop(plan, statement, depth, after_code=bool(result)))
            elif isinstance(plan, IfPlan) and isinstance(statement, cst.If):
                rest = pairs[index + 1:] if plan.absorbs_rest else []
                result.extend(self._render(plan, statement, rest, depth, after_code=bool(result)))
                if plan.absorbs_rest:
                    break
            elif first is not None and self._contains_enabled(first):
                result.append(self._compound(statement, first, depth))
            else:
                result.append(statement)
        return result

    def _sub_block(self, block: cst.BaseSuite, nodes: list[ast.stmt], depth: int) -> cst.BaseSuite:
        if not isinstance(block, cst.IndentedBlock):
            return block
        return block.with_changes(body=self._block(block.body, nodes, depth))

    def _compound(self, statement: cst.BaseStatement, node: ast.stmt, depth: int) -> cst.BaseStatement:
        inner = depth + 1
        if isinstance(statement, cst.If) and isinstance(node, ast.If):
            changes: dict = {"body": self._sub_block(statement.body, node.body, inner)}
            orelse = statement.orelse
            if isinstance(orelse, cst.Else):
                changes["orelse"] = orelse.with_changes(body=self._sub_block(orelse.body, node.orelse, inner))
            elif isinstance(orelse, cst.If):
                if node.orelse[0] in self.enabled:  # an elif that becomes statements: else + block
                    body = self._block([orelse], node.orelse, inner)
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
        raise RewriteMismatch(f"cannot rewrite inside {type(statement).__name__}")

    # -- one planned if --------------------------------------------------------------------

    def _render(self, plan: IfPlan, statement: cst.If, rest: list[tuple[cst.BaseStatement, list[ast.stmt]]],
                depth: int, after_code: bool) -> list[cst.BaseStatement]:
        rest_statements = [pair[0] for pair in rest]
        true_block = statement.body
        own_true = list(true_block.body) if plan.node.body else []  # a guard's if has an empty branch
        true_statements = [*own_true, *(rest_statements if plan.true.with_rest else [])]
        orelse = statement.orelse
        false_block: cst.BaseSuite | None = orelse.body if isinstance(orelse, cst.Else) else None
        own_false = list(false_block.body) if false_block is not None else [orelse] if isinstance(orelse, cst.If) else []
        false_statements = [*own_false, *(rest_statements if plan.false.with_rest else [])]

        context = self.context
        spelled_cond = f"{context.name('jax.lax')}.cond"
        generated: list[cst.BaseStatement] = []
        for key, (dtype_name, sources) in plan.dtypes.items():
            generated.append(cst.parse_statement(
                f"{dtype_name} = {context.name('jax.numpy')}.result_type({', '.join(sources)})\n"))

        if not true_statements and self._is_identity(plan, plan.true):  # a break/continue guard's if
            true_function = self._identity_lambda(plan, plan.true)
        else:
            generated.append(self._branch_def(plan, plan.true, true_block, true_statements, depth))
            true_function = plan.true.name
        if not false_statements and self._is_identity(plan, plan.false):
            false_function = self._identity_lambda(plan, plan.false)
        else:
            false_def = self._branch_def(plan, plan.false, false_block, false_statements, depth)
            if isinstance(orelse, cst.Else):  # comments above `else:` go above its function
                false_def = false_def.with_changes(leading_lines=orelse.leading_lines)
            generated.append(false_def)
            false_function = plan.false.name

        arguments = [code(statement.test), true_function, false_function, *plan.operands]
        if plan.form == "return":
            prefix = "return "
        elif plan.outputs:
            prefix = ", ".join(plan.outputs) + " = "
        else:
            prefix = ""
        context.column = self.base_column + depth * INDENT_WIDTH + len(prefix)
        call = context.call_source(spelled_cond, arguments)
        generated.append(cst.parse_statement(prefix + call + "\n"))
        return lay_out(generated, statement, after_code)

    def _branch_def(self, plan: IfPlan, branch: Branch, block: cst.BaseSuite | None,
                    statements: list[cst.BaseStatement], depth: int) -> cst.FunctionDef:
        body = self._block(statements, branch.statements, depth + 1)
        if plan.form == "assign" and plan.outputs:
            body.append(cst.parse_statement(f"return {self._outputs(plan, branch)}\n"))
        elif plan.form == "return" and "return" in branch.casts:
            body[-1] = self._cast_return(body[-1], plan)
        if not body:
            body = [cst.parse_statement("return None\n")]
        template = cst.parse_statement(f"def {branch.name}({', '.join(plan.operands)}):\n    pass\n")
        assert isinstance(template, cst.FunctionDef)
        if isinstance(block, cst.IndentedBlock):
            new_block = block.with_changes(body=body)
        else:
            new_block = cst.IndentedBlock(body=body)
        return template.with_changes(body=new_block)

    def _outputs(self, plan: IfPlan, branch: Branch) -> str:
        values = [self._cast(name, plan, branch) for name in plan.outputs]
        return ", ".join(values)

    def _cast(self, name: str, plan: IfPlan, branch: Branch) -> str:
        if name not in branch.casts:
            return name
        dtype_name = plan.dtypes[name][0]
        return f"{self.context.name('jax.numpy')}.asarray({name}, {dtype_name})"

    @staticmethod
    def _is_identity(plan: IfPlan, branch: Branch) -> bool:
        return plan.form == "assign" and plan.operands == plan.outputs and "return" not in branch.casts

    def _identity_lambda(self, plan: IfPlan, branch: Branch) -> str:
        values = self._outputs(plan, branch)
        body = f"({values})" if len(plan.outputs) > 1 else values or "None"  # no results: like the branch def
        parameters = " " + ", ".join(plan.operands) if plan.operands else ""
        return f"lambda{parameters}: {body}"

    def _cast_return(self, statement: cst.BaseStatement, plan: IfPlan) -> cst.BaseStatement:
        if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[-1], cst.Return)):
            raise RewriteMismatch("expected a return statement to cast")
        returned = statement.body[-1]
        assert returned.value is not None
        value = code(returned.value.with_changes(lpar=[], rpar=[]))
        dtype_name = plan.dtypes["return"][0]
        cast = cst.parse_expression(f"{self.context.name('jax.numpy')}.asarray({value}, {dtype_name})")
        return statement.with_changes(body=[*statement.body[:-1], returned.with_changes(value=cast)])

