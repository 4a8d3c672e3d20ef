"""Code decides on types, never on the words of a message: reword a finding, a reason or an
explanation and no logic may change. Where a rule needs to know what kind of problem it
holds, the problem carries an enum (``ProblemKind``, ``EntryKind``, ``Kind``) or a type
(``InvalidSyntax``) beside its words."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "jitfix"

# Names that hold words meant for people.
MESSAGE_NAMES = frozenset({"reason", "reasons", "message", "msg", "why", "how", "explanation", "description",
                           "note", "hint", "summary", "problem_text"})
TEXT_TESTS = frozenset({"startswith", "endswith", "removeprefix", "removesuffix", "find", "index", "split",
                        "partition", "rpartition"})
# Text jitfix does not write: the log records of JAX's own compiler, which `run` and `profile`
# read for what recompiled and why (JAX offers them only as text).
OTHERS_TEXT = frozenset({"run_hook.py", "profile.py"})


def _message_name(node: ast.AST) -> str | None:
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return name if name in MESSAGE_NAMES else None


def decisions_on_text(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each test, slice or search of a message's words."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TEXT_TESTS:
            name = _message_name(node.func.value)
            if name:
                found.append((node.lineno, f"{name}.{node.func.attr}(...)"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            name = _message_name(node.value)
            if name:
                found.append((node.lineno, f"{name}[...:...]"))
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
            for operand in node.comparators:
                name = _message_name(operand)
                if name and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str):
                    found.append((node.lineno, f"{node.left.value!r} in {name}"))
        elif isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_message_name(side) for side in sides) and any(
                    isinstance(side, ast.Constant) and isinstance(side.value, str) and side.value for side in sides):
                found.append((node.lineno, f"{ast.unparse(node)}"))
    return found


def test_no_code_decides_on_the_words_of_a_message() -> None:
    found = [
        f"{path.relative_to(SOURCE)}:{line}: {what}"
        for path in sorted(SOURCE.rglob("*.py")) if path.name not in OTHERS_TEXT
        for line, what in decisions_on_text(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "decide on a kind or a type, not on words:\n" + "\n".join(found)


def test_the_check_finds_each_way_of_reading_words() -> None:
    source = ('if problem.reason.startswith("a branch"): pass\n'
              'x = why[2:]\n'
              'if "expected" in reason: pass\n'
              'if how == "rebound at module level": pass\n'
              'if traced.how.removeprefix("called from"): pass\n'
              'if node.attr.startswith("_"): pass\n')
    assert [line for line, _ in decisions_on_text(ast.parse(source))] == [1, 2, 3, 4, 5]
