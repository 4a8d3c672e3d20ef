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
    for i in range(max_iter):
        z = z*z+c
        if(jnp.abs(z)>2.0):
            return jnp.array([i])
    return jnp.array([max_iter])


def main():
    zs = [jnp.complex64(-0.75 + 0.1j), jnp.complex64(3.0 + 0.0j), jnp.complex64(0.3 + 0.5j),
          jnp.complex64(0.0 + 0.0j)]
    return [mandle_brot(z, 100) for z in zs]
