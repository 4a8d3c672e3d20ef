"""An absolute-value style helper that tests the sign with `float(x)`, used in a jitted function.

Source: https://github.com/jax-ml/jax/issues/2783
Fails: `x if float(x) >= 0. else -x` calls `float()` on a tracer under jit, which raises
    ConcretizationTypeError (the report hit the same error under grad).
Fix: select on the traced comparison, `jnp.where(x >= 0.0, x, -x)`; no Python float needed.
"""

import jax
import jax.numpy as jnp


def func(x):
    return jnp.where(x >= 0.0, x, -x)


@jax.jit
def reflect(xs, wall):
    return jnp.stack([wall + func(x - wall) for x in xs])


def main():
    jitted = jax.jit(func)
    return jitted(3.0), jitted(-2.5), jitted(0.0), reflect(jnp.array([-1.0, 0.5, 2.0]), 0.25)
