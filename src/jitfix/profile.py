"""``jitfix profile -- COMMAND``: how often each jitted function compiles, and why.

The command runs with the start-up hook of ``jitfix run`` (``run_hook.py``) in its profiling
mode: every function ``jax.jit`` makes counts its calls and the time spent in them, and JAX's
compile log and cache-miss explanations are captured. This module reads that log and says,
per jitted function, how many calls and compiles there were, how long compiling took, and
why each recompile happened (an argument's shape, dtype or weak type changed, a static
argument took a new value, a new function object was jitted), with the fix JAX's
documentation recommends for that cause.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from jitfix.config import Settings
from jitfix.validate.compare import first_line_difference
from jitfix.validate.process import run as run_process

HOOK = Path(__file__).with_name("run_hook.py")
EAGER = "(eager jax.numpy operations)"  # what JAX compiles for operations outside any jit

_MISS = re.compile(r"TRACING CACHE MISS at (?P<callsite>.*?):\n")
_DEFINED = re.compile(r"(?:never seen function:\n\s+(?P<new>\S+) id=\d+|for (?P<seen>\S+)) defined at "
                      r"(?P<file>.*):(?P<line>\d+)")
_TYPE_CHANGE = re.compile(r"\* at (?P<argument>[^,]+), now (?P<now>\S+?)(?:\(\{\}\)\{weak_type=(?P<now_weak>\w+)\})?"
                          r" and before (?P<before>\S+?)(?:\(\{\}\)\{weak_type=(?P<before_weak>\w+)\})?(?:https\S*)?$",
                          re.MULTILINE)
_STATIC_CHANGE = re.compile(r"\* at input path (?P<path>\S+), now .*?Static\(val=(?P<now>.*?)\) and before .*?"
                            r"Static\(val=(?P<before>.*?)\)")
_COMPILING = re.compile(r"Compiling (?P<name>\S+) with")
_FINISHED = re.compile(r"Finished (?:tracing (?P<traced>\S+) for jit|jaxpr to MLIR module conversion (?P<lowered>\S+)|"
                       r"XLA compilation of (?P<compiled>\S+)) in (?P<seconds>[0-9.]+) sec")
_AVAL = re.compile(r"(?P<dtype>[a-z]+\d*)\[(?P<shape>[0-9,]*)\]")


@dataclass
class Recompile:
    """One compile after the first, and what made it."""

    at: float  # seconds into the run
    callsite: str
    cause: str  # "shape", "dtype", "weak type", "static", "new function", "other"
    argument: str | None = None
    before: str | None = None
    after: str | None = None

    def summary(self) -> str:
        if self.cause == "new function":
            return "new function object"
        if self.argument is None:
            return self.cause
        if self.cause == "static":
            return f"value of static `{self.argument}`"
        return f"{self.cause} of `{self.argument}`"

    def describe(self) -> str:
        if self.argument is None:
            return self.summary()
        return f"{self.summary()}: {self.before} -> {self.after}"


@dataclass
class FunctionProfile:
    name: str
    file: str
    line: int
    parameters: list[str] = field(default_factory=list)
    static: list[str] = field(default_factory=list)
    calls: int = 0
    call_seconds: float = 0.0
    compiles: int = 0
    compile_seconds: float = 0.0
    compile_times: list[float] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    # parameter -> the distinct kinds of argument it was given: ``f32[3]``, ``~f32[]`` (weakly
    # typed), ``int 3`` (a Python value), ``dict`` (a pytree).
    arguments: dict[str, list[str]] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else "?"

    @property
    def run_seconds(self) -> float:
        """Time in calls that was not spent compiling (dispatch, and on CPU the computation)."""
        return max(self.call_seconds - self.compile_seconds, 0.0)

    @property
    def compile_bound(self) -> bool:
        return self.compiles > 1 and self.compile_seconds > self.run_seconds

    def causes(self) -> dict[str, int]:
        """How many recompiles each cause made: ``{"shape of `x`": 2, "new function object": 1}``."""
        counts: dict[str, int] = {}
        for recompile in self.recompiles:
            counts[recompile.summary()] = counts.get(recompile.summary(), 0) + 1
        return counts

    def suggestions(self) -> list[str]:
        """What JAX's documentation recommends for each cause seen."""
        found: list[str] = []
        if any(r.cause == "new function" for r in self.recompiles):
            found.append("the function is jitted anew each time (`jax.jit(...)` inside a loop or a function "
                         "called repeatedly): create the jitted function once and reuse it (JF502)")
        for argument, values in _grouped(self.recompiles, "static").items():
            found.append(f"static `{argument}` took {len(values)} values ({', '.join(values[:6])}"
                         f"{', ...' if len(values) > 6 else ''}): each compiles anew; if it only enters "
                         "arithmetic, make it a traced argument, else keep its values few (JF503)")
        for argument, values in _grouped(self.recompiles, "shape").items():
            buckets = shape_buckets(values)
            bucket_text = f" to one of the lengths {buckets}" if buckets else ""
            found.append(f"`{argument}` came in {len(values)} shapes ({', '.join(values[:6])}): pad it{bucket_text}, "
                         "so a few shapes serve every call (a function that works row by row then only needs its "
                         "result cut back, JF504's fix; others need a mask of the real rows too)")
        for argument, values in _grouped(self.recompiles, "dtype").items():
            dtypes = list(dict.fromkeys(_dtype(value) for value in values))
            found.append(f"`{argument}` came as {', '.join(dtypes)}: convert it to one dtype before the call "
                         f"(`jnp.asarray({argument}, jnp.float32)`)")
        for argument, _ in _grouped(self.recompiles, "weak type").items():
            found.append(f"`{argument}` was a Python number in some calls and an array in others: pass one "
                         f"kind (`jnp.float32({argument})`, or always a Python scalar)")
        return found

    def arguments_shown(self) -> str:
        """``x: f32[4]; n: int 1, int 3 (static)``: what each parameter was given."""
        return "; ".join(f"{name}: {', '.join(kinds)}" + (" (static)" if name in self.static else "")
                         for name, kinds in self.arguments.items())

    def as_json(self) -> dict:
        return {"function": self.name, "file": self.file, "line": self.line, "calls": self.calls,
                "arguments": self.arguments, "static": self.static,
                "compiles": self.compiles, "compile_seconds": round(self.compile_seconds, 4),
                "call_seconds": round(self.call_seconds, 4), "compile_bound": self.compile_bound,
                "recompiles": [{"at": r.at, "callsite": r.callsite, "cause": r.cause, "argument": r.argument,
                                "before": r.before, "after": r.after} for r in self.recompiles],
                "suggestions": self.suggestions()}


def _grouped(recompiles: list[Recompile], cause: str) -> dict[str, list[str]]:
    """argument -> the values it took (first value first), for one cause."""
    grouped: dict[str, list[str]] = {}
    for recompile in recompiles:
        if recompile.cause == cause and recompile.argument is not None:
            values = grouped.setdefault(recompile.argument, [])
            for value in (recompile.before, recompile.after):
                if value is not None and value not in values:
                    values.append(value)
    return grouped


def shape_buckets(shapes: list[str]) -> list[int]:
    """Padded lengths for an argument whose leading length varies: the powers of two that
    cover the lengths seen (``f32[3]``, ``f32[5]``, ``f32[9]`` -> ``[4, 8, 16]``); empty when
    the shapes differ in more than one axis or in rank."""
    dims = []
    for shape in shapes:
        match = _AVAL.fullmatch(shape)
        if match is None:
            return []
        dims.append(tuple(int(d) for d in match["shape"].split(",") if d))
    if not dims or len({len(d) for d in dims}) != 1 or not dims[0]:
        return []
    varying = [axis for axis in range(len(dims[0])) if len({d[axis] for d in dims}) > 1]
    if len(varying) != 1:
        return []
    lengths = sorted({d[varying[0]] for d in dims})
    return sorted({1 << max(length - 1, 0).bit_length() for length in lengths})


@dataclass
class Profile:
    functions: list[FunctionProfile]
    eager_compiles: int
    eager_seconds: float
    returncode: int | None
    output: str  # stdout and stderr
    stdout: str = ""

    def as_json(self) -> dict:
        return {"functions": [f.as_json() for f in self.functions], "eager_compiles": self.eager_compiles,
                "eager_compile_seconds": round(self.eager_seconds, 4), "returncode": self.returncode}


def read_profile(log: Path, root: Path | None = None) -> tuple[list[FunctionProfile], int, float]:
    """The functions the log tells of, most compiles first (their files relative to ``root``,
    the folder the command ran in, when inside it); and the eager operations' compiles."""
    functions: dict[tuple[str, int, str], FunctionProfile] = {}
    # The function of the last cache miss under each name: a compile names the function it
    # compiles, and misses of the functions it traces inside (lax.cond branches) come between.
    missed: dict[str, FunctionProfile] = {}
    eager_compiles, eager_seconds = 0, 0.0
    for raw in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        kind = entry.get("kind")
        if kind in ("jit", "calls"):
            profile = functions.setdefault((entry["file"], entry["line"], entry["function"]),
                                           FunctionProfile(entry["function"], entry["file"], entry["line"]))
            if kind == "jit":
                profile.parameters, profile.static = entry["parameters"], entry["static"]
            else:
                profile.calls += entry["calls"]
                profile.call_seconds += entry["seconds"]
                for name, kinds in entry.get("arguments", {}).items():
                    known = profile.arguments.setdefault(name, [])
                    known += [kind for kind in kinds if kind not in known]
            continue
        message = entry.get("message", "")
        if message.startswith("TRACING CACHE MISS"):
            of = _miss(message, entry.get("t", 0.0), functions)
            if of is not None:
                missed[of.name] = of
            continue
        compiling = _COMPILING.match(message)
        if compiling:
            current = missed.get(_jitted_name(compiling["name"]))
            if current is not None:
                current.compiles += 1
                current.compile_times.append(entry.get("t", 0.0))
            else:
                eager_compiles += 1
            continue
        finished = _FINISHED.match(message)
        if finished:
            current = missed.get(_jitted_name(finished["traced"] or finished["lowered"] or finished["compiled"]))
            if current is not None:
                current.compile_seconds += float(finished["seconds"])
            else:
                eager_seconds += float(finished["seconds"])
    for profile in functions.values():
        profile.file = _relative(profile.file, root)
        for recompile in profile.recompiles:
            path, _, place = recompile.callsite.partition(":")
            recompile.callsite = f"{_relative(path, root)}:{place}" if place else recompile.callsite
    ordered = sorted(functions.values(), key=lambda f: (-f.compiles, -f.compile_seconds, f.where))
    return [f for f in ordered if f.calls or f.compiles], eager_compiles, eager_seconds


def _relative(path: str, root: Path | None) -> str:
    if root is None or not path:
        return path
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def _jitted_name(logged: str) -> str:
    """``jit(step)`` -> ``step`` (JAX's log names a compiled function either way)."""
    return logged[4:-1] if logged.startswith("jit(") and logged.endswith(")") else logged


def _miss(message: str, at: float, functions: dict[tuple[str, int, str], FunctionProfile]) -> FunctionProfile | None:
    defined = _DEFINED.search(message)
    if defined is None:
        return None
    name = defined["new"] or defined["seen"]
    key = (defined["file"], int(defined["line"]), name)
    profile = functions.setdefault(key, FunctionProfile(name, key[0], key[1]))
    callsite_match = _MISS.match(message)
    callsite = callsite_match["callsite"] if callsite_match else ""
    known = len(profile.recompiles)
    if defined["new"]:
        if "seen another function defined on the same line" in message:
            profile.recompiles.append(Recompile(at, callsite, "new function"))
        return profile
    for change in _TYPE_CHANGE.finditer(message):
        now, before = change["now"], change["before"]
        now_weak, before_weak = change["now_weak"], change["before_weak"]
        if now_weak is not None and now_weak != before_weak:
            cause = "weak type"
            now, before = _with_weak(now, now_weak), _with_weak(before, before_weak)
        elif _dtype(now) != _dtype(before):
            cause = "dtype"
        else:
            cause = "shape"
        profile.recompiles.append(Recompile(at, callsite, cause, change["argument"], before, now))
    for change in _STATIC_CHANGE.finditer(message):
        argument = _argument_at(change["path"], profile.parameters)
        profile.recompiles.append(Recompile(at, callsite, "static", argument, change["before"], change["now"]))
    if len(profile.recompiles) == known:  # a cause this does not read: JAX's own words
        reason = message.split("For the closest previous key:", 1)[-1].strip().splitlines()
        profile.recompiles.append(Recompile(at, callsite, reason[0].rstrip(":") if reason else "other"))
    return profile


def _with_weak(aval: str, weak: str | None) -> str:
    return f"{aval} (Python scalar)" if weak == "True" else aval


def _dtype(aval: str) -> str:
    return aval.split("[", 1)[0]


def _argument_at(path: str, parameters: list[str]) -> str:
    """``[0][1]`` (positional argument 1) -> its parameter's name; ``[1]['n']`` -> ``n``."""
    positional = re.fullmatch(r"\[0\]\[(\d+)\]", path)
    if positional and int(positional[1]) < len(parameters):
        return parameters[int(positional[1])]
    keyword = re.fullmatch(r"\[1\]\['(\w+)'\]", path)
    return keyword[1] if keyword else f"argument at {path}"


def profile_command(command: list[str], *, timeout: float = 600.0, cwd: Path | None = None) -> Profile:
    """Run ``command`` (in ``cwd``, by default the current folder, and the current environment,
    as it is: timings are of the real devices) and read how its jitted functions compiled."""
    folder = (cwd or Path.cwd()).resolve()
    with tempfile.TemporaryDirectory(prefix="jitfix-profile-") as scratch_name:
        scratch = Path(scratch_name)
        hook = scratch / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_bytes(HOOK.read_bytes())
        log = scratch / "profile.jsonl"
        python_path = os.pathsep.join(filter(None, [str(hook), str(folder), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "JITFIX_PROFILE_LOG": str(log), "PYTHONPATH": python_path}
        outcome = run_process(command, timeout=timeout, cwd=str(folder), env=env)
        functions, eager_compiles, eager_seconds = read_profile(log, folder)
    return Profile(functions, eager_compiles, eager_seconds, outcome.returncode, outcome.stdout + outcome.stderr,
                   outcome.stdout)


# -- fixes -----------------------------------------------------------------------------------

# The rules whose fixes remove a cause the profile sees: a function jitted anew each pass
# (JF502), a static argument that takes a new value each call (JF503: its fix is unsafe
# alone, and is applied with the run's evidence), an argument of a new length each call
# (JF504: padded to a power of two).
RECOMPILATION_FIXES = ("JF502", "JF503", "JF504")


@dataclass
class ProfileFix:
    before: Profile
    after: Profile | None  # the command profiled again with the fixes, if any was made
    changed: dict[str, tuple[str, str]]  # relative path -> (old text, new text)

    def compiles(self) -> list[tuple[str, int, int | None]]:
        """(function, compiles before, after) for every function of the first run; a function
        is found again by its name and file (the fixes may move its line), the nearest line
        deciding between namesakes."""
        rows: list[tuple[str, int, int | None]] = []
        for f in self.before.functions:
            same = [g for g in (self.after.functions if self.after else []) if (g.name, g.file) == (f.name, f.file)]
            match = min(same, key=lambda g: abs(g.line - f.line)) if same else None
            rows.append((f"{f.name} ({f.where})", f.compiles, match.compiles if match else None))
        return rows

    def as_json(self) -> dict:
        from jitfix.engine import unified_diff

        return {"diff": "".join(unified_diff(path, old, new) for path, (old, new) in sorted(self.changed.items())),
                "compiles": [{"function": name, "before": before, "after": after}
                             for name, before, after in self.compiles()],
                "returncode": self.after.returncode if self.after else None,
                "output_difference": self.output_difference()}

    def output_difference(self) -> str | None:
        """Where the command printed otherwise with the fixes (numbers within float32's
        precision), or None."""
        if self.after is None:
            return None
        return first_line_difference(self.before.stdout, self.after.stdout, "before the fixes")


def profile_and_fix(command: list[str], settings: Settings, *, timeout: float = 600.0) -> ProfileFix:
    """Profile, apply the safe fixes of the causes seen to the files they were seen in, and
    profile a scratch copy of the folder with those fixes: the compile counts before and after."""
    from jitfix.engine import Options, process_text
    from jitfix.files import SKIPPED, InputError, read_source

    root = Path.cwd().resolve()
    before = profile_command(command, timeout=timeout, cwd=root)
    implicated = sorted({path for f in before.functions if f.recompiles
                         for path in (f.file, *(r.callsite.partition(":")[0] for r in f.recompiles))
                         if path.endswith(".py") and not Path(path).is_absolute() and (root / path).is_file()})
    fixing = replace(settings, select=RECOMPILATION_FIXES, recompiled_static=_static_evidence(before, root))
    changed: dict[str, tuple[str, str]] = {}
    for relative in implicated:
        try:
            source = read_source(str(root / relative))
        except InputError:
            continue
        result = process_text(relative, source.text, fixing, Options(apply_fixes=True, unsafe_fixes=True))
        if result.new_text is not None and result.new_text != source.text:
            changed[relative] = (source.text, result.new_text)
    if not changed:
        return ProfileFix(before, None, {})
    with tempfile.TemporaryDirectory(prefix="jitfix-profile-fix-") as scratch_name:
        scratch = Path(scratch_name) / root.name
        shutil.copytree(root, scratch, ignore=SKIPPED, symlinks=True)
        for relative, (_, new) in changed.items():
            (scratch / relative).write_text(new, encoding="utf-8")
        after = profile_command(command, timeout=timeout, cwd=scratch)
    return ProfileFix(before, after, changed)


def _static_evidence(profile: Profile, root: Path) -> tuple[tuple[str, int, str, str, int], ...]:
    """Static arguments the run saw compile again for new values, each with how many values,
    when every value was a number (a traced argument takes numbers only)."""
    found = []
    for f in profile.functions:
        for argument, values in _grouped(f.recompiles, "static").items():
            if all(re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", value) for value in values):
                path = str((root / f.file).resolve()) if not Path(f.file).is_absolute() else f.file
                found.append((path, f.line, f.name, argument, len(values)))
    return tuple(found)


# -- reports ---------------------------------------------------------------------------------


def text_report(profile: Profile, bar_width: int = 20) -> str:
    if not profile.functions:
        return "No jitted function was called."
    rows = [("function", "defined at", "calls", "compiles", "compile s", "other s", "recompiled because")]
    for f in profile.functions:
        causes = ", ".join(f"{cause} x{count}" for cause, count in f.causes().items()) or "-"
        rows.append((f.name, f.where, str(f.calls), str(f.compiles), f"{f.compile_seconds:.2f}",
                     f"{f.run_seconds:.2f}", causes + ("  (compile-bound)" if f.compile_bound else "")))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in rows]
    most = max(f.compiles for f in profile.functions) or 1
    lines += ["", "compiles per function:"]
    name_width = max(len(f.name) for f in profile.functions)
    for f in profile.functions:
        lines.append(f"  {f.name.ljust(name_width)}  {'█' * max(1, round(bar_width * f.compiles / most))} {f.compiles}")
    if any(f.arguments for f in profile.functions):
        lines += ["", "arguments given (arrays as jit sees them, ~ weakly typed; Python values as given):"]
        lines += [f"  {f.name.ljust(name_width)}  {f.arguments_shown()}" for f in profile.functions if f.arguments]
    for f in profile.functions:
        if f.suggestions():
            lines += ["", f"{f.name} ({f.where}):", *(f"  - {s}" for s in f.suggestions())]
    if profile.eager_compiles:
        lines += ["", f"{EAGER}: {profile.eager_compiles} compiles, {profile.eager_seconds:.2f} s"]
    return "\n".join(lines)


def markdown_report(profile: Profile) -> str:
    lines = ["# jitfix profile", "", "| function | defined at | calls | compiles | compile s | other s | "
             "recompiled because |", "|---|---|---:|---:|---:|---:|---|"]
    for f in profile.functions:
        causes = "<br>".join(f"{cause} ×{count}" for cause, count in f.causes().items()) or "–"
        flag = " **(compile-bound)**" if f.compile_bound else ""
        lines.append(f"| `{f.name}` | `{f.where}` | {f.calls} | {f.compiles} | {f.compile_seconds:.2f} | "
                     f"{f.run_seconds:.2f} | {causes}{flag} |")
    for f in profile.functions:
        if f.recompiles or f.suggestions():
            lines += ["", f"## `{f.name}` ({f.where})", ""]
            lines += [f"- {r.at:.2f} s, `{r.callsite}`: {r.describe()}" for r in f.recompiles]
            lines += ["", *(f"**Fix:** {s}" for s in f.suggestions())]
    if profile.eager_compiles:
        lines += ["", f"{EAGER}: {profile.eager_compiles} compiles, {profile.eager_seconds:.2f} s."]
    return "\n".join(lines) + "\n"


def svg_chart(profile: Profile, width: int = 640) -> str:
    """Compiles over time, one row per function: a mark at each compile."""
    functions = [f for f in profile.functions if f.compile_times]
    row, left, top = 24, 180, 30
    height = top + row * max(len(functions), 1) + 30
    end = max((t for f in functions for t in f.compile_times), default=1.0) or 1.0
    scale = (width - left - 20) / end
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             'font-family="sans-serif" font-size="12">',
             f'<text x="{left}" y="18">compiles over time (0 to {end:.1f} s)</text>']
    for index, f in enumerate(functions):
        y = top + index * row + row // 2
        parts.append(f'<text x="4" y="{y + 4}">{_xml(f.name)} ({f.compiles})</text>')
        parts.append(f'<line x1="{left}" y1="{y}" x2="{width - 20}" y2="{y}" stroke="#ccc"/>')
        for t in f.compile_times:
            parts.append(f'<rect x="{left + t * scale - 2:.1f}" y="{y - 7}" width="4" height="14" fill="#c33"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
