"""A small MLP standing in for the haiku NeRF model."""

import jax
import jax.numpy as np


class Model:
    def __init__(self, width=16):
        self.width = width

    def init(self, rng, in_dim=3):
        k1, k2 = jax.random.split(rng)
        return {'w1': 0.5 * jax.random.normal(k1, (in_dim, self.width)),
                'w2': 0.5 * jax.random.normal(k2, (self.width, 4))}

    def apply(self, params, x):
        return np.tanh(x @ params['w1']) @ params['w2']
