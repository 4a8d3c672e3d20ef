"""A jitted power iteration estimates a matrix's spectral radius to test a model's stability.

Source: https://github.com/QuantEcon/lecture-jax/issues/95
Fails: with `jax.jit(power_iteration_sr)` and no `static_argnums`, a caller passing
    `num_iterations` gets a tracer in `for _ in range(num_iterations)`, which raises
    TracerIntegerConversionError (as the thread warns).
Fix: iterate with `jax.lax.fori_loop(0, num_iterations, ...)`, which accepts a traced count.
"""

import jax
import jax.numpy as jnp


def power_iteration_sr(A, num_iterations=15, seed=1234):
    " Estimates the spectral radius of A via power iteration. "

    # Initialize
    key = jax.random.PRNGKey(seed)
    b_k = jax.random.normal(key, (A.shape[1],))
    sr = 0

    for _ in range(num_iterations):
        # calculate the matrix-by-vector product Ab
        b_k1 = jnp.dot(A, b_k)

        # calculate the norm
        b_k1_norm = jnp.linalg.norm(b_k1)

        # Record the current estimate of the spectral radius
        sr = jnp.sum(b_k1 * b_k)/jnp.sum(b_k * b_k)

        # re-normalize the vector and continue
        b_k = b_k1 / b_k1_norm

    return sr

power_iteration_sr = jax.jit(power_iteration_sr)

def test_stability(Q):
    """
    Assert that the spectral radius of matrix Q is < 1.
    """
    sr = power_iteration_sr(Q)
    assert sr < 1, f"Spectral radius condition failed with radius = {sr}"


def main():
    K = jnp.array([[0.5, 0.2, 0.0], [0.1, 0.4, 0.2], [0.0, 0.3, 0.6]])
    test_stability(K)
    return (power_iteration_sr(K, num_iterations=0),
            power_iteration_sr(K, num_iterations=1),
            power_iteration_sr(K, num_iterations=40, seed=7))
