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
            if isinstance(value, jax.core.Tracer):
                entry.update(_origin(value))
            lines = [entry, *self._callers(frame.f_back, jax.core.Tracer)]
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write("".join(json.dumps(line) + "\n" for line in lines))
        except Exception:  # recording is best effort
            pass

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

    def patch(self, errors):
        core = sys.modules.get("jax.core")
        if core is not None and hasattr(core, "Tracer"):
            self.patch_setitem(core.Tracer)
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
        return _Counted(jitted, tally, len(tally.signatures) - 1, record)

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
    try:
        info = tracer._debug_info
        positions, _ = tracer._trace.frame.find_progenitors(tracer)
        where = _matched(r"(.*) at (.*):(\d+)$", info.func_src_info)
        depends = {_matched(r"\*{0,2}([A-Za-z_]\w*)", info.arg_names[position])[1] for position in positions}
        return {"traced_by": {"function": where[1], "file": where[2], "line": int(where[3]), "for": info.traced_for},
                "depends_on": sorted(depends)}
    except Exception:  # a name this cannot read: nothing is known of where the value comes from
        return {}


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
    """The Python function under ``partial(...)`` and decorators, to name it by its def."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    return fun if hasattr(fun, "__code__") else getattr(fun, "__wrapped__", fun)


class _Counted:
    """A jitted function that counts its calls; everything else is the jitted function's."""

    def __init__(self, jitted, tally, version, record=None):
        self._jitted = jitted
        self._tally = tally
        self._version = version
        self._record = record  # saves a call's arguments (the run with jit disabled of `jitfix run`)
        functools.update_wrapper(self, jitted, updated=())

    # How many calls of jitted functions are under way: a call made inside another is traced
    # there under jit, whatever Python value the run with jit disabled gave it.
    _active = [0]

    def __call__(self, *args, **kwargs):
        self._tally.note(self._version, args, kwargs, nested=self._active[0] > 0)
        if self._record is not None and not self._active[0]:
            self._record(args, kwargs)
        start = time.perf_counter()
        self._active[0] += 1
        try:
            return self._jitted(*args, **kwargs)
        finally:
            self._active[0] -= 1
            self._tally.calls += 1
            self._tally.seconds += time.perf_counter() - start

    def __getattr__(self, name):
        if name in ("_jitted", "_tally", "_version", "_record"):  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self._jitted, name)

    def __get__(self, instance, owner=None):  # a jitted method binds like a function
        return self if instance is None else functools.partial(self, instance)


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
