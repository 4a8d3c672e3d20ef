"""Fixes that restructure a statement in plain Python first, so that the next rounds of safe
fixes rewrite it: a loop's nested ``break``/``continue`` as flags (``control_flow/jump_lowering``),
item writes into a dict of the function as new dicts (``control_flow/dict_updates``).

Each is offered only when it works: the restructured text is analysed and fixed as ``fix``
would, and the restructuring is kept only if nothing is then left undone in the function.
The rewrite itself is those next rounds; this fix is only the restructuring.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable

from jitfix.analysis.blocks import private_dicts
from jitfix.analysis.traced import TracedFunction
from jitfix.control_flow.context import checking_lowered
from jitfix.control_flow.plans import Lowering
from jitfix.cst_text import cst
from jitfix.findings import Edit, EditContext, EditError, Fix, Safety
from jitfix.rules.base import ModuleContext

if TYPE_CHECKING:
    from jitfix.findings import Replaced

DESCRIPTIONS = {
    Lowering.JUMPS: "turn the nested break/continue into flags, then rewrite as a lax loop",
    Lowering.DICT_UPDATES: "write the dict items as new dicts (`d = {**d, k: v}`), then rewrite with lax",
}


def lowering_fix(module: ModuleContext, function: TracedFunction, statement: ast.If | ast.For | ast.While,
                 lowering: Lowering) -> Fix | None:
    """The restructuring of ``statement``, if the rewrite then takes everything in the function."""
    if checking_lowered.get():
        return None  # already checking a restructuring: no second one inside it
    from jitfix.engine import InternalError, Options, apply_edits, process_text  # the engine drives the rules
    from jitfix.files import InputError

    restructure, still_undone = _restructuring(function, lowering)
    node_type = cst.If if isinstance(statement, ast.If) else cst.For if isinstance(statement, ast.For) else cst.While
    edit = Edit(module.start_of(statement), node_type, restructure)
    token = checking_lowered.set(True)
    try:
        lowered_text = apply_edits(module.text, [edit], module.imports, module.tree)
        result = process_text(module.path, lowered_text, module.settings, Options(apply_fixes=True))
    except (InternalError, InputError):
        return None
    finally:
        checking_lowered.reset(token)
    if result.new_text is None or still_undone(result.new_text):
        return None
    qualname = function.qualname
    if any(f.function == qualname or (f.function or "").startswith(qualname + ".") for f in result.findings):
        return None  # anything left undone in the function: it is not restructured either
    return Fix(Safety.SAFE, DESCRIPTIONS[lowering], [edit])


def _restructuring(function: TracedFunction,
                   lowering: Lowering) -> tuple[Callable[[cst.CSTNode, EditContext], Replaced], Callable[[str], bool]]:
    """(the edit's replacement, whether a fixed text still holds what it put in)."""
    if lowering is Lowering.DICT_UPDATES:
        from jitfix.control_flow.dict_updates import DictUpdates

        names = sorted(private_dicts(function.node))
        return (lambda node, context: node.visit(DictUpdates(names))), lambda text: False
    from jitfix.control_flow.jump_lowering import JumpLowering

    flags: set[str] = set()

    def lower(node: cst.CSTNode, context: EditContext) -> cst.CSTNode | cst.FlattenSentinel:
        assert isinstance(node, cst.For | cst.While)
        lowerer = JumpLowering(function.node, node)
        lowered = lowerer.loop(node)
        if lowered is None:
            raise EditError("a jump sits in a block the lowering does not reach")
        flags.update(lowerer.flags.values())
        return lowered

    return lower, lambda text: _flag_guards_left(text, flags)


def _flag_guards_left(text: str, flags: set[str]) -> bool:
    """Whether ``text`` still holds an ``if <flag>: break`` (or ``continue``) of the lowering."""
    return any(isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in flags
               and len(node.body) == 1 and isinstance(node.body[0], ast.Break | ast.Continue)
               for node in ast.walk(ast.parse(text)))
