"""A jitted method with `static_argnums=(1,)` meant to make the `neg` flag static.

Source: https://github.com/jax-ml/jax/issues/17158
Fails: on a method, index 0 is `self`, so `static_argnums=(1,)` marks the array `x`
    static: ValueError (non-hashable static argument), and `neg` stays traced.
Fix: count `self`: `static_argnums=(0, 2)` (self and `neg` static, `x` traced).
"""

from functools import partial

import jax
import jax.numpy as jnp


class Test:
    def __init__(self, offset):
        self.offset = offset

    @partial(jax.jit, static_argnums=(1,))
    def f(self, x, neg):
        return -x + self.offset if neg else x + self.offset


def main():
    t = Test(1.0)
    arr = jnp.array([1, 2])
    return t.f(arr, True), t.f(arr, False), Test(-2.0).f(arr * 3, True)
