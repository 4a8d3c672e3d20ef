"""Installed as ``sitecustomize`` in the user's command by ``jitfix run``.

Standalone on purpose (the user's interpreter may not have jitfix): once jax is imported,
the errors JAX raises when traced code meets Python semantics are made to record where they
were raised -- the innermost frame in the project (``JITFIX_RUN_ROOT``), its function, and
which of its local variables hold tracers -- as JSON lines appended to ``JITFIX_RUN_LOG``.
Recording never changes what the program does, and never raises.
"""

import json
import os
import sys
import types

# The errors of traced values used as Python values (jax.errors).
RECORDED_ERRORS = ("ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError",
                   "TracerArrayConversionError")


class _Recorder:
    def __init__(self, root, log):
        self.root = os.path.realpath(root) + os.sep
        self.log = log

    def record(self, error_name):
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

            traced = sorted(name for name, value in frame.f_locals.items() if isinstance(value, jax.core.Tracer))
            entry = {"path": path, "line": frame.f_lineno, "function": frame.f_code.co_name,
                     "first_line": frame.f_code.co_firstlineno, "error": error_name, "traced": traced}
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
        except Exception:  # recording is best effort
            pass

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
                    self.record(_class.__name__)
                _original(this, *args, **kwargs)

            cls.__init__ = init
            cls._jitfix_recorded = True


def _install():
    log, root = os.environ.get("JITFIX_RUN_LOG"), os.environ.get("JITFIX_RUN_ROOT")
    if not log or not root:
        return
    recorder = _Recorder(root, log)
    import builtins

    original_import = builtins.__import__
    depth = [0]

    def watching_import(name, *args, **kwargs):
        depth[0] += 1
        try:
            module = original_import(name, *args, **kwargs)
        finally:
            depth[0] -= 1
        errors = sys.modules.get("jax.errors")
        if errors is not None and depth[0] == 0:  # jax's own imports done: its classes are final
            recorder.patch(errors)
            builtins.__import__ = original_import  # patched once: stop watching
        return module

    builtins.__import__ = watching_import


_install()
