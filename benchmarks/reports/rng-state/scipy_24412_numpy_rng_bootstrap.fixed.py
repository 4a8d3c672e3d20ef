"""A bootstrap standard error is computed by a jitted function that draws its resampling
indices from a NumPy `Generator` passed in as `rng` (static, like `scipy.stats.bootstrap`
with `jax_jit=True`).

Source: https://github.com/scipy/scipy/issues/24412
Fails: `rng.integers(...)` runs on the host while tracing, so its draw is baked into the
    compiled function: every later call with the same `rng` reuses the same resamples and
    returns the same standard error, while eagerly the generator advances.
Fix: draw the indices from `rng` outside the jitted computation and pass them in.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnames=("statistic",))
def bootstrap_se(data, statistic, idx):
    resamples = data[idx]
    theta = statistic(resamples, axis=-1)
    return jnp.std(theta, ddof=1)


def draw_indices(data, n_resamples, rng):
    n = data.shape[0]
    return rng.integers(0, n, size=(n_resamples, n))


def main():
    rng = np.random.default_rng(34982345)
    data = jnp.array([2.1, 3.4, 1.9, 5.6, 4.4, 3.3, 2.8, 6.1])
    x = bootstrap_se(data, jnp.mean, draw_indices(data, 50, rng))
    y = bootstrap_se(data, jnp.mean, draw_indices(data, 50, rng))
    z = bootstrap_se(data, jnp.median, draw_indices(data, 50, rng))
    return x, y, z
