"""Restructurings are checked by fixing the restructured text again (the restructurings that
follow offered unchecked inside); a function with many returning `if`s offers many. Their number per analysis is bounded and each text is
checked once, so such a function is analysed in bounded time."""

import sys
from pathlib import Path

import jitfix.engine as engine
from jitfix.config import Settings
from jitfix.control_flow.lowering_checks import MAX_LOWERING_CHECKS, checking_lowered
from jitfix.engine import Options, process_text

# A fuzzed program that took 100 s to check before the bound: one 90-line function, a
# `while` with a `break`, and returning `if`s nested three deep.
MANY_RETURNING_IFS = Path(__file__).parent / "data" / "many_returning_ifs.py"
# A fuzzed program whose dict write in a branch is restructured first; checking that, the
# returning `if`s in a branch block with a loop after them are restructured too.
RETURN_IN_A_BRANCH_BLOCK = Path(__file__).parent / "data" / "return_in_a_branch_block_after_a_dict_write.py"
# A fuzzed program whose returning `if flag:` sits in a static `if`'s block with more code
# after it, and a dict write in the same chain: made a function first, the code after would
# take the dict as an argument, no longer the function's own; the writes made new dicts first.
DICT_WRITE_BESIDE_A_CONTINUATION = Path(__file__).parent / "data" / "continuation_beside_a_dict_write_after_it.py"


def test_restructurings_checked_per_analysis_are_bounded(monkeypatch):
    nested: list[str] = []
    real = engine.process_text

    def counting(path, text, settings, options, *args, **kwargs):
        if checking_lowered.get():
            nested.append(text)
        return real(path, text, settings, options, *args, **kwargs)

    monkeypatch.setattr(engine, "process_text", counting)
    text = MANY_RETURNING_IFS.read_text()
    result = process_text("many_returning_ifs.py", text, Settings(), Options(apply_fixes=False))
    assert result.findings  # the function still gets its findings
    assert 0 < len(nested) <= MAX_LOWERING_CHECKS
    assert len(set(nested)) == len(nested)  # no text is checked twice


def test_a_restructuring_that_needs_others_after_it_is_offered():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import fuzz

    tally = fuzz.Tally()
    fuzz.check_program(RETURN_IN_A_BRANCH_BLOCK.read_text(), tally)
    assert tally.counts["fixed"] == 1, tally.failures or tally.declines  # eager = jitted rewrite, idempotent


def test_dict_writes_made_new_first_when_a_continuation_alone_does_not_take_the_function():
    sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
    import fuzz

    tally = fuzz.Tally()
    fuzz.check_program(DICT_WRITE_BESIDE_A_CONTINUATION.read_text(), tally)
    assert tally.counts["fixed"] == 1, tally.failures or tally.declines  # eager = jitted rewrite, idempotent
