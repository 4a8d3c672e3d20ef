"""A OneHotEncoder's inverse_transform splits the encoded columns back into per-feature blocks.

Source: https://github.com/secretflow/spu/issues/725
Category: python-structure
Fails: under the traced (SPU / jit) computation the fitted `feature_lengths_` are arrays
    (`Array(3)`), so `X[:, current_col:current_col + length]` has traced bounds: IndexError
    ("Array slice indices must have static start/stop/step"); the `jnp.split(X, split_indices)`
    rewrite fails the same way (ConcretizationTypeError). The result is a Python list of blocks
    whose widths are the fitted category counts.
Fix: none with traced lengths: keep the number of categories per feature as Python ints fixed
    before tracing (static metadata of the fitted encoder), or split outside the traced function.
"""

import jax
import jax.numpy as jnp


class OneHotEncoder:
    def fit(self, X):
        self.categories_ = [jnp.unique(X[:, j]) for j in range(X.shape[1])]
        self.feature_lengths_ = [jnp.array(c.shape[0]) for c in self.categories_]
        return self

    def transform(self, X):
        return jnp.concatenate([(X[:, j:j + 1] == c[None, :]).astype(jnp.float32)
                                for j, c in enumerate(self.categories_)], axis=1)


def inverse_transform(X, feature_lengths):
    current_col = 0
    feature_parts = []
    for length in feature_lengths:
        feature_parts.append(X[:, current_col:current_col + length])
        current_col += length
    return feature_parts


def main():
    X = jnp.array([[0.0, 5.0], [1.0, 5.0], [2.0, 7.0], [1.0, 7.0]])
    encoder = OneHotEncoder().fit(X)
    encoded = encoder.transform(X)
    parts = jax.jit(inverse_transform)(encoded, encoder.feature_lengths_)
    decoded = [c[jnp.argmax(p, axis=1)] for c, p in zip(encoder.categories_, parts)]
    return parts, decoded
