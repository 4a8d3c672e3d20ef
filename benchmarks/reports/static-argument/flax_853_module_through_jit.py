"""An eval step receives the model object itself (a Linen-style Module) as its first argument.

Source: https://github.com/google/flax/issues/853
Fails: the module is not a pytree of arrays: `jax.jit(eval_step)(model, params, batch)`
    raises TypeError (`Model(features=3)` is not a valid JAX type).
Fix: the module is hashable configuration, so mark it static:
    `partial(jax.jit, static_argnums=0)` (it then acts as a constant inside the step).
"""

import dataclasses

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class Model:
    features: int

    def apply(self, variables, x):
        params = variables["params"]
        hidden = jax.nn.relu(x @ params["hidden"])
        return hidden[:, : self.features] @ params["head"]


def compute_metrics(logits, labels):
    one_hot = jax.nn.one_hot(labels, logits.shape[-1])
    loss = -jnp.mean(jnp.sum(one_hot * jax.nn.log_softmax(logits), axis=-1))
    accuracy = jnp.mean(jnp.argmax(logits, -1) == labels)
    return {"loss": loss, "accuracy": accuracy}


@jax.jit
def eval_step(model, params, batch):
    logits = model.apply({"params": params}, batch["X"])
    return compute_metrics(logits, batch["y"])


def eval_model(model, params, test_ds):
    metrics = eval_step(model, params, test_ds)
    metrics = jax.device_get(metrics)
    summary = jax.tree_util.tree_map(lambda x: x.item(), metrics)
    return summary["loss"], summary["accuracy"]


def main():
    key = jax.random.PRNGKey(0)
    params = {"hidden": jax.random.normal(key, (4, 6)), "head": jnp.eye(3, 3) * 2.0}
    test_ds = {"X": jnp.linspace(-1.0, 1.0, 20).reshape(5, 4), "y": jnp.array([0, 1, 2, 1, 0])}
    small = {"hidden": params["hidden"], "head": jnp.ones((2, 3))}
    return eval_model(Model(3), params, test_ds), eval_model(Model(2), small, test_ds)
