"""Gradient clipping transformations."""

import jax
import jax.numpy as jnp

from . import base, linear_algebra


def _assert_shape(x, expected_shape):
    if x.shape != expected_shape:
        raise AssertionError(f"Expected shape {expected_shape}, got {x.shape}.")


def clip_by_global_norm(max_norm: float) -> base.GradientTransformation:
    """Clips updates using their global norm.

    Args:
      max_norm: The maximum global norm for an update.
    """

    def update_fn(updates, state, params=None):
        del params
        g_norm = linear_algebra.global_norm(updates)
        # TODO(b/163995078): revert back to the following (faster) implementation
        # once analyzed how it affects backprop through update (e.g. meta-gradients)
        # g_norm = jnp.maximum(max_norm, g_norm)
        # updates = jax.tree.map(lambda t: (t / g_norm) * max_norm, updates)
        trigger = jnp.squeeze(g_norm < max_norm)
        _assert_shape(trigger, ())  # A scalar.

        def clip_fn(t):
            return jax.lax.select(trigger, t, (t / g_norm.astype(t.dtype)) * max_norm)

        updates = jax.tree.map(clip_fn, updates)
        return updates, state

    return base.GradientTransformation(base.init_empty_state, update_fn)
