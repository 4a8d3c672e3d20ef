"""A backend-agnostic array library (autoray-style `do("random.normal", like="jax")`) keeps a
module-level JAX key that it splits on every random call; a jitted sampler adds simulated
noise through it.

Source: https://github.com/jcmgray/autoray/issues/27
Fails: the global key is split only while the sampler is traced, so the jitted sampler
    returns the same "random" value on every call (0.11975035 ten times in the report).
Fix: thread the key explicitly: the sampler takes the key and returns the advanced key with
    the sample.
"""

import jax
import jax.numpy as jnp

_JAX_RANDOM_KEY = None


def jax_random_seed(seed=0):
    global _JAX_RANDOM_KEY
    _JAX_RANDOM_KEY = jax.random.PRNGKey(seed)


def jax_random_get_key():
    global _JAX_RANDOM_KEY
    if _JAX_RANDOM_KEY is None:
        jax_random_seed()
    _JAX_RANDOM_KEY, subkey = jax.random.split(_JAX_RANDOM_KEY)
    return subkey


def jax_random_normal(loc=0.0, scale=1.0, size=None, **kwargs):
    if size is None:
        size = ()
    elif isinstance(size, int):
        size = (size,)
    x = jax.random.normal(jax_random_get_key(), shape=size, **kwargs)
    return x * scale + loc


_FUNCS = {("jax", "random.normal"): jax_random_normal}


def do(fn, *args, like=None, **kwargs):
    return _FUNCS[like, fn](*args, **kwargs)


@jax.jit
def sampler(key):
    key, subkey = jax.random.split(key)
    return key, jax.random.normal(key=subkey)


def main():
    key = jax.random.PRNGKey(0)
    samples = []
    for _ in range(10):
        key, sample = sampler(key)
        samples.append(sample)
    return samples
