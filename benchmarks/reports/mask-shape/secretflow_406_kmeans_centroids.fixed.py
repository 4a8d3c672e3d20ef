"""A K-means fit (run through a jit-compiling secure-computation backend) recomputes each
centroid as the mean of the points assigned to it.

Source: https://github.com/secretflow/secretflow/issues/406
Fails: `X[labels == j].mean(axis=0)` selects a data-dependent number of rows; under jit the
    mask is a tracer and indexing raises NonConcreteBooleanIndexError.
Fix: take a masked mean with a static shape: `jnp.mean(X, axis=0, where=(labels == j)[:, None])`.
"""

import jax
import jax.numpy as jnp


def kmeans(X, init_centroids, n_clusters=3, n_iter=5):
    centroids = init_centroids
    for _ in range(n_iter):
        distances = jnp.sum((X[:, None, :] - centroids[None, :, :]) ** 2, axis=-1)
        labels = jnp.argmin(distances, axis=1)
        for j in range(n_clusters):
            centroids = centroids.at[j].set(jnp.mean(X, axis=0, where=(labels == j)[:, None]))
    inertia = jnp.sum(jnp.min(distances, axis=1))
    return centroids, labels, inertia


fit = jax.jit(kmeans, static_argnames=("n_clusters", "n_iter"))


def main():
    key = jax.random.PRNGKey(0)
    centers = jnp.array([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
    X = (centers[:, None, :] + 0.5 * jax.random.normal(key, (3, 20, 2))).reshape(-1, 2)
    three = fit(X, X[jnp.array([0, 20, 40])])
    two = fit(X, X[jnp.array([0, 59])], n_clusters=2, n_iter=3)
    return three, two
