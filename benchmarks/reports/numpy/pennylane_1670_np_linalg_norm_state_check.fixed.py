"""A jitted QNode prepares a state vector on a jax qubit device, which checks its normalisation.

Source: https://github.com/PennyLaneAI/pennylane/issues/1670
Fails: `_apply_state_vector` checks `np.allclose(np.linalg.norm(state, ord=2), 1.0, ...)`; under
    jit the state is a tracer and `np.linalg.norm` raises TracerArrayConversionError.
Fix: compute the norm with `jnp.linalg.norm` and keep the check as a runtime check on the traced
    value, `eqx.error_if(state, ~jnp.allclose(...), msg)`, instead of a Python `if ... raise`.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

tolerance = 1e-5


class DefaultQubitJax:
    C_DTYPE = jnp.complex64

    def __init__(self, wires):
        self.wires = list(wires)
        self.num_wires = len(self.wires)

    def _asarray(self, x, dtype=None):
        return jnp.asarray(x, dtype=dtype)

    def _apply_state_vector(self, state, device_wires):
        state = self._asarray(state, dtype=self.C_DTYPE)
        n_state_vector = state.shape[0]
        if state.ndim != 1 or n_state_vector != 2 ** len(device_wires):
            raise ValueError("State vector must be of length 2**wires.")
        state = eqx.error_if(
            state,
            ~jnp.allclose(jnp.linalg.norm(state, ord=2), 1.0, atol=tolerance),
            "Sum of amplitudes-squared does not equal one.",
        )
        return state.reshape([2] * self.num_wires)

    def expval_pauli_x(self, state, wire):
        flipped = jnp.flip(state, axis=wire)
        return jnp.real(jnp.sum(jnp.conj(state) * flipped))


dev = DefaultQubitJax(wires=list(range(2)))


def circuit(x):
    state = dev._apply_state_vector(x, device_wires=dev.wires)
    return jnp.stack([dev.expval_pauli_x(state, i) for i in range(dev.num_wires)])


qnode = jax.jit(circuit)


def main():
    state_vector = np.array([0.5 + 0.5j, 0.5 + 0.5j, 0, 0])
    other = jnp.array([0.6, 0.0, 0.0, 0.8])
    try:
        qnode(jnp.array([1.0, 1.0, 0.0, 0.0]))
        rejected = 0
    except Exception:
        rejected = 1
    return qnode(state_vector), qnode(other), rejected
