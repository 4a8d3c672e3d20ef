"""Four pitfalls in one training script: a traced `if`, a `print` of a traced value, a
Python loop bounded by a traced value, and a size argument that must be static."""
import jax
import jax.numpy as jnp


@jax.jit
def normalize(x):
    norm = jnp.linalg.norm(x)
    if norm > 1.0:
        x = x / norm
    return x


@jax.jit
def report(loss):
    print("loss:", loss)
    return loss


@jax.jit
def power_sum(x, n):
    total = jnp.zeros_like(x)
    for i in range(n):
        total = total + x ** i
    return total


@jax.jit
def window(x, size):
    return jnp.zeros(size) + x[:size]


def main():
    x = jnp.arange(8.0)
    for step in range(3):
        y = normalize(x * (step + 1))
        loss = report(jnp.sum(y ** 2))
    print(float(loss), power_sum(y, 3).sum(), window(y, 4).sum())


if __name__ == "__main__":
    main()
