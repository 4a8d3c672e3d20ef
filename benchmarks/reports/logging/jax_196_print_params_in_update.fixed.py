"""A jitted optimizer `update` prints the network parameters on every training step.

Source: https://github.com/jax-ml/jax/issues/196
Fails: under jit, `print('params', params)` runs once, at trace time, and shows tracers
    (`Traced<ShapedArray(float32[1,2])>...`) instead of the parameter values at each step.
Fix: `jax.debug.print('params {}', params)` prints the runtime values on every call.
"""

import jax
import jax.numpy as np
from jax import grad, jit
from jax.example_libraries import optimizers

EXPECT_STDOUT = True

opt_init, opt_update, get_params = optimizers.sgd(step_size=0.1)


def init_params():
    return [(np.array([[0.5, -0.25]]), np.array([0.125]))]


def predict(params, inputs):
    (W, b), = params
    return inputs @ W.T + b


def loss(params, batch):
    inputs, targets = batch
    return np.mean((predict(params, inputs) - targets) ** 2)


@jit
def update(i, opt_state, batch):
    params = get_params(opt_state)
    jax.debug.print('params {}', params)
    return opt_update(i, grad(loss)(params, batch), opt_state)


def main():
    batch = (np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([[1.0], [-1.0], [0.0]]))
    opt_state = opt_init(init_params())
    for i in range(3):
        opt_state = update(i, opt_state, batch)
    return get_params(opt_state)
