"""Zero-pad the last dimension of a tensor by a static amount: the pad-width table is built
with `jnp.zeros` and an indexed update, then passed to `jnp.pad`.

Source: https://github.com/jax-ml/jax/issues/3620
Fails: even with `pad_size` static, the `(ndim, 2)` pad-width table built with `jnp` is a tracer
    inside jit, and `jnp.pad` needs concrete widths: it raises ConcretizationTypeError.
Fix: build the static table with NumPy: `npad = np.zeros((ndim, 2), dtype=np.int32)` and
    `npad[axis, 1] = pad_size`.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnums=1)
def pad_last_dim(array, pad_size):
    ndim = jnp.ndim(array)
    npad = np.zeros((ndim, 2), dtype=np.int32)
    axis = ndim - 1
    npad[axis, 1] = pad_size
    return jnp.pad(array, npad, 'constant', constant_values=0)


def main():
    vals = np.arange(12.0).reshape(3, 4)
    return pad_last_dim(vals, 1), pad_last_dim(vals, 0), pad_last_dim(np.ones((2, 2, 3)), 3)
