"""An initializer draws from a module-level PRNG key, splitting the global key on every call
(the pattern Flax and Haiku users hit when omnistaging landed).

Source: https://github.com/jax-ml/jax/pull/4312
Fails: under jit the global `key` is split only while tracing, so every call of `init` returns
    the same number, and the global is left holding a tracer: touching it afterwards
    (`random.normal(key, ...)`) raises UnexpectedTracerError.
Fix: pass the key in and return the new key with the sample; rebind the key at the call site.
"""

from jax import jit
from jax import random

key = random.PRNGKey(0)


def init():
  global key
  key, subkey = random.split(key)
  return random.normal(subkey, ())


init = jit(init)


def main():
  draws = [init() for _ in range(3)]
  noise = random.normal(key, (2,))
  return draws, noise
