"""The slow-direction trajectory-length floor of the ChEES adaptation."""

from typing import NamedTuple

import jax
import jax.numpy as jnp

Array = jnp.ndarray

CHEES_LENGTH_FLOOR_FACTOR = 1.5
_LENGTH_FLOOR_LAMBDA_EPS = 1e-6
_LENGTH_FLOOR_POWER_ITERATIONS = 10


class _ChEESEigState(NamedTuple):
    eigenvector: Array
    lambda_max: Array


def _power_iteration_lambda_max(matrix, eigenvector, num_iterations):
    def body(_, v):
        w = matrix @ v
        return w / jnp.maximum(jnp.linalg.norm(w), 1e-12)

    v = jax.lax.fori_loop(0, num_iterations, body, eigenvector)
    return v @ matrix @ v, v


def _recompute_eig_state(covariance, inverse_mass_matrix, eig_state,
                         num_iterations=_LENGTH_FLOOR_POWER_ITERATIONS) -> _ChEESEigState:
    """Whiten the covariance by the diagonal ``inverse_mass_matrix`` and refresh the
    top-eigenvalue estimate via power iteration warm-started on ``eig_state.eigenvector``."""
    inv_sqrt_d = 1.0 / jnp.sqrt(inverse_mass_matrix)
    whitened_covariance = covariance * inv_sqrt_d[:, None] * inv_sqrt_d[None, :]
    lambda_max, eigenvector = _power_iteration_lambda_max(whitened_covariance, eig_state.eigenvector,
                                                          num_iterations)
    return _ChEESEigState(eigenvector=eigenvector,
                          lambda_max=jnp.maximum(lambda_max, _LENGTH_FLOOR_LAMBDA_EPS))


def _apply_length_floor(
    trajectory_length: Array,
    lambda_max: Array,
    engaged: Array,
    enable: bool,
    max_leapfrog_steps: int = 1000,
    step_size: float = 0.1,
) -> tuple[Array, Array]:
    """Floor ``trajectory_length`` at ``CHEES_LENGTH_FLOOR_FACTOR * sqrt(lambda_max)``.
    The consumed length respects the user's budget:
    ``min(max(adapted, floor), max_leapfrog_steps * step_size)``.
    """
    if not enable:
        return trajectory_length, jnp.asarray(False)

    floor_value = jnp.where(
        engaged, CHEES_LENGTH_FLOOR_FACTOR * jnp.sqrt(lambda_max), 0.0
    )
    cap = max_leapfrog_steps * step_size
    floored_length = jnp.maximum(trajectory_length, floor_value)
    consumed_length = jnp.minimum(floored_length, cap)
    floor_clipped_by_cap = jnp.logical_and(
        jnp.logical_and(engaged, enable), floor_value > cap
    )
    return consumed_length, floor_clipped_by_cap
