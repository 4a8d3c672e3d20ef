"""The pre-commit hooks, run by pre-commit itself in a real git repository holding a module
that breaks under jit, configured as a user would: ``.pre-commit-config.yaml`` naming this
repository (at its committed HEAD) and the hooks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pre-commit installs its hooks

ROOT = Path(__file__).parent.parent
BROKEN = (ROOT / "examples" / "traced_if.py").read_text()

pytest.importorskip("pre_commit")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _hook(repo: Path, hook: str, home: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "pre_commit", "run", hook, "--files", "model.py"],
                          cwd=repo, capture_output=True, text=True, env=environment)


def _configure(repo: Path) -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("this checkout is not a git repository, which pre-commit needs to install the hooks from")
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head.stdout.strip()}\n"
        "    hooks:\n      - id: jitfix\n      - id: jitfix-check\n")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_hooks_fail_on_a_broken_module_and_fix_it(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "pre-commit-home"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "model.py").write_text(BROKEN)
    _configure(repo)
    _git(repo, "add", "model.py", ".pre-commit-config.yaml")

    check = _hook(repo, "jitfix-check", home)
    assert check.returncode == 1, check.stdout
    assert "model.py:8:5: JF101 [*]" in check.stdout
    assert (repo / "model.py").read_text() == BROKEN  # the check hook changes nothing

    fix = _hook(repo, "jitfix", home)
    assert fix.returncode == 1, fix.stdout
    assert "files were modified by this hook" in fix.stdout
    assert "lax.cond(x.sum() > 0" in (repo / "model.py").read_text()

    _git(repo, "add", "model.py")
    assert _hook(repo, "jitfix", home).returncode == 0
    assert _hook(repo, "jitfix-check", home).returncode == 0
