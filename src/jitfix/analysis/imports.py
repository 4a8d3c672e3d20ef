"""Which module each local name stands for: ``J.jit`` and ``jit`` may both be ``jax.jit``."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator, Sequence

from jitfix.analysis.words import LineIndex

_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: Sequence[ast.AST], import_lines: list[int] | None) -> Iterator[ast.AST]:
    """The statements that may be imports: blocks that span no line spelling ``import``
    hold none (with no text to read, every block is entered)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        first = getattr(node, "lineno", None)  # a match case has none
        if import_lines is not None and first is not None and hasattr(node, "body"):
            at = bisect.bisect_left(import_lines, first)
            if at == len(import_lines) or import_lines[at] > (getattr(node, "end_lineno", None) or first):
                continue
        for block in _BLOCKS:
            stack.extend(getattr(node, block, ()))


class ImportTable:
    """Local names bound by the module's imports, mapped to dotted import paths."""

    def __init__(self, tree: ast.Module, text: str | None = None):
        self.aliases: dict[str, str] = {}
        # `from .utils import f` / `from . import utils`: local name -> (level, dotted path
        # below the package the dots name).
        self.relative: dict[str, tuple[int, str]] = {}
        # Imports inside functions count too (they are rare and bind the same names in
        # practice). Only statements are visited: expressions hold no imports.
        import_lines = LineIndex(text).spelling(["import"]) if text is not None else None
        for node in _statements(tree.body, import_lines):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if alias.name != "*":
                        self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.ImportFrom) and node.level > 0:
                for alias in node.names:
                    if alias.name != "*":
                        dotted = f"{node.module}.{alias.name}" if node.module else alias.name
                        self.relative[alias.asname or alias.name] = (node.level, dotted)

    def resolve(self, expr: ast.AST) -> str | None:
        """The dotted path an expression names, e.g. ``J.lax.cond`` -> ``jax.lax.cond``."""
        if isinstance(expr, ast.Name):
            return self.aliases.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve(expr.value)
            return f"{base}.{expr.attr}" if base else None
        return None

    def resolve_relative(self, expr: ast.AST) -> tuple[int, str] | None:
        """(level, dotted path) an expression names through a relative import:
        ``utils.f`` after ``from . import utils`` is ``(1, "utils.f")``."""
        if isinstance(expr, ast.Name):
            return self.relative.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.resolve_relative(expr.value)
            return (base[0], f"{base[1]}.{expr.attr}") if base else None
        return None

    def local_name(self, dotted: str) -> str | None:
        """How this module spells an import path, if it imports it: ``jax.numpy`` -> ``jnp``."""
        for local, target in self.aliases.items():
            if target == dotted:
                return local
        parent, _, attr = dotted.rpartition(".")
        if parent:
            base = self.local_name(parent)
            if base:
                return f"{base}.{attr}"
        return None

    def mentions(self, prefix: str) -> bool:
        return any(target == prefix or target.startswith(prefix + ".") for target in self.aliases.values())
