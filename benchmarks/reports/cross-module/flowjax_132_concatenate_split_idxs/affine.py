"""Elementwise affine bijection."""

import jax.numpy as jnp

from .bijection import Bijection


class Affine(Bijection):
    loc: jnp.ndarray
    scale: jnp.ndarray

    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale
        self.shape = loc.shape
        self.cond_shape = None

    def transform(self, x, condition=None):
        self._argcheck(x, condition)
        return x * self.scale + self.loc

    def transform_and_log_det(self, x, condition=None):
        self._argcheck(x, condition)
        return x * self.scale + self.loc, jnp.log(jnp.abs(self.scale)).sum()

    def inverse(self, y, condition=None):
        self._argcheck(y, condition)
        return (y - self.loc) / self.scale
