"""An epidemic simulation wraps its `lax.scan` in a jitted helper defined inside the public function.

Source: https://github.com/jax-ml/jax/issues/2251
Fails: `_pandemic_scan` is decorated with `jit` inside `pandemic_scan`, so every call
    creates a new jitted function with an empty cache: it recompiles on every call
    (correct values, ~1000x slower per call in the report).
Fix: define the jitted helper once at module level and call it from `pandemic_scan`.
"""

import functools
from collections import namedtuple

import jax.numpy as np
from jax import jit, lax

MAX_COMPILES = {"_pandemic_scan": 1}

InfectState = namedtuple("InfectState", ["x", "a"])


def infect(state, step):
    x, a = state
    new_x = np.clip(x + step * (1.0 - x) * (a @ x), 0.0, 1.0)
    return InfectState(new_x, a), new_x.sum()


@functools.partial(jit, static_argnums=(1, 2, 3))
def _pandemic_scan(state, step, t, T):
    return lax.scan(infect, state, np.full(T, step, dtype=np.float32))


def pandemic_scan(state, step=1, t=0, T=5):
    return _pandemic_scan(state, step, t, T)


def main():
    a = np.array([[0.0, 0.3, 0.0, 0.1], [0.3, 0.0, 0.2, 0.0], [0.0, 0.2, 0.0, 0.4], [0.1, 0.0, 0.4, 0.0]])
    results = []
    for patient_zero in range(3):
        x0 = np.zeros(4).at[patient_zero].set(1.0)
        results.append(pandemic_scan(InfectState(x0, a), step=0.5))
    return results
