"""Predicates for lax.cond built with Python `and` and `not` inside jitted functions.

Source: https://github.com/jax-ml/jax/issues/3761
Fails: `jax.lax.cond(x < 0 and y < 0, ...)` and `jax.lax.cond(not x < 0, ...)` convert a traced
    comparison to a Python bool before lax.cond sees it: TracerBoolConversionError.
Fix: combine the traced predicates with array operators: `(x < 0) & (y < 0)` and `~(x < 0)`.
"""

import jax
from jax import jit


@jit
def true_fn(x):
    return x - 5000.0


@jit
def false_fn(x):
    return x + 100.0


@jit
def cond_test_1(x, y):
    return jax.lax.cond(x < 0, true_fn, false_fn, x)


@jit
def cond_test_2(x, y):
    return jax.lax.cond((x < 0) & (y < 0), true_fn, false_fn, x)


@jit
def cond_test_3(x, y):
    return jax.lax.cond(~(x < 0), true_fn, false_fn, x)


def main():
    out = []
    for x, y in [(0.3, 0.1), (-0.3, 0.1), (-0.3, -0.1), (0.3, -0.1)]:
        out.append((cond_test_1(x, y), cond_test_2(x, y), cond_test_3(x, y)))
    return out
