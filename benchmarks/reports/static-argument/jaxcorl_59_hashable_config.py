"""TD3-BC runs `n_jitted_updates` critic/actor updates in one jitted call, configured by a config object.

Source: https://github.com/nissymori/JAX-CORL/pull/59
Fails: the config class (a pydantic model there, a dataclass here) defines `__eq__`
    without `__hash__`, so passing it through `static_argnums=(3,)` raises ValueError
    (non-hashable static arguments are not supported).
Fix: make the config hashable, as the pull request did: `__hash__` returns
    `hash(self.__repr__())`.
"""

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp


@dataclasses.dataclass
class TD3BCConfig:
    batch_size: int = 4
    n_jitted_updates: int = 8
    critic_lr: float = 1e-2
    actor_lr: float = 1e-2
    policy_freq: int = 2  # update actor every policy_freq updates
    alpha: float = 2.5  # BC loss weight
    tau: float = 0.005  # target network update rate
    discount: float = 0.99  # discount factor


class Transition(NamedTuple):
    observations: jnp.ndarray
    actions: jnp.ndarray
    rewards: jnp.ndarray
    next_observations: jnp.ndarray
    dones: jnp.ndarray


class TD3BCTrainState(NamedTuple):
    actor: jnp.ndarray
    critic: jnp.ndarray
    target_actor: jnp.ndarray
    target_critic: jnp.ndarray


def actor_apply(params, obs):
    return jnp.tanh(obs @ params)


def critic_apply(params, obs, action):
    return jnp.concatenate([obs, action], axis=-1) @ params


def target_update(params, target_params, tau):
    return params * tau + target_params * (1 - tau)


class TD3BC(object):
    @classmethod
    def update_actor(self, train_state, batch, config):
        def actor_loss_fn(actor_params):
            predicted_action = actor_apply(actor_params, batch.observations)
            q_value = critic_apply(jax.lax.stop_gradient(train_state.critic), batch.observations, predicted_action)
            loss_lambda = config.alpha / jax.lax.stop_gradient(jnp.abs(q_value).mean() + 1.0)
            bc_loss = jnp.square(predicted_action - batch.actions).mean()
            return -1.0 * q_value.mean() * loss_lambda + bc_loss

        loss, grad = jax.value_and_grad(actor_loss_fn)(train_state.actor)
        return train_state._replace(actor=train_state.actor - config.actor_lr * grad), loss

    @classmethod
    def update_critic(self, train_state, batch, config):
        def critic_loss_fn(critic_params):
            q_pred = critic_apply(critic_params, batch.observations, batch.actions)
            next_action = actor_apply(train_state.target_actor, batch.next_observations)
            q_next = critic_apply(train_state.target_critic, batch.next_observations, next_action)
            target = batch.rewards + config.discount * q_next * (1 - batch.dones)
            return jnp.square(q_pred - jax.lax.stop_gradient(target)).mean()

        loss, grad = jax.value_and_grad(critic_loss_fn)(train_state.critic)
        return train_state._replace(critic=train_state.critic - config.critic_lr * grad), loss

    @classmethod
    def update_n_times(self, train_state, data, rng, config):
        for _ in range(config.n_jitted_updates):
            rng, batch_rng = jax.random.split(rng, 2)
            batch_idx = jax.random.randint(batch_rng, (config.batch_size,), 0, len(data.observations))
            batch = jax.tree_util.tree_map(lambda x: x[batch_idx], data)
            train_state, critic_loss = self.update_critic(train_state, batch, config)
            if _ % config.policy_freq == 0:
                train_state, actor_loss = self.update_actor(train_state, batch, config)
                train_state = train_state._replace(
                    target_critic=target_update(train_state.critic, train_state.target_critic, config.tau),
                    target_actor=target_update(train_state.actor, train_state.target_actor, config.tau),
                )
        return train_state, {"critic_loss": critic_loss, "actor_loss": actor_loss}


def make_dataset():
    obs = jnp.linspace(-1.0, 1.0, 24).reshape(8, 3)
    actions = jnp.tanh(obs[:, :2])
    return Transition(obs, actions, obs.sum(-1), jnp.roll(obs, -1, axis=0), (jnp.arange(8) == 7).astype(jnp.float32))


def main():
    dataset = make_dataset()
    algo = TD3BC()
    update_fn = jax.jit(algo.update_n_times, static_argnums=(3,))
    results = []
    for config in (TD3BCConfig(n_jitted_updates=1), TD3BCConfig(n_jitted_updates=5, policy_freq=3)):
        train_state = TD3BCTrainState(jnp.full((3, 2), 0.1), jnp.full((5,), 0.2), jnp.full((3, 2), 0.1),
                                      jnp.full((5,), 0.2))
        rng = jax.random.PRNGKey(0)
        for i in range(3):
            rng, update_rng = jax.random.split(rng)
            train_state, update_info = update_fn(train_state, dataset, update_rng, config)
        results.append((train_state, update_info))
    return results
