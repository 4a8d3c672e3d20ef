"""The rule registry: one module per family, every rule listed here once."""

from __future__ import annotations

from jitfix.rules.arrays import BuiltinOnTracer, Concretization, InPlaceUpdate, NumpyOnTracer
from jitfix.rules.attributes import StaleAttribute, TracedSelf
from jitfix.rules.base import Rule
from jitfix.rules.conditionals import (
    NonScalarCondition,
    TracedAssert,
    TracedBooleanOperator,
    TracedConditionalExpression,
    TracedIf,
)
from jitfix.rules.globals import StaleGlobal
from jitfix.rules.loops import ScannableLoop, TracedRangeLoop, TracedWhileLoop
from jitfix.rules.python_arguments import PythonObjectArgument, UnhashableStaticArgument
from jitfix.rules.raising_branches import RaisingBranch
from jitfix.rules.recompilation import (
    GrowingShapeArgument,
    JitRebuiltInLoop,
    StaticArgumentPerPass,
    WeakTypeFlip,
)
from jitfix.rules.shapes import DataDependentShape, ShapeArgument
from jitfix.rules.side_effects import PrintInTracedCode, TraceTimeSideEffect
from jitfix.rules.staged_constants import StagedConstant

ALL_RULES: tuple[Rule, ...] = (
    TracedIf(),
    TracedConditionalExpression(),
    TracedBooleanOperator(),
    NonScalarCondition(),
    TracedAssert(),
    RaisingBranch(),
    TracedRangeLoop(),
    TracedWhileLoop(),
    ScannableLoop(),
    StaleGlobal(),
    StaleAttribute(),
    TracedSelf(),
    PrintInTracedCode(),
    TraceTimeSideEffect(),
    ShapeArgument(),
    JitRebuiltInLoop(),
    StaticArgumentPerPass(),
    GrowingShapeArgument(),
    WeakTypeFlip(),
    DataDependentShape(),
    PythonObjectArgument(),
    UnhashableStaticArgument(),
    StagedConstant(),
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


def nearest(word: str, candidates: list[str], at_least: float = 0.6) -> list[str]:
    """The candidates most like ``word`` (a typo's correction), all of them if tied; none when
    nothing is close (alike by less than ``at_least``)."""
    import difflib

    scored = [(difflib.SequenceMatcher(None, word, candidate).ratio(), candidate) for candidate in candidates]
    best = max((score for score, _ in scored), default=0.0)
    return sorted(candidate for score, candidate in scored if score == best) if best >= at_least else []


def readme_table() -> str:
    """The README's rule table, made from the rules themselves (`tools/update_readme.py`
    writes it; a test fails when the README's copy is stale)."""
    rows = [f"| {rule.code} | {rule.name} | {rule.fixable} | {rule.summary} |" for rule in ALL_RULES]
    return "\n".join(["| code | name | fixable | finds |", "|---|---|---|---|", *rows]) + "\n"


def selected_rules(is_enabled) -> list[Rule]:
    return [rule for rule in ALL_RULES if is_enabled(rule.code)]
