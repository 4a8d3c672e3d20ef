"""An RL agent's jitted `update` (several critic steps per batch, `utd_ratio`) writes the new
TD-error priorities back into a prioritized replay buffer object.

Source: https://github.com/jax-ml/jax/issues/15093
Fails: `replay_buffer.update_priorities(...)` runs inside the jitted `update`, so it stores
    tracers on the buffer during tracing and is skipped on every cached call; the next
    eager use of the buffer (`sample_probs()`) raises UnexpectedTracerError.
Fix: return the new priorities from `update` and apply them to the buffer at the call site.
"""

from functools import partial

import jax
import jax.numpy as jnp


class PrioritizedReplayBuffer:
    def __init__(self, capacity, alpha=0.6):
        self.alpha = alpha
        self.priorities = jnp.ones(capacity)

    def update_priorities(self, batch_indices, batch_priorities):
        self.priorities = self.priorities.at[batch_indices].set(batch_priorities.reshape(-1))

    def sample_probs(self):
        scaled = self.priorities ** self.alpha
        return scaled / scaled.sum()


replay_buffer = PrioritizedReplayBuffer(capacity=8)


class Agent:
    def __init__(self, critic, lr=0.1):
        self.critic = critic
        self.lr = lr

    def update_critic(self, critic, mini_batch):
        def loss_fn(w):
            td = mini_batch['rewards'] + 0.9 * mini_batch['next_obs'] @ w - mini_batch['obs'] @ w
            return 0.5 * jnp.mean(td ** 2), td

        (loss, td), grad = jax.value_and_grad(loss_fn, has_aux=True)(critic)
        return critic - self.lr * grad, {'critic_loss': loss, 'prios': jnp.abs(td) + 1e-3}

    @partial(jax.jit, static_argnames=('self', 'utd_ratio'))
    def update(self, critic, batch, utd_ratio: int):
        new_critic = critic
        priority_updates = []
        for i in range(utd_ratio):

            def slice(x):
                assert x.shape[0] % utd_ratio == 0
                batch_size = x.shape[0] // utd_ratio
                return x[batch_size * i:batch_size * (i + 1)]

            mini_batch = jax.tree_util.tree_map(slice, batch)
            new_critic, critic_info = self.update_critic(new_critic, mini_batch)

            pro = (critic_info['prios'])
            pro1 = jnp.array([pro])
            indices = jnp.array(mini_batch['indices'])
            priority_updates.append((indices, pro1))

        return new_critic, critic_info, priority_updates


def apply_priority_updates(priority_updates):
    for indices, pro1 in priority_updates:
        replay_buffer.update_priorities(batch_indices=indices, batch_priorities=pro1)


def make_batch(indices):
    obs = jnp.stack([jnp.cos(indices * 0.7), jnp.sin(indices * 0.3)], axis=1)
    next_obs = jnp.roll(obs, 1, axis=0)
    return {'indices': indices, 'obs': obs, 'next_obs': next_obs,
            'rewards': jnp.where(indices % 2 == 0, 1.0, -0.5)}


def main():
    agent = Agent(critic=jnp.zeros(2))
    critic = agent.critic
    critic, info1, updates = agent.update(critic, make_batch(jnp.array([0, 1, 2, 3])), utd_ratio=1)
    apply_priority_updates(updates)
    critic, info2, updates = agent.update(critic, make_batch(jnp.array([4, 5, 6, 7])), utd_ratio=1)
    apply_priority_updates(updates)
    critic, info4, updates = agent.update(critic, make_batch(jnp.array([0, 2, 4, 6])), utd_ratio=4)
    apply_priority_updates(updates)
    return critic, info1['critic_loss'], info4['critic_loss'], replay_buffer.sample_probs()
