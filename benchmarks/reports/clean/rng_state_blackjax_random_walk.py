"""A random-walk Rosenbluth-Metropolis-Hastings step (blackjax's `rmh_proposal` /
`additive_step_random_walk`): the step takes the PRNG key as an argument and splits it into
a proposal key and an acceptance key; the sampling loop splits a fresh key for every step.

Source: https://github.com/blackjax-devs/blackjax/blob/main/blackjax/mcmc/random_walk.py
Category: rng-state
Correct: no key is stored on an object or a global; the key is an input of the jitted step
    (`key_proposal, key_accept = jax.random.split(rng_key, 2)`), so each call gets fresh noise.
"""

from typing import Callable, NamedTuple

import jax
from jax import numpy as jnp


class RWState(NamedTuple):
    """State of the RW chain."""

    position: jax.Array
    logdensity: float


class RWInfo(NamedTuple):
    acceptance_rate: float
    is_accepted: bool
    proposal: RWState


def init(position, logdensity_fn: Callable) -> RWState:
    return RWState(position, logdensity_fn(position))


def normal(sigma):
    def propose(rng_key, position):
        return sigma * jax.random.normal(rng_key, jnp.shape(position))

    return propose


def static_binomial_sampling(rng_key, log_p_accept, proposal, new_proposal):
    p_accept = jnp.clip(jnp.exp(log_p_accept), max=1)
    do_accept = jax.random.bernoulli(rng_key, p_accept)
    new_state = jax.tree.map(
        lambda x, y: jnp.where(do_accept, x, y), new_proposal, proposal)
    return new_state, (do_accept, p_accept, None)


def rmh_proposal(logdensity_fn, transition_distribution, compute_acceptance_ratio,
                 sample_proposal=static_binomial_sampling):
    def generate(rng_key, previous_state: RWState):
        key_proposal, key_accept = jax.random.split(rng_key, 2)
        position, _ = previous_state
        new_position = transition_distribution(key_proposal, position)
        proposed_state = RWState(new_position, logdensity_fn(new_position))
        log_p_accept = compute_acceptance_ratio(previous_state, proposed_state)
        accepted_state, info = sample_proposal(
            key_accept, log_p_accept, previous_state, proposed_state)
        do_accept, p_accept, _ = info
        return accepted_state, do_accept, p_accept

    return generate


def additive_step_random_walk(logdensity_fn, random_step):
    def proposal_generator(key_proposal, position):
        return position + random_step(key_proposal, position)

    def compute_acceptance_ratio(prev_state, new_state):
        return new_state.logdensity - prev_state.logdensity

    generate = rmh_proposal(logdensity_fn, proposal_generator, compute_acceptance_ratio)

    def step_fn(rng_key, state):
        new_state, do_accept, p_accept = generate(rng_key, state)
        return new_state, RWInfo(p_accept, do_accept, new_state)

    return step_fn


def main():
    logdensity_fn = lambda x: -0.5 * jnp.sum((x - 1.0) ** 2)
    step = jax.jit(additive_step_random_walk(logdensity_fn, normal(0.5)))
    state = init(jnp.zeros(2), logdensity_fn)
    rng_key = jax.random.PRNGKey(0)
    positions = []
    for _ in range(20):
        rng_key, step_key = jax.random.split(rng_key)
        state, info = step(step_key, state)
        positions.append(state.position)
    return jnp.stack(positions)
