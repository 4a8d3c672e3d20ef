"""A jitted COO sparse matrix-vector product builds its output with `jnp.zeros(nrows)`.

Source: https://github.com/jax-ml/jax/issues/5609
Fails: `nrows` is passed as an ordinary jit argument, so it is a tracer and
    `jnp.zeros(nrows, ...)` raises TypeError (shapes must be concrete integers).
Fix: mark `nrows` static: `functools.partial(jax.jit, static_argnames="nrows")`.
"""

import jax
import jax.numpy as jnp


@jax.jit
def coo_matvec(data, row, col, nrows, v):
    assert v.ndim == 1
    dv = data * v[col]
    return jnp.zeros(nrows, dtype=dv.dtype).at[row].add(dv)


def main():
    data = jnp.array([1.0, 2.0, 3.0, 4.0])
    row = jnp.array([0, 1, 1, 3])
    col = jnp.array([2, 0, 1, 2])
    v = jnp.array([1.0, -1.0, 0.5])
    square = coo_matvec(data, row, col, 4, v)
    tall = coo_matvec(data, row, col, 6, v)
    empty = coo_matvec(data[:0], row[:0], col[:0], 2, v)
    return square, tall, empty
