"""Where a module's text spells a name: a cheap, exact-enough filter before walking a tree.

A name in the tree (a call's function, an attribute) is one token on one line of the text,
so an expression whose lines spell none of the names a walk looks for holds none of them.
``str.find`` over the text is many times faster than walking the nodes.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from typing import Iterable, Iterator

_WORD_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_LINE_END = re.compile(r"\r\n?|\n")
_WORD = re.compile("[" + "".join(sorted(_WORD_CHARACTERS)) + "]+")


# The last text read and how Python reads it: one module's text is read several times (the
# prefilter, its imports, its scopes), and checking a long non-ASCII text is not free.
_last_read: tuple[str, str] = ("", "")


def _as_python_reads_it(text: str) -> str:
    """Python NFKC-normalises identifiers (``ｊｉｔ`` is ``jit``); that changes no line break."""
    global _last_read
    if text.isascii():
        return text
    if _last_read[0] is text:
        return _last_read[1]
    read = text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)
    _last_read = (text, read)
    return read


def _word_starts(text: str, names: Iterable[str]) -> Iterator[int]:
    """Where one of ``names`` starts as a whole word (not inside a longer name). The text is
    scanned for the names that hold none of the others (``map`` for ``vmap`` and ``pmap``
    too: each scan reads the whole text), and each find is widened to its whole word."""
    wanted = frozenset(names)
    for probe in _probes(wanted):
        at = text.find(probe)
        while at >= 0:
            start, end = at, at + len(probe)
            while start > 0 and text[start - 1] in _WORD_CHARACTERS:
                start -= 1
            while text[end:end + 1] in _WORD_CHARACTERS and end < len(text):
                end += 1
            if text[start:end] in wanted:
                yield start
            at = text.find(probe, end)


@functools.lru_cache(maxsize=64)
def _probes(names: frozenset[str]) -> tuple[str, ...]:
    """The names that hold no other of ``names``: a word that spells any of them holds one.
    Shortest first: the common words, so a search for any one of them ends soonest."""
    return tuple(sorted((name for name in names if name and not any(other != name and other in name
                                                                    for other in names)), key=lambda name: (len(name), name)))


def spells_a_word(text: str, names: Iterable[str]) -> bool:
    """Whether the text spells one of ``names`` as a word (in code, a string or a comment)."""
    return next(_word_starts(_as_python_reads_it(text), names), None) is not None


class LineIndex:
    """The lines of a module's text that spell a name.

    A search reads the whole text; a module asked about each of its functions (where is
    each one called?) would be read once per function, a cost that grows with the square of
    its length. So once many names have been searched for, the text's words are indexed, and
    each later search costs what it finds."""

    # Names searched for (each a scan of the text, fast) before the words are indexed (a pass
    # of Python over each word, slower: worth it only for many more searches).
    NAMES_BEFORE_INDEXING = 64

    def __init__(self, text: str | None):
        self.text = None if text is None else _as_python_reads_it(text)
        # Only old Mac files end lines with a lone `\r`: they count lines the slow way.
        self._lone_returns = self.text is not None and self.text.count("\r") > self.text.count("\r\n")
        self._searched = 0  # names searched for so far
        self._words: dict[str, list[int]] | None = None  # word -> the lines spelling it, in order

    def spelling(self, names: Iterable[str]) -> list[int] | None:
        """Sorted line numbers (1-based; lines end at ``\\n``, ``\\r\\n`` or ``\\r``) on which
        one of ``names`` appears as a word; None when there is no text to read."""
        text = self.text
        if text is None:
            return None
        names = set(names)
        self._searched += len(names)
        if self._words is None and self._searched > self.NAMES_BEFORE_INDEXING:
            self._words = self._index_words(text)
        if self._words is not None:
            found: set[int] = set()
            for name in names:
                found.update(self._words.get(name, ()))
            return sorted(found)
        return self._lines_of(text, sorted(_word_starts(text, names)))

    def _lines_of(self, text: str, starts: list[int]) -> list[int]:
        """The distinct line numbers of sorted offsets into the text."""
        lines: list[int] = []
        for line in self._lines_of_each(text, starts):
            if not lines or lines[-1] != line:
                lines.append(line)
        return lines

    def _index_words(self, text: str) -> dict[str, list[int]]:
        """Every word of the text (a run of the characters a name is made of, as
        ``_word_starts`` widens a find) with the lines that spell it, in one pass."""
        matches = list(_WORD.finditer(text))
        words: dict[str, list[int]] = {}
        for match, line in zip(matches, self._lines_of_each(text, [match.start() for match in matches])):
            lines = words.setdefault(match[0], [])
            if not lines or lines[-1] != line:
                lines.append(line)
        return words

    def _lines_of_each(self, text: str, starts: list[int]) -> list[int]:
        """The line number of each of sorted offsets into the text."""
        if self._lone_returns:
            ends = [match.end() for match in _LINE_END.finditer(text)]
            return [bisect.bisect_right(ends, at) + 1 for at in starts]
        numbers, line, position = [], 1, 0
        for at in starts:  # one pass over the text, counting line breaks between offsets
            line += text.count("\n", position, at)
            position = at
            numbers.append(line)
        return numbers
