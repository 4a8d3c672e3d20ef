"""A physics `World` object advances its position and velocity with a jitted `step` method.

Source: https://github.com/jax-ml/jax/issues/1567
Fails: `step` is jitted with `self` static and assigns `self.v += ...`, `self.p += ...`:
    the first call stores tracers on the object, later calls hit the cache and change
    nothing, and reading `world.p` afterwards raises (a leaked tracer).
Fix: make `World` a pytree whose `step` returns a new `World`; rebind `world = world.step(dt)`.
"""

import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class World:
    def __init__(self, p, v):
        self.p = p
        self.v = v

    def tree_flatten(self):
        return (self.p, self.v), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        return cls(*children)

    @jax.jit
    def step(self, dt):
        a = -9.8
        v = self.v + a * dt
        p = self.p + v * dt
        return World(p, v)


def simulate(n_steps):
    world = World(jnp.array([0.0, 0.0]), jnp.array([1.0, 1.0]))
    for i in range(n_steps):
        world = world.step(0.01)
    return world.p, world.v


def main():
    return simulate(0), simulate(1), simulate(100)
