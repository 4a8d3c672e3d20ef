"""The traced-function finder over every spelling of jit, wrapping calls and lax bodies."""

from __future__ import annotations

import ast
import textwrap

import pytest

from jitfix.analysis.imports import ImportTable
from jitfix.analysis.traced import find_traced_functions


def traced(code: str) -> dict[str, tuple[set[str], set[str]]]:
    """qualname -> (static params, traced params)."""
    tree = ast.parse(textwrap.dedent(code))
    found = find_traced_functions(tree, ImportTable(tree))
    return {entry.qualname: (set(entry.static_params), set(entry.traced_params)) for entry in found.values()}


@pytest.mark.parametrize(
    "code",
    [
        "import jax\n@jax.jit\ndef f(x): pass",
        "import jax as J\n@J.jit\ndef f(x): pass",
        "from jax import jit\n@jit\ndef f(x): pass",
        "from jax import jit as compile_it\n@compile_it\ndef f(x): pass",
        "import equinox as eqx, jax\n@eqx.filter_jit\ndef f(x: jax.Array): pass",
        "import jax\ndef f(x): pass\ng = jax.jit(f)",
        "import jax\ndef f(x): pass\ng = jax.vmap(f)",
        "import jax\ndef f(x): pass\ng = jax.jit(jax.vmap(f))",
    ],
)
def test_jit_spellings(code: str) -> None:
    assert traced(code) == {"f": (set(), {"x"})}


@pytest.mark.parametrize(
    "code",
    [
        "import functools, jax\n@functools.partial(jax.jit, static_argnames='n')\ndef f(x, n): pass",
        "from functools import partial\nfrom jax import jit\n@partial(jit, static_argnums=(1,))\ndef f(x, n): pass",
        "from functools import partial\nimport jax\n@partial(jax.jit, static_argnames=['n'])\ndef f(x, n): pass",
        "import jax\n@jax.jit(static_argnames=('n',))\ndef f(x, n): pass",
        "import jax\ndef f(x, n): pass\ng = jax.jit(f, static_argnums=-1)",
        "import jax\ndef f(x, n): pass\ng = jax.jit(jax.grad(f), static_argnums=1)",
    ],
)
def test_static_arguments(code: str) -> None:
    assert traced(code) == {"f": ({"n"}, {"x"})}


def test_grad_alone_traces_nothing_but_under_jit_or_vmap_it_does() -> None:
    # A Python `if` on a value works under jax.grad alone (the JAX docs' own "# ok!" example).
    code = "import jax\ndef loss(w, x, n): pass\ng = jax.value_and_grad(loss, argnums=(0, 1))"
    assert traced(code) == {"loss": (set(), set())}
    jitted = "import jax\ndef loss(w, x): pass\ng = jax.jit(jax.grad(loss))"
    assert traced(jitted) == {"loss": (set(), {"w", "x"})}
    mapped = "import jax\ndef loss(w, x): pass\ng = jax.vmap(jax.grad(loss))"
    assert traced(mapped) == {"loss": (set(), {"w", "x"})}
    called = """
import jax
def loss(w, x): pass
@jax.jit
def step(w, x):
    return jax.grad(loss)(w, x)
"""
    assert traced(called)["loss"] == (set(), {"w", "x"})


@pytest.mark.parametrize(
    "call, bodies",
    [
        ("lax.scan(step, 0, xs)", {"step"}),
        ("lax.fori_loop(0, n, step, 0)", {"step"}),
        ("lax.while_loop(keep_going, step, 0)", {"keep_going", "step"}),
        ("lax.cond(p, step, keep_going, 0)", {"step", "keep_going"}),
        ("lax.switch(i, [step, keep_going], 0)", {"step", "keep_going"}),
        ("jax.lax.map(step, xs)", {"step"}),
    ],
)
def test_lax_bodies(call: str, bodies: set[str]) -> None:
    code = f"""
    import jax
    from jax import lax
    def step(a, b=None): pass
    def keep_going(a): pass
    def run(n, xs, p, i):
        return {call}
    """
    assert set(traced(code)) == bodies


def test_helpers_called_from_traced_code_are_traced_with_their_traced_arguments() -> None:
    code = """
    import jax
    def helper(v, scale, mode):
        return inner(v)
    def inner(u):
        return u
    def untouched(x):
        return x
    @jax.jit
    def f(x):
        return helper(x * 2, 3, mode="fast")
    """
    found = traced(code)
    assert found["helper"] == (set(), {"v"})
    assert found["inner"] == (set(), {"u"})
    assert "untouched" not in found


def test_methods_and_nested_functions() -> None:
    code = """
    import jax
    class Model:
        @staticmethod
        @jax.jit
        def apply(x):
            return x
        def __call__(self, x):
            return jax.jit(self.forward)(x)
        def forward(self, x):
            return self.act(x)
        def act(self, x):
            return x
    def outer(xs):
        def body(carry, x):
            return carry, x
        return jax.lax.scan(body, 0, xs)
    """
    found = traced(code)
    assert found["Model.apply"] == (set(), {"x"})
    assert set(found) == {"Model.apply", "Model.forward", "Model.act", "outer.body"}
    assert found["Model.act"] == (set(), {"x"})


def test_partial_bound_arguments_are_not_traced() -> None:
    code = "import jax\nfrom functools import partial\ndef f(cfg, x): pass\ng = jax.jit(partial(f, 3))"
    assert traced(code) == {"f": (set(), {"x"})}


def test_code_without_jax_has_no_traced_functions() -> None:
    assert traced("import numpy as np\ndef jit(f): return f\n@jit\ndef f(x): pass") == {}


def _values(code: str, name: str):
    tree = ast.parse(textwrap.dedent(code))
    imports = ImportTable(tree)
    entry = next(e for e in find_traced_functions(tree, imports).values() if e.qualname == name)
    return entry.values(imports)


def test_value_analysis_traced_and_static_names() -> None:
    values = _values(
        """
        from functools import partial
        import jax
        import jax.numpy as jnp
        @partial(jax.jit, static_argnames=("n", "m"))
        def f(x, n, m, k=2):
            rows = x.shape[0]
            y = jnp.sin(x)
            total = 0
            total = total + y
            m = lookup(m)
            for i in range(rows):
                pass
            return y
        """,
        "f",
    )
    def kind(name: str) -> str:
        return values.state[name].kind.label

    assert [kind(name) for name in ("x", "y", "total")] == ["traced"] * 3
    assert [kind(name) for name in ("n", "rows", "i")] == ["static"] * 3
    # A static argument rebound to a call the analysis cannot see into is no longer static;
    # a default that no call passes is not known to be traced (jit keeps it a Python value).
    assert kind("m") == "unknown" and kind("k") == "unknown"


def _flow_at_ifs(code: str, name: str) -> list[tuple[str, bool, bool]]:
    """(test source, traced?, static?) for every if test of the function, in order."""
    tree = ast.parse(textwrap.dedent(code))
    imports = ImportTable(tree)
    entry = next(e for e in find_traced_functions(tree, imports).values() if e.qualname == name)
    flow = entry.flow(imports)
    return [
        (ast.unparse(node.test), flow.at(node).is_traced(node.test), flow.at(node).is_static(node.test))
        for node in ast.walk(entry.node)
        if isinstance(node, ast.If)
    ]


def test_flow_sensitive_kinds_follow_each_binding() -> None:
    found = _flow_at_ifs(
        """
        import jax
        DEBUG = False
        @jax.jit
        def f(x, y=None):
            n = x.shape[0]
            if n > 2:
                n = x.sum()
            if n > 3:
                pass
            if x.ndim == 2:
                x = x.sum(axis=1)
            if x > 0:
                pass
            if y is None:
                pass
            if DEBUG:
                pass
            return x
        """,
        "f",
    )
    assert found == [
        ("n > 2", False, True),  # n = x.shape[0] is static here ...
        ("n > 3", True, False),  # ... and possibly a tracer after the branch that rebinds it
        ("x.ndim == 2", False, True),
        ("x > 0", True, False),
        ("y is None", False, True),
        ("DEBUG", False, True),  # a module constant
    ]


def test_nested_functions_see_enclosing_tracers() -> None:
    found = _flow_at_ifs(
        """
        import jax
        from jax import lax
        @jax.jit
        def f(x, limit):
            scale = x.max()
            def body(i, total):
                if scale > limit:
                    return total + i
                return total
            return lax.fori_loop(0, 3, body, 0)
        """,
        "f.body",
    )
    assert found == [("scale > limit", True, False)]


def test_vmap_in_axes_none_passes_python_values() -> None:
    code = """
import jax
def pool(x, size, op): pass
def scale(x, k): pass
def unknown(x, k): pass
a = jax.vmap(pool, (0, None, None), 0)
b = jax.vmap(scale, in_axes=(0, None))
axes = (0, None)
c = jax.vmap(unknown, in_axes=axes)
"""
    assert traced(code) == {"pool": (set(), {"x"}), "scale": (set(), {"x"}), "unknown": (set(), set())}


def test_pmap_static_broadcasted_argnums_and_unreadable_static_arguments() -> None:
    code = """
import jax
from functools import partial
@partial(jax.pmap, static_broadcasted_argnums=(1,))
def f(x, mode): pass
def g(x, n): pass
STATIC = (1,)
h = jax.jit(g, static_argnums=STATIC)
"""
    assert traced(code) == {"f": ({"mode"}, {"x"}), "g": (set(), set())}


def test_partial_keywords_and_rebinding_through_partial() -> None:
    code = """
import jax, functools
def foo(x, y, flag):
    pass
foo = functools.partial(foo, flag=True)
foo = jax.jit(foo)
"""
    assert traced(code) == {"foo": (set(), {"x", "y"})}


def test_lax_bodies_trace_only_what_the_primitive_passes() -> None:
    code = """
import jax
from jax import lax
def body(c, x, init_mode=False): pass
def loop(i, carry, causal=False): pass
def branch(a, b, extra=None): pass
def run(xs):
    lax.scan(body, 0, xs)
    lax.fori_loop(0, 3, loop, 0)
    lax.cond(True, branch, branch, 1, 2)
"""
    assert traced(code) == {
        "body": (set(), {"c", "x"}),
        "loop": (set(), {"i", "carry"}),
        "branch": (set(), {"a", "b"}),
    }


def test_enumerate_index_is_static_and_zip_binds_each_element() -> None:
    found = _flow_at_ifs(
        """
        import jax
        @jax.jit
        def f(xs: jax.Array, grid):
            for position, (i, g) in enumerate(zip(xs, grid)):
                if position == 0:
                    pass
                if i > 0:
                    pass
            return xs
        """,
        "f",
    )
    assert found == [("position == 0", False, True), ("i > 0", True, False)]


def test_filter_jit_traces_only_parameters_annotated_as_arrays() -> None:
    code = """
import equinox as eqx
import jax
from jaxtyping import Array, Float
@eqx.filter_jit
def f(x: Float[Array, "n"], y: jax.Array, flag: bool, cfg): pass
"""
    assert traced(code) == {"f": (set(), {"x", "y"})}


@pytest.mark.parametrize("test, decided", [
    ("not flag", False), ("flag and x > 0", None), ("not flag and x > 0", False), ("flag or x > 0", True),
    ("mode == 'sum'", True), ("mode != 'sum' or axis is None", True), ("axis is not None", False),
    ("scale > 1.5", True), ("x", None), ("mode < 1", None), ("scale == -2.0", False), ("mode is 'sum'", None),
])
def test_a_test_of_parameters_left_at_their_defaults_is_decided_only_when_they_decide_it(test, decided):
    from jitfix.analysis.traced_function import decided_test

    known = {"flag": True, "mode": "sum", "axis": None, "scale": 2.0}
    assert decided_test(ast.parse(test, mode="eval").body, known) is decided


def test_a_jitted_class_traces_its_init_with_the_arguments_after_self() -> None:
    code = """
    import jax

    class Spline:
        def __init__(self, x, y, check=True):
            self.x = x

    make_spline = jax.jit(Spline, static_argnames="check")
    """
    assert traced(code)["Spline.__init__"] == ({"check"}, {"x", "y"})


def test_a_class_made_in_traced_code_with_tracers_checks_itself_with_a_traced_self() -> None:
    code = """
    import jax
    import equinox as eqx

    class Potential(eqx.Module):
        a1: jax.Array
        a2: jax.Array

        def __check_init__(self):
            if self.a2 > self.a1:
                raise ValueError("a1 must be greater than a2")

    class Fixed(eqx.Module):
        n: int

        def __check_init__(self):
            if self.n < 0:
                raise ValueError("n must not be negative")

    @jax.jit
    def potential_at(params, xyz):
        fixed = Fixed(3)
        return Potential(**params).a1 * xyz
    """
    found = traced(code)
    assert found["Potential.__check_init__"] == (set(), {"self"})
    assert "Fixed.__check_init__" not in found  # made of Python values only: checked as it is


def test_a_function_passed_as_an_argument_is_traced_where_the_parameter_is_called() -> None:
    # `make_train_step(schedule)` with the def a factory made: the jitted step calls it.
    found = traced("""
        import jax

        def make_schedule(top):
            def schedule(step):
                return step * top
            return schedule

        def make_train_step(learning_rate_fn):
            @jax.jit
            def train_step(params, step):
                return params * learning_rate_fn(step)
            return train_step

        def apply(fn, x):
            return fn(x)

        def helper(y):
            return y + 1

        @jax.jit
        def g(x):
            return apply(helper, x)

        def main():
            schedule = make_schedule(3)
            return make_train_step(schedule), g
        """)
    assert found["make_schedule.schedule"] == (set(), {"step"})
    assert found["helper"] == (set(), {"y"})


def test_a_parameter_given_different_functions_or_rebound_stays_unknown() -> None:
    found = traced("""
        import jax

        def first(y):
            return y

        def second(y):
            return -y

        def apply(fn, x):
            return fn(x)

        def rebinding(fn, x):
            fn = second
            return fn(x)

        @jax.jit
        def g(x):
            return apply(first, x) + apply(second, x) + rebinding(first, x)
        """)
    assert "first" not in found and "second" not in found


_TRAINING_LOOP = """
    import dataclasses
    import jax
    import jax.numpy as jnp

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class TrainState:
        step: jnp.ndarray
        params: dict
        warmup: int = dataclasses.field(metadata=dict(static=True), default=10)

    class Plain:
        step = 0
        warmup = 10

    def make_step():
        @jax.jit
        def train_step(state, batch):
            if state.step > 0:
                pass
            if state.warmup > 0:
                pass
            return TrainState(state.step + 1, state.params), batch
        return train_step

    def main(batch):
        step = make_step()
        state = TrainState(jnp.array(0), {})
        for _ in range(3):
            state, metrics = step(state, batch)
        return state
    """


def test_a_pytree_every_call_passes_gives_a_jitted_functions_parameter_its_fields() -> None:
    # The training loop: the state is made once and then fed back from the step's result.
    assert _flow_at_ifs(_TRAINING_LOOP, "make_step.train_step") == [
        ("state.step > 0", True, False), ("state.warmup > 0", False, True)]


@pytest.mark.parametrize("other", [
    "step(Plain(), batch)",  # another call gives an object that is no pytree
    "state = Plain()",  # the name is bound to one too
    "for state in [Plain()]: pass",  # or bound by a loop
])
def test_a_parameter_some_call_gives_something_else_stays_unknown(other: str) -> None:
    code = _TRAINING_LOOP.replace("        return state\n", f"        {other}\n        return state\n")
    assert _flow_at_ifs(code, "make_step.train_step") == [
        ("state.step > 0", False, False), ("state.warmup > 0", False, False)]


def test_a_carry_unpacked_into_a_call_fills_the_parameters_its_elements_reach() -> None:
    # `lambda inputs: self.update(*inputs)`: the carry's two elements are the update's two
    # parameters; the flag after them is the caller's.
    found = traced("""
        import jax

        def update(params, state, flag=False):
            return params, state

        @jax.jit
        def run(params, state):
            return jax.lax.while_loop(lambda c: c[1] < 3, lambda inputs: update(*inputs), (params, state))
        """)
    assert found["update"] == (set(), {"params", "state"})


def test_a_helper_every_traced_call_gives_a_pytree_knows_its_fields() -> None:
    code = """
        from typing import NamedTuple
        import jax
        import jax.numpy as jnp

        class State(NamedTuple):
            error: jnp.ndarray
            iteration: jnp.ndarray

        def converged(state, tol):
            if state.error < tol:
                pass

        def stalled(state):
            if state.error < 0:
                pass

        @jax.jit
        def step(x):
            state = State(jnp.abs(x).sum(), jnp.asarray(0))
            converged(state, 1e-3)
            stalled(state)
            stalled(x)  # (another call gives no State: nothing is known of `state`)
            return x
        """
    assert _flow_at_ifs(code, "converged") == [("state.error < tol", True, False)]
    assert _flow_at_ifs(code, "stalled") == [("state.error < 0", False, False)]


def test_a_spread_list_grown_in_place_or_rebound_fills_no_known_places() -> None:
    # `args` was `[x]` when made, but holds `[x, 3]` when spread: what fills `n` is not known.
    found = traced("""
        import jax

        def helper(a, n, c):
            return a

        @jax.jit
        def f(x):
            args = [x]
            args.append(3)
            return helper(*args, x)

        @jax.jit
        def g(x):
            args = (x,)
            args = args + (3,)
            return helper(*args, x)
        """)
    assert "n" not in found["helper"][1]


def test_a_function_handed_on_through_partial_again_and_again_ends() -> None:
    found = traced("""
        from functools import partial
        import jax

        def a(f, n):
            if n == 0:
                return jax.jit(f)
            return a(partial(f, 1), n - 1)
        """)
    assert found == {}


def test_pytree_classes_reach_helpers_of_helpers_but_not_a_rebound_parameter() -> None:
    code = """
        from typing import NamedTuple
        import jax
        import jax.numpy as jnp

        class State(NamedTuple):
            x: jnp.ndarray

        def inner(s):
            if s.x > 1:
                pass

        def outer(s):
            inner(s)

        @jax.jit
        def step(state: State):
            outer(state)

        @jax.jit
        def defaulted(y, p=None):
            if p is None:
                p = State(y)
            return uses(p)

        def uses(p):
            if p.x > 0:
                pass

        def main(y):
            return defaulted(y, 3)
        """
    assert _flow_at_ifs(code, "inner") == [("s.x > 1", True, False)]
    assert _flow_at_ifs(code, "uses") == [("p.x > 0", False, False)]
