"""The HITS hub/authority power iteration from the array-API tutorial, jitted with `xp = jax.numpy`.

Source: https://github.com/data-apis/array-api/pull/999
Fails: `if is_converged(hprev, h, N, tol): break` tests a traced comparison, so jitting `hits`
    raises TracerBoolConversionError (as the reviewer reports in the thread).
Fix: iterate with `jax.lax.while_loop`, carrying the iteration count, the current and the
    previous hub vector, and stopping at convergence or after `max_iter` steps.
"""

import jax
import jax.numpy as xp


def is_converged(xprev, x, N, tol):
    err = xp.sum(xp.abs(x - xprev))
    return err < xp.asarray(N * tol)


def hits(A, max_iter=100, tol=1.0e-8, normalized=True):
    A = xp.asarray(A)
    N = A.shape[0]
    h = xp.full(N, 1.0 / N)
    # Power iteration: make up to max_iter iterations
    for _i in range(max_iter):
        hprev = h
        a = hprev @ A
        h = A @ a
        h = h / xp.max(h)
        if is_converged(hprev, h, N, tol):
            break
    a = h @ A
    a = a / xp.max(a)
    if normalized:
        h = h / xp.sum(xp.abs(h))
        a = a / xp.sum(xp.abs(a))
    return h, a


hits_jit = jax.jit(hits)


def main():
    single = hits_jit(xp.array([[2.0]]))  # converged after the first step
    identity = hits_jit(xp.eye(3))  # two steps
    graph = hits_jit(xp.array([[0.0, 1.0, 1.0, 0.0],
                               [0.0, 0.0, 1.0, 0.0],
                               [1.0, 0.0, 0.0, 1.0],
                               [0.0, 0.0, 1.0, 0.0]]))  # many steps
    return single, identity, graph
