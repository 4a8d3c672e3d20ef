"""Are two results the same? Structure, shape, dtype and values (allclose), as a reason or None.

Runs inside the validation process (it imports JAX); the fixture tests use it too.
"""

from __future__ import annotations

import math
import re

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
# An elapsed time a program prints (`1 passed in 2.27s`, `took 0.003 ms`): it differs from run
# to run, and two runs may happen to agree on it, so a program's outputs never compare it.
DURATION = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s?(?:ns|us|µs|ms|s|sec|secs|seconds?|min|mins|minutes?)\b")

RTOL = 1e-5
ATOL = 1e-6
KIND_ORDER = "biufc"  # bool < signed/unsigned int < float < complex


def difference(expected, actual, *, promoted: bool = False, jax_dtypes: bool = False,
               rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """Why ``actual`` is not ``expected``, or None when they agree.

    A Python number the eager code returns comes back from jit as a weakly typed array of
    JAX's default dtype, so it is compared as that. ``promoted`` accepts a wider dtype of
    the same value (a rewrite that casts an int branch to the float type of the other);
    ``jax_dtypes`` compares every result in JAX's default dtypes (float64 -> float32).
    """
    import jax
    import numpy as np

    expected_tree, actual_tree = jax.tree.structure(expected), jax.tree.structure(actual)
    # The original and the rewrite are two imports of the module, each with its own classes:
    # a NamedTuple or dataclass of the module is the same structure when it has the same name.
    if expected_tree != actual_tree and str(expected_tree) != str(actual_tree):
        return f"structure {actual_tree} != {expected_tree}"
    for index, (want, got) in enumerate(zip(jax.tree.leaves(expected), jax.tree.leaves(actual))):
        where = f"leaf {index}: " if expected_tree.num_leaves > 1 else ""
        # A Python number is weakly typed: the same value in a wider dtype is the same result.
        weak = isinstance(want, bool | int | float | complex)
        # NumPy results (the eager original's own NumPy code) count in JAX's dtypes, as JAX
        # converts them the moment they meet a JAX array (float64 -> float32).
        if weak or jax_dtypes or isinstance(want, np.ndarray | np.generic):
            want = jax.numpy.asarray(want)
        try:
            want, got = np.asarray(want), np.asarray(got)
        except Exception:  # not array-like: compare as Python values
            return None if want == got else f"{where}{got!r} != {want!r}"
        if want.shape != got.shape:
            return f"{where}shape {got.shape} != {want.shape}"
        if (promoted or weak) and want.dtype.kind in KIND_ORDER and got.dtype.kind in KIND_ORDER:
            if KIND_ORDER.index(got.dtype.kind) < KIND_ORDER.index(want.dtype.kind):
                return f"{where}dtype {got.dtype} is narrower than {want.dtype}"
        elif want.dtype != got.dtype:
            return f"{where}dtype {got.dtype} != {want.dtype}"
        if want.dtype.kind in "biufc":
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                return f"{where}values differ: got {brief(got)}, expected {brief(want)}"
        elif not np.array_equal(got, want):
            return f"{where}values differ: got {brief(got)}, expected {brief(want)}"
    return None


def brief(value, limit: int = 80) -> str:
    """A short, readable form of a value for a report: ``f32[3] [1. 2. 3.]``."""
    import numpy as np

    if isinstance(value, bool | int | float | complex | str | type(None)):
        text = repr(value)
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        array = np.asarray(value)
        dims = ",".join(str(d) for d in array.shape)
        body = np.array2string(array, threshold=8, edgeitems=2, separator=" ").replace("\n", "")
        text = f"{_dtype_name(array.dtype)}[{dims}] {body}"
    elif isinstance(value, tuple | list):
        inner = ", ".join(brief(item, limit) for item in value)
        text = f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{key!r}: {brief(item, limit)}" for key, item in value.items()) + "}"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _dtype_name(dtype) -> str:
    short = {"float": "f", "int": "i", "uint": "u", "complex": "c", "bool": "bool"}
    for long, letter in short.items():
        if dtype.name.startswith(long) and dtype.name != "bool":
            return letter + dtype.name[len(long):]
    return dtype.name


def printed_difference(expected: str, actual: str, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    """Why two printed outputs differ, or None. Numbers are compared as numbers (a float32
    value may print as ``-1.9`` eagerly and ``-1.899999976158142`` from ``jax.debug.print``);
    everything else, line by line, as text."""
    want_lines, got_lines = expected.splitlines(), actual.splitlines()
    same = len(want_lines) == len(got_lines) and all(
        _same_line(want, got, rtol, atol) for want, got in zip(want_lines, got_lines))
    return None if same else f"printed {actual.strip()!r}, expected {expected.strip()!r}"


def first_line_difference(expected: str, actual: str, reference: str,
                          unstable: frozenset[int] = frozenset()) -> str | None:
    """The first line of a program's output ``actual`` that differs from ``expected`` (the
    output of the run ``reference`` names), numbers compared as above; None when they agree.
    Lines in ``unstable`` (1-based: they differ between two runs of the reference itself,
    such as a timing) are not compared."""
    want_lines, got_lines = expected.splitlines(), actual.splitlines()
    for number, (want, got) in enumerate(zip(want_lines, got_lines), 1):
        if number not in unstable and not _same_line(_timeless(want), _timeless(got), RTOL, ATOL):
            return f"line {number}: {got!r}, {reference} {want!r}"
    if len(want_lines) != len(got_lines):
        return f"{len(got_lines)} lines printed, {reference} {len(want_lines)}"
    return None


def _timeless(line: str) -> str:
    return DURATION.sub("<elapsed>", line)


def unstable_lines(first: str, second: str) -> frozenset[int]:
    """The lines (1-based) two runs of one program printed otherwise."""
    return frozenset(number for number, (a, b) in enumerate(zip(first.splitlines(), second.splitlines()), 1)
                     if not _same_line(a, b, RTOL, ATOL))


def _same_line(want: str, got: str, rtol: float, atol: float) -> bool:
    if want == got:
        return True
    if NUMBER.split(want) != NUMBER.split(got):
        return False
    pairs = zip(NUMBER.findall(want), NUMBER.findall(got))
    return all(math.isclose(float(a), float(b), rel_tol=rtol, abs_tol=atol) for a, b in pairs)
