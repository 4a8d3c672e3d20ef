"""A NumPy-style `array_equal` (the first jnp version), used inside jitted code.

Source: https://github.com/jax-ml/jax/pull/609
Fails: the function returns `bool(asarray(a1 == a2).all())`; under jit the comparison is a
    tracer and `bool()` raises TracerBoolConversionError.
Fix: return the traced boolean, `asarray(a1 == a2).all()`, as suggested in review; the shape
    checks stay Python since shapes are static.
"""

import jax
from jax.numpy import asarray


def array_equal(a1, a2):
    try:
        a1, a2 = asarray(a1), asarray(a2)
    except Exception:
        return False
    if a1.shape != a2.shape:
        return False
    return bool(asarray(a1 == a2).all())


@jax.jit
def converged(state, previous):
    return array_equal(state, previous), array_equal(state, previous[:-1])


def main():
    a = asarray([1.0, 2.0, 3.0])
    return (
        array_equal(a, a),
        jax.jit(array_equal)(a, a),
        jax.jit(array_equal)(a, a + 1.0),
        converged(a, asarray([1.0, 2.0, 3.5])),
    )
