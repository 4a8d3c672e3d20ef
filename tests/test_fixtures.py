"""Every fixture: the fix matches the expected output, is idempotent, leaves the expected
findings, and — where the fixture defines SAMPLES — the rewrite under jax.jit gives the
results and the stdout that the original gives when run eagerly."""

from __future__ import annotations

import pytest
import snapshots
from fixture_support import FIXTURES as FIXTURE_FOLDER
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


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_check_on_the_fixed_output_finds_only_what_the_fix_left(fixture: Fixture) -> None:
    """`jitfix check` on jitfix's own output reports none of the code it wrote: only the
    findings the fix declined, which the output still holds."""
    found = process_text("fixture.py", fixture.expected, fixture.settings, Options()).findings
    assert sorted(finding.code for finding in found) == sorted(fixture.expected_codes), \
        [(finding.line, finding.code, finding.message) for finding in found]


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.id for f in FIXTURES])
def test_findings_are_pinned(fixture: Fixture, request: pytest.FixtureRequest) -> None:
    """What `jitfix check` says on the fixture -- positions and messages -- is what its
    folder's findings.snap pins (`pytest --update-snapshots` rewrites it)."""
    found = snapshots.render(process_text("fixture.py", fixture.source, fixture.settings, Options()).findings)
    if request.config.getoption("--update-snapshots"):
        snapshots.write(fixture.path.parent, fixture.path.stem, found)
        return
    pinned = snapshots.read(fixture.path.parent).get(fixture.path.stem)
    assert pinned is not None, f"{fixture.id} has no pinned findings: run pytest --update-snapshots"
    assert found == pinned


def test_every_pinned_section_has_its_fixture() -> None:
    names = {(f.path.parent.name, f.path.stem) for f in FIXTURES}
    for folder in sorted(path for path in FIXTURE_FOLDER.iterdir() if path.is_dir()):
        stale = [name for name in snapshots.read(folder) if (folder.name, name) not in names]
        assert not stale, f"{folder.name}/{snapshots.SNAPSHOT_NAME} pins fixtures that do not exist: {stale}"


RUNNABLE = [f for f in FIXTURES if "\nSAMPLES = " in f.source]


@pytest.mark.parametrize("fixture", RUNNABLE, ids=[f.id for f in RUNNABLE])
def test_rewrite_under_jit_matches_eager_original(fixture: Fixture) -> None:
    reference = run_samples(exec_module(fixture.source, "original", eager=True), eager=True)
    rewritten = run_samples(exec_module(fixture.expected, "rewritten"), eager=False)
    assert len(reference) == len(rewritten)
    for index, ((want, want_out), (got, got_out)) in enumerate(zip(reference, rewritten)):
        assert_same_results(want, got, f"{fixture.id} sample {index}", fixture.promoted, fixture.jax_dtypes)
        assert got_out == want_out, f"{fixture.id} sample {index}: stdout differs"


def test_every_fixture_family_is_runnable() -> None:
    assert len(RUNNABLE) >= 8
