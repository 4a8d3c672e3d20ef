"""A policy decodes action tokens in a lax.while_loop, sampling with a temperature or greedily.

Source: https://github.com/Physical-Intelligence/openpi/pull/550
Fails: `sample_actions` is jitted with `temperature` passed in as a keyword argument, so inside
    the decoding `step` the test `if temperature > 0.0:` is on a tracer and raises
    TracerBoolConversionError (any non-zero temperature broke the jitted policy).
Fix: choose between the two samplers with `jax.lax.cond(temperature > 0.0, ...)`.
"""

import jax
import jax.numpy as jnp

EOS_TOKEN = 1
VOCAB = 8


class TinyDecoder:
    def __init__(self, embed, out):
        self.embed = embed
        self.out = out

    def llm(self, token, hidden):
        hidden = jnp.tanh(hidden + self.embed[token])
        return hidden @ self.out, hidden


class Pi0Fast:
    def __init__(self, decoder):
        self.decoder = decoder

    def sample_actions(self, rng, prefix_hidden, *, max_decoding_steps=6, temperature=0.0):
        last_logit = prefix_hidden @ self.decoder.out
        output_tokens = jnp.zeros((prefix_hidden.shape[0], max_decoding_steps), dtype=jnp.int32)

        def step(carry):
            rng, last_logit, output_tokens, hidden, _, step = carry
            rng, rng_step = jax.random.split(rng)
            token = jax.lax.cond(
                temperature > 0.0,
                lambda _: jax.random.categorical(rng_step, last_logit / temperature, axis=-1),
                lambda _: jnp.argmax(last_logit, axis=-1),
                operand=None,
            )
            output_tokens = output_tokens.at[:, step].set(token)
            all_eos = jnp.all(token == EOS_TOKEN)
            last_logit, hidden = self.decoder.llm(token, hidden)
            return rng, last_logit, output_tokens, hidden, all_eos, step + 1

        def cond(carry):
            _, _, _, _, all_eos, step = carry
            return (~all_eos) & (step < max_decoding_steps)

        _, _, output_tokens, _, _, _ = jax.lax.while_loop(
            cond, step, (rng, last_logit, output_tokens, prefix_hidden, jnp.array(False), 0)
        )
        return output_tokens


def main():
    embed = jnp.sin(jnp.arange(VOCAB * 4, dtype=jnp.float32).reshape(VOCAB, 4))
    out = jnp.cos(jnp.arange(4 * VOCAB, dtype=jnp.float32).reshape(4, VOCAB))
    model = Pi0Fast(TinyDecoder(embed, out))
    sample = jax.jit(model.sample_actions, static_argnames=("max_decoding_steps",))
    prefix = jnp.linspace(-1.0, 1.0, 8).reshape(2, 4)
    rng = jax.random.PRNGKey(0)
    greedy = sample(rng, prefix, temperature=0.0)
    hot = sample(rng, prefix, temperature=1.5)
    warm = sample(jax.random.PRNGKey(3), prefix, temperature=0.7)
    return greedy, hot, warm
