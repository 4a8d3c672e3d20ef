"""A fixed-grid ODE solver scans Runge-Kutta steps and refines a step whose error is too large.

Source: https://github.com/PennyLaneAI/pennylane/pull/3616
Fails: inside the `lax.scan` body the test `if mean_err_ratio > 1.:` is on a traced error
    estimate and raises ConcretizationTypeError (TracerBoolConversionError) under jit.
Fix: pick the refined or the plain step with `jax.lax.cond(mean_err_ratio > 1., ...)`.
"""

import jax
import jax.numpy as jnp


def abs2(x):
    return jnp.real(x) ** 2 + jnp.imag(x) ** 2


def runge_kutta_step(func_, y0, f0, t0, dt):
    k2 = func_(y0 + dt * f0, t0 + dt)
    y1 = y0 + 0.5 * dt * (f0 + k2)
    y1_error = 0.5 * dt * (k2 - f0)
    f1 = func_(y1, t0 + dt)
    return y1, f1, y1_error


def odeint(func, y0, t, atol=1e-4, rtol=1e-4):
    func_ = lambda y, t: func(y, t)

    def scan_fun(carry, t1):
        y0, f0, t0 = carry
        dt = t1 - t0
        y1, f1, y1_error = runge_kutta_step(func_, y0, f0, t0, dt)

        err_tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
        err_ratio = y1_error / err_tol.astype(y1_error.dtype)
        mean_err_ratio = jnp.sqrt(jnp.mean(abs2(err_ratio)))
        if mean_err_ratio > 1.:
            half, f_half, _ = runge_kutta_step(func_, y0, f0, t0, dt / 2)
            y1, f1, _ = runge_kutta_step(func_, half, f_half, t0 + dt / 2, dt / 2)

        return (y1, f1, t1), y1

    f0 = func_(y0, t[0])
    _, ys = jax.lax.scan(scan_fun, (y0, f0, t[0]), t[1:])
    return jnp.concatenate([y0[None], ys])


def decay(y, t):
    return jnp.array([-2.0 * y[0] * t, y[0] - 0.5 * y[1]])


def main():
    ts = jnp.array([0.0, 0.01, 0.02, 0.05, 0.5, 1.5, 1.6])
    y0 = jnp.array([1.0, 0.0])
    solve = jax.jit(odeint, static_argnames=("func",))
    return solve(decay, y0, ts), solve(decay, 2.0 * y0, ts[:2])
