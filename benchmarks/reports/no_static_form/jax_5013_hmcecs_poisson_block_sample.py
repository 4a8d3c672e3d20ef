"""HMCECS (energy-conserving subsampling) draws Poisson block lengths, then that many subsample indices per block.

Source: https://github.com/jax-ml/jax/issues/5013
Category: dynamic-shape
Fails: inside the jitted update, `_sample_u_poisson` calls
    `random.randint(sub_key, (jnp.sum(block_lengths), m), 0, m)`: the number of rows is a sum of
    Poisson draws, a tracer, so the shape is not concrete (TypeError: shapes must be concrete).
    The blocks are then split at the traced cumulative lengths.
Fix: none inside jit (the maintainers: "for now the only option is not to jit this code");
    draw the block lengths outside jit, or pad to a user-chosen maximum number of rows and carry
    a validity mask.
"""

import jax
import jax.numpy as jnp
from jax import random


def _sample_u_poisson(rng_key, m, l, lambda_):
    pois_key, sub_key = random.split(rng_key)
    block_lengths = random.poisson(pois_key, lambda_, (l,))
    u = random.randint(sub_key, (jnp.sum(block_lengths), m), 0, m)
    return jnp.split(u, jnp.cumsum(block_lengths)[:-1], axis=0)


def poisson_estimator(rng_key, log_lik, m, l, lambda_, a=1.0):
    """Block-Poisson estimator of exp(sum of log-likelihoods) from subsamples of size m."""
    n = log_lik.shape[0]
    blocks = _sample_u_poisson(rng_key, m, l, lambda_)
    xi = [jnp.prod(a - n * jnp.mean(log_lik[block], axis=-1) / lambda_) for block in blocks]
    return jnp.exp(a + lambda_) * jnp.stack(xi), blocks


@jax.jit
def hmcecs_update(rng_key, z, data):
    log_lik = -0.5 * (data - z) ** 2
    estimate, blocks = poisson_estimator(rng_key, log_lik, m=3, l=4, lambda_=1.5)
    return estimate, blocks


def main():
    data = jnp.linspace(-1.0, 1.0, 20)
    results = []
    for seed in range(3):
        results.append(hmcecs_update(random.PRNGKey(seed), jnp.float32(0.1 * seed), data))
    return results
