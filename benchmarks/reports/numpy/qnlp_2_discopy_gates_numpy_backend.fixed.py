"""A parametrised quantum-circuit classifier whose cost is jitted (discopy-style gates).

Source: https://github.com/Quantinuum/qnlp_lorenz_etal_2021_resources/issues/2
Fails: the rotation gates build their matrices with `self.modules.cos/sin/exp/array`, and the
    tensor backend is still NumPy; under `jit(get_cost)` the phases are tracers, so NumPy raises
    TracerArrayConversionError inside `Rx.array` / `Rz.array`.
Fix: set the tensor backend to `jax.numpy` (discopy's `Tensor.np = jax.numpy`), so the gate
    arrays are built with jnp functions.
"""

import numpy

import jax
import jax.numpy as jnp
from jax import jit


class Tensor:
    np = jax.numpy  # the array backend the gates use


class Rotation:
    def __init__(self, phase):
        self.phase = phase

    @property
    def modules(self):
        return Tensor.np


class Rx(Rotation):
    @property
    def array(self):
        half_theta = self.modules.pi * self.phase
        sin, cos = self.modules.sin(half_theta), self.modules.cos(half_theta)
        return self.modules.array([[cos, -1j * sin], [-1j * sin, cos]])


class Rz(Rotation):
    @property
    def array(self):
        half_theta = self.modules.pi * self.phase
        return self.modules.array(
            [[self.modules.exp(-1j * half_theta), 0], [0, self.modules.exp(1j * half_theta)]]
        )


class Circuit:
    def __init__(self, gates):
        self.gates = gates

    def eval(self):
        state = jnp.array([1.0 + 0j, 0.0 + 0j])
        for gate in self.gates:
            state = jnp.asarray(gate.array) @ state
        return state


def make_circuit(word_params):
    return Circuit([Rx(word_params[0]), Rz(word_params[1]), Rx(word_params[2])])


sentences = [(0, 1), (1, 2), (2, 0), (0, 2)]
labels = jnp.array([1.0, 0.0, 1.0, 0.0])


def get_cost(unshaped_params):
    params = unshaped_params.reshape(3, 3)
    probs = []
    for first, second in sentences:
        amplitude = make_circuit(params[first] + params[second]).eval()
        probs.append(jnp.abs(amplitude[1]) ** 2)
    probs = jnp.clip(jnp.stack(probs), 1e-6, 1 - 1e-6)
    return -jnp.mean(labels * jnp.log(probs) + (1 - labels) * jnp.log(1 - probs))


get_cost_jit = jit(get_cost)


def main():
    rand_unshaped_pars = jax.random.uniform(jax.random.PRNGKey(0), (9,))
    return get_cost_jit(rand_unshaped_pars), get_cost_jit(jnp.zeros(9) + 0.25)
