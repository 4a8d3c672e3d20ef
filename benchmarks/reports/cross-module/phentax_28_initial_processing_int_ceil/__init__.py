"""An IMRPhenomTHM-style waveform model sizes its time grid in `initial_processing`, jitted with the waveform.

Source: https://github.com/asantini29/phentax/pull/28
Fails: calling the model inside `jax.jit` traces `initial_processing`: `int(jnp.ceil(T / delta_t))`
    stages `jnp.ceil` on the (static) observation time, so `int()` meets a tracer, and
    `grid.estimate_adaptive_steps_from_T` in the other module does the same
    (`int(jnp.ceil(jnp.max(...)))`): ConcretizationTypeError. The spin bound
    `assert jnp.all(jnp.abs(chi1z) <= 1.0)` on the traced spins fails the same way.
Fix: compute the grid sizes from the Python floats with `math.ceil` / NumPy (they depend only on
    user settings), and check the spins with `eqx.error_if` instead of `assert`.
"""

import jax
import jax.numpy as jnp

from .waveform import IMRPhenomTHM


def main():
    results = []
    for coarse_grain in (False, True):
        model = IMRPhenomTHM(T=600.0, delta_t=15.0, coarse_grain=coarse_grain)
        waveform = jax.jit(model.compute_polarizations)
        for m1, m2, chi1z, chi2z in ((30.0, 20.0, 0.1, -0.3), (10.0, 10.0, 0.0, 0.0), (50.0, 5.0, 0.9, 0.5)):
            results.append(waveform(jnp.float32(m1), jnp.float32(m2), jnp.float32(chi1z), jnp.float32(chi2z)))
        results.append(model.max_adaptive_steps)
    return results
