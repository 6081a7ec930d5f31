"""The spec's test vectors (docs/spec/metrics.md), the null rule and half-away-from-zero ties."""

from __future__ import annotations

import numpy as np
import pytest

from certgen.errors import CaptureEmptyError
from certgen.metrics.figures import (
    Ratios,
    compute_sop_metrics,
    fluidity_score,
    fps_figures,
    ratios_from_fps,
    round_half_away,
    weights_of,
)
from certgen.sop import load_rules

W = weights_of(load_rules())
VECTOR_1000 = np.array([8.0] * 990 + [20.0] * 9 + [50.0])


def test_weights_of_the_default_sop_are_0_7_and_0_3() -> None:
    assert (W.consistency_gap, W.stutter) == (0.7, 0.3)


def test_fps_triple_120_90_60() -> None:
    assert ratios_from_fps(120.0, 90.0, 60.0, W) == Ratios(0.25, 0.3333, 72.5)


def test_the_1000_frame_capture() -> None:
    m = compute_sop_metrics(VECTOR_1000, W)
    assert (m.frames, m.avg_fps, m.low_1pct_fps, m.low_0_1pct_fps) == (1000, 122.7, 43.5, 20.0)
    assert (m.consistency_gap, m.stutter, m.fluidity_score) == (0.6455, 0.5402, 38.61)
    assert (m.dropped_nonpositive, m.corrupted) == (0, False)


def test_ratios_only_g_0_05_s_0_61() -> None:
    assert fluidity_score(0.05, 0.61, W) == 78.2


def test_average_is_time_weighted_not_per_frame_mean() -> None:
    """990x8 ms + 9x20 ms + 1x50 ms is 122.7 FPS, not the per-frame mean 124.2."""
    per_frame_mean = round_half_away(float(np.mean(1000.0 / VECTOR_1000)), 1)
    assert per_frame_mean == 124.2
    assert fps_figures(VECTOR_1000).avg_fps == 122.7 != per_frame_mean


@pytest.mark.parametrize(
    ("triple", "expected"),
    [
        ((None, 90.0, 60.0), Ratios(None, 0.3333, None)),
        ((0.0, 0.0, 0.0), Ratios(None, None, None)),
        ((120.0, None, 60.0), Ratios(None, None, None, corrupted=False)),
        ((120.0, 0.0, 0.0), Ratios(None, None, None)),
        ((120.0, 90.0, None), Ratios(0.25, None, None)),
        ((120.0, 90.0, 0.0), Ratios(0.25, 1.0, 52.5)),
        ((90.0, 120.0, 60.0), Ratios(None, None, None, corrupted=True)),
        ((120.0, 60.0, 90.0), Ratios(None, None, None, corrupted=True)),
        ((120.0, -1.0, -2.0), Ratios(None, None, None, corrupted=True)),
        ((float("nan"), 90.0, 60.0), Ratios(None, None, None, corrupted=True)),
    ],
    ids=["no-avg", "all-zero", "no-low1", "low1-zero", "no-low01", "low01-zero",
         "low1-above-avg", "low01-above-low1", "negative", "nan"],
)
def test_null_rule(triple: tuple[float | None, ...], expected: Ratios) -> None:
    assert ratios_from_fps(*triple, W) == expected


def test_no_positive_frame_is_refused_not_scored_as_zero() -> None:
    with pytest.raises(CaptureEmptyError) as info:
        compute_sop_metrics(np.array([0.0, -3.0]), W, source="run.csv")
    assert str(info.value) == ("run.csv: no frame with a positive frame time (2 dropped as <= 0); "
                               "the run must be captured again")


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [(0.125, 2, 0.13), (2.5, 0, 3.0), (-2.5, 0, -3.0), (72.45, 1, 72.5), (0.00625, 4, 0.0063),
     (38.605, 2, 38.61), (1.0049, 2, 1.0)],
)
def test_round_half_away_from_zero_on_the_decimal_value(
    value: float, digits: int, expected: float
) -> None:
    assert round_half_away(value, digits) == expected


@pytest.mark.parametrize(
    ("frame_ms", "fps"),
    [(4000.0, 0.3), (800.0, 1.3), (160.0, 6.3)],  # 0.25, 1.25, 6.25 exactly: Python's round() gives .2
)
def test_fps_ties_round_away_from_zero(frame_ms: float, fps: float) -> None:
    figures = fps_figures(np.full(7, frame_ms))
    assert (figures.avg_fps, figures.low_1pct_fps, figures.low_0_1pct_fps) == (fps, fps, fps)
    assert round(1000.0 / frame_ms, 1) != fps  # the trap this guards against


def test_ratio_ties_use_the_decimal_value_of_the_rounded_figures() -> None:
    # 1 - 79.5/80 = 0.00625 exactly on paper (binary float gives 0.0062499...); score 99.5625.
    assert ratios_from_fps(80.0, 79.5, 79.5, W) == Ratios(0.0063, 0.0, 99.56)
