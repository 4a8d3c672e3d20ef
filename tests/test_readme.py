"""The README's commands are the ones that work: CI runs its test command, and its
first-run command shows fixes for the examples."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import invoke

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> list[str]:
    return re.findall(r"```sh\n(python3 -m venv[^\n]*)\n```", README)


def test_readme_gives_exactly_two_setup_commands_and_ci_runs_the_test_one() -> None:
    setup, tests = _commands()
    assert setup.endswith("jitfix diff examples/")
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci_script[-1] == tests


def test_first_run_command_shows_a_fix_for_the_examples(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    result = invoke("diff", "examples/")
    assert result.exit_code == 1
    assert "+++ b/examples/print_in_jit.py" in result.stdout
    assert '+    jax.debug.print("loss = {loss:.4f}", loss=loss)' in result.stdout
    assert not (ROOT / "examples" / "print_in_jit.py").read_text().count("jax.debug.print")


def test_every_rule_is_in_the_readme_table() -> None:
    from jitfix.rules import ALL_RULES

    for rule in ALL_RULES:
        assert f"| {rule.code} | {rule.name} | {rule.fixable} |" in README, rule.code


def test_readme_if_example_is_what_fix_writes() -> None:
    before, after = re.findall(r"```python\n(@jax.jit\ndef step.*?)```", README, re.DOTALL)
    result = invoke("fix", "-", input=f"import jax\n\n\n{before}")
    assert result.stdout == f"import jax\nfrom jax import lax\n\n\n{after}"

