"""A Sinkhorn output's `converged` property checks the error history for NaNs and the last error.

Source: https://github.com/ott-jax/ott/pull/384
Fails: the property reads `not jnp.any(jnp.isnan(self.errors))`; when the output is built in a
    jitted solve, `not` on a traced array raises TracerBoolConversionError.
Fix: negate with `jnp.logical_not(jnp.any(jnp.isnan(self.errors)))`.
"""

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp


class SinkhornOutput(NamedTuple):
    errors: Optional[jnp.ndarray] = None
    reg_ot_cost: Optional[jnp.ndarray] = None
    threshold: float = 1e-3

    @property
    def converged(self) -> bool:
        if self.errors is None:
            return False
        return jnp.logical_and(
            not jnp.any(jnp.isnan(self.errors)), self.errors[-1] < self.threshold
        )


def run_sinkhorn(scale, decay, n_iters=6):
    steps = jnp.arange(n_iters, dtype=jnp.float32)
    errors = scale * jnp.exp(-decay * steps)
    out = SinkhornOutput(errors=errors, reg_ot_cost=jnp.sum(errors))
    return out.converged, out.reg_ot_cost


def main():
    solve = jax.jit(run_sinkhorn)
    fast = solve(1.0, 2.0)
    slow = solve(1.0, 0.1)
    broken = solve(jnp.nan, 2.0)
    never_run = SinkhornOutput().converged
    return fast, slow, broken, never_run
