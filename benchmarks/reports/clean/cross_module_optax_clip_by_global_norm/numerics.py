"""Utilities to ensure the implementation is safe for wide-range of inputs."""

import jax.numpy as jnp


def abs_sq(x):
    """Returns the squared norm of a (maybe complex) array."""
    if not isinstance(x, (jnp.ndarray,)) and not hasattr(x, "dtype"):
        raise ValueError(f"`abs_sq` accepts only NDarrays, got: {x}.")
    return (x.conj() * x).real
