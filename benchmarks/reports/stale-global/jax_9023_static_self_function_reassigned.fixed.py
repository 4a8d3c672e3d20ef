"""A class jits a `wrapper` method (with `self` static) that calls a function stored on the
instance; the function is reassigned with `assign_fn` between calls.

Source: https://github.com/jax-ml/jax/issues/9023
Fails: a static `self` is looked up in the cache by its hash, which does not change when
    `self.fn` is reassigned, so the compiled `wrapper` keeps calling the first function:
    `t.wrapper(1)` still gives 2 after `fn` became `x + 2`, silently.
Fix: pass the function to `wrapper` as a static argument (`t.wrapper(1, t.fn)`), so a new
    function is a new cache key and `wrapper` is retraced.
"""

from jax import jit
from functools import partial


class test:
    def __init__(self) -> None:
        pass
    @partial(jit, static_argnums=(0, 2))
    def wrapper(self,x,fn):
        return fn(x)
    def assign_fn(self,fn):
        self.fn = fn


def main():
    t = test()

    fn = lambda x: x + 1
    t.assign_fn(fn)
    first = t.wrapper(1, t.fn) # prints 2

    fn = lambda x: x + 2
    t.assign_fn(fn)
    second = t.wrapper(1, t.fn) # prints 3
    direct = t.fn(1) # prints 3
    third = t.wrapper(1, t.fn) # prints 3
    return first, second, direct, third
