"""``jitfix why FILE:LINE`` shows the evidence behind each verdict."""

from __future__ import annotations

from pathlib import Path

from helpers import invoke

MODULE = '''import jax
import jax.numpy as jnp


def is_array(x):
    return isinstance(x, jax.Array)


@jax.jit
def step(x, neighbors=None):
    if neighbors is None:
        neighbors = int(jnp.max(x))
    if is_array(x):
        x = x * 2
    if x.sum() > 0:
        x = x - 1
    return helper(x)


def plain(x):
    return x
'''


def _why(tmp_path: Path, line: int) -> str:
    path = tmp_path / "m.py"
    path.write_text(MODULE)
    result = invoke("why", f"{path}:{line}")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_a_traced_test_shows_its_chain_down_to_the_argument(tmp_path: Path) -> None:
    out = _why(tmp_path, 15)
    assert "in `step`, traced: decorated with jax.jit" in out
    assert "parameter `x`: traced" in out
    assert "parameter `neighbors`: unknown" in out and "no call in this module overrides" in out
    assert "`x.sum() > 0` is traced:" in out
    assert "<- `.sum()` of a traced array" in out
    assert out.rstrip().endswith("<- `x` is a traced argument of `step` (decorated with jax.jit)")


def test_static_unknown_and_unreached_lines_say_why(tmp_path: Path) -> None:
    assert "`is_array(x)` is static:" in _why(tmp_path, 13)
    assert "`isinstance()` returns a Python value" in _why(tmp_path, 13)
    guarded = _why(tmp_path, 12)
    assert "may not run under tracing: only reached when `neighbors is None`" in guarded
    assert "`int(jnp.max(x))` is unknown" in guarded
    assert "`helper()` is a call jitfix cannot see into" in _why(tmp_path, 17)
    assert "`plain` is not traced" in _why(tmp_path, 21)


def test_bad_locations_are_usage_errors(tmp_path: Path) -> None:
    assert invoke("why", "nowhere").exit_code == 2
    assert invoke("why", str(tmp_path / "missing.py:3")).exit_code == 2


def test_the_readme_example_is_what_why_prints(tmp_path: Path, monkeypatch) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ jitfix why train.py:15\n", 1)[1].split("```", 1)[0]
    (tmp_path / "train.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    assert invoke("why", "train.py:15").stdout == block


def test_a_line_tracing_never_enters_says_so(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import jax\nimport jax.numpy as jnp\n\n\ndef penalty(x, strict=False):\n    if strict:\n"
                    "        x = float(x.mean()) * x\n    return x.sum()\n\n\n@jax.jit\ndef loss(x):\n"
                    "    return penalty(x)\n")
    inside, test = (invoke("why", f"{path}:{line}").stdout for line in (7, 6))
    assert "tracing never enters this line" in inside and "(`strict`)" in inside, inside
    assert "tracing never enters" not in test, test


def test_why_answers_as_check_does_for_a_function_only_another_module_traces(tmp_path, monkeypatch):
    """A helper module's function that only another module's jitted code calls: `check` of the
    folder finds its traced test, and `why` on its line says the same, naming the call that
    traces each parameter (a literal `3` at one call leaves `n` static there)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (package / "__init__.py").write_text("")
    (package / "core.py").write_text("def scale(x, n):\n    if n > 2:\n        return x * n\n    return x\n")
    (package / "api.py").write_text(
        "import jax\n\nfrom pkg.core import scale\n\n\n@jax.jit\ndef run(x):\n    return scale(x, 3)\n\n\n"
        "@jax.jit\ndef run_n(x, n):\n    return scale(x, n)\n")
    monkeypatch.chdir(tmp_path)
    assert "JF101" in invoke("check", "pkg").stdout
    said = invoke("why", "pkg/core.py:2").stdout
    assert "`n > 2` is traced" in said
    assert "`n` is a traced argument of `scale` (called with traced arguments from api.py:13)" in said
