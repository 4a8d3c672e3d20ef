"""Greedy sampling from a small attention model: the jitted logits function sees the context grow by one token per step.

Source: https://github.com/jax-ml/jax/issues/837
Fails: the context passed to the jitted `next_token_logits` has a new length on every
    step, so jit compiles it once per length (correct tokens, one compile per step).
Fix: keep one static shape: write the context into a fixed `MAX_LEN` buffer, pass the
    current length as an array, and mask the positions past it.
"""

import jax
import jax.numpy as jnp

MAX_COMPILES = {"next_token_logits": 1}
MAX_LEN = 16


@jax.jit
def next_token_logits(params, context):
    h = params["embed"][context]
    scores = h @ h[-1] / jnp.sqrt(h.shape[-1])
    weights = jax.nn.softmax(scores)
    summary = weights @ h + h[-1]
    return summary @ params["unembed"]


def sample(params, prompt, num_tokens):
    context = prompt
    for _ in range(num_tokens):
        logits = next_token_logits(params, context)
        token = jnp.argmax(logits)
        context = jnp.concatenate([context, token[None].astype(context.dtype)])
    return context


def main():
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"embed": jax.random.normal(k1, (11, 8)), "unembed": jax.random.normal(k2, (8, 11))}
    return (sample(params, jnp.array([3]), 0), sample(params, jnp.array([3]), 1),
            sample(params, jnp.array([1, 4, 7]), 8))
