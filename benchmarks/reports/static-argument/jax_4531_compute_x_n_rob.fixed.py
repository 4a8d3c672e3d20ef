"""One ADMM step of a multi-robot trajectory solver: solve for the stacked coefficients, then split them per robot.

Source: https://github.com/jax-ml/jax/issues/4531
Fails: `num`, `n_con` and `n_rob` are traced under jit, so `sol_x[0:n_rob*nvar]` raises
    IndexError (slice indices must be static) and `cx.reshape(n_rob, nvar)` could not
    be built either.
Fix: the robot counts set shapes, so they are static: `jit(compute_x, static_argnums=(0, 1, 2))`.
"""

import jax.numpy as jnp
from jax import jit


def compute_x(num, n_con, n_rob, P, Ax_eq, bx_eq, Ax_eq_obs, bx_eq_obs, d_obs_ij, alpha_ij,
              lamda_x, rho_w_alpha, cost_mat_inv_x):
    nvar = jnp.shape(P)[1]
    A_w = Ax_eq_obs

    aug_term = bx_eq_obs + 1.22 * d_obs_ij * jnp.cos(alpha_ij) - lamda_x / rho_w_alpha
    linterm_augment = -rho_w_alpha * jnp.dot(A_w.T, aug_term)
    lincost_mat = jnp.hstack((-linterm_augment, bx_eq))

    sol_x = jnp.dot(cost_mat_inv_x, lincost_mat)

    primal_sol_x = sol_x[0:n_rob * nvar]

    cx = primal_sol_x[0:n_rob * nvar]
    cx = cx.reshape(n_rob, nvar)

    x = jnp.dot(P, cx.T).T
    wc_alpha = jnp.dot(A_w, primal_sol_x) - bx_eq_obs
    return x[:, :num], wc_alpha[:n_con]


compute_x_jit = jit(compute_x, static_argnums=(0, 1, 2))


def problem(n_rob, nvar=3, num=5, n_obs=4, n_eq=2):
    P = jnp.linspace(0.0, 1.0, num * nvar).reshape(num, nvar) ** jnp.arange(1, nvar + 1)
    n = n_rob * nvar
    Ax_eq_obs = jnp.cos(jnp.arange(n_obs * n, dtype=jnp.float32).reshape(n_obs, n))
    cost_mat_inv_x = jnp.eye(n + n_eq) * 0.5 + 0.01
    return (P, jnp.zeros((n_eq, n)), jnp.ones(n_eq), Ax_eq_obs, jnp.linspace(0, 1, n_obs),
            jnp.full(n_obs, 0.5), jnp.linspace(0, 3, n_obs), jnp.zeros(n_obs), 2.0, cost_mat_inv_x)


def main():
    one_robot = compute_x_jit(5, 2, 1, *problem(1))
    three_robots = compute_x_jit(4, 3, 3, *problem(3))
    return one_robot, three_robots
