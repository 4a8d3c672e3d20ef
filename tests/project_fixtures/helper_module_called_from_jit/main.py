import jax
import jax.numpy as jnp

from model import clip_by_norm


@jax.jit
def step(w, g):
    return w - 0.1 * clip_by_norm(g, 1.0)


SAMPLES = [("step", (jnp.ones(3), jnp.array([3.0, 0.0, 4.0])), {}),
           ("step", (jnp.ones(3), jnp.array([0.1, 0.2, 0.0])), {})]
