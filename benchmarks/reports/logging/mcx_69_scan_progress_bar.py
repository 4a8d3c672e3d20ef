"""A `progress_bar` decorator wraps the body of a compiled `lax.scan` sampler and prints
"Iteration i/n" every `print_rate` iterations.

Source: https://github.com/rlouf/mcx/issues/69
Fails: inside the jitted scan `iter_num` is a tracer, so the rate test
    `if iter_num % print_rate == 0:` raises TracerBoolConversionError (and a bare `print`
    would only show a tracer once).
Fix: test the rate with `lax.cond` and print with `jax.debug.callback(_print_consumer, ...)`,
    as the issue's host-callback design does.
"""

import jax
import jax.numpy as jnp
from jax import jit, lax

EXPECT_STDOUT = True


def _print_consumer(arg):
    iter_num, n_iter = arg
    print(f"Iteration {iter_num}/{n_iter}")


def _progress_bar(arg, result):
    """
    Print progress of a scan/loop only if the iteration number is a multiple of the print_rate
    Usage: carry = progress_bar((iter_num, n_iter, print_rate), carry)
    """
    iter_num, n_iter, print_rate = arg
    if iter_num % print_rate == 0:
        _print_consumer((iter_num, n_iter))
    return result


def progress_bar(num_samples):
    """
    Decorator that adds a progress bar to `body_fun` used in `lax.scan`.
    Note that `body_fun` must be looping over `jnp.arange(num_samples)`.
    This means that `iter_num` is the current iteration number
    """
    def pbar_factory(func):
        print_rate = int(num_samples/10)
        def wrapper_progress_bar(carry, iter_num):
            iter_num = _progress_bar((iter_num, num_samples, print_rate), iter_num)
            return func(carry, iter_num)
        return wrapper_progress_bar
    return pbar_factory


num_samples = 50


@jit
def sample_scan(rng_key, position):
    @progress_bar(num_samples)
    def one_step(state, iter_num):
        rng_key, position = state
        rng_key, subkey = jax.random.split(rng_key)
        proposal = position + 0.5 * jax.random.normal(subkey, position.shape)
        accept = jnp.sum(proposal ** 2) < jnp.sum(position ** 2) + 1.0
        position = jnp.where(accept, proposal, position)
        return (rng_key, position), position

    _, samples = lax.scan(one_step, (rng_key, position), jnp.arange(num_samples))
    return samples


def main():
    return sample_scan(jax.random.PRNGKey(0), jnp.zeros(2))
