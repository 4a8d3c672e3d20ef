"""A torch-on-JAX interop layer implements `rand(...)` by drawing an integer seed from the
host RNG (`torch.randint` there, Python's `random` here) and turning it into a JAX key; a
function using it is wrapped in `jax.jit`.

Source: https://github.com/google/torchax/issues/17
Fails: the host RNG runs only while tracing, so its seed is burned into the compiled graph:
    the jitted `rand_plus_one()` returns the same numbers on every call, while eagerly they
    change.
Fix: draw the seed on the host outside the jitted function and pass the key in.
"""

import random

import jax
import jax.numpy as jnp

random.seed(0)


def next_key():
    seed = random.randint(0, 2 ** 31 - 1)
    return jax.random.PRNGKey(seed)


def rand(*shape, key):
    return jax.random.uniform(key, shape)


@jax.jit
def rand_plus_one(key):
    return rand(2, 2, key=key) + 1


def main():
    return rand_plus_one(next_key()), rand_plus_one(next_key()), rand_plus_one(next_key())
