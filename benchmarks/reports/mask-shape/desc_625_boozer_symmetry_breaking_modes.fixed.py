"""A quasi-symmetry objective keeps a boolean mask of symmetry-breaking Boozer modes and
indexes the |B| spectrum with it inside the jitted objective function.

Source: https://github.com/PlasmaControl/DESC/issues/625
Fails: `ptolemy_linear_transform` returns a boolean mask (`idx`) that the objective stores as a
    pytree leaf; inside the jitted `ObjectiveFunction.compute` it is a tracer, so
    `B_mn[self._idx]` raises NonConcreteBooleanIndexError.
Fix: return the integer indices of the symmetry-breaking modes (`np.where(idx)[0]`, computed
    once at build time with NumPy), which index with a static shape under jit.
"""

import jax
import jax.numpy as jnp
import numpy as np


def ptolemy_linear_transform(modes, helicity, NFP):
    """Return the indices of the modes that break the given helicity."""
    M, N = helicity
    idx = np.ones(modes.shape[0], dtype=bool)
    idx_MN = np.nonzero(modes[:, 0] * N * NFP == modes[:, 1] * M)[0]
    idx[idx_MN] = False
    idx = np.where(idx)[0]
    return idx


@jax.tree_util.register_pytree_node_class
class QuasisymmetryBoozer:
    """Quasi-symmetry Boozer harmonics error."""

    def __init__(self, helicity=(1, 0), NFP=1, M_booz=2, N_booz=2):
        self.helicity = helicity
        self.NFP = NFP
        self.M_booz = M_booz
        self.N_booz = N_booz
        self._idx = None

    def build(self):
        m = np.arange(0, self.M_booz + 1)
        n = np.arange(-self.N_booz, self.N_booz + 1)
        self._modes = np.array([[mi, ni] for mi in m for ni in n])
        self._idx = ptolemy_linear_transform(self._modes, helicity=self.helicity, NFP=self.NFP)
        return self

    def compute(self, B_mn):
        B00 = B_mn[0]
        return B_mn[self._idx] / B00

    def tree_flatten(self):
        return (self._idx,), (self.helicity, self.NFP, self.M_booz, self.N_booz)

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = cls(*aux)
        (obj._idx,) = children
        return obj


class ObjectiveFunction:
    def __init__(self, objectives):
        self.objectives = objectives
        for objective in objectives:
            objective.build()
        self._compute = jax.jit(self.compute)

    def compute(self, objectives, B_mn):
        return jnp.concatenate([obj.compute(B_mn) for obj in objectives])

    def __call__(self, B_mn):
        return self._compute(self.objectives, B_mn)


def main():
    objective = ObjectiveFunction((QuasisymmetryBoozer(helicity=(1, 0), NFP=1),
                                   QuasisymmetryBoozer(helicity=(1, 1), NFP=2)))
    n_modes = 3 * 5
    spectrum = jnp.linspace(1.0, 0.1, n_modes) ** 2
    f = objective(spectrum)
    f_perturbed = objective(spectrum.at[3].add(0.5))
    return f, jnp.sum(f**2), f_perturbed
