"""A jitted leapfrog integrator logs each step with `jax.debug.print` given an f-string.

Source: https://github.com/jax-ml/jax/issues/26296
Fails: the f-string is formatted in Python while tracing, so `jax.debug.print` receives a
    constant string with the tracers' text baked in: every step prints
    `x=JitTracer(...)` instead of the values.
Fix: pass a template and the values: `jax.debug.print("step {i}: x={x} v={v}", i=i, x=x, v=v)`.
"""

from functools import partial

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True


@partial(jax.jit, static_argnums=3)
def leapfrog(x, v, dt, n_steps):
    def step(i, state):
        x, v = state
        v = v - 0.5 * dt * x
        x = x + dt * v
        v = v - 0.5 * dt * x
        jax.debug.print("step {i}: x={x} v={v}", i=i, x=x, v=v)
        return x, v

    return jax.lax.fori_loop(0, n_steps, step, (x, v))


def main():
    x0, v0, dt = jnp.float32(1.0), jnp.float32(0.0), jnp.float32(0.5)
    return leapfrog(x0, v0, dt, 0), leapfrog(x0, v0, dt, 1), leapfrog(x0, v0, dt, 4)
