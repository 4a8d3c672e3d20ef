"""A general dense layer (flax's `DenseGeneral`) initializes its kernel on a flattened 2-D shape
and reshapes it back; the flattened sizes come from the kernel shape.

Source: https://github.com/google/flax/blob/main/flax/linen/linear.py
Category: trace-time-constant
Correct: the static sizes are computed with NumPy on the static shape tuple (`np.prod`) and
    converted to Python ints, so `kernel_init` and `jnp.reshape` get concrete shapes even when
    initialization runs under jit.
"""

import jax
import jax.numpy as jnp
import numpy as np


def _canonicalize_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _normalize_axes(axes, ndim):
    return tuple(sorted(ax if ax >= 0 else ndim + ax for ax in axes))


class DenseGeneral:
    def __init__(self, features, axis=-1, batch_dims=(),
                 kernel_init=jax.nn.initializers.lecun_normal()):
        self.features = features
        self.axis = axis
        self.batch_dims = batch_dims
        self.kernel_init = kernel_init

    def init(self, rng, inputs):
        features = _canonicalize_tuple(self.features)
        axis = _canonicalize_tuple(self.axis)
        batch_dims = _canonicalize_tuple(self.batch_dims)
        ndim = inputs.ndim
        n_batch_dims = len(batch_dims)
        axis = _normalize_axes(axis, ndim)
        batch_dims = _normalize_axes(batch_dims, ndim)
        n_axis, n_features = len(axis), len(features)

        def kernel_init_wrap(rng, shape, dtype=jnp.float32):
            flat_shape = (
                np.prod(shape[:n_batch_dims])
                * np.prod(shape[n_batch_dims: n_axis + n_batch_dims]),
                np.prod(shape[-n_features:]),
            )
            flat_shape = jax.tree_util.tree_map(int, flat_shape)
            kernel = self.kernel_init(rng, flat_shape, dtype)
            return jnp.reshape(kernel, shape)

        batch_shape = tuple(inputs.shape[ax] for ax in batch_dims)
        kernel_shape = tuple(inputs.shape[ax] for ax in axis) + features
        kernel = kernel_init_wrap(rng, batch_shape + kernel_shape)
        bias = jnp.zeros(batch_shape + features)
        return {"kernel": kernel, "bias": bias}

    def apply(self, params, inputs):
        features = _canonicalize_tuple(self.features)
        axis = _normalize_axes(_canonicalize_tuple(self.axis), inputs.ndim)
        contract_ind = tuple(range(len(axis)))
        out = jax.lax.dot_general(inputs, params["kernel"], ((axis, contract_ind), ((), ())))
        return out + jnp.reshape(params["bias"], (1,) * (out.ndim - len(features)) + features)


def main():
    x = jnp.arange(24.0).reshape(2, 3, 4) / 24
    results = []
    for layer in (DenseGeneral(features=5), DenseGeneral(features=(2, 3), axis=(-2, -1))):
        params = jax.jit(layer.init)(jax.random.PRNGKey(0), x)
        results.append(jax.jit(layer.apply)(params, x))
    return results
