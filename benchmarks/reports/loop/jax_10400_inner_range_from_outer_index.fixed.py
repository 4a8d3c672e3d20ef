"""A strictly upper-triangular pairwise table is filled by an outer loop over `i` and an inner loop
over `j in range(i + 1, n)`.

Source: https://github.com/jax-ml/jax/issues/10400
Fails: the report's outer loop (`s.range` of the removed `jax.experimental.loops`, today a
    `lax.fori_loop`) hands the body a traced `i`, so the inner loop starting at `i`
    (`s.range(i, x.shape[0])` in the report, `range(i + 1, n)` here) raises
    TracerIntegerConversionError (a ConcretizationTypeError in the report).
Fix: make the inner loop a `jax.lax.fori_loop(i + 1, n, ...)` too; its bounds may be traced.
"""

import jax
import jax.numpy as jnp


@jax.jit
def pair_table(x):
    n = x.shape[0]
    arr = jnp.zeros(shape=(n, n), dtype=x.dtype)

    def outer(i, arr):
        def inner(j, arr):
            return arr.at[i, j].set(x[i] * x[j] + (j - i))

        return jax.lax.fori_loop(i + 1, n, inner, arr)

    return jax.lax.fori_loop(0, n, outer, arr)


def main():
    return pair_table(jnp.array([2.0])), pair_table(jnp.array([2.0, -1.0])), pair_table(jnp.arange(1.0, 6.0))
