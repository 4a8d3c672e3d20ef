"""A jitted function draws a random number of steps with `jax.random.randint` and loops that many times.

Source: https://openillumi.com/en/en-jax-jit-dynamic-loop-error-fix
Fails: the drawn count is a tracer under jit, so `for _ in range(num_steps)` raises
    TracerIntegerConversionError.
Fix: loop with `jax.lax.fori_loop(0, num_steps, ...)`, which takes a traced trip count (no
    recompilation per count, unlike making the count static).
"""

import jax
import jax.numpy as jnp


@jax.jit
def random_walk(key, position):
    key, step_key = jax.random.split(key)
    num_steps = jax.random.randint(key, (), 0, 6)
    for _ in range(num_steps):
        step_key, subkey = jax.random.split(step_key)
        position = position + jax.random.normal(subkey, position.shape)
    return num_steps, position


def main():
    position = jnp.zeros(2)
    # the seeds draw 0, 1 and 5 steps
    return [random_walk(jax.random.PRNGKey(seed), position) for seed in (6, 0, 7)]
