"""An optimization objective (aspect ratio of an equilibrium) jits its `compute` method with
`self` static and reads its `target` and `weight` attributes, which the user changes between
optimization runs.

Source: https://github.com/PlasmaControl/DESC/pull/310
Fails: `self` is static, so `self.target` and `self.weight` are baked in at the first trace;
    changing them on the objective does not retrace and `compute` keeps the old values,
    silently.
Fix: pass `target` and `weight` to the jitted `compute` as a `constants` argument.
"""

from functools import partial

import jax
import jax.numpy as jnp


class _Objective:
    def __init__(self, target=0.0, weight=1.0, name=""):
        self.target = target
        self.weight = weight
        self.name = name

    def compute_scalar(self, *args):
        return jnp.sum(self.compute(*args) ** 2) / 2


class AspectRatio(_Objective):
    """Aspect ratio R0 / a of a surface given by its Fourier coefficients."""

    @partial(jax.jit, static_argnums=(0,))
    def compute(self, R_lmn, Z_lmn):
        R0 = R_lmn[0]
        a = jnp.sqrt(jnp.sum(R_lmn[1:] ** 2 + Z_lmn ** 2) / 2)
        AR = R0 / a
        return (AR - self.target) * self.weight


def main():
    R_lmn = jnp.array([10.0, 1.0, 0.1])
    Z_lmn = jnp.array([1.0, 0.05])
    objective = AspectRatio(target=5.0, weight=1.0)
    first = objective.compute(R_lmn, Z_lmn), objective.compute_scalar(R_lmn, Z_lmn)
    objective.target = 8.0
    objective.weight = 10.0
    second = objective.compute(R_lmn, Z_lmn), objective.compute_scalar(R_lmn, Z_lmn)
    return first, second
