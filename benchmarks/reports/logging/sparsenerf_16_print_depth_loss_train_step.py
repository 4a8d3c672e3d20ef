"""A NeRF `train_step` (coarse and fine renderings, a depth-ranking loss) prints the per-level
depth losses while training.

Source: https://github.com/Wanggcong/SparseNeRF/issues/16
Fails: the step is compiled (pmapped in the repository, jitted here), so
    `print('all_depth_loss:', all_depth_loss)` runs once at trace time and shows
    `Traced<ShapedArray(float32[2])>...`, the output the report asks about.
Fix: `jax.debug.print('all_depth_loss: {}', all_depth_loss)` prints the values at every step.
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import random

EXPECT_STDOUT = True


class Config(NamedTuple):
    dataset_loader: str = "llff"
    coarse_loss_mult: float = 0.1
    weight_decay_mult: float = 0.0
    grad_max_val: float = 0.1


class Model:
    """Stands in for the mip-NeRF linen model: two renderings, coarse then fine."""

    def apply(self, variables, key, rays):
        renderings = []
        for level in range(2):
            t = rays @ variables["density"][level]
            rgb = jax.nn.sigmoid(rays @ variables["color"][level])
            renderings.append({"rgb": rgb, "distance_mean": jax.nn.softplus(t)})
        return renderings


def tree_sum(tree):
    return jax.tree_util.tree_reduce(lambda x, y: x + y, tree, initializer=0)


def train_step(model, config, rng, variables, batch, learning_rate):
    """One optimization step."""
    rng, key = random.split(rng)

    def loss_fn(variables):
        weight_l2 = tree_sum(jax.tree_util.tree_map(lambda z: jnp.sum(z ** 2), variables))
        renderings = model.apply(variables, key, batch["rays"])
        losses = []
        all_depth_loss = []
        for rendering in renderings:
            losses.append(((rendering["rgb"] - batch["rgb"]) ** 2).mean())
            rays_per_superpixels = 4
            depth = rendering["distance_mean"]
            depth = depth.reshape(-1, rays_per_superpixels).transpose()
            margin1 = 1e-4
            margin2 = 1e-4
            depth_loss0_0 = jnp.mean(jnp.maximum(depth[0, :] - depth[1, :] + margin1, 0))
            depth_loss0_1 = jnp.mean(jnp.maximum(jnp.abs(depth[0, :] - depth[2, :]) - margin2, 0))
            depth_loss0_2 = jnp.mean(jnp.maximum(jnp.abs(depth[1, :] - depth[3, :]) - margin2, 0))
            if config.dataset_loader == "llff":
                depth_loss = depth_loss0_0 + (depth_loss0_1 + depth_loss0_2) * 0.01
            else:
                depth_loss = depth_loss0_0 + (depth_loss0_1 + depth_loss0_2) * 1.0
            all_depth_loss.append(depth_loss)
        losses = jnp.array(losses)
        all_depth_loss = jnp.array(all_depth_loss)
        loss = (losses[-1] + config.coarse_loss_mult * jnp.sum(losses[:-1])
                + config.weight_decay_mult * weight_l2 + 0.5 * all_depth_loss[-1])
        return loss, (losses, all_depth_loss)

    (loss, loss_aux), grad = jax.value_and_grad(loss_fn, has_aux=True)(variables)
    (losses, all_depth_loss) = loss_aux
    print('all_depth_loss:', all_depth_loss)

    grad = jax.tree_util.tree_map(lambda z: jnp.clip(z, -config.grad_max_val, config.grad_max_val), grad)
    variables = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, variables, grad)
    return variables, {"loss": loss, "losses": losses}, rng


def main():
    model, config = Model(), Config()
    train_jstep = jax.jit(functools.partial(train_step, model, config))
    variables = {"density": jnp.linspace(-1.0, 1.0, 6).reshape(2, 3),
                 "color": jnp.linspace(0.5, -0.5, 18).reshape(2, 3, 3)}
    rays = jnp.sin(jnp.arange(24.0)).reshape(8, 3)
    batch = {"rays": rays, "rgb": jnp.cos(jnp.arange(24.0)).reshape(8, 3) ** 2}
    rng = random.PRNGKey(20200823)
    history = []
    for step in range(3):
        variables, stats, rng = train_jstep(rng, variables, batch, 0.5)
        history.append(stats)
    return variables, history
