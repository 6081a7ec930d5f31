"""Long captures (N >= 65,536) find their slowest-k tail from a strided sample first.

The property tests draw short captures, which never take that path; here every route of
certgen.metrics.figures._slowest_tail on long captures (sampled threshold accepted, and the fallback
when the sample misleads) is checked against a plain full sort.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from certgen.metrics.figures import _SAMPLE_MIN_FRAMES, fps_figures, k_slowest, round_half_away


def _reference(frames: np.ndarray) -> tuple[float, float, float]:
    """Average, 1% and 0.1% lows by a full descending sort and exact sums."""
    ordered = sorted(frames.tolist(), reverse=True)
    n = len(ordered)

    def low(denominator: int) -> float:
        k = k_slowest(n, denominator)
        return round_half_away(1000.0 * k / math.fsum(ordered[:k]), 1)

    return round_half_away(1000.0 * n / math.fsum(ordered), 1), low(100), low(1000)


def _cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    n = 131_072
    steady = rng.normal(16.7, 0.8, n).clip(5.0)
    spiky = steady.copy()
    spiky[rng.integers(0, n, 400)] += rng.uniform(20, 300, 400)
    # Long frames only where the strided sample looks (every 8th frame from 0): the sample's
    # threshold then keeps fewer than k frames and the whole capture is partitioned instead.
    misleading = np.full(n, 10.0)
    misleading[0 : 300 * (n // 16_384) : n // 16_384] = 90.0
    ties = np.where(rng.random(n) < 0.02, 33.3, 16.7)
    return {
        "steady": steady,
        "spiky": spiky,
        "misleading sample": misleading,
        "ties": ties,
        "ascending": np.sort(rng.gamma(20.0, 0.8, n)),
        "descending": np.sort(rng.gamma(20.0, 0.8, n))[::-1].copy(),
        "one million, heavy tail": rng.pareto(3.0, 1_000_000) * 5.0 + 8.0,
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_long_capture_lows_equal_a_full_sort(name: str) -> None:
    frames = _cases()[name]
    assert frames.size >= _SAMPLE_MIN_FRAMES
    fps = fps_figures(frames)
    assert (fps.avg_fps, fps.low_1pct_fps, fps.low_0_1pct_fps) == _reference(frames)
