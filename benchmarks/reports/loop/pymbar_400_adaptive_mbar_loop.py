"""MBAR's `adaptive` solver, jitted whole: each iteration picks a self-consistent or a
Newton-Raphson update by gradient norm and stops once the free energies stop changing.

Source: https://github.com/choderalab/pymbar/pull/400
Fails: jitting the whole loop (what the pull request set out to do) traces
    `if gnorm_sci < gnorm_nr or sci_iter < min_sc_iter:` and the convergence test before
    `break`, both on traced values: TracerBoolConversionError.
Fix: run the iterations in `jax.lax.while_loop`, carrying the iterate, the two counters and a
    done flag; choose the update with `jnp.where` on the traced comparison.
"""

import jax
import jax.numpy as jnp
from jax.numpy import dot
from jax.scipy.special import logsumexp


def mbar_gradient(u_kn, N_k, f_k):
    log_denominator_n = logsumexp(f_k - u_kn.T, b=N_k, axis=1)
    log_numerator_k = logsumexp(-log_denominator_n - u_kn, axis=1)
    return -1 * N_k * (1.0 - jnp.exp(f_k + log_numerator_k))


def mbar_hessian(u_kn, N_k, f_k):
    log_denominator_n = logsumexp(f_k - u_kn.T, b=N_k, axis=1)
    logW = f_k - u_kn.T - log_denominator_n[:, jnp.newaxis]
    W = jnp.exp(logW)
    H = dot(W.T, W)
    H *= N_k
    H *= N_k[:, jnp.newaxis]
    H -= jnp.diag(W.sum(0) * N_k)
    return -1.0 * H


def self_consistent_update(u_kn, N_k, f_k):
    log_denominator_n = logsumexp(f_k - u_kn.T, b=N_k, axis=1)
    return -1.0 * logsumexp(-log_denominator_n - u_kn, axis=1)


def jax_core_adaptive(u_kn, N_k, f_k, gamma):
    """JAX version of adaptive inner loop."""
    g = mbar_gradient(u_kn, N_k, f_k)  # Objective function gradient
    H = mbar_hessian(u_kn, N_k, f_k)  # Objective function hessian
    Hinvg = jnp.linalg.lstsq(H, g)[0]
    Hinvg -= Hinvg[0]
    f_nr = f_k - gamma * Hinvg

    # self-consistent iteration gradient norm and saved log sums.
    f_sci = self_consistent_update(u_kn, N_k, f_k)
    f_sci = f_sci - f_sci[0]  # zero out the minimum
    g_sci = mbar_gradient(u_kn, N_k, f_sci)
    gnorm_sci = dot(g_sci, g_sci)

    # newton raphson gradient norm and saved log sums.
    g_nr = mbar_gradient(u_kn, N_k, f_nr)
    gnorm_nr = dot(g_nr, g_nr)

    return f_sci, g_sci, gnorm_sci, f_nr, g_nr, gnorm_nr


@jax.jit
def adaptive(u_kn, N_k, f_k, tol=1.0e-5, gamma=1.0):
    maxiter = 50
    min_sc_iter = 2  # set a minimum number of self-consistent iterations
    success = False  # fail unless solution is found.
    # keep track of Newton-Raphson and self-consistent iterations
    nr_iter = 0
    sci_iter = 0

    for iteration in range(0, maxiter):
        (f_sci, g_sci, gnorm_sci, f_nr, g_nr, gnorm_nr) = jax_core_adaptive(u_kn, N_k, f_k, gamma)

        # decide which directon to go depending on size of gradient norm
        f_old = f_k

        if gnorm_sci < gnorm_nr or sci_iter < min_sc_iter:
            f_k = f_sci
            sci_iter += 1
        else:
            f_k = f_nr
            nr_iter += 1

        div = jnp.abs(f_k[1:])  # what we will divide by to get relative difference
        zeroed = jnp.abs(f_k[1:]) < jnp.minimum(10**-8, tol)  # check which values are near enough to zero
        div = jnp.where(zeroed, 1.0, div)  # for these values, use absolute values.
        max_delta = jnp.max(jnp.abs(f_k[1:] - f_old[1:]) / div)
        max_diff = jnp.max(jnp.abs(f_sci[1:] - f_nr[1:]) / div)
        if jnp.isnan(max_delta) or ((max_delta < tol) and max_diff < jnp.sqrt(tol)):
            success = True
            break

    return f_k, success


def main():
    N_k = jnp.array([4.0, 4.0, 4.0])
    x_n = jnp.linspace(-1.0, 1.0, 12)
    u_kn = jnp.stack([0.5 * (x_n - mu) ** 2 for mu in (-0.5, 0.0, 0.7)])
    solved = adaptive(u_kn, N_k, jnp.zeros(3))
    polished = adaptive(u_kn, N_k, solved[0])
    capped = adaptive(u_kn, N_k, jnp.zeros(3), 0.0)
    return solved, polished, capped
