"""What a run leaves to the cycle collector: a batch run freezes each tree it parses (the
collector never walks it); the editor's server, a long-lived process, freezes nothing."""

from __future__ import annotations

import gc
from pathlib import Path

from jitfix.config import Settings
from jitfix.engine import Options, process_text, run_paths

TRACED = "import jax\n\n\n@jax.jit\ndef f(x):\n    return x + 1\n"


def test_a_batch_run_freezes_the_trees_it_parses(tmp_path: Path) -> None:
    paths = []
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(TRACED)
        paths.append(str(tmp_path / name))
    gc.unfreeze()  # what an earlier test froze could be freed meanwhile, and lower the count
    before = gc.get_freeze_count()
    try:
        results = list(run_paths(paths, Settings(), Options(), jobs=1))
        assert [result.error for result in results] == [None, None]
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()


def test_one_text_checked_outside_a_batch_run_freezes_nothing() -> None:
    gc.unfreeze()
    result = process_text("module.py", TRACED, Settings(), Options())
    assert result.error is None
    assert gc.get_freeze_count() == 0
