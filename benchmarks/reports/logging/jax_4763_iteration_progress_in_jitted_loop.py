"""A jitted Python loop prints its iteration number every `print_rate` steps as progress.

Source: https://github.com/jax-ml/jax/issues/4763
Fails: under jit the `print` inside `progress_bar` runs while tracing, so the progress lines
    appear only during the first (compiling) call and never on later calls.
Fix: stage the printing with `jax.debug.callback(progress_bar, i, n_iter=..., print_rate=...,
    ordered=True)`, which runs on every call, in loop order.
"""

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True


def progress_bar(i, n_iter, print_rate):
    if i % print_rate == 0:
        print(f"Iteration {i}/{n_iter}")
    else:
        pass


@jax.jit
def my_python_loop(a):
    """
    Python loop that increments `a` 20 times
    """
    n_iter, print_rate = 20, 5
    for i in range(n_iter):
        progress_bar(i, n_iter=n_iter, print_rate=print_rate)
        a += 1
    return a


def main():
    return my_python_loop(jnp.int32(0)), my_python_loop(jnp.int32(100))
