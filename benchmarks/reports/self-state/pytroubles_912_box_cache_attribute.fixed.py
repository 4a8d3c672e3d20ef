"""A `Box` caches the last result of its jitted `apply_jit` method on `self.cache`.

Source: https://pytroubles.com/en/posts/id912-jax-jit-and-object-state-fixing-tracerarrayconversionerror-from-in-method-attribute-mutation
Fails: `self.cache = out` inside the jitted method stores a tracer on the object; the cache
    is never refreshed by later (cached) calls, and `np.array(box.cache)` raises
    TracerArrayConversionError.
Fix: keep the jitted method pure (return `out`) and set `box.cache` from the returned value at
    the call site.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


def host_bootstrap():
    print("This code runs once at the beginning of the program.")
    return jnp.array([1.0, 2.0, 3.0])


class Box:
    @partial(jax.jit, static_argnums=0)
    def apply_jit(self, arr):
        out = arr * 2
        return out


def main():
    payload = host_bootstrap()
    box = Box()
    out1 = box.cache = box.apply_jit(payload)  # Tracing happens here
    first = (np.array(out1), np.array(box.cache))
    out2 = box.cache = box.apply_jit(payload + 10)
    second = (np.array(out2), np.array(box.cache))
    return first, second
