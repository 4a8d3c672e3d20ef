"""`jax.nn.one_hot`'s jitted helper: the class count, dtype and axis are static arguments.

Source: https://github.com/jax-ml/jax/blob/main/jax/_src/nn/functions.py
Category: static-argument
Correct: `num_classes` sets the output shape and `axis`/`dtype` are Python values, so the
    helper is jitted with `static_argnames=("num_classes", "dtype", "axis")`; only `x` is traced.
"""

import operator
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes, *, dtype, axis):
    num_classes = operator.index(num_classes)
    x_arr = jnp.asarray(x)
    output_pos_axis = axis % (x_arr.ndim + 1)
    lhs = lax.expand_dims(x_arr, (output_pos_axis,))
    rhs_shape = [1] * x_arr.ndim
    rhs_shape.insert(output_pos_axis, num_classes)
    rhs = lax.broadcasted_iota(x_arr.dtype, rhs_shape, output_pos_axis)
    return (lhs == rhs).astype(dtype)


def one_hot(x, num_classes, *, dtype=jnp.float32, axis=-1):
    return _one_hot(x, num_classes, dtype=dtype, axis=axis)


def main():
    labels = jnp.array([0, 2, 1, 3])
    return (one_hot(labels, 4), one_hot(labels, 5, dtype=jnp.int32),
            one_hot(labels.reshape(2, 2), 4, axis=0))
