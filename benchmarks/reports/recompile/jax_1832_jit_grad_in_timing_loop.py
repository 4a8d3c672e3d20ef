"""Benchmarking JAX against PyTorch: the gradient of a cumulative-sum loss is jitted inside the timing loop.

Source: https://github.com/jax-ml/jax/issues/1832
Fails: `jit(grad(func_jax))(x)` inside the loop wraps a fresh `grad` function each time,
    so the jit cache never hits and `func_jax`'s gradient is recompiled on every
    repetition (correct values, the timings measure compilation).
Fix: as suggested in the thread, build `jit(grad(func_jax))` once outside the loop.
"""

import jax.numpy as np
from jax import grad, jit, lax

MAX_COMPILES = {"func_jax": 1}


def func_jax(x):
    def body(f_prev, x_i):
        return f_prev + x_i, f_prev + x_i

    _, f = lax.scan(body, 0.0, x)
    return np.sum(f ** 2) / x.shape[0]


def benchmark(x, repeats):
    g = np.zeros_like(x)
    for _ in range(repeats):
        grad_jax = jit(grad(func_jax))
        g = grad_jax(x)
    return g


def main():
    x = np.linspace(-1.0, 1.0, 10)
    return benchmark(x, 0), benchmark(x, 1), benchmark(x, 5)
