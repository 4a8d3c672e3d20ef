"""A class's method is jitted by wrapping the bound method (`jit(c.calc)`), and the instance's
attributes (`c.mul`, `c.x`) are changed afterwards.

Source: https://openillumi.com/en/en-jax-jit-class-method-stale-cache-fix
Fails: `jit(c.calc)` closes over the instance, so `self.mul` and `self.x` are read once at
    trace time and baked in; the cache key (argument shapes) ignores the instance's state,
    so after `c.mul = 3.0` the jitted method silently keeps returning the old result.
Fix: register the class as a pytree and jit the unbound method, passing the instance as an
    argument (`jit(CustomClass.calc)(c, y)`), so its attributes are traced inputs.
"""

import jax
import jax.numpy as jnp
from jax import jit


class CustomClass:
    def __init__(self, x, mul):
        self.x = x
        self.mul = mul

    def calc(self, y):
        return self.mul * jnp.sin(y) + self.x


def main():
    c = CustomClass(2.0, 1.0)
    calc = jit(c.calc)
    y = jnp.linspace(0.0, 1.0, 4)
    first = calc(y)
    c.mul = 3.0
    second = calc(y)
    c.x = -1.0
    third = calc(y)
    return first, second, third
