"""Locate the brightest pixel of an image (a unique maximum) with the one-argument
`jnp.where(image == jnp.max(image))`, and read off its sky coordinates.

Source: https://github.com/jax-ml/jax/issues/4585
Fails: one-argument `jnp.where` is `nonzero`, whose size is data-dependent; under jit it raises
    ConcretizationTypeError even though the user knows there is exactly one maximum.
Fix: state the known size: `jnp.where(image == jnp.max(image), size=1)`.
"""

import jax
import jax.numpy as jnp


@jax.jit
def find_peak(image, l, m):
    i, j = jnp.where(image == jnp.max(image))
    return l[i], m[j], image[i, j]


def gaussian_source(l, m, l0, m0, flux, width=0.2):
    return flux * jnp.exp(-((l[:, None] - l0) ** 2 + (m[None, :] - m0) ** 2) / (2 * width**2))


def main():
    l = jnp.linspace(-1.0, 1.0, 21)
    m = jnp.linspace(-0.5, 0.5, 11)
    one = gaussian_source(l, m, 0.3, -0.2, 2.0)
    two = one + gaussian_source(l, m, -0.6, 0.1, 3.0)
    return find_peak(one, l, m), find_peak(two, l, m)
