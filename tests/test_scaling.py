"""The analysis grows with the size of a module, not with its square: a module four times
as long costs about four times the tree walking. Measured by counting the nodes every
`ast.walk` of the analysis visits (deterministic, unlike a timing), on generated modules
shaped like a large test file: many jitted functions, each called with names bound at module
level and in the caller (flax's `transforms_test.py`, 8,000 lines, once took over 300 s)."""

from __future__ import annotations

import ast
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from jitfix.config import Settings
from jitfix.engine import analyse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from large_modules import jitted_functions  # noqa: E402  (the module the benchmark measures)


def _module(cases: int) -> str:
    parts = ["import jax\nimport jax.numpy as jnp\n\nSCALE = jnp.ones(3)\n"]
    for case in range(cases):
        parts.append(f"""
class TestCase{case}:
    def test_step(self):
        @jax.jit
        def step_{case}(x, y, flag):
            return x * y + SCALE

        z = jnp.zeros(3)
        out = step_{case}(z, SCALE, True)
        out = step_{case}(out, z, False)
        return out
""")
    return "".join(parts)


def _walked_nodes(monkeypatch: pytest.MonkeyPatch, text: str) -> int:
    visited = 0
    walk = ast.walk

    def counting_walk(node: ast.AST) -> Iterator[ast.AST]:
        nonlocal visited
        for child in walk(node):
            visited += 1
            yield child

    with monkeypatch.context() as patched:
        patched.setattr(ast, "walk", counting_walk)
        analyse("module.py", text, Settings())
    return visited


def test_tree_walking_grows_linearly_with_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    small = _walked_nodes(monkeypatch, _module(50))
    large = _walked_nodes(monkeypatch, _module(200))
    assert large < 6 * small, (small, large)  # 4x the code; a walk per call or per def would give 16x


def _peak_memory(text: str) -> int:
    tracemalloc.start()
    try:
        analyse("module.py", text, Settings())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_grows_linearly_with_a_module_ofjitted_functions() -> None:
    # Each statement's state of the flow analysis is a copy; with the module's names in it,
    # that copy grew with the module, and the module's memory with its square (4x the code
    # took 10x the memory; 5,000 such functions took 7 GB).
    analyse("warm.py", jitted_functions(5), Settings())  # the rules' own imports, once
    small = _peak_memory(jitted_functions(100))
    large = _peak_memory(jitted_functions(400))
    assert large < 6 * small, (small, large)
