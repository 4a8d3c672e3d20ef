"""Installed as ``sitecustomize`` in the user's command by ``jitfix run`` and ``jitfix profile``.

Standalone on purpose (the user's interpreter may not have jitfix). Once jax is imported:

* with ``JITFIX_RUN_LOG`` (``jitfix run``): the errors JAX raises when traced code meets Python
  semantics record where they were raised -- the innermost frame in the project
  (``JITFIX_RUN_ROOT``), its function, which of its local variables hold tracers, and which
  arguments of the jitted function the failing value depends on (as JAX's message says);
* with ``JITFIX_PROFILE_LOG`` (``jitfix profile``, ``jitfix run``): every function ``jax.jit``
  makes counts its calls, the time spent in them and the kinds of arguments it was given
  (``f32[3]``, ``~f32[]`` weakly typed, ``int 3``), and JAX's own compile log and cache-miss
  explanations (``jax_log_compiles``, ``jax_explain_cache_misses``) are captured instead of
  printed; with ``JITFIX_PROFILE_CALLS_ONLY`` too (the run with jit disabled), only the calls.

Both append JSON lines to their log. Recording never changes what the program computes, and
never raises.
"""

import atexit
import functools
import inspect
import json
import logging
import os
import re
import sys
import time
import types

# The errors of traced values used as Python values (jax.errors).
RECORDED_ERRORS = ("ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
                   "TracerArrayConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError")


class _Recorder:
    def __init__(self, root, log):
        self.root = os.path.realpath(root) + os.sep
        self.log = log

    def record(self, error_name, value=None):
        """Where ``error_name`` is being raised; ``value``: the tracer it is about, if any."""
        try:
            frame: types.FrameType | None = sys._getframe(2)
            while frame is not None:
                path = os.path.realpath(frame.f_code.co_filename)
                if path.startswith(self.root) and "site-packages" not in path:
                    break
                frame = frame.f_back
            if frame is None:
                return
            import jax

            tracers = {name: value for name, value in frame.f_locals.items() if isinstance(value, jax.core.Tracer)}
            entry = {"path": path, "line": frame.f_lineno, "function": frame.f_code.co_name,
                     "first_line": frame.f_code.co_firstlineno, "error": error_name, "traced": sorted(tracers),
                     "types": {name: _abstract_type(value) for name, value in tracers.items()}}
            # The host values beside them: Python numbers (scalars a rewrite may mix with those
            # arrays), NumPy arrays and lists or tuples (which a tracer cannot index).
            entry["host"] = {name: _host_kind(value) for name, value in frame.f_locals.items()
                             if _host_kind(value) is not None}
            # Tracers of constants alone (jnp staged them): traced here, but not an argument's value.
            entry["constants"] = sorted(name for name, tracer in tracers.items()
                                        if _of_constants(tracer, jax.core.Tracer))
            if isinstance(value, jax.core.Tracer):
                entry.update(_origin(value))
                if entry.get("depends_on") == []:
                    entry["made_at"] = self._made_at(value, jax.core.Tracer, frame.f_locals)
                    entry["held_constants"] = _held_constants(value, jax.core.Tracer, frame)
                held_by = _held_by(value, frame.f_locals)
                if held_by:
                    entry["failing"] = held_by
            lines = [entry, *self._callers(frame.f_back, jax.core.Tracer)]
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write("".join(json.dumps(line) + "\n" for line in lines))
        except Exception:  # recording is best effort
            pass

    def _made_at(self, tracer, tracer_class, names, most=16):
        """Where the project's code made a failing value of constants alone (``_of_constants``):
        the lines of the operations it was computed by, and where its constants entered the
        trace (path, line, function, the function's first line, with the dtypes made there).
        ``names``: the failing frame's locals, whose constant tracers say where a literal
        operand entered (an operation keeps only its value)."""
        try:
            computation = _Computation(tracer)
            if not computation.of_constants(tracer_class):
                return []
            made: dict = {}

            def note(source_info, aval):
                site = self._project_frame(getattr(source_info, "traceback", None))
                dtype = ("~" if getattr(aval, "weak_type", False) else "") + str(getattr(aval, "dtype", ""))
                if site is not None and dtype not in made.setdefault(site, []):
                    made[site].append(dtype)

            literals = {id(value.val): value for value in names.values()
                        if isinstance(value, tracer_class) and type(getattr(value, "val", None)).__name__ == "Literal"}
            if not computation.variable:
                note(tracer._line_info, tracer.aval)
            for equation, produced in computation.equations:
                for variable in produced:
                    note(equation.source_info, variable.aval)
                for literal in (v for v in equation.invars if id(v) in literals):
                    note(literals[id(literal)]._line_info, literal.aval)
            for constant in computation.constant_tracers():
                note(constant._line_info, constant.aval)
            sites = [{"path": path, "line": line, "function": function, "first_line": first, "dtypes": dtypes}
                     for (path, line, function, first), dtypes in made.items()]
            return sites[:most]
        except Exception:  # JAX's internals moved: nothing is known of where it was made
            return []

    def _project_frame(self, traceback):
        """The innermost frame of the project's code in an operation's traceback."""
        for entry in (traceback.frames if traceback is not None else []):  # (innermost first)
            path = os.path.realpath(entry.file_name)
            if path.startswith(self.root) and "site-packages" not in path:
                function = entry.function_name.rsplit(".", 1)[-1]
                return path, entry.line_num, function, entry.function_start_line
        return None

    def _callers(self, frame, tracer_class, most=8):
        """The project's frames that led to the failing one while tracing (their locals hold
        tracers; a frame holding none is outside the trace, or tells nothing): where the code
        that failed was called, and which of their names were traced then."""
        found: list = []
        while frame is not None and len(found) < most:
            path = os.path.realpath(frame.f_code.co_filename)
            if path.startswith(self.root) and "site-packages" not in path:
                tracers = {name: value for name, value in frame.f_locals.items() if isinstance(value, tracer_class)}
                if tracers:
                    found.append({"kind": "path", "path": path, "line": frame.f_lineno,
                                  "function": frame.f_code.co_name, "first_line": frame.f_code.co_firstlineno,
                                  "traced": sorted(tracers),
                                  "types": {name: _abstract_type(value) for name, value in tracers.items()}})
            frame = frame.f_back
        return found

    def patch_setitem(self, tracer_class):
        """``x[i] = v`` on a tracer raises TypeError (JAX arrays are immutable): recorded too."""
        original = tracer_class.__setitem__
        if getattr(original, "_jitfix_recorded", False):
            return

        def setitem(this, index, value, _original=original):
            self.record("TypeError (JAX arrays are immutable)")
            return _original(this, index, value)

        setattr(setitem, "_jitfix_recorded", True)
        tracer_class.__setitem__ = setitem

    def patch_format(self, tracer_class):
        """``f"{x:.4f}"`` of a tracer raises TypeError (a tracer takes no format spec, as a
        print at trace time shows it): recorded too, with the tracer formatted."""
        original = tracer_class.__format__
        if getattr(original, "_jitfix_recorded", False):
            return

        def format_(this, spec, _original=original):
            if spec:
                self.record("TypeError (a tracer formatted)", this)
            return _original(this, spec)

        setattr(format_, "_jitfix_recorded", True)
        tracer_class.__format__ = format_

    def patch(self, errors):
        core = sys.modules.get("jax.core")
        if core is not None and hasattr(core, "Tracer"):
            self.patch_setitem(core.Tracer)
            self.patch_format(core.Tracer)
        for name in RECORDED_ERRORS:
            cls = getattr(errors, name, None)
            if cls is None or cls.__dict__.get("_jitfix_recorded"):
                continue
            original = cls.__init__

            def init(this, *args, _original=original, _class=cls, **kwargs):
                if type(this) is _class:  # once, by the class raised (not again by its bases)
                    self.record(_class.__name__, args[0] if args else None)
                _original(this, *args, **kwargs)

            cls.__init__ = init
            cls._jitfix_recorded = True


class _Profiler:
    """Counts the calls of every jitted function, notes the kinds of their arguments, and
    captures JAX's compile log (unless ``calls_only``)."""

    # The loggers whose messages tell a compile's story: the cache miss (and why), the
    # compile, and how long each step took.
    LOGGERS = ("jax._src.interpreters.partial_eval", "jax._src.interpreters.pxla", "jax._src.dispatch")

    def __init__(self, log, calls_only=False, recorder=None):
        self.log = log
        self.calls_only = calls_only
        self.start = time.perf_counter()
        self.tallies = {}  # (file, line, name) -> _Tally
        # `jitfix run`'s run with jit disabled: the concrete arguments of each module-level
        # jitted function are saved as the validation's recording saves them, so that a
        # rewrite of one needs no run of its own to record them (see validate/recorder_hook.py).
        self.recorder = recorder
        # `jitfix run`: fingerprint each jitted function's results and what it reads besides
        # its arguments, call by call, to compare the jitted run with the run with jit disabled.
        self.watching = bool(os.environ.get("JITFIX_WATCH_RESULTS"))
        self.watched_calls = {}  # (file, line, name) -> calls fingerprinted so far

    def write(self, entry):
        try:
            entry["t"] = round(time.perf_counter() - self.start, 6)
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
        except Exception:
            pass

    def install(self, jax):
        if not self.calls_only:
            self._capture_compile_log(jax)
        original = jax.jit
        profiler = self

        @functools.wraps(original)
        def counting_jit(fun=None, *args, **kwargs):
            if fun is None:  # `jax.jit(static_argnames=...)` used as a decorator factory
                return lambda f: counting_jit(f, *args, **kwargs)
            return profiler.counted(original(fun, *args, **kwargs), fun, kwargs)

        jax.jit = counting_jit
        atexit.register(self.flush)

    def _capture_compile_log(self, jax):
        jax.config.update("jax_explain_cache_misses", True)
        jax.config.update("jax_log_compiles", True)
        try:  # the call site JAX names is the user's line, not this hook's wrapper
            from jax._src import source_info_util

            source_info_util.register_exclusion(os.path.abspath(__file__))
        except Exception:
            pass
        handler = _LogHandler(self)
        for name in self.LOGGERS:
            logger = logging.getLogger(name)
            logger.addHandler(handler)
            logger.propagate = False  # captured, not printed on the program's stderr

    def counted(self, jitted, fun, options):
        target = _unwrapped(fun)
        code = getattr(target, "__code__", None)
        name = getattr(target, "__name__", type(target).__name__)
        key = (code.co_filename, code.co_firstlineno, name) if code else ("", 0, name)
        try:
            parameters = list(inspect.signature(target).parameters)
        except (TypeError, ValueError):
            parameters = []
        self.write({"kind": "jit", "file": key[0], "line": key[1], "function": name, "parameters": parameters,
                    "static": _static_parameters(fun, parameters, options)})
        tally = self.tallies.setdefault(key, _Tally())
        tally.signatures.append(_signature(fun))
        record = None
        if self.recorder is not None and code is not None and getattr(target, "__qualname__", None) == name:
            record = functools.partial(self._record, os.path.realpath(code.co_filename), name)
        watch = _Watch(self, key, fun, parameters, options) if self.watching else None
        return _Counted(jitted, tally, len(tally.signatures) - 1, record, watch)

    # Arguments larger than this are not saved by the reference run (a model's parameters,
    # for every jitted function, whatever is rewritten): a rewrite of that function then has
    # them recorded by a run of its own, as before.
    MOST_BYTES_SAVED = 64 * 2 ** 20

    def _record(self, path, name, args, kwargs):
        try:
            if self.recorder.full(path, name) or _bytes_of((args, kwargs)) > self.MOST_BYTES_SAVED:
                return
            if self.recorder.save(path, name, args, kwargs) and len(self.recorder.seen[(path, name)]) == 1:
                self.write({"kind": "recorded", "file": path, "function": name})
        except Exception:  # recording is best effort; the call itself must not change
            pass

    def flush(self):
        for (file, line, name), tally in self.tallies.items():
            self.write({"kind": "calls", "file": file, "line": line, "function": name, "calls": tally.calls,
                        "seconds": round(tally.seconds, 6), "arguments": tally.arguments})


# The kind of an argument given in a call made inside another jitted function's call.
NESTED = "from a jitted function"


class _Tally:
    """What the calls of one function's jitted versions came to."""

    KINDS_KEPT = 8  # distinct kinds of one argument noted; more are not needed to judge it

    def __init__(self):
        self.calls = 0
        self.seconds = 0.0
        self.signatures = []  # of each jitted version (a partial binds some parameters)
        self.arguments = {}  # parameter -> the distinct kinds it was given

    def note(self, version, args, kwargs, nested=False):
        try:
            signature = self.signatures[version]
            if signature is None:
                return
            for name, value in signature.bind(*args, **kwargs).arguments.items():
                kinds = self.arguments.setdefault(name, [])
                if kinds[-1:] != ["..."]:
                    kind = NESTED if nested else _kind(value)
                    if kind not in kinds:
                        kinds.append(kind if len(kinds) < self.KINDS_KEPT else "...")  # "...": more kinds
        except Exception:
            pass


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _kind(value):
    """An argument as jit sees it: an array's abstract value (``f32[3]``; ``~f32[]`` weakly
    typed; ``np f64[3]`` a NumPy array), a Python scalar's type and value (``int 3``), else
    its type's name (a pytree: ``dict``, ``State``)."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        shown = repr(value)
        return f"{type(value).__name__} {shown if len(shown) <= 40 else shown[:37] + '...'}"
    aval = getattr(value, "aval", None)
    if aval is not None and hasattr(aval, "str_short"):
        return ("~" if getattr(aval, "weak_type", False) else "") + aval.str_short()
    if type(value).__module__ == "numpy" and hasattr(value, "shape"):
        return f"np {value.dtype}[{','.join(map(str, value.shape))}]"
    return type(value).__name__


def _static_parameters(fun, parameters, options):
    """The parameters jit does not trace: its static arguments (by name or position), and
    those a ``partial`` binds."""
    names = options.get("static_argnames")
    static = [names] if isinstance(names, str) else list(names or ())
    numbers = options.get("static_argnums")
    numbers = [numbers] if isinstance(numbers, int) else list(numbers or ())
    bound = 0
    while isinstance(fun, functools.partial):
        bound += len(fun.args)
        static += list(fun.keywords)
        fun = fun.func
    static += parameters[:bound]
    free = parameters[bound:]
    static += [free[number] for number in numbers if -len(free) <= number < len(free)]
    return [name for name in parameters if name in static]


def _origin(tracer):
    """What JAX knows of where a failing traced value comes from, as its error message says:
    the function being traced (``traced_by``: name, file, first line, and what traces it,
    ``jit`` or ``scan``...) and which of that function's arguments the value depends on
    (``depends_on``, top-level names: ``state['a']`` is ``state``)."""
    found: dict = {}
    try:
        info = tracer._debug_info
        positions, _ = tracer._trace.frame.find_progenitors(tracer)  # (None for a literal: a constant)
        depends = {_matched(r"\*{0,2}([A-Za-z_]\w*)", info.arg_names[position])[1] for position in positions or ()}
        found["depends_on"] = sorted(depends)
        where = _matched(r"(.*) at (.*):(\d+)$", info.func_src_info)  # ('<unknown>' for a callable object)
        found["traced_by"] = {"function": where[1], "file": where[2], "line": int(where[3]), "for": info.traced_for}
    except Exception:  # a name this cannot read: nothing (more) is known of where the value comes from
        pass
    return found


class _Computation:
    """How the trace computed ``tracer``'s value: the operations it was computed by (each with
    the variables it made of it), latest first, and the variables they read that no operation
    made -- the traced function's arguments, or constants."""

    def __init__(self, tracer):
        self.frame = tracer._trace.frame
        self.variable = type(tracer.val).__name__ == "Var"  # (else a literal: a constant itself)
        kind = type(tracer.val)
        active = {tracer.val} if self.variable else set()
        self.equations = []
        for equation in reversed(self.frame.get_eqns()):
            produced = active.intersection(equation.outvars)
            if produced:
                active.difference_update(produced)
                active.update(v for v in equation.invars if type(v) is kind)
                self.equations.append((equation, produced))
        self.read = active

    # Operations whose result is no function of their operands that NumPy could compute while
    # tracing: a host callback's (`pure_callback` gives a tracer whatever it is given), a draw.
    UNCOMPUTABLE = ("callback", "random", "threefry", "rng")

    def of_constants(self, tracer_class):
        """Whether the value depends on no argument of the traced function, nor on a value of an
        enclosing trace (a closure of a jitted function nested in another, which is no constant),
        and only on operations NumPy could compute as well at trace time."""
        if self.read & set(self.frame.invars):
            return False
        if any(word in str(equation.primitive) for equation, _ in self.equations for word in self.UNCOMPUTABLE):
            return False
        return not any(isinstance(self.frame.constvar_to_val.get(v), tracer_class) for v in self.read)

    def constant_tracers(self):
        """The tracers of the constants the value read: where each entered the trace."""
        wanted = {id(self.frame.constvar_to_val[v]) for v in self.read if v in self.frame.constvar_to_val}
        return [tracer for identity, tracer in self.frame.constid_to_tracer.items() if identity in wanted]


def _held_constants(tracer, tracer_class, frame):
    """The arrays made before tracing that a failing value of constants alone read, where the
    failing frame holds them -- an attribute (``self.split_idxs``) or an item of a local, or a
    global of its module -- with their dtypes: jit took each for a constant of the trace."""
    try:
        computation = _Computation(tracer)
        if not computation.of_constants(tracer_class):
            return []
        found = []
        for variable in computation.read:
            value = computation.frame.constvar_to_val.get(variable)
            if value is None or not type(value).__module__.startswith("jax"):
                continue  # (a NumPy array is concrete under jit already)
            holder = _held_by(value, frame.f_locals) or next(
                (name for name, held in frame.f_globals.items() if held is value), None)
            if holder and not holder.startswith("."):
                weak = "~" if getattr(value, "weak_type", False) else ""
                found.append({"holder": holder, "dtype": weak + str(getattr(value, "dtype", ""))})
        return found
    except Exception:  # JAX's internals moved: nothing is known of what it read
        return []


def _of_constants(tracer, tracer_class):
    """Whether ``tracer``'s value was computed from constants alone (jnp staged it)."""
    try:
        return _Computation(tracer).of_constants(tracer_class)
    except Exception:  # JAX's internals moved: not known to be
        return False


def _held_by(tracer, names, depth=3):
    """The name -- or attribute, field or item of one (``state.failed``, ``carry[1]``) -- that
    holds ``tracer`` itself: the expression whose truth (or value) Python asked for."""
    level = [(name, value) for name, value in names.items() if not name.startswith(".")]
    for _ in range(depth):
        for path, value in level:
            if value is tracer:
                return path
        level = [part for path, value in level for part in _parts(value, path)]
    return None


def _parts(value, path, most=32):
    """``(path, part)`` of what ``value`` holds, as the source would spell each: a NamedTuple's
    fields (``state.failed``), a list's or tuple's items (``carry[1]``), a dict's (``d['k']``),
    an object's attributes (``self.scale``); none of a class, a module or a logger."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return [(f"{path}.{field}", getattr(value, field, None)) for field in value._fields[:most]]
    if isinstance(value, (list, tuple)):
        return [(f"{path}[{index}]", item) for index, item in enumerate(value[:most])]
    if isinstance(value, dict):
        return [(f"{path}[{key!r}]", item) for key, item in list(value.items())[:most] if isinstance(key, (str, int))]
    if hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, logging.Logger)):
        return [(f"{path}.{name}", item) for name, item in list(vars(value).items())[:most]]
    return []


def _matched(pattern, text):
    found = re.match(pattern, text)
    if found is None:
        raise ValueError(text)
    return found


def _host_kind(value):
    """``int``, ``float``, ``list``, ``tuple`` or ``numpy.ndarray`` for such a value (not a
    subclass: a NamedTuple is a pytree of its own); else None."""
    kind = type(value)
    if kind in (int, float, list, tuple):
        return kind.__name__
    return "numpy.ndarray" if kind.__module__ == "numpy" and kind.__name__ == "ndarray" else None


def _abstract_type(tracer):
    """A tracer's abstract value as JAX prints it short: ``f32[3]``, ``bool[]``."""
    try:
        return tracer.aval.str_short()
    except Exception:
        return "?"


def _project_modules(root, log):
    """At exit: the files of the project the program imported (its own modules, the script)."""
    try:
        prefix = os.path.realpath(root) + os.sep
        files = [getattr(module, "__file__", None) for module in list(sys.modules.values())]
        files.append(sys.argv[0] if sys.argv else None)  # the script: its `__file__` is gone at exit
        paths = sorted({os.path.realpath(file) for file in files if isinstance(file, str)})
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"kind": "modules", "paths": [path for path in paths if path.startswith(prefix)
                                                                  and path.endswith(".py")]}) + "\n")
    except Exception:
        pass


def _bytes_of(tree):
    import jax

    return sum(getattr(leaf, "nbytes", 0) or 0 for leaf in jax.tree.leaves(tree))


def _unwrapped(fun):
    """The Python function under ``partial(...)``, ``checkify.checkify`` and decorators, to
    name it by its def."""
    while True:
        if isinstance(fun, functools.partial):
            fun = fun.func
        elif (checked := _checkified(fun)) is not None:
            fun = checked
        elif hasattr(fun, "__wrapped__") and (not hasattr(fun, "__code__") or _forwards_anything(fun.__code__)):
            fun = fun.__wrapped__  # a jitted function, or a wrapper `functools.wraps` names after its def
        else:
            return fun


def _without_checkify_error(result):
    """What a checkified function returns less its checkify error (``(error, out)``): the value
    its callers get once the error is raised or not, as the eager function returns it."""
    if isinstance(result, tuple) and len(result) == 2 and type(result[0]).__name__ == "Error" \
            and type(result[0]).__module__.endswith("checkify"):
        return result[1]
    return result


def _forwards_anything(code) -> bool:
    """Whether a function's code takes ``(*args, **kwargs)`` and nothing else: a wrapper."""
    return code.co_argcount == 0 and code.co_kwonlyargcount == 0 \
        and code.co_flags & inspect.CO_VARARGS and code.co_flags & inspect.CO_VARKEYWORDS


def _checkified(fun):
    """The function ``checkify.checkify`` made ``fun`` of (its closure holds it), else None."""
    inner = getattr(fun, "__wrapped__", fun)
    code = getattr(inner, "__code__", None)
    if code is None or code.co_name != "checked_fun" or "f" not in code.co_freevars or not inner.__closure__:
        return None
    return inner.__closure__[code.co_freevars.index("f")].cell_contents


class _Counted:
    """A jitted function that counts its calls; everything else is the jitted function's."""

    def __init__(self, jitted, tally, version, record=None, watch=None):
        self._jitted = jitted
        self._tally = tally
        self._version = version
        self._record = record  # saves a call's arguments (the run with jit disabled of `jitfix run`)
        self._watch = watch  # fingerprints a call's result and what it reads (`jitfix run`: _Watch)
        functools.update_wrapper(self, jitted, updated=())

    # How many calls of jitted functions are under way: a call made inside another is traced
    # there under jit, whatever Python value the run with jit disabled gave it.
    _active = [0]

    def __call__(self, *args, **kwargs):
        self._tally.note(self._version, args, kwargs, nested=self._active[0] > 0)
        if self._record is not None and not self._active[0]:
            self._record(args, kwargs)
        watched = self._watch.before(args, kwargs) if self._watch is not None and not self._active[0] else None
        start = time.perf_counter()
        self._active[0] += 1
        try:
            result = self._jitted(*args, **kwargs)
        finally:
            self._active[0] -= 1
            self._tally.calls += 1
            self._tally.seconds += time.perf_counter() - start
        if watched is not None:
            self._watch.after(watched, result)
        return result

    def __getattr__(self, name):
        if name in ("_jitted", "_tally", "_version", "_record", "_watch"):  # not set yet (a copy): no recursion
            raise AttributeError(name)
        return getattr(self._jitted, name)

    def __get__(self, instance, owner=None):  # a jitted method binds like a function
        return self if instance is None else functools.partial(self, instance)


class _Watch:
    """Fingerprints of what one jitted function returned on each top-level call and of what it
    read then besides its arguments -- the module globals its code names, its closure's cells,
    the attributes of the instance of a bound method or of a static argument jit keys by
    identity -- for its first ``CALLS`` calls. ``jitfix run`` compares them between the run with
    jit disabled and the jitted run (``jitfix/silent.py``): a result that differs, with nothing
    raised, is a silent failure, and a read value that changed after the trace (or that differs
    between the runs) is its cause."""

    CALLS = 32

    def __init__(self, profiler, key, fun, parameters, options):
        self.profiler = profiler
        self.key = key
        self.fun = fun
        self.static = _static_parameters(fun, parameters, options)
        self.signature = _signature(fun)

    def before(self, args, kwargs):
        call = self.profiler.watched_calls.get(self.key, 0)
        if call >= self.CALLS:
            return None
        self.profiler.watched_calls[self.key] = call + 1
        try:
            return call, _reads(self.fun, self._identity_keyed(args, kwargs))
        except Exception:
            return call, {}

    def after(self, watched, result):
        call, reads = watched
        try:
            import jax

            leaves = jax.tree_util.tree_leaves(_without_checkify_error(result))[:_MOST_LEAVES]
            fingerprint = [_fingerprint(leaf) for leaf in leaves]
        except Exception:
            return
        self.profiler.write({"kind": "result", "file": self.key[0], "line": self.key[1], "function": self.key[2],
                             "call": call, "result": fingerprint, "reads": reads})

    def _identity_keyed(self, args, kwargs):
        """The static arguments jit keys by identity (an object without ``__eq__``): their
        attributes can change with no new compile."""
        if self.signature is None or not self.static:
            return []
        given = self.signature.bind_partial(*args, **kwargs).arguments
        return [(name, given[name]) for name in self.static if name in given
                and type(given[name]).__eq__ is object.__eq__ and not callable(given[name])]


_MOST_LEAVES = 64  # of a result, fingerprinted
_MOST_READS = 256  # values read by one call, fingerprinted
_MOST_DEPTH = 8  # attributes and items followed from a read name
_MOST_ELEMENTS = 100_000  # an array larger is fingerprinted by its shape and dtype alone


def _reads(fun, identity_keyed):
    """``path -> fingerprint`` of what a call of ``fun`` reads besides its arguments."""
    reads: dict = {}
    target = _unwrapped(fun)
    function = getattr(target, "__func__", target)
    code = getattr(function, "__code__", None)
    if code is None:
        return reads
    namespace = getattr(function, "__globals__", {})
    for name in sorted(_global_names(code, namespace)):
        _walk(namespace[name], name, reads, 0)
    for name, cell in zip(code.co_freevars, getattr(function, "__closure__", None) or ()):
        try:
            _walk(cell.cell_contents, name, reads, 0)
        except ValueError:  # an empty cell
            continue
    owner = getattr(target, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):  # a bound method jitted
        _walk(owner, code.co_varnames[0] if code.co_argcount else "self", reads, 0)
    for name, value in identity_keyed:
        _walk(value, name, reads, 0)
    return reads


_MOST_HELPERS = 32  # functions of the module followed from a jitted function


def _global_names(code, namespace):
    """The module globals the code names -- and the code of the module's functions it reaches
    through them (called directly, or through a dict or list of functions) names: what a trace
    of it reads from the module."""
    names: set = set()
    codes = [code]
    seen: set = set()
    while codes and len(seen) < _MOST_HELPERS:
        current = codes.pop()
        if current in seen:
            continue
        seen.add(current)
        codes += [constant for constant in current.co_consts if isinstance(constant, types.CodeType)]
        for name in current.co_names:
            if name not in namespace:
                continue
            names.add(name)
            value = namespace[name]
            held = list(value.values()) if isinstance(value, dict) else list(value) \
                if isinstance(value, (list, tuple)) else [value]
            codes += [item.__code__ for item in held[:64]
                      if isinstance(item, types.FunctionType) and item.__globals__ is namespace]
    return names


def _walk(value, path, reads, depth):
    """Fingerprint ``value`` at ``path``, following the attributes and items of objects,
    lists, tuples and dicts; modules, classes and functions are their names."""
    try:
        _walk_value(value, path, reads, depth)
    except Exception:  # an object whose attributes cannot be read: what it holds is not watched
        pass


def _walk_value(value, path, reads, depth):
    if len(reads) >= _MOST_READS or isinstance(value, types.ModuleType):
        return
    if isinstance(value, type):
        return
    if isinstance(value, (types.FunctionType, types.MethodType, types.BuiltinFunctionType, functools.partial)) \
            or callable(value) and hasattr(value, "__wrapped__"):  # a jitted function, a decorated one
        reads[path] = ["function", _function_name(value)]
        return
    if _is_generator(value):  # a NumPy random generator: its state says whether it drew
        reads[path] = ["random", f"state {hash(repr(_generator_state(value))) & 0xFFFFFF:06x}"]
        return
    if _is_leaf(value):
        reads[path] = _fingerprint(value)
        return
    if depth < _MOST_DEPTH:
        for part_path, part in _parts(value, path):
            _walk(part, part_path, reads, depth + 1)


def _function_name(value):
    """``module.helper:12``: a function by its name and line (two lambdas differ by their line)."""
    target = _unwrapped(value)
    code = getattr(getattr(target, "__func__", target), "__code__", None)
    name = getattr(target, "__qualname__", type(value).__name__)
    return f"{name}:{code.co_firstlineno}" if code is not None else name


def _is_generator(value):
    kind = type(value)
    return kind.__module__.startswith("numpy.random") and kind.__name__ in ("Generator", "RandomState")


def _generator_state(value):
    return value.bit_generator.state if hasattr(value, "bit_generator") else value.get_state(legacy=False)


def _is_leaf(value):
    return value is None or isinstance(value, (bool, int, float, complex, str)) or \
        hasattr(value, "shape") and hasattr(value, "dtype")


def _fingerprint(value):
    """A JSON summary of a value, compared with a tolerance by ``jitfix/silent.py``: a number;
    a string; an array's shape, first elements and sums; a tracer; else its type."""
    if value is None or isinstance(value, str):
        return ["text", repr(value)[:80]]
    if isinstance(value, (bool, int, float)):
        return ["number", [], [float(value)], float(value), abs(float(value))]
    if isinstance(value, complex):
        return ["number", [], [abs(value)], abs(value), abs(value)]
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(value, jax.core.Tracer):
        return ["tracer", _abstract_type(value)]
    shape = [int(size) for size in getattr(value, "shape", ())]
    if not hasattr(value, "dtype"):
        return ["object", type(value).__name__]
    size = 1
    for extent in shape:
        size *= extent
    try:
        import numpy

        if size > _MOST_ELEMENTS:
            raise ValueError(size)
        flat = numpy.asarray(value).reshape(-1)
        if flat.dtype.kind not in "biufc":
            raise ValueError(flat.dtype)
        flat = numpy.abs(flat) if flat.dtype.kind == "c" else flat
        flat = flat.astype(numpy.float64)
        return ["number", shape, flat[:8].tolist(), float(flat.sum()), float(numpy.abs(flat).sum())]
    except Exception:  # too large, or not numbers (a PRNG key's data): its shape and dtype
        return ["array", shape, str(value.dtype)]


class _LogHandler(logging.Handler):
    def __init__(self, profiler):
        super().__init__(logging.DEBUG)
        self.profiler = profiler

    def emit(self, record):
        try:
            message = record.getMessage()
        except Exception:
            return
        if message.startswith("TRACING CACHE MISS") or message.startswith("Compiling ") \
                or message.startswith("Finished "):
            self.profiler.write({"kind": "log", "message": message})


def _patched_once_jax_is_imported(patch):
    """Run ``patch(jax)`` as soon as jax's own imports are done (its classes are final then):
    when an import returns and jax's package has finished running -- inside the import of the
    user's module too (`python -c "import main"`), whose `from jax import jit` must already
    get the patched jit."""
    import builtins

    original_import = builtins.__import__
    patched: list = []  # (imports under way when it happens return through here too)

    def watching_import(name, *args, **kwargs):
        module = original_import(name, *args, **kwargs)
        jax = sys.modules.get("jax")
        if not patched and jax is not None and "jax.errors" in sys.modules \
                and not getattr(getattr(jax, "__spec__", None), "_initializing", False):
            patched.append(jax)
            builtins.__import__ = original_import  # patched once: stop watching
            patch(jax)
        return module

    builtins.__import__ = watching_import


def _call_recorder(folder):
    """The validation's recorder (``jitfix_recorder.py``, beside this hook), saving calls in
    ``folder``; None without a folder, or where it cannot be loaded."""
    if not folder:
        return None
    try:
        import jitfix_recorder

        return jitfix_recorder._Recorder({"folder": folder, "targets": {}})
    except Exception:
        return None


def _install():
    patches = []
    run_log, root = os.environ.get("JITFIX_RUN_LOG"), os.environ.get("JITFIX_RUN_ROOT")
    if run_log and root:
        recorder = _Recorder(root, run_log)
        patches.append(lambda jax: recorder.patch(sys.modules["jax.errors"]))
        atexit.register(_project_modules, root, run_log)
    profile_log = os.environ.get("JITFIX_PROFILE_LOG")
    if profile_log:
        profiler = _Profiler(profile_log, calls_only=bool(os.environ.get("JITFIX_PROFILE_CALLS_ONLY")),
                             recorder=_call_recorder(os.environ.get("JITFIX_RECORD_CALLS")))
        patches.append(profiler.install)
    if patches:
        _patched_once_jax_is_imported(lambda jax: [patch(jax) for patch in patches])


_install()
