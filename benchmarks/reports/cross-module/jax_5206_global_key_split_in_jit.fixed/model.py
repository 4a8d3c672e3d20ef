"""Parameter initialisation that draws from the global stream."""

from jax import jit, random

from . import rng


def init(key):
    key, subkey = random.split(key)
    return key, random.normal(subkey, (3,))


init = jit(init)


def sample_weight():
    rng.key, w = init(rng.key)
    return w
