"""A triangular (cyclic) learning-rate schedule drives a jitted SGD train step.

Source: https://github.com/google/flax/pull/1903
Fails: `learning_rate_fn(step)` is called with the train state's step inside the jitted
    `train_step`; `if cycle_step < top:` is on a tracer: TracerBoolConversionError (the HOWTO's
    schedule "did not play well with jit").
Fix: compute both ramps and select with `jnp.where(cycle_step < top, up, down)`.
"""

import dataclasses

import jax
import jax.numpy as jnp


def create_triangular_schedule(lr_min, lr_max, steps_per_cycle):
    top = (steps_per_cycle + 1) // 2

    def learning_rate_fn(step):
        cycle_step = step % steps_per_cycle
        lr = jnp.where(cycle_step < top,
                       lr_min + cycle_step / top * (lr_max - lr_min),
                       lr_max - ((cycle_step - top) / top) * (lr_max - lr_min))
        return lr

    return learning_rate_fn


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class TrainState:
    step: jnp.ndarray
    params: dict


def loss_fn(params, batch):
    inputs, targets = batch
    preds = inputs @ params["w"] + params["b"]
    return jnp.mean((preds - targets) ** 2)


def make_train_step(learning_rate_fn):
    @jax.jit
    def train_step(state, batch):
        loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)
        lr = learning_rate_fn(state.step)
        params = jax.tree_util.tree_map(lambda p, g: p - lr * g, state.params, grads)
        return TrainState(state.step + 1, params), {"loss": loss, "learning_rate": lr}

    return train_step


def main():
    learning_rate_fn = create_triangular_schedule(0.01, 0.1, steps_per_cycle=5)
    train_step = make_train_step(learning_rate_fn)
    inputs = jnp.linspace(-1.0, 1.0, 12).reshape(6, 2)
    batch = (inputs, inputs @ jnp.array([1.5, -2.0]) + 0.3)
    state = TrainState(jnp.array(0), {"w": jnp.zeros(2), "b": jnp.array(0.0)})
    history = []
    for _ in range(8):
        state, metrics = train_step(state, batch)
        history.append(metrics)
    return state.params, history
