"""Concatenate bijections along an existing axis."""

from typing import Sequence

import jax.numpy as jnp

from .bijection import Bijection


def merge_cond_shapes(shapes):
    shapes = [s for s in shapes if s is not None]
    return shapes[0] if shapes else None


class Concatenate(Bijection):
    """Concatenate bijections along an already existing axis. Analagous to
    ``jnp.concatenate``. See also :class:`Stack`.
    """

    split_idxs: tuple[int, ...]
    bijections: Sequence[Bijection]
    axis: int

    def __init__(self, bijections: Sequence[Bijection], axis: int = 0):
        self.bijections = bijections
        self.axis = axis

        shapes = [b.shape for b in bijections]
        axis = range(len(shapes[0]))[axis]  # Avoids issues when axis==-1
        self.shape = (
            shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1 :]
        )
        self.split_idxs = tuple(s[axis] for s in shapes[:-1])
        self.cond_shape = merge_cond_shapes([b.cond_shape for b in bijections])

    def transform(self, x, condition=None):
        self._argcheck(x, condition)
        x_parts = jnp.array_split(x, self.split_idxs, axis=self.axis)
        y_parts = [
            b.transform(x_part, condition)
            for b, x_part in zip(self.bijections, x_parts)
        ]
        return jnp.concatenate(y_parts, axis=self.axis)

    def transform_and_log_det(self, x, condition=None):
        self._argcheck(x, condition)
        x_parts = jnp.array_split(x, self.split_idxs, axis=self.axis)

        ys_log_dets = [
            b.transform_and_log_det(x, condition)
            for b, x in zip(self.bijections, x_parts)
        ]

        y_parts, log_dets = zip(*ys_log_dets)
        return jnp.concatenate(y_parts, self.axis), sum(log_dets)

    def inverse(self, y, condition=None):
        self._argcheck(y, condition)
        y_parts = jnp.array_split(y, self.split_idxs, axis=self.axis)
        x_parts = [
            b.inverse(y_part, condition)
            for b, y_part in zip(self.bijections, y_parts)
        ]
        return jnp.concatenate(x_parts, axis=self.axis)
