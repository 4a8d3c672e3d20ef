"""A SciPy-style CubicSpline validates that its knots are finite and strictly increasing.

Source: https://github.com/f0uriest/interpax/issues/96
Fails: `jit(CubicSpline)(x, y)` runs `prepare_input`, whose `errorif(not jnp.all(jnp.isfinite(x)), ...)`
    and `errorif(jnp.any(dx <= 0), ...)` test traced knots with Python `not`/`if`:
    TracerBoolConversionError.
Fix: keep the static (shape) checks in Python and make the value checks runtime errors with
    `eqx.error_if`, threading the checked `x` into the spline.
"""

import equinox as eqx
import jax
import jax.numpy as jnp


def errorif(cond, err=ValueError, msg=""):
    if cond:
        raise err(msg)


def prepare_input(x, y, check=True):
    x, y = jnp.asarray(x, dtype=float), jnp.asarray(y, dtype=float)
    if check:
        errorif(x.ndim != 1, ValueError, "`x` must be 1-dimensional.")
        errorif(x.shape[0] < 2, ValueError, "`x` must contain at least 2 elements.")
        errorif(x.shape[0] != y.shape[0], ValueError, "`x` and `y` must have the same length.")
        x = eqx.error_if(x, ~jnp.all(jnp.isfinite(x)), "`x` must contain only finite values.")
        dx = jnp.diff(x)
        x = eqx.error_if(x, jnp.any(dx <= 0), "`x` must be strictly increasing sequence.")
    dx = jnp.diff(x)
    return x, dx, y


class CubicSpline(eqx.Module):
    x: jax.Array
    c: jax.Array

    def __init__(self, x, y, check=True):
        x, dx, y = prepare_input(x, y, check=check)
        n = x.shape[0]
        slope = jnp.diff(y) / dx
        # natural spline: second derivatives m with m[0] = m[-1] = 0
        A = jnp.zeros((n, n)).at[0, 0].set(1.0).at[-1, -1].set(1.0)
        rows = jnp.arange(1, n - 1)
        A = A.at[rows, rows - 1].set(dx[:-1]).at[rows, rows].set(2 * (dx[:-1] + dx[1:]))
        A = A.at[rows, rows + 1].set(dx[1:])
        rhs = jnp.zeros(n).at[rows].set(6 * (slope[1:] - slope[:-1]))
        m = jnp.linalg.solve(A, rhs)
        c3 = (m[1:] - m[:-1]) / (6 * dx)
        c2 = m[:-1] / 2
        c1 = slope - dx * (2 * m[:-1] + m[1:]) / 6
        self.x = x
        self.c = jnp.stack([c3, c2, c1, y[:-1]])

    def __call__(self, xq):
        i = jnp.clip(jnp.searchsorted(self.x, xq) - 1, 0, self.x.shape[0] - 2)
        t = xq - self.x[i]
        c3, c2, c1, c0 = self.c[:, i]
        return ((c3 * t + c2) * t + c1) * t + c0


def main():
    make_spline = jax.jit(CubicSpline)
    xq = jnp.linspace(0.0, 3.0, 7)
    results = [make_spline(jnp.array([0.0, 1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 4.0, 9.0]))(xq)]
    for x in (jnp.array([0.0, jnp.inf, 2.0, 3.0]), jnp.array([0.0, 2.0, 1.0, 3.0])):
        try:
            results.append(make_spline(x, jnp.array([0.0, 1.0, 4.0, 9.0]))(xq))
        except (ValueError, RuntimeError):
            results.append("rejected: bad knots")
    return results
