"""A generic Nonbonded potential's jax reference implementation, jitted and evaluated on a conformation.

Source: https://github.com/proteneer/timemachine/pull/800
Fails: `jit(nonbonded.to_reference())(conf, params, box, lam)` traces `nonbonded_v3` in the
    other module with its default `runtime_validate=True`; `validate_coulomb_cutoff` there does
    `if erfc(beta * cutoff) > threshold:` and the staged `erfc` is a tracer:
    TracerBoolConversionError (the same call works without jit).
Fix: `to_reference` validates the Python-float `beta`/`cutoff` once, outside the traced function,
    and calls `nonbonded_v3(..., runtime_validate=False)`.
"""

import jax
import numpy as np

from .generic import Nonbonded


def main():
    conf = np.array([[0.0, 0.0, 0.0], [0.3, 0.1, 0.0], [0.0, 0.4, 0.2], [0.5, 0.5, 0.5]])
    params = np.array([[0.5, 0.15, 0.2], [-0.5, 0.16, 0.3], [0.2, 0.12, 0.1], [-0.2, 0.14, 0.25]])
    box = np.eye(3) * 3.0
    exclusion_idxs = np.array([[0, 1], [1, 2]])
    scale_factors = np.array([[0.5, 0.5], [1.0, 1.0]])
    results = []
    for beta, cutoff in ((2.0, 1.2), (0.5, 0.6)):  # a cutoff that passes the check, and one that warns
        nonbonded = Nonbonded(4, exclusion_idxs, scale_factors, beta, cutoff)
        nonbonded_ref = jax.jit(nonbonded.to_reference())
        for lam in (0.0, 0.5, 1.0):
            results.append(nonbonded_ref(conf, params, box, lam))
    return results
