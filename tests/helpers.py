"""Shared bits for the CLI and file tests."""

from __future__ import annotations

from typer.testing import CliRunner

from jitfix.cli import app

BROKEN = b'''import jax


@jax.jit
def f(x):
    print(f"x = {x}")
    return x * 2
'''

FIXED = b'''import jax


@jax.jit
def f(x):
    jax.debug.print("x = {x}", x=x)
    return x * 2
'''

NOT_FIXABLE = b'''import sys

import jax


@jax.jit
def f(x):
    print(x, file=sys.stderr)
    return x
'''

CLEAN = b'''import jax


@jax.jit
def f(x):
    return x * 2
'''


def invoke(*args: str, input: bytes | str | None = None):
    return CliRunner().invoke(app, list(args), input=input, catch_exceptions=False)
