"""Base interfaces: gradient transformations and their (empty) state."""

from typing import Any, Callable, NamedTuple

PyTree = Any


class EmptyState(NamedTuple):
    """An empty state for the simplest stateless transformations."""


def init_empty_state(params: PyTree) -> EmptyState:
    """Init function for a GradientTransformation with empty state."""
    del params
    return EmptyState()


class GradientTransformation(NamedTuple):
    init: Callable
    update: Callable
