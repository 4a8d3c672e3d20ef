"""The JAX catalogue is generated from the installed jax and must not drift from it."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import jax

from jitfix.analysis import catalogue_data
from jitfix.analysis.catalogue import ARRAY_ATTRIBUTES, STATIC_ATTRIBUTES, call_category, function_category

TOOL = Path(__file__).resolve().parents[1] / "tools" / "make_catalogue.py"


def _generator():
    spec = importlib.util.spec_from_file_location("make_catalogue", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_catalogue"] = module
    spec.loader.exec_module(module)
    return module


def test_the_checked_in_catalogue_is_what_the_installed_jax_gives() -> None:
    # ELEMENTWISE takes minutes to derive again: the test below re-runs a sample of it.
    generated = _generator().render(sorted(catalogue_data.ELEMENTWISE))
    current = Path(catalogue_data.__file__).read_text(encoding="utf-8")
    assert generated == current, (f"the catalogue was made from jax {catalogue_data.JAX_VERSION} and drifted from "
                                  f"the installed jax {jax.__version__}: run python tools/make_catalogue.py")


def test_the_categories_that_decide_soundness() -> None:
    assert function_category("jax.numpy.sum") == "one array"
    assert function_category("jax.numpy.add") == "one array"  # a ufunc object, annotated Any
    assert function_category("jax.numpy.float32") == "one array"  # jnp.float32([1, 2]) too: one array
    # Several arrays, or one: the truth of the result may be a list's or a tuple's.
    for several in ("jax.numpy.split", "jax.numpy.where", "jax.numpy.linalg.eigh", "jax.lax.scan", "jax.lax.cond"):
        assert function_category(several) == "array", several
    for static in ("jax.numpy.shape", "jax.numpy.broadcast_shapes", "jax.lax.broadcast_shapes",
                   "jax.numpy.result_type", "jax.tree.structure", "jax.numpy.iinfo", "jax.lax.conv_dimension_numbers"):
        assert function_category(static) == "static", static
    # jnp.where(c) is a tuple of index arrays; jnp.where(c, x, y) one array.
    assert call_category("jax.numpy.where", ast.parse("jnp.where(c, x, y)").body[0].value) == "one array"
    assert call_category("jax.numpy.where", ast.parse("jnp.where(c)").body[0].value) == "array"
    assert call_category("jax.numpy.where", ast.parse("jnp.where(*parts)").body[0].value) == "array"
    assert function_category("jax.lax.psum") == "pytree"  # psum(1, axis) is the axis size; psum(dict) a dict
    assert function_category("jax.device_get") == "host"
    assert function_category("jax.tree.map") == "pytree"
    assert {"shape", "ndim", "dtype", "size"} <= STATIC_ATTRIBUTES
    assert {"sum", "astype", "reshape", "T", "at", "set"} <= ARRAY_ATTRIBUTES


def test_elementwise_functions_are_what_running_them_shows() -> None:
    generator = _generator()
    listed = ["jax.numpy.sin", "jax.numpy.add", "jax.numpy.isnan", "jax.nn.relu", "jax.lax.pow",
              "jax.scipy.special.expit"]
    assert set(listed) <= catalogue_data.ELEMENTWISE
    # Same shape out as in, but not element by element: sorting, running sums, unwrapping
    # phases, set membership, flattening, normalising over an axis.
    not_listed = ["jax.numpy.sort", "jax.numpy.cumsum", "jax.numpy.unwrap", "jax.numpy.isin",
                  "jax.numpy.ravel", "jax.nn.softmax", "jax.numpy.squeeze"]
    assert not set(not_listed) & catalogue_data.ELEMENTWISE
    for name in listed + not_listed:
        module, _, attribute = name.rpartition(".")
        function = getattr(importlib.import_module(module), attribute)
        arity = generator._elementwise_arity(function)
        assert (arity is not None and generator.is_elementwise(function, arity)) == (name in listed), name
