"""An autoencoder's whole training run is wrapped in a jitted `main` (to avoid an OOM), and the
loop inside it prints the loss of each step.

Source: https://github.com/google/flax/issues/1733
Fails: inside the jitted function `print(f"step {step} loss {loss:.4f}")` runs at trace time
    on a tracer, and the format spec raises TypeError (unsupported format string passed to
    ...Tracer.__format__); the report: "now I can't print out the loss because I'm still
    inside jitted code".
Fix: `jax.debug.print("step {} loss {:.4f}", step, loss)` formats the runtime values.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True


class TrainState(NamedTuple):
    params: dict
    step: int


def encoder(params, x):
    return jax.nn.relu(x @ params["enc"])


def decoder(params, z):
    return z @ params["dec"]


def loss_fn(params, batch):
    return jnp.mean((decoder(params, encoder(params, batch)) - batch) ** 2)


def train_step(state, batch, learning_rate=0.5):
    loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)
    params = jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, state.params, grads)
    return TrainState(params, state.step + 1), loss


@jax.jit
def train(params, dataset):
    state = TrainState(params=params, step=0)
    for step in range(3):
        state, loss = train_step(state, dataset[step % dataset.shape[0]])
        print(f"step {step} loss {loss:.4f}")
    return state.params


def main():
    params = {"enc": jnp.array([[0.5, -0.25], [0.25, 0.5], [-0.5, 0.25], [0.125, 0.125]]),
              "dec": jnp.array([[0.5, 0.25, -0.25, 0.125], [0.25, -0.5, 0.5, 0.25]])}
    dataset = jnp.array([[[1.0, 0.0, 0.5, 0.0]], [[0.0, 1.0, 0.0, 0.5]]])
    return train(params, dataset)
