"""Linear algebra utilities used in optimization."""

import jax
import jax.numpy as jnp

from . import base, numerics


def global_norm(updates: base.PyTree) -> jax.Array:
    """Compute the global norm across a nested structure of tensors."""
    return jnp.sqrt(
        sum(jnp.sum(numerics.abs_sq(x)) for x in jax.tree.leaves(updates))
    )
