"""Batched k-point THC objective: a jitted kernel summed over k-point batches by a Python driver.

Source: https://github.com/quantumlib/OpenFermion/pull/1396
Fails: the `@jax.jit` kernel `compute_objective_batched` ends with `return float(res)`; `res` is
    a tracer while the kernel is traced, so `float()` raises ConcretizationTypeError.
Fix: return the array (`return res`); the driver's `objective += ...` works on arrays.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def compute_objective_batched(chis, zetas, chols, norm_factors, num_kpts, penalty_param=0.0):
    """THC objective for one batch of momentum-conserving k-point quadruples."""
    eri_thc = jnp.einsum("Jpm,Jqm,Jmn,Jrn,Jsn->Jpqrs", chis[0].conj(), chis[1], zetas, chis[2].conj(), chis[3])
    eri_ref = jnp.einsum("Jnpq,Jnrs->Jpqrs", chols[0], chols[1])
    deri = (eri_thc - eri_ref) / num_kpts
    norm_left = norm_factors[0] * norm_factors[1]
    norm_right = norm_factors[2] * norm_factors[3]
    mpq_normalized = jnp.einsum("JP,JPQ,JQ->JPQ", norm_left, zetas, norm_right) / num_kpts
    lambda_z = jnp.sum(jnp.einsum("jpq->j", 0.5 * jnp.abs(mpq_normalized)) ** 2.0)
    res = 0.5 * jnp.sum((jnp.abs(deri)) ** 2) + penalty_param * lambda_z
    return float(res)


def prepare_batched_data_indx_arrays(momentum_map):
    num_kpts = momentum_map.shape[0]
    indx_pqrs = np.zeros((num_kpts, num_kpts**2, 4), dtype=np.int32)
    for iq in range(num_kpts):
        indx = 0
        for ik in range(num_kpts):
            for ik_prime in range(num_kpts):
                indx_pqrs[iq, indx] = [ik, momentum_map[iq, ik], momentum_map[iq, ik_prime], ik_prime]
                indx += 1
    return indx_pqrs


def thc_objective_regularized_batched(chi, zeta, chol, momentum_map, batch_size, penalty_param=0.0):
    num_kpts = momentum_map.shape[0]
    indx_pqrs = prepare_batched_data_indx_arrays(momentum_map)
    norm_kp = jnp.sqrt(jnp.einsum("kpP,kpP->kP", chi.conj(), chi).real)
    num_batches = math.ceil(num_kpts**2 / batch_size)
    objective = 0.0
    for iq in range(num_kpts):
        for ibatch in range(num_batches):
            idx = indx_pqrs[iq, ibatch * batch_size : (ibatch + 1) * batch_size]
            chis = tuple(chi[idx[:, i]] for i in range(4))
            norms = tuple(norm_kp[idx[:, i]] for i in range(4))
            zeta_batch = jnp.broadcast_to(zeta[iq], (idx.shape[0],) + zeta[iq].shape)
            chol_batch = (chol[idx[:, 0], idx[:, 1]], chol[idx[:, 2], idx[:, 3]])
            objective += compute_objective_batched(
                chis, zeta_batch, chol_batch, norms, num_kpts, penalty_param=penalty_param
            )
    return objective


def main():
    num_kpts, num_orb, num_thc, naux = 2, 2, 3, 4
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    chi = jax.random.normal(keys[0], (num_kpts, num_orb, num_thc)) + 0.1j * jax.random.normal(keys[1], (num_kpts, num_orb, num_thc))
    zeta = jax.random.normal(keys[2], (num_kpts, num_thc, num_thc)).astype(jnp.complex64)
    chol = 0.3 * jax.random.normal(keys[3], (num_kpts, num_kpts, naux, num_orb, num_orb)).astype(jnp.complex64)
    momentum_map = np.array([[0, 1], [1, 0]])
    return (
        thc_objective_regularized_batched(chi, zeta, chol, momentum_map, batch_size=4),
        thc_objective_regularized_batched(chi, zeta, chol, momentum_map, batch_size=1, penalty_param=0.1),
    )
