from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


SCALE = 1.0


def set_scale(value):
    global SCALE
    SCALE = value


@partial(jax.jit, static_argnames=("s",))
def f(x, y, n, m, flag: bool, v, s):
    a = x
    b = y
    c = x * 0.0
    k = 0
    ok = x > y
    st = {"p": x * 0.0}
    t = (x, y)
    def inner(w):
        return w * 2.0 + a
    k2 = 0
    while k2 < n and (not 0.5 > 0.5):
        k2 = k2 + 1
        st["p"] = st["p"] + a
        for i in range(2):
            c = c + i
        for i in range(n):
            c = c + i * 0.5
            print("c and k:", c, k)
            print("c and k:", c, k)
        c = c + i
        if (v > 0).any():
            k = k + 1
            st["p"] = st["p"] + x
            c = 0.5 + v.sum()
        elif x > 2.0:
            for j in range(s):
                c = c + 0.5
        elif not ok:
            b = inner(b)
            a = a * SCALE
            k = k + 1
        elif y > x:
            for j in range(s):
                c = c + 0.5
            b = b * SCALE
        else:
            if s > 1:
                c = c * 2.0
            ok = not ok
            if b > 0 or flag:
                break
    if x < 0 or 1.0 > 1:
        if -1 < 1.0 < 1:
            ok = not ok
            if s > 1:
                c = c * 2.0
        elif flag and a > 0:
            a = c * m
        b = a + jnp.arange(n).sum() * 0.5
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    elif b > 0 or flag:
        if not 2.0 > 0.5:
            a = 1.0 + v.sum()
        elif not x > 0.5:
            a = inner(2.0)
            b = inner(1.0)
            t = (t[1], t[0] + 2.0)
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        elif x >= a:
            b = jnp.tanh(y) + 2.0
            a, b = b, a + y
            ok = ok and a > 0
        else:
            c = inner(1.0)
            a += 2.0
            t = (t[0] * 0.5, 0.5)
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    else:
        st = {"p": st["p"] * 0.5 + b}
        if x.ndim == 0:
            buf = np.zeros(3)
            buf[1] = c
            b = b + buf.sum()
            b += b
        else:
            c = c + 100.0
        if -1 < 1.0 < 1:
            c = inner(1.0)
            c = a if ok and a > 0 else 1.0
        elif 2.0 >= b:
            c = a + c
            c = 1.0 if v[1] < c else a
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
