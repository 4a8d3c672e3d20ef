"""Two nested while loops accumulate `i + j` over `i <= a` and `j <= b`.

Source: https://github.com/jax-ml/jax/issues/3204
Fails: the report wrote these loops with the since-removed `jax.experimental.loops`
    (`s.while_range(lambda: s.i < a + 1)`); as plain Python `while` loops on the traced
    `a` and `b`, `while i < a + 1` raises TracerBoolConversionError under jit.
Fix: nest two `jax.lax.while_loop`s, the inner one carrying `(j, val)`.
"""

import jax
import jax.numpy as np


def test(a, b):
    def inner(state):
        i, j, val = state
        return i, j + 1, val + i + j

    def outer(state):
        i, val = state
        _, _, val = jax.lax.while_loop(lambda s: s[1] < b + 1, inner, (i, 0, val))
        return i + 1, val

    _, val = jax.lax.while_loop(lambda s: s[0] < a + 1, outer, (0, 0))
    return val


jit_test = jax.jit(test)


def main():
    return [jit_test(a, b) for a, b in ((-1, 3), (0, 0), (4, 2), (2, -1))]
