"""A training script that fails under jit where no analysis of the source can see it: the
step is jitted through a table of optimizers, and the gradient clipping it calls has an `if`
on a traced norm. `jitfix check` finds nothing; the run shows the failure:

    jitfix run -- python examples/train.py
"""
import jax
import jax.numpy as jnp


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def clipped(g, limit):
    norm = jnp.linalg.norm(g)
    if norm > limit:
        g = g * (limit / norm)
    return g


def sgd_step(w, x, y, lr):
    g = jax.grad(loss)(w, x, y)
    return w - lr * clipped(g, 1.0)


OPTIMIZERS = {"sgd": sgd_step}


def main(steps=20, optimizer="sgd"):
    x = jax.random.normal(jax.random.PRNGKey(0), (32, 3))
    y = x @ jnp.array([1.0, -2.0, 0.5])
    step = jax.jit(OPTIMIZERS[optimizer])
    w = jnp.zeros(3)
    for _ in range(steps):
        w = step(w, x, y, 0.1)
    print(f"loss after {steps} steps: {float(loss(w, x, y)):.4f}")


if __name__ == "__main__":
    main()
