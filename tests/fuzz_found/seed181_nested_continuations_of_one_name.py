from functools import partial

import jax
import jax.numpy as jnp


def scaled(v, w):
    return v * 0.5 + w


@partial(jax.jit, static_argnames=("s",))
def f(x, y, n, m, flag: bool, v: jax.Array, s):
    a = x
    b = y
    c = x * 0.0
    k = 0
    ok = x > y
    st = {"p": x * 0.0}
    t = (x, y)
    def inner(w):
        return w * 2.0 + a
    if k > 1:
        k1 = 0
        while k1 < n and (2.0 > a):
            k1 = k1 + 1
            print("k", k)
            k = k + 1
    elif not a > 0.5:
        a = 2.0 + jnp.arange(n).sum() * 0.5
        a = 1.0 + jnp.arange(n).sum() * 0.5
        k = k * 0.5
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    if v.mean() > 0:
        b = a + v.sum()
        ok = not ok
        b = 2.0 + jnp.arange(n).sum() * 0.5
    elif -1 < 2.0 < 1:
        if k > 1:
            k = k + 1
        elif 2.0 < 0 or b > 1:
            ok = k > 0
            k += m
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        elif x < 0 or c > 1:
            c = scaled(2.0, 0.5)
            b = inner(0.5)
            ok = not ok
        else:
            b, a = a, b + c
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    elif y < 0 or a > 1:
        a = a * m
        a = a + a
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    else:
        a = b if c > a else a
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    a, b = b, a + a
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
