"""The state of the checks a restructuring (``rules/lowering.py``) is offered under: whether
this analysis is one such check, of which function, and how many checks each function of the
text has used. Read by the planner, the lowering rule and the engine, which starts each text's
count and each round's."""

from __future__ import annotations

import collections
import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jitfix.engine import FileResult

# Whether this analysis checks a restructuring (see rules/lowering.py): a traced test the
# planner cannot prove one array is then a problem (the check must not count on it), and the
# restructurings the function needs next are offered unchecked (the check's verdict judges them).
checking_lowered: contextvars.ContextVar[bool] = contextvars.ContextVar("checking_lowered", default=False)
# The function (qualified name) whose restructuring is being checked: the check asks only
# whether the rewrite takes everything in it, so inside the check the other functions of the
# module are offered no restructuring of their own (each would be checked in turn, nested).
lowering_checked_for: contextvars.ContextVar[str | None] = contextvars.ContextVar("lowering_checked_for",
                                                                                   default=None)

# How many restructurings (rules/lowering.py) the processing of one text checks for one
# function: each check fixes a whole text again, and a long
# function with many returning `if`s offers many more than ever take effect. Past the bound
# the rest are reported as they are. Each fix round has its own (a round's restructured code
# holds problems no earlier check saw), within a bound over all rounds. On 250 fuzzed
# programs: one bound of 8 over all rounds declined 12, these 6, as with no bound at all, in
# 1.4x the time; a bound of 24 over all rounds took 1.5x. Each function has its own: a module
# of several functions to restructure had the last reported "not auto-fixable" by `check`
# while `fix` fixed it in a later round. A bound over the whole text keeps a module of many
# such functions in time.
MAX_LOWERING_CHECKS = 8
MAX_LOWERING_CHECKS_IN_ALL_ROUNDS = 16
MAX_LOWERING_CHECKS_OF_A_TEXT = 64


@dataclass
class LoweringChecks:
    """The restructurings one text's processing has checked: how many each function (by
    qualified name) has used, and what each restructured text gave, so that none is checked
    twice."""

    used: collections.Counter[str] = field(default_factory=collections.Counter)  # in this round of fixes
    used_in_all_rounds: collections.Counter[str] = field(default_factory=collections.Counter)
    results: dict[str, FileResult | None] = field(default_factory=dict)

    def take(self, function: str) -> bool:
        """Count one more check for ``function``; False when it has had as many as it may."""
        if (self.used[function] >= MAX_LOWERING_CHECKS or self.used_in_all_rounds[function]
                >= MAX_LOWERING_CHECKS_IN_ALL_ROUNDS or self.used_in_all_rounds.total() >= MAX_LOWERING_CHECKS_OF_A_TEXT):
            return False
        self.used[function] += 1
        self.used_in_all_rounds[function] += 1
        return True


lowering_checks: contextvars.ContextVar[LoweringChecks | None] = contextvars.ContextVar("lowering_checks",
                                                                                      default=None)


