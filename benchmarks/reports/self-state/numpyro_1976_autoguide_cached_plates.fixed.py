"""An `AutoDelta` guide caches the model's plates (with their subsample indices) on `self` the
first time it runs, and is then called under `jax.jit` and eagerly.

Source: https://github.com/pyro-ppl/numpyro/pull/1976
Fails: the first call happens under jit, so the cached `plate._indices` is a tracer; later
    calls reuse the cached plate, and the eager call after the jitted ones raises
    UnexpectedTracerError.
Fix: do not cache plates on the guide: build them on every call, so each call is pure.
"""

import jax
import jax.numpy as jnp


class plate:
    def __init__(self, name, size, subsample_size=None):
        self.name = name
        self.size = size
        self.subsample_size = size if subsample_size is None else subsample_size
        self._indices = jnp.arange(self.size)[:self.subsample_size]


class AutoDelta:
    def __init__(self, model, prefix="auto"):
        self.model = model
        self.prefix = prefix

    def _create_plates(self, *args, **kwargs):
        return {"n": plate("n", args[0].shape[0])}

    def __call__(self, params, *args, **kwargs):
        plates = self._create_plates(*args, **kwargs)
        idx = plates["n"]._indices
        loc = params[f"{self.prefix}_loc"]
        return {"x": loc[idx]}


def model(data):
    return data


def main():
    data = jnp.array([0.5, -1.0, 2.0])
    guide = AutoDelta(model)
    params1 = {"auto_loc": jnp.array([1.0, 2.0, 3.0, 4.0])}
    params2 = {"auto_loc": jnp.array([-1.0, 0.0, 1.0, 2.0])}
    first = jax.jit(lambda p: guide(p, data))(params1)
    second = jax.jit(lambda p: guide(p, data))(params2)
    eager = guide(params1, data)
    return first, second, eager
