"""An emulator that accepts a dict of cosmological parameters, inside a jitted log-likelihood.

Source: https://github.com/dpiras/cosmopower-jax/issues/9
Fails: `predict` orders the dict into an array with `np.stack([input_dict[k] for k in ...])`;
    the sampled parameters are tracers under jit (numpyro's NUTS in the report), and NumPy's
    `stack` calls `asanyarray` on them: TracerArrayConversionError.
Fix: order the parameters with `jnp.stack`, so the dict path works on traced values too.
"""

import jax
import jax.numpy as jnp
import numpy as np


class CPJ:
    """The few pieces of cosmopower_jax.CosmoPowerJAX the report goes through."""

    parameters = ("omega_b", "omega_cdm", "h", "n_s", "ln10^{10}A_s")

    def __init__(self, n_hidden=8, n_out=6, seed=0):
        rng = np.random.default_rng(seed)
        sizes = [len(self.parameters), n_hidden, n_hidden, n_out]
        self.weights = [
            (rng.normal(size=(a, b)) / np.sqrt(a), rng.normal(size=(b,)) * 0.1)
            for a, b in zip(sizes[:-1], sizes[1:])
        ]
        self.param_train_mean = np.array([0.022, 0.12, 0.68, 0.96, 3.05])
        self.param_train_std = np.array([0.002, 0.01, 0.05, 0.02, 0.1])
        self.feature_train_mean = np.linspace(1.0, 2.0, n_out)
        self.feature_train_std = np.linspace(0.1, 0.2, n_out)

    def _dict_to_ordered_arr_np(self, input_dict):
        return jnp.stack([input_dict[k] for k in self.parameters], axis=-1)

    def _predict(self, input_vec):
        x = (input_vec - self.param_train_mean) / self.param_train_std
        for i, (w, b) in enumerate(self.weights):
            x = x @ w + b
            if i < len(self.weights) - 1:
                x = jax.nn.sigmoid(x) * x
        return x * self.feature_train_std + self.feature_train_mean

    def predict(self, input_vec):
        if isinstance(input_vec, dict):
            input_vec = self._dict_to_ordered_arr_np(input_vec)
        if input_vec.ndim == 1:
            input_vec = input_vec[None, :]
        return self._predict(input_vec)


emulator = CPJ()


@jax.jit
def like(theta, cinv, datavec):
    omega_cdm, omega_b, logA, h, n_s = theta
    params = {"omega_b": omega_b, "omega_cdm": omega_cdm, "h": h, "n_s": n_s, "ln10^{10}A_s": logA}
    model = emulator.predict(params)[0]
    diff = datavec - model
    return -0.5 * diff @ cinv @ diff


def main():
    cinv = jnp.eye(6) * 4.0
    datavec = jnp.linspace(1.0, 2.0, 6)
    fiducial = jnp.array([0.12, 0.022, 3.05, 0.68, 0.96])
    shifted = jnp.array([0.13, 0.021, 3.10, 0.70, 0.95])
    return like(fiducial, cinv, datavec), like(shifted, cinv, datavec)
