"""A consistency model grows its number of time discretization steps with the training step,
tracked in `self.current_step` and advanced by the jitted training computation.

Source: https://github.com/bayesflow-org/bayesflow/issues/223
Fails: `self.current_step += 1` runs only while tracing; under jit the schedule is frozen at
    step 0 (every step uses the coarsest discretization) and `current_step` stays at 1,
    silently changing the losses.
Fix: pass the step in and return the next step from the jitted computation; store it back on
    the model at the call site.
"""

import jax
import jax.numpy as jnp


class ConsistencyModel:
    def __init__(self, total_steps, max_time=1.0, eps=0.001, s0=2, s1=30, rho=7.0):
        self.total_steps = total_steps
        self.max_time = max_time
        self.eps = eps
        self.s0 = s0
        self.s1 = s1
        self.rho = rho
        self.current_step = 0

    def _schedule_discretization(self, current_step):
        k = current_step
        return jnp.ceil(jnp.sqrt(k / self.total_steps * ((self.s1 + 1) ** 2 - self.s0 ** 2)
                                 + self.s0 ** 2) - 1) + 1

    def _time(self, i, n):
        lo, hi = self.eps ** (1 / self.rho), self.max_time ** (1 / self.rho)
        return (lo + i / (n - 1) * (hi - lo)) ** self.rho

    def consistency_function(self, params, x, t):
        skip = 1.0 / (1.0 + t)
        return skip * x + (1 - skip) * params["w"] * jnp.tanh(x)

    def compute_metrics(self, params, x, u, z, current_step):
        n = self._schedule_discretization(current_step)
        i = jnp.floor(u * (n - 1))
        t1 = self._time(i, n)
        t2 = self._time(i + 1, n)
        teacher = self.consistency_function(params, x + t2[:, None] * z, t2[:, None])
        student = self.consistency_function(params, x + t1[:, None] * z, t1[:, None])
        loss = jnp.mean((teacher - student) ** 2)
        return loss, n, current_step + 1


def main():
    model = ConsistencyModel(total_steps=6)
    train_step = jax.jit(model.compute_metrics)
    params = {"w": jnp.array(0.5)}
    key = jax.random.PRNGKey(0)
    losses, steps = [], []
    for _ in range(6):
        key, k1, k2, k3 = jax.random.split(key, 4)
        x = jax.random.normal(k1, (8, 2))
        u = jax.random.uniform(k2, (8,))
        z = jax.random.normal(k3, (8, 2))
        loss, n, model.current_step = train_step(params, x, u, z, model.current_step)
        losses.append(loss)
        steps.append(n)
    return losses, steps, model.current_step
