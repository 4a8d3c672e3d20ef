"""Keep the positive entries of a tensor with `jnp.compress` / `jnp.extract` inside jit, then
total them.

Source: https://github.com/jax-ml/jax/issues/38603
Fails: without `size=`, `jnp.compress` and `jnp.extract` have a data-dependent output size; under
    jit they raise (TracerBoolConversionError in older releases, ConcretizationTypeError now).
Fix: give the static upper bound and a neutral fill: `size=x.size, fill_value=0`, so the sum of
    the kept entries is unchanged.
"""

import jax
import jax.numpy as jnp


def f(x):
    return jnp.compress(x.ravel() > 0, x.ravel(), size=x.size, fill_value=0)


def g(x):
    return jnp.extract(x > 0, x, size=x.size, fill_value=0)


def main():
    t = jnp.ones((4, 4), dtype=jnp.float32)
    mixed = jnp.arange(16, dtype=jnp.float32).reshape(4, 4) - 7.5
    negative = -t
    totals = []
    for fn in (jax.jit(f), jax.jit(g)):
        totals.append([jnp.sum(fn(t)), jnp.sum(fn(mixed)), jnp.sum(fn(negative))])
    return totals
