"""Spectral unmixing: a jitted gradient of a spatially regularised functional reshapes abundances to (r, m, n) images.

Source: https://github.com/jax-ml/jax/issues/1629
Fails: the image sizes `m` and `n` are passed to the jitted gradient as ordinary arguments,
    so `np.reshape(X, (r, m, n), order="F")` gets tracers and raises TypeError.
Fix: the image sizes set shapes, so they are static: `jit(..., static_argnums=(3, 4))`.
"""

import jax.numpy as np
from jax import grad, jit


def spatial_functional(X, Y, K, m, n, lambda_, tau, h):
    r = X.shape[0]
    X_imshape = np.reshape(X, (r, m, n), order="F")
    data_term = 0.5 * np.sum((K @ X - Y) ** 2)
    dx = np.diff(X_imshape, axis=1) / h
    dy = np.diff(X_imshape, axis=2) / h
    smoothness = np.sum(np.sqrt(dx ** 2 + tau)) + np.sum(np.sqrt(dy ** 2 + tau))
    return data_term + lambda_ * smoothness


jax_gradient_spatial_functional = jit(grad(spatial_functional))


def projectVectorsCanonicalSimplex(X):
    # Euclidean projection of every column of X onto the probability simplex
    U = -np.sort(-X, axis=0)
    css = np.cumsum(U, axis=0) - 1.0
    ind = np.arange(1, X.shape[0] + 1)[:, None]
    rho = np.sum(U - css / ind > 0, axis=0)
    theta = np.take_along_axis(css, rho[None, :] - 1, axis=0) / rho
    return np.maximum(X - theta, 0.0)


def optimII(x0, fGrad, projC, L, maxIter):
    xOld = x0
    for _ in range(maxIter):
        xOld = projC(xOld - 1 / L * fGrad(xOld))
    return xOld


def unmix(m, n, maxIter, lambda_=0.1, tau=1e-3, h=1.0):
    r, p = 3, 4
    K_GT = np.cos(np.arange(p * r, dtype=np.float32).reshape(p, r)) + 1.5
    truth = projectVectorsCanonicalSimplex(np.sin(np.arange(r * m * n, dtype=np.float32)).reshape(r, m * n))
    Y = K_GT @ truth
    x0 = np.full((r, m * n), 1.0 / r)
    return optimII(x0, lambda x: jax_gradient_spatial_functional(x, Y, K_GT, m, n, lambda_, tau, h),
                   projectVectorsCanonicalSimplex, 20.0, maxIter)


def main():
    return unmix(2, 3, 1), unmix(4, 5, 6)
