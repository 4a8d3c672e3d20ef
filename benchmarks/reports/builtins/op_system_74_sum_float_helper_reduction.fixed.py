"""A compiled SIR right-hand side whose alias `N` uses a helper reduction, integrated under jit.

Source: https://github.com/ACCIDDA/op_system/issues/74
Fails: the helper reduction is `sum(float(v) for v in values)`; inside the jitted integrator the
    states are tracers, so `float()` raises ConcretizationTypeError and the RHS cannot be traced
    (the report: the callable "concretizes values to NumPy/Python scalars").
Fix: reduce with backend ops, `jnp.sum(jnp.stack(values))`, as the report proposes.
"""

import jax
import jax.numpy as jnp


def _total(*values):
    """Helper reduction available to alias expressions."""
    return jnp.sum(jnp.stack(values))


def compile_rhs(spec):
    state_names = spec["states"]
    aliases = spec["aliases"]
    equations = spec["equations"]

    def eval_fn(t, y, params):
        env = dict(params)
        env["t"] = t
        for i, name in enumerate(state_names):
            env[name] = y[i]
        for alias, expr in aliases.items():
            env[alias] = expr(env)
        return jnp.stack([equations[name](env) for name in state_names])

    return eval_fn


SIR = {
    "states": ("S", "I", "R"),
    "aliases": {"N": lambda env: _total(env["S"], env["I"], env["R"])},
    "equations": {
        "S": lambda env: -env["beta"] * env["S"] * env["I"] / env["N"],
        "I": lambda env: env["beta"] * env["S"] * env["I"] / env["N"] - env["gamma"] * env["I"],
        "R": lambda env: env["gamma"] * env["I"],
    },
}

rhs = compile_rhs(SIR)


@jax.jit
def simulate(params, y0, dt):
    def step(y, t):
        k1 = rhs(t, y, params)
        k2 = rhs(t + dt, y + dt * k1, params)
        y = y + 0.5 * dt * (k1 + k2)
        return y, y

    _, path = jax.lax.scan(step, y0, jnp.arange(40) * dt)
    return path


def main():
    y0 = jnp.array([990.0, 10.0, 0.0])
    fast = simulate({"beta": jnp.array(0.5), "gamma": jnp.array(0.1)}, y0, 0.5)
    slow = simulate({"beta": jnp.array(0.2), "gamma": jnp.array(0.15)}, y0, 1.0)
    return fast[::8], slow[-1], rhs(0.0, y0, {"beta": 0.3, "gamma": 0.1})
