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
    if not 0.5 > 0.5:
        k += m
        if 2.0 > 0 and 0.5 < 1:
            a = scaled(x, y)
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        elif flag:
            a = scaled(x, b)
            c = 2.0 + v.sum()
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        elif -1 < y < 1:
            a *= c
            st["p"] = st["p"] + 2.0
        else:
            ok = ok and a > 0
    else:
        print("a", a)
        print(f"c={c}")
        a = 0.5 + b
    k2 = 0
    stop2 = False
    while not stop2:
        k2 = k2 + 1
        stop2 = k2 >= n
        k += m
        b = a + v.sum()
        b = inner(y)
        stop2 = stop2 or (2.0 >= 1.0)
    if k > m:
        print("a and k:", a, k)
        print("k", k)
    elif -1 < 1.0 < 1:
        if x.ndim == 0:
            t = (t[1], t[0] + c)
            k = k + 1
            c = 1.0 * c
        else:
            c = c + 100.0
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    elif ok and a > 0:
        if v[1] < b:
            ok = 0.5 >= 1.0
        a = c + c
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    elif a > 1.0:
        print(f"b={b}")
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    elif 2.0 < 0 or a > 1:
        st = {"p": st["p"] * 0.5 + 0.5}
        a = a * s
        c = c * s
        return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
    else:
        b = a * b
        return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
