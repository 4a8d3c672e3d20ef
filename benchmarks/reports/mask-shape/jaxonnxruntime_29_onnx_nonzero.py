"""An ONNX-to-JAX runtime implements the ONNX NonZero operator with `jnp.nonzero` and runs the
converted model under `jax.jit`.

Source: https://github.com/google/jaxonnxruntime/issues/29
Fails: `jnp.stack(jnp.nonzero(x))` inside the jitted model raises ConcretizationTypeError: the
    number of nonzero entries is data-dependent ("The size argument of jnp.nonzero must be
    statically specified").
Fix: pad to the static upper bound, `jnp.nonzero(x, size=x.size)` (the runtime's "fully
    padding" mode); the caller reads the first `count` columns.
"""

import jax
import jax.numpy as jnp
import numpy as np


def onnx_nonzero(*input_args):
    """The impl for https://github.com/onnx/onnx/blob/v1.12.0/docs/Operators.md#NonZero."""
    assert len(input_args) == 1
    (x,) = input_args
    return jnp.stack(jnp.nonzero(x))


def onnx_relu(x):
    return jnp.maximum(x, 0)


def onnx_add(a, b):
    return a + b


class OnnxModel:
    """A tiny converted graph: Y = NonZero(Relu(X + B))."""

    def __init__(self, bias):
        self.nodes = [("Add", onnx_add), ("Relu", onnx_relu), ("NonZero", onnx_nonzero)]
        self.bias = bias

    def model_func(self, inputs):
        x = inputs
        for op_type, fn in self.nodes:
            x = fn(x, self.bias) if op_type == "Add" else fn(x)
        return x


def main():
    model = OnnxModel(bias=jnp.array([[0.5, -1.0, 0.0], [-2.0, 1.0, 0.25]]))
    infer = jax.jit(model.model_func)
    results = []
    for inputs in (jnp.array([[1.0, 0.5, 0.0], [1.0, -1.0, 2.0]]),
                   jnp.zeros((2, 3)) - 5.0,
                   jnp.ones((2, 3)) * 3.0):
        indices = infer(inputs)
        count = int(np.count_nonzero(np.maximum(np.asarray(inputs) + np.asarray(model.bias), 0)))
        results.append(indices[:, :count])
    return results
