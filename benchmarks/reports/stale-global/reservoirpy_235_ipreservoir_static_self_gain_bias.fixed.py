"""An intrinsic-plasticity reservoir (`IPReservoir`) jits its `_step` with `self` static and
reads the gain `a` and bias `b` from `self`; `partial_fit` updates `self.a`/`self.b` after
every step and `run` is called after training.

Source: https://github.com/reservoirpy/reservoirpy/issues/235
Fails: marking `self` static bakes `self.a` and `self.b` into the compiled step as constants,
    so the plasticity updates never reach the step: training follows a different path and
    `run` after `fit` silently ignores the learned gain and bias.
Fix: pass `a` and `b` to the jitted `_step` as arguments.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


class IPReservoir:
    def __init__(self, units, input_dim, mu=0.0, sigma=0.5, learning_rate=0.05, seed=0):
        rng = np.random.default_rng(seed)
        self.W = jnp.asarray(rng.normal(scale=0.3, size=(units, units)), dtype=jnp.float32)
        self.Win = jnp.asarray(rng.uniform(-1, 1, size=(units, input_dim)), dtype=jnp.float32)
        self.mu = mu
        self.sigma = sigma
        self.learning_rate = learning_rate
        self.a = jnp.ones(units)
        self.b = jnp.zeros(units)
        self.units = units

    @partial(jax.jit, static_argnums=(0,))
    def _step(self, state, x, a, b):
        pre = self.W @ state + self.Win @ x
        return jnp.tanh(a * pre + b), pre

    def run(self, X):
        state = jnp.zeros(self.units)
        states = []
        for x in X:
            state, _ = self._step(state, x, self.a, self.b)
            states.append(state)
        return jnp.stack(states)

    def partial_fit(self, X):
        mu, sigma, eta = self.mu, self.sigma, self.learning_rate
        state = jnp.zeros(self.units)
        for x in X:
            state, pre = self._step(state, x, self.a, self.b)
            db = -eta * (-(mu / sigma ** 2)
                         + (state / sigma ** 2) * (2 * sigma ** 2 + 1 - state ** 2 + mu * state))
            da = eta / self.a + db * pre
            self.a = self.a + da
            self.b = self.b + db
        return self


def main():
    t = jnp.arange(12, dtype=jnp.float32)
    X = jnp.stack([jnp.sin(0.5 * t), jnp.cos(0.3 * t), 0.1 * t], axis=1)
    node = IPReservoir(units=5, input_dim=3)
    before = node.run(X[:4])
    node.partial_fit(X)
    after = node.run(X[:4])
    return before, node.a, node.b, after
