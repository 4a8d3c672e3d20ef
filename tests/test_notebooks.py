"""Notebooks: code cells checked and fixed as one module, everything else kept byte for byte."""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import invoke
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output


def _notebook(path: Path) -> bytes:
    notebook = new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [
        new_markdown_cell("# Training, with `jax.jit`"),
        new_code_cell("!pip install jax\nimport jax\nimport jax.numpy as jnp"),
        new_code_cell("@jax.jit\ndef step(x):\n    if x.sum() > 0:\n        x = x * 2\n    return x",
                      execution_count=2),
        new_code_cell("%timeit step(jnp.ones(3))\nfiles = !ls\nstep?\nprint(step(jnp.ones(3)))",
                      execution_count=3, outputs=[new_output("stream", name="stdout", text="[2. 2. 2.]\n")]),
        new_code_cell("%%bash\necho not python"),
        new_code_cell("@jax.jit\ndef report(y):\n    print('y =', y)  # trace-time only\n    return y"),
    ]
    nbformat.write(notebook, path)
    return path.read_bytes()


def test_findings_name_cell_and_line(tmp_path: Path) -> None:
    _notebook(tmp_path / "train.ipynb")
    result = invoke("check", str(tmp_path))  # folders include notebooks
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'train.ipynb'}:cell 3:3:5: JF101 [*]")
    assert lines[1].startswith(f"{tmp_path / 'train.ipynb'}:cell 6:3:5: JF401 [*]")
    assert result.exit_code == 1


def test_lines_a_message_names_are_placed_in_their_cells(tmp_path: Path) -> None:
    path = tmp_path / "pure.ipynb"
    notebook = new_notebook()
    notebook.cells = [new_code_cell("import jax\n\n\ndef log(x):\n    print('x', 1)\n    return x"),
                      new_code_cell("fast = jax.jit(log)"),
                      new_code_cell("def twice(x):\n    print('twice')\n    return x * 2\n\n\ntwice_fast = jax.jit(twice)")]
    nbformat.write(notebook, path)
    lines = invoke("check", str(path)).stdout.splitlines()
    assert "(wrapped by jax.jit at cell 2, line 1)" in lines[0] and lines[0].startswith(f"{path}:cell 1:5:5:")
    assert "(wrapped by jax.jit at line 6)" in lines[1] and lines[1].startswith(f"{path}:cell 3:2:5:")


def test_machine_formats_name_the_notebook_file_and_the_cell(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    _notebook(path)
    records = json.loads(invoke("check", "--output-format", "json", str(path)).stdout)
    assert [(r["path"], r["cell"], r["line"], r["code"]) for r in records] == [
        (str(path), 3, 3, "JF101"), (str(path), 6, 3, "JF401")]
    github = invoke("check", "--output-format", "github", str(path)).stdout.splitlines()
    assert github[0].startswith(f"::warning file={path},title=JF101 traced-if::JF101 cell 3, line 3: `if x.sum()")
    sarif = json.loads(invoke("check", "--output-format", "sarif", str(path)).stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": path.as_posix()}}}]
    assert result["message"]["text"].startswith("cell 3, line 3: ") and "fixes" not in result
    manual = tmp_path / "manual.ipynb"
    notebook = new_notebook()
    notebook.cells = [new_code_cell("import sys\nimport jax\n\n@jax.jit\ndef f(x):\n"
                                    "    print(x, file=sys.stderr)\n    return x")]
    nbformat.write(notebook, manual)
    before = manual.read_bytes()
    add = invoke("check", "--add-ignore", str(manual))
    assert "ignore comments are not added to notebooks" in add.stderr
    assert manual.read_bytes() == before


def test_fix_changes_only_the_fixed_cells(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    before = _notebook(path)
    result = invoke("fix", str(path))
    assert result.exit_code == 0, result.stderr
    after = path.read_bytes()
    old, new = json.loads(before), json.loads(after)
    assert {k: v for k, v in old.items() if k != "cells"} == {k: v for k, v in new.items() if k != "cells"}
    changed = [i for i, (a, b) in enumerate(zip(old["cells"], new["cells"])) if a != b]
    assert changed == [1, 2, 5]  # the added import, the traced if, the print
    for a, b in zip(old["cells"], new["cells"]):
        assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    assert "".join(new["cells"][1]["source"]).endswith("import jax.numpy as jnp\nfrom jax import lax")
    assert "lax.cond(x.sum() > 0" in "".join(new["cells"][2]["source"])
    assert "jax.debug.print('y = {y!s}', y=y)  # trace-time only" in "".join(new["cells"][5]["source"])
    # Byte for byte, only lines of those cells' sources differ.
    changed_lines = [line for line in difflib.ndiff(before.decode().splitlines(), after.decode().splitlines())
                     if line.startswith(("+ ", "- "))]
    assert changed_lines and all(line[2:].startswith('    "') for line in changed_lines)
    assert invoke("fix", str(path)).stderr == "All checks passed.\n"  # idempotent
    assert path.read_bytes() == after


def test_an_import_added_to_a_later_cell_leaves_the_first_code_cell_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "later.ipynb"
    notebook = new_notebook(cells=[
        new_markdown_cell("# Setup"),
        new_code_cell("x = 1\nprint(x)"),  # no import here: the view's first line is its marker comment
        new_code_cell("import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x"),
    ])
    path.write_text(nbformat.writes(notebook))
    assert invoke("fix", str(path)).exit_code == 0
    cells = json.loads(path.read_text())["cells"]
    assert "".join(cells[1]["source"]) == "x = 1\nprint(x)"
    assert "".join(cells[2]["source"]).startswith("import jax\nfrom jax import lax\n\n@jax.jit")


def test_magics_and_cell_magics_are_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "train.ipynb"
    before = json.loads(_notebook(path))
    invoke("fix", str(path))
    after = json.loads(path.read_bytes())
    assert after["cells"][3] == before["cells"][3]  # %timeit, !ls, step?
    assert after["cells"][4] == before["cells"][4]  # %%bash
    assert "!pip install jax" in "".join(after["cells"][1]["source"])


def test_a_cell_whose_first_line_is_indented_is_read_as_ipython_runs_it(tmp_path: Path) -> None:
    # IPython takes the first line's indent off every line that has it before it runs a cell.
    path = tmp_path / "indented.ipynb"
    notebook = new_notebook()
    notebook.cells = [
        new_code_cell("import jax"),
        new_code_cell("  @jax.jit\n  def step(x):\n      if x.sum() > 0:\n          x = x * 2\n      return x\n"
                      "# a comment the indent never reached\nstep"),
    ]
    nbformat.write(notebook, path)
    check = invoke("check", str(path))
    assert check.stdout.startswith(f"{path}:cell 2:3:7: JF101"), check.stdout + check.stderr  # its own column
    assert invoke("fix", str(path)).exit_code == 0
    source = "".join(json.loads(path.read_bytes())["cells"][1]["source"])
    assert source.startswith("  @jax.jit\n  def step(x):\n      def _if_")
    assert "      x = lax.cond(x.sum() > 0, " in source
    assert source.endswith("\n      return x\n# a comment the indent never reached\nstep")
    assert invoke("check", str(path)).exit_code == 0


def test_diff_shows_cells_as_python_on_a_terminal_and_a_json_patch_otherwise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    _notebook(tmp_path / "train.ipynb")
    monkeypatch.setattr("rich.console.Console.is_terminal", property(lambda self: True))
    shown = invoke("diff", "--no-color", str(tmp_path / "train.ipynb")).stdout
    assert "# %% jitfix cell 3\n" in shown and "-    if x.sum() > 0:\n" in shown
    assert '"source"' not in shown
    monkeypatch.undo()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    patch = invoke("diff", "train.ipynb").stdout
    assert '"source"' in patch
    (tmp_path / "nb.patch").write_text(patch, encoding="utf-8", newline="")
    applied = subprocess.run(["git", "apply", "nb.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert "lax.cond" in (tmp_path / "train.ipynb").read_text()


def test_cell_text_that_looks_like_a_boundary_and_cell_endings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "forged.ipynb"
    _notebook(path)
    document = json.loads(path.read_text())
    code_cells = [cell for cell in document["cells"] if cell["cell_type"] == "code"]
    code_cells[0]["source"] = ["# %% jitfix cell 1\n", "import jax\n", "import jax.numpy as jnp\n", "\n"]
    code_cells[-1]["source"][-1] += "\n"
    path.write_text(json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    invoke("fix", str(path))
    after = json.loads(path.read_text())
    after_code = [cell for cell in after["cells"] if cell["cell_type"] == "code"]
    assert after_code[0]["source"][0] == "# %% jitfix cell 1\n" and after_code[0]["source"][-1] == "\n"
    assert after_code[-1]["source"][-1].endswith("\n")
    assert "lax.cond" in path.read_text()


def test_broken_and_foreign_notebooks_are_reported_and_others_still_processed(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    _notebook(tmp_path / "good.ipynb")
    foreign = tmp_path / "foreign.ipynb"
    document = json.loads((tmp_path / "good.ipynb").read_text())
    # Spacing no json.dumps call reproduces: rewriting would reformat it all, so it is refused.
    foreign.write_text(json.dumps(document, indent=1).replace('": ', '" : '), encoding="utf-8")
    original_foreign = foreign.read_bytes()
    result = invoke("fix", str(tmp_path))
    assert result.exit_code == 2
    assert f"{tmp_path / 'broken.ipynb'}: not a readable notebook" in result.stderr
    assert f"{tmp_path / 'foreign.ipynb'}: not rewritten: jitfix cannot write the notebook's JSON back" \
        in result.stderr
    assert foreign.read_bytes() == original_foreign
    for name, layout in (("reversed.ipynb", dict(indent=1)), ("ascii.ipynb", dict(indent=2, ensure_ascii=True)),
                         ("oneline.ipynb", dict(separators=(",", ":")))):
        other = tmp_path / name  # other tools' layouts are written back in their own layout
        other.write_text(json.dumps(dict(reversed(document.items())), **layout), encoding="utf-8")
        invoke("fix", str(other))
        fixed = json.loads(other.read_text())
        assert json.dumps(fixed, **layout) == other.read_text() and "lax.cond" in other.read_text()
    assert "lax.cond" in (tmp_path / "good.ipynb").read_text()
    indented = tmp_path / "indented.ipynb"  # another layout json.dumps does reproduce is kept
    indented.write_text(json.dumps(document, indent=4, sort_keys=True), encoding="utf-8")
    invoke("fix", str(indented))
    assert indented.read_text().startswith('{\n    "cells": [') and "lax.cond" in indented.read_text()


def _tutorial(path: Path, calls_after_last_rebinding: bool) -> None:
    """A notebook's shape (a Flax tutorial's): a factory builds the jitted loss, a transform
    wraps it, a cell rebinds `model` and trains, later cells rebind `model` again."""
    notebook = new_notebook()
    cells = [
        "import jax\nimport jax.numpy as jnp",
        "model = 1.0",
        "def make_loss(xs):\n    def loss(w):\n        def error(x):\n            return (model * w - x) ** 2\n"
        "        return jnp.mean(jax.vmap(error)(xs))\n    return jax.jit(loss)\n\n"
        "loss_fn = make_loss(jnp.arange(3.0))\ngrad_fn = jax.grad(loss_fn)",
        "model = 2.0\nfor _ in range(3):\n    print(grad_fn(1.0))",
        "model = 3.0  # the next section's model",
    ]
    if calls_after_last_rebinding:
        cells.append("print(grad_fn(1.0))")
    notebook.cells = [new_code_cell(source) for source in cells]
    nbformat.write(notebook, path)


def test_a_notebook_rebinding_a_global_after_its_last_call_reads_nothing_stale(tmp_path: Path) -> None:
    # Making the function (the factory's call, `jax.grad` of it) traces nothing, and nothing
    # imports a notebook: no call comes after its last cell.
    _tutorial(tmp_path / "tutorial.ipynb", calls_after_last_rebinding=False)
    assert invoke("check", str(tmp_path)).exit_code == 0


def test_a_notebook_calling_across_the_rebinding_is_reported(tmp_path: Path) -> None:
    _tutorial(tmp_path / "tutorial.ipynb", calls_after_last_rebinding=True)
    result = invoke("check", str(tmp_path))
    assert "JF301" in result.stdout and "`model` is rebound at module level" in result.stdout


def _two_sections(path: Path, second_section_redefines_its_step: bool) -> None:
    """A tutorial whose second section sets its own temperature and, as notebooks do, may
    define its own `opt_step` under the first section's name."""
    notebook = new_notebook()
    second_step = "def opt_step(w):\n    return w * 0.5\n" if second_section_redefines_its_step else ""
    cells = [
        "import jax",
        "kT = 0.3",
        "@jax.jit\ndef loss(w):\n    return (w * kT) ** 2",
        "def opt_step(w):\n    return w - 0.1 * jax.grad(loss)(w)",
        "w = 1.0\nfor _ in range(3):\n    w = opt_step(w)",
        "kT = 0.001  # the second section's temperature\n" + second_step,
        "for _ in range(3):\n    w = opt_step(w)",
    ]
    notebook.cells = [new_code_cell(source) for source in cells]
    nbformat.write(notebook, path)


@pytest.mark.parametrize("redefined", [True, False])
def test_a_caller_defined_anew_no_longer_reaches_the_jitted_function(tmp_path: Path, redefined: bool) -> None:
    # What a call reaches is what its names are bound to when it runs: after the second
    # section's `def opt_step`, its loop never calls `loss`, which keeps the first `kT`
    # harmlessly. Without that def the loop calls the first `opt_step`, and `loss` compiled
    # with `kT = 0.3`.
    _two_sections(tmp_path / "tutorial.ipynb", second_section_redefines_its_step=redefined)
    result = invoke("check", str(tmp_path))
    if redefined:
        assert result.exit_code == 0, result.stdout
    else:
        assert "JF301" in result.stdout and "`kT` is rebound at module level" in result.stdout


def _factory_defined_anew(path: Path) -> None:
    """Each section defines its own `dynamics`, whose nested `update` it returns, and binds
    `update` to what it makes: the first section's `update` is gone when `shift` changes."""
    notebook = new_notebook()
    factory = ("def dynamics(dt):\n    def update(i, x):\n        return x + dt * shift(x)\n"
               "    return update")
    cells = [
        "import jax\nfrom jax import lax",
        "shift = lambda x: -x",
        factory,
        "update = dynamics(0.1)\nx = lax.fori_loop(0, 5, update, 1.0)",
        "shift = lambda x: x * 0.0\n" + factory.replace("dt * shift(x)", "dt * shift(x) * 2.0"),
        "update = dynamics(0.1)\nx = lax.fori_loop(0, 5, update, 1.0)",
    ]
    notebook.cells = [new_code_cell(source) for source in cells]
    nbformat.write(notebook, path)


def test_a_factory_defined_anew_is_not_called_through_its_old_names(tmp_path: Path) -> None:
    _factory_defined_anew(tmp_path / "flocking.ipynb")
    result = invoke("check", str(tmp_path))
    assert "JF301" not in result.stdout, result.stdout


def test_a_notebook_whose_cells_have_no_ids_is_read_without_nbformat_warnings(tmp_path: Path) -> None:
    # Jupyter before nbformat 4.5 wrote no cell ids; nbformat warns about each such file,
    # which tells a user of jitfix nothing (jitfix writes the JSON back as it was).
    path = tmp_path / "old.ipynb"
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": ["import jax\n", "\n", "@jax.jit\n", "def f(x):\n", "    if x > 0:\n", "        x = -x\n",
                       "    return x"]}
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1))
    result = subprocess.run([sys.executable, "-m", "jitfix", "check", "--no-cache", str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1 and "JF101" in result.stdout
    assert "Warning" not in result.stderr, result.stderr
