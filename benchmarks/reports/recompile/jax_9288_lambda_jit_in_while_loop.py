"""A Python while loop that jit-compiles its loop body on every pass, through a fresh lambda.

Source: https://github.com/jax-ml/jax/issues/9288
Fails: `jax.jit(lambda x: unjitted_loop_body(x))` builds a new function object each pass,
    so the jit cache never hits: `<lambda>` is compiled once per iteration (correct values,
    n compiles).
Fix: jit the loop body once, outside the loop, and call that in the loop.
"""

import jax
import jax.numpy as jnp

MAX_COMPILES = {"<lambda>": 1}


def unjitted_loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted_poorly(x, n):
    i = 0
    while i < n:
        # Don't do this!
        loop_body = jax.jit(lambda x: unjitted_loop_body(x))
        i = loop_body(i)
    return x + i


def main():
    x = jnp.arange(3.0)
    return g_inner_jitted_poorly(x, 0), g_inner_jitted_poorly(x, 1), g_inner_jitted_poorly(x, 6)
