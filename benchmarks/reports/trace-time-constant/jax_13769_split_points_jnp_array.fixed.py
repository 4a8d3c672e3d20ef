"""An evolution-strategies MLP keeps its parameters as one flat vector and, inside the jitted
forward pass, splits it at offsets computed from the (static) layer shapes.

Source: https://github.com/jax-ml/jax/issues/13769
Fails: the split offsets are plain Python ints, but wrapping them in `jnp.array` (to satisfy the
    type annotation of `jnp.split`) stages them, so under jit `jnp.split` raises
    ConcretizationTypeError ("in jax.numpy.split argument 1").
Fix: keep the static offsets static: pass the Python list (or a NumPy array) to `jnp.split`.
"""

import itertools
import math

import jax
import jax.numpy as jnp


def layer_shapes(sizes):
    shapes = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        shapes += [(n_in, n_out), (n_out,)]
    return shapes


def unflatten(flat, shapes):
    counts = [math.prod(s) for s in shapes]
    split_points = list(itertools.accumulate(counts))[:-1]
    pieces = jnp.split(flat, split_points)
    return [p.reshape(s) for p, s in zip(pieces, shapes)]


def make_forward(sizes):
    shapes = layer_shapes(sizes)

    @jax.jit
    def forward(flat_params, x):
        params = unflatten(flat_params, shapes)
        for w, b in zip(params[:-2:2], params[1:-2:2]):
            x = jnp.tanh(x @ w + b)
        return x @ params[-2] + params[-1]

    n_params = sum(math.prod(s) for s in shapes)
    return forward, n_params


def main():
    results = []
    for sizes in ((3, 1), (3, 4, 2), (3, 5, 5, 1)):
        forward, n_params = make_forward(sizes)
        flat = jnp.sin(jnp.arange(n_params, dtype=jnp.float32))
        results.append(forward(flat, jnp.array([[0.1, -0.2, 0.3], [1.0, 0.5, -1.0]])))
    return results
