"""Optax's polynomial, piecewise-constant and cosine-decay learning-rate schedules, jitted.

Source: https://github.com/google-deepmind/optax/blob/main/optax/schedules/_schedule.py
Category: builtins
Correct: the builtins (`sorted`, `all`, `float`, comparisons) only ever see static Python config
    (`transition_steps`, the boundaries dict, an `int` count); the traced count is clamped with
    `jnp.clip` / `jnp.minimum` / `jnp.maximum`, never with `min`/`max`/`float`.
"""

import logging

import jax
import jax.numpy as jnp


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0):
    if transition_steps <= 0:
        logging.info(
            'A polynomial schedule was set with a non-positive `transition_steps` '
            'value; this results in a constant schedule with value `init_value`.'
        )
        return lambda count: init_value

    if transition_begin < 0:
        logging.info(
            'A polynomial schedule was set with a negative `transition_begin` '
            'value; this will result in `transition_begin` falling back to `0`.'
        )
        transition_begin = 0

    def schedule(count):
        init_val = jnp.asarray(init_value)
        end_val = jnp.asarray(end_value)
        count = jnp.clip(count - transition_begin, 0, transition_steps)
        frac = 1 - count / transition_steps
        return (init_val - end_val) * (frac**power) + end_val

    return schedule


def piecewise_constant_schedule(init_value, boundaries_and_scales=None):
    if boundaries_and_scales is not None:
        all_positive = all(scale >= 0.0 for scale in boundaries_and_scales.values())
        if not all_positive:
            raise ValueError('`piecewise_constant_schedule` expects non-negative scale factors')

    def schedule(count):
        v = init_value
        if boundaries_and_scales is not None:
            for threshold, scale in sorted(boundaries_and_scales.items()):
                indicator = jnp.maximum(0.0, jnp.sign(threshold - count))
                v = v * indicator + (1 - indicator) * scale * v
        return v

    return schedule


def cosine_decay_schedule(init_value, decay_steps, alpha=0.0, exponent=1.0):
    if not decay_steps > 0:
        raise ValueError(
            'The cosine_decay_schedule requires positive decay_steps, got'
            f' {decay_steps=}.'
        )

    def schedule(count):
        # Avoid int -> int32 overflow in jitted code.
        nonlocal decay_steps
        decay_steps, count = jax.tree.map(
            lambda x: float(x) if isinstance(x, int) else x, (decay_steps, count)
        )

        count = jnp.minimum(count, decay_steps)
        cosine_decay = 0.5 * (1 + jnp.cos(jnp.pi * count / decay_steps))
        decayed = (1 - alpha) * cosine_decay**exponent + alpha
        return init_value * decayed

    return schedule


def main():
    poly = jax.jit(polynomial_schedule(1.0, 0.01, power=2, transition_steps=100, transition_begin=5))
    constant = jax.jit(polynomial_schedule(0.3, 0.01, power=2, transition_steps=0))
    piecewise = jax.jit(piecewise_constant_schedule(1.0, {100: 0.1, 200: 0.01}))
    cosine = jax.jit(cosine_decay_schedule(0.5, decay_steps=50, alpha=0.1))
    counts = [jnp.array(c) for c in (0, 5, 6, 104, 150, 250)]
    return (
        [poly(c) for c in counts],
        [constant(c) for c in counts],
        [piecewise(c) for c in counts],
        [cosine(c) for c in counts],
    )
