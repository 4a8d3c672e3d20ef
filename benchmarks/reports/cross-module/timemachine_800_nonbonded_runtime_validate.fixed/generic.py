"""Generic potentials: parameters plus a pure-jax reference implementation."""

from dataclasses import dataclass

import numpy as np

from . import nonbonded


def convert_exclusions_to_rescale_masks(exclusion_idxs, scales, N):
    """Converts exclusions from list format used in Nonbonded to mask format used in nonbonded_v3"""
    charge_rescale_mask = np.ones((N, N))  # to support item assignment
    for (i, j), exc in zip(exclusion_idxs, scales[:, 0]):
        charge_rescale_mask[i][j] = 1 - exc
        charge_rescale_mask[j][i] = 1 - exc

    lj_rescale_mask = np.ones((N, N))
    for (i, j), exc in zip(exclusion_idxs, scales[:, 1]):
        lj_rescale_mask[i][j] = 1 - exc
        lj_rescale_mask[j][i] = 1 - exc

    return charge_rescale_mask, lj_rescale_mask


@dataclass
class Nonbonded:
    num_atoms: int
    exclusion_idxs: np.ndarray
    scale_factors: np.ndarray
    beta: float
    cutoff: float

    def to_reference(self):
        num_atoms = self.num_atoms
        lambda_plane_idxs = np.zeros(num_atoms, dtype=np.int32)
        lambda_offset_idxs = np.array([0, 0, 1, 1], dtype=np.int32)[:num_atoms]
        charge_rescale_mask, lj_rescale_mask = convert_exclusions_to_rescale_masks(
            self.exclusion_idxs, self.scale_factors, num_atoms)
        nonbonded.validate_coulomb_cutoff(self.cutoff, self.beta, threshold=1e-2)

        def U(conf, params, box, lam):
            return nonbonded.nonbonded_v3(
                conf,
                params,
                box,
                lam,
                charge_rescale_mask,
                lj_rescale_mask,
                self.beta,
                self.cutoff,
                lambda_plane_idxs,
                lambda_offset_idxs,
                runtime_validate=False,
            )

        return U
