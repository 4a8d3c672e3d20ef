from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnames=("s",))
def f(x, y, n, m, flag: bool, v: jax.Array, s):
    a = x
    b = y
    c = x * 0.0
    k = 0
    ok = x > y
    st = {"p": x * 0.0}
    t = (x, y)
    b -= c
    a = a * s
    k2 = 0
    stop2 = False
    while not stop2:
        k2 = k2 + 1
        stop2 = k2 >= n
        buf = np.zeros(3)
        buf[1] = x
        b = b + buf.sum()
        if x.ndim == 0:
            a, b = b, a + c
            st = {"p": st["p"] * 0.5 + x}
            b = m * 2 + k
        else:
            c = c + 100.0
        if (v > 0).any():
            b, c = c, b + b
            st["p"] = st["p"] + b
        stop2 = stop2 or (a < 1.0)
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
