"""A training step takes an Equinox model (an MLP, and a `Lambda` wrapping an activation) and is wrapped in `jax.jit`.

Source: https://github.com/patrick-kidger/equinox/pull/239
Fails: the model's pytree holds non-array leaves (the activation function), so
    `jax.jit(make_step)(model, x, y)` raises TypeError (a function is not a valid JAX type).
Fix: use `eqx.filter_jit`, which traces only the array leaves and treats the rest as static.
"""

import equinox as eqx
import jax
import jax.numpy as jnp


def loss_fn(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


def make_step(model, x, y, learning_rate):
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, x, y)
    updates = jax.tree_util.tree_map(lambda g: -learning_rate * g, grads)
    return loss, eqx.apply_updates(model, updates)


step = jax.jit(make_step)


def train(model, steps):
    x = jnp.linspace(-1.0, 1.0, 16).reshape(8, 2)
    y = jnp.sin(x)
    losses = []
    for _ in range(steps):
        loss, model = step(model, x, y, 0.1)
        losses.append(loss)
    return jnp.array(losses + [loss_fn(model, x, y)])


def main():
    mlp = eqx.nn.MLP(2, 2, 4, 2, key=jax.random.PRNGKey(0))
    wrapped = eqx.nn.Sequential([eqx.nn.Linear(2, 2, key=jax.random.PRNGKey(1)), eqx.nn.Lambda(jax.nn.relu)])
    return train(mlp, 0), train(mlp, 1), train(mlp, 4), train(wrapped, 3)
