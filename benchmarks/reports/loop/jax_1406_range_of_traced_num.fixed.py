"""A jitted function loops `num` times, with `num` passed in as an argument.

Source: https://github.com/jax-ml/jax/issues/1406
Fails: `num` is traced under jit, so `for _ in range(num)` raises TracerIntegerConversionError
    ('JaxprTracer' object cannot be interpreted as an integer in the report's JAX version).
Fix: count with `jax.lax.fori_loop(0, num, ...)`, whose bounds may be traced.
"""

from jax import jit, lax


def foo(num):
    count = 0
    count = lax.fori_loop(0, num, lambda _, count: count + 1, count)
    return count


def main():
    return jit(foo)(0), jit(foo)(1), jit(foo)(7)
