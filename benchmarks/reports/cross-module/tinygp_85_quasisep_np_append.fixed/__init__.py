"""Conditioning a quasiseparable GP on test points: the jitted `_condition` calls the kernel's `matmul`.

Source: https://github.com/dfm/tinygp/issues/85
Fails: `GaussianProcess.condition(y, X_test)` jits `_condition`, which calls
    `kernel.matmul(X_test, self.X, alpha)` in kernels.py; `to_general_qsm` there shifts the
    inputs with `np.append(x[0], x[:-1])` (NumPy, not jax.numpy) on the traced `X2`:
    TracerArrayConversionError.
Fix: use `jnp.append` in `to_general_qsm`, as `to_symm_qsm` already does.
"""

import jax.numpy as jnp

from .gp import GaussianProcess
from .kernels import Exp


def main():
    X = jnp.linspace(0.0, 5.0, 7)
    y = jnp.sin(X)
    X_test = jnp.array([-1.0, 0.3, 2.5, 2.5, 4.9, 7.0])
    results = []
    for scale in (0.5, 2.0):
        gp = GaussianProcess(Exp(scale=scale, sigma=1.3), X, diag=0.1)
        results.append(gp.condition(y))          # at the training inputs
        results.append(gp.condition(y, X_test))  # at new inputs (before, between, after)
    return results
