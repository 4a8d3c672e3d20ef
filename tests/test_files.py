"""Nothing is lost: encodings, line endings, permissions, atomic writes, bad input."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest
from helpers import BROKEN, CLEAN, FIXED, invoke

from jitfix.files import FileChangedError, InputError, discover, read_source, write_source


def test_crlf_line_endings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN.replace(b"\n", b"\r\n"))
    assert invoke("fix", str(path)).exit_code == 0
    assert path.read_bytes() == FIXED.replace(b"\n", b"\r\n")


def test_utf8_bom_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(codecs.BOM_UTF8 + BROKEN)
    assert invoke("fix", str(path)).exit_code == 0
    assert path.read_bytes() == codecs.BOM_UTF8 + FIXED


def test_pep263_encoding_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    header = "# -*- coding: latin-1 -*-\n# café\n".encode("latin-1")
    path.write_bytes(header + BROKEN.replace(b'"x = {x}"', 'f"é = {x}"'.encode("latin-1")[1:]))
    assert invoke("fix", str(path)).exit_code == 0
    data = path.read_bytes()
    assert data.startswith(header)
    assert 'jax.debug.print("é = {x}", x=x)'.encode("latin-1") in data


def test_missing_final_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN.rstrip(b"\n"))
    assert invoke("fix", str(path)).exit_code == 0
    assert path.read_bytes() == FIXED.rstrip(b"\n")


def test_permissions_are_kept_and_no_temp_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN)
    path.chmod(0o754)
    assert invoke("fix", str(path)).exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o754
    assert sorted(os.listdir(tmp_path)) == ["m.py"]


def test_symlinked_file_is_fixed_through_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.py"
    target.write_bytes(BROKEN)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    assert invoke("fix", str(link)).exit_code == 0
    assert link.is_symlink() and target.read_bytes() == FIXED


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_bytes(BROKEN)
    source = read_source(str(path))
    path.write_bytes(BROKEN + b"# edited by someone else\n")
    with pytest.raises(FileChangedError, match="changed on disk"):
        write_source(source, FIXED.decode())
    assert path.read_bytes() == BROKEN + b"# edited by someone else\n"


def test_undecodable_bytes_are_reported_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"import jax\nx = '\xff'\n")
    with pytest.raises(InputError) as error:
        read_source(str(path))
    assert error.value.line == 2
    assert str(path) in error.value.describe() and "0xff" in error.value.describe()


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("syntax.py", b"import jax\ndef f(:\n", "syntax error"),
        ("repeated.py", b"import jax\ndef f(a, a):\n    return a\n", "duplicate argument 'a'"),
        ("bytes.py", b"import jax\nx = '\xff'\n", "cannot decode"),
        ("nul.py", b"import jax\nx = 1\x00\n", "null bytes"),
        ("cookie.py", b"# coding: no-such-codec\nimport jax\n", "invalid encoding"),
    ],
)
def test_bad_input_is_named_and_other_files_are_still_fixed(tmp_path: Path, name: str, content: bytes,
                                                            message: str) -> None:
    bad = tmp_path / name
    bad.write_bytes(content)
    good = tmp_path / "good.py"
    good.write_bytes(BROKEN)
    result = invoke("fix", str(tmp_path))
    assert result.exit_code == 2
    assert str(bad) in result.stderr and message in result.stderr
    assert bad.read_bytes() == content
    assert good.read_bytes() == FIXED
    assert "1 file fixed" in result.stderr and "1 file failed" in result.stderr


def test_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "syntax.py"
    bad.write_bytes(b"import jax\n\ndef f(:\n")
    result = invoke("check", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:3:7: syntax error" in result.stderr


def test_empty_file_is_fine(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    assert invoke("check", str(tmp_path / "empty.py")).exit_code == 0


def test_unreadable_file_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "secret.py"
    path.write_bytes(CLEAN)
    real_open = os.open

    def refusing_open(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("os.open", refusing_open)  # as root, chmod 000 would not stop a read
    with pytest.raises(InputError, match="Permission denied"):
        read_source(str(path))


def test_broken_symlink_missing_path_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "empty").mkdir()
    good = tmp_path / "good.py"
    good.write_bytes(BROKEN)
    result = invoke("fix", str(tmp_path / "dangling.py"), str(tmp_path / "missing.py"),
                    str(tmp_path / "empty"), str(good))
    assert result.exit_code == 2
    assert "broken symbolic link" in result.stderr
    assert "no such file or folder" in result.stderr
    assert "no Python files found" in result.stderr
    assert good.read_bytes() == FIXED


def test_discovery_skips_vcs_caches_virtualenvs_build_and_excludes(tmp_path: Path) -> None:
    for folder in [".git", "__pycache__", "build", "dist", "env", "pkg/legacy", "pkg/sub"]:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "m.py").write_bytes(CLEAN)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path / "pkg" / "notes.txt").write_text("not python")
    files, errors = discover([str(tmp_path)], excludes=("legacy",))
    assert errors == []
    assert [Path(f).relative_to(tmp_path).as_posix() for f in files] == ["pkg/sub/m.py"]


def test_real_path_agrees_with_realpath_through_links_and_dots(tmp_path: Path) -> None:
    from jitfix.paths import real_path

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "mod.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "pkg" / "sub", target_is_directory=True)
    (tmp_path / "pkg" / "alias.py").symlink_to(tmp_path / "pkg" / "sub" / "mod.py")
    spellings = [tmp_path / "link" / "mod.py", tmp_path / "link" / ".." / "alias.py", tmp_path / "pkg" / "alias.py",
                 tmp_path / "pkg" / "sub" / ".", tmp_path / "missing" / "x.py"]
    for path in spellings:
        assert real_path(str(path)) == os.path.realpath(path)
