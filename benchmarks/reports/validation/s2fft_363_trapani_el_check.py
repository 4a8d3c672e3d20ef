"""A Wigner-d recursion checks its inputs: band-limit `L`, the table shape, and the degree `el`.

Source: https://github.com/astro-informatics/s2fft/pull/363
Fails: the jitted `compute_full` (static `L`) receives the harmonic degree `el` as a traced
    argument, so `assert 0 <= el < L` in the input check raises TracerBoolConversionError.
Fix: keep the checks on static values (`L`, `dl.shape`) inside the jitted function and move the
    `el` range check out of jit, to the caller that loops over concrete degrees.
"""

from functools import partial
from warnings import warn

import jax
import jax.numpy as jnp


def check_el_L(dl, L, el):
    if L <= 0:
        raise ValueError(f"Band-limit L={L} must be positive.")
    if dl.shape != (2 * L - 1, 2 * L - 1):
        raise ValueError(f"dl must have shape (2L - 1, 2L - 1), got {dl.shape}.")
    if L > 1024:
        warn("Trapani recursion may be unstable for L > 1024.")
    assert 0 <= el < L, f"Harmonic degree el={el} must satisfy 0 <= el < L={L}."


@partial(jax.jit, static_argnums=(1,))
def compute_full(dl, L, el):
    check_el_L(dl, L, el)
    m = jnp.arange(-(L - 1), L)
    inside = jnp.abs(m) <= el
    angle = 0.5 * jnp.pi * (m[:, None] - m[None, :]) / (el + 1)
    return jnp.where(inside[:, None] & inside[None, :], dl + jnp.cos(angle), dl)


def dl_table(L, els, dl=None):
    if dl is None:
        dl = jnp.zeros((2 * L - 1, 2 * L - 1))
    out = []
    for el in els:
        dl = compute_full(dl, L, el)
        out.append(dl[L - 1])
    return out


def main():
    results = [dl_table(3, []), dl_table(3, [0]), dl_table(4, [0, 1, 2, 3])]
    for L, els, dl in [(3, [0, 3], None), (3, [0], jnp.zeros((4, 4)))]:
        try:
            results.append(dl_table(L, els, dl))
        except (AssertionError, ValueError):
            results.append("rejected: bad el or L")
    return results
