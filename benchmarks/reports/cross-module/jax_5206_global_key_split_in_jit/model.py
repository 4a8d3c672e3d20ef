"""Parameter initialisation that draws from the global stream."""

from jax import jit, random

from . import rng


def init():
    return random.normal(rng.next_key(), (3,))


init = jit(init)


def sample_weight():
    return init()
