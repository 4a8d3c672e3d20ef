"""jit freezes a global at its trace-time value; later changes are ignored."""
import jax
import jax.numpy as jnp

SCALE = 1.0


@jax.jit
def scaled(x):
    return x * SCALE


def set_scale(value):
    global SCALE
    SCALE = value
