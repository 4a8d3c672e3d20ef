"""Every rule's documentation is true (Fixit's idea): its example gets a finding of that
rule, and where `fix` fixes it, the documented fixed code is what `fix` writes."""

from __future__ import annotations

import pytest

from jitfix.config import Settings
from jitfix.engine import Options, process_text
from jitfix.rules import ALL_RULES

HEADER = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n\n\n"
# Rules that only act when a setting asks them to.
SETTINGS = {"JF203": Settings(scan_static_loops=True)}


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_the_documented_example_is_found_and_fixed_as_documented(rule) -> None:
    settings = SETTINGS.get(rule.code, Settings())
    source = HEADER + rule.doc.example
    found = process_text("example.py", source, settings, Options())
    assert rule.code in [finding.code for finding in found.findings]
    fixes = [finding.fix for finding in found.findings if finding.code == rule.code and finding.fix is not None]
    if fixes and rule.doc.fixed:
        fixed = process_text("example.py", source, settings, Options(apply_fixes=True, unsafe_fixes=True)).new_text
        assert rule.doc.fixed in fixed, fixed
