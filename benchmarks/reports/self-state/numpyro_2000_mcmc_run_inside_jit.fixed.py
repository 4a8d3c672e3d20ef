"""An `MCMC` driver runs a random-walk Metropolis chain and keeps the chain's last state on
`self`, so that a later `run` continues where the previous one stopped; `run` is called from
inside a jitted function and then again.

Source: https://github.com/pyro-ppl/numpyro/issues/2000
Fails: under jit, `self._last_state` is set to a tracer; the second jitted call replays the
    cached trace from the initial state (the chain does not continue), and the eager `run`
    afterwards reads the leaked tracer and raises UnexpectedTracerError.
Fix: make the chain state explicit: `run` takes the state to start from and returns the
    last state, and the caller threads it from one run to the next.
"""

import jax
import jax.numpy as jnp


def potential_fn(z, data):
    return 0.5 * jnp.sum((data - z) ** 2) + 0.5 * z ** 2


class MCMC:
    def __init__(self, potential_fn, num_samples, step_size=0.5):
        self.potential_fn = potential_fn
        self.num_samples = num_samples
        self.step_size = step_size

    def _sample_one(self, data):
        def body(state, key):
            z, pe = state
            key_prop, key_acc = jax.random.split(key)
            z_new = z + self.step_size * jax.random.normal(key_prop)
            pe_new = self.potential_fn(z_new, data)
            accept = jnp.log(jax.random.uniform(key_acc)) < pe - pe_new
            state = (jnp.where(accept, z_new, z), jnp.where(accept, pe_new, pe))
            return state, state[0]
        return body

    def init_state(self, data, init_params=0.0):
        z = jnp.asarray(init_params, dtype=jnp.float32)
        return (z, self.potential_fn(z, data))

    def run(self, rng_key, data, init_state):
        keys = jax.random.split(rng_key, self.num_samples)
        return jax.lax.scan(self._sample_one(data), init_state, keys)


def main():
    data = jnp.array([1.0, 1.5, 0.5, 2.0])
    mcmc = MCMC(potential_fn, num_samples=50)

    @jax.jit
    def get_samples(rng_key, state):
        return mcmc.run(rng_key, data, state)

    state = mcmc.init_state(data)
    state, first = get_samples(jax.random.PRNGKey(0), state)
    state, second = get_samples(jax.random.PRNGKey(1), state)
    state, third = mcmc.run(jax.random.PRNGKey(2), data, state)
    return first.mean(), second.mean(), third.mean(), second[0], third[0]
