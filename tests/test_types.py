"""The source type-checks (mypy, configured in pyproject.toml: bodies of untyped functions
checked, unused `# type: ignore` comments are errors)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # mypy over the whole source

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_errors() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
