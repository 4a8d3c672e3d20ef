"""Indexing into a batched Categorical distribution maps the index onto the batch shape.

Source: https://github.com/google-deepmind/distrax/issues/291
Fails: `to_batch_shape_index` builds the index with `[x[index] for x in np.indices(batch_shape)]`;
    under jit `index` is a tracer and indexing the NumPy grid with it raises
    TracerArrayConversionError.
Fix: build the grid with `jnp.indices(batch_shape)`, a JAX array that a traced index can select from.
"""

import jax
import jax.numpy as jnp


def to_batch_shape_index(batch_shape, index):
    """Turns an index into the distribution into an index into its batch shape."""
    new_index = [x[index] for x in jnp.indices(batch_shape)]
    return tuple(new_index)


class Categorical:
    def __init__(self, logits):
        self.logits = jax.nn.log_softmax(logits, axis=-1)

    @property
    def batch_shape(self):
        return self.logits.shape[:-1]

    @property
    def probs(self):
        return jnp.exp(self.logits)

    def entropy(self):
        return -jnp.sum(self.probs * self.logits, axis=-1)

    def __getitem__(self, index):
        index = to_batch_shape_index(self.batch_shape, index)
        return Categorical(logits=self.logits[index])


def foo(logits):
    d = Categorical(logits=logits)
    mask = jnp.arange(logits.shape[0])
    return d[mask].entropy()


def pick_rows(logits, rows):
    d = Categorical(logits=logits)
    return d[rows].entropy()


def main():
    logits = jnp.arange(27.0).reshape(3, 3, 3) / jnp.array([1.0, 4.0, 9.0])
    rows = jnp.array([2, 0])
    return jax.jit(foo)(logits), jax.jit(pick_rows)(logits, rows), jax.jit(pick_rows)(logits, rows[:1])
