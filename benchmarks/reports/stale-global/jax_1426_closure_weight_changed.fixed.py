"""An optimal-control loss closes over a local weight `a`; its jitted gradient is reused after
`a` is changed.

Source: https://github.com/jax-ml/jax/issues/1426
Fails: `a` is read while `jax.jit(jax.grad(loss_sum))` is traced and baked in as a constant;
    after `a = 20` the cached compiled gradient still uses `a = 10`, silently.
Fix: make `a` an argument of the loss (and of the jitted gradient).
"""

import jax
import jax.numpy as np


def test_retain():
    a = 10
    def loss_sum(val, a):
        loss = np.sum(val[:2]**2 + val[2:]**3) * a
        return loss
    grad = jax.jit(jax.grad(loss_sum))     # added JIT
    gs1 = grad(np.array([2, 3, 4, 5], dtype=float), a)
    a = 20
    gs2 = grad(np.array([2, 3, 4, 5], dtype=float), a)
    a = 0.5
    gs3 = grad(np.array([1, -1, 2, 0], dtype=float), a)
    return gs1, gs2, gs3


def main():
    return test_retain()
