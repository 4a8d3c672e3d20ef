"""The libcst transformers the rules' fixes run over the subtree they rewrite.

They live apart from the rules because a class must have its base when it is defined:
here, ``libcst`` loads only when a fix is built, and checking code that needs no fix never
loads it (a fifth of a run's start-up).
"""

from __future__ import annotations

from jitfix.analysis.python_arithmetic import OPERATOR, TO_INT
from jitfix.cst_text import code, cst
from jitfix.findings import EditContext


class AttributeReads(cst.CSTTransformer):
    """``config.LR`` -> ``LR`` (or ``self.lr`` -> ``lr``): each ``(name, attribute)`` read
    becomes the parameter it is passed in as."""

    def __init__(self, parameters: dict[tuple[str, str], str]):
        super().__init__()
        self.parameters = parameters

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if isinstance(updated.value, cst.Name):
            parameter = self.parameters.get((updated.value.value, updated.attr.value))
            if parameter is not None:
                return cst.Name(parameter, lpar=updated.lpar, rpar=updated.rpar)
        return updated


def _binary_operators() -> dict[str, cst.BaseBinaryOp]:
    return {"+": cst.Add(), "-": cst.Subtract(), "*": cst.Multiply(), "/": cst.Divide(), "//": cst.FloorDivide(),
            "**": cst.Power(), "%": cst.Modulo()}


class InPython(cst.CSTTransformer):
    def __init__(self, functions: dict[str, str | None], context: EditContext):
        super().__init__()
        self.functions, self.context = functions, context

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        source = code(original.func)
        if source not in self.functions:
            return updated
        python = self.functions[source]
        if python is None:
            return updated.args[0].value
        if python == TO_INT:  # x.astype(int) -> int(x), or x itself where that is an int already
            assert isinstance(updated.func, cst.Attribute)
            number = updated.func.value
            math = self.context.name("math")
            if isinstance(number, cst.Call) and code(number.func) in {f"{math}.ceil", f"{math}.floor",
                                                                      f"{math}.trunc", "round"}:
                return number
            return cst.Call(func=cst.Name("int"), args=[cst.Arg(number)])
        if python.startswith(OPERATOR):  # jnp.add(n, 1) -> (n + 1)
            operator = _binary_operators()[python[len(OPERATOR):]]
            return cst.BinaryOperation(left=updated.args[0].value, operator=operator, right=updated.args[1].value,
                                       lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        module, _, function = python.rpartition(".")
        name = cst.parse_expression(f"{self.context.name(module)}.{function}" if module else function)
        if not updated.args and isinstance(updated.func, cst.Attribute):  # jnp.array(s).prod() -> math.prod(s)
            return cst.Call(func=name, args=[cst.Arg(updated.func.value)])
        return updated.with_changes(func=name)
