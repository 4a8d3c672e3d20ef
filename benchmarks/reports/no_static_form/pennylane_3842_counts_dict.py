"""A jitted two-qubit QNode returns `qml.counts`: a dict from each observed bitstring to its number of shots.

Source: https://github.com/PennyLaneAI/pennylane/issues/3842
Category: python-structure
Fails: under `jax.jit` the samples are tracers; `counts` needs the set of outcomes that actually
    occurred (`jnp.unique(..., return_counts=True)`, no size) and turns each into a string key:
    ConcretizationTypeError. The keys of the returned dict depend on the sampled data.
Fix: none with data-dependent keys: return the samples (or counts over all 2**n outcomes in a
    fixed order, as PennyLane's `all_outcomes=True` does) from the jitted function, and build the
    dict of observed bitstrings outside jit.
"""

import jax
import jax.numpy as jnp

SHOTS = 100


def rx(theta):
    c, s = jnp.cos(theta / 2), jnp.sin(theta / 2)
    return jnp.array([[c, -1j * s], [-1j * s, c]])


def counts(samples):
    outcomes, num = jnp.unique(samples, axis=0, return_counts=True)
    return {"".join(str(int(bit)) for bit in outcome): int(n) for outcome, n in zip(outcomes, num)}


def circuit(param, key):
    # These two gates represent our QML model: RX on wire 0, then CNOT(0, 1).
    state = jnp.zeros(4, dtype=jnp.complex64).at[0].set(1.0)
    state = jnp.kron(rx(param), jnp.eye(2)) @ state
    cnot = jnp.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]], dtype=jnp.complex64)
    state = cnot @ state
    probs = jnp.abs(state) ** 2
    outcomes = jax.random.choice(key, 4, (SHOTS,), p=probs / probs.sum())
    bits = jnp.stack([outcomes // 2, outcomes % 2], axis=-1)
    return counts(bits[:, :1])  # qml.counts(wires=0)


def main():
    jitted = jax.jit(circuit)
    key = jax.random.PRNGKey(0)
    return [jitted(jnp.array(p), key) for p in (0.0, 1.1, jnp.pi)]
