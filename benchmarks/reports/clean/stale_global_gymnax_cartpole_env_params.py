"""CartPole's transition (gymnax's `CartPole.step_env`): the physical constants (gravity,
masses, force magnitude...) are an `EnvParams` dataclass passed to every step, and the
jitted step is reused after the parameters change (e.g. a domain-randomization sweep).

Source: https://github.com/RobertTLange/gymnax/blob/main/gymnax/environments/classic_control/cartpole.py
Category: stale-global
Correct: the configuration is an argument of the jitted step (a pytree), never a global or an
    attribute read at trace time, so changing it changes the results without retracing.
"""

import dataclasses

import jax
import jax.numpy as jnp
from jax import lax


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class EnvState:
    x: float
    x_dot: float
    theta: float
    theta_dot: float
    time: int


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class EnvParams:
    gravity: float = 9.8
    masscart: float = 1.0
    masspole: float = 0.1
    total_mass: float = 1.0 + 0.1  # (masscart + masspole)
    length: float = 0.5
    polemass_length: float = 0.05  # (masspole * length)
    force_mag: float = 10.0
    tau: float = 0.02
    theta_threshold_radians: float = 12 * 2 * jnp.pi / 360
    x_threshold: float = 2.4
    max_steps_in_episode: int = 500  # v0 had only 200 steps!


class CartPole:
    """JAX Compatible version of CartPole-v1 OpenAI gym environment."""

    def step_env(self, key, state: EnvState, action: int, params: EnvParams):
        """Performs step transitions in the environment."""
        prev_terminal = self.is_terminal(state, params)
        force = params.force_mag * action - params.force_mag * (1 - action)
        costheta = jnp.cos(state.theta)
        sintheta = jnp.sin(state.theta)

        temp = (
            force + params.polemass_length * state.theta_dot ** 2 * sintheta
        ) / params.total_mass
        thetaacc = (params.gravity * sintheta - costheta * temp) / (
            params.length
            * (4.0 / 3.0 - params.masspole * costheta ** 2 / params.total_mass)
        )
        xacc = (
            temp
            - params.polemass_length * thetaacc * costheta / params.total_mass
        )

        # Only default Euler integration option available here!
        x = state.x + params.tau * state.x_dot
        x_dot = state.x_dot + params.tau * xacc
        theta = state.theta + params.tau * state.theta_dot
        theta_dot = state.theta_dot + params.tau * thetaacc

        # Important: Reward is based on termination is previous step transition
        reward = 1.0 - prev_terminal

        # Update state dict and evaluate termination conditions
        state = EnvState(x, x_dot, theta, theta_dot, state.time + 1)
        done = self.is_terminal(state, params)

        return (
            lax.stop_gradient(self.get_obs(state)),
            lax.stop_gradient(state),
            reward,
            done,
        )

    def get_obs(self, state: EnvState):
        """Applies observation function to state."""
        return jnp.array([state.x, state.x_dot, state.theta, state.theta_dot])

    def is_terminal(self, state: EnvState, params: EnvParams):
        """Check whether state is terminal."""
        done1 = jnp.logical_or(
            state.x < -params.x_threshold,
            state.x > params.x_threshold,
        )
        done2 = jnp.logical_or(
            state.theta < -params.theta_threshold_radians,
            state.theta > params.theta_threshold_radians,
        )
        done_steps = state.time >= params.max_steps_in_episode
        done = jnp.logical_or(jnp.logical_or(done1, done2), done_steps)
        return done


def main():
    env = CartPole()
    step = jax.jit(env.step_env)
    key = jax.random.PRNGKey(0)
    results = []
    for gravity in (9.8, 1.6, 24.8):
        params = EnvParams(gravity=gravity)
        state = EnvState(0.0, 0.0, 0.05, 0.0, 0)
        total = 0.0
        for t in range(30):
            obs, state, reward, done = step(key, state, t % 2, params)
            total = total + reward
        results.append((obs, total))
    return results
