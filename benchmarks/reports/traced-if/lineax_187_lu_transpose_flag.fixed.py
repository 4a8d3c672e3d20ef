"""An LU linear solver keeps a `transpose` flag in its state to solve with A or A^T.

Source: https://github.com/patrick-kidger/lineax/issues/187
Fails: the solver state is a pytree passed through jit, so its Python bool `transpose` arrives
    as a traced bool; `trans = 1 if transpose else 0` and `not transpose` raise
    TracerBoolConversionError.
Fix: branch on the flag with `jax.lax.cond(transpose, ...)` and flip it with `jnp.logical_not`.
"""

import jax
import jax.numpy as jnp
from jax.scipy.linalg import lu_factor, lu_solve


class LU:
    def init(self, matrix):
        lu_and_piv = lu_factor(matrix)
        return lu_and_piv, False

    def compute(self, state, vector):
        lu_and_piv, transpose = state
        return jax.lax.cond(
            transpose,
            lambda: lu_solve(lu_and_piv, vector, trans=1),
            lambda: lu_solve(lu_and_piv, vector, trans=0),
        )

    def transpose(self, state):
        lu_and_piv, transpose = state
        return lu_and_piv, jnp.logical_not(transpose)


solver = LU()


@jax.jit
def solve_and_adjoint(state, vector):
    forward = solver.compute(state, vector)
    adjoint = solver.compute(solver.transpose(state), vector)
    return forward, adjoint


def main():
    matrix = jnp.array([[4.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, 5.0]])
    vector = jnp.array([1.0, -2.0, 0.5])
    state = solver.init(matrix)
    return solve_and_adjoint(state, vector), solve_and_adjoint(solver.transpose(state), vector)
