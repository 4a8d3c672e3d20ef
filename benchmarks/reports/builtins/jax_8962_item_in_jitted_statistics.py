"""Monte Carlo statistics of local energies, packed into a Stats tuple with `.item()`.

Source: https://github.com/jax-ml/jax/issues/8962
Fails: `x.item()` (the report's `test`, and the scalars packed into `Stats`) converts to a
    Python scalar; inside jit `x` is a tracer and `.item()` raises ConcretizationTypeError.
Fix: keep 0-d arrays: `x.reshape(())` for the size-1 input, and the reductions as they are.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


def test(x):
    return x.item()


class Stats(NamedTuple):
    mean: float
    error_of_mean: float
    variance: float


def statistics(data):
    mean = jnp.mean(data)
    variance = jnp.var(data)
    error_of_mean = jnp.sqrt(variance / data.size)
    return Stats(mean=mean.item(), error_of_mean=error_of_mean.item(), variance=variance.item())


def local_energy(params, samples):
    return params["a"] * samples**2 + params["b"] * jnp.cos(samples)


def expect(params, samples):
    return statistics(local_energy(params, samples))


def main():
    samples = jnp.linspace(-2.0, 2.0, 64)
    params = {"a": jnp.array(0.5), "b": jnp.array(-1.0)}
    return (
        test(jax.numpy.ones(1)),
        jax.jit(test)(jax.numpy.ones(1) * 3.0),
        jax.jit(expect)(params, samples),
        jax.jit(expect)({"a": jnp.array(1.5), "b": jnp.array(0.0)}, samples[::2]),
    )
