"""Equinox's RotaryPositionalEmbedding: validates its static size and the input's shape.

Source: https://github.com/patrick-kidger/equinox/blob/main/equinox/nn/_embedding.py
Category: validation
Correct under jit: `__check_init__` tests a static field and `__call__` compares `x.shape` (static
under tracing) before raising, so no check ever converts a traced value to bool.
"""

from typing import Optional

import equinox as eqx
import jax
import jax.numpy as jnp
from equinox import field


class RotaryPositionalEmbedding(eqx.Module):
    embedding_size: int = field(static=True)

    def __check_init__(self):
        if self.embedding_size < 0:
            raise ValueError("`embedding_size` must not be negative.")
        if (self.embedding_size % 2) != 0:
            raise ValueError("`embedding_size` must be even.")

    @staticmethod
    def rotate_half(x):
        d_2 = x.shape[-1] // 2
        return jnp.concatenate([-x[..., d_2:], x[..., :d_2]], axis=-1)

    @staticmethod
    def precompute_freqs_cis(embedding_size: int, end: int, theta: float = 10000.0):
        freqs = 1.0 / (theta ** (jnp.arange(0.0, embedding_size, 2)[jnp.newaxis, :] / embedding_size))
        t = jnp.arange(float(end))
        freqs_outer = jnp.outer(t, freqs)
        with jax.numpy_dtype_promotion("standard"):
            freqs_cis = jnp.cos(freqs_outer) + jnp.sin(freqs_outer) * 1j
        return freqs_cis

    def __call__(self, x, *, key: Optional[jax.Array] = None):
        seq_len, embedding_size = x.shape
        if embedding_size != self.embedding_size:
            raise ValueError(
                f"x.shape[-1] must match self.embedding_size, "
                f"but {x.shape[-1]} != {self.embedding_size}"
            )
        freqs_cis = self.precompute_freqs_cis(embedding_size, seq_len)
        freqs_real = jnp.tile(freqs_cis.real, (1, 2))
        freqs_imag = jnp.tile(freqs_cis.imag, (1, 2))
        rotate_x = self.rotate_half(x)
        return (x * freqs_real) + (rotate_x * freqs_imag)


def main():
    rope = RotaryPositionalEmbedding(embedding_size=4)
    apply = eqx.filter_jit(rope.__call__)
    x = jnp.linspace(-1.0, 1.0, 12).reshape(3, 4)
    out = apply(x)
    try:
        apply(jnp.ones((3, 6)))
        mismatch = "accepted"
    except ValueError:
        mismatch = "rejected"
    return out, mismatch
