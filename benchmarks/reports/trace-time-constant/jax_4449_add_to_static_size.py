"""Allocate one slot more than an input has elements: the count is `jnp.add(arr.size, 1)`
(and a second buffer of `jnp.ceil(jnp.sqrt(arr.size))` rows), then used as a shape.

Source: https://github.com/jax-ml/jax/issues/4449
Fails: since omnistaging, `jnp.add`/`jnp.sqrt`/`jnp.ceil` on static sizes are staged, so the
    shape passed to `jnp.ones` is a tracer: TypeError "Shapes must be 1D sequences of concrete
    values of integer type".
Fix: compute the sizes with Python/`math` on the static `arr.size`: `arr.size + 1`,
    `math.ceil(math.sqrt(arr.size))`.
"""

import jax
import jax.numpy as jnp


@jax.jit
def custom_ones(arr):
    count = jnp.add(arr.size, 1)
    return jnp.ones((count,))


@jax.jit
def square_buffer(arr):
    side = jnp.ceil(jnp.sqrt(arr.size)).astype(int)
    buf = jnp.zeros((side * side,)).at[: arr.size].set(arr.ravel())
    return buf.reshape(side, side)


def main():
    a = jnp.ones((3,))
    b = jnp.arange(10.0).reshape(2, 5)
    return custom_ones(a), custom_ones(b), square_buffer(a), square_buffer(b)
