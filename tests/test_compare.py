"""Before/after statistics (docs/spec/compare.md) on constructed captures with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from certgen.compare import statistics as compare
from certgen.compare.statistics import FocusChange, SideInput, count_side, noise_floor

T_975_DF2 = 4.302652729749464
"""Student t, 97.5th percentile, 2 degrees of freedom (a table value)."""


def side(frames: list[float] | np.ndarray, **kw: object) -> compare.CountedSide:
    return count_side(SideInput(np.asarray(frames, dtype=np.float64), "test.csv", **kw))  # type: ignore[arg-type]


def steady(ms: float, seconds: float) -> list[float]:
    """Constant frame time for `seconds` of capture time."""
    return [ms] * round(seconds * 1000.0 / ms)


# --------------------------------------------------------------------------- counting rules


def test_stalls_over_200_ms_are_counted_and_kept_out_of_means_and_percentiles() -> None:
    """1000 x 10 ms, one frame of exactly 200 ms (not a stall) and 250 / 500 / 3000 ms stalls."""
    s = side([10.0] * 500 + [250.0, 200.0] + [10.0] * 500 + [500.0, 3000.0]).summary
    assert s.excluded_over_stall == 3
    assert s.stall_total_ms == 3750.0
    assert s.frames == 1001
    # 1001 counted frames over 10,200 ms (the 200 ms frame counts, the stalls do not).
    assert s.avg_fps == round(1001 * 1000 / 10200.0, 1) == 98.1
    # k = ceil(1001/100) = 11: the 200 ms frame and ten 10 ms frames.
    assert s.low_1pct_fps == round(1000 / ((200 + 100) / 11), 1)
    assert s.p99_9_ms is not None and s.p99_9_ms <= 200.0
    assert not s.too_short


def test_too_short_under_900_counted_frames() -> None:
    assert side([10.0] * 899).summary.too_short
    assert not side([10.0] * 900).summary.too_short
    # Stalls do not count towards the 900.
    assert side([10.0] * 899 + [300.0]).summary.too_short


def test_nonpositive_frames_are_dropped_and_counted() -> None:
    s = side([10.0] * 950 + [0.0, -1.0]).summary
    assert (s.frames, s.dropped_nonpositive) == (950, 2)


@pytest.mark.parametrize(
    ("base", "spike", "stutters"),
    [
        (10.0, 20.0, 0),  # exactly 2x the median (and > median + 8): not over 2x
        (10.0, 20.001, 1),
        (4.0, 12.0, 0),  # exactly median + 8 ms (and > 2x): not over +8
        (4.0, 12.001, 1),
        (10.0, 1000.0, 1),  # exactly 1 s: still a stutter (a stall too)
        (10.0, 1000.001, 0),  # over 1 s: a stall only
        (10.0, 250.0, 1),  # a 250 ms hitch: out of percentiles, in the stutter count
    ],
)
def test_stutter_count_at_the_rules_edges(base: float, spike: float, stutters: int) -> None:
    s = side(steady(base, 5.0) + [spike] + steady(base, 5.0)).summary
    assert s.stutter_count == stutters
    assert s.excluded_over_stall == (1 if spike > 200.0 else 0)


def test_stutter_count_is_the_certificates_function() -> None:
    """The report counts stutter with certgen.metrics.diagnostics, not a copy of the rule."""
    frames = np.asarray(steady(10.0, 4.0) + [30.0, 10.0, 45.0] + steady(10.0, 4.0))
    from certgen.metrics.diagnostics import stutter_events

    assert side(frames).summary.stutter_count == stutter_events(frames).size == 2


def test_focus_not_recorded_drops_nothing() -> None:
    s = side([10.0] * 1000).summary
    assert not s.focus_recorded
    assert (s.focus_excluded_frames, s.focus_excluded_ms) == (0, 0.0)


def test_foreground_rule_drops_1_s_after_regain_and_0_2_s_before_loss() -> None:
    """5 s of 10 ms frames; focus lost at 2 s, regained at 3 s.

    Kept: up to 1.8 s (180 frames) and after 4 s (100 frames); left out: 0.2 s before the loss,
    the 1 s in the background and the first 1 s back: 220 frames, 2200 ms.
    """
    focus = (FocusChange(2000.0, False), FocusChange(3000.0, True))
    s = side([10.0] * 500, focus=focus).summary
    assert s.focus_recorded
    assert s.frames == 280
    assert (s.focus_excluded_frames, s.focus_excluded_ms) == (220, 2200.0)


def test_capture_that_starts_with_a_regain_was_in_the_background_before_it() -> None:
    s = side([10.0] * 300, focus=(FocusChange(500.0, True),)).summary
    # background up to 0.5 s, then 1 s dropped: frames presented after 1.5 s count.
    assert s.frames == 150


# --------------------------------------------------------------------------- noise floor


def test_noise_floor_from_known_block_means() -> None:
    """Blocks of 100 and 80 FPS before, 80 and 100 FPS after (constant 10 / 12.5 ms frames).

    Block spread: s^2 = 200 on both sides, 2 blocks each: SE = sqrt(100 + 100), Welch df = 2,
    half-width = t(0.975, 2) * sqrt(200) = 60.85 FPS. The before average is 10,800 frames over
    120 s = 90 FPS, so the floor of the average is 67.61 % (rounded up to 0.01 %). The 1% low of
    each side is 80 FPS (its slowest 108 frames are 12.5 ms), so its floor is 76.07 %.
    """
    before = side(steady(10.0, 60) + steady(12.5, 60))
    after = side(steady(12.5, 60) + steady(10.0, 60))
    floors = {f.figure: f for f in noise_floor(before, after)}
    avg = floors["avg_fps"]
    assert (avg.blocks_before, avg.blocks_after) == (2, 2)
    assert (avg.before, avg.after) == (90.0, 90.0)
    assert avg.df == 2.0
    half = T_975_DF2 * math.sqrt(200.0)
    assert avg.floor_pct == math.ceil(100 * 100 * half / 90.0) / 100 == 67.61
    assert avg.welch_pct == round(100 * half / 90.0, 2)
    assert not avg.minimum_applied
    assert (avg.difference_pct, avg.verdict) == (0.0, "no_change")
    low = floors["low_1pct_fps"]
    assert (low.before, low.after) == (80.0, 80.0)
    assert low.floor_pct == math.ceil(100 * 100 * half / 80.0) / 100 == 76.07


def test_a_difference_inside_the_floor_is_no_change_in_either_direction() -> None:
    """Before blocks 100 / 80 FPS; after blocks 125 / 100 FPS (+25 % on the average, 90 -> 111.1).

    The spread of the blocks is so wide that the floor (over 75 %) swallows the difference.
    """
    before = side(steady(10.0, 60) + steady(12.5, 60))
    after = side(steady(8.0, 60) + steady(10.0, 60))
    floors = noise_floor(before, after)
    assert all(f.verdict == "no_change" for f in floors)
    assert all(abs(f.difference_pct) < f.floor_pct for f in floors)  # type: ignore[arg-type,operator]
    floors = noise_floor(after, before)
    assert all(f.verdict == "no_change" for f in floors)


def test_identical_blocks_give_the_minimum_floor_never_zero() -> None:
    before = side(steady(10.0, 120))
    after = side(steady(10.0, 120))
    for f in noise_floor(before, after):
        assert f.welch_pct is None and f.minimum_applied
        assert f.floor_pct == 100 * compare.MIN_FLOOR_FPS / 100.0 == 0.1
        assert f.difference_pct == 0.0
        assert f.verdict == "no_change"


def test_difference_outside_the_floor_is_shown_with_its_direction() -> None:
    floors = noise_floor(side(steady(10.0, 120)), side(steady(8.0, 120)))
    assert [(f.verdict, f.difference_pct) for f in floors] == [("higher", 25.0)] * 3
    floors = noise_floor(side(steady(8.0, 120)), side(steady(10.0, 120)))
    assert [(f.verdict, f.difference_pct) for f in floors] == [("lower", -20.0)] * 3


def test_one_whole_block_is_not_comparable() -> None:
    """90 s before: one whole 60 s block (the partial one does not count)."""
    floors = noise_floor(side(steady(10.0, 90)), side(steady(10.0, 180)))
    for f in floors:
        assert f.verdict == "not_comparable"
        assert f.reason == "too_few_blocks_before"
        assert (f.blocks_before, f.blocks_after) == (1, 3)
        assert f.floor_pct is None


def test_lost_events_without_a_place_make_every_block_untrusted() -> None:
    before = side(steady(10.0, 180), lost_events_unplaced=True, lost_reason="gap in tick")
    floors = noise_floor(before, side(steady(10.0, 180)))
    assert {f.reason for f in floors} == {"lost_events_before"}


def test_a_block_with_a_lost_event_does_not_count() -> None:
    # A lost event in the second of three blocks leaves two clean blocks.
    frames = steady(10.0, 180)
    floors = noise_floor(side(frames, lost_event_frames=(9000,)), side(frames))
    assert floors[0].blocks_before == 2
    floors = noise_floor(side(steady(10.0, 120), lost_event_frames=(9000,)), side(frames))
    assert floors[0].reason == "too_few_blocks_before"


def test_blocks_with_focus_loss_do_not_count() -> None:
    focus = (FocusChange(30_000.0, False), FocusChange(31_000.0, True))
    blocks = compare.whole_blocks(
        side(steady(10.0, 180), focus=focus).positive, side(steady(10.0, 180), focus=focus).clean
    )
    assert [b.index for b in blocks] == [1, 2]


def test_frame_on_a_block_boundary_closes_the_earlier_block() -> None:
    blocks = compare.whole_blocks(np.asarray(steady(10.0, 120)), np.ones(12000, dtype=bool))
    assert [b.frames for b in blocks] == [6000, 6000]


# --------------------------------------------------------------------------- paired series


def summaries(values: list[float]) -> list[compare.SideSummary]:
    """One counted side per FPS value (constant frames, 1000 of them)."""
    return [side([1000.0 / v] * 1000).summary for v in values]


PILOT = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 100.8, 99.2, 100.3, 99.7]


def test_five_pairs_are_refused_even_when_all_agree() -> None:
    before = summaries([100.0, 101.0, 99.0, 100.5, 99.5])
    after = summaries([120.0, 121.0, 119.0, 120.5, 119.5])
    result = compare.paired_series(list(zip(before, after)), summaries(PILOT))
    for fig in result:
        assert fig.pairs == 5
        assert fig.p_value >= 0.0625
        assert not fig.enough_pairs and not fig.p_ok
        assert not fig.change_reported
        assert fig.direction == "no_change"


def test_eight_clear_pairs_are_accepted() -> None:
    before = summaries([100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1])
    after = summaries([110.0, 111.5, 108.9, 110.0, 109.8, 110.4, 109.6, 110.3])
    result = compare.paired_series(list(zip(before, after)), summaries(PILOT))
    assert [f.figure for f in result] == list(compare.FIGURES)
    for fig in result:
        assert fig.pairs == 8
        assert fig.p_value == 0.0078  # 2 / 2^8, every difference positive
        assert fig.ci_low_pct > 0
        assert fig.smallest_effect_pct is not None and fig.median_pct >= fig.smallest_effect_pct
        assert fig.change_reported and fig.direction == "higher"


def test_a_change_smaller_than_the_pilots_detectable_effect_is_not_reported() -> None:
    before = summaries([100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1])
    after = [s * 1.01 for s in [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1]]
    pilot = summaries([100.0, 104.0, 96.0, 102.0, 98.0, 100.0, 103.0, 97.0, 101.0, 99.0])
    result = compare.paired_series(list(zip(before, summaries(after))), pilot)
    fig = result[0]
    assert fig.p_ok and fig.ci_excludes_zero and fig.enough_pairs
    assert not fig.effect_ok and not fig.change_reported


def test_without_a_pilot_no_change_is_reported() -> None:
    before = summaries([100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1])
    after = summaries([110.0, 111.5, 108.9, 110.0, 109.8, 110.4, 109.6, 110.3])
    fig = compare.paired_series(list(zip(before, after)), None)[0]
    assert fig.smallest_effect_pct is None and not fig.change_reported


def test_mixed_differences_are_not_a_change() -> None:
    before = summaries([100.0] * 8)
    after = summaries([103.0, 97.0, 104.0, 96.0, 102.0, 98.0, 105.0, 95.0])
    fig = compare.paired_series(list(zip(before, after)), summaries(PILOT))[0]
    assert fig.p_value > 0.05 and not fig.ci_excludes_zero and not fig.change_reported


def test_bootstrap_is_reproducible_with_its_fixed_seed() -> None:
    d = np.asarray([1.0, 3.0, 2.0, 5.0, 4.0, 2.5, 3.5, 1.5])
    assert compare.bootstrap_median_interval(d) == compare.bootstrap_median_interval(d)


def test_smallest_detectable_effect_definition() -> None:
    """t(0.975, m-1) * sqrt(2) * CV: for a pilot of mean 100 and sd 1 over 10 runs, 3.2 %."""
    pilot = np.asarray([99.0, 101.0] * 5)
    sd = float(np.std(pilot, ddof=1))
    assert compare.smallest_detectable_effect(pilot) == pytest.approx(2.2621571627 * math.sqrt(2) * sd)


# --------------------------------------------------------------------------- properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import exact_ms  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.lists(exact_ms, min_size=2, max_size=4), st.lists(exact_ms, min_size=2, max_size=4))
def test_floor_is_never_zero_and_the_verdict_follows_it(before_ms: list[float], after_ms: list[float]) -> None:
    """Any whole blocks (one constant frame time per 60 s block): a positive floor, and a
    difference is a change exactly when it lies outside the floor."""
    before = side([t for ms in before_ms for t in steady(ms, 60)])
    after = side([t for ms in after_ms for t in steady(ms, 60)])
    for f in noise_floor(before, after):
        assert (f.blocks_before, f.blocks_after) == (len(before_ms), len(after_ms))
        assert f.floor_pct is not None and f.floor_pct > 0
        assert f.difference_pct is not None
        inside = abs(f.difference_pct) <= f.floor_pct
        assert f.verdict == ("no_change" if inside else "higher" if f.difference_pct > 0 else "lower")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0.5, max_value=1500.0, allow_nan=False).map(lambda v: round(v, 3)),
                min_size=1, max_size=2500))
def test_csv_counts_agree_with_the_metric_rows(frames: list[float]) -> None:
    import csv
    import io

    counted = side(frames)
    rows = list(csv.DictReader(io.StringIO(compare.csv_text([("before", counted)]))))
    metric = {r["name"]: r["value"] for r in rows if r["kind"] == "metric"}
    values = [float(r["value"]) for r in rows if r["kind"] == "frame"]
    assert values == frames
    assert sum(v <= 200 for v in values) == int(metric["frames"])
    assert sum(v > 200 for v in values) == int(metric["excluded_over_stall_ms"])
    kept = sorted((v for v in values if v <= 200), reverse=True)
    if kept:
        k = max(1, -(-len(kept) // 100))
        assert float(metric["low_1pct_fps"]) == pytest.approx(1000 / (sum(kept[:k]) / k), abs=0.05 + 1e-9)
    else:
        assert metric["low_1pct_fps"] == ""
