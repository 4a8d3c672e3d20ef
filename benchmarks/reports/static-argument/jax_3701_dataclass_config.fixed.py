"""An evaluation step takes a `Config` dataclass as a static argument of `jax.jit`.

Source: https://github.com/jax-ml/jax/issues/3701
Fails: a plain `@dataclasses.dataclass` defines `__eq__` and so sets `__hash__ = None`;
    as a static argument it raises ValueError (non-hashable static arguments are not
    supported). (In 2020 it silently retraced on every call instead.)
Fix: make the config hashable and immutable: `@dataclasses.dataclass(frozen=True)`.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class Config:
    some_value: int
    temperature: float = 1.0
    use_softmax: bool = True


@functools.partial(jax.jit, static_argnums=1)
def do_stuff(data, config):
    logits = data[:, : config.some_value] / config.temperature
    if config.use_softmax:
        return jax.nn.softmax(logits, axis=-1)
    return logits


def summon_up_evaluation_data():
    return jnp.arange(12.0).reshape(3, 4) / 4.0


def evaluate(config):
    data = summon_up_evaluation_data()
    return do_stuff(data, config)


def main():
    return (evaluate(Config(2)),
            evaluate(Config(3, temperature=0.5)),
            evaluate(Config(4, use_softmax=False)))
