# A script reads settings of its config module inside a jitted step, and the config module
# changes them between calls (`global` in a setter): each becomes a parameter of the step,
# passed at every call (a string setting as a static one), so each call sees the current value.
import jax
import jax.numpy as jnp

import config


@jax.jit
def _step(w, g):
    if config.MODE == "train":
        return w - config.LEARNING_RATE * g
    return w


def train(w, g):
    trace = []
    for lr in (0.1, 0.01):
        config.set_lr(lr)
        w = _step(w, g)
        trace.append(w)
    config.evaluate()
    trace.append(_step(w, g))
    return trace


def calls(m):
    return m.train(jnp.ones(2), jnp.array([1.0, -1.0]))


SAMPLES = [calls]
# output
# A script reads settings of its config module inside a jitted step, and the config module
# changes them between calls (`global` in a setter): each becomes a parameter of the step,
# passed at every call (a string setting as a static one), so each call sees the current value.
from functools import partial

import jax
import jax.numpy as jnp

import config


@partial(jax.jit, static_argnames=("MODE",))
def _step(w, g, *, MODE, LEARNING_RATE):
    if MODE == "train":
        return w - LEARNING_RATE * g
    return w


def train(w, g):
    trace = []
    for lr in (0.1, 0.01):
        config.set_lr(lr)
        w = _step(w, g, MODE=config.MODE, LEARNING_RATE=config.LEARNING_RATE)
        trace.append(w)
    config.evaluate()
    trace.append(_step(w, g, MODE=config.MODE, LEARNING_RATE=config.LEARNING_RATE))
    return trace


def calls(m):
    return m.train(jnp.ones(2), jnp.array([1.0, -1.0]))


SAMPLES = [calls]
