"""What a block reads before binding it: the base of every operand and carry the rewrites pass."""

from __future__ import annotations

import ast

from jitfix.analysis.blocks import changed_objects, closures, method_changes, nodes_seeing, scope_reads, upward_exposed


def _exposed(source: str) -> set[str]:
    return upward_exposed(ast.parse(source).body) - {"range", "sum"}


def test_a_nested_function_reads_only_its_free_names() -> None:
    source = "def body(i, acc):\n    j = i * 2\n    return acc + j + scale\nfor i in range(n):\n    total = body(i, 0)\n"
    assert _exposed(source) == {"scale", "n"}


def test_a_comprehension_and_a_lambda_keep_their_own_names() -> None:
    assert _exposed("w = [k * a for k in xs if k > b]\nf = lambda t: t + c\n") == {"a", "b", "c", "xs"}


def test_what_a_def_evaluates_when_defined_is_read_there() -> None:
    assert _exposed("@deco\ndef g(x: T = default) -> R:\n    return x\n") == {"deco", "T", "default", "R"}


def test_nonlocal_names_are_the_enclosing_scopes() -> None:
    assert _exposed("def g():\n    nonlocal count\n    count = count + 1\n") == {"count"}


def test_a_walrus_in_a_comprehension_binds_around_it() -> None:
    # `m` is the enclosing scope's: read after the comprehension, it is read there (and has
    # no value when `xs` is empty); inside it, it is not the comprehension's own.
    assert scope_reads([ast.parse("[(m := v) + m for v in xs]").body[0]]) == {"m", "xs"}
    assert _exposed("ys = [(m := v) for v in xs]\nz = m\n") == {"xs", "m"}


def test_a_name_read_before_it_is_bound_stays_exposed() -> None:
    assert _exposed("y = x + 1\nx = 2\n") == {"x"}


def test_a_name_bound_on_some_paths_and_bound_again_before_it_is_read_is_not_exposed() -> None:
    # The path that skips the first binding never reads the old value: the later read sees
    # the second binding on every path.
    assert _exposed("if c:\n    t = 1\n    y = t\nt = 2\nz = t\n") == {"c"}


def test_a_name_bound_on_some_paths_and_read_before_it_is_bound_again_is_exposed() -> None:
    assert _exposed("if c:\n    t = 1\nz = t\nt = 2\n") == {"c", "t"}
    assert _exposed("if c:\n    t = 1\nif d:\n    t = 2\nz = t\n") == {"c", "d", "t"}
    assert upward_exposed(ast.parse("if c:\n    t = 1\nt2 = 0\n").body, {"t"}) == {"c", "t"}


def _closure_reads(source: str) -> dict[str, set[str]]:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return {name: set(reads) for name, (_, reads) in closures(function).items()}


def test_a_helper_reads_of_its_definer_only_the_names_free_in_it() -> None:
    # `buf` is bound by the definer and by a function nested in the helper: that function's
    # `buf` is its own, so the helper does not read the definer's (a copy of the helper made
    # for it would only duplicate code).
    source = ("def f(x, n):\n    buf = x\n    scale = 2.0\n"
              "    def helper(a):\n        def inner(b):\n            buf = b * 2\n            return buf + scale\n"
              "        return inner(a) + n\n"
              "    return helper(buf)\n")
    assert _closure_reads(source) == {"helper": {"scale", "n"}}


def test_a_helper_that_declares_a_name_nonlocal_reads_the_definers() -> None:
    source = "def f(x):\n    count = 0\n    def bump():\n        nonlocal count\n        count += 1\n    bump()\n    return count\n"
    assert _closure_reads(source) == {"bump": {"count"}}


def test_nodes_seeing_a_name_enter_the_nested_functions_it_is_free_in() -> None:
    body = ast.parse("a = self.x\nf = lambda v: v * self.y\ng = lambda self: self.z\n"
                     "def h(w):\n    return w + self.t\n").body
    read = {node.attr for node in nodes_seeing(body, "self") if isinstance(node, ast.Attribute)}
    assert read == {"x", "y", "t"}  # `g` has a `self` of its own


def _changed(code: str) -> list[str]:
    """The names the code changes through a method, as a walk of it finds them."""
    return [name for node in ast.walk(ast.parse(code)) for name in changed_objects(node)]


def test_a_method_call_for_its_effect_changes_its_object() -> None:
    assert _changed("xs.append(v)") == ["xs"]
    assert _changed("ok and seen.add(k)") == ["seen"]
    assert _changed("f = lambda v: log.append(v)") == ["log"]
    assert _changed("[out.extend(row) for row in rows]") == ["out"]
    assert _changed("a.append(1) if c else b.append(2)") == ["a", "b"]


def test_a_method_whose_value_is_kept_is_another_objects() -> None:
    # optax's `optimizer.update` returns new values; `dict.update` returns None.
    assert _changed("updates, state = optimizer.update(grads, state)") == []
    assert _changed("path = self.path.update(path, x)") == []
    assert _changed("return opt.update(g, s)") == []


def test_a_method_that_also_returns_a_value_changes_its_object_wherever_it_stands() -> None:
    assert _changed("x = queue.pop()") == ["queue"]
    assert _changed("queue.pop()") == ["queue"]
    assert _changed("f(cache.setdefault(k, 0))") == ["cache"]
    assert len([call for node in ast.walk(ast.parse("d.pop(k)")) for call in method_changes(node)]) == 1
