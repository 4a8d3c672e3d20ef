"""A Mandelbrot escape-time function returns the iteration at which |z| first exceeds 2.

Source: https://github.com/jax-ml/jax/issues/24740
Fails: the early exit `if(jnp.abs(z)>2.0): return jnp.array([i])` inside
    `for i in range(max_iter)` tests a traced value and raises TracerBoolConversionError
    (the report hit it under vmap; jit fails the same way).
Fix: iterate with `jax.lax.while_loop`, carrying the counter, `z` and an escaped flag, and
    stop at the first escape or after `max_iter` steps.
"""

from functools import partial

import jax
from jax import numpy as jnp
from jax import jit


@partial(jit, static_argnums=1)
def mandle_brot(c, max_iter):
    z = jnp.array([0.0 + 0.0j], dtype=jnp.complex64)

    def cond_fun(state):
        i, z, escaped = state
        return (i < max_iter) & ~escaped

    def body_fun(state):
        i, z, _ = state
        z = z*z+c
        escaped = jnp.abs(z[0])>2.0
        return jnp.where(escaped, i, i + 1), z, escaped

    i, _, _ = jax.lax.while_loop(cond_fun, body_fun, (0, z, False))
    return jnp.array([i])


def main():
    zs = [jnp.complex64(-0.75 + 0.1j), jnp.complex64(3.0 + 0.0j), jnp.complex64(0.3 + 0.5j),
          jnp.complex64(0.0 + 0.0j)]
    return [mandle_brot(z, 100) for z in zs]
