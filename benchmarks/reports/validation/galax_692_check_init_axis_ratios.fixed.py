"""A triaxial NFW potential (an Equinox module) checks its axis ratios in `__check_init__`.

Source: https://github.com/GalacticDynamics/galax/pull/692
Fails: the potential is built inside a jitted function, so `__check_init__`'s
    `if self.a2 > self.a1 or self.a3 > self.a2: raise ValueError(...)` converts traced comparisons
    to bool (Python `or`): TracerBoolConversionError.
Fix: make the check a runtime error with `eqx.error_if` on the combined traced predicate, and
    keep the checked value in the module (a check whose result is discarded is compiled away).
"""

import equinox as eqx
import jax
import jax.numpy as jnp

G = 4.498502151469554e-12


class LeeSutoTriaxialNFWPotential(eqx.Module):
    m: jax.Array
    r_s: jax.Array
    a1: jax.Array
    a2: jax.Array
    a3: jax.Array

    def __init__(self, m, r_s, a1, a2, a3):
        msg = "a1 must be greater than a2 and a2 must be greater than a3."
        self.m = m
        self.r_s = r_s
        self.a1 = eqx.error_if(a1, (a2 > a1) | (a3 > a2), msg)
        self.a2 = a2
        self.a3 = a3

    def potential(self, xyz, t):
        x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
        r = jnp.sqrt((x / self.a1) ** 2 + (y / self.a2) ** 2 + (z / self.a3) ** 2)
        return -G * self.m * jnp.log1p(r / self.r_s) / r


def potential_at(params, xyz):
    pot = LeeSutoTriaxialNFWPotential(**params)
    return pot.potential(xyz, 0.0)


def main():
    evaluate = jax.jit(potential_at)
    xyz = jnp.array([[1.0, 2.0, 3.0], [8.0, 0.5, -1.0]])
    base = {"m": jnp.array(1e12), "r_s": jnp.array(15.0)}
    results = [evaluate(dict(base, a1=jnp.array(1.0), a2=jnp.array(0.8), a3=jnp.array(0.6)), xyz)]
    for a1, a2, a3 in [(0.8, 1.0, 0.6), (1.0, 0.6, 0.8)]:
        try:
            results.append(evaluate(dict(base, a1=jnp.array(a1), a2=jnp.array(a2), a3=jnp.array(a3)), xyz))
        except (ValueError, RuntimeError):
            results.append("rejected: axis ratios out of order")
    return results
