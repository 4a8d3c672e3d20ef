"""A `logsumexp` in array-API style (SciPy's, run on JAX arrays) wraps the imaginary part of a
complex result into (-pi, pi], keeping unwrapped entries exactly through a masked write.

Source: https://github.com/scipy/scipy/pull/22256
Fails: `out.at[no_wrap].set(x[no_wrap])` (the in-place `out[no_wrap] = x[no_wrap]` of the NumPy
    version) reads and writes through a traced boolean mask, so under jit it raises
    NonConcreteBooleanIndexError.
Fix: select instead of writing: `jnp.where(no_wrap, x, wrapped)`.
"""

import math
from functools import partial

import jax
import jax.numpy as jnp


def _wrap_radians(x):
    # Wrap radians to (-pi, pi] interval
    wrapped = -((-x + math.pi) % (2 * math.pi) - math.pi)
    # preserve relative precision
    no_wrap = jnp.abs(x) < jnp.pi
    return jnp.where(no_wrap, x, wrapped)


@partial(jax.jit, static_argnames=("axis",))
def logsumexp(a, axis=None, b=None):
    a_max = jnp.max(jnp.real(a), axis=axis, keepdims=True)
    a_max = jnp.where(jnp.isfinite(a_max), a_max, 0)
    tmp = jnp.exp(a - a_max) if b is None else b * jnp.exp(a - a_max)
    s = jnp.sum(tmp, axis=axis)
    out = jnp.log(s) + jnp.squeeze(a_max, axis=axis)
    if jnp.iscomplexobj(out):
        out = jnp.real(out) + 1j * _wrap_radians(jnp.imag(out))
    return out


def main():
    real = jnp.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]])
    phases = jnp.array([[0.5, 3.0, -2.5], [1.0, 2.9, 3.1]])
    complex_a = real + 1j * phases
    rotated = logsumexp(complex_a + 1j * 3.0, axis=0)
    per_row = logsumexp(complex_a, axis=1)
    return (logsumexp(real),
            logsumexp(real, axis=1, b=jnp.array([1.0, 0.5, 2.0])),
            (jnp.real(per_row), jnp.imag(per_row)),
            (jnp.real(rotated), jnp.imag(rotated)))
