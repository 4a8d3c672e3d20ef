"""Write planned loops as a body function and ``lax.fori_loop`` / ``lax.while_loop``.

The body keeps the user's statements and comments; it unpacks the carry first and returns it
last. ``range(a, b, 2)`` counts iterations (``(b - a + 1) // 2``) and computes the loop
variable from the count, so a loop that runs zero times leaves the carry as it was.
"""

from __future__ import annotations

import ast

from jitfix.rules.cst_text import blank_line, code, cst, lay_out, pair_statements
from jitfix.rules.loop_plans import LoopPlan, nest_guards
from jitfix.rules.scan_plans import ScanPlan


def _source(module_text: str, node: ast.AST | None, default: str) -> str:
    if node is None:
        return default
    return ast.get_source_segment(module_text, node) or ast.unparse(node)


def _grouped(text: str) -> str:
    """``text`` safe to use as an operand of ``-`` and ``//``."""
    return text if text.isidentifier() or text.lstrip("-").isdigit() else f"({text})"


def _difference(first: str, second: str) -> str:
    """``first - second``, simplified when ``second`` is a literal."""
    if second.lstrip("-").isdigit():
        value = int(second)
        if value == 0:
            return first
        return f"{_grouped(first)} {'-' if value > 0 else '+'} {abs(value)}"
    return f"{_grouped(first)} - {_grouped(second)}"


def _ceil_divide(span: str, step: int) -> str:
    """The number of iterations of a span counted in steps: ``(span + step - 1) // step``."""
    if step == 1:
        return span
    # Fold a literal at the end of the span into the rounding term: (n - 1 + 1) // 2 -> n // 2.
    head, _, tail = span.rpartition(" ")
    constant = step - 1
    if head.endswith((" -", " +")) and tail.isdigit():
        constant += int(tail) if head.endswith("+") else -int(tail)
        span = head[:-2]
    if constant == 0:
        return f"{_grouped(span)} // {step}"
    return f"({span} {'+' if constant > 0 else '-'} {abs(constant)}) // {step}"


class LoopRendering:
    """The loop half of FunctionRewriter."""

    def _render_loop(self, plan: LoopPlan, statement: cst.For | cst.While, depth: int,
                     after_code: bool) -> list[cst.BaseStatement]:
        if plan.kind == "fori":
            generated = self._render_fori(plan, statement, depth)
        elif plan.kind == "scan":
            generated = self._render_scan(plan, statement, depth)  # type: ignore[arg-type]
        else:
            generated = self._render_while(plan, statement, depth)
        return lay_out(generated, statement, after_code)

    # -- pieces ------------------------------------------------------------------------------

    def _carry_source(self, plan: LoopPlan) -> str:
        """The carry as one expression: ``total`` or ``(total, count)``."""
        if len(plan.carry) == 1:
            return plan.carry[0]
        return f"({', '.join(plan.carry)})" if plan.carry else "None"

    def _carry_parameter(self, plan: LoopPlan) -> str:
        return plan.carry[0] if len(plan.carry) == 1 else "carry"

    def _unpack(self, plan: LoopPlan, used: set[str] | None = None) -> list[cst.BaseStatement]:
        """``a, b = carry`` (names a function does not read become ``_``)."""
        if len(plan.carry) < 2:
            return []
        unused = plan.placeholder
        names = [name if used is None or name in used else unused for name in plan.carry]
        if plan.kind == "fori" and plan.target in plan.carry:
            names = [unused if name == plan.target else name for name in names]  # set from the index
        return [cst.parse_statement(f"{', '.join(names)} = carry\n")]

    def _restructured(self, plan: LoopPlan, statements) -> list[cst.BaseStatement]:
        """The libcst body cut at its break/continue guards and nested as the plan's ifs."""
        if not plan.guards:
            return list(statements)
        by_guard = {id(guard.node): guard for guard in plan.guards}
        segments: list[list[cst.BaseStatement]] = [[]]
        guard_statements: dict[int, cst.If] = {}
        for statement, analysed in pair_statements(statements, plan.node.body):
            if analysed and id(analysed[0]) in by_guard and isinstance(statement, cst.If):
                guard_statements[id(analysed[0])] = statement
                segments.append([])
            else:
                segments[-1].append(statement)
        jnp = self.context.name("jax.numpy")  # type: ignore[attr-defined]

        def make_flag(guard):
            written = guard_statements[id(guard.node)]
            test = code(written.test.with_changes(lpar=[], rpar=[]) if written.test.lpar else written.test)
            value = test if guard.boolean else f"{jnp}.asarray({test}, bool)"
            flag = cst.parse_statement(f"{plan.flag} = {value}\n")
            changes = {"leading_lines": written.leading_lines}
            header = getattr(written.body, "header", None)
            if header is not None and header.comment is not None:  # `if c:  # why` keeps its why
                changes["trailing_whitespace"] = header
            return flag.with_changes(**changes)

        def make_if(guard, test_is_flag, inner):
            written = guard_statements[id(guard.node)]
            test = cst.Name(plan.flag) if test_is_flag else written.test
            return cst.If(test=test, body=cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Pass()])]),
                          orelse=cst.Else(body=cst.IndentedBlock(body=inner)),
                          leading_lines=[] if test_is_flag else written.leading_lines)

        return nest_guards(segments, plan.guards, plan.flag, make_if, make_flag)

    def _body_def(self, name: str, parameters: str, block: cst.BaseSuite, prologue: list[cst.BaseStatement],
                  plan: LoopPlan, depth: int, epilogue: list[cst.BaseStatement] | None = None,
                  returned: str | None = None) -> cst.FunctionDef:
        statements_in = self._restructured(plan, block.body)  # type: ignore[attr-defined]
        body = self._block(statements_in, plan.statements, depth + 1)  # type: ignore[attr-defined]
        body += epilogue or []
        if returned is None:
            returned = self._carry_source(plan) if plan.carry else "carry"
            if len(plan.carry) > 1:
                returned = returned[1:-1]
        if prologue and body and isinstance(body[0], cst.FunctionDef) and not body[0].leading_lines:
            body[0] = body[0].with_changes(leading_lines=[blank_line()])
        statements = [*prologue, *body, cst.parse_statement(f"return {returned}\n")]
        template = cst.parse_statement(f"def {name}({parameters}):\n    pass\n")
        assert isinstance(template, cst.FunctionDef)
        return template.with_changes(body=block.with_changes(body=statements))  # type: ignore[attr-defined]

    def _loop_call(self, plan: LoopPlan, function: str, arguments: list[str], depth: int) -> cst.BaseStatement:
        targets = ", ".join(plan.carry)
        prefix = f"{targets} = " if plan.carry else ""
        context = self.context  # type: ignore[attr-defined]
        context.column = self.base_column + depth * 4 + len(prefix)  # type: ignore[attr-defined]
        call = context.call_source(function, arguments)
        return cst.parse_statement(prefix + call + "\n")

    # -- fori_loop ---------------------------------------------------------------------------

    def _bound(self, node: ast.expr | None, truncate: bool, default: str) -> str:
        text = _source(self.text, node, default)  # type: ignore[attr-defined]
        if truncate:
            jnp = self.context.name("jax.numpy")  # type: ignore[attr-defined]
            return f"{jnp}.asarray({text}).astype({jnp}.int32)"
        return text

    def _render_fori(self, plan: LoopPlan, statement: cst.For, depth: int) -> list[cst.BaseStatement]:
        lower = self._bound(plan.lower, False, "0")
        upper = self._bound(plan.upper, plan.truncate_upper, "0")
        if plan.flag:
            return self._render_range_with_break(plan, statement, depth, lower, upper)
        index = plan.target or "i"
        prologue = self._unpack(plan)
        start = lower
        if plan.step != 1:
            # Count iterations from 0; the loop variable is computed from the count.
            step, counter = plan.step, "iteration"
            offset = counter if abs(step) == 1 else f"{counter} * {abs(step)}"
            sign = "+" if step > 0 else "-"
            value = offset if lower == "0" and step > 0 else f"{lower} {sign} {offset}"
            prologue = [*prologue, cst.parse_statement(f"{index} = {value}\n")]
            first, last = (upper, lower) if step > 0 else (lower, upper)
            upper = _ceil_divide(_difference(first, last), abs(step))
            lower, index = "0", counter
        parameters = f"{index}, {self._carry_parameter(plan)}"
        body = self._body_def(plan.body_name, parameters, statement.body, prologue, plan, depth)
        initial = self._carry_source(plan)
        if plan.target in plan.carry and not plan.target_bound:
            # Read after the loop only when it ran (eager Python raises otherwise): any start will do.
            initial = ", ".join(start if name == plan.target else name for name in plan.carry)
            initial = f"({initial})" if len(plan.carry) > 1 else initial
        call = self._loop_call(plan, f"{self.context.name('jax.lax')}.fori_loop",  # type: ignore[attr-defined]
                               [lower, upper, plan.body_name, initial], depth)
        return [body, call]

    def _render_range_with_break(self, plan: LoopPlan, statement: cst.For, depth: int, lower: str,
                                 upper: str) -> list[cst.BaseStatement]:
        """A range loop that can break: a while_loop over (index, carry..., stop flag)."""
        jnp = self.context.name("jax.numpy")  # type: ignore[attr-defined]
        index = plan.counter or plan.target or "i"
        names = [index, *plan.carry]
        compare = "<" if plan.step > 0 else ">"
        cond_unpack = ", ".join(name if name in (index, plan.flag) else plan.placeholder for name in names)
        cond = cst.parse_statement(
            f"def {plan.cond_name}(carry):\n    {cond_unpack} = carry\n"
            f"    return {jnp}.logical_and({index} {compare} {upper}, {jnp}.logical_not({plan.flag}))\n")
        unpack = [cst.parse_statement(f"{', '.join(names)} = carry\n")]
        if plan.counter:
            unpack.append(cst.parse_statement(f"{plan.target} = {plan.counter}\n"))
        step = f"+ {plan.step}" if plan.step > 0 else f"- {-plan.step}"
        epilogue = [cst.parse_statement(f"{index} = {index} {step}\n")]
        body = self._body_def(plan.body_name, "carry", statement.body, unpack, plan, depth, epilogue,
                              returned=", ".join(names))
        start = cst.parse_statement(f"{plan.flag} = False\n")
        context = self.context  # type: ignore[attr-defined]
        prefix = f"{', '.join(names)} = "
        context.column = self.base_column + depth * 4 + len(prefix)  # type: ignore[attr-defined]
        # The loop variable read after the loop starts as its value before it, if it has one
        # (else it is read only when the loop ran: any start will do).
        initial = [lower if name == plan.target and not plan.target_bound else name for name in plan.carry]
        call = context.call_source(f"{context.name('jax.lax')}.while_loop",
                                   [plan.cond_name, plan.body_name, f"({', '.join([lower, *initial])})"])
        return [start, cond, body, cst.parse_statement(prefix + call + "\n")]

    # -- scan ---------------------------------------------------------------------------------

    def _render_scan(self, plan: ScanPlan, statement: cst.For, depth: int) -> list[cst.BaseStatement]:
        jnp = self.context.name("jax.numpy")  # type: ignore[attr-defined]
        sources = [_source(self.text, source, "") for source in plan.sources]  # type: ignore[attr-defined]
        if plan.enumerated:
            sources.insert(0, f"{jnp}.arange(len({sources[0]}))")
        scanned = sources[0] if len(sources) == 1 else f"({', '.join(sources)})"
        single_target = len(plan.targets) == 1
        step = plan.targets[0] if single_target else "step"
        prologue = self._unpack(plan)
        if not single_target:
            prologue.append(cst.parse_statement(f"{', '.join(plan.targets)} = step\n"))
        carry = self._carry_source(plan)
        items = [output.item for output in plan.outputs]
        stacked = items[0] if len(items) == 1 else f"({', '.join(items)})" if items else "None"
        body_statements = self._with_items(plan, statement.body.body)  # type: ignore[attr-defined]
        direct = {id(output.append) for output in plan.outputs if output.direct}
        analysed = [node for node in plan.statements if id(node) not in direct]
        body = self._block(body_statements, analysed, depth + 1)  # type: ignore[attr-defined]
        if prologue and body and isinstance(body[0], cst.FunctionDef) and not body[0].leading_lines:
            body[0] = body[0].with_changes(leading_lines=[blank_line()])
        returned = cst.parse_statement(f"return {carry if plan.carry else 'carry'}, {stacked}\n")
        template = cst.parse_statement(f"def {plan.body_name}({self._carry_parameter(plan)}, {step}):\n    pass\n")
        assert isinstance(template, cst.FunctionDef)
        function = template.with_changes(body=statement.body.with_changes(body=[*prologue, *body, returned]))
        carried = ", ".join(plan.carry) if len(plan.carry) == 1 else carry if plan.carry else "_"
        outputs = [output.name for output in plan.outputs]
        results = outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})" if outputs else "_"
        prefix = f"{carried}, {results} = "
        context = self.context  # type: ignore[attr-defined]
        context.column = self.base_column + depth * 4 + len(prefix)  # type: ignore[attr-defined]
        call = context.call_source(f"{context.name('jax.lax')}.scan",
                                   [plan.body_name, carry if plan.carry else "None", scanned])
        return [function, cst.parse_statement(prefix + call + "\n")]

    def _with_items(self, plan: ScanPlan, statements) -> list[cst.BaseStatement]:
        """``ys.append(value)`` -> ``y = value``: the value becomes the step's stacked output."""
        by_append = {id(output.append): output for output in plan.outputs}
        result = []
        for written, analysed in pair_statements(statements, plan.statements):
            output = by_append.get(id(analysed[0])) if len(analysed) == 1 else None
            if output is not None and output.direct:
                continue  # `hs.append(h)`: h itself is the step's output
            if output is not None and isinstance(written, cst.SimpleStatementLine):
                call = written.body[0].value  # type: ignore[attr-defined]
                value = code(call.args[0].value)
                replacement = cst.parse_statement(f"{output.item} = {value}\n")
                written = replacement.with_changes(leading_lines=written.leading_lines,
                                                   trailing_whitespace=written.trailing_whitespace)
            result.append(written)
        return result

    # -- while_loop --------------------------------------------------------------------------

    def _render_while(self, plan: LoopPlan, statement: cst.While, depth: int) -> list[cst.BaseStatement]:
        test = self._test_source(plan, statement)
        start: list[cst.BaseStatement] = []
        if plan.flag:  # a break ends the loop through the flag
            jnp = self.context.name("jax.numpy")  # type: ignore[attr-defined]
            test = f"{jnp}.logical_and({test}, {jnp}.logical_not({plan.flag}))"
            start = [cst.parse_statement(f"{plan.flag} = False\n")]
        test_reads = {node.id for node in ast.walk(plan.node.test) if isinstance(node, ast.Name)} | {plan.flag}
        parameter = self._carry_parameter(plan)
        cond_body = [*self._unpack(plan, test_reads), cst.parse_statement(f"return {test}\n")]
        cond_template = cst.parse_statement(f"def {plan.cond_name}({parameter}):\n    pass\n")
        assert isinstance(cond_template, cst.FunctionDef)
        cond = cond_template.with_changes(body=cond_template.body.with_changes(body=cond_body))
        body = self._body_def(plan.body_name, parameter, statement.body, self._unpack(plan), plan, depth)
        call = self._loop_call(plan, f"{self.context.name('jax.lax')}.while_loop",  # type: ignore[attr-defined]
                               [plan.cond_name, plan.body_name, self._carry_source(plan)], depth)
        return [*start, cond, body, call]

    def _test_source(self, plan: LoopPlan, statement: cst.While) -> str:
        test = code(statement.test.with_changes(lpar=[], rpar=[])) if statement.test.lpar else code(statement.test)
        if plan.boolean_test:
            return test
        return f"{_grouped(test)} != 0"
