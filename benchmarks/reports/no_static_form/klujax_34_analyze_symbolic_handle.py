"""A SAX-style circuit model builds its sparse solver inside the traced physics function; the symbolic analysis is a host object.

Source: https://github.com/gdsfactory/klujax/issues/34
Category: host-value
Fails: `coupler_ring` calls `circuit(...)` inside the jitted Newton step, so `analyze()` runs under
    the trace: it gets the handle of the host-side symbolic factorisation back from the
    primitive and calls `KLUSymbolic(int(raw_symbol))`; the handle is a tracer:
    ConcretizationTypeError. The handle names a host object, so its value is needed on the host.
Fix: none inside the trace: analyse the fixed sparsity pattern once, outside jit (the
    recommended pattern builds `_circuit_fn = circuit(...)` at module level and only calls it in
    the traced function).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

# The "C++" side: symbolic analyses live on the host and are referred to by an integer handle.
_SYMBOLIC_STORE = {}


def _analyze_host(Ai, Aj, n_col):
    counts = np.bincount(np.asarray(Aj), minlength=n_col)
    handle = len(_SYMBOLIC_STORE) + 1
    _SYMBOLIC_STORE[handle] = np.argsort(counts, kind="stable")  # a fill-reducing column order
    return np.uint32(handle)


class KLUSymbolic:
    def __init__(self, handle: int):
        self.handle = handle
        self.column_order = _SYMBOLIC_STORE[handle]


def analyze(Ai, Aj, n_col):
    raw_symbol = jax.pure_callback(functools.partial(_analyze_host, n_col=n_col),
                                   jax.ShapeDtypeStruct((), jnp.uint32), Ai, Aj)
    return KLUSymbolic(int(raw_symbol))


def solve_with_symbol(Ai, Aj, Ax, b, symbolic: KLUSymbolic):
    n = b.shape[0]
    A = jnp.zeros((n, n), Ax.dtype).at[Ai, Aj].add(Ax)
    order = symbolic.column_order
    x_permuted = jnp.linalg.solve(A[:, order], b)
    return jnp.zeros_like(x_permuted).at[order].set(x_permuted)


def circuit(netlist):
    Ai = jnp.array([i for i, _ in netlist])
    Aj = jnp.array([j for _, j in netlist])
    n = int(max(max(i, j) for i, j in netlist)) + 1

    def circuit_fn(wl):
        coupling = 0.3 + 0.1 * jnp.sin(2 * jnp.pi * wl)
        Ax = jnp.where(Ai == Aj, 1.0 + wl, -coupling)
        b = jnp.arange(1.0, n + 1.0)
        symbolic = analyze(Ai, Aj, n)
        return solve_with_symbol(Ai, Aj, Ax, b, symbolic)

    return circuit_fn


NETLIST = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 0), (1, 2), (2, 1)]


def coupler_ring(wl=1.55):
    circuit_fn = circuit(NETLIST)
    return circuit_fn(wl=wl)


@jax.jit
def newton_step(wl):
    s = coupler_ring(wl)
    return wl - 0.01 * jnp.sum(s)


def main():
    return [newton_step(jnp.float32(wl)) for wl in (1.5, 1.55, 1.6)]
