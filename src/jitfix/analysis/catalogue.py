"""What jitfix knows of the JAX API and of Python's builtins: one home for every table.

``FUNCTIONS``, ``SHAPE_PARAMETERS``, ``ELEMENTWISE`` and ``ARRAY_MEMBERS`` are generated from the installed jax by
``tools/make_catalogue.py`` (return annotations, with a short list of overrides); a test
regenerates them and fails when they drift. The rest is what no annotation says: which
builtins keep Python values Python, which methods change their object.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator, TypeGuard

from jitfix.analysis.catalogue_data import ARRAY_MEMBERS, ELEMENTWISE, FUNCTIONS, SHAPE_PARAMETERS
from jitfix.analysis.words import spells_a_word

ARRAY = "array"  # returns arrays: tracers under jit, or when an argument is traced
ONE_ARRAY = "one array"  # returns exactly one array (not a tuple or list of them)
STATIC = "static"  # returns a Python value at trace time
PYTREE = "pytree"  # a pytree built from its arguments: as traced as they are
TRANSFORM = "transform"  # returns a function
HOST = "host"  # values moved to the host: NumPy / Python


def is_range(node: ast.AST | None) -> TypeGuard[ast.Call]:
    """A call spelled ``range(...)``: the builtin, unless the module binds the name itself
    (``blocks.is_range_call`` also asks the imports)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


# The names a method's receiver goes by (`self.step(x)`, `cls.make(n)`).
RECEIVERS = frozenset({"self", "cls"})


def numpy_member(name: str | None) -> str | None:
    """``numpy.mean`` -> ``mean`` (a resolved name of NumPy's own); None for anything else."""
    return name[len("numpy."):] if name and name.startswith("numpy.") else None


def jnp_member(name: str | None) -> str | None:
    """``jax.numpy.where`` -> ``where`` (a resolved name of ``jax.numpy``); None for anything else."""
    return name[len("jax.numpy."):] if name and name.startswith("jax.numpy.") else None


def shape_parameters(name: str | None) -> tuple[tuple[int | None, str], ...]:
    """The parameters of a JAX or NumPy function that set its result's shape: (position, name)."""
    return SHAPE_PARAMETERS.get(name or "", ()) or NUMPY_SHAPE_PARAMETERS.get(name or "", ())


def shape_arguments(call: ast.Call, name: str | None) -> list[tuple[str, ast.expr]]:
    """(parameter, argument) for each argument of a call of ``name`` that sets its result's
    shape; positions are not counted past a ``*args``."""
    positional = [] if any(isinstance(argument, ast.Starred) for argument in call.args) else call.args
    found = []
    for index, parameter in shape_parameters(name):
        if index is not None and index < len(positional):
            found.append((parameter, positional[index]))
        found += [(parameter, given.value) for given in call.keywords if given.arg == parameter]
    return found


SHAPE_METHODS = frozenset({"reshape", "broadcast_to"})  # array methods whose arguments are a shape


def static_places(node: ast.AST, resolve: Callable[[ast.AST], str | None],
                  segment: Callable[[ast.AST], str]) -> Iterator[tuple[str, ast.expr]]:
    """(what, expression) for each place in one node that needs a Python value: a shape
    argument, ``axis=``, a slice bound, the bounds of a ``range`` a comprehension iterates."""
    if isinstance(node, ast.Call):
        name = resolve(node.func) or ""
        short = name.replace("jax.numpy.", "jnp.").replace("jax.lax.", "lax.") if name.startswith("jax.") \
            else segment(node.func)
        for parameter, argument in shape_arguments(node, name):
            yield f"`{parameter}` of `{short}`", argument
        if isinstance(node.func, ast.Attribute) and node.func.attr in SHAPE_METHODS and not shape_parameters(name):
            for argument in node.args:
                yield f"`.{node.func.attr}()`", argument
        for keyword in node.keywords:
            if keyword.arg == "axis" and (name.startswith("jax.") or isinstance(node.func, ast.Attribute)):
                yield "`axis=`", keyword.value
    elif isinstance(node, ast.Subscript):
        for part in ast.walk(node.slice):
            if isinstance(part, ast.Slice):
                for bound in (part.lower, part.upper, part.step):
                    if bound is not None:
                        yield "a slice bound", bound
    elif isinstance(node, ast.comprehension):
        iterable = node.iter
        if is_range(iterable):
            for argument in iterable.args:
                yield "`range()` building a list", argument


# NumPy's array makers and reshapers, by their documented signatures (the catalogue reads
# only jax's): a traced value there is a shape that must be static, under np as under jnp --
# never data that jnp could take instead.
NUMPY_SHAPE_PARAMETERS: dict[str, tuple[tuple[int | None, str], ...]] = {
    **{f"numpy.{name}": ((0, "shape"),) for name in ("zeros", "ones", "empty", "full")},
    **{f"numpy.{name}_like": ((4, "shape"),) for name in ("zeros", "ones", "empty")},
    "numpy.full_like": ((5, "shape"),),
    "numpy.arange": ((0, "start"), (1, "stop"), (2, "step")),
    "numpy.eye": ((0, "N"), (1, "M")), "numpy.tri": ((0, "N"), (1, "M")), "numpy.identity": ((0, "n"),),
    **{f"numpy.{name}": ((2, "num"),) for name in ("linspace", "logspace", "geomspace")},
    "numpy.reshape": ((1, "shape"), (None, "newshape")), "numpy.broadcast_to": ((1, "shape"),),
    "numpy.resize": ((1, "new_shape"),), "numpy.tile": ((1, "reps"),), "numpy.pad": ((1, "pad_width"),),
    **{f"numpy.{name}": ((1, "indices_or_sections"),) for name in ("split", "array_split")},
}


def is_elementwise(name: str | None) -> bool:
    """Whether a fully qualified JAX function computes each element of its result from the
    same element of each argument (``jnp.sin``, ``jnp.add``): any argument may be a tracer,
    and padding rows onto its arguments only adds rows to its result."""
    return name in ELEMENTWISE


def function_category(name: str | None) -> str | None:
    """The category of a fully qualified JAX function, or None when jitfix does not know it."""
    if name is None:
        return None
    found = FUNCTIONS.get(name)
    if found is None and name.startswith(FLAX_REEXPORTS):
        return FUNCTIONS.get("jax.nn." + name.rpartition(".")[2])
    return found


# Functions that return one array in one call form only: `jnp.where(c, x, y)` (the
# one-argument `jnp.where(c)` is a tuple of index arrays), by the number of positional arguments.
_ONE_ARRAY_FORMS = {"jax.numpy.where": 3}


def call_category(name: str | None, call: ast.Call) -> str | None:
    """The category of a call of a fully qualified JAX function, for the form it is called in."""
    found = function_category(name)
    if found == ARRAY and name is not None and _ONE_ARRAY_FORMS.get(name) == len(call.args) \
            and not any(isinstance(argument, ast.Starred) for argument in call.args):
        return ONE_ARRAY
    return found


# flax.linen re-exports jax.nn's activations (`nn.relu`, `nn.softmax`, `nn.one_hot`): where a
# name there is one of jax.nn's, it is that function.
FLAX_REEXPORTS = ("flax.linen.",)

# Layers of flax.linen and haiku made and called on the spot (`nn.Dense(4)(x)` in a compact
# `__call__`, `hk.Linear(4)(x)` in a transformed function): each maps its input to one array.
LAYERS = frozenset({
    *(f"flax.linen.{name}" for name in (
        "Dense", "DenseGeneral", "Conv", "ConvTranspose", "ConvLocal", "Embed", "LayerNorm", "RMSNorm", "GroupNorm",
        "BatchNorm", "Dropout", "MultiHeadDotProductAttention", "SelfAttention")),
    *(f"haiku.{name}" for name in (
        "Linear", "Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Embed", "LayerNorm",
        "RMSNorm", "GroupNorm", "BatchNorm", "MultiHeadAttention", "nets.MLP")),
})


# Functions returning a tuple whose parts differ: (leaves, treedef) -- the tree structure
# is a Python value even when the leaves are tracers.
RESULT_PARTS = {
    name: (PYTREE, STATIC)
    for name in ("jax.tree.flatten", "jax.tree_util.tree_flatten", "jax.tree.flatten_with_path",
                 "jax.tree_util.tree_flatten_with_path", "jax.flatten_util.ravel_pytree")
}
RESULT_PARTS["jax.flatten_util.ravel_pytree"] = (ARRAY, STATIC)  # (flat array, unravel function)

# Attributes of an array that are Python values at trace time.
STATIC_ATTRIBUTES = frozenset(
    {name for name, kind in ARRAY_MEMBERS.items() if kind == STATIC} | {"weak_type", "aval"})
# Attributes and methods of an array whose value is an array (``x.T``, ``x.sum()``,
# ``x.at[i].set(v)``).
ARRAY_ATTRIBUTES = frozenset(
    name.rpartition(".")[2] for name, kind in ARRAY_MEMBERS.items() if kind == ARRAY)

# Builtins whose result is a Python value whatever they are given.
STATIC_BUILTINS = frozenset({"len", "isinstance", "issubclass", "type", "callable", "hasattr", "id", "str",
                             "repr", "format", "print", "hash", "dir", "vars", "object", "NotImplemented"})
# Builtins whose result is as traced as their arguments: Python numbers for Python numbers,
# a tracer (or an error) for a tracer.
ARGUMENT_BUILTINS = frozenset({"int", "float", "bool", "complex", "abs", "min", "max", "sum", "round", "pow",
                               "divmod", "range", "list", "tuple", "sorted", "reversed", "zip", "enumerate",
                               "set", "frozenset", "dict", "any", "all", "iter", "next", "slice"})
# Standard modules whose functions compute Python values from Python values.
ARGUMENT_MODULES = ("math.", "numpy.", "operator.", "itertools.")
# NumPy functions that read only an array's metadata (`x.shape`, `x.dtype`, ...): a Python
# value for a tracer too, with no conversion to a NumPy array.
# What makes a host random generator object, and whose draws its methods are (Python's or
# NumPy's): jit can take no such object as an argument, and its methods draw on the host.
HOST_GENERATORS = {"numpy.random.default_rng": "numpy", "numpy.random.Generator": "numpy",
                   "numpy.random.RandomState": "numpy", "random.Random": "random"}
NUMPY_METADATA = frozenset({"numpy.shape", "numpy.ndim", "numpy.size", "numpy.isscalar", "numpy.result_type",
                            "numpy.iscomplexobj", "numpy.isrealobj", "numpy.iterable", "numpy.dtype",
                            "numpy.issubdtype", "numpy.can_cast", "numpy.promote_types", "numpy.finfo",
                            "numpy.broadcast_shapes"})

# Optimizers whose functions map pytrees of arrays to pytrees of arrays, as traced as what
# they are given: `jax.example_libraries.optimizers.sgd(...)` returns (init, update,
# get_params); an optax `GradientTransformation` has `.init(params)` and `.update(grads,
# state, params)`. A call of one of those functions is a tracer where an argument is.
OPTIMIZER_TRIPLES = frozenset(f"jax.example_libraries.optimizers.{name}" for name in (
    "sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3"))
GRADIENT_TRANSFORMATIONS = frozenset(f"optax.{name}" for name in (
    "adabelief", "adafactor", "adagrad", "adam", "adamax", "adamaxw", "adamw", "amsgrad", "fromage", "lamb",
    "lars", "lion", "nadam", "nadamw", "noisy_sgd", "novograd", "optimistic_gradient_descent", "radam",
    "rmsprop", "sgd", "sm3", "yogi", "chain", "clip", "clip_by_global_norm", "add_decayed_weights", "scale",
    "scale_by_adam", "scale_by_schedule", "scale_by_learning_rate", "masked", "multi_transform", "zero_nans",
    "apply_every", "identity", "set_to_zero"))
GRADIENT_TRANSFORMATION_METHODS = frozenset({"init", "update"})

# Methods that change the object they are called on (lists, dicts, sets, files).
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
     "discard", "popitem", "sort", "reverse", "write", "writelines"})
# Of those, the ones that also return a value (``d.pop(k)``). The others return None: a call
# of one whose value is used is another object's method of that name, not a change
# (``updates, state = optimizer.update(grads, state)``, optax's).
VALUE_RETURNING_MUTATORS = frozenset({"pop", "popitem", "setdefault", "write"})

# Calls that always return a new object (never one of their arguments): writes into it change
# nothing the caller holds. (`numpy.asarray` may return its argument: not listed.)
FRESH_OBJECTS = frozenset(
    {"list", "dict", "set", "bytearray", "numpy.zeros", "numpy.ones", "numpy.empty", "numpy.full",
     "numpy.zeros_like", "numpy.ones_like", "numpy.empty_like", "numpy.full_like", "numpy.array", "numpy.copy",
     "numpy.arange", "numpy.linspace", "numpy.eye", "numpy.identity", "copy.copy", "copy.deepcopy"})

# Annotations that say a parameter is an array (jaxtyping's ``Float[Array, "n"]`` too, but
# not its ``PyTree[...]``, which may hold anything).
ARRAY_ANNOTATIONS = frozenset({"jax.Array", "jax.numpy.ndarray", "jax.typing.ArrayLike", "chex.Array",
                               "chex.ArrayDevice", "jaxtyping.Array"})
JAXTYPING_NOT_ARRAYS = frozenset({"jaxtyping.PyTree", "jaxtyping.PyTreeDef"})


def is_array_annotation(resolved: str | None) -> bool:
    if not resolved:
        return False
    if resolved in ARRAY_ANNOTATIONS:
        return True
    return resolved.startswith("jaxtyping.") and resolved not in JAXTYPING_NOT_ARRAYS


# -- transforms: what traces a function ------------------------------------------------------

JIT_TRANSFORMS = frozenset(
    {
        "jax.jit",
        "jax.pjit",
        "jax.experimental.pjit.pjit",
        "equinox.filter_jit",
        "flax.nnx.jit",
    }
)
# Transforms that trace every positional argument they are given. (jax.eval_shape and
# jax.make_jaxpr trace too, but never run the function: code there is meant for trace time.)
TRACING_TRANSFORMS = frozenset(
    {
        "jax.vmap",
        "jax.pmap",
        "jax.checkpoint",
        "jax.remat",
        "jax.named_call",
        "equinox.filter_vmap",
        "jax.experimental.shard_map.shard_map",
        "jax.shard_map",
    }
)
# Differentiation alone does not stage control flow: a Python `if` on a value works under
# `jax.grad` (the primal is concrete). Functions reached only through these are not traced.
GRAD_TRANSFORMS = frozenset({"jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.jacobian",
                             "jax.hessian", "equinox.filter_grad", "equinox.filter_value_and_grad",
                             "flax.nnx.grad", "flax.nnx.value_and_grad"})
# Transforms that stage the function into a jaxpr: every JAX operation in it is a tracer.
STAGING_TRANSFORMS = JIT_TRANSFORMS | {"jax.pmap", "jax.checkpoint", "jax.remat",
                                       "jax.experimental.shard_map.shard_map", "jax.shard_map"}

# equinox's filter_* transforms trace array arguments and keep all others static.
FILTERED_TRANSFORMS = frozenset({"equinox.filter_jit", "equinox.filter_vmap", "equinox.filter_grad",
                                 "equinox.filter_value_and_grad"})

# equinox layers whose leaves jit cannot trace (an activation or pooling function, a mode
# string: found by building each and listing its leaves), so `jax.jit` given one raises where
# `eqx.filter_jit` keeps those leaves static; `Sequential` holds whatever its layers hold.
EQUINOX_UNTRACEABLE_LAYERS = frozenset(
    f"equinox.nn.{name}" for name in (
        "MLP", "Lambda", "WeightNorm", "BatchNorm", "Pool", "AdaptivePool",
        *(f"{kind}Pool{dims}d" for kind in ("Avg", "Max", "AdaptiveAvg", "AdaptiveMax") for dims in (1, 2, 3))))
EQUINOX_SEQUENTIAL = "equinox.nn.Sequential"

# Transforms that differentiate in reverse mode (lax loops with traced trip counts cannot).
REVERSE_AD_TRANSFORMS = frozenset({"jax.grad", "jax.value_and_grad", "jax.jacrev", "jax.jacobian",
                                   "jax.hessian", "equinox.filter_grad", "equinox.filter_value_and_grad",
                                   "flax.nnx.grad", "flax.nnx.value_and_grad"})

# vmap-like transforms whose in_axes say which arguments are mapped (None: passed as is).
MAPPING_TRANSFORMS = frozenset({"jax.vmap", "jax.pmap"})

# lax primitives that take functions, and which positional arguments are functions.
BODY_ARGUMENTS: dict[str, tuple[int, ...]] = {
    "jax.lax.scan": (0,),
    "jax.lax.fori_loop": (2,),
    "jax.lax.while_loop": (0, 1),
    "jax.lax.cond": (1, 2),
    "jax.lax.map": (0,),
    "jax.lax.associative_scan": (0,),
    "jax.lax.custom_root": (0, 2, 3),
}
SWITCH = "jax.lax.switch"
# How many leading positional parameters of a body the primitive passes tracers to
# (None: the operands given to the call). Parameters after those keep their defaults.
BODY_TRACED_COUNT: dict[str, int | None] = {
    "jax.lax.scan": 2,
    "jax.lax.fori_loop": 2,
    "jax.lax.while_loop": 1,
    "jax.lax.map": 1,
    "jax.lax.associative_scan": 2,
    "jax.lax.custom_root": 1,
    "jax.lax.cond": None,
    SWITCH: None,
}
PARTIAL = "functools.partial"
# flax.linen: `model.apply(variables, *args, method=..., mutable=..., rngs=...)` runs a method.
FLAX_MODULES = frozenset({"flax.linen.Module", "flax.linen.module.Module"})
FLAX_APPLY_METHODS = frozenset({"apply", "init", "init_with_output"})
# What a haiku model is made with; its `.apply(params, rng, x)` runs the function with `x`.
HAIKU_TRANSFORMS = frozenset({"haiku.transform", "haiku.transform_with_state", "haiku.without_apply_rng"})
FLAX_APPLY_OPTIONS = frozenset({"method", "mutable", "rngs", "capture_intermediates"})


# The last part of every name that can trace a function passed to it: a cheap filter
# applied to each call while the tree is walked once.
TRACING_CALL_NAMES = frozenset(
    name.rpartition(".")[2]
    for name in (*JIT_TRANSFORMS, *TRACING_TRANSFORMS, *GRAD_TRANSFORMS, *BODY_ARGUMENTS, SWITCH, PARTIAL)
)


# Names that trace their function wherever they appear, and those that only do as `lax`
# primitives (`cond`, `switch` and `map` are common words): a module that spells none of
# them as a word holds no traced code (an aliased import still spells the name once).
_BODY_ONLY = frozenset({"cond", "switch", "map"})
_TRANSFORM_WORDS = TRACING_CALL_NAMES - _BODY_ONLY - {"partial"}


def mentions_a_transform(text: str) -> bool:
    return spells_a_word(text, _TRANSFORM_WORDS) or ("lax" in text and spells_a_word(text, _BODY_ONLY))



def may_trace(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Call):  # partial(jax.jit, ...)(f)
        return True
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return name in TRACING_CALL_NAMES
