"""Fixtures of several modules (``tests/project_fixtures/<case>/``): a run over the whole
folder is one program. Each ``.py`` file holds its source and, after ``# output``, what
``fix`` makes of it (no marker: it must stay byte-identical). The folder's ``main.py`` has
SAMPLES, called on the original with jit disabled and on the fixed modules under jit; the
results and printed output must agree. ``fix`` on its own output changes nothing."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest
from fixture_support import OUTPUT_MARKER, assert_same_results, run_samples

from jitfix.api import process
from jitfix.config import Settings
from jitfix.engine import Options

FOLDER = Path(__file__).parent / "project_fixtures"
CASES = sorted(path for path in FOLDER.iterdir() if path.is_dir())


def _halves(case: Path) -> dict[str, tuple[str, str]]:
    """relative path -> (source, expected output)."""
    files = {}
    for path in sorted(case.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        source, _, expected = text.partition(OUTPUT_MARKER)
        files[str(path.relative_to(case))] = (source, expected if OUTPUT_MARKER in text else source)
    return files


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")


def _fixed(root: Path) -> dict[str, str]:
    results = process([str(root)], Settings(), Options(apply_fixes=True), use_cache=False)
    return {str(Path(result.path).relative_to(root)): result.new_text for result in results.files
            if result.new_text is not None}


def _main(root: Path):
    """The case's main module, imported from ``root`` (its modules fresh)."""
    names = {path.stem for path in root.iterdir()} | {path.name for path in root.iterdir() if path.is_dir()}
    for name in [module for module in sys.modules if module.split(".")[0] in names]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module("main")
    finally:
        sys.path.remove(str(root))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_fix_matches_expected_output_and_runs_as_the_original(case: Path, tmp_path: Path) -> None:
    files = _halves(case)
    original, rewritten = tmp_path / "original", tmp_path / "fixed"
    _write(original, {relative: source for relative, (source, _) in files.items()})
    _write(rewritten, {relative: source for relative, (source, _) in files.items()})
    fixed = _fixed(rewritten)
    for relative, (source, expected) in files.items():
        assert fixed.get(relative, source) == expected, relative
    _write(rewritten, {relative: expected for relative, (_, expected) in files.items()})
    assert _fixed(rewritten) == {}, "fix on its own output changes something"
    eager = run_samples(_main(original), eager=True)
    jitted = run_samples(_main(rewritten), eager=False)
    for (want, want_printed), (got, printed) in zip(eager, jitted):
        assert_same_results(want, got, case.name)
        assert printed == want_printed
    shutil.rmtree(tmp_path)
