"""An adaptive Metropolis-within-Gibbs sampler widens or narrows its jump size around 44% acceptance.

Source: https://github.com/mlysy/pfjax/issues/3
Fails: `mwg_adapt` branches with `if accept_rate < targ_acc:` on the running acceptance rate,
    a traced value in the jitted MCMC update: TracerBoolConversionError.
Fix: choose the sign of the log-scale change with `jnp.where(accept_rate < targ_acc, -delta, delta)`.
"""

import jax
import jax.numpy as jnp
from jax import random


def mwg_adapt(rw_sd, accept_rate, n_iter, adapt_max=.01, adapt_rate=.5):
    targ_acc = 0.44  # target acceptance rate
    delta = jnp.power(n_iter, -adapt_rate)
    delta = jnp.minimum(delta, adapt_max)
    return jnp.exp(jnp.log(rw_sd) + jnp.where(accept_rate < targ_acc, -delta, delta))


def logpost(param):
    return -0.5 * jnp.sum((param - 1.0) ** 2 / 0.25)


def adaptive_mwg_update(key, param_curr, rw_sd, n_accept, n_iter):
    key, k_jump, k_acc = random.split(key, num=3)
    param_prop = param_curr + rw_sd * random.normal(k_jump)
    lrate = logpost(param_prop) - logpost(param_curr)
    acc = random.bernoulli(k_acc, p=jnp.minimum(1.0, jnp.exp(lrate)))
    param_next = jnp.where(acc, param_prop, param_curr)
    n_accept = n_accept + acc
    rw_sd = mwg_adapt(rw_sd, n_accept / n_iter, n_iter)
    return key, param_next, rw_sd, n_accept


update = jax.jit(adaptive_mwg_update)


def main():
    key = random.PRNGKey(1)
    param, rw_sd, n_accept = jnp.array(0.0), jnp.array(3.0), jnp.array(0.0)
    trace = []
    for n_iter in range(1, 9):
        key, param, rw_sd, n_accept = update(key, param, rw_sd, n_accept, n_iter)
        trace.append((param, rw_sd))
    adapt = jax.jit(mwg_adapt)
    return trace, adapt(1.0, 0.1, 50.0), adapt(1.0, 0.9, 50.0)
