"""A Gaussian process whose conditional mean uses the kernel's quasiseparable products."""

from functools import partial
from typing import Optional

import jax
import jax.numpy as jnp

from .kernels import Quasisep


class GaussianProcess:
    def __init__(self, kernel: Quasisep, X, diag: float = 0.0):
        self.kernel = kernel
        self.X = X
        self.diag = diag

    def condition(self, y, X_test: Optional[jnp.ndarray] = None):
        """The predictive mean at X_test (at the training inputs when X_test is None)."""
        return self._condition(self.X, y, X_test)

    @partial(jax.jit, static_argnums=0)
    def _condition(self, X, y, X_test):
        # A few Jacobi sweeps for alpha = (K + diag I)^-1 y, using O(N) products only.
        Ky = lambda v: self.kernel.matmul(X, v) + self.diag * v
        d = self.kernel.Pinf()[0, 0] + self.diag
        alpha = y / d
        for _ in range(3):
            alpha = alpha + (y - Ky(alpha)) / d
        if X_test is None:
            return self.kernel.matmul(X, alpha)
        return self.kernel.matmul(X_test, X, alpha)
