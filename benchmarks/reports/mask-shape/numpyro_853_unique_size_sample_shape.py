"""A multilevel reed-frog survival model (Statistical Rethinking) sizes its per-volume effects
with `jnp.unique(volume).size`; the sampler runs the model under jit with the data as
arguments.

Source: https://github.com/pyro-ppl/numpyro/issues/853
Fails: `jnp.unique(volume)` on the traced data has a data-dependent size; under jit it raises
    (NonConcreteBooleanIndexError in the report, ConcretizationTypeError now) before the value
    can be used as a sample shape.
Fix: count the levels once with NumPy on the concrete data when it is loaded
    (`n_volume = np.unique(volume).size`) and use that static number as the sample shape.
"""

import jax
import jax.numpy as jnp
import numpy as np

# reedfrogs.csv (first rows): density, size, surv
density = np.array([10, 10, 10, 10, 10, 10, 10, 10, 25, 25, 25, 25])
size = ["big", "big", "big", "big", "small", "small", "small", "small", "big", "big", "small", "small"]
surv = np.array([9, 10, 7, 10, 9, 9, 10, 9, 4, 9, 24, 23])
tank = np.arange(len(density))
volume = np.array([{"small": 0, "big": 1}[s] for s in size])


def normal_logpdf(x, loc, scale):
    return -0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * jnp.log(2 * jnp.pi)


def model(key, tank, density, volume, survived=None):
    k_abar, k_sigma, k_a, k_s = jax.random.split(key, 4)
    # priors
    a_bar = 1.5 * jax.random.normal(k_abar)
    sigma = jax.random.exponential(k_sigma)
    a = a_bar + sigma * jax.random.normal(k_a, tank.shape)
    s = 0.5 * jax.random.normal(k_s, (jnp.unique(volume).size,))
    log_prior = (normal_logpdf(a_bar, 0.0, 1.5) - sigma + jnp.sum(normal_logpdf(a, a_bar, sigma))
                 + jnp.sum(normal_logpdf(s, 0.0, 0.5)))
    # likelihood
    logits = a[tank] + s[volume]
    if survived is None:
        return jax.nn.sigmoid(logits) * density, log_prior
    log_lik = jnp.sum(survived * jax.nn.log_sigmoid(logits) + (density - survived) * jax.nn.log_sigmoid(-logits))
    return logits, log_prior + log_lik


run_model = jax.jit(model)


def main():
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    prior_predictive = run_model(keys[0], tank, density, volume)
    log_joint = run_model(keys[1], tank, density, volume, surv)
    return prior_predictive, log_joint
