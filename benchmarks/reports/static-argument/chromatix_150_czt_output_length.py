"""Chirp Z-transform (Bluestein) along one axis, `m` output samples, called through `jax.jit`.

Source: https://github.com/chromatix-team/chromatix/pull/150
Fails: under `jax.jit(czt)` the output length `m` is a tracer, so
    `jnp.arange(m + n - 1)` raises ConcretizationTypeError (and `y[..., n - 1 : n + m - 1]`
    would need static bounds too).
Fix: `m` and `axis` set shapes, so they are static: `jax.jit(czt, static_argnames=("m", "axis"))`,
    as the pull request's test does.
"""

import jax
import jax.numpy as jnp


def czt(x, m, a, w, axis=-1):
    # compute modulation terms
    n = x.shape[axis]
    n_czt = m + n - 1
    k = jnp.arange(n_czt)
    wk2 = w ** (k**2 / 2)
    Awk2 = a ** -k[:n] * wk2[:n]
    Fwk2 = jnp.fft.fft(1 / jnp.hstack((wk2[n - 1 : 0 : -1], wk2[:m])), n_czt)
    wk2 = wk2[:m]

    # perform CZT
    x = jnp.moveaxis(x, axis, -1)
    y = jnp.fft.ifft(jnp.fft.fft(x * Awk2, n_czt, axis=-1) * Fwk2, axis=-1)
    y = y[..., n - 1 : n + m - 1] * wk2
    y = jnp.moveaxis(y, -1, axis)
    return y


czt_jit = jax.jit(czt)


def main():
    x = jnp.cos(jnp.arange(8.0) / 3.0)
    w = jnp.exp(-2j * jnp.pi / 8)
    a = jnp.exp(0j)
    same = czt_jit(x, m=8, a=a, w=w)
    zoomed = czt_jit(x, m=5, a=jnp.exp(0.3j), w=jnp.exp(-0.2j))
    two_d = czt_jit(jnp.stack([x, 2 * x]), m=3, a=a, w=w, axis=-1)
    return [(y.real, y.imag) for y in (same, zoomed, two_d)]
