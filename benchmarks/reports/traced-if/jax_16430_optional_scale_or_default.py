"""Scaled dot-product attention whose optional `scale` falls back to 1/sqrt(d) via `scale or ...`.

Source: https://github.com/jax-ml/jax/pull/16430
Fails: `scale = scale or 1.0 / jnp.sqrt(d)` is a boolean test of `scale`; when a scale array is
    passed to the jitted function, `or` converts a tracer to bool: TracerBoolConversionError.
Fix: test for the missing value explicitly: `if scale is None: scale = 1.0 / jnp.sqrt(d)`.
"""

from functools import partial

import jax
import jax.numpy as jnp


class AttentionConfig:
    def __init__(self, num_heads, causal):
        self.num_heads = num_heads
        self.causal = causal


@partial(jax.jit, static_argnames=("config",))
def attention(q, k, v, config, scale=None):
    d = q.shape[-1] // config.num_heads
    scale = scale or 1.0 / jnp.sqrt(d)
    q = q.reshape(q.shape[0], config.num_heads, d)
    k = k.reshape(k.shape[0], config.num_heads, d)
    v = v.reshape(v.shape[0], config.num_heads, d)
    logits = jnp.einsum("qhd,khd->hqk", q, k) * scale
    if config.causal:
        mask = jnp.tril(jnp.ones((q.shape[0], k.shape[0]), dtype=bool))
        logits = jnp.where(mask, logits, -1e9)
    weights = jax.nn.softmax(logits, axis=-1)
    return jnp.einsum("hqk,khd->qhd", weights, v).reshape(q.shape[0], -1)


def main():
    x = jnp.sin(jnp.arange(24, dtype=jnp.float32)).reshape(6, 4)
    causal = AttentionConfig(num_heads=2, causal=True)
    full = AttentionConfig(num_heads=2, causal=False)
    default_scale = attention(x, x, x, causal)
    given_scale = attention(x, x, x, full, scale=jnp.float32(0.25))
    return default_scale, given_scale
