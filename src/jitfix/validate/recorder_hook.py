"""Installed as ``sitecustomize`` in the user's own command by ``jitfix ... --record``.

Standalone on purpose (the user's interpreter may not have jitfix): when a module whose
file is one of the targets is imported, its target functions are wrapped so that every
call with concrete arguments (not inside a trace) is saved -- the first few distinct
shapes and dtypes of each -- as a pickle in the folder named by ``JITFIX_RECORD``.
Recording never changes what the call does or returns, and never raises.
"""

import functools
import hashlib
import importlib.abc
import json
import os
import pickle
import sys

MAX_PER_FUNCTION = 4


class _Recorder:
    def __init__(self, settings):
        self.folder = settings["folder"]
        self.targets = {os.path.realpath(path): set(names) for path, names in settings["targets"].items()}
        self.seen = {}

    def wrap(self, path, name, function):
        recorder = self

        @functools.wraps(function)
        def recorded(*args, **kwargs):
            try:
                recorder.save(path, name, args, kwargs)
            except Exception:  # recording is best effort; the call itself must not change
                pass
            return function(*args, **kwargs)

        return recorded

    def full(self, path, name):
        """Whether as many kinds of call of the function as are kept have been saved."""
        return len(self.seen.get((path, name), ())) >= MAX_PER_FUNCTION

    def save(self, path, name, args, kwargs):
        """Save the call, if it is a kind of call not saved yet; True when it was."""
        import jax
        import numpy as np

        if self.full(path, name):
            return  # enough kinds of call saved: the rest cost nothing more
        leaves = jax.tree.leaves((args, kwargs))
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return  # called inside a trace: no concrete values
        signature = repr(jax.tree.map(
            lambda v: (tuple(np.shape(v)), str(np.asarray(v).dtype)) if hasattr(v, "shape") else (type(v).__name__, v),
            (args, kwargs)))
        seen = self.seen.setdefault((path, name), set())
        if signature in seen or len(seen) >= MAX_PER_FUNCTION:
            return
        seen.add(signature)
        plain = jax.tree.map(lambda v: np.asarray(v) if isinstance(v, jax.Array) else v, (args, kwargs))
        record = {"path": path, "function": name, "args": plain[0], "kwargs": plain[1]}
        digest = hashlib.sha1(f"{path}:{name}:{signature}".encode()).hexdigest()[:16]
        data = pickle.dumps(record)
        target = os.path.join(self.folder, f"{digest}.pkl")
        with open(target + ".tmp", "wb") as handle:
            handle.write(data)
        os.replace(target + ".tmp", target)
        return True


class _Recording:
    """Calls of another object (a jitted function) recorded as calls of the target it wraps;
    everything else about it (``.lower``, attributes) is the object's own."""

    def __init__(self, recorder, path, name, target):
        self._recorder, self._path, self._name, self._target = recorder, path, name, target

    def __call__(self, *args, **kwargs):
        try:
            self._recorder.save(self._path, self._name, args, kwargs)
        except Exception:  # recording is best effort; the call itself must not change
            pass
        return self._target(*args, **kwargs)

    def __getattr__(self, attribute):
        return getattr(self._target, attribute)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: asks the other finders, and wraps the loader of a target module."""

    def __init__(self, recorder):
        self.recorder = recorder

    def find_spec(self, fullname, path, target=None):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        origin = os.path.realpath(spec.origin) if spec.origin else None
        names = self.recorder.targets.get(origin)
        if names and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, self.recorder, origin, names)
        return spec


class _Loader(importlib.abc.Loader):
    def __init__(self, loader, recorder, path, names):
        self.loader, self.recorder, self.path, self.names = loader, recorder, path, names

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        for name in self.names:
            function = module.__dict__.get(name)
            if callable(function):
                module.__dict__[name] = self.recorder.wrap(self.path, name, function)
        # `fit = jax.jit(kmeans)`: the module's other names for a target, made before it was
        # wrapped (a jitted function keeps what it wraps as `__wrapped__`), record its calls too.
        for name, value in list(module.__dict__.items()):
            wrapped = getattr(value, "__wrapped__", None) if name not in self.names else None
            if callable(value) and callable(wrapped) and getattr(wrapped, "__module__", None) == module.__name__ \
                    and getattr(wrapped, "__name__", None) in self.names:
                module.__dict__[name] = _Recording(self.recorder, self.path, wrapped.__name__, value)

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _install():
    settings_path = os.environ.get("JITFIX_RECORD")
    if not settings_path:
        return
    with open(settings_path, encoding="utf-8") as handle:
        settings = json.load(handle)
    sys.meta_path.insert(0, _Finder(_Recorder(settings)))


def _chain():
    """Run the sitecustomize this one shadows, if the environment has one."""
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.util

    for entry in sys.path:
        if os.path.abspath(entry or ".") == here:
            continue
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.isfile(candidate):
            spec = importlib.util.spec_from_file_location("_jitfix_shadowed_sitecustomize", candidate)
            if spec is None or spec.loader is None:
                return
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return


if __name__ == "sitecustomize":  # as the start-up hook; `jitfix run`'s own hook imports `_Recorder` only
    try:
        _install()
    finally:
        _chain()
