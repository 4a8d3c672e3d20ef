"""A repeated-layer stack scans its layers and asserts each layer's output is finite.

Source: https://github.com/apple/axlearn/issues/815
Fails: `check_numerics` does `assert bool(jnp.isfinite(x).all()), ...`; inside the scanned,
    jitted forward pass `bool()` of a tracer raises TracerBoolConversionError (the check "doesn't
    work inside jit, pmap and scan").
Fix: stage the check as a runtime error with `eqx.error_if` and thread the checked value on.
"""

import jax
import jax.numpy as jnp

_enable_numeric_checks = True


def check_numerics(x, msg_fmt: str = "", **msg_kwargs):
    """Checks that all elements in `x` are finite."""
    global _enable_numeric_checks  # pylint: disable=global-statement,global-variable-not-assigned
    if _enable_numeric_checks:
        assert bool(jnp.isfinite(x).all()), f"Check numerics {msg_fmt.format(**msg_kwargs)}: {x}"


class FeedForwardLayer:
    def forward(self, layer_params, inputs):
        hidden = jnp.exp(inputs @ layer_params["w1"])
        return inputs + hidden @ layer_params["w2"]


class Repeat:
    def __init__(self, layer, name):
        self.layer = layer
        self.name = name

    def forward(self, params, inputs):
        def fn(carry, layer_params):
            carry = self.layer.forward(layer_params, carry)
            check_numerics(carry, "{name} output", name=self.name)
            return carry, jnp.mean(carry)

        return jax.lax.scan(fn, inputs, params)


def main():
    model = Repeat(FeedForwardLayer(), name="decoder/repeat")
    forward = jax.jit(model.forward)
    n_layers, dim = 3, 4
    params = {
        "w1": 0.1 * jnp.ones((n_layers, dim, dim)),
        "w2": 0.05 * jnp.ones((n_layers, dim, dim)),
    }
    inputs = jnp.linspace(-1.0, 1.0, 8).reshape(2, dim)
    results = [forward(params, inputs)]
    try:
        results.append(forward(params, 300.0 * inputs))
    except (AssertionError, ValueError, RuntimeError):
        results.append("rejected: non-finite activations")
    return results
