"""Three nested count-down while loops accumulate `i + k + j` from the arguments `a` and `b`.

Source: https://github.com/jax-ml/jax/issues/2261
Fails: the report wrote the loops with the since-removed `jax.experimental.loops`
    (`s.while_range(lambda: s.i > 0)`); as plain Python `while` loops on values derived
    from the traced `a` and `b`, `while i > 0` raises TracerBoolConversionError under jit.
Fix: nest three `jax.lax.while_loop`s, each carrying its counter and the running quantity.
"""

import jax


def test4(a, b):
    def k_body(state):
        i, j, k, quantity = state
        return i, j, k - 1, quantity + i + k + j

    def j_body(state):
        i, j, quantity = state
        k = b + 2  # NOTE this changed!
        _, _, _, quantity = jax.lax.while_loop(lambda s: s[2] > 0, k_body, (i, j, k, quantity))
        return i, j - 1, quantity

    def i_body(state):
        i, quantity = state
        j = 2 * i + 1
        _, _, quantity = jax.lax.while_loop(lambda s: s[1] > 0, j_body, (i, j, quantity))
        return i - 1, quantity

    quantity = 0.0
    i = a + b
    _, quantity = jax.lax.while_loop(lambda s: s[0] > 0, i_body, (i, quantity))
    return quantity


def main():
    jit_test4 = jax.jit(test4)
    return [jit_test4(a, b) for a, b in ((-1.0, 0.0), (0.5, 0.5), (3.0, 2.0), (3.0, -2.0))]
