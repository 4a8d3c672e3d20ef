"""A jitted function stashes its input in a module-level global `x` (declared `global`) for
later inspection, and the global is read after the calls.

Source: https://github.com/jax-ml/jax/issues/3086
Fails: the assignment runs only while tracing, so `x` holds a tracer that escaped the jitted
    function (and later calls never update it); using `x` afterwards raises
    UnexpectedTracerError.
Fix: return the value from the jitted function and assign the global at the call site.
"""

import jax

x = None


@jax.jit
def f(y):
    return y + 2, y


def main():
    global x
    first, x = f(7)
    second, x = f(8)
    return first, second, x * 2
