"""An epidemic ODE model reports step statistics when the adaptive solve hits its step ceiling.

Source: https://github.com/CDCgov/DynODE/issues/447
Fails: `simulate` solves with `throw=False` and then tests `if not is_okay(solution.result):`;
    inside the jitted inference likelihood the result code is traced, so the test raises
    TracerBoolConversionError.
Fix: branch with `jax.lax.cond(is_okay(solution.result), ...)` and report with `jax.debug.print`.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True

SUCCESSFUL, MAX_STEPS_REACHED = 0, 1


def is_okay(result):
    return result == SUCCESSFUL


class Solution(NamedTuple):
    ys: jnp.ndarray
    result: jnp.ndarray
    stats: dict


def diffeqsolve(vector_field, t0, t1, dt0, y0, args, max_steps, rtol=1e-3, throw=True):
    def cond(state):
        t, _, _, _, _, steps = state
        return (t < t1) & (steps < max_steps)

    def body(state):
        t, y, dt, n_acc, n_rej, steps = state
        dt = jnp.minimum(dt, t1 - t)
        k1 = vector_field(t, y, args)
        euler = y + dt * k1
        heun = y + 0.5 * dt * (k1 + vector_field(t + dt, euler, args))
        err = jnp.max(jnp.abs(heun - euler) / (rtol + rtol * jnp.abs(y)))
        accept = err <= 1.0
        t = jnp.where(accept, t + dt, t)
        y = jnp.where(accept, heun, y)
        dt = dt * jnp.clip(0.9 / jnp.sqrt(jnp.maximum(err, 1e-6)), 0.2, 5.0)
        return t, y, dt, n_acc + accept, n_rej + (1 - accept), steps + 1

    t, y, _, n_acc, n_rej, _ = jax.lax.while_loop(cond, body, (t0, y0, dt0, 0, 0, 0))
    result = jnp.where(t < t1, MAX_STEPS_REACHED, SUCCESSFUL)
    return Solution(y, result, {"num_accepted_steps": n_acc, "num_rejected_steps": n_rej})


def sir(t, y, args):
    beta, gamma = args
    s, i, r = y
    return jnp.array([-beta * s * i, beta * s * i - gamma * i, gamma * i])


def simulate(params, y0, t1, max_steps):
    solution = diffeqsolve(sir, 0.0, t1, 0.5, y0, params, max_steps=max_steps, throw=False)
    if not is_okay(solution.result):
        print(f"ODE solve failed: {solution.stats['num_accepted_steps']} accepted, "
              f"{solution.stats['num_rejected_steps']} rejected steps")
    return solution.ys


def log_likelihood(params, observed, max_steps):
    final = simulate(params, jnp.array([0.99, 0.01, 0.0]), 20.0, max_steps)
    return -0.5 * jnp.sum((final - observed) ** 2 / 0.01)


def main():
    observed = jnp.array([0.2, 0.05, 0.75])
    likelihood = jax.jit(log_likelihood, static_argnames=("max_steps",))
    enough = likelihood(jnp.array([0.8, 0.2]), observed, 400)
    too_few = likelihood(jnp.array([2.5, 0.3]), observed, 8)
    return enough, too_few
