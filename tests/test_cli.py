"""The command line as a user runs it: exit codes, output formats, stdin, config, jobs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import BROKEN, CLEAN, FIXED, NOT_FIXABLE, invoke

from jitfix.findings import Finding
from jitfix.report import github_line


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "broken.py").write_bytes(BROKEN)
    (tmp_path / "clean.py").write_bytes(CLEAN)
    (tmp_path / "manual.py").write_bytes(NOT_FIXABLE)
    return tmp_path


# -- exit codes -------------------------------------------------------------------------------


def test_check_exit_codes(project: Path) -> None:
    assert invoke("check", str(project / "clean.py")).exit_code == 0
    assert invoke("check", str(project / "broken.py")).exit_code == 1
    assert invoke("check", "--exit-zero", str(project / "broken.py")).exit_code == 0
    assert invoke("check", str(project / "nope.py")).exit_code == 2
    assert invoke("check", "--select", "XY1", str(project)).exit_code == 2
    assert invoke("check", "--no-such-option", str(project)).exit_code == 2


def test_check_writes_nothing(project: Path) -> None:
    invoke("check", str(project))
    assert (project / "broken.py").read_bytes() == BROKEN


def test_fix_exit_codes_and_summary(project: Path) -> None:
    result = invoke("fix", str(project / "broken.py"))
    assert result.exit_code == 0
    assert (project / "broken.py").read_bytes() == FIXED
    assert "1 file fixed, 0 findings left" in result.stderr
    result = invoke("fix", str(project / "manual.py"))
    assert result.exit_code == 1
    assert "0 files fixed, 1 finding left: 1 not auto-fixable" in result.stderr
    assert (project / "manual.py").read_bytes() == NOT_FIXABLE


def test_fix_twice_changes_nothing_the_second_time(project: Path) -> None:
    invoke("fix", str(project))
    before = {path.name: path.read_bytes() for path in project.iterdir()}
    result = invoke("fix", str(project))
    assert "0 files fixed" in result.stderr
    assert {path.name: path.read_bytes() for path in project.iterdir()} == before


def test_diff_prints_a_unified_diff_and_writes_nothing(project: Path) -> None:
    result = invoke("diff", str(project / "broken.py"))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"--- a/{str(project / 'broken.py').lstrip('/')}\n+++ b/")
    assert '-    print(f"x = {x}")\n+    jax.debug.print("x = {x}", x=x)\n' in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when not a terminal
    assert (project / "broken.py").read_bytes() == BROKEN
    assert invoke("diff", str(project / "clean.py")).exit_code == 0


def test_diff_stat(project: Path) -> None:
    result = invoke("diff", "--stat", str(project))
    assert f"{project / 'broken.py'} | +1 -1" in result.stdout
    assert "1 file would be changed" in result.stdout


# -- stdin ------------------------------------------------------------------------------------


def test_fix_reads_stdin_and_writes_stdout() -> None:
    result = invoke("fix", "-", input=BROKEN)
    assert result.exit_code == 0
    assert result.stdout == FIXED.decode()


def test_check_and_diff_on_stdin_use_the_stdin_filename() -> None:
    result = invoke("check", "--stdin-filename", "pkg/mod.py", "-", input=BROKEN)
    assert result.exit_code == 1
    assert result.stdout.startswith("pkg/mod.py:6:5: JF401")
    result = invoke("diff", "-", input=BROKEN)
    assert "--- a/-\n+++ b/-\n" in result.stdout
    # As ruff reads it: --stdin-filename and no path reads stdin.
    result = invoke("fix", "--stdin-filename", "pkg/mod.py", input=BROKEN)
    assert result.exit_code == 0 and result.stdout == FIXED.decode()


# -- output formats ---------------------------------------------------------------------------


def test_text_format(project: Path) -> None:
    result = invoke("check", str(project / "broken.py"))
    assert result.stdout.splitlines()[0].startswith(f"{project / 'broken.py'}:6:5: JF401 [*] `print`")
    assert "Found 1 finding; 1 fixable with `jitfix fix`." in result.stdout


def test_only_fixes_fix_applies_are_marked_and_counted(tmp_path: Path) -> None:
    """ruff's convention: `[*]` and "fixable" only for what `jitfix fix` fixes as asked;
    an unsafe fix is counted apart, with the option that enables it."""
    path = tmp_path / "mixed.py"
    # (unannotated, `x` may be a NumPy array an eager caller sees changed: the fix is unsafe)
    path.write_text("import jax\n\n\n@jax.jit\ndef bump(x, i):\n    print(x)\n    x[i] += 1\n    return x.sum()\n")
    result = invoke("check", str(path))
    lines = result.stdout.splitlines()
    assert " JF401 [*] " in lines[0] and " JF603 " in lines[1] and "[*]" not in lines[1]
    assert "Found 2 findings; 1 fixable with `jitfix fix`; 1 hidden fix can be enabled with `--unsafe-fixes`." in result.stdout


def test_json_format(project: Path) -> None:
    result = invoke("check", "--output-format", "json", str(project))
    records = json.loads(result.stdout)
    assert [(r["code"], Path(r["path"]).name, r["line"], r["col"], r["fixable"]) for r in records] == [
        ("JF401", "broken.py", 6, 5, True),
        ("JF401", "manual.py", 8, 5, False),
    ]
    first = records[0]
    assert set(first) == {"code", "name", "path", "cell", "line", "col", "end_line", "end_col", "message",
                          "function", "fixable", "fix"}
    assert first["cell"] is None  # set for notebooks
    assert (first["end_line"], first["end_col"]) == (6, 22)
    assert first["fix"]["safety"] == "safe"
    assert '+    jax.debug.print("x = {x}", x=x)' in first["fix"]["diff"]
    assert records[1]["fix"] is None and "file=" in records[1]["message"]


def test_sarif_format(project: Path) -> None:
    document = json.loads(invoke("check", "--output-format", "sarif", str(project)).stdout)
    assert document["version"] == "2.1.0" and "sarif-2.1.0" in document["$schema"]
    run = document["runs"][0]
    rules = {rule["id"]: rule for rule in run["tool"]["driver"]["rules"]}
    assert {"JF101", "JF102", "JF103", "JF401"} <= set(rules)
    assert all(rule["shortDescription"]["text"] and rule["fullDescription"]["text"] for rule in rules.values())
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["JF401", "JF401"]
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 6, "startColumn": 5, "endLine": 6, "endColumn": 22}
    replacement = results[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"]["startLine"] == 6
    assert replacement["insertedContent"]["text"] == '    jax.debug.print("x = {x}", x=x)\n'
    assert "fixes" not in results[1]


def test_github_format(project: Path) -> None:
    lines = invoke("check", "--output-format", "github", str(project)).stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(
        f"::warning file={project / 'broken.py'},line=6,col=5,endLine=6,endColumn=22,"
        "title=JF401 print-in-traced-code::JF401 `print`"
    )


def test_github_escaping() -> None:
    finding = Finding("JF401", "name", "100% wrong:\nsecond line", "a,b:c.py", 1, 2, 3, 4)
    line = github_line(finding)
    assert line == ("::warning file=a%2Cb%3Ac.py,line=1,col=2,endLine=3,endColumn=4,title=JF401 name"
                    "::JF401 100%25 wrong:%0Asecond line")


def test_statistics(project: Path) -> None:
    result = invoke("check", "--statistics", str(project))
    assert result.stdout.split() == ["2", "JF401", "print-in-traced-code", "(1", "fixable)"]


# -- selection, suppression, configuration ----------------------------------------------------


def test_select_and_ignore(project: Path) -> None:
    assert invoke("check", "--ignore", "JF4", str(project)).exit_code == 0
    assert invoke("check", "--select", "JF1", str(project)).exit_code == 0
    assert invoke("check", "--select", "JF401", str(project)).exit_code == 1


def test_pyproject_configuration(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.jitfix]\nexclude = ["skipped"]\nper-file-ignores = { "manual.py" = ["JF401"] }\n'
    )
    (project / "skipped").mkdir()
    (project / "skipped" / "m.py").write_bytes(BROKEN)
    result = invoke("check", "--output-format", "json", str(project))
    assert [Path(r["path"]).name for r in json.loads(result.stdout)] == ["broken.py"]
    (project / "pyproject.toml").write_text('[tool.jitfix]\nignore = ["JF401"]\n')
    assert invoke("check", str(project)).exit_code == 0
    # Command-line flags win over the file.
    assert invoke("check", "--ignore", "JF1", str(project)).exit_code == 1


def test_bad_configuration_is_a_usage_error(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.jitfix]\nselct = ["JF4"]\n')
    result = invoke("check", str(project))
    assert result.exit_code == 2 and "unknown [tool.jitfix] option(s): selct" in result.stderr


def test_suppression_on_a_def_line(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN.replace(b"def f(x):", b"def f(x):  # jitfix: ignore[JF4]"))
    assert invoke("check", str(path)).exit_code == 0


# -- many files, rules, help ------------------------------------------------------------------


def test_parallel_jobs_give_the_same_result_as_one(tmp_path: Path) -> None:
    for index in range(12):
        (tmp_path / f"m{index:02d}.py").write_bytes(BROKEN if index % 3 else CLEAN)
    one = invoke("check", "-j", "1", "--output-format", "json", str(tmp_path))
    two = invoke("check", "-j", "2", "--output-format", "json", str(tmp_path))
    assert one.stdout == two.stdout and len(json.loads(one.stdout)) == 8
    assert invoke("fix", "-j", "2", str(tmp_path)).exit_code == 0
    assert all(p.read_bytes() in (FIXED, CLEAN) for p in tmp_path.glob("*.py"))


def test_rules_and_explain() -> None:
    result = invoke("rules")
    assert result.exit_code == 0 and result.stdout.startswith("JF101  traced-if")
    assert "JF401  print-in-traced-code" in result.stdout
    explained = invoke("explain", "jf401").stdout
    for heading in ["## What it does", "## Why it breaks under jit", "## Example", "## Fixed", "## Fix safety"]:
        assert heading in explained
    assert invoke("explain", "JF999").exit_code == 2


def test_python_dash_m_and_version(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN)
    completed = subprocess.run([sys.executable, "-m", "jitfix", "check", str(path)], capture_output=True, text=True)
    assert completed.returncode == 1 and "JF401" in completed.stdout
    version = subprocess.run([sys.executable, "-m", "jitfix", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("jitfix ")


def test_unsafe_fixes_are_applied_only_on_request(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    source = b"import jax\n\n\n@jax.jit\ndef f(x):\n    print('tracing f')\n    return x\n"
    path.write_bytes(source)
    result = invoke("fix", str(path))
    assert result.exit_code == 1 and path.read_bytes() == source
    assert invoke("fix", "--unsafe-fixes", str(path)).exit_code == 0
    assert b"jax.debug.print('tracing f')" in path.read_bytes()


def test_colour_only_when_asked_by_the_terminal_and_never_with_no_color(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN)
    env = {**__import__("os").environ, "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    coloured = subprocess.run([sys.executable, "-m", "jitfix", "diff", str(path)], capture_output=True,
                              text=True, env=env)
    assert "\x1b[32m+    jax.debug.print" in coloured.stdout
    plain = subprocess.run([sys.executable, "-m", "jitfix", "diff", "--no-color", str(path)],
                           capture_output=True, text=True, env=env)
    assert "\x1b[" not in plain.stdout and "+    jax.debug.print" in plain.stdout


# -- adoption and review output ----------------------------------------------------------------

LEGACY = b'''import sys

import jax


@jax.jit
def f(x):
    print(x, file=sys.stderr)  # debug
    print("x", x)
    text = """
    a string"""
    return x
'''


def test_add_ignore_suppresses_what_is_not_fixable(tmp_path: Path) -> None:
    module = tmp_path / "legacy.py"
    module.write_bytes(LEGACY)
    result = invoke("check", "--add-ignore", str(module))
    assert "added 1 ignore comment in 1 file" in result.stderr
    assert result.exit_code == 1  # the fixable print is still reported
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()[:-1]] == ["JF401"]
    text = module.read_text()
    assert "    print(x, file=sys.stderr)  # debug  # jitfix: ignore[JF401]\n" in text
    assert '    print("x", x)\n' in text  # fixable: left for `jitfix fix`
    assert invoke("check", "--add-ignore", str(module)).stderr.startswith("added 0 ignore comments")
    invoke("fix", str(module))
    assert invoke("check", str(module)).exit_code == 0


def test_add_ignore_merges_codes_and_never_breaks_a_string() -> None:
    from jitfix.findings import Finding
    from jitfix.suppress import add_ignores

    def at(line: int, code: str, end_line: int | None = None) -> Finding:
        return Finding(code, "n", "m", "p.py", line, 1, end_line or line, 1)

    text = 'x = f(a)  # jitfix: ignore[JF601]\ns = """\nabc""" + g(b)\ny = h(c) \\\n    + 1\n'
    new, left = add_ignores(text, [at(1, "JF401"), at(2, "JF602", 3), at(4, "JF603")])
    assert new.splitlines()[0] == "x = f(a)  # jitfix: ignore[JF401, JF601]"
    assert new.splitlines()[2] == 'abc""" + g(b)  # jitfix: ignore[JF602]'  # the end line takes it
    assert [f.code for f in left] == ["JF603"]  # a line continued by a backslash cannot


def test_diff_names_the_rule_of_each_hunk_and_still_applies(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_bytes(BROKEN)
    patch = invoke("diff", str(tmp_path / "broken.py")).stdout
    headers = [line for line in patch.splitlines() if line.startswith("@@")]
    assert headers == ["@@ -3,5 +3,5 @@ JF401 print-in-traced-code: replace with jax.debug.print"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    patch = patch.replace(str(tmp_path).lstrip("/") + "/", "")
    (tmp_path / "fix.patch").write_text(patch)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert (tmp_path / "broken.py").read_bytes() == FIXED


def test_markdown_format(project: Path) -> None:
    markdown = invoke("check", "--output-format", "markdown", str(project)).stdout
    lines = markdown.splitlines()
    assert lines[:7] == [
        "### jitfix", "",
        "2 findings, 1 fixable with `jitfix fix`.", "",
        "| Rule | Name | Findings | Fixable |", "|---|---|---|---|",
        "| JF401 | print-in-traced-code | 2 | 1 |",
    ]
    assert f"<summary><code>{project / 'broken.py'}</code>: 1 finding, 1 fixable</summary>" in lines
    assert "- **JF401** print-in-traced-code, line 6: `print` in traced function `f` (decorated with jax.jit) " \
           "runs only at trace time and prints tracers; use `jax.debug.print`" in lines
    assert "  ```diff" in lines and '  +    jax.debug.print("x = {x}", x=x)' in lines
    assert lines.count("</details>") == 2
    assert invoke("check", "--output-format", "markdown", str(project / "clean.py")).stdout == \
        "### jitfix\n\nNo findings: this code runs under `jax.jit` as written.\n"


def test_a_hunk_that_only_adds_imports_says_so(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import jax\n\nX = 1\nY = 2\nZ = 3\nW = 4\nV = 5\n\n\n@jax.jit\ndef f(x):\n"
                      "    if x > 0:\n        x = -x\n    return x\n")
    headers = [line for line in invoke("diff", str(module)).stdout.splitlines() if line.startswith("@@")]
    assert headers == ["@@ -1,4 +1,5 @@ imports the fixes below use",
                       "@@ -9,6 +10,9 @@ JF101 traced-if: rewrite with lax.cond"]


# -- what a ruff user expects (issue 18's list) ------------------------------------------------


def test_a_missing_path_is_an_error_never_next_to_all_checks_passed(project: Path) -> None:
    result = invoke("check", str(project / "clean.py"), str(project / "nonexist.py"))
    assert result.exit_code == 2 and "no such file or folder" in result.stderr
    assert "All checks passed" not in result.stdout and "No findings; 1 path gave no file to check" in result.stdout


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select", "--extend-ignore"])
def test_an_unknown_code_is_a_usage_error_naming_the_nearest(project: Path, option: str) -> None:
    result = invoke("check", option, "JF410", str(project / "broken.py"))
    assert result.exit_code == 2 and "'JF410' is not a rule code" in result.stderr and "JF401" in result.stderr
    result = invoke("check", option, "JF999", str(project / "broken.py"))
    assert result.exit_code == 2 and "the codes run from JF101 to JF604" in result.stderr
    assert invoke("check", "--per-file-ignores", "*.py:JF9", str(project / "broken.py")).exit_code == 2


def test_extend_select_extend_ignore_and_per_file_ignores(project: Path) -> None:
    broken = str(project / "broken.py")
    assert invoke("check", "--select", "JF1", "--extend-select", "JF401", broken).exit_code == 1
    assert invoke("check", "--extend-ignore", "JF401", broken).exit_code == 0
    assert invoke("check", "--per-file-ignores", "broken.py:JF4", broken).exit_code == 0
    assert invoke("check", "--per-file-ignores", "other.py:JF4", broken).exit_code == 1
    assert invoke("check", "--per-file-ignores", "JF4", broken).exit_code == 2  # no GLOB:


def test_config_key_value_overrides_the_file_and_show_settings_says_so(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.jitfix]\nignore = ["JF602"]\n')
    shown = invoke("check", "--show-settings", "--config", 'ignore = ["JF4"]', "--config", 'target-version = "py312"',
                   str(project))
    assert shown.exit_code == 0
    assert f"# configuration: {project / 'pyproject.toml'}" in shown.stdout
    assert 'ignore = ["JF4"]' in shown.stdout and 'target-version = "py312"' in shown.stdout
    assert invoke("check", "--config", 'ignore = ["JF4"]', str(project / "broken.py")).exit_code == 0
    bad = invoke("check", "--config", "loop-strategy = 'sideways'", str(project))
    assert bad.exit_code == 2 and "loop-strategy must be one of" in bad.stderr
    assert invoke("check", "--config", "colour = true", str(project)).exit_code == 2


def test_config_file_is_read_whatever_its_name(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("settings")
    (project / "pyproject.toml").write_text('[tool.jitfix]\nignore = ["JF602"]\n')
    (elsewhere / "ci.toml").write_text('[tool.jitfix]\nignore = ["JF4"]\n')
    (elsewhere / "jitfix.toml").write_text('ignore = ["JF4"]\n')
    for named in ("ci.toml", "jitfix.toml"):
        shown = invoke("check", "--show-settings", "--config", str(elsewhere / named), str(project))
        assert f"# configuration: {elsewhere / named}" in shown.stdout and 'ignore = ["JF4"]' in shown.stdout
        assert invoke("check", "--config", str(elsewhere / named), str(project / "broken.py")).exit_code == 0
    (elsewhere / "bad.toml").write_text("ignore = 3\n")
    bad = invoke("check", "--config", str(elsewhere / "bad.toml"), str(project))
    assert bad.exit_code == 2 and "bad.toml" in bad.stderr


def test_show_files_respects_gitignore_and_force_exclude(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("manual.py\n")
    listed = invoke("check", "--show-files", str(project)).stdout.split()
    assert sorted(Path(path).name for path in listed) == ["broken.py", "clean.py"]
    everything = invoke("check", "--show-files", "--no-respect-gitignore", str(project)).stdout.split()
    assert len(everything) == 3
    (project / "vendored").mkdir()
    (project / "vendored" / "lib.py").write_bytes(BROKEN)
    (project / ".gitignore").write_text("manual.py\nvendored/\n")
    asked = invoke("check", "--show-files", str(project / "vendored")).stdout.split()
    assert [Path(path).name for path in asked] == ["lib.py"]  # named, so read though git ignores it
    named = str(project / "broken.py")
    assert invoke("check", "--show-files", "--exclude", "broken.py", named).stdout.split() == [named]
    assert invoke("check", "--show-files", "--exclude", "broken.py", "--force-exclude", named).stdout == ""


def test_target_version_names_syntax_the_running_python_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "generic.py"
    path.write_text("import jax\n\n\ndef first[T](xs: list[T]) -> T:\n    return jax.jit(lambda: xs[0])()\n")
    result = invoke("check", "--target-version", "py314", str(path))
    if sys.version_info >= (3, 12):
        assert result.exit_code in (0, 1)
    else:
        assert result.exit_code == 2 and f"{path}:4" in result.stderr
        assert "the code targets Python 3.14; jitfix runs on Python 3." in result.stderr


def test_target_version_defaults_to_the_projects_requires_python(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nrequires-python = ">=3.14, <4"\n')
    (tmp_path / "generic.py").write_text("import jax\n\n\ntype Tree = dict[str, jax.Array]\n")
    (tmp_path / "indented.py").write_text("import jax\n  import numpy\n")
    result = invoke("check", str(tmp_path))
    assert result.exit_code == 2 and "indented.py:2:" in result.stderr
    assert "indentation error: unexpected indent\n" in result.stderr  # not put down to the Python
    if sys.version_info < (3, 12):
        assert "generic.py:4" in result.stderr
        assert "the code targets Python 3.14; jitfix runs on Python 3." in result.stderr
    assert invoke("check", "--show-settings", str(tmp_path)).stdout.count('target-version = "py314"') == 1


def test_statistics_and_rules_honour_json_and_refuse_what_they_cannot_print(project: Path) -> None:
    stats = invoke("check", "--statistics", "--output-format", "json", str(project / "broken.py"))
    assert json.loads(stats.stdout) == [{"code": "JF401", "name": "print-in-traced-code", "count": 1, "fixable": 1}]
    refused = invoke("rules", "--output-format", "sarif")
    assert refused.exit_code == 2 and "'sarif' is not one of" in refused.stderr
    assert invoke("check", "--statistics", "--output-format", "sarif", str(project / "broken.py")).exit_code == 2
    assert json.loads(invoke("explain", "print-in-traced-code", "--output-format", "json").stdout)["code"] == "JF401"
    assert invoke("explain", "JF401").stdout == invoke("explain", "print-in-traced-code").stdout
    unknown = invoke("explain", "print-in-traced")
    assert unknown.exit_code == 2 and "Did you mean print-in-traced-code?" in unknown.stderr


def test_more_output_formats(project: Path) -> None:
    broken = str(project / "broken.py")
    concise = invoke("check", "--output-format", "concise", broken).stdout
    assert concise.splitlines() == [f"{broken}:6:5: JF401 [*] " + concise.split(" [*] ", 1)[1].splitlines()[0],
                                    "Found 1 finding; 1 fixable with `jitfix fix`."]
    full = invoke("check", "--output-format", "full", broken).stdout
    assert '6 |     print(f"x = {x}")\n  |     ^^^^^^^^^^^^^^^^^\n' in full
    assert "= help: replace with jax.debug.print (safe fix)" in full and '+    jax.debug.print("x = {x}", x=x)' in full
    [line] = invoke("check", "--output-format", "json-lines", broken).stdout.splitlines()
    assert json.loads(line)["code"] == "JF401"
    import xml.etree.ElementTree as ElementTree

    junit = ElementTree.fromstring(invoke("check", "--output-format", "junit", broken).stdout)
    assert junit.get("failures") == "1" and junit.find("testsuite/testcase/failure") is not None
    clean = ElementTree.fromstring(invoke("check", "--output-format", "junit", str(project / "clean.py")).stdout)
    assert clean.get("failures") == "0"
    [issue] = json.loads(invoke("check", "--output-format", "gitlab", broken).stdout)
    assert issue["check_name"] == "JF401 print-in-traced-code" and issue["location"]["lines"]["begin"] == 6
    assert len(issue["fingerprint"]) == 32


def test_no_color_drops_every_escape_and_wins_over_force_color(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN)
    env = {**__import__("os").environ, "FORCE_COLOR": "1", "NO_COLOR": "1"}
    result = subprocess.run([sys.executable, "-m", "jitfix", "check", str(path)], capture_output=True, text=True,
                            env=env)
    assert "\x1b[" not in result.stdout + result.stderr and "Found 1 finding" in result.stdout
    env.pop("NO_COLOR")
    result = subprocess.run([sys.executable, "-m", "jitfix", "check", str(path)], capture_output=True, text=True,
                            env=env)
    assert "\x1b[1mFound 1 finding" in result.stdout  # bold, forced though not a terminal


def test_progress_advances_as_files_finish_not_in_path_order(tmp_path: Path) -> None:
    """Files are processed largest first; the bar hears of each as it finishes. The first
    file in path order is the smallest, so most files are done before it is."""
    from jitfix import api
    from jitfix.config import Settings
    from jitfix.engine import Options

    (tmp_path / "a.py").write_bytes(BROKEN)
    big = BROKEN + b"".join(b"\n\n@jax.jit\ndef g%d(x):\n    print(x)\n    return x\n" % n for n in range(300))
    for name in "bcdef":
        (tmp_path / f"{name}.py").write_bytes(big)
    done: list[str] = []
    seen_at_first_result: list[int] = []
    from jitfix import engine

    original = engine.run_paths

    def run_paths(*args, **kwargs):
        for result in original(*args, **kwargs):
            seen_at_first_result.append(len(done))
            yield result

    engine_run_paths, api.run_paths = api.run_paths, run_paths
    try:
        results = api.process([str(tmp_path)], Settings(), Options(), jobs=2, use_cache=False,
                              finished=lambda result: done.append(result.path))
    finally:
        api.run_paths = engine_run_paths
    assert len(done) == 6 and len(results.files) == 6
    assert seen_at_first_result[0] >= 3


def test_verbose_says_what_fix_did_to_each_file(project: Path) -> None:
    result = invoke("fix", "-v", "--no-cache", str(project / "broken.py"), str(project / "clean.py"))
    assert f"{project / 'broken.py'}: parsed, 1 fix, 0 findings left" in result.stderr
    assert "0 finding(s)" not in result.stderr


def test_fix_on_clean_code_says_all_checks_passed_as_check_does(project: Path) -> None:
    result = invoke("fix", str(project / "clean.py"))
    assert result.exit_code == 0 and result.stderr == "All checks passed.\n"


def test_show_fixes_and_exit_non_zero_on_fix(project: Path) -> None:
    result = invoke("fix", "--show-fixes", "--exit-non-zero-on-fix", str(project / "broken.py"))
    assert result.exit_code == 1 and "Fixed 1 finding:" in result.stderr
    assert "1 \u00d7 JF401 (print-in-traced-code)" in result.stderr
    again = invoke("fix", "--show-fixes", "--exit-non-zero-on-fix", str(project / "broken.py"))
    assert again.exit_code == 0 and "No fixes applied." in again.stderr


def test_a_hunk_with_several_fixes_lists_their_codes(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("import jax\nimport numpy as np\n\n\n@jax.jit\ndef f(x):\n    print(x)\n    print(x)\n"
                    "    return np.abs(x) + np.sin(x)\n")
    headers = [line for line in invoke("diff", "--no-color", str(path)).stdout.splitlines() if line.startswith("@@")]
    assert headers == ["@@ -1,9 +1,9 @@ JF401 \u00d72, JF602 \u00d72"]


def test_validate_names_the_file_it_cannot_parse_and_exits_2(tmp_path: Path) -> None:
    old, new = tmp_path / "old.py", tmp_path / "broken.py"
    old.write_bytes(BROKEN)
    new.write_text("import jax\n\ndef f(x:\n")
    result = invoke("validate", str(old), str(new))
    assert result.exit_code == 2 and f"{new}:3: syntax error" in result.stderr and str(old) not in result.stderr


def test_short_version_and_shell_completion() -> None:
    assert invoke("-V").stdout.startswith("jitfix ")
    assert "--install-completion" in invoke("--help").stdout



def test_no_path_means_the_current_folder(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    for command in ("check", "diff"):
        assert invoke(command).exit_code == invoke(command, ".").exit_code == 1, command
    assert "broken.py" in invoke("check").stdout
    assert invoke("fix").exit_code == 1  # what was left (the file that cannot be fixed)
    assert invoke("check", "broken.py").exit_code == 0  # fixed in place by the fix above


def test_fix_quiet_prints_what_is_left_and_nothing_else(project: Path) -> None:
    # (the pre-commit hook runs `fix --quiet`: a commit it blocks says why)
    result = invoke("fix", "--quiet", str(project / "broken.py"), str(project / "manual.py"))
    lines = result.stderr.splitlines()
    assert result.exit_code == 1 and lines and all(line.startswith(str(project / "manual.py")) for line in lines)


def test_diff_reports_what_is_left_at_the_lines_of_the_file_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    if x.sum() > 0:\n        x = x * 2\n    return x\n\n\n"
                    "@jax.jit\ndef g(x):\n    return x[x > 0]\n")
    assert invoke("check", str(path)).stdout.splitlines()[1].startswith(f"{path}:13:12: JF506")
    result = invoke("diff", str(path))  # (the fix of f adds lines above g: the file does not have them)
    assert result.exit_code == 1 and result.stderr.startswith(f"{path}:13:12: JF506"), result.stderr


UNKNOWN = '''import jax
import somelib


@jax.jit
def step(x, cfg):
    state = somelib.solve(x)
    if state.converged:
        return x
    for _ in range(cfg.steps):
        x = x * 2
    return x
'''


def test_show_unknown_says_where_proof_was_missing_and_changes_no_count(tmp_path: Path) -> None:
    """`--show-unknown`: where Python needs a concrete value in traced code and the analysis
    cannot tell what it holds, one line each with why (opt-in: not a finding, exit 0 still)."""
    path = tmp_path / "solver.py"
    path.write_text(UNKNOWN)
    plain = invoke("check", "--no-cache", str(path))
    assert plain.exit_code == 0 and "unknown:" not in plain.stdout
    shown = invoke("check", "--no-cache", "--show-unknown", str(path))
    assert shown.exit_code == 0
    lines = [line for line in shown.stdout.splitlines() if "unknown:" in line]
    assert lines == [
        f"{path}:8:8: unknown: `state.converged` in `step` (Python needs its truth): not known to be traced or a "
        "Python value: `somelib.solve` is not in jitfix's catalogue",
        f"{path}:10:20: unknown: `cfg.steps` in `step` (Python needs an `int`): not known to be traced or a Python "
        "value: `.steps` of a value whose class is not known",
    ]
    assert "All checks passed" in shown.stdout + shown.stderr
