"""Time grids for the waveform: uniform, and a size estimate for the adaptive one."""

from functools import partial

import jax
import jax.numpy as jnp

BUCKET_SIZE = 50


def estimate_adaptive_steps(eta, tmin, tmax) -> int:
    """Estimate the number of steps the adaptive grid needs, rounded up to BUCKET_SIZE."""
    eta = jnp.atleast_1d(jnp.asarray(eta, dtype=jnp.float32))
    tmin = jnp.atleast_1d(jnp.asarray(tmin, dtype=jnp.float32))
    tmax = jnp.atleast_1d(jnp.asarray(tmax, dtype=jnp.float32))

    C = (2.0 * jnp.pi / 3.0) * jnp.power(eta / 5.0, 3.0 / 8.0)

    # Uniform region: from tmax to t_thresh=-1 with step C
    N_uniform = jnp.maximum((tmax + 1.0) / C, 0.0)

    # Adaptive region: ODE solution from u_start to u_end = -tmin
    u_start = jnp.maximum(-tmax, 1.0)
    N_adaptive = jnp.maximum(
        (jnp.power(-tmin, 5.0 / 8.0) - jnp.power(u_start, 5.0 / 8.0))
        / (5.0 * C / 8.0),
        0.0,
    )

    # Take max across the batch, add safety margin, round up to nearest BUCKET_SIZE
    N_total = int(jnp.ceil(jnp.max(N_uniform + N_adaptive) * 1.2)) + 20
    N_total = int(jnp.ceil(N_total / BUCKET_SIZE) * BUCKET_SIZE)
    return max(N_total, BUCKET_SIZE)


def estimate_adaptive_steps_from_T(T: float, delta_t: float = 15.0) -> int:
    """Estimate adaptive grid size from observation time and time step only (worst case eta=0.25)."""
    eta_worst = 0.25
    num_steps = T / delta_t
    return estimate_adaptive_steps(eta_worst, -num_steps, 0.0)


@partial(jax.jit, static_argnames=["max_steps"])
def generate_uniform_grid(tmin, tmax, delta_t, max_steps: int = 100):
    """A uniform grid backwards from tmax; points below tmin are masked out and padded with tmin."""
    indices = jnp.arange(max_steps)
    t_raw = tmax - indices * delta_t
    mask = t_raw >= tmin
    grid = jnp.where(mask, t_raw, tmin)
    return jnp.flip(grid), jnp.flip(mask)
