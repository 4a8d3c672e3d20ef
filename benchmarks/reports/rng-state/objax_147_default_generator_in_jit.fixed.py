"""Objax-style global random generator: `random.normal` splits the key held by
`DEFAULT_GENERATOR`; a jitted predict op adds random noise to a linear model's logits, and a
new layer is created (its initializer also draws from the default generator) afterwards.

Source: https://github.com/google/objax/issues/147
Fails: the jitted predict op splits the global generator's key only while tracing, so every
    prediction gets the same noise, and the generator is left holding a tracer: creating
    the next `Linear` layer raises UnexpectedTracerError.
Fix: pass the generator's key into the jitted op and return the advanced key, storing it back
    on `DEFAULT_GENERATOR` at the call site.
"""

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np


class Generator:
    """Random number generator module."""

    def __init__(self, seed: int = 0):
        self.key = jr.PRNGKey(seed)

    def __call__(self):
        self.key, subkey = jr.split(self.key)
        return subkey


DEFAULT_GENERATOR = Generator(0)


def normal(shape, *, mean=0, stddev=1, generator=DEFAULT_GENERATOR):
    return jr.normal(generator(), shape=shape) * stddev + mean


class Linear:
    def __init__(self, nin, nout):
        self.b = jnp.zeros(nout)
        self.w = normal((nin, nout), stddev=np.sqrt(2 / (nin + nout)))

    def __call__(self, x):
        return jnp.dot(x, self.w) + self.b


new_model = Linear(3, 10)


def predict_op(x, key):
    generator = Generator()
    generator.key = key
    return new_model(x) + normal((10,), generator=generator), generator.key


predict = jax.jit(predict_op)


def main():
    x = np.ones((1, 3))
    first, DEFAULT_GENERATOR.key = predict(x, DEFAULT_GENERATOR.key)
    second, DEFAULT_GENERATOR.key = predict(x, DEFAULT_GENERATOR.key)
    other = Linear(3, 10)
    return first, second, other.w
