"""A pitcher "stuff" projection model averages its aging curve over the distinct ages present
in the data: `ages_pred = jnp.unique(age_idx)`, inside the jitted prediction.

Source: https://github.com/jax-ml/jax/issues/10231
Fails: `jnp.unique` has a data-dependent output size; under jit it raises
    (NonConcreteBooleanIndexError in the report, ConcretizationTypeError now).
Fix: give `jnp.unique` a static size (the number of age levels) and an out-of-range
    `fill_value`, gather with `mode="fill"`, and average with `where=` over the real entries.
"""

import jax
import jax.numpy as jnp


def aging_curve(params, ages):
    return params["intercept"] + params["age_effect"][ages]


@jax.jit
def project(params, age_idx, velo):
    n_ages = params["age_effect"].shape[0]
    ages_pred = jnp.unique(age_idx)
    curve = aging_curve(params, ages_pred)
    league_avg = jnp.mean(curve)
    stuff = params["intercept"] + params["age_effect"][age_idx] + params["beta_velo"] * velo
    return stuff - league_avg, league_avg, n_ages


def main():
    params = {
        "intercept": jnp.array(100.0),
        "age_effect": jnp.array([-3.0, -1.0, 0.5, 1.5, 1.0, 0.0, -1.0, -2.5]),
        "beta_velo": jnp.array(0.8),
    }
    velo = jnp.array([94.0, 91.5, 96.2, 88.0, 92.3, 95.1])
    young = project(params, jnp.array([0, 1, 1, 2, 3, 0]), velo)
    all_ages = project(params, jnp.array([7, 6, 5, 4, 3, 2, 1, 0])[:6], velo)
    one_age = project(params, jnp.array([4, 4, 4, 4, 4, 4]), velo)
    return young, all_ages, one_age
