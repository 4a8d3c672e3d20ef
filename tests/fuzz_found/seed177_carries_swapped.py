from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


def scaled(v, w):
    return v * 0.5 + w


SCALE = 1.0


def set_scale(value):
    global SCALE
    SCALE = value


@partial(jax.jit, static_argnames=("s",))
def f(x, y, n, m, flag: bool, v: jax.Array, s):
    a = x
    b = y
    c = x * 0.0
    k = 0
    ok = x > y
    st = {"p": x * 0.0}
    t = (x, y)
    if not flag:
        if x <= b:
            a = 2.0 + v.sum()
            a = a * SCALE
            buf = np.zeros(3)
            buf[1] = 0.5
            b = b + buf.sum()
        elif -1 < c < 1:
            b = b * 0 + n
            c += y
            b = x + v.sum()
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    elif flag and a > 0:
        buf = np.zeros(3)
        buf[1] = 2.0
        b = b + buf.sum()
        if x.ndim == 0:
            print(f"k={k}")
        else:
            c = c + 100.0
        k = k + 1
    if c > 0.5:
        c = 1.0 + 0.5
        k1 = 0
        stop1 = False
        while not stop1:
            k1 = k1 + 1
            stop1 = k1 >= n
            for j in range(s):
                b = b + 0.5
            stop1 = stop1 or (b < 0 or a > 1)
        k1 = 0
        stop1 = False
        while not stop1:
            k1 = k1 + 1
            stop1 = k1 >= n
            a = m * 2 + k
            b, a = a, b + b
            a, c = c, a + a
            stop1 = stop1 or (c < 0.5)
    else:
        if s > 1:
            b = b * 2.0
        c = c * s
        c = b * m
    if x < 0 or x > 1:
        a = 0.5 if not flag else y
        c = jnp.tanh(1.0) + a
    elif not 1.0 > 0.5:
        k = k + 1
        st["p"] = st["p"] + a
        if ok and a > 0:
            k = k + 1
            b = v[0] * a
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        else:
            c = 0.5 + jnp.arange(n).sum() * 0.5
            a = m * 2 + k
    elif flag:
        c = c * SCALE
        k = k + 1
    elif v.mean() > 0:
        b = scaled(c, a)
    elif 2.0 < 0 or 1.0 > 1:
        st["p"] = st["p"] + 0.5
        if 0.5 < 0 or 2.0 > 1:
            for j in range(s):
                c = c + 0.5
            c = c * SCALE
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        elif (v > 0).any():
            b *= c
        elif flag and a > 0:
            a = m - 1
            b = c + jnp.arange(n).sum() * 0.5
        elif x > 0 and 0.5 < 1:
            c = c * m
            print("k", k)
            c = scaled(a, 1.0)
        elif c > 0 and b < 1:
            b = scaled(c, y)
            c = a + v.sum()
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        else:
            a = a + b
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        a = 2.0 - 2.0
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    else:
        a = a + a
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]

