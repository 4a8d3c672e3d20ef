"""A residence-time model whose mean curve comes from a JAX function of packed parameters.

Source: https://github.com/pyro-ppl/numpyro/issues/570
Fails: the model packs its sampled parameters with `np.array([[pos, eff, sig, mean_time]])`;
    under NUTS the log density is jitted, the parameters are tracers, and NumPy raises
    TracerArrayConversionError (the report saw it after a few eager steps).
Fix: pack them with `jnp.array([[pos, eff, sig, mean_time]])`.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.stats import norm


def Tpm(ran, array):
    """The user's JAX model: a Gaussian pulse with an exponential residence-time tail."""
    pos, eff, sig, mean_time = array[:, 0:1], array[:, 1:2], array[:, 2:3], array[:, 3:4]
    pulse = jnp.exp(-0.5 * ((ran - pos) / sig) ** 2)
    tail = jnp.where(ran >= pos, jnp.exp(-(ran - pos) / mean_time), 0.0)
    return (eff * pulse + (1.0 - eff) * tail).sum(axis=0)


def model_log_density(theta, MRT):
    eff, pos, sig, mean_time, sigma = theta
    log_prior = (
        norm.logpdf(eff, 0.5, 0.1)
        + norm.logpdf(pos, 10.0, 0.1)
        + norm.logpdf(sig, 1.0, 0.2)
        + norm.logpdf(mean_time, 10.0, 4.0)
        - sigma
    )
    array = np.array([[pos, eff, sig, mean_time]], dtype=np.float64)
    ran = np.arange(0, 100)
    mrt = Tpm(ran, array)
    return log_prior + jnp.sum(norm.logpdf(MRT, mrt, sigma))


potential = jax.jit(lambda theta, MRT: -model_log_density(theta, MRT))


def main():
    MRT = Tpm(np.arange(0, 100), jnp.array([[10.0, 0.5, 1.0, 10.0]])) + 0.01
    near = jnp.array([0.5, 10.0, 1.0, 10.0, 0.1])
    far = jnp.array([0.3, 11.0, 1.5, 6.0, 0.5])
    curve = jax.jit(Tpm)(np.arange(0, 100), jnp.array([[11.0, 0.3, 1.5, 6.0]]))
    return potential(near, MRT), potential(far, MRT), curve
