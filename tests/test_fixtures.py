"""Every fixture: the fix matches the expected output, is idempotent, leaves the expected
findings, and — where the fixture defines SAMPLES — the rewrite under jax.jit gives the
results and the stdout that the original gives when run eagerly."""

from __future__ import annotations

import pytest

from fixture_support import Fixture, all_fixtures, assert_same_results, exec_module, run_samples
from jitfix.config import Settings
from jitfix.engine import Options, process_text

FIXTURES = all_fixtures()
FIX = Options(apply_fixes=True)


def fix(code: str, settings: Settings | None = None):
    return process_text("fixture.py", code, settings or Settings(), FIX)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fix_matches_expected_output(fixture: Fixture) -> None:
    result = fix(fixture.source, fixture.settings)
    assert result.new_text == fixture.expected
    assert [finding.code for finding in result.findings] == fixture.expected_codes
    for finding in result.findings:
        assert "not auto-fixable" in finding.message or finding.fix is not None, finding.message


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_fix_is_idempotent(fixture: Fixture) -> None:
    assert fix(fixture.expected, fixture.settings).new_text == fixture.expected


RUNNABLE = [f for f in FIXTURES if "\nSAMPLES = " in f.source]


@pytest.mark.parametrize("fixture", RUNNABLE, ids=[f.id for f in RUNNABLE])
def test_rewrite_under_jit_matches_eager_original(fixture: Fixture) -> None:
    reference = run_samples(exec_module(fixture.source, "original"), eager=True)
    rewritten = run_samples(exec_module(fixture.expected, "rewritten"), eager=False)
    assert len(reference) == len(rewritten)
    for index, ((want, want_out), (got, got_out)) in enumerate(zip(reference, rewritten)):
        assert_same_results(want, got, f"{fixture.id} sample {index}", fixture.promoted, fixture.jax_dtypes)
        assert got_out == want_out, f"{fixture.id} sample {index}: stdout differs"


def test_every_fixture_family_is_runnable() -> None:
    assert len(RUNNABLE) >= 8
