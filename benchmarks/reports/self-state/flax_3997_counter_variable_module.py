"""A `Counter` module keeps its count in a `Count` variable and bumps it on every call; the
module is called eagerly once and then through `jax.jit`.

Source: https://github.com/google/flax/issues/3997
Fails: `self.count.value += 1` runs only while tracing: the jitted counter returns the same
    value on every call, and the variable is left holding a tracer, so reading
    `counter.count.value` afterwards raises.
Fix: make the call pure (take the count, return the new count) and store the returned value
    back into the variable at the call site.
"""

import jax
import jax.numpy as jnp


class Variable:
    def __init__(self, value):
        self.value = value


class Count(Variable): pass


class Counter:
  def __init__(self):
    self.count = Count(jnp.array(0))

  def __call__(self):
    self.count.value += 1
    return self.count.value


def main():
    counter = Counter()

    eager = counter()                   # works fine
    jit_counter = jax.jit(counter)
    jitted = [jit_counter() for _ in range(3)]
    return eager, jitted, counter.count.value
