"""The product of the nonzero entries of an array, once for an array built inside the jitted
function from constants (so its shape is known) and once for data passed in.

Source: https://github.com/jax-ml/jax/issues/5280
Fails: `a[jnp.nonzero(a)].prod()` under jit raises ConcretizationTypeError: `jnp.nonzero` has a
    data-dependent size even when `a` only depends on constants and shapes.
Fix: replace the zeros by the neutral element of the product: `jnp.where(a != 0, a, 1).prod()`.
"""

import jax
import jax.numpy as jnp


def f(a):
    return jnp.where(a != 0, a, 1).prod()


@jax.jit
def example():
    a = jnp.array([0, 1, 2])
    return f(a)


@jax.jit
def nonzero_prod(x):
    return f(x)


def main():
    return (example(),
            nonzero_prod(jnp.array([0.0, 1.5, 0.0, 4.0])),
            nonzero_prod(jnp.array([[2.0, 3.0], [0.5, 1.0]])),
            nonzero_prod(jnp.zeros(3)))
