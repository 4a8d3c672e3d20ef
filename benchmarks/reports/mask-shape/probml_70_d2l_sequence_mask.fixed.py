"""d2l's multi-head attention (JAX port) masks padded keys with `X.at[~mask].set(value)`.

Source: https://github.com/probml/probml-notebooks/pull/70
Fails: `sequence_mask` writes through a boolean mask built from `valid_lens` inside the jitted
    attention forward, so `X.at[~mask].set(-1e6)` raises NonConcreteBooleanIndexError.
Fix: write with a three-argument where: `jnp.where(mask, X, value)`.
"""

import jax
import jax.numpy as jnp


def sequence_mask(X, valid_len, value=0):
    """Mask irrelevant entries in sequences."""
    maxlen = X.shape[1]
    mask = jnp.arange((maxlen), dtype=jnp.float32)[None, :] < valid_len[:, None]
    X = jnp.where(mask, X, value)
    return X


def masked_softmax(X, valid_lens):
    """Perform softmax operation by masking elements on the last axis."""
    # `X`: 3D tensor, `valid_lens`: 1D or 2D tensor
    if valid_lens is None:
        return jax.nn.softmax(X, axis=-1)
    else:
        shape = X.shape
        if valid_lens.ndim == 1:
            valid_lens = jnp.repeat(valid_lens, shape[1])
        else:
            valid_lens = valid_lens.reshape(-1)
        # On the last axis, replace masked elements with a very large negative
        # value, whose exponentiation outputs 0
        X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
        return jax.nn.softmax(X.reshape(shape), axis=-1)


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.transpose(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.transpose(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


def dot_product_attention(queries, keys, values, valid_lens):
    d = queries.shape[-1]
    scores = jnp.matmul(queries, keys.swapaxes(1, 2)) / jnp.sqrt(d)
    attention_weights = masked_softmax(scores, valid_lens)
    return jnp.matmul(attention_weights, values), attention_weights


class MultiHeadAttention:
    def __init__(self, num_hiddens, num_heads, key):
        self.num_heads = num_heads
        kq, kk, kv, ko = jax.random.split(key, 4)
        init = jax.nn.initializers.lecun_normal()
        self.params = {
            "W_q": init(kq, (num_hiddens, num_hiddens)),
            "W_k": init(kk, (num_hiddens, num_hiddens)),
            "W_v": init(kv, (num_hiddens, num_hiddens)),
            "W_o": init(ko, (num_hiddens, num_hiddens)),
        }

    def apply(self, params, queries, keys, values, valid_lens):
        queries = transpose_qkv(queries @ params["W_q"], self.num_heads)
        keys = transpose_qkv(keys @ params["W_k"], self.num_heads)
        values = transpose_qkv(values @ params["W_v"], self.num_heads)
        if valid_lens is not None:
            valid_lens = jnp.repeat(valid_lens, repeats=self.num_heads, axis=0)
        output, attention_weights = dot_product_attention(queries, keys, values, valid_lens)
        output_concat = transpose_output(output, self.num_heads)
        return output_concat @ params["W_o"], attention_weights


def main():
    num_hiddens, num_heads = 8, 2
    attention = MultiHeadAttention(num_hiddens, num_heads, jax.random.PRNGKey(0))
    forward = jax.jit(attention.apply)
    batch_size, num_queries, num_kvpairs = 2, 4, 6
    X = jax.random.normal(jax.random.PRNGKey(1), (batch_size, num_queries, num_hiddens))
    Y = jax.random.normal(jax.random.PRNGKey(2), (batch_size, num_kvpairs, num_hiddens))
    unmasked = forward(attention.params, X, Y, Y, None)
    per_sequence = forward(attention.params, X, Y, Y, jnp.array([3, 2]))
    per_query = forward(attention.params, X, Y, Y, jnp.array([[1, 2, 3, 6], [6, 5, 4, 1]]))
    return unmasked, per_sequence, per_query
