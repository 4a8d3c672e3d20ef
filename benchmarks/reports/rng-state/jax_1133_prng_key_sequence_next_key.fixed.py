"""A `PRNGKeySequence` helper hands out fresh keys by splitting its stored key; a jitted noisy
SGD step asks it for a key on every call.

Source: https://github.com/jax-ml/jax/pull/1133
Fails: `self._key, subkey = split(self._key)` is a Python side effect that runs only while
    the step is traced, so under jit every step adds exactly the same noise (the key never
    advances): the trajectory silently differs from the eager one.
Fix: draw the key outside the jitted step and pass it in as an argument.
"""

from jax import jit
from jax import random
import jax.numpy as jnp
from jax.random import PRNGKey, split


class PRNGKeySequence(object):
  """A simple wrapper class for the PRNG split functionality."""

  def __init__(self, key=None):
    if key is None:
      key = PRNGKey(0)
    self._key = key

  def next_key(self):
    """Splits the current key into two, returning one and storing the other.

    Returns:
      A PRNG key obtained by splitting an internal key.
    """
    self._key, subkey = split(self._key)
    return subkey


keys = PRNGKeySequence(PRNGKey(42))


@jit
def noisy_sgd_step(params, grads, key):
  noise = random.normal(key, params.shape)
  return params - 0.1 * grads + 0.05 * noise


def main():
  params = jnp.array([1.0, -2.0, 0.5])
  trajectory = []
  for _ in range(4):
    grads = 2 * params
    params = noisy_sgd_step(params, grads, keys.next_key())
    trajectory.append(params)
  return trajectory
