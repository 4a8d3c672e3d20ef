"""A function increments and returns a module-level counter `g` declared `global`, and is
decorated with `@jit`.

Source: https://github.com/jax-ml/jax/issues/1348
Fails: the global is read and rebound only while tracing, so the jitted `f()` gives 1, 1, 1
    instead of 1, 2, 3, and `g` itself is stuck at 1, silently.
Fix: make the counter an argument and return the new value; rebind the global at the call site.
"""

from jax import jit

g = 0


@jit
def f():
    global g
    g = g+1
    return g


def main():
    values = [f(), f(), f()]  # gives 1, 2, 3 eagerly
    return values, g
