"""Minipyro SVI: `step` jit-compiles the ELBO's value-and-grad of a closure built on every call.

Source: https://github.com/pyro-ppl/numpyro/issues/2
Fails: `step` defines `loss_fn` over its `*args` and wraps it in `jax.jit(...)` each time, so
    the jitted function is new on every step and compiles every step (correct values).
    Caching that closure naively gives stale results (it captured the first step's args).
Fix: jit once, in `__init__`, a loss that takes the params, the key and the data as
    arguments, and call it from `step`.
"""

import jax
import jax.numpy as jnp

MAX_COMPILES = {"loss_fn": 1}


def normal_log_prob(x, loc, scale):
    return -0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * jnp.log(2 * jnp.pi)


def model(z, data):
    return normal_log_prob(z, 0.0, 10.0) + jnp.sum(normal_log_prob(data, z, 1.0))


def guide(params, rng_key):
    scale = jnp.exp(params["q_log_scale"])
    z = params["q_loc"] + scale * jax.random.normal(rng_key)
    return z, normal_log_prob(z, params["q_loc"], scale)


def elbo(model, guide, params, rng_key, *args):
    z, guide_log_prob = guide(params, rng_key)
    return -(model(z, *args) - guide_log_prob)


class SVI:
    def __init__(self, model, guide, step_size, loss):
        self.model = model
        self.guide = guide
        self.step_size = step_size
        self.loss = loss

    def step(self, params, rng_key, *args):
        def loss_fn(params):
            return self.loss(self.model, self.guide, params, rng_key, *args)

        loss_and_grads = jax.jit(jax.value_and_grad(loss_fn))
        loss, grads = loss_and_grads(params)
        params = jax.tree_util.tree_map(lambda p, g: p - self.step_size * g, params, grads)
        return params, loss


def train(svi, num_steps):
    data = jnp.array([0.5, 1.5, 2.0, 1.0])
    params = {"q_loc": jnp.array(0.0), "q_log_scale": jnp.array(0.0)}
    losses = []
    for i in range(num_steps):
        params, loss = svi.step(params, jax.random.PRNGKey(i), data)
        losses.append(loss)
    return params, jnp.array(losses)


def main():
    svi = SVI(model, guide, 0.01, elbo)
    return train(svi, 0), train(svi, 1), train(svi, 6)
