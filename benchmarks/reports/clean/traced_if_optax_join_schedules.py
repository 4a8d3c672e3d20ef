"""Optax's join_schedules: switch between learning-rate schedules at step boundaries.

Source: https://github.com/google-deepmind/optax/blob/main/optax/schedules/_join.py
Category: traced-if
Correct under jit: the traced step picks a schedule with `jnp.where(step < boundary, ...)`, and
the only Python `if`s (in `polynomial_schedule`) test static configuration, not the step.
"""

from typing import Callable, Sequence

import jax
import jax.numpy as jnp

Schedule = Callable[[jax.typing.ArrayLike], jax.typing.ArrayLike]


def polynomial_schedule(init_value, end_value, power, transition_steps, transition_begin=0) -> Schedule:
    if transition_steps <= 0:
        return lambda count: init_value
    if transition_begin < 0:
        transition_begin = 0

    def schedule(count):
        count = jnp.clip(count - transition_begin, 0, transition_steps)
        frac = 1 - count / transition_steps
        return (init_value - end_value) * (frac ** power) + end_value

    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0) -> Schedule:
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    def schedule(step: jax.typing.ArrayLike) -> jax.typing.ArrayLike:
        output = schedules[0](step)
        for boundary, schedule in zip(boundaries, schedules[1:]):
            output = jnp.where(step < boundary, output, schedule(step - boundary))
        return output

    return schedule


def main():
    warmup_then_decay = join_schedules(
        [linear_schedule(0.0, 0.1, 5), linear_schedule(0.1, 0.01, 10), linear_schedule(0.01, 0.01, 0)],
        boundaries=[5, 15],
    )
    lr_at = jax.jit(warmup_then_decay)
    return [lr_at(step) for step in (0, 3, 5, 9, 15, 40)]
