"""Find the index of the n-th occurrence of a value in a vector (n traced), by marking the
other entries NaN and taking the one-argument where of the non-NaN entries.

Source: https://github.com/jax-ml/jax/issues/9578
Fails: `jnp.where(arr == arr)` (one-argument where) has a data-dependent size; under jit it
    raises ConcretizationTypeError ("The size argument of jnp.nonzero must be statically
    specified").
Fix: bound the result statically: `jnp.where(arr == arr, size=operand.shape[0])`, then index
    the n-th entry (n may stay traced).
"""

import jax
import jax.numpy as jnp


@jax.jit
def idx_n_th_occurence(operand, occurence, n=0):
    arr = jnp.where(operand == occurence, operand, jnp.nan)
    return jnp.where(arr == arr, size=operand.shape[0])[0][n]


def main():
    operand = jnp.array([3.0, 1.0, 3.0, 2.0, 3.0, 1.0])
    return (idx_n_th_occurence(operand, 3.0),
            idx_n_th_occurence(operand, 3.0, 2),
            idx_n_th_occurence(operand, 1.0, 1),
            idx_n_th_occurence(operand, 2.0, 0))
