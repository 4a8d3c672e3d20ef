"""What was seen of a module from outside its own source: by a run of the program (``jitfix
run``), or by the analysis of another module of the run that calls into it. The analysis of
the module takes each as evidence (``Settings.observed``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Observation:
    """A run showed this function traced (``jitfix run``): where a JAX error of a traced
    value was raised in it, and which of its local names held tracers then -- or that
    ``jax.jit`` was applied to it (``error`` is ``JITTED``), and which parameters it traces --
    or (``error`` is ``STATIC``) that the value that failed at ``line`` depends only on
    ``static``, parameters of this jitted function that every call gave a Python value -- or
    (``error`` is ``CALLED``, found by the analysis of another module of the run) that traced
    code there calls it with tracers in ``traced`` -- or (``error`` is ``ON_PATH``) that it
    called, at ``line``, the code where a failure was raised, with tracers in ``traced`` -- or
    (``error`` is ``CHANGED``) that the module globals in ``traced`` changed between its calls
    in the jitted run and its results under jit did not follow them (``jitfix/silent.py``) --
    or (``error`` is ``STAGED``) that jnp made at ``line``, from constants alone, part of a
    value that then failed under jit (at ``via``): a trace-time constant jnp staged."""

    path: str  # real path of the module
    function: str
    first_line: int  # of the code object: the def, or its first decorator
    line: int
    error: str
    traced: tuple[str, ...]
    # The abstract value each traced name held (``("x", "f32[3]")``): what the run saw, shown
    # to the user; the same failure is the same observation whatever the shapes were.
    types: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # The local names that held host values then: Python numbers (``("fill", "float")``),
    # scalars a rewrite that mixes them with those arrays may rely on, and NumPy arrays
    # (``("table", "numpy.ndarray")``), which a tracer cannot index.
    host: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    static: tuple[str, ...] = ()
    # A failure: the name (or attribute or item of one, `state.failed`) that held the tracer
    # the error was raised on, where the run found it among the frame's names. A failure of
    # another tracer on the same line (the next operand, once the first is rewritten) is new.
    failing: str = ""
    via: str = field(default="", compare=False)  # CALLED: the call's place, `train.py:12 (step)`
    defaults: tuple[str, ...] = ()  # CALLED: the parameters the call leaves at their defaults
    made: tuple[str, ...] = field(default=(), compare=False)  # STAGED: the dtypes made at the line

    @property
    def is_failure(self) -> bool:
        """A JAX error of a traced value was raised at ``line`` (not a frame on its path, a jit
        or a static value)."""
        return self.error not in (JITTED, STATIC, CALLED, ON_PATH, CHANGED, STAGED)

    @property
    def made_exactly(self) -> bool:
        """STAGED: the values made were integers or booleans of a fixed dtype, which NumPy makes
        the same (a float rounds otherwise in float64; a weakly typed value, marked ``~``, takes
        the dtype of what it meets, where NumPy's int64 does not)."""
        return bool(self.made) and all(dtype.startswith(("bool", "int", "uint")) for dtype in self.made)

    @property
    def holds_arrays(self) -> bool:
        """The traced names held one array each (a tracer was seen in them); a jitted
        function's parameters may be any pytree of arrays."""
        return self.error not in (JITTED, STATIC, CALLED, CHANGED, STAGED)

    @property
    def reason(self) -> str:
        if self.error == JITTED:
            return f"jitted in the run of `jitfix run` (line {self.line})"
        if self.error == CALLED:
            return f"called with traced arguments from {self.via}"
        if self.error == ON_PATH:
            return f"seen traced by `jitfix run` (its call at line {self.line} led to a failure under jit)"
        if self.error == CHANGED:
            names = ", ".join(f"`{name}`" for name in self.traced)
            return f"{names} changed between its calls in the run of `jitfix run`, and its results under jit did not"
        if self.error == STAGED:
            return f"made from constants alone in the run of `jitfix run`, and it failed under jit at {self.via}"
        if self.error == STATIC:
            given = "; ".join(f"`{name}`: {kinds}" for name, kinds in self.types)
            return f"a Python value on every call in the run with jit disabled ({given})"
        return f"seen traced by `jitfix run` ({self.error} at line {self.line})"


JITTED = "jitted"
STATIC = "static"
CALLED = "called"
ON_PATH = "on the path"  # a frame between a jitted call and a failure (its locals held tracers)
STAGED = "staged"  # a value jnp made from constants alone, which then failed under jit
CHANGED = "changed"  # module globals that went stale in a jitted function (not traced values)
