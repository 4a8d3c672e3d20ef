"""A HyperNeRF-style `train_step` (scheduled `warp_alpha`, an elastic loss, Adam-free SGD)
reports its scalar parameters and losses from inside the compiled step.

Source: https://github.com/JokerYan/NeRF-DS/issues/3
Fails: `ptrain_step` is a compiled function (pmapped in the repository, jitted here), so the
    f-string `print(f'warp_alpha={scalar_params.warp_alpha:.2f} loss={loss:.4f}')` runs once at
    trace time and shows tracers, never the per-step values the report wants to inspect.
Fix: `jax.debug.print('warp_alpha={} loss={}', scalar_params.warp_alpha, loss)`.
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True


class ScalarParams(NamedTuple):
    learning_rate: float
    warp_alpha: float
    elastic_loss_weight: float


class TrainState(NamedTuple):
    params: dict
    step: jax.Array


def compute_elastic_loss(jacobian):
    svals = jnp.linalg.svd(jacobian, compute_uv=False)
    return jnp.sum(jnp.log(jnp.clip(svals, 1e-6)) ** 2)


def model_apply(params, points, warp_alpha):
    warped = points + warp_alpha * jnp.tanh(points @ params["warp"])
    return warped @ params["rgb"], params["warp"]


def train_step(model_apply, rng_key, state, batch, scalar_params):
    def loss_fn(params):
        rgb, jacobian = model_apply(params, batch["points"], scalar_params.warp_alpha)
        rgb_loss = jnp.mean((rgb - batch["rgb"]) ** 2)
        elastic_loss = compute_elastic_loss(jacobian)
        return rgb_loss + scalar_params.elastic_loss_weight * elastic_loss

    loss, grad = jax.value_and_grad(loss_fn)(state.params)
    print(f'warp_alpha={scalar_params.warp_alpha:.2f} loss={loss:.4f}')
    params = jax.tree_util.tree_map(lambda p, g: p - scalar_params.learning_rate * g, state.params, grad)
    return TrainState(params, state.step + 1), loss


def main():
    ptrain_step = jax.jit(functools.partial(train_step, model_apply))
    params = {"warp": jnp.eye(3) * 0.5 + 0.1, "rgb": jnp.linspace(-1.0, 1.0, 9).reshape(3, 3)}
    state = TrainState(params, jnp.int32(0))
    points = jnp.cos(jnp.arange(12.0)).reshape(4, 3)
    batch = {"points": points, "rgb": jnp.abs(points)}
    losses = []
    for step in range(3):
        warp_alpha = min(1.0, step / 2)  # the annealing schedule
        scalar_params = ScalarParams(learning_rate=0.05, warp_alpha=warp_alpha, elastic_loss_weight=0.01)
        state, loss = ptrain_step(jax.random.PRNGKey(step), state, batch, scalar_params)
        losses.append(loss)
    return state, losses
