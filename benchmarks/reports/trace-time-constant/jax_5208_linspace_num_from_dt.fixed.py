"""Build a time grid from a step size: the number of steps is computed with `jnp.maximum` and
`jnp.abs` from Python constants (or from a static grid spec) and passed to `jnp.linspace`.

Source: https://github.com/jax-ml/jax/issues/5208
Fails: the step count computed with `jnp` is staged, so `jnp.linspace(t0, tf, num_steps + 1)`
    receives a tracer for `num` and raises ConcretizationTypeError.
Fix: compute the count with Python builtins on the static values:
    `num_steps = int(max(abs((tf - t0) / dt), 1))`.
"""

from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def grid1():
    t0, tf, num_steps = 0., 1., 10
    ts = jnp.linspace(t0, tf, num_steps + 1)
    return ts


@jax.jit
def grid2():
    t0, tf, dt = 0., 1., 1e-1
    num_steps = int(max(abs((tf - t0) / dt), 1))
    ts = jnp.linspace(t0, tf, num_steps + 1)
    return ts


@partial(jax.jit, static_argnums=(0,))
def grid3(grid_spec):
    t0, tf, dt = grid_spec
    num_steps = int(max(abs((tf - t0) / dt), 1))
    ts = jnp.linspace(t0, tf, num_steps + 1)
    return ts


def main():
    return grid1(), grid2(), grid3((0.0, 2.0, 0.25)), grid3((1.0, 1.5, 2.0))
