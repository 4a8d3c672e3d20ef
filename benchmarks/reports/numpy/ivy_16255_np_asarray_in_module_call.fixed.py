"""A small MLP whose linear layer coerces its input with `np.asarray` before the dense map.

Source: https://github.com/unifyai/ivy/pull/16255
Fails: `TestFlaxLinear.__call__` starts with `x = np.asarray(x)`; when the model is traced
    (here by jax.jit, in the report by ivy's graph compiler) `x` is a tracer and NumPy raises
    TracerArrayConversionError.
Fix: `x = jnp.asarray(x)`, which accepts tracers.
"""

import jax
import jax.numpy as jnp


class Dense:
    """The few lines of flax.linen.Dense the report relies on."""

    def __init__(self, features):
        self.features = features

    def init(self, key, in_features):
        kernel = jax.random.normal(key, (in_features, self.features)) / jnp.sqrt(in_features)
        return {"kernel": kernel, "bias": jnp.zeros((self.features,))}

    def __call__(self, params, x):
        return x @ params["kernel"] + params["bias"]


class TestFlaxLinear:
    def __init__(self, out_size):
        self.out_size = out_size
        self._linear = Dense(self.out_size)

    def init(self, key, in_features):
        return self._linear.init(key, in_features)

    def __call__(self, params, x):
        x = jnp.asarray(x)
        return self._linear(params, x)


class TestFlaxModule:
    def __init__(self, in_size, out_size, hidden_size=4):
        self.in_size = in_size
        self.out_size = out_size
        self.hidden_size = hidden_size
        self._linear0 = TestFlaxLinear(self.hidden_size)
        self._linear1 = TestFlaxLinear(self.hidden_size)
        self._linear2 = TestFlaxLinear(self.out_size)

    def init(self, key):
        k0, k1, k2 = jax.random.split(key, 3)
        return {
            "linear0": self._linear0.init(k0, self.in_size),
            "linear1": self._linear1.init(k1, self.hidden_size),
            "linear2": self._linear2.init(k2, self.hidden_size),
        }

    def __call__(self, params, x):
        x = jnp.expand_dims(x, 0)
        x = jnp.tanh(self._linear0(params["linear0"], x))
        x = jnp.tanh(self._linear1(params["linear1"], x))
        return jnp.tanh(self._linear2(params["linear2"], x))[0]


def main():
    model = TestFlaxModule(in_size=2, out_size=3)
    params = model.init(jax.random.PRNGKey(0))
    forward = jax.jit(model.__call__)
    test_input = jnp.array([[0.1, 0.2]])
    batch = jnp.array([[0.1, 0.2], [-1.0, 0.5], [2.0, -3.0]])
    return forward(params, test_input), forward(params, batch)
