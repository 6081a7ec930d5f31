"""The verdict (docs/spec/rules.md) on run facts: tiers, gates, cap, Soft Limit, re-run audit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from certgen.model import GradeCap
from certgen.model.cohort import Cohort
from certgen.rules.verdict import (
    RunFacts,
    decide,
    grade_tiers,
    mean_score,
)
from certgen.sop import load_rules

RULES = load_rules("SOP-GPU-001 v1.1")
SHA_A = "a" * 64
SHA_B = "b" * 64


def run(index: int, resolution: str, score: float | None, stutter: float = 0.05, **kw: object) -> RunFacts:
    return RunFacts(
        index=index, title=f"Title {index}", resolution=resolution, recorded=True,
        fluidity_score=score, stutter=stutter, **kw,  # type: ignore[arg-type]
    )


def not_run(index: int, resolution: str) -> RunFacts:
    return RunFacts(index=index, title=f"Title {index}", resolution=resolution, recorded=False)


def grade_of(runs: list[RunFacts], cap: GradeCap | None = None) -> str:
    return decide(runs, cap, RULES).grade.value


def test_platinum_needs_one_tier_at_95_and_every_tier_at_88() -> None:
    runs = [run(0, "1920x1080", 96.0), run(1, "2560x1440", 89.0)]
    verdict = decide(runs, None, RULES)
    assert verdict.grade.value == "PLATINUM"
    assert [g.passed for g in verdict.grade.reasons] == [True, True, True, True]


def test_gold_when_every_tier_meets_88_but_none_95() -> None:
    assert grade_of([run(0, "1920x1080", 94.99), run(1, "2560x1440", 88.5)]) == "GOLD"


def test_silver_when_one_tier_is_below_88_even_with_a_platinum_tier() -> None:
    verdict = decide([run(0, "1920x1080", 99.0), run(1, "3840x2160", 87.99)], None, RULES)
    assert verdict.grade.value == "SILVER"
    platinum, gold, measured, cap = verdict.grade.reasons
    assert platinum.passed and not gold.passed and measured.passed and cap.passed
    assert gold.model_dump(mode="json") == {
        "gate": "gold_every_tier", "passed": False, "allows": "SILVER", "line": 88.0,
        "compared": [
            {"resolution": "1920x1080", "mean_fluidity": 99.0},
            {"resolution": "3840x2160", "mean_fluidity": 87.99},
        ],
        "limiting": [{"resolution": "3840x2160", "mean_fluidity": 87.99, "distance": 0.01,
                      "runs": [{"run": 1, "title": "Title 1", "fluidity_score": 87.99}]}],
    }
    assert platinum.model_dump(mode="json")["limiting"] == []  # a passed gate names nothing


def test_the_limiting_runs_are_named_lowest_first_and_tiers_closest_first() -> None:
    """GOLD held from PLATINUM by one run: the platinum gate names both tiers (closest first)
    and, in each, the runs under 95 lowest first; runs at or over the line are not named."""
    verdict = decide([run(0, "2560x1440", 98.9), run(1, "2560x1440", 69.07),
                      run(2, "2560x1440", 98.95), run(3, "1920x1080", 90.0),
                      run(4, "1920x1080", 96.0)], None, RULES)
    assert verdict.grade.value == "GOLD"
    platinum = verdict.grade.reasons[0].model_dump(mode="json")
    assert [(t["resolution"], t["mean_fluidity"], t["distance"]) for t in platinum["limiting"]] == [
        ("1920x1080", 93.0, 2.0), ("2560x1440", 88.97, 6.03)]
    assert [r["run"] for r in platinum["limiting"][1]["runs"]] == [1]
    assert [r["run"] for r in platinum["limiting"][0]["runs"]] == [3]


@pytest.mark.parametrize(
    ("score", "grade"),
    [(88.0, "GOLD"), (87.99, "SILVER"), (95.0, "PLATINUM"), (94.99, "GOLD")],
)
def test_boundaries_are_inclusive(score: float, grade: str) -> None:
    assert grade_of([run(0, "2560x1440", score)]) == grade


def test_boundary_reached_by_a_tier_mean_not_a_single_run() -> None:
    """87.99 and 88.01 average to 88.00 exactly (decimal arithmetic, no float drift)."""
    runs = [run(0, "2560x1440", 87.99), run(1, "2560x1440", 88.01)]
    assert grade_tiers(runs, RULES)[0].mean_fluidity == 88.0
    assert grade_of(runs) == "GOLD"


def test_no_measured_tier_caps_at_silver() -> None:
    runs = [not_run(0, "2560x1440"), run(1, "1920x1080", None, stutter=None)]  # type: ignore[arg-type]
    verdict = decide(runs, None, RULES)
    assert verdict.grade.value == "SILVER"
    measured = verdict.grade.reasons[2]
    assert measured.model_dump(mode="json") == {
        "gate": "measured_tier", "passed": False, "allows": "SILVER", "measured_tiers": 0,
    }
    assert all(not t.measured for t in verdict.tiers)


def test_grade_cap_from_another_phase_lowers_the_grade_and_keeps_the_fluidity_grade() -> None:
    cap = GradeCap(grade="GOLD", reason="Phase 3 thermal soak: hotspot above the SOP line")
    verdict = decide([run(0, "2560x1440", 97.0)], cap, RULES)
    assert verdict.grade.fluidity_grade == "PLATINUM"
    assert verdict.grade.value == "GOLD"
    assert verdict.grade.reasons[3].model_dump(mode="json") == {
        "gate": "grade_cap", "passed": False, "allows": "GOLD",
        "cap": {"grade": "GOLD", "reason": "Phase 3 thermal soak: hotspot above the SOP line"},
    }


def test_a_cap_above_the_fluidity_grade_changes_nothing() -> None:
    verdict = decide([run(0, "2560x1440", 90.0)], GradeCap(grade="PLATINUM", reason="no finding"), RULES)
    assert verdict.grade.value == "GOLD"
    assert verdict.grade.reasons[3].passed


def test_not_run_runs_are_disclosed_in_the_tier_but_never_in_its_mean() -> None:
    runs = [run(0, "2560x1440", 90.0), not_run(1, "2560x1440"), run(2, "2560x1440", 92.0)]
    (tier,) = grade_tiers(runs, RULES)
    assert tier.model_dump(mode="json") == {
        "resolution": "2560x1440", "runs": 3, "scored_runs": 2, "not_run": 1,
        "mean_fluidity": 91.0, "measured": True, "meets_gold": True, "meets_platinum": False,
    }


def test_tiers_sorted_by_pixel_count() -> None:
    runs = [run(0, "3840x2160", 90.0), run(1, "1920x1080", 90.0), run(2, "2560x1080", 90.0)]
    assert [t.resolution for t in grade_tiers(runs, RULES)] == ["1920x1080", "2560x1080", "3840x2160"]


def test_tier_mean_rounds_half_away_from_zero() -> None:
    assert mean_score([91.545, 91.55]) == 91.55  # 91.5475 -> 91.55
    assert mean_score([0.005, 0.0]) == 0.0  # 0.0025 -> 0.0
    assert mean_score([0.01, 0.0]) == 0.01  # 0.005 -> 0.01 (half away, not to even)


@given(st.lists(st.integers(min_value=0, max_value=10000), min_size=1, max_size=12))
def test_tier_mean_is_independent_of_run_order(cents: list[int]) -> None:
    scores = [c / 100 for c in cents]
    assert mean_score(scores) == mean_score(list(reversed(scores)))


# --- Soft Limit ---------------------------------------------------------------------------


def test_soft_limit_raised_above_060_refuses_without_justification() -> None:
    runs = [run(0, "2560x1440", 69.07, stutter=0.611, first_capture_file="archive/a.csv",
                first_capture_declared=SHA_A, first_capture_actual=SHA_A)]
    verdict = decide(runs, None, RULES)
    assert verdict.refusals == (
        ('card.yaml: runs[0].soft_limit: run "Title 0 2560x1440" has stutter 0.6110 > 0.60; '
        "a justification and a Phase 1 VRM re-examination are required before this "
        "certificate can be issued"),
    )


def test_soft_limit_names_only_what_is_missing() -> None:
    runs = [run(3, "2560x1440", 69.07, stutter=0.611, justification="Streaming hitches.",
                first_capture_file="archive/a.csv", first_capture_declared=SHA_A,
                first_capture_actual=SHA_A)]
    (reason,) = decide(runs, None, RULES).refusals
    assert reason.endswith("has stutter 0.6110 > 0.60; a Phase 1 VRM re-examination is required "
                           "before this certificate can be issued")


def test_stutter_exactly_060_raises_nothing() -> None:
    verdict = decide([run(0, "2560x1440", 75.0, stutter=0.6)], None, RULES)
    assert verdict.refusals == ()
    check = verdict.soft_limits[0]
    assert check is not None and not check.raised and check.satisfied
    first = verdict.first_captures[0]
    assert first is not None and not first.required


# --- Re-run audit ------------------------------------------------------------------------


def test_incomplete_capture_without_first_capture_is_a_skipped_rerun() -> None:
    runs = [run(1, "1920x1080", 97.0, incomplete=True, incomplete_reason="no end line")]
    assert decide(runs, None, RULES).refusals == (
        ('card.yaml: runs[1].first_capture: run "Title 1 1920x1080" needed a re-run (incomplete: '
        "no end line) but has no archived first capture; the re-run step was skipped (archive "
        "the first capture and cite its SHA-256)"),
    )


def test_hash_mismatch_names_the_file_and_both_hashes() -> None:
    runs = [run(0, "1920x1080", 97.0, first_capture_file="archive/first.csv",
                first_capture_declared=SHA_A, first_capture_actual=SHA_B)]
    assert decide(runs, None, RULES).refusals == (
        (f"card.yaml: runs[0].first_capture: archive/first.csv: SHA-256 mismatch: declared "
        f"{SHA_A}, file has {SHA_B}; the archived first capture is not the one cited in the "
        "audit trail"),
    )


# --- structured refusals (what a certificate words in its own language) ---------------------


def test_each_refusal_carries_its_code_and_parameters_beside_the_message() -> None:
    runs = [
        run(0, "2560x1440", 69.07, stutter=0.611),
        run(1, "1920x1080", 97.0, incomplete=True, incomplete_reason="no end line"),
        run(2, "1920x1080", 97.0, first_capture_file="archive/first.csv",
            first_capture_declared=SHA_A, first_capture_actual=SHA_B),
        run(3, "2560x1440", 69.07, stutter=0.611, vrm_reexamination="pass",
            first_capture_file="archive/a.csv", first_capture_declared=SHA_A,
            first_capture_actual=SHA_A),
    ]
    verdict = decide(runs, None, RULES)
    assert [r.detail.model_dump(mode="json") for r in verdict.refusal_details] == [
        {"code": "rerun_first_capture_missing", "run": 0,
         "why": {"code": "stutter_over_rerun_line", "stutter": 0.611, "line": 0.6}},
        {"code": "soft_limit_missing", "run": 0,
         "missing": ["justification", "vrm_reexamination"], "stutter": 0.611, "limit": 0.6},
        {"code": "rerun_first_capture_missing", "run": 1,
         "why": {"code": "incomplete", "reason": "no end line"}},
        {"code": "first_capture_sha256_mismatch", "run": 2, "file": "archive/first.csv",
         "sha256_declared": SHA_A, "sha256_actual": SHA_B},
        {"code": "soft_limit_missing", "run": 3, "missing": ["justification"],
         "stutter": 0.611, "limit": 0.6},
    ]
    # the messages are the same refusals, one for one, in the same order
    assert verdict.refusals == tuple(r.message for r in verdict.refusal_details)
    assert [m.split(":")[1].strip() for m in verdict.refusals] == [
        "runs[0].first_capture", "runs[0].soft_limit", "runs[1].first_capture",
        "runs[2].first_capture", "runs[3].soft_limit",
    ]
    assert verdict.refusals[4].endswith("a justification is required before this certificate "
                                        "can be issued")


def test_the_rerun_why_is_also_data() -> None:
    runs = [run(0, "2560x1440", 69.07, stutter=0.611, justification="j", vrm_reexamination="v",
                first_capture_file="archive/a.csv", first_capture_declared=SHA_A,
                first_capture_actual=SHA_A),
            run(1, "2560x1440", 97.0, incomplete=True, first_capture_file="archive/b.csv",
                first_capture_declared=SHA_A, first_capture_actual=SHA_A),
            run(2, "2560x1440", 97.0, first_capture_file="archive/c.csv",
                first_capture_declared=SHA_A, first_capture_actual=SHA_A)]
    firsts = decide(runs, None, RULES).first_captures
    assert [(f.why, None if f.why_detail is None else f.why_detail.model_dump()) for f in firsts if f is not None] == [
        ("stutter 0.6110 > 0.60", {"code": "stutter_over_rerun_line", "stutter": 0.611, "line": 0.6}),
        ("incomplete", {"code": "incomplete", "reason": None}),
        (None, None),
    ]


def test_not_run_runs_escape_soft_limit_and_audit() -> None:
    verdict = decide([not_run(0, "2560x1440")], None, RULES)
    assert verdict.refusals == () and verdict.soft_limits == (None,)


def test_cohort_label() -> None:
    assert Cohort("Cyberpunk 2077", "2560x1440", "Ultra", False, "DLSS", "Quality", True).line() == (
        "Cyberpunk 2077|2560x1440|Ultra|rt:off|DLSS|Quality|fg:on"
    )
    assert Cohort("Cyberpunk 2077", "2560x1440", "Ultra", False, "DLSS", "Quality", True,
                  "4x").line() == "Cyberpunk 2077|2560x1440|Ultra|rt:off|DLSS|Quality|fg:4x"


GRADE_ORDER = ["SILVER", "GOLD", "PLATINUM"]


@given(
    st.lists(st.tuples(st.sampled_from(["1920x1080", "2560x1440", "3840x2160"]),
                       st.integers(min_value=7000, max_value=10000)), min_size=1, max_size=8),
    st.integers(min_value=0, max_value=7),
    st.integers(min_value=1, max_value=500),
)
def test_raising_a_run_score_never_lowers_the_grade(
    scored: list[tuple[str, int]], which: int, bump: int
) -> None:
    runs = [run(i, res, cents / 100) for i, (res, cents) in enumerate(scored)]
    before = grade_of(runs)
    i = which % len(runs)
    better = list(runs)
    better[i] = run(i, runs[i].resolution, min(100.0, (scored[i][1] + bump) / 100))
    assert GRADE_ORDER.index(grade_of(better)) >= GRADE_ORDER.index(before)
