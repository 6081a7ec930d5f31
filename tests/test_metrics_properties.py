"""Hypothesis properties of the SOP v1.1 metrics engine (docs/spec/metrics.md).

On scaling: g = 1 - F_1%/F and s = 1 - F_0.1%/F_1% are ratios, so scaling every frame time by c
leaves their exact values unchanged. The reported g and s are computed from FPS figures rounded
to 1 decimal, so after rounding they are only approximately unchanged. What holds exactly:
1. ratios_from_fps works on the decimal values of the rounded figures (one decimal). Scaling
   such figures by 2^j (j >= 0) keeps them exact decimals (2 * fl(k/10) = fl(2k/10), whose
   shortest repr is 2k/10), so every quotient is the same number and g, s and the score are
   exactly the same;
2. for frame times scaled by any c, with rounded figures A (avg) and L (1% low), L <= A:
   |L'/A' - L/A| <= 0.05/A' + 0.05*L/(A'*A) <= 0.1/A' for each capture against the exact ratio,
   so the reported g of the two captures differ by at most 0.1/A1 + 0.1/A2 + 0.0001 (the last
   term: both sides rounded to 4 decimals), and s likewise with the 1% lows in place of A.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import frame_times, tenths

from certgen.metrics.figures import compute_sop_metrics, fps_figures, k_slowest, ratios_from_fps
from certgen.model import Weights

W = Weights(consistency_gap=0.7, stutter=0.3)

@given(frame_times)
def test_lows_never_exceed_the_average(frames: np.ndarray) -> None:
    f = fps_figures(frames)
    assert f.low_0_1pct_fps is not None and f.low_1pct_fps is not None and f.avg_fps is not None
    assert f.low_0_1pct_fps <= f.low_1pct_fps <= f.avg_fps
    assert not compute_sop_metrics(frames, W).corrupted


def test_k_table() -> None:
    assert [(k_slowest(n, 100), k_slowest(n, 1000)) for n in (600, 1000, 7200)] == [
        (6, 1), (10, 1), (72, 8)]


@given(st.integers(min_value=0, max_value=10**12))
def test_k_is_the_integer_ceiling_and_at_least_one(n: int) -> None:
    for d in (100, 1000):
        k = k_slowest(n, d)
        assert k == max(1, -(-n // d))
        assert k >= 1 and (n == 0 or (k - 1) * d < n <= k * d or k == 1)


@given(frame_times, st.randoms(use_true_random=False))
def test_a_shuffled_capture_gives_the_same_figures(frames: np.ndarray, rnd) -> None:
    shuffled = frames.copy()
    rnd.shuffle(shuffled)
    assert compute_sop_metrics(shuffled, W) == compute_sop_metrics(frames, W)


@given(
    frame_times,
    st.lists(st.floats(min_value=-1000.0, max_value=0.0, allow_nan=False), max_size=50),
    st.randoms(use_true_random=False),
)
def test_nonpositive_frames_are_dropped_and_counted(
    frames: np.ndarray, bad: list[float], rnd
) -> None:
    mixed = np.concatenate([frames, np.asarray(bad, dtype=np.float64)])
    rnd.shuffle(mixed)
    with_bad = compute_sop_metrics(mixed, W)
    clean = compute_sop_metrics(frames, W)
    assert with_bad.dropped_nonpositive == len(bad)
    assert with_bad.frames == frames.size
    assert with_bad == compute_sop_metrics(frames, W).__class__(
        **{**clean.__dict__, "dropped_nonpositive": len(bad)})


@given(tenths, tenths, tenths, st.integers(min_value=0, max_value=20))
def test_ratios_are_exactly_invariant_under_power_of_two_scaling(
    a: float, b: float, c: float, j: int
) -> None:
    avg, low1, low01 = sorted((a, b, c), reverse=True)
    scale = math.ldexp(1.0, j)
    assert ratios_from_fps(avg, low1, low01, W) == ratios_from_fps(
        avg * scale, low1 * scale, low01 * scale, W)


@settings(deadline=None)
@given(frame_times, st.floats(min_value=0.25, max_value=4.0))
def test_gap_and_stutter_move_only_by_fps_rounding_when_frames_are_scaled(
    frames: np.ndarray, c: float
) -> None:
    one = compute_sop_metrics(frames, W)
    two = compute_sop_metrics(frames * c, W)
    assume(one.low_1pct_fps and two.low_1pct_fps)  # FPS rounding to 0.0 voids the ratio
    assert one.consistency_gap is not None and two.consistency_gap is not None
    assert one.stutter is not None and two.stutter is not None
    assert one.avg_fps and two.avg_fps
    eps = 1e-9
    bound_g = 0.1 / one.avg_fps + 0.1 / two.avg_fps + 0.0001 + eps
    bound_s = 0.1 / one.low_1pct_fps + 0.1 / two.low_1pct_fps + 0.0001 + eps
    assert abs(one.consistency_gap - two.consistency_gap) <= bound_g
    assert abs(one.stutter - two.stutter) <= bound_s
