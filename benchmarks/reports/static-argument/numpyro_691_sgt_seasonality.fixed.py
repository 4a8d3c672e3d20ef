"""Seasonal, global-trend (SGT) time-series model from the NumPyro tutorial, with its model arguments jitted.

Source: https://github.com/pyro-ppl/numpyro/issues/691
Fails: with the model arguments jitted (`jit_model_args=True`), `seasonality` is a
    tracer, so `y[:seasonality]` raises IndexError (slice bounds must be static) and
    `jnp.arange(1, N + future)` needs a concrete `future` too.
Fix: the season length and forecast horizon set shapes, so they are static:
    `jax.jit(sgt, static_argnames=("seasonality", "future"))`.
"""

import jax
import jax.numpy as jnp
from jax.lax import scan


def sgt(y, seasonality, future=0):
    # the priors, fixed at representative values so the model is a deterministic density
    coef_trend, pow_trend, pow_season = 0.1, 0.5, 0.2
    level_sm, s_sm, sigma = 0.4, 0.3, 1.5
    init_s = y[:seasonality] * 0.3

    N = y.shape[0]

    def transition_fn(carry, t):
        level, s, moving_sum = carry
        season = s[0] * level**pow_season
        exp_val = level + coef_trend * level**pow_trend + season
        exp_val = jnp.clip(exp_val, 0)
        # use expected vale when forecasting
        y_t = jnp.where(t >= N, exp_val, y[t])

        moving_sum = moving_sum + y[t] - jnp.where(t >= seasonality, y[t - seasonality], 0.0)
        level_p = jnp.where(t >= seasonality, moving_sum / seasonality, y_t - season)
        level = level_sm * level_p + (1 - level_sm) * level
        level = jnp.clip(level, 0)

        new_s = (s_sm * (y_t - level) / season + (1 - s_sm)) * s[0]
        # repeat s when forecasting
        new_s = jnp.where(t >= N, s[0], new_s)
        s = jnp.concatenate([s[1:], new_s[None]], axis=0)
        return (level, s, moving_sum), exp_val

    level_init = y[0]
    s_init = jnp.concatenate([init_s[1:], init_s[:1]], axis=0)
    moving_sum = level_init
    _, exp_vals = scan(transition_fn, (level_init, s_init, moving_sum), jnp.arange(1, N + future))
    log_lik = -0.5 * jnp.sum(((y[1:] - exp_vals[: N - 1]) / sigma) ** 2)
    return log_lik, exp_vals[N - 1 :]


log_density = jax.jit(sgt, static_argnames=("seasonality", "future"))


def main():
    t = jnp.arange(20.0)
    y = 10.0 + 3.0 * jnp.sin(2 * jnp.pi * t / 4) + 0.2 * t
    return (log_density(y, 4), log_density(y, seasonality=3, future=2),
            log_density(y[:6], seasonality=1, future=4))
