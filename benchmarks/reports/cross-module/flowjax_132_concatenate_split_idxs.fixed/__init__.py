"""A flow built from `Concatenate` of two affine bijections, transformed under `jax.jit(jax.vmap(...))`.

Source: https://github.com/danielward27/flowjax/issues/132
Fails: `Concatenate.__init__` (concatenate.py) stores `split_idxs` as a `jnp.array`; under jit,
    `jnp.array_split(x, self.split_idxs)` in `transform` / `inverse` needs concrete split
    points, and the array is staged: ConcretizationTypeError ("in jax.numpy.array_split
    argument 1"). `Stack`, which splits equally, works.
Fix: keep the split points as a tuple of Python ints (`tuple(...)`), so they stay static.
"""

import jax
import jax.numpy as jnp

from .affine import Affine
from .concatenate import Concatenate


def main():
    bijections = (Affine(loc=jnp.array([0.5, -1.0]), scale=jnp.array([2.0, 0.5])),
                  Affine(loc=jnp.array([1.0, 0.0, 3.0]), scale=jnp.array([1.0, 3.0, 0.25])))
    bijection = Concatenate(bijections)
    x = jnp.arange(15.0).reshape(3, 5) / 7.0
    y = jax.jit(jax.vmap(bijection.transform))(x)
    y2, log_det = jax.jit(jax.vmap(bijection.transform_and_log_det))(x)
    x_back = jax.jit(jax.vmap(bijection.inverse))(y)
    return y, y2, log_det, x_back
