"""Training step and model setup functions."""

import functools
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from . import camera_utils
from .configs import Config


class Batch(NamedTuple):
    pixels: camera_utils.Pixels
    rgb: Any
    rays: Optional[camera_utils.Rays]


def init_params():
    key = jax.random.PRNGKey(0)
    w_key, b_key = jax.random.split(key)
    return {'w': 0.1 * jax.random.normal(w_key, (10, 3)), 'b': 0.1 * jax.random.normal(b_key, (3,))}


def render(params, rays):
    """A tiny stand-in for the NeRF MLP + volume rendering."""
    features = jnp.concatenate([rays.origins, rays.viewdirs, rays.radii, rays.near, rays.far, rays.directions[..., :1]],
                               axis=-1)
    return jax.nn.sigmoid(features @ params['w'] + params['b'])


def train_step(config: Config, state, batch: Batch, cameras):
    """One optimization step."""
    if config.cast_rays_in_train_step:
        rays = camera_utils.cast_ray_batch(cameras, batch.pixels, xnp=jnp)
    else:
        rays = batch.rays

    def loss_fn(params):
        rendering = render(params, rays)
        return jnp.mean((rendering - batch.rgb) ** 2)

    loss, grad = jax.value_and_grad(loss_fn)(state)
    state = jax.tree_util.tree_map(lambda p, g: p - config.lr * g, state, grad)
    return state, loss


def create_train_step(config: Config):
    """Creates the jitted training step."""
    return jax.jit(functools.partial(train_step, config))
