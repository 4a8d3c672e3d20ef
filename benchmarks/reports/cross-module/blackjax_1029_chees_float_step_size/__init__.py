"""ChEES warmup with a diagonal mass matrix floors the adapted trajectory length before returning it.

Source: https://github.com/blackjax-devs/blackjax/issues/1029
Fails: `chees_adaptation(...).run` under `jax.jit` with `mass_matrix_estimation` set calls
    `length_floor._apply_length_floor(..., float(step_size_ma))`; `step_size_ma` is
    `jnp.exp(...)` of the adapted state, a tracer: ConcretizationTypeError (only on the
    branch where the floor is enabled).
Fix: pass the traced step size through unchanged (`step_size_ma`, no `float()`); the helper
    only multiplies it into the cap, which works on arrays.
"""

import jax
import jax.numpy as jnp

from .adaptation import chees_adaptation


def logdensity(x):
    return -0.5 * jnp.sum((x / jnp.array([1.0, 3.0, 0.5])) ** 2)


def main():
    positions = jnp.linspace(-1.0, 1.0, 24).reshape(8, 3)
    results = []
    for mass_matrix_estimation, max_leapfrog_steps, num_steps in (
            (None, 1000, 5), ("diagonal", 1000, 1), ("diagonal", 1000, 6), ("diagonal", 2, 6)):
        warmup = chees_adaptation(logdensity, num_chains=8, mass_matrix_estimation=mass_matrix_estimation,
                                  max_leapfrog_steps=max_leapfrog_steps)
        run = jax.jit(warmup.run, static_argnums=2)
        results.append(run(positions, 0.5, num_steps))
    return results
