"""A jitted training step whose gradient clipping lives in other modules (optax's clip_by_global_norm).

Source: https://github.com/google-deepmind/optax/blob/main/optax/_src/clipping.py
Category: cross-module
Correct: the traced gradient crosses into clipping.py and linear_algebra.py, which keep the
    data-dependent choice on device (`jax.lax.select` on the traced `g_norm < max_norm`) and
    check only the static shape of the trigger.
"""

import jax
import jax.numpy as jnp

from . import base, clipping


def loss_fn(params, x, y):
    pred = x @ params["w"] + params["b"]
    return jnp.mean((pred - y) ** 2)


def make_step(optimizer: base.GradientTransformation, lr: float):
    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = jax.tree.map(lambda p, u: p - lr * u, params, updates)
        return params, opt_state, loss

    return step


def main():
    x = jnp.linspace(-1.0, 1.0, 12).reshape(6, 2)
    y = jnp.array([1.0, -2.0, 0.5, 3.0, 0.0, 1.5])
    results = []
    for max_norm in (0.1, 100.0):  # clipping active, and inactive
        optimizer = clipping.clip_by_global_norm(max_norm)
        params = {"w": jnp.zeros(2), "b": jnp.array(0.0)}
        opt_state = optimizer.init(params)
        step = make_step(optimizer, lr=0.1)
        for _ in range(3):
            params, opt_state, loss = step(params, opt_state, x, y)
            results.append(loss)
        results.append(params)
    return results
