"""Zernike radial polynomials and their r-derivatives, selected by the derivative order `dr`.

Source: https://github.com/PlasmaControl/DESC/pull/998
Fails: `jax.jit(jax.jacrev(zernike_radial))(r, l, m, 0)` passes the derivative order as a traced
    argument, so `if dr == 0: ... elif dr == 1: ...` raises TracerBoolConversionError.
Fix: the derivative order picks code, not data: jit with `static_argnums=3`.
"""

import jax
import jax.numpy as jnp
from jax.scipy.special import gammaln

MAX_TERMS = 4


def _coefficients(l, m):
    m = jnp.abs(m)
    k = jnp.arange(MAX_TERMS)[:, None]
    n_terms = (l - m) // 2
    valid = k <= n_terms
    kk = jnp.where(valid, k, 0)
    log_c = (gammaln(l - kk + 1.0) - gammaln(kk + 1.0)
             - gammaln((l + m) // 2 - kk + 1.0) - gammaln(n_terms - kk + 1.0))
    c = jnp.where(valid, (-1.0) ** kk * jnp.exp(log_c), 0.0)
    return c, l - 2 * kk


def zernike_radial(r, l, m, dr=0):
    c, p = _coefficients(l, m)
    rr = r[..., None, :]
    if dr == 0:
        out = jnp.sum(c * rr ** p, axis=-2)
    elif dr == 1:
        out = jnp.sum(c * p * rr ** jnp.maximum(p - 1, 0), axis=-2)
    elif dr == 2:
        out = jnp.sum(c * p * (p - 1) * rr ** jnp.maximum(p - 2, 0), axis=-2)
    else:
        raise NotImplementedError("Analytic radial derivatives only up to 2nd order.")
    return out


radial = jax.jit(zernike_radial, static_argnums=3)
radial_jac = jax.jit(jax.jacrev(zernike_radial), static_argnums=3)


def main():
    r = jnp.linspace(0.2, 1.0, 3)[:, None]
    l = jnp.array([0, 1, 2, 4])
    m = jnp.array([0, 1, 0, 2])
    values = radial(r, l, m, 0)
    first = radial(r, l, m, 1)
    second = radial(r, l, m, 2)
    jac = radial_jac(r, l, m, 0)
    try:
        radial(r, l, m, 3)
        third = "computed"
    except NotImplementedError as error:
        third = str(error)
    return values, first, second, jac, third
