"""A naive periodic neighbour list counts neighbours over every lattice image the cutoff can reach.

Source: https://github.com/NVIDIA/nvalchemi-toolkit-ops/pull/72
Category: dynamic-shape
Fails: inside `jax.jit`, `naive_neighbor_list` falls back to `compute_naive_num_shifts(cell, cutoff,
    pbc)` when no shift range is given, which calls `int(...)` on the per-dimension image counts
    derived from the traced cell: ConcretizationTypeError. How many periodic images exist is
    set by the cell's values, and it sizes the array of shift vectors.
Fix: none inside jit: call `compute_naive_num_shifts` outside the jitted scope (its docstring says
    it must be) and pass `shift_range_per_dimension` / `max_shifts_per_system` in as static
    values; for a changing cell, choose an upper bound outside jit.
"""

import jax
import jax.numpy as jnp


def compute_naive_num_shifts(cell, cutoff, pbc):
    """Number of periodic images needed per dimension so that every pair within cutoff is seen."""
    inv_cell = jnp.linalg.inv(cell)
    # distance between opposite faces = 1 / |row of the inverse cell|
    face_distances = 1.0 / jnp.linalg.norm(inv_cell, axis=0)
    shifts = jnp.where(pbc, jnp.ceil(cutoff / face_distances), 0).astype(jnp.int32)
    shift_range = tuple(int(s) for s in shifts)
    max_shifts = int(jnp.prod(2 * shifts + 1))
    return shift_range, max_shifts


def naive_neighbor_list(positions, cutoff, cell, pbc, shift_range_per_dimension=None,
                        max_shifts_per_system=None):
    if shift_range_per_dimension is None or max_shifts_per_system is None:
        shift_range_per_dimension, max_shifts_per_system = compute_naive_num_shifts(cell, cutoff, pbc)
    sx, sy, sz = shift_range_per_dimension
    grid = jnp.meshgrid(jnp.arange(-sx, sx + 1), jnp.arange(-sy, sy + 1), jnp.arange(-sz, sz + 1),
                        indexing="ij")
    shifts = jnp.stack([g.reshape(-1) for g in grid], axis=-1)[:max_shifts_per_system]
    offsets = shifts.astype(positions.dtype) @ cell
    d = positions[:, None, None, :] - positions[None, :, None, :] - offsets[None, None, :, :]
    r = jnp.sqrt(jnp.sum(d ** 2, axis=-1))
    is_self = (jnp.arange(positions.shape[0])[:, None, None] == jnp.arange(positions.shape[0])[None, :, None]) \
        & jnp.all(shifts == 0, axis=-1)[None, None, :]
    within = (r < cutoff) & ~is_self
    num_neighbors = jnp.sum(within, axis=(1, 2))
    return num_neighbors, shifts.shape[0]


@jax.jit
def count_neighbors(positions, cell):
    pbc = jnp.array([True, True, False])
    num_neighbors, num_shifts = naive_neighbor_list(positions, 1.2, cell, pbc)
    return num_neighbors, num_shifts


def main():
    positions = jnp.array([[0.1, 0.1, 0.1], [0.6, 0.2, 0.4], [0.3, 0.7, 0.2]])
    results = []
    for edge in (3.0, 1.0, 0.5):  # one image per direction, a few, many
        results.append(count_neighbors(positions, jnp.eye(3) * edge))
    return results
