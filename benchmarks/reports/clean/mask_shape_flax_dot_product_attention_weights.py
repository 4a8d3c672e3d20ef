"""Dot-product attention weights with a boolean attention mask (flax's
`dot_product_attention_weights`), inside a jitted forward pass.

Source: https://github.com/google/flax/blob/main/flax/linen/attention.py
Category: mask-shape
Correct: the traced mask never indexes anything; masked logits are replaced with a static-shape
    select, `jnp.where(mask, attn_weights, big_neg)`, so every shape stays fixed under jit.
"""

import jax
import jax.numpy as jnp


def dot_product_attention_weights(query, key, bias=None, mask=None):
    """Computes dot-product attention weights given query and key."""
    dtype = query.dtype

    assert query.ndim == key.ndim, 'q, k must have same rank.'
    assert query.shape[:-3] == key.shape[:-3], 'q, k batch dims must match.'
    assert query.shape[-2] == key.shape[-2], 'q, k num_heads must match.'
    assert query.shape[-1] == key.shape[-1], 'q, k depths must match.'

    # calculate attention matrix
    depth = query.shape[-1]
    query = query / jnp.sqrt(depth).astype(dtype)
    # attn weight shape is (batch..., num_heads, q_length, kv_length)
    attn_weights = jnp.einsum('...qhd,...khd->...hqk', query, key)

    # apply attention bias: masking, dropout, proximity bias, etc.
    if bias is not None:
        attn_weights = attn_weights + bias
    # apply attention mask
    if mask is not None:
        big_neg = jnp.finfo(dtype).min
        attn_weights = jnp.where(mask, attn_weights, big_neg)

    # normalize the attention weights
    attn_weights = jax.nn.softmax(attn_weights).astype(dtype)
    return attn_weights


def make_attention_mask(query_input, key_input):
    """Padding mask: attend only where both query and key tokens are non-padding."""
    mask = jnp.multiply(jnp.expand_dims(query_input, axis=-1), jnp.expand_dims(key_input, axis=-2))
    mask = jnp.expand_dims(mask, axis=-3)
    return mask.astype(jnp.bool_)


@jax.jit
def attend(query, key, value, tokens):
    mask = make_attention_mask(tokens > 0, tokens > 0)
    weights = dot_product_attention_weights(query, key, mask=mask)
    return jnp.einsum('...hqk,...khd->...qhd', weights, value)


def main():
    kq, kk, kv = jax.random.split(jax.random.PRNGKey(0), 3)
    query = jax.random.normal(kq, (2, 5, 2, 4))
    key = jax.random.normal(kk, (2, 5, 2, 4))
    value = jax.random.normal(kv, (2, 5, 2, 4))
    tokens = jnp.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2]])
    return attend(query, key, value, tokens), dot_product_attention_weights(query, key)
