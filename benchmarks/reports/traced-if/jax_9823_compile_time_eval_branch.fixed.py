"""A jitted activation picks sin or cos from a constant computed under ensure_compile_time_eval.

Source: https://github.com/jax-ml/jax/issues/9823
Fails: the constant `z` is computed inside `jax.ensure_compile_time_eval()`, but the comparison
    `if z > 0:` is made after the block, where `z > 0` is staged out: TracerBoolConversionError
    (the documented example itself failed).
Fix: evaluate the predicate inside the block too (`positive = z > 0`) and branch on it.
"""

import jax
import jax.numpy as jnp


def make_activation(phase):
    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(phase)
            z = jnp.sin(y)
            positive = z > 0
        if positive:  # the value of z is available and can be used in control flow
            return jnp.sin(x)
        else:
            return jnp.cos(x)

    return f


def main():
    x = jnp.linspace(-1.0, 1.0, 5)
    return make_activation(3.0)(x), make_activation(-3.0)(x)
