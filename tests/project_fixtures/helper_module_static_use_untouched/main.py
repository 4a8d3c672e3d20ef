import jax
import jax.numpy as jnp

from model import dense


@jax.jit
def forward(x, w):
    return dense(x, w, "relu") + dense(x, w)


SAMPLES = [("forward", (jnp.ones((2, 3)), jnp.ones((3, 2))), {}), ("forward", (-jnp.ones((2, 3)), jnp.ones((3, 2))), {})]
