"""jitfix: rewrite Python/JAX code so that it runs correctly under ``jax.jit``."""

__version__ = "0.1.0"
