"""A Metropolis-Hastings sampler for a pairwise binary model flips one spin at a time.

Source: https://github.com/jax-ml/jax/issues/575
Fails: the jitted `sample` accepts a flip with `if dE < 0:` and `if rand < np.exp(-dE):`, both
    on traced energies: TracerBoolConversionError (then "Abstract value passed to `bool`").
Fix: compute the acceptance as an array, `accept = (dE < 0) | (rand[0] < np.exp(-dE))`, select the
    state with `np.where`, and advance the key only where the original split it.
"""

import itertools as it
from functools import partial

import jax.numpy as np
from jax import jit, random

N = 4

marg_1 = lambda i, x: x[i]
marg_2 = lambda i, j, x: x[i] * x[j]

marg_1s = [jit(partial(marg_1, i)) for i in range(N)]
marg_2s = [jit(partial(marg_2, i, j)) for i, j in list(it.combinations(range(N), r=2))]
funcs = marg_1s + marg_2s


@jit
def calc_e(factors, word):
    return np.sum(np.array([factor * func(word) for factor, func in zip(factors, funcs)]))


@jit
def sample(factors, N=N, seed=0, n_samps=3):
    key = random.PRNGKey(seed)
    key, subkey = random.split(key)

    state = random.randint(subkey, minval=0, maxval=2, shape=(N,))
    all_states = []

    for _ in range(n_samps):
        all_states.append(state)
        for i in range(N):
            # flip sign
            state_flipped = state.at[i].set(1 - state[i])
            # calc energy difference
            dE = calc_e(factors, state_flipped) - calc_e(factors, state)
            next_key, subkey = random.split(key)
            rand = random.uniform(subkey, shape=(1,))
            accept = (dE < 0) | (rand[0] < np.exp(-dE))
            state = np.where(accept, state_flipped, state)
            key = np.where(dE < 0, key, next_key)
    return all_states


def main():
    factors = np.linspace(-1.0, 1.0, len(funcs))
    cold = sample(factors)
    hot = sample(0.1 * factors)
    return cold, hot
