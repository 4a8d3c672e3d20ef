"""The text prefilter: where a module's text spells a name as a whole word."""

from __future__ import annotations

from jitfix.analysis.words import LineIndex, spells_a_word


def test_a_name_is_found_as_a_whole_word_only() -> None:
    text = "tree_map(f, x)\ny = jax.vmap(g)\nmapping = 1\nz = map(h, w)\n"
    assert LineIndex(text).spelling(["map"]) == [4]
    assert LineIndex(text).spelling(["vmap"]) == [2]
    assert LineIndex(text).spelling(["map", "vmap", "tree_map"]) == [1, 2, 4]


def test_a_name_holding_another_is_found_through_it() -> None:
    # `pjit` and `filter_jit` hold `jit`: the text is scanned for `jit`, each find widened to its word.
    text = "a = pjit(f)\nb = eqx.filter_jit(g)\nc = jitted(h)\nd = jax.jit(k)\n"
    names = ["jit", "pjit", "filter_jit"]
    assert LineIndex(text).spelling(names) == [1, 2, 4]
    assert LineIndex(text).spelling(["pjit", "filter_jit"]) == [1, 2]
    assert not spells_a_word("c = jitted(h)\n", names)


def test_words_at_the_edges_of_the_text_and_after_normalisation() -> None:
    assert spells_a_word("jit", ["jit"])
    assert spells_a_word("x = 1\njit", ["jit"])
    assert not spells_a_word("jit_", ["jit"])
    assert spells_a_word("f = ｊｉｔ(g)", ["jit"])  # Python reads ｊｉｔ as jit


def test_lines_are_counted_with_every_line_ending() -> None:
    assert LineIndex("a\r\nb\rjit\n").spelling(["jit"]) == [3]
    assert LineIndex("a\r\njit\n").spelling(["jit"]) == [2]


def test_a_text_searched_many_times_answers_from_its_word_index_as_a_scan_does() -> None:
    # Once many names have been searched for, the text's words are indexed: a
    # module asked where each of its thousand functions is called is not read a thousand times.
    searches = [["map"], ["vmap"], ["jit", "pjit"], ["filter_jit"], ["f"], ["absent"], ["x", "y"], ["g", "h"]]
    for ending in ("\n", "\r\n", "\r"):
        text = ending.join(["tree_map(f, x)", "y = jax.vmap(g)", "a = pjit(f); mapping = 1", "",
                            "b = eqx.filter_jit(g)", "c = jitted(h)", "d = jax.jit(k)  # map"]) + ending
        expected = [LineIndex(text).spelling(names) for names in searches]  # each a scan of a fresh index
        index = LineIndex(text)
        for _ in range(LineIndex.NAMES_BEFORE_INDEXING + 1):
            index.spelling(["warm"])
        assert [index.spelling(names) for names in searches] == expected, repr(ending)
        many = [f"name{number}" for number in range(LineIndex.NAMES_BEFORE_INDEXING)] + ["jit"]
        assert LineIndex(text).spelling(many) == [7]
