"""Parameters are initialised by a jitted `init` that draws from a module-global PRNG key in rng.py.

Source: https://github.com/jax-ml/jax/issues/5206
Fails: `model.init` is jitted, and `rng.next_key()` (another module) splits and reassigns the
    global `rng.key` while tracing: every later call replays the first compiled draw (the same
    numbers each time), and `rng.key` is left holding a leaked tracer, so the next eager use
    raises UnexpectedTracerError.
Fix: thread the key explicitly: `init(key)` splits it inside jit and returns the new key, and the
    caller stores it back on the host (`rng.key, w = model.init(rng.key)`).
"""

from . import model, rng


def main():
    draws = [model.sample_weight() for _ in range(3)]
    after = rng.next_key()  # the host keeps drawing from the same stream afterwards
    return draws, after
