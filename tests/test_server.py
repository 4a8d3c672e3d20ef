"""`jitfix server` end to end, driven by an LSP client over stdio as an editor drives it:
initialize, open a broken module, read the diagnostics, take a quick fix and "fix all", hover,
type a syntax error, close."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_client import LspClient, apply_text_edits

from jitfix import api
from jitfix.pyproject import load_settings, with_table

BROKEN = '''import jax
import numpy as np

# é: a non-ASCII comment, so columns are counted in the client's units


@jax.jit
def step(x):
    print("x is", x)
    if x.sum() > 0:
        return x * 2
    return np.abs(x)
'''


def _fixed(path: Path, text: str, **table) -> str:
    settings = with_table(load_settings(path.parent), table, "test", path.parent)
    return api.fix_document(str(path), text, settings).new_text


@pytest.fixture
def client(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.jitfix]\n")
    client = LspClient(str(tmp_path))
    client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                                  "initializationOptions": {"debounce-ms": 50}})
    client.notify("initialized", {})
    yield client
    client.kill()


def _open(client: LspClient, path: Path, text: str) -> dict:
    path.write_text(text)
    client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                            "version": 1, "text": text}})
    return client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == path.as_uri())


def test_diagnostics_quick_fix_fix_all_and_hover(client: LspClient, tmp_path: Path) -> None:
    path = tmp_path / "train.py"
    uri = path.as_uri()
    published = _open(client, path, BROKEN)
    by_code = {d["code"]: d for d in published["diagnostics"]}
    assert set(by_code) == {"JF401", "JF101", "JF602"}
    assert all(d["source"] == "jitfix" and d["severity"] == 2 for d in by_code.values())
    # 0-based lines; the print call spans its whole line.
    assert by_code["JF401"]["range"] == {"start": {"line": 8, "character": 4}, "end": {"line": 8, "character": 20}}
    assert by_code["JF602"]["range"]["start"] == {"line": 11, "character": 11}

    print_fix = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": by_code["JF401"]["range"],
        "context": {"diagnostics": [by_code["JF401"]], "only": ["quickfix"]}})
    assert [action["title"] for action in print_fix] == ["Fix JF401: replace with jax.debug.print"]
    assert print_fix[0]["isPreferred"] is True and print_fix[0]["kind"] == "quickfix"
    after = apply_text_edits(BROKEN, print_fix[0]["edit"]["changes"][uri])
    assert after == _fixed(path, BROKEN, select=["JF401"])  # what `jitfix fix --select JF401` writes

    fix_all = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["source.fixAll"]}})
    assert [action["title"] for action in fix_all] == ["Fix all jitfix problems"]
    everything = apply_text_edits(BROKEN, fix_all[0]["edit"]["changes"][uri])
    assert everything == _fixed(path, BROKEN) and "lax.cond" in everything and "jnp.abs" in everything

    hover = client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": 8, "character": 6}})
    assert hover["contents"]["kind"] == "markdown"
    assert "JF401" in hover["contents"]["value"] and "## Why it breaks under jit" in hover["contents"]["value"]
    assert client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 0, "character": 0}}) is None

    # The edited document, fixed as the editor holds it (unsaved), has nothing left.
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": everything}]})
    assert client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)["diagnostics"] == []
    assert client.shutdown() == 0


def test_a_syntax_error_is_a_diagnostic_not_a_crash(client: LspClient, tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    uri = path.as_uri()
    _open(client, path, BROKEN)
    for version, text in enumerate(("import jax\n\n@jax.jit\ndef f(x:\n", "import jax\n\n\ndef f(x):\n    return x\n"), 2):
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": text}]})
        published = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        if version == 2:
            [error] = published["diagnostics"]
            assert error["severity"] == 1 and "syntax error" in error["message"] and error["range"]["start"]["line"] == 3
            actions = client.request("textDocument/codeAction", {
                "textDocument": {"uri": uri}, "range": error["range"], "context": {"diagnostics": [error]}})
            assert actions == []
        else:
            assert published["diagnostics"] == []  # still serving after the error
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)["diagnostics"] == []
    assert client.shutdown() == 0


def test_settings_come_from_pyproject_and_initialization_options(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jitfix]\nignore = ["JF602"]\n')
    client = LspClient(str(tmp_path))
    try:
        client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
                                      "initializationOptions": {"jitfix": {"extend-ignore": ["JF4"]}}})
        client.notify("initialized", {})
        published = _open(client, tmp_path / "train.py", BROKEN)
        assert [d["code"] for d in published["diagnostics"]] == ["JF101"]
        assert client.shutdown() == 0
    finally:
        client.kill()


def test_diagnostics_make_no_fix_and_a_quick_fix_makes_only_the_one_asked_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Making each finding's fix as text took 40 s on a module of 330 findings, after every
    # edit; the diagnostics need none, and a code action needs those in its range.
    from pygls.workspace import TextDocument

    from jitfix import engine, server

    path = tmp_path / "train.py"
    path.write_text(BROKEN)
    (tmp_path / "pyproject.toml").write_text("[tool.jitfix]\n")
    made: list[str] = []
    render = engine.apply_edits

    def counting(text: str, edits: list, *args, **kwargs) -> str:
        made.append(text)
        return render(text, edits, *args, **kwargs)

    monkeypatch.setattr(engine, "apply_edits", counting)
    ls = server.JitfixServer()
    ls.version_of = lambda uri: 1  # type: ignore[method-assign]  # the version the editor holds
    document = TextDocument(path.as_uri(), BROKEN, version=1)
    analysed = ls.analyse(document)
    assert {finding.code for finding in analysed.result.findings} == {"JF401", "JF101", "JF602"}
    assert all(finding.fix is not None and finding.fix.diff is None for finding in analysed.result.findings)
    assert made == []
    print_finding = next(finding for finding in analysed.result.findings if finding.code == "JF401")
    [action] = server.quick_fixes(document, document.uri, analysed, server.finding_range(document, print_finding))
    assert action.title == "Fix JF401: replace with jax.debug.print" and len(made) == 1
    server.quick_fixes(document, document.uri, analysed, server.finding_range(document, print_finding))
    assert len(made) == 1  # kept with the analysis of this version


def test_an_analysis_stops_when_a_newer_version_of_its_document_arrives(tmp_path: Path) -> None:
    from pygls.workspace import TextDocument

    from jitfix import engine, server

    path = tmp_path / "train.py"
    (tmp_path / "pyproject.toml").write_text("[tool.jitfix]\n")
    ls = server.JitfixServer()
    ls.version_of = lambda uri: 2  # type: ignore[method-assign]  # the editor holds version 2 now
    with pytest.raises(engine.Superseded):
        ls.analyse(TextDocument(path.as_uri(), BROKEN, version=1))
    assert ls.analyse(TextDocument(path.as_uri(), BROKEN, version=2)).result.findings
