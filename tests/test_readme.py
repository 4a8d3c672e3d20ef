"""The README's commands are the ones that work: CI runs its test command, and its
first-run command shows fixes for the examples. The README stays short (what jitfix does,
one example per command, configuration, the rules); the rest is in docs/, whose workflows
(docs/commands.md) run as written, and whose links all lead somewhere."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from helpers import invoke

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")


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


def test_the_readme_rule_table_is_the_one_the_rules_make() -> None:
    from jitfix.rules import readme_table

    assert readme_table() in README, "the README's rule table is stale: run python tools/update_readme.py"


def test_readme_if_example_is_what_fix_writes() -> None:
    before, after = re.findall(r"```python\n(@jax.jit\ndef step.*?)```", README, re.DOTALL)
    result = invoke("fix", "-", input=f"import jax\n\n\n{before}")
    assert result.stdout == f"import jax\nfrom jax import lax\n\n\n{after}"



def _workflows() -> list[list[str]]:
    return [block.strip().splitlines() for block in re.findall(r"```sh workflow\n(.*?)```", COMMANDS, re.DOTALL)]


def _project(tmp_path: Path) -> Path:
    import shutil
    import subprocess

    shutil.copytree(ROOT / "examples", tmp_path / "src")
    subprocess.run("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm start",
                   shell=True, cwd=tmp_path, check=True)
    return tmp_path


def _shell(command: str, cwd: Path):
    import os
    import subprocess
    import sys

    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PATH": path})


def test_the_three_workflows_run_as_written(tmp_path: Path) -> None:
    """The workflows of docs/commands.md, each on a copy of examples/ as a git project."""
    migration, review, bot = _workflows()
    project = _project(tmp_path / "migration")
    outcomes = [_shell(command, project) for command in migration]
    # The run fixes what only a run shows (the training step is jitted through a table);
    # fix exits 1: the recompilation example keeps two findings for a person (an int and a
    # float for one argument; a static argument whose fix is unsafe), which --add-ignore marks.
    assert [o.returncode for o in outcomes] == [0, 1, 1, 0, 0], [o.stderr for o in outcomes]
    assert "src/train.py:17 TracerBoolConversionError in clipped (g: float32[3], norm: float32[]) -> JF101" in outcomes[0].stderr
    assert "lax.cond(norm > limit" in (project / "src" / "train.py").read_text()
    assert "Validation: 6 passed, 0 failed, 0 skipped" in outcomes[2].stderr
    assert "2 findings left: 1 not auto-fixable, 1 with an unsafe fix" in outcomes[2].stderr
    assert (project / "migration.md").read_text().startswith("# jitfix migration report")
    assert "lax.cond" in (project / "src" / "traced_if.py").read_text()

    project = _project(tmp_path / "review")
    outcomes = [_shell(command, project) for command in review]
    assert [o.returncode for o in outcomes] == [1, 1, 0], [o.stderr for o in outcomes]
    assert "src/traced_if.py | +" in outcomes[0].stdout
    assert "lax.fori_loop" in (project / "src" / "traced_loop.py").read_text()

    project = _project(tmp_path / "bot")
    outcomes = [_shell(command, project) for command in bot]
    assert [o.returncode for o in outcomes] == [0, 0, 0, 1], [o.stderr for o in outcomes]
    assert outcomes[0].stdout.startswith("::warning file=src/")
    assert '"version": "2.1.0"' in (project / "jitfix.sarif").read_text()
    assert (project / "comment.md").read_text().startswith("### jitfix\n")


def test_the_readme_stays_short() -> None:
    """A README a user reads through: details go to docs/ (issue 55)."""
    size = len(README.encode("utf-8"))
    assert size <= 16 * 1024, f"README.md is {size} bytes: move details to docs/commands.md or another page of docs/"


def test_the_readme_shows_every_command_once() -> None:
    from jitfix.cli import app

    commands = {command.name or command.callback.__name__ for command in app.registered_commands}
    shown = set(re.findall(r"^### `jitfix (\w+)`", README, re.MULTILINE))
    assert commands - {"rules"} <= shown, commands - shown


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` dropped, spaces made `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(text: str) -> set[str]:
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return {_slug(heading) for heading in re.findall(r"^#+ (.*)$", text, re.MULTILINE)}


def test_the_documentation_links_lead_somewhere() -> None:
    """Every relative link of the README and of docs/ names a file of the repository, and
    its #anchor a heading of that file."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.DOTALL))
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked.read_text(encoding="utf-8")):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, broken


def test_the_ci_workflow_runs_real_commands(tmp_path: Path) -> None:
    """Every jitfix command of docs/jitfix.yml runs on a project (no usage error)."""
    import yaml

    workflow = yaml.safe_load((ROOT / "docs" / "jitfix.yml").read_text())
    commands = [line.strip() for step in workflow["jobs"]["jitfix"]["steps"] for line in step.get("run", "").splitlines()
                if line.strip().startswith("jitfix ")]
    assert len(commands) == 5
    project = _project(tmp_path)
    for command in commands:
        outcome = _shell(command, project)
        assert outcome.returncode in (0, 1), (command, outcome.stderr)


def test_the_ci_workflow_installs_jitfix_from_its_repository() -> None:
    """Every `pip install` of docs/jitfix.yml names the user's project (`.`) or the checkout
    of jitfix's repository, which is this repository: installable as `jitfix`."""
    import yaml

    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    steps = yaml.safe_load((ROOT / "docs" / "jitfix.yml").read_text())["jobs"]["jitfix"]["steps"]
    checkouts = [step["with"]["path"] for step in steps
                 if step.get("uses", "").startswith("actions/checkout") and "repository" in step.get("with", {})]
    assert checkouts == [".jitfix"]
    installs = [line.split("#")[0].split()[2:] for step in steps for line in step.get("run", "").splitlines()
                if line.strip().startswith("pip install")]
    assert installs, "the workflow installs nothing"
    for arguments in installs:
        targets = [argument for argument in arguments if not argument.startswith("-")]
        assert targets and all(target == "." or target.rstrip("/") in ("./.jitfix", ".jitfix") for target in targets), \
            targets
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "jitfix" and project["scripts"]["jitfix"] == "jitfix.cli:main"
