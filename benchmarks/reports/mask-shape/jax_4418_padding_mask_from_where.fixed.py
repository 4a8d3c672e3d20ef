"""A sequence model builds a padding mask: positions whose feature vector is all zero (in
channel 0 of the dataset) get mask 0, and the reconstruction loss is averaged over the rest.

Source: https://github.com/jax-ml/jax/issues/4418
Fails: `ax1, ax2 = jnp.where(~Dataset[:, 0].any(axis=2))` (one-argument where, i.e. nonzero)
    has a data-dependent size, so under jit it raises ConcretizationTypeError before the
    `mask.at[ax1, ax2].set(0)` write can happen.
Fix: build the mask with the three-argument where:
    `mask = jnp.where(~Dataset[:, 0].any(axis=2)[..., None], 0.0, mask)`.
"""

import jax
import jax.numpy as jnp


def padding_mask(Dataset):
    mask = jnp.ones(Dataset[:, 0].shape)
    mask = jnp.where(~Dataset[:, 0].any(axis=2)[..., None], 0.0, mask)  # channel 0 all zero
    return mask


@jax.jit
def masked_reconstruction_loss(Dataset, reconstruction):
    mask = padding_mask(Dataset)
    err = (reconstruction - Dataset[:, 0]) ** 2 * mask
    return jnp.sum(err) / jnp.sum(mask), mask


def main():
    sequences = jnp.array([[[1, 2], [1, 4], [0, 0], [0, 0]],
                           [[3, 1], [4, 0], [2, 2], [0, 0]],
                           [[5, 5], [1, 0], [0, 1], [2, 2]]], dtype=jnp.float32)
    Dataset = jnp.stack([sequences, sequences[:, ::-1]], axis=1)
    reconstruction = sequences + 0.1 * jnp.arange(24.0).reshape(3, 4, 2) / 24
    padded = masked_reconstruction_loss(Dataset, reconstruction)
    no_padding = masked_reconstruction_loss(Dataset + 1.0, reconstruction)
    return padded, no_padding
