"""An FDTD perfectly matched layer fills in its default conductivity when placed on the grid.

Source: https://github.com/ymahlau/fdtdx/pull/347
Fails: `PerfectlyMatchedLayer.place_on_grid` stores `float(sigma_end_calculated)`; the value
    depends on `config.resolution`, a traced leaf when the setup runs inside jit, so `float()`
    raises ConcretizationTypeError.
Fix: store `sigma_end_calculated.astype(float)`, an array, as later fdtdx versions do.
"""

import dataclasses

import equinox as eqx
import jax
import jax.numpy as jnp

eta0 = 376.730313668


class SimulationConfig(eqx.Module):
    resolution: jax.Array
    time_step_duration: jax.Array


class SimulationObject(eqx.Module):
    thickness: int = eqx.field(static=True)
    grid_slice: tuple = eqx.field(static=True, default=())
    _config: SimulationConfig | None = None

    def aset(self, name, value):
        return dataclasses.replace(self, **{name: value})

    def place_on_grid(self, grid_slice_tuple, config, key):
        del key
        return dataclasses.replace(self, grid_slice=grid_slice_tuple, _config=config)


class PerfectlyMatchedLayer(SimulationObject):
    sigma_order: float = 3.0
    sigma_end: jax.Array | float | None = None

    def place_on_grid(self, grid_slice_tuple, config, key):
        """Place the PML on the grid and calculate any remaining defaults."""
        self = super().place_on_grid(grid_slice_tuple, config, key)
        if self.sigma_end is None:
            assert self.sigma_order is not None, "sigma_order should be set by __post_init__"
            pml_thickness = self.thickness * self._config.resolution
            sigma_end_calculated = -(self.sigma_order + 1) * jnp.log(1e-6) / (2 * (eta0 / 1.0) * pml_thickness)
            self = self.aset("sigma_end", sigma_end_calculated.astype(float))
        return self

    def conductivity(self):
        depth = (jnp.arange(self.thickness) + 0.5) / self.thickness
        return self.sigma_end * depth**self.sigma_order


def run_simulation(config, pml, fields, key):
    """Places the PML, then damps the fields inside it for one time step."""
    start = fields.shape[0] - pml.thickness
    pml = pml.place_on_grid((slice(start, None),), config, key)
    damping = jnp.exp(-pml.conductivity() * config.time_step_duration * eta0 / config.resolution)
    return fields.at[start:].multiply(damping), pml.sigma_end


def main():
    run = jax.jit(run_simulation)
    fields = jnp.linspace(1.0, 2.0, 12)
    key = jax.random.PRNGKey(0)
    fine = SimulationConfig(resolution=jnp.array(50e-9), time_step_duration=jnp.array(1e-17))
    coarse = SimulationConfig(resolution=jnp.array(100e-9), time_step_duration=jnp.array(2e-17))
    default_pml = PerfectlyMatchedLayer(thickness=4)
    given_pml = PerfectlyMatchedLayer(thickness=3, sigma_end=jnp.array(2e5))
    return run(fine, default_pml, fields, key), run(coarse, default_pml, fields, key), run(fine, given_pml, fields, key)
