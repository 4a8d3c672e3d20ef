"""A bilinear interpolation routine looks up function values stored in a dict keyed by fitting-point coordinates.

Source: https://openillumi.com/?p=112234
Category: python-structure
Fails: under `jax.jit` the query point is a tracer, so the corner coordinates used as dict keys
    (`tuple(corner.tolist())`) cannot be made: `tolist()` on a tracer raises
    ConcretizationTypeError (and a tuple of tracers is unhashable). A Python dict lookup needs
    the key's value on the host.
Fix: none that keeps the dict: store the fitting points and values as arrays and locate the
    corners by index (`jnp.searchsorted` / floor division) inside jit, or do the lookups outside
    jit.
"""

import jax
import jax.numpy as jnp
import numpy as np

GRID_STEP = 0.5
FITTING_POINTS = [(x, y) for x in np.arange(0.0, 2.5, GRID_STEP) for y in np.arange(0.0, 2.5, GRID_STEP)]


def f(x, y):
    return np.sin(x) * np.cos(y) + 0.25 * x * y


FUNCTION_VALUES = {(float(x), float(y)): f(x, y) for x, y in FITTING_POINTS}


def lookup(corner):
    return FUNCTION_VALUES[tuple(corner.tolist())]


@jax.jit
def interpolate(point):
    lower = jnp.floor(point / GRID_STEP) * GRID_STEP
    t = (point - lower) / GRID_STEP
    f00 = lookup(lower)
    f10 = lookup(lower + jnp.array([GRID_STEP, 0.0]))
    f01 = lookup(lower + jnp.array([0.0, GRID_STEP]))
    f11 = lookup(lower + jnp.array([GRID_STEP, GRID_STEP]))
    return ((1 - t[0]) * (1 - t[1]) * f00 + t[0] * (1 - t[1]) * f10
            + (1 - t[0]) * t[1] * f01 + t[0] * t[1] * f11)


def main():
    points = [jnp.array([0.2, 0.3]), jnp.array([1.0, 1.5]), jnp.array([1.9, 0.75])]
    return [interpolate(p) for p in points]
