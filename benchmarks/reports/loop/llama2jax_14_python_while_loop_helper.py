"""Top-p sampling generates tokens until every sequence in the batch is finished, via a
`while_loop` helper written as a plain Python loop.

Source: https://github.com/ayaka14732/llama-2-jax/issues/14
Fails: under jit, `while cond_fun(val)` in the helper evaluates `~jnp.all(state.finished)`,
    a tracer, and raises TracerBoolConversionError.
Fix: make the helper what its TODO points at: `jax.lax.while_loop(cond_fun, body_fun, init_val)`.
"""

from functools import partial
from operator import getitem
from typing import NamedTuple

import jax
import jax.nn as nn
import jax.numpy as jnp
import jax.random as rand
from jax import Array


# TODO: https://jax.readthedocs.io/en/latest/_autosummary/jax.lax.while_loop.html
def while_loop(cond_fun, body_fun, init_val):
    val = init_val
    while cond_fun(val):
        val = body_fun(val)
    return val


class Config(NamedTuple):
    d_model: int


class Llama(NamedTuple):
    model: Array  # token embedding, (vocab, d_model)
    lm_head: Array  # (d_model, vocab)


def llama_model(params, seq, attn_mask, *, key, config):
    hidden = params[seq] * attn_mask[..., None]
    return jnp.cumsum(hidden, axis=1) / jnp.sqrt(config.d_model)


class _TopPGenerationState(NamedTuple):
    key: Array
    seq: Array
    attn_mask: Array
    last_positions: Array
    last_tokens: Array
    finished: Array


class TopPGenerationConfig(NamedTuple):
    eos_token_id: int
    max_length: int
    top_p: float


def _loop_body_top_p(params: Llama, state: _TopPGenerationState, model_config: Config, top_p_config: TopPGenerationConfig) -> _TopPGenerationState:
    key, seq, attn_mask, last_positions, last_tokens, finished = state
    eos_token_id, max_length, top_p = top_p_config

    outputs = llama_model(params.model, seq, attn_mask, key=None, config=model_config)
    logits = jax.vmap(getitem)(outputs, last_positions) @ params.lm_head

    batch_size, vocab_size = logits.shape

    indices = jnp.broadcast_to(jnp.arange(vocab_size, dtype=jnp.uint16), (batch_size, vocab_size))
    sorted_logits, sorted_indices = jax.lax.sort_key_val(-logits, indices, is_stable=False)
    sorted_logits = -sorted_logits
    sorted_probs = nn.softmax(sorted_logits)
    cum_probs = jnp.cumsum(sorted_probs, axis=-1)
    threshold_probs = jnp.maximum(cum_probs[:, 0], top_p)  # guarantee that at least one token will not be masked
    masked_sorted_logits = jnp.where(cum_probs >= threshold_probs[:, None], -jnp.inf, sorted_logits)

    current_positions = jnp.where(finished, last_positions, last_positions + 1)

    key, subkey = rand.split(key)
    selected_indices = rand.categorical(subkey, masked_sorted_logits)
    current_tokens = jax.vmap(getitem)(sorted_indices, selected_indices).astype(seq.dtype)
    current_tokens = jnp.where(finished, last_tokens, current_tokens)

    seq = jax.vmap(lambda x, y, z: x.at[y].set(z))(seq, current_positions, current_tokens)
    attn_mask = jax.vmap(lambda x, y: x.at[y].set(True))(attn_mask, current_positions)

    finished |= (current_positions == max_length - 1) | (current_tokens == eos_token_id)

    return _TopPGenerationState(key, seq, attn_mask, current_positions, current_tokens, finished)


@partial(jax.jit, static_argnames=("model_config", "top_p_config"))
def top_p(params: Llama, seq: Array, attn_mask: Array, *, key: Array, model_config: Config, top_p_config: TopPGenerationConfig) -> Array:
    assert 0.0 < top_p_config.top_p < 1.0

    last_positions = jnp.argmin(attn_mask, axis=-1) - 1
    last_tokens = jax.vmap(getitem)(seq, last_positions)
    finished = jnp.all(attn_mask, axis=-1)
    loop_body = lambda state: _loop_body_top_p(params, state, model_config, top_p_config)
    state = _TopPGenerationState(key, seq, attn_mask, last_positions, last_tokens, finished)

    state = while_loop((lambda state: ~jnp.all(state.finished)), loop_body, state)
    return state.seq


def main():
    vocab, d_model, max_length = 6, 4, 8
    params = Llama(model=jnp.sin(jnp.arange(vocab * d_model, dtype=jnp.float32)).reshape(vocab, d_model),
                   lm_head=jnp.cos(jnp.arange(d_model * vocab, dtype=jnp.float32)).reshape(d_model, vocab))
    model_config = Config(d_model=d_model)
    top_p_config = TopPGenerationConfig(eos_token_id=-1, max_length=max_length, top_p=0.9)
    key = rand.PRNGKey(3)

    def prompt(lengths):
        seq = jnp.array([[(3 * i + j) % (vocab - 1) + 1 for j in range(max_length)] for i in range(len(lengths))])
        attn_mask = jnp.arange(max_length)[None, :] < jnp.array(lengths)[:, None]
        return jnp.where(attn_mask, seq, 0), attn_mask

    full = top_p(params, *prompt([8, 8]), key=key, model_config=model_config, top_p_config=top_p_config)
    one_step = top_p(params, *prompt([7, 8]), key=key, model_config=model_config, top_p_config=top_p_config)
    many = top_p(params, *prompt([2, 5]), key=key, model_config=model_config, top_p_config=top_p_config)
    return full, one_step, many
