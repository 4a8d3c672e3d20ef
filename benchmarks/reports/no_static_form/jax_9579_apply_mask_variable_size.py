"""A jitted helper returns just the entries of `x` selected by a boolean mask, and callers use how many there were.

Source: https://github.com/jax-ml/jax/issues/9579
Category: mask-shape
Fails: `f(x, mask)` under `jax.jit` returns `x[mask]`; the result's length is the number of True
    entries of a traced mask: NonConcreteBooleanIndexError. The caller consumes that length
    (`len(selected)`) and the selected values themselves.
Fix: none that returns the ragged selection from jit: return a fixed-size result
    (`jnp.nonzero(mask, size=bound)` with a bound the caller chooses, or `jnp.where(mask, x, fill)`
    plus `mask.sum()`), or select outside jit.
"""

import jax
import jax.numpy as jnp


def apply_mask(x, mask):
    return x[mask]


@jax.jit
def f(x, mask):
    assert x.shape == mask.shape
    # where mask is a boolean-array
    return apply_mask(x, mask)


def main():
    x = jnp.linspace(0.0, 1.0, 8)
    results = []
    for threshold in (2.0, 0.5, -1.0):  # none, some and all selected
        selected = f(x, x > threshold)
        results.append((len(selected), selected))
    return results
