"""A piecewise-linear activation built with jnp.piecewise and a chained interval test `0<x<1`.

Source: https://github.com/jax-ml/jax/issues/7969
Fails: the chained comparison `0 < x < 1` means `(0 < x) and (x < 1)`, a Python `and` on a
    traced comparison, so the jitted function raises TracerBoolConversionError.
Fix: spell the interval as an array expression: `(0 < x) & (x < 1)`.
"""

import jax
import jax.numpy as jnp


def f(x):
    return jnp.piecewise(x, [x < 0, 0 < x < 1], [-x, x])


f_jit = jax.jit(f)


def main():
    return [f_jit(v) for v in (-0.5, 0.0, 0.5, 1.0, 2.0)]
