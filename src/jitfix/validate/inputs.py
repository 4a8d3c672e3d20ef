"""Inputs for a function under validation: synthesized from its parameters, the user's
examples, and calls recorded from the user's own runs.

Runs in the validation process. Synthesized inputs come from small pools of values per
parameter (Python numbers for counts and static parameters, arrays of a few shapes for
traced ones) around the constants the function compares with, so that some inputs take
each branch and run each loop 0, 1 and many times; which of them do is measured, not assumed.
"""

from __future__ import annotations

import itertools
import pickle
import random
import runpy
from dataclasses import dataclass, field, replace
from pathlib import Path

OMIT = object()  # leave the parameter out: its default is used
BASE_FLOATS = (-2.0, 0.5, 0.0, 2.0, -0.5, 1.0, 3.5)
BASE_INTS = (0, 1, 3, 2, 5)
# Inputs where one float array parameter alone is an int array: eager Python gives each
# branch and each pass its own type, a lax rewrite one type, and only such an input shows
# where they part (`r = n` in one arm, `r = x` in the other).
MAX_ONE_INT = 4


@dataclass
class Input:
    args: tuple
    kwargs: dict
    source: str  # "examples", "recorded" or "synthesized"
    labels: set[str] = field(default_factory=set)  # branches and loop trips it reached
    expected: list | None = None  # the reference's outcomes, once run
    one_int: bool = False  # a float parameter made an int (see MAX_ONE_INT): kept, never dropped

    @property
    def reference(self) -> list:
        """The reference's outcomes (an input is chosen only once they are known)."""
        assert self.expected is not None
        return self.expected

    def describe(self) -> str:
        from jitfix.validate.compare import brief

        parts = [brief(value, 60) for value in self.args]
        parts += [f"{key}={brief(value, 60)}" for key, value in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


def _near(constants: list[float], integral: bool) -> list:
    values: list[float] = []
    for constant in constants:
        if integral:
            if float(constant).is_integer() and constant >= 0:
                values += [int(constant), int(constant) + 1, max(int(constant) - 1, 0)]
        else:
            values += [float(constant), float(constant) + 0.5, float(constant) - 0.5]
    return values


def _unique(values: list) -> list:
    seen, unique = set(), []
    for value in values:
        key = (type(value), value if not hasattr(value, "shape") else id(value))
        if key not in seen:
            seen.add(key)
            unique.append(value)
    return unique


def _arrays(floats: list[float], dtype: str, shape: list[int] | None) -> list:
    import jax.numpy as jnp

    kind = {"int": jnp.int32, "bool": jnp.bool_}.get(dtype, jnp.float32)
    values: list
    if dtype == "bool":
        values = [True, False]
    elif dtype == "int":
        values = _unique([int(v) for v in floats if float(v).is_integer()] + list(BASE_INTS))
    else:
        values = floats
    if shape is not None:
        return [jnp.full(tuple(shape), v, kind) for v in values]
    arrays = []
    for value in values:
        arrays.append(jnp.asarray(value, kind))
        arrays.append(jnp.full((3,), value, kind))
    if dtype == "int":
        arrays += [jnp.array([-1, 0, 2], kind), jnp.arange(6, dtype=kind).reshape(2, 3) - 2]
    elif dtype != "bool":
        arrays += [jnp.array([-1.0, 0.5, 2.0], kind), jnp.arange(6, dtype=kind).reshape(2, 3) - 2.5]
    arrays += [jnp.full((2, 3), values[0], kind), jnp.full((2, 3, 2), values[-1], kind)]
    return arrays


def _dicts(keys: list[str], floats: list[float]) -> list:
    """Dicts of ``keys``, each item a scalar: all floats, all ints, and each key in turn an
    int among floats (an int item is what makes the items' types differ by path)."""
    floating = [array for array in _arrays(floats, "float", None) if array.ndim == 0][:3]
    integral = [array for array in _arrays(floats, "int", None) if array.ndim == 0][:2]
    made = [dict.fromkeys(keys, value) for value in floating + integral]
    made += [{other: (integral[0] if other == key else floating[0]) for other in keys} for key in keys]
    return made


def value_pool(parameter: dict, constants: list[float], static: bool) -> list:
    """The values tried for one parameter."""
    if parameter["kind"] == "var":
        return [OMIT]
    pool: list = [OMIT] if parameter["has_default"] else []
    floats = _unique(_near(constants, integral=False) + list(BASE_FLOATS))
    ints = _unique(list(BASE_INTS) + _near(constants, integral=True))
    annotation = parameter["annotation"]
    if parameter.get("texts"):  # compared with strings: given strings
        return pool + parameter["texts"]
    if parameter.get("keys"):  # indexed by strings only: dicts of those keys
        return pool + _dicts(parameter["keys"], floats)
    if annotation == "bool":
        pool += [True, False]
    elif annotation == "int" or ((parameter["counts"] or parameter["integer"]) and annotation != "float"
                                 and not parameter["min_ndim"]):
        pool += ints
    elif annotation == "float":
        pool += floats
    elif annotation == "array" or (parameter["traced"] and not static):
        dtype = "int" if parameter["integer"] else parameter["dtype"] or "float"
        arrays = _arrays(floats, dtype, parameter["shape"])
        if dtype == "float" and parameter["dtype"] is None and parameter["shape"] is None:
            # Nothing says the array is float: an int one is as likely, and it is what makes
            # branch or carry types differ (`r = n` in one arm, `r = x * 0.5` in the other).
            # An input the original itself rejects is never chosen.
            arrays += [array for array in _arrays(floats, "int", None) if array.ndim == 0][:3]
        pool += [array for array in arrays if array.ndim >= parameter["min_ndim"]] or arrays
    else:  # static or unknown, unannotated: Python values
        pool += ints + [v for v in floats if not float(v).is_integer()] + [True, False, None]
    return pool


def synthesized(target: dict, seed: int = 0):
    """Candidate inputs, most varied first: the pools walked side by side, then random picks."""
    # Static in either version: a rewrite that makes a parameter static (`a` given a Python int
    # on every call of the run) hashes it, so it is given Python values, as its callers give it.
    static = set(target["before_static"]) | set(target.get("after_static", ()))
    parameters = target["parameters"]
    pools = [value_pool(p, target["constants"], p["name"] in static) for p in parameters]
    if not parameters:
        yield Input((), {}, "synthesized")
        return
    longest = max(len(pool) for pool in pools)
    rng = random.Random(seed)
    aligned = ([pool[k % len(pool)] for pool in pools] for k in range(longest))
    shuffled = ([pool[(k * (i + 2)) % len(pool)] for i, pool in enumerate(pools)] for k in range(longest))
    randomly = ([rng.choice(pool) for pool in pools] for _ in itertools.count())
    first = next(aligned)
    yield _bind(parameters, first, "synthesized")
    yield from itertools.islice(_one_int(parameters, pools, first), MAX_ONE_INT)
    for values in itertools.chain(aligned, shuffled, randomly):
        yield _bind(parameters, values, "synthesized")


def _one_int(parameters: list[dict], pools: list[list], first: list):
    """``first`` with one float array parameter at a time replaced by an int array of its
    shape from the same pool."""
    for index, (pool, value) in enumerate(zip(pools, first)):
        if not _is_array_of(value, "f"):
            continue
        ints = [v for v in pool if _is_array_of(v, "i") and v.shape == value.shape]
        if ints:
            values = [*first[:index], ints[0], *first[index + 1:]]
            yield replace(_bind(parameters, values, "synthesized"), one_int=True)


def _is_array_of(value, kind: str) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape") and value.dtype.kind == kind


def _bind(parameters: list[dict], values: list, source: str) -> Input:
    args, kwargs, omitted = [], {}, False
    for parameter, value in zip(parameters, values):
        if value is OMIT:
            omitted = omitted or parameter["kind"] == "positional"
            continue
        if parameter["kind"] == "positional" and not omitted:
            args.append(value)
        else:
            kwargs[parameter["name"]] = value
    return Input(tuple(args), kwargs, source)


# -- given inputs ------------------------------------------------------------------------------

def _as_call(entry) -> tuple[tuple, dict]:
    """An example is ``(args, kwargs)``, ``(args,)`` or a bare tuple of arguments."""
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], tuple) and isinstance(entry[1], dict):
        return entry
    if isinstance(entry, tuple) and len(entry) == 1 and isinstance(entry[0], tuple):
        return entry[0], {}
    return (entry if isinstance(entry, tuple) else (entry,)), {}


def examples_for(examples_path: str | None, module_keys: list[str]) -> dict[str, list[Input]]:
    """Examples from the user's file: ``EXAMPLES = {"pkg.mod:function": [(args, kwargs), ...]}``.
    A key's module part may be the dotted name, the file's stem or its path."""
    if not examples_path:
        return {}
    namespace = runpy.run_path(examples_path)
    examples = namespace.get("EXAMPLES", {})
    found: dict[str, list[Input]] = {}
    for key, entries in examples.items():
        module, _, function = str(key).rpartition(":")
        if module and module not in module_keys:
            continue
        for entry in entries:
            args, kwargs = _as_call(entry)
            found.setdefault(function, []).append(Input(tuple(args), dict(kwargs), "examples"))
    return found


def recorded_for(recorded_dir: str | None, path: str) -> dict[str, list[Input]]:
    """Calls captured by ``--record`` for the functions of the module at ``path``."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    if not recorded_dir or not Path(recorded_dir).is_dir():
        return {}
    found: dict[str, list[Input]] = {}
    wanted = str(Path(path).resolve())
    for file in sorted(Path(recorded_dir).glob("*.pkl")):
        try:
            record = pickle.loads(file.read_bytes())
        except Exception:  # a half-written or foreign file: not an input
            continue
        if record.get("path") != wanted:
            continue
        args, kwargs = jax.tree.map(lambda v: jnp.asarray(v) if isinstance(v, np.ndarray) else v,
                                    (record["args"], record["kwargs"]))
        found.setdefault(record["function"], []).append(Input(tuple(args), dict(kwargs), "recorded"))
    return found
