"""The rule registry: one module per family, every rule listed here once."""

from __future__ import annotations

from jitfix.rules.arrays import BuiltinOnTracer, Concretization, InPlaceUpdate, NumpyOnTracer
from jitfix.rules.base import Rule
from jitfix.rules.conditionals import (
    NonScalarCondition,
    TracedBooleanOperator,
    TracedConditionalExpression,
    TracedIf,
)
from jitfix.rules.globals import StaleGlobal
from jitfix.rules.loops import ScannableLoop, TracedRangeLoop, TracedWhileLoop
from jitfix.rules.shapes import ShapeArgument
from jitfix.rules.side_effects import PrintInTracedCode, TraceTimeSideEffect

ALL_RULES: tuple[Rule, ...] = (
    TracedIf(),
    TracedConditionalExpression(),
    TracedBooleanOperator(),
    NonScalarCondition(),
    TracedRangeLoop(),
    TracedWhileLoop(),
    ScannableLoop(),
    StaleGlobal(),
    PrintInTracedCode(),
    TraceTimeSideEffect(),
    ShapeArgument(),
    Concretization(),
    NumpyOnTracer(),
    InPlaceUpdate(),
    BuiltinOnTracer(),
)
RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in ALL_RULES}


def find_rule(code_or_name: str) -> Rule | None:
    """A rule by its code (any case) or its name."""
    wanted = code_or_name.strip()
    return RULES_BY_CODE.get(wanted.upper()) or next((rule for rule in ALL_RULES if rule.name == wanted.lower()), None)


def selected_rules(is_enabled) -> list[Rule]:
    return [rule for rule in ALL_RULES if is_enabled(rule.code)]
