"""Reading fixture files and running their sample calls eagerly and under jit."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

FIXTURES = Path(__file__).parent / "fixtures"
OUTPUT_MARKER = "# output\n"
EXPECT = re.compile(r"^# jitfix-expect: (?P<codes>.*)$", re.MULTILINE)
# NumPy code moved to jax.numpy: results come back in JAX's default dtypes (float64 -> float32).
JAX_DTYPES = "# jitfix-compare: jax-dtypes"
# Settings for one fixture, as in [tool.jitfix]: `# jitfix-config: scan-static-loops = true`.
CONFIG = re.compile(r"^# jitfix-config: (?P<setting>.*)$", re.MULTILINE)
# The rewrite may widen a result's dtype (an int branch cast to the float type of the other).
PROMOTED = "# jitfix-compare: promoted"


@dataclass
class Fixture:
    path: Path
    source: str
    expected: str  # equal to source when the fixture must stay unchanged
    expected_codes: list[str]  # codes of the findings left after fixing, in order
    promoted: bool = False  # results may come back in a wider dtype than the eager ones
    config: dict = field(default_factory=dict)  # Settings fields this fixture sets
    jax_dtypes: bool = False  # results may come back in JAX's default dtype of their kind

    @property
    def settings(self):
        from jitfix.config import Settings

        return Settings(**self.config)

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"


def load(path: Path) -> Fixture:
    text = path.read_text(encoding="utf-8")
    if OUTPUT_MARKER in text:
        source, expected = text.split(OUTPUT_MARKER, 1)
    else:
        source = expected = text
    match = EXPECT.search(source)
    codes = match["codes"].split() if match else []
    config = {}
    for match in CONFIG.finditer(source):
        config.update({key.replace("-", "_"): value for key, value in tomllib.loads(match["setting"]).items()})
    return Fixture(path, source, expected, codes, PROMOTED in source, config, jax_dtypes=JAX_DTYPES in source)


def all_fixtures() -> list[Fixture]:
    return [load(path) for path in sorted(FIXTURES.glob("*/*.py"))]


def exec_module(code: str, name: str, eager: bool = False) -> types.ModuleType:
    """Run the code as a module; ``eager``: with jit disabled, top-level statements included
    (the reference a module that computes as it is imported is compared with)."""
    import jax

    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    # dont_inherit: this file's `from __future__ import annotations` must not turn the
    # fixture's annotations into strings (dataclasses would then look the module up).
    sys.modules[name] = module
    try:
        with jax.disable_jit() if eager else contextlib.nullcontext():
            exec(compile(code, module.__file__, "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules[name]
    return module


def run_samples(module: types.ModuleType, eager: bool) -> list[tuple[object, str]]:
    """Call each SAMPLES entry; return (result, stdout) per call.

    An entry is ("function_name", args, kwargs), or a callable taking the module
    (for fixtures that change module state between calls).
    """
    import jax

    outcomes = []
    for sample in module.SAMPLES:
        buffer = io.StringIO()
        context = jax.disable_jit() if eager else contextlib.nullcontext()
        with context, contextlib.redirect_stdout(buffer):
            if callable(sample):
                result = sample(module)
            else:
                name, args, kwargs = sample
                result = getattr(module, name)(*args, **kwargs)
            result = jax.block_until_ready(result)
            jax.effects_barrier()
        outcomes.append((result, buffer.getvalue()))
    return outcomes


def assert_same_results(expected, actual, context: str, promoted: bool = False, jax_dtypes: bool = False) -> None:
    from jitfix.validate.compare import difference

    reason = difference(expected, actual, promoted=promoted, jax_dtypes=jax_dtypes, rtol=1e-6, atol=1e-6)
    assert reason is None, f"{context}: {reason}"
