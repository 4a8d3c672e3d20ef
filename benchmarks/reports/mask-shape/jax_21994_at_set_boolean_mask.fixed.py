"""Zero out entries through `.at[...]` with boolean masks: values below a threshold in a vector,
and in the first four rows of a matrix the columns whose first-row entry is even.

Source: https://github.com/jax-ml/jax/issues/21994
Fails: `x.at[x < 5].set(0)` and `x.at[:4, jnp.mod(x[0], 2) == 0].set(0)` are well defined with
    static shapes, but `.at[]` with a traced boolean mask raises NonConcreteBooleanIndexError.
Fix: `jnp.where(x < 5, 0, x)`, and `x.at[:4].set(jnp.where(jnp.mod(x[0], 2) == 0, 0, x[:4]))`.
"""

import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    return jnp.where(x < 5, 0, x)


@jax.jit
def f_rows(x):
    return x.at[:4].set(jnp.where(jnp.mod(x[0], 2) == 0, 0, x[:4]))


def main():
    x = jnp.arange(10)
    m = jnp.reshape(jnp.arange(100), shape=(10, 10))
    odd_first_row = m.at[0].set(2 * jnp.arange(10) + 1)
    return f(x), f(x + 5), f_rows(m), f_rows(odd_first_row)
