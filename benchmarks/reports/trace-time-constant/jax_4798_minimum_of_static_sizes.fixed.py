"""Take at most `n` leading elements of a batch: the count is `jnp.minimum` of the static batch
size and a static argument, then used as the length of `jnp.arange`.

Source: https://github.com/jax-ml/jax/issues/4798
Fails: `jnp.minimum(n_aval, n)` is staged into the jaxpr even though both inputs are Python
    ints, so `jnp.arange(n_actual)` gets a tracer and raises ConcretizationTypeError.
Fix: compute the static size with Python: `n_actual = min(n_aval, n)`.
"""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0,))
def foo(n, x):
    n_aval = jnp.shape(x)[0]
    n_actual = min(n_aval, n)
    idx = jnp.arange(n_actual)
    return idx, jnp.sum(x[idx])


def main():
    x = jnp.arange(10.0)
    return foo(5, x), foo(20, x), foo(0, x)
