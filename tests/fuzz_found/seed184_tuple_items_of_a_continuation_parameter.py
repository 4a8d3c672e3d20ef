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
    def inner(w):
        return w * 2.0 + a
    if x > 0 and 2.0 < 1:
        ok = ok and a > 0
        a = m - 1
    elif k > m:
        if ok:
            b = m - 1
            a *= 2.0
            a = c + jnp.arange(n).sum() * 0.5
        elif v[1] < 1.0:
            t = (t[0] * 0.5, 0.5)
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        else:
            t = (m - 1, t[1])
            a -= y
        c += y
    elif a > b:
        b = inner(1.0)
    elif x < 0 or c > 1:
        st["p"] = st["p"] + 0.5
        if ok:
            t = (t[1], t[0] + 1.0)
        elif v[1] < b:
            if s > 1:
                c = c * 2.0
            buf = np.zeros(3)
            buf[1] = y
            c = c + buf.sum()
            a = a * SCALE
        elif c < a:
            a, c = c, a + b
            a = scaled(b, a)
            st["p"] = st["p"] + 2.0
        elif 2.0 > 0 and c < 1:
            a -= 1.0
        else:
            c += b
            b = inner(0.5)
            buf = np.zeros(3)
            buf[1] = c
            c = c + buf.sum()
        a = scaled(0.5, 1.0)
    elif 0.5 > 0 and b < 1:
        k = k * 0.5
    else:
        st = {"p": st["p"] * 0.5 + x}
        b = scaled(b, b)
        if not ok:
            k = k + 1
            st = {"p": st["p"] * 0.5 + 1.0}
    if x.ndim == 0:
        b = 0.5 * m
    else:
        c = c + 100.0
    if v[1] < c:
        a = scaled(y, y)
        k = k + 1
        if v.mean() > 0:
            c -= 0.5
            c = y if b > 0 or flag else x
            t = (t[1], t[0] + c)
    elif k > m:
        print("k and k:", k, k)
        print("b and k:", b, k)
        a = scaled(0.5, x)
    elif not 1.0 > 0.5:
        b = y if (v > 0).any() else b
        if s > 1:
            b = b * 2.0
        for _ in range(n):
            c = scaled(a, 0.5)
            b = b + jnp.arange(n).sum() * 0.5
    elif 0.5 < 0 or b > 1:
        c = jnp.tanh(1.0) + c
    elif 1.0 < 0 or 0.5 > 1:
        c = x * 1.0
        c = 0.5 if ok and a > 0 else a
    else:
        t = (t[0] * 0.5, c)
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
