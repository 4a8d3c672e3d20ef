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
    if x.ndim == 0:
        if k > 0:
            k += m
            c = 1.0 + v.sum()
            b *= y
            return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
        elif x < 0 or c > 1:
            a = a * SCALE
            a = 1.0 * m
            return a + 1.0, b, c - b, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] - t[1]
        else:
            for j in range(s):
                b = b + 0.5
        print("k and k:", k, k)
        c = c * m
    else:
        c = c + 100.0
    if 1.0 < c:
        if y < 0 or 1.0 > 1:
            c = inner(1.0)
        for w in v:
            b, c = c, b + x
            k = k * 0.5
            a = b * m
            if w > 0.5:
                break
            c = c + w * 0.5
        if k > m:
            ok = not ok
            ok = not ok
        elif v.mean() > 0:
            k += m
        else:
            a *= 2.0
            b = scaled(0.5, 0.5)
    else:
        st = {"p": st["p"] * 0.5 + a}
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


