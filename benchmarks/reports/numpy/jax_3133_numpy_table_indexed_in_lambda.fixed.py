"""Two lookups into a 3x3 table by row index: one table built with jnp, one with NumPy.

Source: https://github.com/jax-ml/jax/issues/3133
Fails: `g = lambda i: TABLE[i, :]` indexes a raw NumPy array (the report's `np.zeros((3, 3))`)
    with the traced `i`; NumPy's `__getitem__` tries to convert the tracer and raises
    TracerArrayConversionError (the jnp twin `f` is fine).
Fix: make the table a JAX array once (`jnp.asarray(...)` at module level); a traced index can
    select from it.
"""

import jax
import jax.numpy as jnp
import numpy as np

TABLE = jnp.asarray(np.arange(9.0).reshape(3, 3))

f = lambda i: jnp.asarray(TABLE)[i, :]
g = lambda i: TABLE[i, :]


def main():
    a = np.array([1, 2])
    return (
        f(a),
        jax.jit(f)(a),
        jax.jit(g)(a),
        jax.jit(g)(np.array([0, 0, 2])),
        jax.jit(g)(2),
    )
