"""A rudimentary fixed-step ODE solver computes its number of steps from a static time span
and maximum step (`jnp.array(delta_t // max_dt).astype(int)`) and scans over `jnp.arange(steps)`;
the simulation function is jitted.

Source: https://github.com/jax-ml/jax/issues/5017
Fails: `steps` is built with `jnp` from Python floats, so under jit it is a tracer and
    `jnp.arange(steps)` raises ConcretizationTypeError.
Fix: compute the step count with Python on the static span: `steps = int(delta_t // max_dt)`.
"""

import jax
import jax.numpy as jnp
from jax.lax import scan


def jaxfixedsolve(rhs, t_span, y0, max_dt):
    delta_t = t_span[1] - t_span[0]
    steps = int(delta_t // max_dt)
    h = delta_t / steps

    def scan_func(carry, step):
        eval_time = t_span[0] + (h * step)
        return (carry + rhs(eval_time, carry) * h, None)

    yf = scan(scan_func, y0, jnp.arange(steps))[0]
    return yf


def sim_function(coeff):
    def rhs(t, y):
        return coeff * y

    return jaxfixedsolve(rhs, t_span=[0, 0.5], y0=jnp.array(1., dtype=float), max_dt=0.1)


def driven_sim(coeff):
    def rhs(t, y):
        return coeff * jnp.cos(3.0 * t) * y

    return jaxfixedsolve(rhs, t_span=[0.0, 2.0], y0=jnp.array([1.0, 0.5]), max_dt=0.05)


def main():
    sim = jax.jit(sim_function)
    driven = jax.jit(driven_sim)
    return sim(1.0), sim(-2.0), jax.grad(sim)(0.3), driven(0.7)
