"""A jitted normalisation takes the reduction axes as a keyword argument `axis=(0,)`.

Source: https://github.com/jax-ml/jax/issues/1922
Fails: the `axis` tuple is traced like any other argument, so `jnp.mean(inputs, axis=axis)`
    raises ConcretizationTypeError / TracerIntegerConversionError (the axis argument
    must be known statically).
Fix: mark the axes static: `partial(jit, static_argnames="axis")`.
"""

import jax.numpy as jnp
import numpy as np
from jax import jit


@jit
def test(inputs, axis=(0,)):
    mean = jnp.mean(inputs, axis=axis, keepdims=True)
    var = jnp.mean((inputs - mean) ** 2, axis=axis, keepdims=True)
    return (inputs - mean) / jnp.sqrt(var + 1e-5)


def main():
    input_shape = (8, 16)
    inputs = np.random.default_rng(0).uniform(size=input_shape).astype(np.float32)
    return test(inputs, axis=(0,)), test(inputs, axis=(1,)), test(inputs, axis=(0, 1))
