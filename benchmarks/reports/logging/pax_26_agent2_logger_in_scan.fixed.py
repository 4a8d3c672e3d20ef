"""A multi-agent runner jits its training loop with `lax.scan`; the second agent logs its
update metrics (a wandb-style logger) from inside the scanned step.

Source: https://github.com/ucl-dark/pax/pull/26
Fails: once the loop is scanned under jit, agent 2's `self.logger.log(metrics)` runs at trace
    time with tracers (the pull request: "Agent2 logs Jax.TracedDeviceArray"), once,
    instead of logging each step's numbers.
Fix: as the pull request does, return the metrics out of the scan and log the concrete values
    from the runner after the jitted call.
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

EXPECT_STDOUT = True


class Logger:
    """Stands in for wandb: one line per logged dict."""

    def log(self, metrics):
        print(" ".join(f"{name}={value}" for name, value in metrics.items()))


class AgentState(NamedTuple):
    logits: jax.Array


class NaiveLearner:
    def __init__(self, lr, logger=None):
        self.lr = lr
        self.logger = logger

    def update(self, state, reward, action):
        probs = jax.nn.softmax(state.logits)
        advantage = reward - jnp.sum(probs * reward)
        logits = state.logits + self.lr * advantage * (jnp.arange(2) == action)
        metrics = {"action": action, "reward": reward[action]}
        return AgentState(logits), metrics


PAYOFF = jnp.array([[[2.0, 2.0], [0.0, 3.0]], [[3.0, 0.0], [1.0, 1.0]]])  # iterated prisoner's dilemma


class Runner:
    def __init__(self, agent1, agent2, num_steps):
        self.agent1, self.agent2, self.num_steps = agent1, agent2, num_steps

    def _step(self, carry, t):
        s1, s2 = carry
        a1 = jnp.argmax(s1.logits)
        a2 = (t % 2).astype(jnp.int32)
        r1 = PAYOFF[:, a2, 0]
        r2 = PAYOFF[a1, :, 1]
        s1, _ = self.agent1.update(s1, r1, a1)
        s2, metrics2 = self.agent2.update(s2, r2, a2)
        return (s1, s2), metrics2

    def run_loop(self, s1, s2):
        (s1, s2), metrics2 = jax.lax.scan(self._step, (s1, s2), jnp.arange(self.num_steps))
        return s1, s2, metrics2

    def run(self, s1, s2):
        s1, s2, metrics2 = jax.jit(self.run_loop)(s1, s2)
        if self.agent2.logger is not None:
            for t in range(self.num_steps):
                self.agent2.logger.log({name: value[t] for name, value in metrics2.items()})
        return s1, s2


def main():
    agent1 = NaiveLearner(lr=0.5)
    agent2 = NaiveLearner(lr=0.25, logger=Logger())
    runner = Runner(agent1, agent2, num_steps=4)
    s1, s2 = AgentState(jnp.zeros(2)), AgentState(jnp.array([0.5, 0.0]))
    first = runner.run(s1, s2)
    second = runner.run(*first)
    return first, second
