"""Particle ids gathered through a permutation (a cell-list sort order) in a jitted function.

Source: https://github.com/jax-ml/jax/issues/553
Fails: `r = np.arange(x.shape[0])[x]` builds a NumPy `arange` and indexes it with the traced
    `x`; NumPy cannot take a tracer as an index and raises TracerArrayConversionError.
Fix: build the ids with `jnp.arange(x.shape[0])`, which a traced index can gather from.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import jit


def fun(x):
    r = np.arange(x.shape[0])[x]
    return r


def sorted_ids(positions, cell_size):
    cell = jnp.floor(positions / cell_size).astype(jnp.int32)
    order = jnp.argsort(cell)
    return fun(order), cell[order]


def main():
    positions = jnp.array([0.7, 0.1, 2.5, 1.2, 0.05, 3.9])
    return (
        jit(fun)(np.array([0, 1, 2], dtype=np.int32)),
        jit(fun)(np.array([2, 0, 1], dtype=np.int32)),
        jit(sorted_ids)(positions, 1.0),
    )
