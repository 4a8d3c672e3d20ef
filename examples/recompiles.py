"""Jitted functions that compile again and again: run `jitfix profile -- python recompiles.py`."""
from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def squash(x):
    return x / (1.0 + jnp.abs(x))


@partial(jax.jit, static_argnames="step")
def decay(x, step):
    return x * 0.9**step


@jax.jit
def scale(x, factor):
    return x * factor


def main():
    signal = jnp.linspace(-2.0, 2.0, 64)
    total = 0.0
    for n in range(1, 17):
        total += squash(signal[:n]).sum()  # a new length on every pass
        total += decay(signal, n).sum()  # a new static value on every pass
        total += jax.jit(lambda v: (v * v).mean())(signal)  # a new function on every pass
    total += scale(signal, 2).sum() + scale(signal, 0.5).sum()  # an int, then a float
    print(f"total = {total:.4f}")


if __name__ == "__main__":
    main()
