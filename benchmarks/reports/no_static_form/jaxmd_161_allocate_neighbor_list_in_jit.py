"""A PME real-space energy builds its neighbour list inside the jitted energy function.

Source: https://github.com/jax-md/jax-md/issues/161
Category: dynamic-shape
Fails: `real_space` is jitted and calls `neighbor_list_fn.allocate(positions)`; allocation sizes
    the neighbour buffer from the data (`int(jnp.max(counts) * capacity_multiplier)`), a tracer:
    ConcretizationTypeError. The buffer's capacity is the number of neighbours the positions
    happen to have.
Fix: none inside jit: allocate once outside jit (choosing the capacity there), and call
    `nbrs.update(positions)` inside, checking `did_buffer_overflow` and reallocating outside jit
    when it overflows.
"""

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import erfc


class NeighborList(NamedTuple):
    idx: jnp.ndarray
    reference_position: jnp.ndarray
    did_buffer_overflow: jnp.ndarray
    max_occupancy: int
    update_fn: Callable

    def update(self, R):
        return self.update_fn(R, self)


class NeighborListFns(NamedTuple):
    allocate: Callable
    update: Callable


def neighbor_list(box, r_cutoff, capacity_multiplier=1.25):
    def displacement(Ra, Rb):
        dR = Ra - Rb
        return dR - box * jnp.round(dR / box)

    def candidates(R):
        N = R.shape[0]
        dR = jax.vmap(jax.vmap(displacement, (None, 0)), (0, None))(R, R)
        d = jnp.sqrt(jnp.sum(dR ** 2, axis=-1) + jnp.eye(N))
        return (d < r_cutoff) & ~jnp.eye(N, dtype=bool)

    def build(R, max_occupancy):
        N = R.shape[0]
        mask = candidates(R)
        order = jnp.argsort(~mask, axis=1, stable=True)[:, :max_occupancy]
        valid = jnp.take_along_axis(mask, order, axis=1)
        idx = jnp.where(valid, order, N)
        overflow = jnp.max(jnp.sum(mask, axis=1)) > max_occupancy
        return idx, overflow

    def allocate(R):
        counts = jnp.sum(candidates(R), axis=1)
        max_occupancy = int(jnp.max(counts) * capacity_multiplier + 1)
        idx, overflow = build(R, max_occupancy)
        return NeighborList(idx, R, overflow, max_occupancy, update)

    def update(R, nbrs):
        idx, overflow = build(R, nbrs.max_occupancy)
        return NeighborList(idx, R, overflow, nbrs.max_occupancy, update)

    return NeighborListFns(allocate, update)


BOX = 4.0
neighbor_list_fn = neighbor_list(BOX, r_cutoff=1.5)


def real_space(positions, Qlocal, box, kappa):
    # --- build neighborlist ---
    neighbor = neighbor_list_fn.allocate(positions)
    N = positions.shape[0]
    idx = neighbor.idx
    valid = idx < N
    j = jnp.where(valid, idx, 0)
    dR = positions[:, None, :] - positions[j]
    dR = dR - box * jnp.round(dR / box)
    r = jnp.sqrt(jnp.sum(dR ** 2, axis=-1) + (~valid))
    qq = Qlocal[:, None] * Qlocal[j]
    pair = jnp.where(valid, qq * erfc(kappa * r) / r, 0.0)
    return 0.5 * jnp.sum(pair)


pme_real_energy_and_force = jax.value_and_grad(real_space)
jitted_pme_real_energy_and_force = jax.jit(pme_real_energy_and_force)


def main():
    Qlocal = jnp.array([1.0, -1.0, 0.5, -0.5, 0.25, -0.25])
    sparse = jnp.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0],
                        [2.0, 2.0, 0.0], [0.0, 0.0, 2.0], [2.0, 2.0, 2.0]])
    dense = sparse * 0.4
    results = []
    for positions in (sparse, dense):
        ereal, freal = jitted_pme_real_energy_and_force(positions, Qlocal, BOX, 0.8)
        results.append((ereal, freal))
    return results
