"""A climate model's `_run_from_state` is jitted with the model (`self`) static; a physics
term's parameters (the vertical-diffusion timescale `trvdi`) are then changed in place with
`set_value` and the model is run again.

Source: https://github.com/climate-analytics-lab/jax-gcm/issues/735
Fails: with `self` static every physics parameter is baked into the compiled executable;
    changing `trvdi` in place does not change the model's cache key, so the second run
    reuses the old executable and silently returns the same temperatures.
Fix: pass the physics terms' parameters to the jitted run as a dynamic (pytree) argument.
"""

import dataclasses
from functools import partial

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class VerticalDiffusionParams:
    trvdi: jax.Array = 24.0
    trshc: jax.Array = 6.0

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class RelaxationParams:
    tau: jax.Array = 48.0
    t_eq: jax.Array = 280.0

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


class Parameter:
    def __init__(self, value):
        self._value = value

    def get_value(self):
        return self._value

    def set_value(self, value):
        self._value = value


class VerticalDiffusion:
    name = "speedy_vertical_diffusion"

    def __init__(self):
        self.params = Parameter(VerticalDiffusionParams())

    def tendency(self, T, p):
        mixed = -(T - T.mean()) / p.trvdi
        shallow = -(T - jnp.roll(T, 1)) / (p.trshc * 10)
        return mixed + shallow


class NewtonianRelaxation:
    name = "newtonian_relaxation"

    def __init__(self):
        self.params = Parameter(RelaxationParams())

    def tendency(self, T, p):
        return -(T - p.t_eq) / p.tau


class Physics:
    def __init__(self, terms):
        self.terms = terms


class Model:
    def __init__(self, physics, time_step):
        self.physics = physics
        self.time_step = time_step

    @partial(jax.jit, static_argnums=(0, 2))
    def _run_from_state(self, T, n_steps, params):
        def body(T, _):
            dT = sum(term.tendency(T, p) for term, p in zip(self.physics.terms, params))
            return T + self.time_step * dT, None

        T, _ = jax.lax.scan(body, T, None, length=n_steps)
        return T

    def run(self, T0, total_time):
        params = tuple(term.params.get_value() for term in self.physics.terms)
        return self._run_from_state(T0, int(total_time / self.time_step), params)


def main():
    m = Model(physics=Physics([VerticalDiffusion(), NewtonianRelaxation()]), time_step=0.5)
    T0 = jnp.array([300.0, 290.0, 275.0, 260.0, 250.0])
    T1 = m.run(T0, total_time=12.0)

    term = next(t for t in m.physics.terms if t.name == "speedy_vertical_diffusion")
    term.params.set_value(term.params.get_value().replace(trvdi=jnp.array(2.0)))
    T2 = m.run(T0, total_time=12.0)
    T3 = m.run(T0, total_time=0.5)
    return T1, T2, T3
