"""A library function ported from autograd rejects too-large inputs by raising in a lax.cond branch.

Source: https://github.com/jax-ml/jax/issues/4257
Fails: under jit both branches of `lax.cond` are traced, so `raise_error()` runs at trace time
    and every call raises `ValueError: x too big: Traced<...>`, even `foo(5)`.
Fix: stage the check as a runtime error: `return eqx.error_if(x, x > 10, "x too big")`.
"""

import equinox as eqx
import jax
import jax.numpy as jnp


@jax.jit
def foo(x):
    return eqx.error_if(x, x > 10, "x too big")


def main():
    results = []
    for x in (jnp.array(5.0), jnp.array(10.0), jnp.array(12.5)):
        try:
            results.append(foo(x))
        except (ValueError, RuntimeError):
            results.append("rejected: x too big")
    return results
