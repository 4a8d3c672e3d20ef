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
    if x.ndim == 0:
        t = (t[0] * 0.5, 0.5)
        if m == -1:
            a -= c
            b = v[0] * 1.0
        elif m == 0:
            a = c if flag else b
            a = 2.0 * x
            st["p"] = st["p"] + 2.0
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        elif m == 1:
            b -= y
        elif m == 2:
            b = m * 2 + k
            a = 2.0 * 1.0
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        else:
            k = k + 1
            ok = x <= 1.0
        print("b", b)
    else:
        c = c + 100.0
    if not ok:
        if v[1] < y:
            k += m
            buf = np.zeros(3)
            buf[1] = c
            b = b + buf.sum()
            b = y + jnp.arange(n).sum() * 0.5
        else:
            b, a = a, b + a
            ok = ok and a > 0
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    elif -1 < y < 1:
        k1 = 0
        while k1 < n and (b > 0 or flag):
            k1 = k1 + 1
            print(f"k={k}")
            b = 0.5 + a
            k = k + 1
        if k == 1:
            c, b = b, c + b
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        elif k == 2:
            for j in range(s):
                b = b + 0.5
            b = y + jnp.arange(n).sum() * 0.5
        elif k == 3:
            b = b * SCALE
            a = inner(0.5)
            k = k + 1
        elif k == 4:
            k += m
            t = (t[0] * 0.5, 2.0)
        else:
            c -= 0.5
            b = b * SCALE
            k += m
        k1 = 0
        while k1 < n and (x >= y):
            k1 = k1 + 1
            b = scaled(y, x)
            a = a * s
            st["p"] = st["p"] + 0.5
    elif c > 0 and c < 1:
        c = inner(a)
        ok = ok and a > 0
        a = a * SCALE
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    else:
        print(f"a={a}")
        t = (m - 1, t[1])
    st = {"p": st["p"] * 0.5 + a}
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
