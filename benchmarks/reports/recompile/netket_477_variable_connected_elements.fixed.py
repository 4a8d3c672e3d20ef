"""Variational Monte Carlo local energies: each sample has a different number of connected configurations.

Source: https://github.com/netket/netket/issues/477
Fails: the array of connected configurations passed to the jitted `local_energy` has a
    different batch size for different samples (zero matrix elements are dropped), so
    jit compiles once per distinct size: correct energies, compilation on every step.
Fix: pad the connected configurations to the maximum count (the diagonal plus one swap per
    bond) with zero matrix elements, so `local_energy` always sees one shape.
"""

import jax
import jax.numpy as jnp
import numpy as np

MAX_COMPILES = {"local_energy": 1}


def log_psi(params, sigma):
    theta = sigma @ params["W"] + params["b"]
    return jnp.sum(jnp.log(jnp.cosh(theta))) + sigma @ params["a"]


@jax.jit
def local_energy(params, sigma, sigma_primes, mels):
    log_ratio = jax.vmap(log_psi, in_axes=(None, 0))(params, sigma_primes) - log_psi(params, sigma)
    return jnp.sum(mels * jnp.exp(log_ratio))


def get_conn(sigma, J=1.0, t=0.5):
    """Connected configurations of an open XXZ-like chain: the diagonal plus a swap for every anti-aligned bond."""
    sigma = np.asarray(sigma)
    diagonal = J * np.sum(sigma[:-1] * sigma[1:])
    sigma_primes, mels = [sigma], [diagonal]
    for i in range(sigma.shape[0] - 1):
        if sigma[i] != sigma[i + 1]:
            flipped = sigma.copy()
            flipped[i], flipped[i + 1] = sigma[i + 1], sigma[i]
            sigma_primes.append(flipped)
            mels.append(t)
    max_conn = sigma.shape[0]  # the diagonal plus one swap per bond
    sigma_primes += [sigma] * (max_conn - len(sigma_primes))
    mels += [0.0] * (max_conn - len(mels))
    return np.stack(sigma_primes), np.array(mels, dtype=np.float32)


def energies(params, samples):
    out = []
    for sigma in samples:
        sigma_primes, mels = get_conn(sigma)
        out.append(local_energy(params, jnp.asarray(sigma, jnp.float32), jnp.asarray(sigma_primes, jnp.float32), mels))
    return jnp.array(out)


def main():
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"W": 0.3 * jax.random.normal(k1, (6, 4)), "b": jnp.zeros(4), "a": 0.1 * jax.random.normal(k2, (6,))}
    samples = np.array([[1, 1, 1, 1, 1, 1], [1, -1, 1, -1, 1, -1], [1, 1, -1, -1, 1, 1],
                        [-1, 1, 1, 1, 1, 1], [1, -1, -1, 1, -1, 1]], dtype=np.float32)
    return energies(params, samples[:0]), energies(params, samples[:1]), energies(params, samples)
