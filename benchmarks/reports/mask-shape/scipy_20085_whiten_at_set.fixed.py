"""SciPy's `cluster.vq.whiten`, ported to array-API style with an `at_set` helper for JAX,
rescales each feature by its standard deviation and sets zero deviations to 1 first.

Source: https://github.com/scipy/scipy/pull/20085
Fails: `at_set(std_dev, zero_std_mask, 1.0)` is `x.at[mask].set(1.0)` with a boolean mask
    computed from the data; under jit it raises NonConcreteBooleanIndexError.
Fix: select with `jnp.where(zero_std_mask, 1.0, std_dev)`.
"""

import jax
import jax.numpy as jnp


def at_set(x, idx, value):
    """In-place `x[idx] = value` for immutable arrays."""
    return x.at[idx].set(value)


def whiten(obs):
    """Normalize a group of observations on a per feature basis."""
    std_dev = jnp.std(obs, axis=0)
    zero_std_mask = std_dev == 0
    std_dev = jnp.where(zero_std_mask, 1.0, std_dev)
    return obs / std_dev


whiten_jit = jax.jit(whiten)


def main():
    features = jnp.array([[1.9, 2.3, 1.7],
                          [1.5, 2.5, 2.2],
                          [0.8, 0.6, 1.7]])
    constant_column = features.at[:, 2].set(4.0)
    return whiten_jit(features), whiten_jit(constant_column)
