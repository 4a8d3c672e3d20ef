"""An ODE solve whose step budget `max_steps` is passed through a jitted wrapper.

Source: https://github.com/patrick-kidger/diffrax/issues/379
Fails: the jitted `solve` takes `max_steps` as an argument, so the solver's bounded loop hits
    `if max_steps == 1:` with a tracer: TracerBoolConversionError.
Fix: mark the step budget static: `jax.jit(solve, static_argnames=("max_steps",))`.
"""

import jax
import jax.numpy as jnp


def checkpointed_while_loop(cond_fun, body_fun, init_val, max_steps):
    if max_steps == 1:
        return jax.lax.cond(cond_fun(init_val), body_fun, lambda val: val, init_val)

    def cond(carry):
        step, val = carry
        return (step < max_steps) & cond_fun(val)

    def body(carry):
        step, val = carry
        return step + 1, body_fun(val)

    _, final = jax.lax.while_loop(cond, body, (0, init_val))
    return final


def diffeqsolve(vector_field, t0, t1, dt0, y0, args, max_steps=16):
    def cond_fun(state):
        t, _, _ = state
        return t < t1

    def body_fun(state):
        t, y, num_steps = state
        dt = jnp.minimum(dt0, t1 - t)
        return t + dt, y + dt * vector_field(t, y, args), num_steps + 1

    return checkpointed_while_loop(cond_fun, body_fun, (t0, y0, 0), max_steps)


def vector_field(t, y, args):
    return -args * y


def solve(y0, t1, max_steps):
    return diffeqsolve(vector_field, 0.0, t1, 0.1, y0, 2.0, max_steps=max_steps)


solve_jit = jax.jit(solve, static_argnames=("max_steps",))


def main():
    y0 = jnp.array([1.0, -0.5])
    return (
        solve_jit(y0, 0.0, 16),
        solve_jit(y0, 1.0, 1),
        solve_jit(y0, 0.55, 16),
        solve_jit(y0, 1.0, 3),
    )
