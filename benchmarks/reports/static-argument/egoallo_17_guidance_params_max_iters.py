"""Guidance optimisation of a body-pose trajectory, configured by a pytree dataclass of weights, flags and `max_iters`.

Source: https://github.com/brentyi/egoallo/issues/17
Fails: `JaxGuidanceParams` is a pytree whose boolean flags are static fields but whose
    `max_iters` is a data field, so inside the jitted `_optimize_vmapped` it is a tracer and
    `jnp.zeros((guidance_params.max_iters,))` raises TypeError (shapes must be concrete).
Fix: mark `max_iters` static like the flags (`metadata=dict(static=True)`; `jdc.Static[int]`
    in the original), so it becomes part of the hashable tree structure.
"""

from __future__ import annotations

import dataclasses
from functools import partial

import jax
from jax import numpy as jnp


def static_field(default):
    return dataclasses.field(default=default, metadata=dict(static=True))


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class JaxGuidanceParams:
    prior_quat_weight: float = 1.0
    body_quat_smoothness_weight: float = 1.0
    skate_weight: float = 30.0

    hand_quats: bool = static_field(True)
    hand_quat_weight: float = 5.0

    # Optimization parameters.
    step_size: float = 0.01
    max_iters: int = 20

    @staticmethod
    def defaults(phase):
        return {
            "inner": JaxGuidanceParams(hand_quats=False, max_iters=5),
            "post": JaxGuidanceParams(hand_quats=True, max_iters=20),
        }[phase]


def _optimize(body_quats, hand_quats, contacts, guidance_params, verbose):
    init_quats = jnp.concatenate([body_quats, hand_quats], axis=-1)

    def cost(quats):
        prior = guidance_params.prior_quat_weight * jnp.sum((quats - init_quats) ** 2)
        smooth = guidance_params.body_quat_smoothness_weight * jnp.sum(jnp.diff(quats, axis=0) ** 2)
        pairwise_contacts = (contacts[:-1] + contacts[1:]) / 2.0
        skate = guidance_params.skate_weight * jnp.sum(pairwise_contacts * jnp.diff(quats[:, :1], axis=0) ** 2)
        total = prior + smooth + skate
        if guidance_params.hand_quats:
            total = total + guidance_params.hand_quat_weight * jnp.sum(jnp.diff(quats[:, -1:], axis=0) ** 2)
        return total

    cost_history = jnp.zeros((guidance_params.max_iters,))

    def body(i, carry):
        quats, cost_history = carry
        value, grad = jax.value_and_grad(cost)(quats)
        return quats - guidance_params.step_size * grad, cost_history.at[i].set(value)

    quats, cost_history = jax.lax.fori_loop(0, guidance_params.max_iters, body, (init_quats, cost_history))
    if verbose:
        jax.debug.print("final cost {}", cost(quats))
    return quats, {"cost_history": cost_history}


@partial(jax.jit, static_argnames=("verbose",))
def _optimize_vmapped(body_quats, hand_quats, contacts, guidance_params, verbose):
    return jax.vmap(partial(_optimize, guidance_params=guidance_params, verbose=verbose))(
        body_quats, hand_quats, contacts
    )


def main():
    t = jnp.arange(6.0)
    body_quats = jnp.stack([jnp.stack([jnp.sin(t), jnp.cos(t)], -1), jnp.stack([t / 6, -t / 6], -1)])
    hand_quats = jnp.stack([jnp.cos(2 * t)[:, None], jnp.sin(2 * t)[:, None]])
    contacts = jnp.stack([(t % 2 == 0).astype(jnp.float32), jnp.ones(6)])
    inner = _optimize_vmapped(body_quats, hand_quats, contacts, JaxGuidanceParams.defaults("inner"), False)
    post = _optimize_vmapped(body_quats, hand_quats, contacts, JaxGuidanceParams.defaults("post"), True)
    return inner, post
