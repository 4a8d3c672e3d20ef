"""print() inside a jitted function runs once, at trace time, and prints tracers."""
import jax
import jax.numpy as jnp


@jax.jit
def train_step(params, x):
    loss = jnp.mean((params * x) ** 2)
    print(f"loss = {loss:.4f}")
    return params - 0.1 * loss
