"""A quasi-Newton solver optionally stops its while_loop when the line search fails.

Source: https://github.com/google/jaxopt/pull/350
Fails: the loop condition mixes the static flag with the traced state in Python boolean logic,
    `keep_going and (not self.stop_if_linesearch_fails or not state.failed_linesearch)`;
    inside lax.while_loop (and jit) that is `bool()` of a tracer: ConcretizationTypeError
    ("Abstract tracer value encountered where concrete value is expected").
Fix: combine with array logic: `keep_going & jnp.logical_or(not self.stop_if_linesearch_fails,
    ~state.failed_linesearch)`.
"""

import dataclasses
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp


class LbfgsState(NamedTuple):
    iter_num: jnp.ndarray
    value: jnp.ndarray
    error: jnp.ndarray
    stepsize: jnp.ndarray
    failed_linesearch: jnp.ndarray


@dataclasses.dataclass(eq=False)
class LBFGS:
    fun: Callable
    maxiter: int = 5
    tol: float = 1e-3
    maxls: int = 3
    stop_if_linesearch_fails: bool = False

    def _linesearch(self, params, value, grad, stepsize):
        def body(carry):
            i, step, _ = carry
            return i + 1, step * 0.5, self.fun(params - step * 0.5 * grad)

        def cond(carry):
            i, step, new_value = carry
            return (i < self.maxls) & (new_value > value - 0.25 * step * jnp.sum(grad ** 2))

        i, step, new_value = jax.lax.while_loop(cond, body, (0, stepsize, self.fun(params - stepsize * grad)))
        failed = new_value > value - 0.25 * step * jnp.sum(grad ** 2)
        return step, failed

    def update(self, params, state):
        value, grad = jax.value_and_grad(self.fun)(params)
        stepsize, failed = self._linesearch(params, value, grad, state.stepsize)
        params = params - stepsize * grad
        new_grad = jax.grad(self.fun)(params)
        return params, LbfgsState(state.iter_num + 1, self.fun(params), jnp.linalg.norm(new_grad),
                                  stepsize * 2.0, failed)

    def _cond_fun(self, inputs):
        _, state = inputs
        keep_going = (state.iter_num < self.maxiter) & (state.error > self.tol)
        return keep_going & jnp.logical_or(not self.stop_if_linesearch_fails, ~state.failed_linesearch)

    def run(self, init_params, stepsize=1.0):
        state = LbfgsState(jnp.asarray(0), self.fun(init_params), jnp.linalg.norm(jax.grad(self.fun)(init_params)),
                           jnp.asarray(stepsize), jnp.asarray(False))
        return jax.lax.while_loop(self._cond_fun, lambda inputs: self.update(*inputs), (init_params, state))


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def quadratic(x):
    return jnp.sum((x - 1.0) ** 2)


def main():
    x0 = jnp.array([-1.2, 1.0, 0.5])
    stopping = LBFGS(fun=rosenbrock, stop_if_linesearch_fails=True)
    patient = LBFGS(fun=rosenbrock, stop_if_linesearch_fails=False)
    easy = LBFGS(fun=quadratic, stop_if_linesearch_fails=True)
    return (
        jax.jit(stopping.run)(x0, 0.05),
        jax.jit(patient.run)(x0, 0.05),
        jax.jit(easy.run)(x0, 0.5),
        jax.jit(easy.run)(jnp.ones(3), 0.5),
    )
