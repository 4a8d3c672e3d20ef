"""Class-weighted cross-entropy whose per-class weights are a Python list, indexed by the label.

Source: https://github.com/jax-ml/jax/pull/5853
Fails: `CLASS_WEIGHTS[label]` (the PR's `jax.jit(lambda i: [1, 2, 3][i])`) indexes a Python list
    with a traced integer; the list calls `__index__` on the tracer, which raises
    TracerIntegerConversionError under jit.
Fix: convert the list to a JAX array before indexing: `jnp.asarray(CLASS_WEIGHTS)[label]`.
"""

import jax
import jax.numpy as jnp

CLASS_WEIGHTS = [1.0, 2.0, 0.5]

pick = jax.jit(lambda i: [1, 2, 3][i])


def weighted_cross_entropy(logits, label):
    weight = CLASS_WEIGHTS[label]
    return -weight * jax.nn.log_softmax(logits)[label]


loss = jax.jit(weighted_cross_entropy)


def main():
    logits = jnp.array([0.2, 1.5, -0.3])
    return pick(0), pick(2), loss(logits, 0), loss(logits, 1), loss(logits, 2)
