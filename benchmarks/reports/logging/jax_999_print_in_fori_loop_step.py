"""A training episode runs a `lax.fori_loop` whose `step` prints the iteration and the loop
state (an optimizer pytree) for print-debugging.

Source: https://github.com/jax-ml/jax/issues/999
Fails: `step` is traced, so `print(i, loop_state)` shows
    `Traced<ShapedArray(int32[])>... LoopState(optimizer=_Optimizer(iteration=Traced...` once,
    as in the report, instead of the values at every iteration.
Fix: `jax.debug.print("{} {}", i, loop_state)` prints the runtime values each iteration.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

EXPECT_STDOUT = True


class _Optimizer(NamedTuple):
    iteration: jax.Array
    params: jax.Array


class LoopState(NamedTuple):
    optimizer: _Optimizer
    foobar: jax.Array


TARGET = jnp.array([1.0, -2.0])


def step(i, loop_state):
    print(i, loop_state)
    # do stuff...
    optimizer, foobar = loop_state
    grad = 2.0 * (optimizer.params - TARGET)
    new_thingy = _Optimizer(optimizer.iteration + 1, optimizer.params - 0.25 * grad)
    new_foobar = foobar + jnp.sum(grad ** 2)
    return LoopState(new_thingy, new_foobar)


@jax.jit
def run_episode(init_thingy, init_foobar, episode_length):
    init_val = LoopState(init_thingy, init_foobar)
    return lax.fori_loop(0, episode_length, step, init_val)


def main():
    init_thingy = _Optimizer(jnp.int32(0), jnp.array([0.0, 0.0]))
    init_foobar = jnp.float32(0.0)
    return [run_episode(init_thingy, init_foobar, n) for n in (0, 1, 4)]
