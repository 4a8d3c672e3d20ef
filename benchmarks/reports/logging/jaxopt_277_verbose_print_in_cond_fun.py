"""A custom Levenberg-Marquardt solver built on `lax.while_loop` prints the error from its
`_cond_fun` when `verbose` is set.

Source: https://github.com/google/jaxopt/issues/277
Fails: the solver's `run` is jitted and `_cond_fun` is traced, so
    `print(f"error: {state.error:.4f}")` shows a tracer once instead of the error at each
    iteration.
Fix: `jax.debug.print("error: {:.4f}", state.error)` under the same static `if self.verbose:`.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True


class LevenbergMarquardtState(NamedTuple):
    iter_num: jax.Array
    damping_factor: jax.Array
    error: jax.Array


class CustomLevenBergMarquardt:

    def __init__(self, residual_fun, maxiter=30) -> None:
        self.residual_fun = residual_fun
        self.jacobian_fun = jax.jacobian(residual_fun)
        self.maxiter = maxiter
        self.damping_parameter = 1e-6
        self.tol = 1e-3
        self.verbose = True

    def _cond_fun(self, inputs):
        _, state = inputs[0]
        if self.verbose:
            print(f"error: {state.error:.4f}")
        return state.error > self.tol

    def _body_fun(self, inputs):
        (params, state), (args, kwargs) = inputs
        return self.update(params, state, *args, **kwargs), (args, kwargs)

    def init_state(self, init_params, *args, **kwargs):
        residual = self.residual_fun(init_params, *args, **kwargs)
        jacobian = self.jacobian_fun(init_params, *args, **kwargs)
        jtj = jnp.dot(jacobian.T, jacobian)
        damping_factor = self.damping_parameter * jnp.max(jnp.diag(jtj))
        return LevenbergMarquardtState(
            iter_num=jnp.asarray(0),
            damping_factor=damping_factor,
            error=jnp.sqrt(jnp.sum(residual ** 2)))

    def update(self, params, state, *args, **kwargs):
        residual = self.residual_fun(params, *args, **kwargs)
        jacobian = self.jacobian_fun(params, *args, **kwargs)
        jtj = jnp.dot(jacobian.T, jacobian)
        gradient = jnp.dot(jacobian.T, residual)
        delta_params = jnp.linalg.solve(jtj + state.damping_factor * jnp.eye(jtj.shape[0]), gradient)
        params = params - delta_params
        residual = self.residual_fun(params, *args, **kwargs)
        error = jnp.sqrt(jnp.sum(residual ** 2))
        return params, LevenbergMarquardtState(state.iter_num + 1, state.damping_factor, error)

    def run(self, init_params, *args, **kwargs):
        state = self.init_state(init_params, *args, **kwargs)
        (params, state), _ = jax.lax.while_loop(
            self._cond_fun, self._body_fun, ((init_params, state), (args, kwargs)))
        return params, state


def residual_fun(params, xs, ys):
    a, b = params
    return a * jnp.exp(b * xs) - ys


def main():
    solver = CustomLevenBergMarquardt(residual_fun)
    run = jax.jit(solver.run)
    xs = jnp.linspace(0.0, 1.0, 5)
    ys = 2.0 * jnp.exp(-1.0 * xs)
    solved = run(jnp.array([2.0, -1.0]), xs, ys)  # already at the solution: the body never runs
    near = run(jnp.array([2.01, -1.0]), xs, ys)  # one step
    far = run(jnp.array([1.0, 0.0]), xs, ys)  # several steps
    return solved, near, far
