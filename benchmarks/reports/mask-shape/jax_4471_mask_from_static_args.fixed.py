"""A boolean mask built inside a jitted function selects the elements to sum.

Source: https://github.com/jax-ml/jax/issues/4471
Fails: `x[mask].sum()` under jit raises NonConcreteBooleanIndexError (the mask is a tracer
    even though it only depends on the shapes of the inputs).
Fix: sum with the mask as a `where=` argument: `jnp.sum(x, where=mask)`.
"""

import jax
import jax.numpy as jnp


def create_mask(x, y):
    mask = jnp.logical_and(x > 0.5, y < 0.5)
    return jnp.sum(x, where=mask)


create_mask_inside_jitted_function = jax.jit(create_mask)


def main():
    x = jnp.linspace(0.0, 1.0, 8)
    y = jnp.linspace(1.0, 0.0, 8)
    none_selected = create_mask_inside_jitted_function(x, x)
    some_selected = create_mask_inside_jitted_function(x, y)
    all_selected = create_mask_inside_jitted_function(jnp.ones(4), jnp.zeros(4))
    return none_selected, some_selected, all_selected
