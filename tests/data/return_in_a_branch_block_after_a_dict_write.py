# Fuzzed (benchmarks/fuzz.py): `st["p"]` written in a branch, and returning `if`s in the `else`
# block of the same `if`, with more code (an `if`, a `while`) after them in the block.
from functools import partial

import jax
import jax.numpy as jnp


def scaled(v, w):
    return v * 0.5 + w


@partial(jax.jit, static_argnames=("s",))
def f(x, y, n, m, flag: bool, v, s):
    a = x
    b = y
    c = x * 0.0
    k = 0
    ok = x > y
    st = {"p": x * 0.0}
    t = (x, y)
    ok = ok and a > 0
    if v.mean() > 0:
        a = x + jnp.arange(n).sum() * 0.5
    elif k > 0:
        print("a and k:", a, k)
        c = a * m
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    elif v[1] < x:
        if s > 1:
            a = a * 2.0
    else:
        if flag:
            c = a + jnp.arange(n).sum() * 0.5
            c, a = a, c + b
            b, a = a, b + a
        elif k > m:
            a, b = b, a + 2.0
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        else:
            st["p"] = st["p"] + 2.0
            b = scaled(1.0, b)
            ok = not ok
        if k > 0:
            st = {"p": st["p"] * 0.5 + a}
            t = (t[1], t[0] + x)
            b = 0.5 + jnp.arange(n).sum() * 0.5
        elif 1.0 < 0.5:
            c = scaled(0.5, 0.5)
        else:
            print("c and k:", c, k)
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        k1 = 0
        while k1 < n and (a <= 1.0):
            k1 = k1 + 1
            c = scaled(a, y)
    a = b * y
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
