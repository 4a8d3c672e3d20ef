"""A global PRNG stream, research-code style."""

from jax import random

key = random.PRNGKey(0)


def next_key():
    global key
    key, subkey = random.split(key)
    return subkey
