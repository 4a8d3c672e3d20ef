"""The tables rules rely on say what the installed JAX does."""

from __future__ import annotations

import jax.numpy as jnp

from jitfix.rules.arrays import JNP_FUNCTIONS, JNP_SUBMODULE_FUNCTIONS


def _jnp_attribute(name: str) -> object:
    found: object = jnp
    for part in name.split("."):
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


def test_numpy_functions_the_rule_maps_exist_in_jax_numpy() -> None:
    names = [*JNP_FUNCTIONS, *JNP_SUBMODULE_FUNCTIONS]
    assert names  # the tables are read, not empty
    missing = [name for name in names if not callable(_jnp_attribute(name))]
    assert missing == [], f"not functions of the installed jax.numpy: {missing}"
