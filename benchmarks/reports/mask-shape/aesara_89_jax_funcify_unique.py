"""A tensor-graph library's JAX backend turns its `Unique` op into a function calling
`jnp.unique`, and jit-compiles the graph with the graph's constants bound by `partial`.

Source: https://github.com/aesara-devs/aesara/issues/89
Fails: inside the jitted graph `jnp.unique` of the constant input is staged like any other
    value, so its data-dependent output size raises ConcretizationTypeError ("Abstract tracer
    value encountered where concrete value is expected").
Fix: the input is a graph constant (a NumPy array), so fold the op at trace time with
    `np.unique`; only symbolic inputs reach `jnp.unique`.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


class Unique:
    def __init__(self, return_index=False, return_inverse=False, return_counts=False, axis=None):
        self.return_index = return_index
        self.return_inverse = return_inverse
        self.return_counts = return_counts
        self.axis = axis


def jax_funcify_Unique(op):
    axis = op.axis
    if axis is not None:
        raise NotImplementedError("jax.numpy.unique is not implemented for the axis argument")

    return_index = op.return_index
    return_inverse = op.return_inverse
    return_counts = op.return_counts

    def unique(x, return_index=return_index, return_inverse=return_inverse,
               return_counts=return_counts, axis=axis):
        return jnp.unique(x, return_index, return_inverse, return_counts)

    return unique


def main():
    a = np.array([[3, 1], [2, 3], [1, 5]])
    plain = jax.jit(partial(jax_funcify_Unique(Unique()), a))()
    counts = jax.jit(partial(jax_funcify_Unique(Unique(return_counts=True)), a))()
    everything = jax.jit(partial(jax_funcify_Unique(Unique(True, True, True)), a.ravel()))()
    return plain, counts, everything
