"""A PPO-style jitted update scans over minibatches and logs the mean total loss with
`logging.info` from a `_log_loss` helper.

Source: https://github.com/LeCAR-Lab/CoVO-MPC/issues/2
Fails: `_log_loss` runs while the update is traced, so `logging.info(total_loss_mean)` logs
    `[INFO]: Traced<ShapedArray(float32[])>...` (JitTracer in today's JAX), once, instead
    of the loss of each update.
Fix: stage the log call: `jax.debug.callback(logging.info, total_loss_mean)` logs the runtime
    value on every update.
"""

import logging
import sys

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="[%(levelname)s]: %(message)s")


def _log_loss(total_loss):
    total_loss_mean = jnp.mean(total_loss[0])
    jax.debug.callback(logging.info, total_loss_mean)


def _loss_fn(params, minibatch):
    obs, targets, advantages = minibatch
    value = obs @ params["critic"]
    logits = obs @ params["actor"]
    value_loss = jnp.mean((value - targets) ** 2)
    actor_loss = -jnp.mean(jax.nn.log_sigmoid(logits) * advantages)
    return value_loss + actor_loss, (value_loss, actor_loss)


@jax.jit
def update(params, batch):
    def _update_minbatch(params, minibatch):
        (total_loss, aux), grads = jax.value_and_grad(_loss_fn, has_aux=True)(params, minibatch)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.125 * g, params, grads)
        return params, (total_loss, aux)

    params, total_loss = jax.lax.scan(_update_minbatch, params, batch)
    _log_loss(total_loss)
    return params


def main():
    params = {"critic": jnp.array([0.5, -0.5]), "actor": jnp.array([0.25, 0.25])}
    obs = jnp.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [0.5, 0.0]]])
    batch = (obs, jnp.array([[1.0, 0.0], [0.5, 0.5]]), jnp.array([[1.0, -1.0], [0.5, 0.0]]))
    for _ in range(3):
        params = update(params, batch)
    return params
