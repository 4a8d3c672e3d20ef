"""Three nested count-down while loops accumulate `i + k + j` from the arguments `a` and `b`.

Source: https://github.com/jax-ml/jax/issues/2261
Fails: the report wrote the loops with the since-removed `jax.experimental.loops`
    (`s.while_range(lambda: s.i > 0)`); as plain Python `while` loops on values derived
    from the traced `a` and `b`, `while i > 0` raises TracerBoolConversionError under jit.
Fix: nest three `jax.lax.while_loop`s, each carrying its counter and the running quantity.
"""

import jax


def test4(a, b):
    quantity = 0.0
    i = a + b
    while i > 0:
        j = 2 * i + 1
        while j > 0:
            k = b + 2  # NOTE this changed!
            while k > 0:
                quantity += i + k + j
                k -= 1
            j -= 1
        i -= 1
    return quantity


def main():
    jit_test4 = jax.jit(test4)
    return [jit_test4(a, b) for a, b in ((-1.0, 0.0), (0.5, 0.5), (3.0, 2.0), (3.0, -2.0))]
