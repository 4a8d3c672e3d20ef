"""Build the two indices just before a position held in an array: `arange(x[0] - 1, x[0] + 1)`
always has length 2, but its endpoints are computed from traced data.

Source: https://github.com/jax-ml/jax/issues/19433
Fails: `jnp.arange` needs concrete `start`/`stop` to know its length; under jit both are
    tracers (the length 2 is static in truth), so it raises ConcretizationTypeError.
Fix: build the static-length range from constants and shift it: `jnp.arange(-1, 1) + x[0]`.
"""

import jax
import jax.numpy as np


@jax.jit
def f(x: np.ndarray) -> np.ndarray:
    return np.arange(-1, 1) + x[0]


@jax.jit
def window_sum(x, signal):
    return signal[f(x)].sum()


def main():
    signal = np.arange(10.0) ** 2
    return (f(np.zeros(1).astype(int)), f(np.array([5, 2])),
            window_sum(np.array([3]), signal), window_sum(np.array([9]), signal))
