"""Flax's MNIST example: a module-level jitted `train_step`, called on batches of one fixed size.

Source: https://github.com/google/flax/blob/main/examples/mnist/train.py
Category: recompile
Correct: `train_step` is jitted once at module level (not inside the loop), and `train_epoch`
    drops the incomplete last batch (`perms[:steps_per_epoch * batch_size]`), so every call
    has the same shapes and `train_step` compiles once.
"""

import jax
import jax.numpy as jnp
import numpy as onp


def onehot(labels, num_classes=10):
    x = (labels[..., None] == jnp.arange(num_classes)[None])
    return x.astype(jnp.float32)


def cross_entropy_loss(logits, labels):
    return -jnp.mean(jnp.sum(onehot(labels) * logits, axis=-1))


def compute_metrics(logits, labels):
    loss = cross_entropy_loss(logits, labels)
    accuracy = jnp.mean(jnp.argmax(logits, -1) == labels)
    return {"loss": loss, "accuracy": accuracy}


def model_apply(params, images):
    return jax.nn.log_softmax(images @ params["w"] + params["b"])


@jax.jit
def train_step(params, batch):
    """Train for a single step."""
    def loss_fn(params):
        logits = model_apply(params, batch["image"])
        loss = cross_entropy_loss(logits, batch["label"])
        return loss, logits
    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
    (_, logits), grad = grad_fn(params)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grad)
    metrics = compute_metrics(logits, batch["label"])
    return params, metrics


def train_epoch(params, train_ds, batch_size, rng):
    """Train for a single epoch."""
    train_ds_size = len(train_ds["image"])
    steps_per_epoch = train_ds_size // batch_size

    perms = rng.permutation(len(train_ds["image"]))
    perms = perms[:steps_per_epoch * batch_size]  # skip incomplete batch
    perms = perms.reshape((steps_per_epoch, batch_size))
    batch_metrics = []
    for perm in perms:
        batch = {k: v[perm] for k, v in train_ds.items()}
        params, metrics = train_step(params, batch)
        batch_metrics.append(metrics)

    batch_metrics_np = jax.device_get(batch_metrics)
    epoch_metrics_np = {k: onp.mean([metrics[k] for metrics in batch_metrics_np]) for k in batch_metrics_np[0]}
    return params, epoch_metrics_np


def main():
    data_rng = onp.random.RandomState(1)
    train_ds = {"image": data_rng.normal(size=(50, 6)).astype(onp.float32), "label": data_rng.randint(0, 10, size=50)}
    params = {"w": jnp.zeros((6, 10)), "b": jnp.zeros(10)}
    input_rng = onp.random.RandomState(0)
    history = []
    for epoch in range(3):
        params, metrics = train_epoch(params, train_ds, 16, input_rng)
        history.append(metrics)
    return params, history
