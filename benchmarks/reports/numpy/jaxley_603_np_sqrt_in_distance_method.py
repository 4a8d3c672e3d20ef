"""A neuron morphology's `.distance()` between two compartments, used inside a jitted loss.

Source: https://github.com/jaxleyverse/jaxley/pull/603
Fails: `distance` returns `np.sqrt(np.sum(...))` on coordinates that are traced under jit
    (they depend on the optimised parameters); NumPy converts the tracer and raises
    TracerArrayConversionError. The PR's own repro `mytest` fails the same way.
Fix: `jnp.sqrt(jnp.sum(...))`; the constant `np.asarray([3.0, 4.0])` can stay NumPy.
"""

import jax.numpy as jnp
import numpy as np
from jax import jit


@jit
def mytest(param):
    return np.sqrt(np.sum(param * np.asarray([3.0, 4.0])))


class Compartment:
    def __init__(self, cell, index):
        self.cell = cell
        self.index = index

    @property
    def xyz(self):
        return self.cell.xyzr[self.index, :3]

    def distance(self, endpoint):
        """Euclidean distance between the centres of this compartment and `endpoint`."""
        return np.sqrt(np.sum((self.xyz - endpoint.xyz) ** 2))


class Cell:
    def __init__(self, xyzr):
        self.xyzr = xyzr

    def branch(self, index):
        return Compartment(self, index)


@jit
def delay_loss(stretch, xyzr, velocity, target):
    cell = Cell(xyzr * jnp.array([stretch, stretch, 1.0, 1.0]))
    delays = jnp.stack([cell.branch(0).distance(cell.branch(i)) / velocity for i in range(1, 4)])
    return jnp.mean((delays - target) ** 2), delays


def main():
    xyzr = jnp.array([
        [0.0, 0.0, 0.0, 1.0],
        [10.0, 0.0, 0.0, 0.5],
        [10.0, 20.0, 0.0, 0.5],
        [-5.0, 3.0, 4.0, 0.3],
    ])
    target = jnp.array([5.0, 10.0, 4.0])
    return mytest(jnp.ones((1,))), delay_loss(1.0, xyzr, 2.0, target), delay_loss(1.5, xyzr, 2.0, target)
