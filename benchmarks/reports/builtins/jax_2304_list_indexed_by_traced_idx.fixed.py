"""Picks one of a library's per-layer matrices by index inside a jitted function.

Source: https://github.com/jax-ml/jax/issues/2304
Fails: `mylist[idx]` indexes a Python list with the traced `idx`; the list calls `__index__`
    on the tracer and jit raises TracerIntegerConversionError.
Fix: stack the list into one array first, `jnp.stack(mylist)[idx]`, which a traced index can
    gather from.
"""

import jax.numpy as jnp
from jax import jit


@jit
def f(idx, mylist):
    return jnp.stack(mylist)[idx]


@jit
def apply_layer(idx, mylist, x):
    return jnp.tanh(f(idx, mylist) @ x)


def main():
    mylist = [jnp.eye(3) * (k + 1.0) + jnp.arange(9.0).reshape(3, 3) / 10.0 for k in range(4)]
    x = jnp.array([1.0, -0.5, 0.25])
    return f(0, mylist), f(3, mylist), apply_layer(2, mylist, x), apply_layer(1, mylist, x)
