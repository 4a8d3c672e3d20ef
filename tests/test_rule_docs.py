"""Every rule's documentation is true (Fixit's idea): its example gets a finding of that
rule, and where `fix` fixes it, the documented fixed code is exactly what `fix --unsafe-fixes`
writes for the whole example.

The test puts HEADER's imports above the example (the documented code reads `jax`, `jnp`,
`np` and `lax` without importing them). The documented Fixed block is compared with what
`fix` writes below its import block, line for line to the end of the module; the imports
`fix` adds beyond HEADER's (`from functools import partial` for a `@partial(jax.jit, ...)`)
head the documented block, so a reader sees where `partial` comes from. An import that a fix
makes unused and removes (`import numpy as np` once every `np.` call is `jnp.`) is HEADER's,
not the example's, and is not shown."""

from __future__ import annotations

import ast
import os

import pytest

from jitfix.analysis.observations import STAGED, Observation
from jitfix.config import Settings
from jitfix.engine import Options, process_text
from jitfix.rules import ALL_RULES

HEADER = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n\n\n"
# Rules that only act when a setting asks them to, or on what a run of `jitfix run` saw (JF509:
# that the example's line 3, `num_values = jnp.asarray(...)` in `__init__`, made a value that
# then failed).
_EXAMPLE_LINE = HEADER.count("\n") + 1
SETTINGS = {
    "JF203": Settings(scan_static_loops=True),
    "JF509": Settings(observed=(Observation(os.path.realpath("example.py"), "__init__", _EXAMPLE_LINE + 1,
                                            _EXAMPLE_LINE + 2, STAGED, (), via="example.py:10 (TracerBoolConversionError)",
                                            made=("int32",)),)),
}


def split_imports(text: str) -> tuple[list[str], str]:
    """The import statements that head a module (each as its source line), and the code after
    them, from its first other statement (its first decorator) to the end."""
    body = ast.parse(text).body
    first = next((node for node in body if not isinstance(node, (ast.Import, ast.ImportFrom))), None)
    if first is None:
        return [ast.get_source_segment(text, node) or "" for node in body], ""
    start = min([first.lineno] + [decorator.lineno for decorator in getattr(first, "decorator_list", [])])
    imports = [ast.get_source_segment(text, node) or "" for node in body[:body.index(first)]]
    return imports, "".join(text.splitlines(keepends=True)[start - 1:])


def test_split_imports_keeps_everything_after_the_imports() -> None:
    text = "from functools import partial\n\nimport jax\n\n\n@partial(jax.jit)\ndef f(x):\n    return x\n\n\ny = 1\n"
    assert split_imports(text) == (["from functools import partial", "import jax"],
                                   "@partial(jax.jit)\ndef f(x):\n    return x\n\n\ny = 1\n")


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_the_documented_example_is_found_and_fixed_as_documented(rule) -> None:
    settings = SETTINGS.get(rule.code, Settings())
    source = HEADER + rule.doc.example
    found = process_text("example.py", source, settings, Options())
    assert rule.code in [finding.code for finding in found.findings]
    fixes = [finding.fix for finding in found.findings if finding.code == rule.code and finding.fix is not None]
    if not fixes:
        return
    assert rule.doc.fixed, f"{rule.code}: fix fixes the example, and the doc shows no Fixed code"
    fixed = process_text("example.py", source, settings, Options(apply_fixes=True, unsafe_fixes=True)).new_text
    header_imports, _ = split_imports(HEADER)
    written_imports, written_code = split_imports(fixed)
    documented_imports, documented_code = split_imports(rule.doc.fixed)
    assert documented_code == written_code, \
        f"{rule.code}: the documented Fixed code is not what `fix --unsafe-fixes` writes:\n{fixed}"
    added = [line for line in written_imports if line not in header_imports]
    assert documented_imports == added, \
        f"{rule.code}: the documented Fixed code imports {documented_imports}; the fix adds {added}"


@pytest.mark.parametrize("rule", [rule for rule in ALL_RULES if rule.doc.fixed],
                         ids=[rule.code for rule in ALL_RULES if rule.doc.fixed])
def test_the_documented_fixed_code_is_not_found_again(rule) -> None:
    """Also where `fix` cannot write it (a person's fix: `key` passed in, `eqx.error_if`), the
    documented Fixed code is what the rule asks for: the rule finds nothing in it."""
    settings = SETTINGS.get(rule.code, Settings())
    found = process_text("example.py", HEADER + rule.doc.fixed, settings, Options())
    assert rule.code not in [finding.code for finding in found.findings], \
        [finding.message for finding in found.findings if finding.code == rule.code]
