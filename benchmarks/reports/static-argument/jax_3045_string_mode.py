"""A jitted function takes a string argument that selects which value it computes.

Source: https://github.com/jax-ml/jax/issues/3045
Fails: a `str` is not an array: calling the jitted function with `"sum"` raises
    TypeError (error interpreting argument as an abstract array).
Fix: the string picks the code path, so mark it static: `static_argnames="msg"`.
"""

import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def print_yay(arr, msg):
    if msg == "sum":
        return jnp.sum(arr)
    elif msg == "mean":
        return jnp.mean(arr)
    return jnp.max(arr) - jnp.min(arr)


def main():
    arr = np.array([5, 3, 2, 2020])
    return print_yay(arr, "sum"), print_yay(arr, "mean"), print_yay(arr, "this is my message!")
