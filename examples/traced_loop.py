"""range() over a traced bound raises under jit."""
import jax
import jax.numpy as jnp


@jax.jit
def power(x, n):
    result = jnp.ones_like(x)
    for _ in range(n):
        result = result * x
    return result
