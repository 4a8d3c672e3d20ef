# A helper of another module, called from a jitted step with the gradient: it is traced
# there, so its `if` on the gradient's norm becomes a lax.cond.
import jax.numpy as jnp


def clip_by_norm(g, limit):
    norm = jnp.linalg.norm(g)
    if norm > limit:
        g = g * (limit / norm)
    return g
# output
# A helper of another module, called from a jitted step with the gradient: it is traced
# there, so its `if` on the gradient's norm becomes a lax.cond.
import jax.numpy as jnp
from jax import lax


def clip_by_norm(g, limit):
    norm = jnp.linalg.norm(g)
    g_dtype = jnp.result_type(g * (limit / norm), g)

    def _if_norm_gt_limit(g):
        g = g * (limit / norm)
        return g

    g = lax.cond(norm > limit, _if_norm_gt_limit, lambda g: jnp.asarray(g, g_dtype), g)
    return g
