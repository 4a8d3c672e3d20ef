"""A `Dropout` module owns an `Rngs` stream (a key plus a call counter) and draws a fresh mask
on every call; the forward pass is wrapped in `jax.jit`.

Source: https://github.com/google/flax/issues/4539
Fails: the stream's counter is advanced by a Python side effect that runs only while tracing,
    so the jitted forward pass applies the same dropout mask on every call ("jitting a
    dropout module yields a constant value").
Fix: pass the stream's counter into the jitted function and return the advanced counter,
    storing it back on the stream at the call site.
"""

import jax
import jax.numpy as jnp


class RngStream:
    def __init__(self, seed):
        self.key = jax.random.key(seed)
        self.count = 0

    def __call__(self, count):
        key = jax.random.fold_in(self.key, count)
        return key, count + 1


class Rngs:
    def __init__(self, seed):
        self.dropout = RngStream(seed)


class Dropout:
    def __init__(self, rate, *, rngs):
        self.rate = rate
        self.rngs = rngs

    def __call__(self, x, count):
        keep_prob = 1.0 - self.rate
        key, count = self.rngs.dropout(count)
        mask = jax.random.bernoulli(key, keep_prob, x.shape)
        return jnp.where(mask, x / keep_prob, 0.0), count


module = Dropout(0.5, rngs=Rngs(0))


@jax.jit
def forward(x, count):
    return module(x, count)


def main():
    x = jnp.ones((3, 5))
    outs = []
    for _ in range(3):
        y, module.rngs.dropout.count = forward(x, module.rngs.dropout.count)
        outs.append(y)
    return outs
