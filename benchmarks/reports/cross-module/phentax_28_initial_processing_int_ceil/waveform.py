"""A toy IMRPhenomTHM-shaped model: masses and spins in, plus/cross polarizations out."""

import jax.numpy as jnp

from . import grid


class IMRPhenomTHM:
    def __init__(self, T: float = 600.0, delta_t: float = 15.0, coarse_grain: bool = False):
        self.T = T
        self.delta_t = delta_t
        self.coarse_grain = coarse_grain
        self.max_adaptive_steps = 0

    def initial_processing(self, m1, m2, chi1z, chi2z):
        assert jnp.all(jnp.abs(chi1z) <= 1.0), "chi1z must be in [-1, 1]"
        assert jnp.all(jnp.abs(chi2z) <= 1.0), "chi2z must be in [-1, 1]"

        total_mass = m1 + m2
        eta = m1 * m2 / total_mass ** 2
        chi_eff = (m1 * chi1z + m2 * chi2z) / total_mass

        n_steps = int(jnp.ceil(self.T / self.delta_t))
        self.max_adaptive_steps = grid.estimate_adaptive_steps_from_T(self.T, self.delta_t)
        if self.coarse_grain:
            n_steps = min(n_steps, self.max_adaptive_steps // 2)
        return total_mass, eta, chi_eff, n_steps

    def compute_polarizations(self, m1, m2, chi1z, chi2z):
        total_mass, eta, chi_eff, n_steps = self.initial_processing(m1, m2, chi1z, chi2z)
        times, mask = grid.generate_uniform_grid(-self.T, 0.0, self.delta_t, max_steps=n_steps)
        tau = jnp.maximum(-times, self.delta_t) / total_mass
        phase = 2.0 * tau ** (5.0 / 8.0) / (eta + 0.05) * (1.0 + 0.1 * chi_eff)
        amplitude = eta * tau ** (-0.25)
        h_plus = jnp.where(mask, amplitude * jnp.cos(phase), 0.0)
        h_cross = jnp.where(mask, amplitude * jnp.sin(phase), 0.0)
        return times, mask, h_plus, h_cross
