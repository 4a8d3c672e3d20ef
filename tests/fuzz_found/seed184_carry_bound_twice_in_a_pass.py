from functools import partial

import jax
import jax.numpy as jnp


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
    c = c * SCALE
    c = jnp.tanh(2.0) + 2.0
    k2 = 0
    stop2 = False
    while not stop2:
        k2 = k2 + 1
        stop2 = k2 >= n
        c = x + jnp.arange(n).sum() * 0.5
        if k > 1:
            a *= 0.5
        else:
            t = (t[1], t[0] + 1.0)
            c = m * 2 + k
        stop2 = stop2 or (0.5 > 0 and 1.0 < 1)
    return a, b, c, k, jnp.asarray(ok, jnp.float32), st["p"], t[0] + t[1]
