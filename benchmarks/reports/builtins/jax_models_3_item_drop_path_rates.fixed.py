"""A ConvNeXt-style stack whose blocks get linearly increasing stochastic-depth rates.

Source: https://github.com/DarshanDeshpande/jax-models/pull/3
Fails: `dp_rates = [x.item() for x in jnp.linspace(0, self.drop_path, sum(self.depths))]`
    runs inside the jitted forward pass, where the linspace is a tracer; `.item()` calls
    `float()` on it and raises ConcretizationTypeError.
Fix: drop the list comprehension and index the array, `dp_rates[curr + j]`, as the PR does.
"""

import jax
import jax.numpy as jnp


def layer_norm(x, eps=1e-6):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps)


class DropPath:
    def __init__(self, dropout_prob=0.1):
        self.dropout_prob = dropout_prob

    def __call__(self, input, deterministic, rng):
        if deterministic:
            return input
        keep_prob = 1 - self.dropout_prob
        shape = (input.shape[0],) + (1,) * (input.ndim - 1)
        random_tensor = jnp.floor(keep_prob + jax.random.uniform(rng, shape))
        return jnp.divide(input, keep_prob) * random_tensor


class ConvNeXtBlock:
    def __init__(self, dim, drop_path=0.0, layer_scale_init_value=0.1):
        self.dim = dim
        self.drop_path = drop_path
        self.layer_scale_init_value = layer_scale_init_value

    def init(self, key):
        k1, k2 = jax.random.split(key)
        return {
            "w1": jax.random.normal(k1, (self.dim, 4 * self.dim)) / jnp.sqrt(self.dim),
            "w2": jax.random.normal(k2, (4 * self.dim, self.dim)) / jnp.sqrt(4 * self.dim),
            "gamma": jnp.full((self.dim,), self.layer_scale_init_value),
        }

    def __call__(self, params, x, deterministic, rng):
        y = jax.nn.gelu(layer_norm(x) @ params["w1"]) @ params["w2"]
        y = params["gamma"] * y
        return x + DropPath(self.drop_path)(y, deterministic, rng)


class ConvNeXt:
    def __init__(self, depths=(2, 3), dims=(4, 4), drop_path=0.2):
        self.depths = depths
        self.dims = dims
        self.drop_path = drop_path

    def init(self, key):
        keys = jax.random.split(key, sum(self.depths))
        params, curr = [], 0
        for i, depth in enumerate(self.depths):
            params.append([ConvNeXtBlock(self.dims[i]).init(keys[curr + j]) for j in range(depth)])
            curr += depth
        return params

    def __call__(self, params, x, deterministic, rng):
        dp_rates = jnp.linspace(0, self.drop_path, sum(self.depths))
        curr = 0
        for i in range(len(self.depths)):
            for j in range(self.depths[i]):
                rng, block_rng = jax.random.split(rng)
                block = ConvNeXtBlock(self.dims[i], drop_path=dp_rates[curr + j])
                x = block(params[i][j], x, deterministic, block_rng)
            curr += self.depths[i]
        return x.mean(axis=0)


def main():
    model = ConvNeXt()
    params = model.init(jax.random.PRNGKey(0))
    x = jnp.linspace(-1.0, 1.0, 24).reshape(6, 4)
    forward = jax.jit(model.__call__, static_argnames="deterministic")
    rng = jax.random.PRNGKey(1)
    return forward(params, x, deterministic=True, rng=rng), forward(params, x, deterministic=False, rng=rng)
