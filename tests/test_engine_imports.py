"""What a check loads: libcst only once a fix is built (a fifth of a short run's start-up)."""

from __future__ import annotations

import subprocess
import sys

CLEAN_TRACED = '''
import jax
import jax.numpy as jnp


@jax.jit
def f(x, n=None):
    if n is None:
        return x
    return jnp.where(x > 0, x, -x)
'''

BROKEN_TRACED = '''
import jax


@jax.jit
def f(x):
    if x > 0:
        return x
    return -x
'''


def _libcst_loaded_after_checking(source: str) -> bool:
    script = (
        "import sys\n"
        "from jitfix.config import Settings\n"
        "from jitfix.engine import Options, process_text\n"
        f"process_text('m.py', {source!r}, Settings(), Options())\n"
        "print('libcst._nodes.base' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return out.strip() == "True"


def test_checking_traced_code_that_needs_no_fix_does_not_load_libcst() -> None:
    assert not _libcst_loaded_after_checking(CLEAN_TRACED)


def test_a_finding_with_a_fix_loads_libcst() -> None:
    assert _libcst_loaded_after_checking(BROKEN_TRACED)
