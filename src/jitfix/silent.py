"""Silent failures: a jitted function that returns otherwise under jit than with jit disabled,
with nothing raised -- and the value it reads that explains it.

``jitfix run``'s start-up hook (``run_hook._Watch``) writes, for each of a jitted function's
first calls, a fingerprint of its result and of what it read besides its arguments (module
globals its code names, closure cells, the attributes of a bound method's instance or of a
static argument jit keys by identity). This module compares the run with jit disabled with
the jitted run call by call. At the first call whose results differ, a read value is the cause
when

* it changed after the trace (``STALE``): the jitted run saw it change since the first call,
  as the run with jit disabled did, and jit kept the value it traced with; or
* it differs between the runs before that call (``LOST``): the function changes it, and under
  jit that change happened once, at trace time (or left a tracer behind).

A cause is claimed only where the source reads it: the function's own body, or a method of its
class for an attribute of ``self``, or any function of the module for a global. Values are
compared with a tolerance far looser than a stale value's difference, so that jit's own
reassociation of float arithmetic is never a difference.
"""

from __future__ import annotations

import ast
import math
import os
from dataclasses import dataclass, replace
from typing import Callable, Iterable

STALE = "stale"
LOST = "lost"
RTOL = 1e-3
ATOL = 1e-5

Fingerprint = list  # as run_hook._fingerprint writes it: ["number", shape, first, sum, abs sum], ...


@dataclass(frozen=True)
class Cause:
    kind: str  # STALE or LOST
    path: str  # what was read: `scale`, `self.mul`, `self.physics.terms[0].params._value.trvdi`
    line: int  # where the source reads it (or the part of it that is read there)
    read_as: str  # that part: `self.physics.terms`
    first: str  # STALE: its value at the first call; LOST: its value with jit disabled
    then: str  # STALE: its value at the differing call; LOST: its value under jit
    random: bool = False  # a NumPy random generator, whose state changes as it draws
    module_global: bool = False  # a name the module binds at its top level (JF301 can pass it in)

    def describe(self, call: int) -> str:
        through = f" (read through `{self.read_as}`)" if self.read_as != self.path else ""
        if self.random:
            return (f"it draws from `{self.path}`{through} at line {self.line}, a NumPy random generator: under jit "
                    "it draws once, when traced, and every call reuses those numbers -- draw with `jax.random` "
                    "and a key passed in (or draw outside the jitted function and pass the numbers in)")
        if self.kind == STALE:
            owner = ", or make its owner a pytree" if self.path != self.path.split(".")[0].split("[")[0] else ""
            return (f"it reads `{self.path}`{through} at line {self.line}, which changed after jit traced it "
                    f"({self.first} at call 1, {self.then} at call {call + 1}) -- jit keeps the value it traced "
                    f"with: pass the value in as an argument{owner}")
        if self.then == "a tracer":
            return (f"`{self.path}`{through}, read at line {self.line}, holds a tracer before call {call + 1} under "
                    f"jit ({self.first} with jit disabled): traced code stores a traced value there, which leaks "
                    "out of the trace; return it and assign it outside the jitted function")
        return (f"`{self.path}`{through}, read at line {self.line}, is {self.then} before call {call + 1} under jit "
                f"and {self.first} with jit disabled: traced code changes it, and under jit that happens once, "
                "when it is traced; return the new value and assign it outside the jitted function")


@dataclass(frozen=True)
class SilentDifference:
    path: str  # the function's module: its real path (`jitfix run` makes it relative to the project)
    function: str
    line: int  # of the function (its first decorator), in the original source
    call: int  # the first call (from 0) whose result differs
    difference: str
    causes: tuple[Cause, ...]

    def describe(self) -> str:
        head = (f"{self.path}:{self.line}: `{self.function}` returns otherwise under jit than with jit disabled, "
                f"first at its call {self.call + 1} ({self.difference})")
        if not self.causes:
            return head + ("; no value it reads besides its arguments changed after the trace or differs between "
                           "the runs: the cause is in what its callers pass or in code the run did not watch")
        return head + "; " + "; ".join(cause.describe(self.call) for cause in self.causes)


def silent_differences(reference: Iterable[dict], jitted: Iterable[dict],
                       source_of: Callable[[str], str | None]) -> list[SilentDifference]:
    """The jitted functions whose results differ between the run with jit disabled
    (``reference``, its log entries) and the jitted run, each at its first differing call, with
    the causes the source bears out (``source_of``: a file's original text, or None)."""
    eager, under_jit = _calls(reference), _calls(jitted)
    found = []
    for key, renamed in sorted(_paired(eager, under_jit).items()):
        first, second = eager[key], under_jit[renamed]
        for call in sorted(first.keys() & second.keys()):
            difference = _results_difference(first[call]["result"], second[call]["result"])
            if difference is None:
                continue
            path, name = key
            line = int(first[call]["line"])
            causes = _causes(call, first, second, _Reader(source_of(path), name, line))
            found.append(SilentDifference(path, name, line, call, difference, tuple(causes)))
            break
    return found


def unstable(found: list[SilentDifference], reference: Iterable[dict], again: Iterable[dict]) -> list[SilentDifference]:
    """Of ``found``, those not explained by the program itself: a function whose results differ
    between two runs with jit disabled too (an unseeded random draw) is left out."""
    differing = {(difference.path, difference.function)
                 for difference in silent_differences(reference, again, lambda path: None)}
    return [difference for difference in found if (difference.path, difference.function) not in differing]


def _paired(eager: dict[tuple[str, str], dict[int, dict]], jitted: dict[tuple[str, str], dict[int, dict]]
            ) -> dict[tuple[str, str], tuple[str, str]]:
    """Each function of the run with jit disabled and its counterpart in the jitted run: itself,
    or -- where a rewrite renamed the jitted def (JF301's `_scaled`, called by `scaled`) -- the
    one function of that file only the jitted run has, with as many calls."""
    pairs = {key: key for key in eager.keys() & jitted.keys()}
    for key in eager.keys() - jitted.keys():
        new = [other for other in jitted.keys() - eager.keys()
               if other[0] == key[0] and len(jitted[other]) == len(eager[key])]
        if len(new) == 1:
            pairs[key] = new[0]
    return pairs


def _calls(entries: Iterable[dict]) -> dict[tuple[str, str], dict[int, dict]]:
    calls: dict[tuple[str, str], dict[int, dict]] = {}
    for entry in entries:
        if entry.get("kind") == "result" and entry.get("file"):
            key = (os.path.realpath(entry["file"]), str(entry["function"]))
            calls.setdefault(key, {}).setdefault(int(entry["call"]), entry)
    return calls


def _results_difference(eager: list, jitted: list) -> str | None:
    if len(eager) != len(jitted):
        return f"{len(jitted)} arrays under jit, {len(eager)} with jit disabled"
    for index, (want, got) in enumerate(zip(eager, jitted)):
        if not same(want, got):
            where = f"result {index + 1}: " if len(eager) > 1 else ""
            return f"{where}{shown(got)} under jit, {shown(want)} with jit disabled"
    return None


def same(first: Fingerprint, second: Fingerprint) -> bool:
    """Two fingerprints of one value, equal within the tolerance."""
    if first[0] != "number" or second[0] != "number":
        return first == second
    (_, shape, head, total, size), (_, other_shape, other_head, other_total, other_size) = first, second
    if shape != other_shape or len(head) != len(other_head):
        return False
    return all(_close(a, b) for a, b in zip(head, other_head)) and _close(total, other_total, max(size, other_size)) \
        and _close(size, other_size)


def _close(a: float, b: float, scale: float | None = None) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= ATOL + RTOL * (scale if scale is not None else max(abs(a), abs(b)))


def shown(fingerprint: Fingerprint | None) -> str:
    if fingerprint is None:
        return "unset"
    if fingerprint[0] == "tracer":
        return "a tracer"
    if fingerprint[0] != "number":
        return fingerprint[1] if fingerprint[0] == "text" else f"{fingerprint[0]} {fingerprint[1]}"
    _, shape, head, total, _ = fingerprint
    if not shape:
        return f"{head[0]:.6g}"
    elements = ", ".join(f"{value:.4g}" for value in head[:3])
    return f"[{elements}{', ...' if math.prod(shape) > 3 else ''}] (sum {total:.6g})"


def _causes(call: int, eager: dict[int, dict], jitted: dict[int, dict], reader: _Reader) -> list[Cause]:
    before_eager, before_jit = eager[call].get("reads", {}), jitted[call].get("reads", {})
    lost = [path for path in sorted(before_eager.keys() & before_jit.keys())
            if not same(before_eager[path], before_jit[path])]
    causes = [replace(cause, random=before_eager[path][0] == "random") for path in lost
              if (cause := reader.cause(LOST, path, shown(before_eager[path]), shown(before_jit[path])))]
    first = jitted.get(0, {}).get("reads", {})
    if call > 0 and not causes:
        for path in sorted(first.keys() & before_jit.keys()):
            if not same(first[path], before_jit[path]):
                cause = reader.cause(STALE, path, shown(first[path]), shown(before_jit[path]))
                if cause:
                    causes.append(replace(cause, random=first[path][0] == "random"))
    return causes[:3]


class _Reader:
    """Where the source of a function (and of its class, and of its module) reads a path."""

    def __init__(self, source: str | None, name: str, line: int):
        self.tree: ast.Module | None = None
        self.function: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        self.owner: ast.ClassDef | None = None
        try:
            self.tree = ast.parse(source) if source is not None else None
        except (SyntaxError, ValueError):
            return
        for node in ast.walk(self.tree) if self.tree is not None else ():
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and child.name == name \
                        and line in (child.lineno, *(d.lineno for d in child.decorator_list)):
                    self.function = child
                    self.owner = node if isinstance(node, ast.ClassDef) else None

    def cause(self, kind: str, path: str, first: str, then: str) -> Cause | None:
        if self.function is None:
            return None
        parts = _parts(path)
        read = _read_in(self.function, parts, attribute_needed=False)
        if read is None:
            for scope in self._others(parts[0]):
                read = read or _read_in(scope, parts, attribute_needed=len(parts) > 1)
        if read is None:
            return None
        return Cause(kind, path, read[0], read[1], first, then, module_global=path in self._module_names()
                     and path not in {name.id for name in ast.walk(self.function) if isinstance(name, ast.Name)
                                      and isinstance(name.ctx, ast.Store)}
                     and path not in {argument.arg for argument in ast.walk(self.function.args)
                                      if isinstance(argument, ast.arg)})

    def _module_names(self) -> set[str]:
        """The names the module binds by assignment at its top level."""
        names: set[str] = set()
        for statement in self.tree.body if self.tree is not None else []:
            targets = statement.targets if isinstance(statement, ast.Assign) else \
                [statement.target] if isinstance(statement, ast.AnnAssign | ast.AugAssign) else []
            names |= {name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)}
        return names

    def _others(self, root: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Where else the trace may read ``root``: the class's other methods for an attribute of
        ``self``, the module's functions for a global."""
        assert self.function is not None
        parameters = self.function.args.posonlyargs + self.function.args.args
        if self.owner is not None and parameters and root == parameters[0].arg:
            return [node for node in self.owner.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
        if self.tree is None:
            return []
        return [node for node in ast.walk(self.tree)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not self.function]


def _parts(path: str) -> list[str]:
    """`self.terms[0].params` -> ["self", "terms", "params"]: the names an attribute chain in the
    source spells (an item is read through the container's name)."""
    names = []
    for piece in path.split("."):
        name = piece.split("[", 1)[0]
        if name:
            names.append(name)
    return names


def _read_in(scope: ast.AST, parts: list[str], attribute_needed: bool) -> tuple[int, str] | None:
    """The first line where ``scope`` reads the longest prefix of ``parts`` (its root name at
    least; a first attribute too with ``attribute_needed``), with that prefix."""
    best: tuple[int, int, str] | None = None
    inner = {id(node.value) for node in ast.walk(scope) if isinstance(node, ast.Attribute)}
    for node in ast.walk(scope):
        if id(node) in inner:
            continue  # a part of a longer chain, seen whole
        chain = _chain(node)
        if not chain or chain[0] != parts[0] or not isinstance(getattr(node, "ctx", None), ast.Load):
            continue
        matched = 0
        while matched < min(len(chain), len(parts)) and chain[matched] == parts[matched]:
            matched += 1
        if matched == 0 or attribute_needed and matched < 2 or matched == 1 < len(parts) and len(chain) > 1:
            continue  # `self.other`: a different attribute of the root
        key = (-matched, getattr(node, "lineno", 0), ".".join(parts[:matched]))
        if best is None or key < best:
            best = key
    return (best[1], best[2]) if best is not None else None


def _chain(node: ast.AST) -> list[str]:
    """`self.physics.terms` -> ["self", "physics", "terms"]; [] for what is not a name chain."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    return [node.id, *reversed(names)]
