"""A run is one program: calls into the run's other modules are summarised from their source.

Library-style twins (a helper of another module returns a Python value: the code works
under jit and must stay byte-identical with no finding) and broken twins (the helper returns
an array: the `if` on it raises under jit and is fixed; the fix is run eagerly and under jit).
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from helpers import invoke

UTILS = '''import jax
import jax.numpy as jnp


def is_array(x):
    return isinstance(x, jax.Array)


def total(x):
    return jnp.sum(x)
'''

STATIC_TWIN = '''import jax

from .utils import is_array


@jax.jit
def doubled(x):
    if is_array(x):
        return x * 2
    return x
'''

# The same helper reached through each spelling of an import of the run's own modules.
BROKEN_TWINS = {
    "relative": "from .utils import total\n",
    "absolute": "from pkg.utils import total\n",
    "reexported": "from pkg import total\n",
}
BROKEN_BODY = '''

@jax.jit
def clipped(x):
    if total(x) > 0:
        return x - 1
    return x + 1
'''
MODULE_CALL = '''import jax

from . import utils


@jax.jit
def clipped(x):
    if utils.total(x) > 0:
        return x - 1
    return x + 1
'''


def _package(root: Path, main: str, init: str = "from .utils import total\n") -> Path:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(init)
    (package / "utils.py").write_text(UTILS)
    (package / "main.py").write_text(main)
    return package


def _import_main(root: Path, name: str):
    sys.path.insert(0, str(root))
    try:
        for module in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[module]
        return importlib.import_module(f"pkg.{name}")
    finally:
        sys.path.remove(str(root))


def test_a_helper_of_another_module_that_returns_a_python_value_is_left_alone(tmp_path):
    package = _package(tmp_path, STATIC_TWIN)
    result = invoke("fix", "--no-cache", str(tmp_path))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert (package / "main.py").read_text() == STATIC_TWIN
    assert "All checks passed" in invoke("check", "--no-cache", str(tmp_path)).stdout


@pytest.mark.parametrize("spelling", sorted(BROKEN_TWINS))
def test_a_helper_of_another_module_that_returns_an_array_is_fixed_and_runs(tmp_path, spelling):
    original = "import jax\n\n" + BROKEN_TWINS[spelling] + BROKEN_BODY
    package = _package(tmp_path, original)
    checked = invoke("check", "--no-cache", str(tmp_path))
    assert checked.exit_code == 1 and "JF101" in checked.stdout, checked.stdout
    eager_module = _import_main(tmp_path, "main")
    samples = [jnp.array([1.0, 2.0]), jnp.array([-3.0, 1.0]), jnp.array([0.0])]
    with jax.disable_jit():
        expected = [eager_module.clipped(x) for x in samples]
    assert invoke("fix", "--no-cache", str(tmp_path)).exit_code == 0
    fixed = (package / "main.py").read_text()
    assert "lax.cond" in fixed and fixed != original
    rewritten = _import_main(tmp_path, "main")
    for x, want in zip(samples, expected):
        assert jnp.allclose(rewritten.clipped(x), want)
    assert invoke("check", "--no-cache", str(tmp_path)).exit_code == 0  # idempotent: nothing left


def test_a_module_call_through_a_relative_import_is_summarised(tmp_path):
    _package(tmp_path, MODULE_CALL)
    result = invoke("check", "--no-cache", str(tmp_path))
    assert "JF101" in result.stdout and "utils.total(x) > 0" in result.stdout, result.stdout


def test_a_module_outside_the_paths_given_stays_unknown(tmp_path):
    package = _package(tmp_path, "import jax\n\n" + BROKEN_TWINS["relative"] + BROKEN_BODY)
    result = invoke("check", "--no-cache", str(package / "main.py"))
    assert result.exit_code == 0, result.stdout  # utils.py was not given: its `total` is not known


def test_a_cached_result_is_redone_when_a_module_it_read_changes(tmp_path):
    package = _package(tmp_path, "import jax\n\n" + BROKEN_TWINS["relative"] + BROKEN_BODY)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert invoke("check", ".").exit_code == 1
        # `total` now returns a Python number: the `if` works under jit and nothing is reported.
        (package / "utils.py").write_text(UTILS.replace("return jnp.sum(x)", "return 1.0"))
        again = invoke("check", ".")
        assert again.exit_code == 0, again.stdout
    finally:
        os.chdir(cwd)


LOSSES = '''import jax
import jax.numpy as jnp


def cross_entropy(scores, labels, from_logits=True):
    if not from_logits:
        if jnp.any(scores < 0):
            raise ValueError("probabilities must not be negative")
        scores = jnp.log(scores)
    else:
        scores = jax.nn.log_softmax(scores)
    return -(labels * scores).sum()
'''

LOSS_CALLER = '''import jax

from .losses import cross_entropy


def batch_loss(scores, labels):
    return {loss} / scores.shape[0]


jitted = jax.jit(batch_loss)
'''


@pytest.mark.parametrize("loss, reported", [
    ("cross_entropy(scores, labels)", False),
    ("cross_entropy(scores, labels, from_logits=False)", True),
    ("jax.vmap(lambda s, y: cross_entropy(s, y))(scores, labels).sum()", False),
    ("jax.vmap(lambda s, y: cross_entropy(s, y, from_logits=False))(scores, labels).sum()", True),
])
def test_a_branch_of_a_default_no_traced_call_of_another_module_overrides_is_not_judged(tmp_path, loss, reported):
    # Every traced call leaves `from_logits` at its default: the validation branch is never
    # traced (optax's dice_loss); a traced call that passes it makes the branch traced code
    # (a lambda vmapped inside the jitted function is staged: its calls trace too).
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "losses.py").write_text(LOSSES)
    (package / "train.py").write_text(LOSS_CALLER.format(loss=loss))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for _ in range(2):  # the second run is answered from the cache
            result = invoke("check", ".")
            assert ("JF101" in result.stdout) is reported and result.exit_code == int(reported), result.stdout
    finally:
        os.chdir(cwd)
    if not reported:
        assert invoke("fix", "--no-cache", str(tmp_path)).exit_code == 0
        assert (package / "losses.py").read_text() == LOSSES
        module = _import_main(tmp_path, "train")
        scores, labels = jnp.array([[1.0, 2.0], [0.5, -1.0]]), jnp.array([[0.0, 1.0], [1.0, 0.0]])
        with jax.disable_jit():
            want = module.batch_loss(scores, labels)
        assert jnp.allclose(module.jitted(scores, labels), want)


RNG = '''from jax import random

key = random.PRNGKey(0)


def next_key():
    global key
    key, subkey = random.split(key)
    return subkey


def fixed_key():
    return random.PRNGKey(1)
'''

STREAM_USER = '''from jax import jit, random

from . import rng


@jit
def init():
    return random.normal(rng.next_key(), (3,))


@jit
def init_fixed():
    return random.normal(rng.fixed_key(), (3,))
'''


def test_a_global_stream_another_module_advances_is_drawn_at_each_call(tmp_path):
    # jax#5206: `rng.next_key()` (another module of the run) splits and rebinds a global key:
    # under jit it runs once, while tracing, every call draws the same numbers and the key
    # holds a tracer. It is evaluated at each call by a def with the old name and passed in,
    # so the stream advances as eagerly; `rng.fixed_key()` changes nothing: left as it is.
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rng.py").write_text(RNG)
    (package / "model.py").write_text(STREAM_USER)
    eager = _import_main(tmp_path, "model")
    with jax.disable_jit():
        expected = [eager.init() for _ in range(3)] + [eager.init_fixed()]
    assert invoke("fix", "--no-cache", str(tmp_path)).exit_code == 0
    fixed = (package / "model.py").read_text()
    assert "return _init(next_key=rng.next_key())" in fixed, fixed
    assert "def init_fixed():\n    return random.normal(rng.fixed_key(), (3,))" in fixed
    rewritten = _import_main(tmp_path, "model")
    got = [rewritten.init() for _ in range(3)] + [rewritten.init_fixed()]
    for have, want in zip(got, expected):
        assert jnp.allclose(have, want)
    assert invoke("check", "--no-cache", str(tmp_path)).exit_code == 0
