"""Generated print calls: whatever mix of text, braces, fields, specs and conversions, the
rewrite under jax.jit prints exactly what the original prints eagerly (or is declined)."""

from __future__ import annotations

from fixture_support import exec_module, run_samples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jitfix.config import Settings
from jitfix.engine import Options, process_text

TEXT = st.text(alphabet="ab {}%:=!-", max_size=6)
# Fields on the scalar x may carry format specs; y is a vector, printed plainly.
SCALAR_FIELD = st.tuples(st.sampled_from(["x", "x + 1", "x * y[0]", "jnp.sin(x)"]),
                         st.sampled_from(["", ":.2f", ":>9", "!r", "!s", ":+.1e"]))
VECTOR_FIELD = st.tuples(st.sampled_from(["y", "y[1:]", "x.shape", "y.ndim"]), st.sampled_from(["", "!r"]))


def _fstring(pieces) -> str:
    parts = []
    for piece in pieces:
        if isinstance(piece, str):
            parts.append(piece.replace("{", "{{").replace("}", "}}"))
        else:
            expression, suffix = piece
            parts.append("{" + expression + suffix + "}")
    return 'f"' + "".join(parts) + '"'


ARGUMENT = st.one_of(
    TEXT.map(lambda text: repr(text)),
    st.sampled_from(["x", "y", "x - 2"]),
    st.lists(st.one_of(TEXT, SCALAR_FIELD, VECTOR_FIELD), min_size=1, max_size=4).map(_fstring),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments=st.lists(ARGUMENT, max_size=3), sep=st.sampled_from([None, "", ", ", "{}"]))
def test_generated_prints_match_eager_output(arguments: list[str], sep: str | None) -> None:
    call = ", ".join(arguments + ([f"sep={sep!r}"] if sep is not None else []))
    source = (
        "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x, y):\n"
        f"    print({call})\n    return x\n\n\n"
        'SAMPLES = [("f", (jnp.float32(1.5), jnp.arange(3.0)), {})]\n'
    )
    result = process_text("generated.py", source, Settings(), Options(apply_fixes=True, unsafe_fixes=True))
    reference = run_samples(exec_module(source, "original", eager=True), eager=True)
    if result.new_text == source:
        if not result.findings:  # a print of what tracing knows (`x.shape`): the same under jit
            as_is = run_samples(exec_module(source, "as_is"), eager=False)
            assert as_is[0][1] == reference[0][1], "an unchanged print with no finding must print the same"
        return
    rewritten = run_samples(exec_module(result.new_text, "rewritten"), eager=False)
    assert rewritten[0][1] == reference[0][1], result.new_text
