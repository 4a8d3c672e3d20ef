"""The real-failure corpus (``benchmarks/reports/``): every case well formed, the clean twins
left alone, and a sample of cases judged as the benchmark judges them (``fix`` mode).

The whole corpus is a benchmark (``python benchmarks/reports.py``), not a test: judging one
case runs its code four or five times in fresh processes. The sample takes cases of every
category; each must stay valid, must never end in a wrong rewrite or a crash, and a case the
baseline records as fixed must stay fixed.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import reports  # noqa: E402

pytestmark = pytest.mark.slow  # the real-failure corpus, each case fixed and run

reports.USE_CACHE = False  # a test judges the code as it is now

CASES = reports.discover()
TWINS = reports.discover(clean=True)
BASELINE = reports.read_baseline()
# One case of each category, two of the largest: fixed ones (which must stay fixed) and
# declined ones (which must not turn into wrong rewrites).
SAMPLE = [
    "builtins/jax_2783_float_in_sign_test.py",
    "cross-module/putting_nerf_11_single_step_static_args",
    "logging/flax_1733_print_loss_in_jitted_main.py",
    "loop/jax_1406_range_of_traced_num.py",
    "loop/jax_3204_nested_while_counters.py",
    "mask-shape/jax_4471_mask_from_static_args.py",
    "mask-shape/jax_5280_nonzero_product.py",
    "no_static_form/blog_openillumi_dict_keyed_by_points.py",
    "numpy/jax_553_np_arange_indexed_by_tracer.py",
    "recompile/jax_9288_lambda_jit_in_while_loop.py",
    "rng-state/jax_4312_global_key_split_init.py",
    "self-state/jax_1567_world_step_self_update.py",
    "stale-global/jax_1348_global_counter_in_jit.py",
    "static-argument/jax_204_pad_to_length.py",
    "static-argument/jax_3045_string_mode.py",
    "trace-time-constant/jax_4798_minimum_of_static_sizes.py",
    "trace-time-constant/jax_5208_linspace_num_from_dt.py",
    "traced-if/jax_7969_chained_comparison_piecewise.py",
    "traced-if/pfjax_3_mwg_adapt.py",
    "validation/s2fft_363_trapani_el_check.py",
]


def test_every_case_names_its_report_and_its_fix():
    problems = []
    for case in CASES:
        if not case.source.startswith("https://"):
            problems.append(f"{case.key}: no `Source: https://...`")
        if not case.fails or not (case.fix or case.no_static_form):
            problems.append(f"{case.key}: no `Fails:`/`Fix:` line")
        if not case.no_static_form and not case.fixed_path.exists():
            problems.append(f"{case.key}: no hand fix {case.fixed_path.name}")
        if not case.name.isidentifier():
            problems.append(f"{case.key}: not importable")
    assert not problems, "\n".join(problems)


def test_each_case_has_a_report_of_its_own():
    sources = Counter(case.source for case in CASES)
    assert not [source for source, count in sources.items() if count > 1]
    names = Counter(case.name for case in CASES + TWINS)
    assert not [name for name, count in names.items() if count > 1]


def test_every_category_has_cases_and_a_clean_twin():
    counts = Counter(case.category for case in CASES if not case.no_static_form)
    assert len(counts) >= 12 and min(counts.values()) >= 6, counts
    twinned = {twin.category for twin in TWINS}
    assert set(counts) <= twinned, set(counts) - twinned


def test_the_sample_covers_every_category():
    sampled = {reports.load_case(reports.CORPUS / key).category for key in SAMPLE}
    assert sampled == {case.category for case in CASES}


@pytest.mark.parametrize("twin", TWINS, ids=lambda twin: twin.key)
def test_clean_twin_stays_untouched(twin):
    outcome = reports.judge_clean(twin, "test")
    assert outcome.outcome == "fixed", outcome.detail


@pytest.mark.parametrize("key", SAMPLE)
def test_sample_case(key):
    case = reports.load_case(reports.CORPUS / key)
    outcome = reports.judge(case, "fix")
    assert outcome.outcome != "invalid", outcome.detail
    assert outcome.outcome not in ("wrong rewrite", "crash"), outcome.detail
    if BASELINE.get(key, {}).get("fix") == "fixed":
        assert outcome.outcome == "fixed", outcome.detail


def test_hand_fixes_have_no_finding():
    """What a careful user writes to fix each report is what jitfix must leave alone: `check`
    on every hand fix of the corpus finds nothing."""
    from jitfix.config import Settings
    from jitfix.engine import Options, process_text

    found = []
    for case in CASES:
        files = [case.fixed_path] if case.fixed_path.is_file() else sorted(case.fixed_path.rglob("*.py"))
        for path in files:
            findings = process_text(str(path), path.read_text(encoding="utf-8"), Settings(), Options()).findings
            found += [f"{path.relative_to(reports.CORPUS)}:{f.line} {f.code} {f.message}" for f in findings]
    assert not found, "\n".join(found)
