"""A `Counter` object keeps `self.n` between calls of its `count` method, which is jitted to
"count fast" (the JAX-101 stateful-computations example).

Source: https://github.com/jax-ml/jax/pull/5980
Fails: `self.n += 1` is a Python side effect that runs only while `count` is traced: the
    jitted counter returns 1, 1, 1 instead of 1, 2, 3 and `counter.n` stays at 1, silently.
Fix: pass the counter state in and return the new state (`count(n) -> (value, new_n)`),
    rebinding it at the call site.
"""

import jax
import jax.numpy as jnp


class Counter:
  """A simple counter."""

  def __init__(self):
    self.n = 0

  def count(self, n):
    """Increments the counter state and returns the new value and the new state."""
    value = n + 1
    new_n = value
    return value, new_n

  def reset(self):
    """Resets the counter to zero."""
    self.n = 0


def counted(count, counter, times):
  values = []
  for _ in range(times):
    value, counter.n = count(counter.n)
    values.append(value)
  return values


def main():
  counter = Counter()
  slow = counted(counter.count, counter, 3)

  counter.reset()
  fast_count = jax.jit(counter.count)
  fast = counted(fast_count, counter, 3)

  counter.reset()
  none = counted(fast_count, counter, 0)
  one = counted(fast_count, counter, 1)
  return slow, fast, none, one, counter.n
