"""SGD with warm restarts: a cosine learning-rate schedule fed to an optax-style optimiser.

Source: https://github.com/netket/netket/issues/908
Fails: the user's `schedule(n)` uses `np.cos`; the optimiser calls it with its step counter
    inside the driver's jitted `apply_gradient`, so `n` is a tracer and NumPy raises
    TracerArrayConversionError.
Fix: write the schedule with `jnp.cos`, so it can be evaluated on the traced step count.
"""

from functools import partial
from math import pi
from typing import NamedTuple

import jax
import jax.numpy as jnp

η = 0.05


def schedule(n):
    restart = 100
    return (1 + jnp.cos(pi * (n % restart) / restart)) * η


class ScaleByScheduleState(NamedTuple):
    count: jnp.ndarray


class GradientTransformation(NamedTuple):
    init: callable
    update: callable


def sgd(learning_rate):
    """optax.sgd, reduced to what the report uses: a float or a step -> float schedule."""

    def init(params):
        return ScaleByScheduleState(count=jnp.zeros([], jnp.int32))

    def update(updates, state, params=None):
        step_size = learning_rate(state.count) if callable(learning_rate) else learning_rate
        updates = jax.tree_util.tree_map(lambda g: -step_size * g, updates)
        return updates, ScaleByScheduleState(count=state.count + 1)

    return GradientTransformation(init, update)


@partial(jax.jit, static_argnums=0)
def apply_gradient(optimizer_fun, optimizer_state, dp, params):
    updates, new_optimizer_state = optimizer_fun(dp, optimizer_state, params)
    new_params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
    return new_optimizer_state, new_params


class VMC:
    """The driver loop: a gradient estimate, then the jitted optimiser update."""

    def __init__(self, optimizer, params, target):
        self._optimizer = optimizer
        self._optimizer_state = optimizer.init(params)
        self.params = params
        self.target = target

    def _forward_and_backward(self):
        return jax.tree_util.tree_map(lambda p, t: p - t, self.params, self.target)

    def run(self, n_iter):
        for _ in range(n_iter):
            dp = self._forward_and_backward()
            self._optimizer_state, self.params = apply_gradient(
                self._optimizer.update, self._optimizer_state, dp, self.params
            )
        return self.params


def main():
    params = {"a": jnp.array([1.0, -2.0, 0.5]), "b": jnp.array(3.0)}
    target = {"a": jnp.zeros(3), "b": jnp.array(1.0)}
    results = []
    for n_iter in (0, 1, 130):
        gs = VMC(sgd(schedule), params, target)
        results.append((gs.run(n_iter), gs._optimizer_state.count))
    constant = VMC(sgd(0.1), params, target)
    results.append(constant.run(3))
    return results
