"""An `if` on a traced value raises TracerBoolConversionError under jit."""
import jax
import jax.numpy as jnp


@jax.jit
def relu_or_square(x):
    if x.sum() > 0:
        y = x
    else:
        y = x ** 2
    return y
