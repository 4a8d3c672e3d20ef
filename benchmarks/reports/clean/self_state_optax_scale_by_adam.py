"""Adam's gradient transformation (optax's `scale_by_adam`): the step count and the two
moment estimates live in a `ScaleByAdamState` NamedTuple, and a jitted `update_fn` returns
the new state, which the training loop rebinds.

Source: https://github.com/google-deepmind/optax/blob/main/optax/_src/transform.py
Category: self-state
Correct: no object is mutated; the counter `count` is incremented in the returned state
    (`ScaleByAdamState(count=count_inc, ...)`), so every jitted call sees and advances it.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class GradientTransformation(NamedTuple):
  init: callable
  update: callable


class ScaleByAdamState(NamedTuple):
  """State for the Adam algorithm."""

  count: jax.Array  # shape=(), dtype=jnp.int32.
  mu: jax.Array
  nu: jax.Array


def safe_increment(count):
  max_value = jnp.iinfo(count.dtype).max
  return jnp.where(count < max_value, count + 1, max_value)


def update_moment(updates, moments, decay, order):
  return jax.tree.map(lambda g, t: (1 - decay) * (g ** order) + decay * t, updates, moments)


def bias_correction(moment, decay, count):
  bias_correction_ = 1 - decay ** count
  return jax.tree.map(lambda t: t / bias_correction_.astype(t.dtype), moment)


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
  """Rescale updates according to the Adam algorithm."""

  def init_fn(params):
    mu = jax.tree.map(jnp.zeros_like, params)  # First moment
    nu = jax.tree.map(jnp.zeros_like, params)  # Second moment
    return ScaleByAdamState(count=jnp.zeros([], jnp.int32), mu=mu, nu=nu)

  def update_fn(updates, state, params=None):
    del params
    mu = update_moment(updates, state.mu, b1, 1)
    nu = update_moment(updates, state.nu, b2, 2)
    count_inc = safe_increment(state.count)
    mu_hat = bias_correction(mu, b1, count_inc)
    nu_hat = bias_correction(nu, b2, count_inc)
    updates = jax.tree.map(
        lambda m, v: m / (jnp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
    return updates, ScaleByAdamState(count=count_inc, mu=mu, nu=nu)

  return GradientTransformation(init_fn, update_fn)


def main():
  opt = scale_by_adam()
  params = jnp.array([1.0, -2.0, 3.0])
  state = opt.init(params)
  update = jax.jit(opt.update)
  for _ in range(5):
    grads = 2 * params
    updates, state = update(grads, state)
    params = params - 0.1 * updates
  return params, state.count, state.mu, state.nu
