"""A jitted k-means `fit` updates centroids for `max_iter` rounds and breaks once they stop moving.

Source: https://github.com/secretflow/spu/issues/148
Fails: the convergence test `if jnp.all(jnp.less(jnp.max(jnp.abs(centroids - old_centroids)), tol)):
    break` is on traced values, so it raises TracerBoolConversionError.
Fix: run the rounds in `jax.lax.while_loop`, carrying the round counter and the last centroid
    shift and stopping when the shift is below `tol` or `max_iter` rounds are done.
"""

import jax
import jax.numpy as jnp
from jax import random


@jax.jit
def fit(X, tol=1e-4):
    n_clusters = 3
    max_iter = 10
    indice = random.choice(random.PRNGKey(0), X.shape[0], shape=(n_clusters,), replace=False)
    centroids = jnp.take(X, indice, axis=0)

    def cond_fun(state):
        i, centroids, shift = state
        return (i < max_iter) & ~jnp.all(jnp.less(shift, tol))

    def body_fun(state):
        i, centroids, shift = state
        old_centroids = centroids.copy()

        distances = jnp.sum((X[:, None, :] - old_centroids[None, :, :]) ** 2, axis=-1)
        labels = jnp.argmin(distances, axis=1)
        centroids = jnp.array(
            [jnp.sum(X * (labels == j)[:, jnp.newaxis], axis=0) / jnp.maximum(jnp.sum(labels == j), 1)
             for j in range(n_clusters)])

        shift = jnp.max(jnp.abs(centroids - old_centroids))
        return i + 1, centroids, shift

    _, centroids, _ = jax.lax.while_loop(cond_fun, body_fun, (0, centroids, jnp.inf))

    return centroids


def main():
    blobs = jnp.array([[0.0, 0.0], [0.2, 0.1], [5.0, 5.0], [5.1, 4.8], [9.0, 0.0], [8.7, 0.3],
                       [0.1, 0.3], [4.9, 5.2], [9.2, -0.1], [2.5, 2.5]])
    converged = fit(blobs)  # stops after a few rounds
    settled = fit(jnp.array([[0.0, 0.0], [5.0, 5.0], [9.0, 0.0]]))  # breaks in the first round
    capped = fit(blobs, tol=-1.0)  # never converges: all `max_iter` rounds
    return converged, settled, capped
