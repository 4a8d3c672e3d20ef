"""A DDPG-style episode takes an `Optimizer` NamedTuple of (init, update, get) functions.

Source: https://github.com/jax-ml/jax/issues/953
Fails: `jit(ddpg_episode)(optimizer, ...)` flattens the NamedTuple and finds Python
    functions as leaves: TypeError (a function is not a valid JAX type).
Fix: the optimizer is configuration, not data: `jit(ddpg_episode, static_argnums=0)`
    (a NamedTuple of functions is hashable).
"""

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax import jit


class Optimizer(NamedTuple):
    init: Callable[[Any], Any]
    update: Callable[[int, Any, Any], Any]
    get: Callable[[Any], Any]


def momentum(step_size, mass=0.9):
    def init(params):
        return params, jax.tree_util.tree_map(jnp.zeros_like, params)

    def update(i, grads, state):
        params, velocity = state
        velocity = jax.tree_util.tree_map(lambda v, g: mass * v + g, velocity, grads)
        params = jax.tree_util.tree_map(lambda p, v: p - step_size * v, params, velocity)
        return params, velocity

    def get(state):
        return state[0]

    return init, update, get


class LoopState(NamedTuple):
    step: Any
    opt_state: Any
    total_loss: Any


def critic_loss(params, observations, targets):
    predictions = observations @ params["w"] + params["b"]
    return jnp.mean((predictions - targets) ** 2)


def ddpg_episode(optimizer: Optimizer, state: LoopState, observations, targets) -> LoopState:
    params = optimizer.get(state.opt_state)
    loss, grads = jax.value_and_grad(critic_loss)(params, observations, targets)
    opt_state = optimizer.update(state.step, grads, state.opt_state)
    return LoopState(state.step + 1, opt_state, state.total_loss + loss)


def train(num_episodes):
    optimizer = Optimizer(*momentum(step_size=1e-2))
    params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    state = LoopState(0, optimizer.init(params), 0.0)
    observations = jnp.arange(12.0).reshape(4, 3) / 10.0
    targets = jnp.array([1.0, -1.0, 0.5, 2.0])
    episode = jit(ddpg_episode)
    for _ in range(num_episodes):
        state = episode(optimizer, state, observations, targets)
    return state.total_loss, optimizer.get(state.opt_state)


def main():
    return train(0), train(1), train(5)
