"""A jitted forward-Euler integrator steps a falling particle from step `iStart` to `iEnd`.

Source: https://github.com/jax-ml/jax/issues/25186
Fails: the step count `iEnd - iStart` is computed from traced arguments (the `sub` the
    report's error points at), so `for i in range(nSteps)` raises TracerIntegerConversionError.
Fix: integrate with `jax.lax.fori_loop(0, nSteps, ...)`, whose bounds may be traced.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

realType = jnp.float32


###############################################################
def rSquared(x, y, u):
    return (u - x) ** 2 + y ** 2


def uxCosFun(z, dx, h):
    return dx * 0.5 * (1.0 - jnp.cos(z * np.pi / h))


# Downward (+ve z-axis) particle position
@partial(jax.jit, static_argnums=(5,))
def forwardEuler(x0, z0, iStart, iEnd, dt, params):
    dx, h, vs = params
    nSteps = iEnd - iStart

    def step(i, xz):
        x, z = xz
        u = uxCosFun(z, dx, h)
        r2 = rSquared(x, 0.1, u)
        x = x + dt * (u - x) / (1.0 + r2)
        z = z + dt * vs
        return x, z

    x, z = jax.lax.fori_loop(0, nSteps, step, (x0, z0))
    return jnp.array([x, z], dtype=realType)


def main():
    params = (0.5, 2.0, 0.3)
    x0, z0, dt = jnp.float32(0.0), jnp.float32(0.0), jnp.float32(0.1)
    none = forwardEuler(x0, z0, 4, 4, dt, params)
    one = forwardEuler(x0, z0, 4, 5, dt, params)
    many = forwardEuler(x0, z0, 0, 25, dt, params)
    return none, one, many
