"""The tables rules rely on say what the installed JAX does."""

from __future__ import annotations


def test_numpy_functions_the_rule_maps_exist_in_jax_numpy() -> None:
    import jax.numpy as jnp

    from jitfix.rules.arrays import JNP_FUNCTIONS, JNP_SUBMODULE_FUNCTIONS

    for name in [*JNP_FUNCTIONS, *JNP_SUBMODULE_FUNCTIONS]:
        module = jnp
        for part in name.split("."):
            module = getattr(module, part)
