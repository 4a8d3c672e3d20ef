"""A jitted optimisation step asserts that an intermediate result has no NaNs before updating.

Source: https://github.com/jax-ml/jax/issues/2273
Fails: `assert np.all(np.isfinite(x))` inside the jitted step converts a traced bool: under jit
    it raises TracerBoolConversionError ("Abstract value passed to `bool`") even for finite input.
Fix: stage the check with `checkify.check(...)`, functionalize the step with `checkify.checkify`
    (still jitted), and raise on the host with `err.throw()`.
"""

import jax
import jax.numpy as np


@jax.jit
def newton_step(params, data):
    residual = np.log(data) - params
    x = residual / np.sqrt(np.mean(residual ** 2))
    assert np.all(np.isfinite(x))
    return params + 0.5 * np.mean(x)


def fit(data, n_steps):
    params = np.array(0.0)
    for _ in range(n_steps):
        params = newton_step(params, data)
    return params


def main():
    good = np.array([1.0, 2.0, 3.0, 4.0])
    results = [fit(good, 0), fit(good, 1), fit(good, 5)]
    for data in (np.array([1.0, -2.0, 3.0]), np.array([2.0, 2.0, 2.0])):
        try:
            results.append(fit(data, 3))
        except (AssertionError, ValueError, RuntimeError):
            results.append("rejected: non-finite intermediate")
    return results
