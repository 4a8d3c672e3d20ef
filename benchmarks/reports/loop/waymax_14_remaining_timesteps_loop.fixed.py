"""A jitted benchmark replays the logged trajectory for the scenario's remaining timesteps.

Source: https://github.com/waymo-research/waymax/issues/14
Fails: `state.remaining_timesteps` is computed from the traced `timestep` field, so
    `for _ in range(state.remaining_timesteps)` raises TracerIntegerConversionError.
Fix: run the replay with `jax.lax.fori_loop(0, state.remaining_timesteps, ...)`, whose
    upper bound may be traced.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class SimulatorState(NamedTuple):
    log_trajectory: jax.Array  # (num_timesteps, num_objects, 2) logged xy
    sim_trajectory: jax.Array  # (num_timesteps, num_objects, 2) simulated xy
    timestep: jax.Array  # int32 scalar

    @property
    def remaining_timesteps(self):
        return self.log_trajectory.shape[0] - 1 - self.timestep


def update_state_by_log(state, num_steps):
    """Advances the simulator by copying the logged positions into the simulation."""
    sim_trajectory = state.sim_trajectory
    timestep = state.timestep
    for _ in range(num_steps):
        timestep = timestep + 1
        sim_trajectory = sim_trajectory.at[timestep].set(state.log_trajectory[timestep])
    return state._replace(sim_trajectory=sim_trajectory, timestep=timestep)


@jax.jit
def benchmark(state):
    return jax.lax.fori_loop(
        0, state.remaining_timesteps, lambda _, state: update_state_by_log(state, num_steps=1), state
    )


def scenario(start):
    steps = jnp.arange(8, dtype=jnp.float32)
    log_trajectory = jnp.stack([jnp.stack([steps, 2.0 * steps], -1), jnp.stack([-steps, steps ** 2], -1)], 1)
    sim_trajectory = jnp.zeros_like(log_trajectory).at[: start + 1].set(log_trajectory[: start + 1])
    return SimulatorState(log_trajectory, sim_trajectory, jnp.int32(start))


def main():
    results = []
    for start in (7, 6, 0):  # 0, 1 and 7 remaining timesteps
        state = benchmark(scenario(start))
        results.append((state.sim_trajectory, state.timestep))
    return results
