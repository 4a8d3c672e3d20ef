"""The cache under .jitfix_cache/: unchanged files are not parsed again; a corrupt cache is
ignored; --no-cache bypasses it."""

from __future__ import annotations

from pathlib import Path

from helpers import BROKEN, CLEAN, NOT_FIXABLE, invoke


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.jitfix]\n")
    for index in range(3):
        (tmp_path / f"clean_{index}.py").write_bytes(CLEAN)
    (tmp_path / "manual.py").write_bytes(NOT_FIXABLE)
    return tmp_path


def _states(result) -> dict[str, str]:
    """File name -> parsed / cached, from --verbose."""
    states = {}
    for line in result.stderr.splitlines():
        if ": " in line and line.split(": ")[1].split(",")[0] in ("parsed", "cached"):
            states[Path(line.split(": ")[0]).name] = line.split(": ")[1].split(",")[0]
    return states


def test_unchanged_files_are_not_parsed_again(tmp_path: Path, monkeypatch) -> None:
    project = _project(tmp_path)
    monkeypatch.chdir(project)
    first = invoke("check", "-v", ".")
    assert set(_states(first).values()) == {"parsed"} and len(_states(first)) == 4
    assert (project / ".jitfix_cache" / ".gitignore").read_text().endswith("*\n")
    second = invoke("check", "-v", ".")
    assert set(_states(second).values()) == {"cached"}
    assert second.stdout == first.stdout and second.exit_code == first.exit_code == 1  # same findings
    import os

    os.utime(project / "clean_2.py", ns=(1, 1))  # touched, same content: answered by its hash
    (project / "clean_1.py").write_bytes(CLEAN + b"\n# edited\n")
    third = _states(invoke("check", "-v", "."))
    assert third["clean_1.py"] == "parsed" and third["clean_0.py"] == third["clean_2.py"] == "cached"
    assert set(_states(invoke("check", "-v", "--no-cache", ".")).values()) == {"parsed"}
    # Other settings are another cache.
    assert set(_states(invoke("check", "-v", "--select", "JF4", ".")).values()) == {"parsed"}


def test_a_corrupt_cache_is_ignored(tmp_path: Path, monkeypatch) -> None:
    project = _project(tmp_path)
    monkeypatch.chdir(project)
    expected = invoke("check", ".").stdout
    for entry in (project / ".jitfix_cache").rglob("*"):
        if entry.is_file() and entry.name != ".gitignore":
            entry.write_bytes(b"\x80garbage")
    result = invoke("check", "-v", ".")
    assert result.stdout == expected
    assert set(_states(result).values()) == {"parsed"}
    assert set(_states(invoke("check", "-v", ".")).values()) == {"cached"}  # rewritten


def test_fix_still_fixes_what_the_cache_saw_and_the_cache_never_hides_a_change(tmp_path: Path, monkeypatch) -> None:
    project = _project(tmp_path)
    monkeypatch.chdir(project)
    (project / "broken.py").write_bytes(BROKEN)
    invoke("check", ".")  # warms the cache with broken.py's findings
    assert invoke("fix", ".").exit_code == 1  # manual.py is left
    assert (project / "broken.py").read_bytes() != BROKEN
    assert invoke("check", "broken.py").exit_code == 0


def test_a_change_to_jitfixs_own_code_is_another_cache(tmp_path: Path, monkeypatch) -> None:
    """A checkout installed for development keeps its version while its code changes: results
    of the old code are not answers of the new."""
    from jitfix import cache

    project = _project(tmp_path)
    monkeypatch.chdir(project)
    invoke("check", "-v", ".")
    monkeypatch.setattr(cache, "_code_stamp", lambda: (("engine.py", 1, 1),))
    after_an_edit = invoke("check", "-v", ".")
    assert set(_states(after_an_edit).values()) == {"parsed"}
