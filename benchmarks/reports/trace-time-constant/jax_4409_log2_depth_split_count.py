"""A nested-sampling clusterer recovers the depth of its binary cluster tree from the number of
clusters (`jnp.log2(num_clusters) + 1`) and splits one PRNG key per internal node.

Source: https://github.com/jax-ml/jax/issues/4409
Fails: `depth` is computed with `jnp` from the static `mu.shape[0]`, so it is a tracer, and so is
    `num_splittings`; `random.split(key, num_splittings)` needs a concrete count and raises
    (TracerIntegerConversionError / ConcretizationTypeError).
Fix: compute the depth at trace time with NumPy: `depth = int(np.log2(num_clusters)) + 1`.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import random


class SamplerState(NamedTuple):
    mu: jnp.ndarray
    radii: jnp.ndarray


@jax.jit
def split_clusters(key, sampler_state):
    num_clusters = sampler_state.mu.shape[0]  # 2^(depth-1)
    depth = jnp.log2(num_clusters) + 1
    depth = depth.astype(jnp.int_)
    num_splittings = 2 ** (depth - 1) - 1
    keys = random.split(key, num_splittings)
    directions = jax.vmap(lambda k: random.normal(k, sampler_state.mu.shape[1:]))(keys)
    offsets = jnp.sum(directions, axis=0) * jnp.mean(sampler_state.radii)
    return sampler_state.mu + offsets, depth


def main():
    key = random.PRNGKey(42)
    results = []
    for num_clusters in (1, 2, 8):
        state = SamplerState(mu=jnp.arange(num_clusters * 2.0).reshape(num_clusters, 2),
                             radii=jnp.ones(num_clusters))
        results.append(split_clusters(key, state))
    return results
