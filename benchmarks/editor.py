"""`jitfix server` as an editor meets it: seconds from a one-line edit to its diagnostics,
and from a quick-fix request to its answer, driven by an LSP client over stdio.

The module is generated: ``--functions`` jitted functions of 12 lines, each with a traced
`if` and a `print` (165 of them: about 2,000 lines and 330 findings). The client opens it,
then makes ``--edits`` one-line edits (a constant in one function, a different function each
time), timing each `didChange` to the `publishDiagnostics` of that version, and asks for the
quick fixes at ``--edits`` findings, timing each `codeAction`. The server's debounce is set
to 0 so the figures are the server's own work; an editor adds its debounce (300 ms by
default, ``debounce-ms``).

    python benchmarks/editor.py [--functions 165] [--edits 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from lsp_client import LspClient  # noqa: E402  (the suite's client, over stdio)


def module(functions: int) -> str:
    """``functions`` jitted functions, each with a traced `if` and a `print`."""
    parts = ["import jax\nimport jax.numpy as jnp\n"]
    for number in range(functions):
        parts.append(f"""

@jax.jit
def step_{number}(x, y):
    # scale, then shift
    z = x * 1 + y
    w = jnp.tanh(z)
    if z.sum() > 0:
        z = z - 1
    else:
        z = z + w
    print(z)
    return z
""")
    return "".join(parts)


def measure(functions: int, edits: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.py"
        (Path(folder) / "pyproject.toml").write_text("[tool.jitfix]\n")
        text = module(functions)
        path.write_text(text)
        uri = path.as_uri()
        client = LspClient(folder)
        try:
            client.request("initialize", {"processId": None, "rootUri": Path(folder).as_uri(), "capabilities": {},
                                          "initializationOptions": {"debounce-ms": 0}})
            client.notify("initialized", {})
            started = time.perf_counter()
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                    "text": text}})
            published = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
            opened = time.perf_counter() - started
            diagnostics: list[float] = []
            lines = text.splitlines(keepends=True)
            for version in range(2, edits + 2):
                # `z = x * 1 + y` of one function becomes `z = x * 2 + y`, sent as an editor
                # sends it: the range of the one line, and its new text.
                edited = next(number for number, line in enumerate(lines)
                              if line == f"def step_{version * 7 % functions}(x, y):\n") + 2
                lines[edited] = lines[edited].replace("* 1 +", "* 2 +")
                started = time.perf_counter()
                client.notify("textDocument/didChange", {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": {"start": {"line": edited, "character": 0},
                                                  "end": {"line": edited + 1, "character": 0}},
                                        "text": lines[edited]}]})
                published = client.wait_for("textDocument/publishDiagnostics",
                                            lambda p: p["uri"] == uri and p.get("version") == version)
                diagnostics.append(time.perf_counter() - started)
            tests = [d for d in published["diagnostics"] if d["code"] == "JF101"]
            actions: list[float] = []
            for diagnostic in tests[:edits]:
                started = time.perf_counter()
                answer = client.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": diagnostic["range"],
                    "context": {"diagnostics": [diagnostic], "only": ["quickfix"]}})
                actions.append(time.perf_counter() - started)
                assert answer, "no quick fix offered"
            client.shutdown()
        finally:
            client.kill()
    return {"open": [opened], "findings": [len(published["diagnostics"])], "lines": [len(lines)],
            "diagnostics": diagnostics, "code action": actions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", type=int, default=165)
    parser.add_argument("--edits", type=int, default=5)
    arguments = parser.parse_args()
    figures = measure(arguments.functions, arguments.edits)
    print(f"{figures['lines'][0]} lines, {figures['findings'][0]} findings; first analysis {figures['open'][0]:.2f} s")
    for name in ("diagnostics", "code action"):
        values = figures[name]
        print(f"{name}: median {statistics.median(values):.3f} s of {len(values)} "
              f"({', '.join(f'{value:.3f}' for value in values)})")


if __name__ == "__main__":
    main()
