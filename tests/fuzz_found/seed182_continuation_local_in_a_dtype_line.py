from functools import partial

import jax
import jax.numpy as jnp


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
    if ok:
        c, b = b, c + b
        print(f"k={k}")
    elif y > 0 and a < 1:
        b = x * m
        ok = c <= b
        b = inner(y)
    elif b > 0 or flag:
        a = scaled(2.0, 2.0)
        c, a = a, c + 0.5
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    elif not c > 0.5:
        t = (t[0] * 0.5, b)
        a = a * SCALE
        if flag:
            a = a * s
        elif -1 < 0.5 < 1:
            a = a * 0 + n
        else:
            a = a * 0 + n
            a = v[0] * 1.0
            print("k and k:", k, k)
    else:
        for w in v:
            c = c + w * 0.5
            if w > y:
                continue
            c = scaled(a, 0.5)
        b = inner(1.0)
        b = b * SCALE
    k2 = 0
    while k2 < n and (k > 1):
        k2 = k2 + 1
        for i in range(2):
            c = c + i
        for i in range(n):
            c = c + i * 0.5
            a -= b
        c = c + i
    ok = not ok
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
