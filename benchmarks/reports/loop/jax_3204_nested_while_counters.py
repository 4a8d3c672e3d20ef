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
    val = 0
    i = 0
    while i < a + 1:
        j = 0
        while j < b + 1:
            val += i + j
            j += 1
        i += 1
    return val


jit_test = jax.jit(test)


def main():
    return [jit_test(a, b) for a, b in ((-1, 3), (0, 0), (4, 2), (2, -1))]
