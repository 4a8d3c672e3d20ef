"""Soft ranks from a NumPy implementation (projection onto the permutahedron) used in a jitted loss.

Source: https://github.com/google-research/fast-soft-sort/issues/9
Fails: the JAX wrapper around the NumPy algorithm starts with `values = np.array(values)`;
    under jit the rows are tracers and NumPy raises TracerArrayConversionError.
Fix: keep the NumPy algorithm but run it on the host through `jax.pure_callback`, declaring the
    result's shape and dtype, so the jitted function can call it.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import jit


def _isotonic_l2(y):
    """Pool adjacent violators: the non-increasing v closest to y in L2."""
    blocks = []
    for value in y:
        blocks.append([value, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    return np.concatenate([np.full(count, total / count) for total, count in blocks])


class SoftRank:
    """numpy_ops.SoftRank: the projection of -values / strength onto the permutahedron."""

    def __init__(self, values, regularization_strength=1.0):
        self.values = np.asarray(values, dtype=np.float64)
        self.regularization_strength = regularization_strength

    def compute(self):
        size = self.values.shape[0]
        z = -self.values / self.regularization_strength
        w = np.arange(size, 0, -1, dtype=np.float64)
        perm = np.argsort(-z, kind="stable")
        z_sorted = z[perm]
        dual = _isotonic_l2(z_sorted - w)
        primal = z_sorted - dual
        out = np.empty_like(primal)
        out[perm] = primal
        return out


def _wrap_numpy_op(cls, regularization_strength):
    def host_func(values):
        obj = cls(np.asarray(values), regularization_strength=regularization_strength)
        return obj.compute().astype(np.float32)

    def func(values):
        result = jax.ShapeDtypeStruct(values.shape, jnp.float32)
        return jax.pure_callback(host_func, result, values)

    return func


def soft_rank(values, regularization_strength=1.0):
    if len(values.shape) != 2:
        raise ValueError(f"'values' should be a 2d-array but got {values.shape}.")
    func = _wrap_numpy_op(SoftRank, regularization_strength)
    return jnp.vstack([func(val) for val in values])


@jit
def f1(x):
    x = x.reshape(1, 3)
    y = soft_rank(x)[0]
    return y.mean(), y


@jit
def spearman_loss(pred, target):
    ranks = soft_rank(pred, regularization_strength=0.5)
    return jnp.mean((ranks - target) ** 2), ranks


def main():
    x = jnp.array([1.0, 2.0, 3.0])
    pred = jnp.array([[0.3, 2.0, -1.0, 0.9], [5.0, 4.0, 4.1, -2.0]])
    target = jnp.array([[2.0, 1.0, 4.0, 3.0], [1.0, 3.0, 2.0, 4.0]])
    return f1(x), f1(jnp.array([3.0, 0.5, 0.6])), spearman_loss(pred, target)
