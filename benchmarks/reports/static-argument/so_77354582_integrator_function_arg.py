"""An explicit Euler ODE integrator, jitted, that takes the right-hand side `f` as its first argument.

Source: https://techqa.club/v/q/appending-to-list-alternative-workflow-for-jax-77354582
Fails: `integrator(f, t, x, dt)` passes a (jitted) Python function through `jax.jit`:
    TypeError (error interpreting argument as an abstract array: a function is not a
    valid JAX type).
Fix: the function is code, not data: mark it static, `partial(jit, static_argnums=0)`
    (functions are hashable; one compile per distinct `f`).
"""

import jax.numpy as jnp
from jax import jit


# Function to integrate.
@jit
def dxdt(t, x):
    return -x**2


# Euler method for simplicity.
@jit
def integrator(f, t, x, dt):
    return x + f(t, x) * dt


def solve(x0, n):
    t_arr = jnp.linspace(0, 10, n)
    dt = t_arr[1] - t_arr[0] if n > 1 else 0.1
    x_list = []
    # initialize x.
    x = x0
    for t in t_arr:
        x_list.append(x)
        x = integrator(dxdt, t, x, dt)
    x_list.append(x)
    return jnp.array(x_list)


def main():
    return solve(1.0, 0), solve(1.0, 1), solve(0.5, 100)
