"""A pytree class `A` writes a subsystem's values into its own array with a jitted method.

Source: https://github.com/jax-ml/jax/issues/15817
Fails: `self` is a pytree argument of the jitted `set_subsystem`, so JAX hands the method a
    rebuilt copy; `self.x = self.x.at[index].set(sub.x)` updates that copy and is lost: the
    caller's `a.x` silently never changes.
Fix: return a new `A` from `set_subsystem` and rebind at the call site: `a = a.set_subsystem(...)`.
"""

import jax
import jax.numpy as jnp


class A:
    def __init__(self, x: jnp.ndarray):
        self.x = x

    def _tree_flatten(self):
        dynamic = (self.x, )
        static = {}
        return dynamic, static

    @classmethod
    def _tree_unflatten(cls, static, dynamic):
        return cls(*dynamic)

    @jax.jit   # if there is not jit here then everything is good
    def set_subsystem(self, index, sub: "A"):
        return A(self.x.at[index].set(sub.x))


jax.tree_util.register_pytree_node(A,
                                   A._tree_flatten,
                                   A._tree_unflatten)


def main():
    nall = 5
    nsub = 2
    x = jnp.array([0.76288915, 0.3658373, 0.30345497, 0.1, 0.9])
    x2 = jnp.array([0.01640831, 0.84409314])

    a = A(x)
    a2 = A(x2)

    before = a.x
    a = a.set_subsystem(jnp.arange(nsub), a2)
    first = a.x
    a = a.set_subsystem(jnp.arange(nsub) + 3, A(a2.x * 2))
    second = a.x
    return before, first, second
