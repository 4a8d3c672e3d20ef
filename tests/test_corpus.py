"""A pinned subset of the benchmark corpus (chex and equinox, real JAX libraries full of
jitted code) must come through jitfix untouched: no crash, no finding, no change.

The wheels come from the package index (never committed); without network the test skips.
The whole corpus runs from ``benchmarks/run.py``.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers import invoke

pytestmark = pytest.mark.slow  # the library corpora

SUBSET = ("chex==0.1.92", "equinox==0.13.8")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    download = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                               "--only-binary=:all:", *SUBSET, "-d", str(folder / "wheels")],
                              capture_output=True, text=True)
    if download.returncode != 0:
        pytest.skip(f"cannot download the corpus subset: {download.stderr.strip()[-200:]}")
    for wheel in (folder / "wheels").glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(folder / "src" / wheel.stem, [m for m in archive.namelist() if m.endswith(".py")])
    return folder / "src"


def test_real_libraries_get_no_findings_and_no_changes(corpus: Path) -> None:
    files = sorted(corpus.rglob("*.py"))
    assert len(files) > 80
    before = {path: path.read_bytes() for path in files}
    check = invoke("check", "--no-cache", str(corpus))
    assert check.exit_code == 0, check.stdout[-3000:] + check.stderr[-2000:]
    fix = invoke("fix", "--no-cache", "--unsafe-fixes", str(corpus))
    assert fix.exit_code == 0 and "internal error" not in fix.stderr
    assert {path: path.read_bytes() for path in files} == before
