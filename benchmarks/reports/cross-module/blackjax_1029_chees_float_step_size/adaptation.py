"""A pared-down ChEES warmup: step size and trajectory length adapted across chains."""

from typing import Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

from .length_floor import _apply_length_floor, _ChEESEigState, _recompute_eig_state


class ChEESAdaptationState(NamedTuple):
    log_step_size: jnp.ndarray
    log_step_size_moving_average: jnp.ndarray
    log_trajectory_length_moving_average: jnp.ndarray
    step: jnp.ndarray


class AdaptationAlgorithm(NamedTuple):
    run: Callable


def chees_adaptation(logdensity_fn: Callable, num_chains: int, mass_matrix_estimation: Optional[str] = None,
                     max_leapfrog_steps: int = 1000, decay_rate: float = 0.5,
                     _length_floor: bool = True) -> AdaptationAlgorithm:
    estimate_mass_matrix = mass_matrix_estimation == "diagonal"
    enable_length_floor = estimate_mass_matrix and _length_floor
    grad_fn = jax.vmap(jax.grad(logdensity_fn))

    def one_step(carry, _):
        state, positions = carry
        step_size = jnp.exp(state.log_step_size)
        # One leapfrog-flavoured move per chain; its acceptance drives the step size.
        proposal = positions + step_size * grad_fn(positions)
        accept = jnp.exp(jnp.minimum(0.0, jax.vmap(logdensity_fn)(proposal) - jax.vmap(logdensity_fn)(positions)))
        harmonic_mean = 1.0 / jnp.mean(1.0 / accept)
        log_step_size = state.log_step_size + 0.5 * (harmonic_mean - 0.651)
        update_weight = state.step ** (-decay_rate)
        new_state = ChEESAdaptationState(
            log_step_size,
            (1.0 - update_weight) * state.log_step_size_moving_average + update_weight * log_step_size,
            (1.0 - update_weight) * state.log_trajectory_length_moving_average
            + update_weight * jnp.log(jnp.std(proposal - positions) + step_size),
            state.step + 1.0,
        )
        return (new_state, proposal), None

    def run(positions, step_size: float, num_steps: int = 10):
        init = ChEESAdaptationState(jnp.log(step_size), 0.0, 0.0, 1.0)
        (last_adaptation_state, last_positions), _ = jax.lax.scan(one_step, (init, positions), None,
                                                                 length=num_steps)
        step_size_ma = jnp.exp(last_adaptation_state.log_step_size_moving_average)
        trajectory_length_ma = jnp.exp(last_adaptation_state.log_trajectory_length_moving_average)
        inverse_mass_matrix = jnp.ones(positions.shape[-1])
        floor_clipped_by_cap = jnp.asarray(False)
        if estimate_mass_matrix:
            inverse_mass_matrix = jnp.var(last_positions, axis=0) + 1e-3
            final_engaged = last_adaptation_state.step > 3.0
            covariance = jnp.cov(last_positions, rowvar=False)
            final_eig_state = _recompute_eig_state(
                covariance, inverse_mass_matrix,
                _ChEESEigState(jnp.ones(positions.shape[-1]) / jnp.sqrt(positions.shape[-1]), 1.0))
            if enable_length_floor:
                trajectory_length_ma, floor_clipped_by_cap = _apply_length_floor(
                    trajectory_length_ma,
                    final_eig_state.lambda_max,
                    final_engaged,
                    _length_floor,
                    max_leapfrog_steps,
                    float(step_size_ma),
                )
        parameters = {"step_size": step_size_ma, "trajectory_length": trajectory_length_ma,
                      "inverse_mass_matrix": inverse_mass_matrix}
        return (last_positions, parameters), floor_clipped_by_cap

    return AdaptationAlgorithm(run)
