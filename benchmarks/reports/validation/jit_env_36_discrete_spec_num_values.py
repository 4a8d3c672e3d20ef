"""An environment's DiscreteArray action spec checks that `num_values` is positive.

Source: https://github.com/joeryjoery/jit_env/issues/36
Fails: the spec promotes `num_values` with `jnp.asarray` and then tests
    `if not (num_values > 0).all(): raise ValueError(...)`; when the spec is built inside a
    jitted function, even a constant `jnp.asarray` is staged, so the test raises
    TracerBoolConversionError.
Fix: `num_values` is static spec metadata: promote it with `np.asarray`, so the check runs on a
    concrete value at trace time.
"""

import jax
import jax.numpy as jnp
import numpy as np


class BoundedArray:
    def __init__(self, shape, dtype, minimum, maximum, name=""):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.minimum = minimum
        self.maximum = maximum
        self.name = name


class DiscreteArray(BoundedArray):
    def __init__(self, num_values, dtype=jnp.int32, name=""):
        num_values = jnp.asarray(num_values, dtype)
        if not (num_values > 0).all():
            raise ValueError(
                f"`num_values` may only contain positive integers, "
                f"got {num_values}."
            )
        self.num_values = num_values
        super().__init__(num_values.shape, dtype, 0, num_values - 1, name)


class GridWorld:
    def __init__(self, num_actions):
        self.num_actions = num_actions

    def action_spec(self):
        return DiscreteArray(self.num_actions, name="action")


def make_random_policy(env):
    @jax.jit
    def policy_step(key, observation):
        spec = env.action_spec()
        key, subkey = jax.random.split(key)
        action = jax.random.randint(subkey, spec.shape, spec.minimum, spec.maximum + 1)
        return key, action, observation + action

    return policy_step


def main():
    results = []
    for env in (GridWorld(4), GridWorld([3, 2]), GridWorld(0)):
        try:
            step = make_random_policy(env)
            key, obs = jax.random.PRNGKey(0), jnp.zeros((), jnp.int32)
            actions = []
            for _ in range(3):
                key, action, obs = step(key, obs)
                actions.append(action)
            results.append(actions)
        except ValueError:
            results.append("rejected: num_values must be positive")
    return results
