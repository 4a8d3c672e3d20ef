"""A jitted sampler draws `N` random indices with `random.randint(key, (N,), ...)`.

Source: https://github.com/jax-ml/jax/issues/648
Fails: `N` is a traced argument, so it cannot be a shape: `random.randint(key, (N,), ...)`
    raises TypeError (shapes must be concrete integers) under jit.
Fix: the number of samples sets a shape, so make it static: `static_argnums=(2,)`
    (one compile per distinct `N`).
"""

from functools import partial

import jax.numpy as np
from jax import jit, random


@partial(jit, static_argnums=(2,))
def sample(key, weights, N):
    idx = random.randint(key, (N,), 0, weights.shape[0])
    draws = weights[idx]
    return draws, np.mean(draws)


def main():
    key = random.PRNGKey(0)
    weights = np.linspace(0.0, 1.0, 10)
    return sample(key, weights, 1), sample(key, weights, 5), sample(random.PRNGKey(1), weights, 20)
