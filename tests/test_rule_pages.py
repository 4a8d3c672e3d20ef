"""docs/rules/ holds one page per rule and an index, made from the rules' own documentation
(their `RuleDoc`) by tools/update_readme.py: a page that differs from what the rule says now
fails here, naming the command that regenerates it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from helpers import invoke

from jitfix.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "update_readme.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("update_readme", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["update_readme"] = module
    spec.loader.exec_module(module)
    return module


def test_every_rule_page_is_current(tool) -> None:
    stale = tool.stale_files()
    assert not stale, f"stale: {', '.join(stale)}: run {tool.COMMAND}"


def test_there_is_a_page_for_every_rule_and_an_index(tool) -> None:
    pages = {path.name for path in (ROOT / "docs" / "rules").glob("*.md")}
    assert pages == {f"{rule.code}.md" for rule in ALL_RULES} | {"README.md"}
    index = (ROOT / "docs" / "rules" / "README.md").read_text(encoding="utf-8")
    for rule in ALL_RULES:
        assert f"| [{rule.code}]({rule.code}.md) | {rule.name} |" in index


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_a_rule_page_is_what_explain_prints(rule) -> None:
    page = (ROOT / "docs" / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
    assert f"# {invoke('explain', rule.code).stdout.rstrip()}\n" in page


def test_the_check_mode_names_a_stale_page(tool, tmp_path, monkeypatch) -> None:
    """`--check` writes nothing and names what is stale: here a page edited by hand, and a
    page of a rule that no longer exists."""
    pages = tmp_path / "rules"
    pages.mkdir()
    for path, text in tool.generated_pages().items():
        (pages / path.name).write_text(text, encoding="utf-8")
    (pages / "JF101.md").write_text("edited by hand\n", encoding="utf-8")
    (pages / "JF999.md").write_text("a rule that is gone\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(tool, "ROOT", tmp_path)
    monkeypatch.setattr(tool, "RULE_PAGES", pages)
    monkeypatch.setattr(tool, "README", readme)
    assert tool.stale_files() == ["rules/JF101.md", "rules/JF999.md"]
    monkeypatch.setattr(sys, "argv", ["update_readme.py", "--check"])
    with pytest.raises(SystemExit) as exited:
        tool.main()
    assert exited.value.code == 1
    assert (pages / "JF101.md").read_text() == "edited by hand\n"
    tool.write()
    assert tool.stale_files() == [] and not (pages / "JF999.md").exists()
