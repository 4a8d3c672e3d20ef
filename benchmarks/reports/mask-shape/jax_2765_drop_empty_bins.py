"""A differentiable analysis pipeline histograms weighted events after a soft cut and computes
a Poisson likelihood-ratio statistic, dropping the empty bins with `thing = thing[thing > 0]`.

Source: https://github.com/jax-ml/jax/issues/2765
Fails: `counts[counts > 0]` has a data-dependent size; under jit it raises
    NonConcreteBooleanIndexError.
Fix: keep the static shape and zero the empty bins' terms with `jnp.where` (guarding the log so
    the gradient stays finite).
"""

import jax
import jax.numpy as jnp


def soft_histogram(events, cut, edges, bandwidth=0.1):
    weights = jax.nn.sigmoid((events - cut) / bandwidth)
    counts, _ = jnp.histogram(events, bins=edges, weights=weights)
    return counts


def saturated_nll(observed, expected):
    # Cash statistic; 0 * log 0 := 0, so empty observed bins are dropped
    keep = observed > 0
    n, mu = observed[keep], expected[keep]
    return jnp.sum(mu - n + n * jnp.log(n / mu)) + jnp.sum(expected[~keep])


@jax.jit
def pipeline(cut, signal, background, edges):
    s = soft_histogram(signal, cut, edges)
    b = soft_histogram(background, cut, edges)
    observed = s + b
    return saturated_nll(observed, b + 1e-3)


def main():
    key_s, key_b = jax.random.split(jax.random.PRNGKey(0))
    signal = 1.0 + 0.3 * jax.random.normal(key_s, (40,))
    background = jax.random.exponential(key_b, (80,))
    edges = jnp.linspace(0.0, 4.0, 9)
    loss, grad = jax.value_and_grad(pipeline)(0.5, signal, background, edges)
    empty_tail = pipeline(0.5, signal, background, jnp.linspace(0.0, 12.0, 9))
    return loss, grad, empty_tail
