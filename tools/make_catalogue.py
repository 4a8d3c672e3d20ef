"""Write ``src/jitfix/analysis/catalogue_data.py``: what each public JAX function returns.

    python tools/make_catalogue.py          # regenerate from the installed jax
    python tools/make_catalogue.py --check  # exit 1 when the checked-in file differs

Each public callable of the modules below is put in one category, read from its return
annotation (``-> Array``, ``-> tuple[int, ...]``, ``-> PyTreeDef``), with a short table of
overrides for what jax leaves unannotated or annotates as ``Any``:

- ``array``: returns arrays (or a tuple/list of arrays). Under ``jax.jit`` the result is a
  tracer; outside staging it is traced when an argument is.
- ``one array``: the same, and the result is exactly one array (``-> Array``, a ufunc): its
  truth is that of an array, never that of a tuple.
- ``static``: returns a Python value at trace time (shapes, dtypes, bools, tree structures,
  strings, devices).
- ``pytree``: returns a pytree built from its arguments or from a function it is given
  (``jax.tree.map``): its kind is not known from the call alone.
- ``transform``: returns a function (``jax.jit``, ``jax.grad``, ``jax.vmap``): calling that
  returns arrays.
- ``host``: moves values to the host (``jax.device_get``): a NumPy/Python value.

Methods and properties of ``jax.Array`` are listed the same way.

``ELEMENTWISE``: the functions of ``jax.numpy``, ``jax.lax``, ``jax.nn`` and
``jax.scipy.special`` that compute each element of their result from the same element of
each argument alone (``sin``, ``add``, ``relu``): found by running each on random arrays
(``is_elementwise``), which takes a minute or two; ``--keep-elementwise`` reuses the
checked-in list, and the test suite re-runs a sample of it.

``SHAPE_PARAMETERS``: for each function that makes arrays, the parameters that set the shape
of its result (``shape``, ``size``, ``num_classes``, ``num``, ``length``, ...: read from the
signatures, by name), with their position when they can be passed positionally. Under
``jax.jit`` these must be Python values.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from pathlib import Path

OUTPUT = Path(__file__).resolve().parents[1] / "src" / "jitfix" / "analysis" / "catalogue_data.py"

MODULES = (
    "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.lax.linalg", "jax.nn",
    "jax.nn.initializers", "jax.random", "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.signal",
    "jax.scipy.stats.norm", "jax.scipy.stats.multivariate_normal", "jax.scipy.stats.beta",
    "jax.scipy.stats.gamma", "jax.scipy.stats.poisson", "jax.scipy.stats.uniform", "jax.scipy.ndimage",
    "jax.scipy.fft", "jax.scipy.integrate", "jax.scipy.spatial.transform", "jax.scipy.optimize",
    "jax.tree", "jax.tree_util", "jax.dtypes", "jax.debug", "jax.experimental.checkify",
)

# What annotations do not say (unannotated, ``Any``, or a too-general type variable).
OVERRIDES = {
    # shapes, dtypes, descriptions: Python values
    "jax.numpy.broadcast_shapes": "static", "jax.lax.broadcast_shapes": "static",
    "jax.numpy.can_cast": "static", "jax.numpy.array_repr": "static", "jax.numpy.array_str": "static",
    "jax.numpy.get_printoptions": "static", "jax.numpy.printoptions": "static",
    "jax.numpy.set_printoptions": "static", "jax.numpy.einsum_path": "static",
    "jax.lax.conv_dimension_numbers": "static", "jax.lax.ConvDimensionNumbers": "static",
    "jax.lax.padtype_to_pads": "static", "jax.lax.axis_index": "array",
    "jax.eval_shape": "static", "jax.make_jaxpr": "transform", "jax.typeof": "static",
    "jax.tree_util.tree_structure": "static", "jax.tree.structure": "static",
    "jax.tree_util.treedef_is_leaf": "static", "jax.tree_util.all_leaves": "static",
    "jax.tree_util.keystr": "static", "jax.debug.print": "static", "jax.debug.callback": "pytree",
    "jax.debug.breakpoint": "static", "jax.debug.visualize_array_sharding": "static",
    # reductions of a pytree built from arguments
    "jax.tree.map": "pytree", "jax.tree_util.tree_map": "pytree", "jax.tree.reduce": "pytree",
    "jax.tree_util.tree_reduce": "pytree", "jax.tree.leaves": "pytree", "jax.tree_util.tree_leaves": "pytree",
    "jax.tree.flatten": "pytree", "jax.tree.flatten_with_path": "pytree",
    "jax.tree_util.tree_flatten_with_path": "pytree", "jax.tree.leaves_with_path": "pytree",
    "jax.tree_util.tree_leaves_with_path": "pytree", "jax.tree_util.tree_all": "pytree",
    "jax.numpy.iinfo": "static", "jax.numpy.finfo": "static", "jax.numpy.dtype": "static", "jax.tree_util.tree_flatten": "pytree", "jax.tree.unflatten": "pytree",
    "jax.tree_util.tree_unflatten": "pytree", "jax.tree.transpose": "pytree", "jax.tree.all": "pytree",
    # collectives and control flow: pytrees of arrays (lax.psum(1, axis) is the axis size)
    "jax.lax.psum": "pytree", "jax.lax.pmean": "pytree", "jax.lax.pmax": "pytree", "jax.lax.pmin": "pytree",
    "jax.lax.all_gather": "pytree", "jax.lax.ppermute": "pytree", "jax.lax.all_to_all": "pytree",
    "jax.lax.scan": "array", "jax.lax.fori_loop": "array", "jax.lax.while_loop": "array",
    "jax.lax.cond": "array", "jax.lax.switch": "array", "jax.lax.map": "array",
    "jax.lax.associative_scan": "array", "jax.lax.stop_gradient": "array", "jax.lax.select_n": "array",
    "jax.lax.optimization_barrier": "array", "jax.lax.custom_root": "array",
    "jax.lax.custom_linear_solve": "array",
    # to the host
    "jax.device_get": "host",
    # functions returning functions
    "jax.jit": "transform", "jax.pmap": "transform", "jax.vmap": "transform", "jax.grad": "transform",
    "jax.value_and_grad": "transform", "jax.jacfwd": "transform", "jax.jacrev": "transform",
    "jax.jacobian": "transform", "jax.hessian": "transform", "jax.checkpoint": "transform",
    "jax.remat": "transform", "jax.named_call": "transform", "jax.custom_jvp": "transform",
    "jax.custom_vjp": "transform", "jax.shard_map": "transform",
    "jax.experimental.checkify.checkify": "transform",
    "jax.device_put": "array", "jax.block_until_ready": "pytree",
    "jax.pure_callback": "array",
}

STATIC_TYPES = re.compile(
    r"^(bool|int|float|str|complex|None|type.*|DType.*|np\.dtype|dtype|Shape|tuple\[int.*|list\[int.*"
    r"|.*PyTreeDef.*|.*Device.*|.*Sharding.*|str \| .*|.*KeyTy|ConvDimensionNumbers|list\[tuple\[int, int\]\])$")
ARRAY_TYPES = re.compile(r"^[\w.]*Array(Impl)?$|^(tuple|list|Sequence)\[[\w.]*Array(, ?[\w.]*Array)*(, \.\.\.)?\]$"
                         r"|^[\w.]*Array \| (tuple|list)\[.*\]$|^(Eig|Eigh|QR|SVD|Slogdet|_Unique\w*)Result$"
                         r"|^tuple\[Array, list\[Array\]\]$")
PYTREE_TYPES = re.compile(r"^(T|PyTree|Carry|tuple\[Carry, Y\]|.*Leaf.*|tuple\[Iterable.*)$")
ONE_ARRAY_TYPE = re.compile(r"^[\w.]*Array(Impl)?$")
TRANSFORM_TYPES = re.compile(r"^(Callable.*|F|F \| .*|.*Wrapped.*)$")


def annotation_text(function) -> str:
    try:
        annotation = inspect.signature(function).return_annotation
    except (TypeError, ValueError):
        return ""
    if annotation is inspect.Signature.empty:
        return ""
    if isinstance(annotation, str):
        return annotation.replace("jax.jaxlib._jax.", "").replace("jaxlib._jax.", "")
    text = getattr(annotation, "__name__", None) or str(annotation)
    return text.replace("jaxlib._jax.", "").replace("typing.", "")


def category(name: str, function) -> str | None:
    if name in OVERRIDES:
        return OVERRIDES[name]
    text = annotation_text(function)
    for pattern, kind in ((STATIC_TYPES, "static"), (ARRAY_TYPES, "array"), (PYTREE_TYPES, "pytree"),
                          (TRANSFORM_TYPES, "transform")):
        if pattern.match(text):
            return "one array" if kind == "array" and ONE_ARRAY_TYPE.match(text) else kind
    if type(function).__name__ == "ufunc":  # jnp.add and the other NumPy-style ufuncs
        return "one array"
    if name.startswith(("jax.numpy.", "jax.scipy.", "jax.nn.", "jax.random.")) and text in {"", "Any"}:
        # numerical modules: everything returns arrays except what is listed above
        return "array"
    return None


# Parameter names that set the shape of a result, wherever they appear.
SHAPE_PARAMETER_NAMES = frozenset({
    "shape", "size", "new_shape", "newshape", "new_sizes", "num", "num_classes", "length", "num_segments",
    "total_repeat_length", "reps", "indices_or_sections", "sizes", "slice_sizes", "pad_width", "dimension",
})
# Functions whose shape parameters are named otherwise.
SHAPE_OVERRIDES = {
    "jax.numpy.arange": ((0, "start"), (1, "stop"), (2, "step")), "jax.numpy.eye": ((0, "N"), (1, "M")),
    "jax.numpy.identity": ((0, "n"),), "jax.numpy.tri": ((0, "N"), (1, "M")), "jax.lax.top_k": ((1, "k"),),
    "jax.lax.iota": ((1, "size"),),
}


def shape_parameters(function) -> tuple[tuple[int | None, str], ...]:
    """(position or None when keyword-only, name) of each parameter that sets a shape."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return ()
    found = []
    for index, parameter in enumerate(parameters):
        if parameter.name in SHAPE_PARAMETER_NAMES and parameter.kind is not inspect.Parameter.VAR_KEYWORD:
            positional = parameter.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            found.append((index if positional else None, parameter.name))
    return tuple(found)


def functions() -> dict[str, str]:
    found: dict[str, str] = {}
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for attribute in sorted(dir(module)):
            if attribute.startswith("_"):
                continue
            value = getattr(module, attribute, None)
            if value is None or inspect.ismodule(value) or not callable(value):
                continue
            name = f"{module_name}.{attribute}"
            if inspect.isclass(value) and name not in OVERRIDES:
                if type(value).__name__ == "_ScalarMeta":  # jnp.float32(x) makes one array of its dtype
                    found[name] = "one array"
                continue
            kind = category(name, value)
            if kind is not None:
                found[name] = kind
    return found


def array_members() -> dict[str, str]:
    """``jax.Array``'s public methods and properties: ``array`` (an array, or the ``.at``
    helper that makes one) or ``static`` (shape, dtype, sharding, ...)."""
    import jax

    members: dict[str, str] = {}
    for name in sorted(dir(jax.Array)):
        if name.startswith("_"):
            continue
        member = inspect.getattr_static(jax.Array, name)
        target = member.fget if isinstance(member, property) else member
        text = annotation_text(target) if callable(target) else ""
        if name in {"T", "mT", "at", "flat", "real", "imag", "item"} or ARRAY_TYPES.match(text):
            members[name] = "array"
        elif STATIC_TYPES.match(text) or text.startswith(("Sequence[Shard]", "bool")):
            members[name] = "static"
    # The `.at[...]` helper's methods return arrays.
    for name in ("set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "get", "apply"):
        members.setdefault(f"at.{name}", "array")
    return members


def all_shape_parameters(names: dict[str, str]) -> dict[str, tuple[tuple[int | None, str], ...]]:
    found = {}
    for name, kind in names.items():
        if kind not in ("array", "one array"):
            continue
        module_name, _, attribute = name.rpartition(".")
        function = getattr(importlib.import_module(module_name), attribute)
        parameters = SHAPE_OVERRIDES.get(name) or shape_parameters(function)
        if parameters:
            found[name] = parameters
    return found


# Where elementwise functions are looked for.
ELEMENTWISE_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.scipy.special.")
# Shapes tried: a matrix (a function that flattens or transposes changes its shape) and a
# column (one that squeezes does).
ELEMENTWISE_SHAPES = ((2, 3), (3, 1))


def _elementwise_arity(function) -> int | None:
    """How many arguments to give a candidate: its required positional parameters, when there
    are one to three and none is annotated as a sequence of arrays (``stack``, ``block``);
    a ufunc's ``nin``."""
    if isinstance(getattr(function, "nin", None), int):
        return function.nin if 1 <= function.nin <= 3 else None
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return None
    required = [p for p in parameters if p.default is p.empty and p.kind is not p.VAR_KEYWORD]
    if not 1 <= len(required) <= 3 or any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY) for p in required):
        return None
    if any(re.search(r"Sequence|list|tuple", str(p.annotation)) for p in required):
        return None
    return len(required)


def _same(a, b) -> bool:
    import numpy as np

    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        np.all((a == b) | np.isclose(a, b, rtol=1e-6, atol=0, equal_nan=True)))


def is_elementwise(function, arity: int) -> bool:
    """Whether ``function`` works element by element: on random arrays (with zeros and
    repeated values), alone or with some arguments scalars, its result has the arguments'
    shape, permuting or cutting the rows of the array arguments permutes or cuts the rows of
    the result the same way, and changing one element of an argument changes at most the
    same element of the result. That is what lets a caller pad rows and cut them off again,
    and lets any argument be a tracer."""
    import itertools

    import jax
    import numpy as np

    rng = np.random.default_rng(0)
    for shape in ELEMENTWISE_SHAPES:
        # Every argument holds the same values in another order (a zero and a repeat among
        # them), so a function that compares elements across positions (`isin`) shows it.
        values = rng.uniform(-4, 4, shape).astype(np.float32).ravel()
        values[0], values[-1] = 0.0, values[1]
        arrays = [rng.permutation(values).reshape(shape) for _ in range(arity)]
        for scalars in itertools.product((False, True), repeat=arity):
            if all(scalars):
                continue
            args = [np.float32(a.flat[1]) if scalar else a for a, scalar in zip(arrays, scalars)]
            out = function(*args)
            if not isinstance(out, jax.Array) or out.shape != shape:
                return False
            rows = rng.permutation(shape[0])
            for cut in (rows, slice(0, 2)):
                if not _same(function(*[a if s else a[cut] for a, s in zip(args, scalars)]), np.asarray(out)[cut]):
                    return False
            for which, array in enumerate(args):
                if scalars[which]:
                    continue
                for at in list(np.ndindex(shape))[:3]:
                    moved = array.copy()
                    moved[at] += np.float32(5.0)  # more than pi: `unwrap` shifts what follows
                    new = np.asarray(function(*args[:which], moved, *args[which + 1:]))
                    if new.shape != shape:
                        return False
                    differs = ~((new == np.asarray(out)) | np.isclose(new, out, rtol=1e-6, atol=0, equal_nan=True))
                    differs[at] = False
                    if differs.any():
                        return False
    return True


def elementwise(names: dict[str, str]) -> list[str]:
    import warnings

    found = []
    for name, kind in sorted(names.items()):
        if kind not in ("array", "one array") or not name.startswith(ELEMENTWISE_MODULES):
            continue
        module_name, _, attribute = name.rpartition(".")
        function = getattr(importlib.import_module(module_name), attribute)
        arity = _elementwise_arity(function)
        if arity is None:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if is_elementwise(function, arity):
                    found.append(name)
        except Exception:  # wrong argument kinds, a random key wanted, ...: not elementwise here
            continue
    return found


def render(elementwise_names: list[str] | None = None) -> str:
    """The catalogue's text; ``elementwise_names`` (e.g. the checked-in list) instead of
    deriving ``ELEMENTWISE`` again, which runs every candidate."""
    import jax

    lines = [
        f'"""Generated by tools/make_catalogue.py from jax {jax.__version__}; do not edit by hand."""',
        "",
        f"JAX_VERSION = {jax.__version__!r}",
        "",
        "# Fully qualified function -> array | static | pytree | transform | host",
        "FUNCTIONS = {",
    ]
    found = functions()
    lines += [f"    {name!r}: {kind!r}," for name, kind in sorted(found.items())]
    lines += ["}", "", "# Function -> the parameters that set its result's shape: (position or None, name)",
              "SHAPE_PARAMETERS = {"]
    lines += [f"    {name!r}: {parameters!r}," for name, parameters in sorted(all_shape_parameters(found).items())]
    lines += ["}", "", "# Functions that compute each element of their result from the same element of each",
              "# argument (tested on random arrays by tools/make_catalogue.py: is_elementwise)",
              "ELEMENTWISE = frozenset({"]
    listed = elementwise(found) if elementwise_names is None else sorted(elementwise_names)
    lines += [f"    {name!r}," for name in listed]
    lines += ["})", "", "# Public members of jax.Array -> array | static", "ARRAY_MEMBERS = {"]
    lines += [f"    {name!r}: {kind!r}," for name, kind in sorted(array_members().items())]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the checked-in catalogue differs")
    parser.add_argument("--keep-elementwise", action="store_true",
                        help="reuse the checked-in ELEMENTWISE list instead of testing every candidate again")
    args = parser.parse_args()
    kept = None
    if args.keep_elementwise:
        from jitfix.analysis.catalogue_data import ELEMENTWISE

        kept = sorted(ELEMENTWISE)
    text = render(kept)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is out of date: run python tools/make_catalogue.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
