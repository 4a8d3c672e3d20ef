"""An entropic OT loss runs Sinkhorn and only trusts the cost when the solver converged.

Source: https://github.com/ott-jax/ott/issues/3
Fails: the loss is jitted, so `out.errors[-1] < 1 and out.converged` tests traced solver
    outputs and raises TracerBoolConversionError (ConcretizationTypeError).
Fix: select the result with `jnp.where((out.errors[-1] < 1) & out.converged, out.reg_ot_cost, jnp.nan)`.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp


class SinkhornOutput(NamedTuple):
    f: jnp.ndarray
    g: jnp.ndarray
    errors: jnp.ndarray
    reg_ot_cost: jnp.ndarray
    converged: jnp.ndarray


class PointCloud:
    def __init__(self, x, y, epsilon):
        self.cost_matrix = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
        self.epsilon = epsilon


def sinkhorn(geom, a, b, threshold=1e-3, max_iterations=20):
    cost, eps = geom.cost_matrix, geom.epsilon

    def body(state):
        it, f, g, errors = state
        f = eps * jnp.log(a) - eps * jax.nn.logsumexp((g[None, :] - cost) / eps, axis=1)
        g = eps * jnp.log(b) - eps * jax.nn.logsumexp((f[:, None] - cost) / eps, axis=0)
        plan = jnp.exp((f[:, None] + g[None, :] - cost) / eps)
        err = jnp.sum(jnp.abs(plan.sum(axis=1) - a))
        return it + 1, f, g, errors.at[it].set(err)

    def cond(state):
        it, _, _, errors = state
        last = jnp.where(it > 0, errors[jnp.maximum(it - 1, 0)], jnp.inf)
        return (it < max_iterations) & (last > threshold)

    errors = -jnp.ones(max_iterations)
    _, f, g, errors = jax.lax.while_loop(cond, body, (0, jnp.zeros_like(a), jnp.zeros_like(b), errors))
    reg_ot_cost = jnp.sum(f * a) + jnp.sum(g * b)
    converged = jnp.any((errors >= 0) & (errors <= threshold))
    return SinkhornOutput(f, g, errors, reg_ot_cost, converged)


def sinkhorn_loss(x, y, epsilon):
    a = jnp.ones(x.shape[0]) / x.shape[0]
    b = jnp.ones(y.shape[0]) / y.shape[0]
    out = sinkhorn(PointCloud(x, y, epsilon), a, b)
    if out.errors[-1] < 1 and out.converged:
        return out.reg_ot_cost
    return jnp.nan


def main():
    x = jnp.linspace(0.0, 1.0, 10).reshape(5, 2)
    y = jnp.linspace(0.2, 1.4, 8).reshape(4, 2)
    loss = jax.jit(sinkhorn_loss)
    converged = loss(x, y, 1.0)
    not_converged = loss(x, 3.0 * y, 0.01)
    return converged, not_converged
