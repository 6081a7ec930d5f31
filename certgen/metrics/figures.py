"""SOP-GPU-001 v1.1 Step 4.2 arithmetic: time-weighted FPS, slowest-k lows, gap, stutter, score.

Everything here follows docs/spec/metrics.md to the letter:
- frames with t <= 0 are dropped and counted; an empty capture is refused, never 0 FPS;
- average FPS is time-weighted (1000 * N / sum t), never the mean of per-frame 1000/t;
- a low is 1000 / mean of the k slowest frame times, k = max(1, ceil(N * p)) in integers;
- rounding order: FPS to 1 decimal, then g and s from the rounded FPS (4 decimals), then the
  score from the unrounded g and s (2 decimals); half away from zero on the decimal value;
- the null rule: absent stays absent, out-of-order figures are corrupted and give null.

The weights come from the versioned rules file (certgen/sop), never from this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from certgen.errors import CaptureEmptyError
from certgen.model.thresholds import Weights

if TYPE_CHECKING:
    from certgen.sop import Rules

FloatArray = npt.NDArray[np.float64]

# Tails, as integer fractions so that k is computed in integers: p = 1/100 and 1/1000.
LOW_1PCT_DENOMINATOR = 100
LOW_0_1PCT_DENOMINATOR = 1000


def round_half_away(value: float, ndigits: int) -> float:
    """Round half away from zero on the decimal value (Python's round() is half-to-even)."""
    quantum = Decimal(1).scaleb(-ndigits)
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def k_slowest(n_frames: int, denominator: int) -> int:
    """k = max(1, ceil(N / denominator)), in integer arithmetic (no float ceil)."""
    return max(1, -(-n_frames // denominator))


@dataclass(frozen=True)
class FpsFigures:
    """The three SOP FPS figures, each rounded to 1 decimal (None = absent)."""

    avg_fps: float | None
    low_1pct_fps: float | None
    low_0_1pct_fps: float | None


@dataclass(frozen=True)
class Ratios:
    """Consistency gap, stutter (4 decimals) and Fluidity Score (2 decimals), or None."""

    consistency_gap: float | None
    stutter: float | None
    fluidity_score: float | None
    corrupted: bool = False
    """True when the FPS figures break F_0.1% <= F_1% <= F (a hand-edited or corrupted record)."""


def fps_from_total(count: int, total_ms: float, values: FloatArray) -> float:
    """1000 * count / total, rounded to 1 decimal; exact (fsum) when near a rounding tie.

    A float sum depends on summation order by an ulp or so; that can only matter when the
    figure sits on a .x5 tie, so there (and only there) the exactly-rounded fsum decides,
    which makes the result independent of frame order.
    """
    fps = 1000.0 * count / total_ms
    scaled = fps * 10.0
    if abs((scaled - math.floor(scaled)) - 0.5) < 1e-7:
        fps = 1000.0 * count / math.fsum(values.tolist())
    return round_half_away(fps, 1)


# The slowest-k tail is found from a strided sample when the capture is this long or longer.
_SAMPLE_MIN_FRAMES = 65_536
_SAMPLE_SIZE = 8_192


def _slowest_tail(frames: FloatArray, k: int) -> FloatArray:
    """The k largest frame times (any order), in O(N) without a full sort.

    A strided sample gives a threshold that, checked by counting, is guaranteed to keep every
    one of the k slowest frames; np.partition then works on that small candidate set only. If
    the check fails (unusual distributions), the whole array is partitioned. Either way the
    result is the same multiset of k values.

    The threshold sits about four standard deviations (of the sample count) beyond the expected
    rank, so the candidate set is only slightly larger than k: copying the candidates out is
    the costly step (one branch per kept frame), so the margin is kept tight.
    """
    n = frames.size
    if k >= n:
        return frames
    if n >= _SAMPLE_MIN_FRAMES:
        sample = frames[:: n // _SAMPLE_SIZE]
        size = sample.size
        expected = k * size / n
        want = min(size - 1, int(expected + 4.0 * math.sqrt(expected)) + 8)
        threshold = np.partition(sample, size - 1 - want)[size - 1 - want]
        candidates = np.compress(frames >= threshold, frames)  # half a boolean index's time
        if candidates.size >= k:
            frames = candidates
    return np.partition(frames, frames.size - k)[frames.size - k :]


def fps_figures(frames: FloatArray) -> FpsFigures:
    """Average, 1% low and 0.1% low FPS of positive frame times (ms), each rounded to 1 decimal."""
    n = int(frames.size)
    if n == 0:
        return FpsFigures(None, None, None)
    avg = fps_from_total(n, float(np.sum(frames)), frames)
    k1 = k_slowest(n, LOW_1PCT_DENOMINATOR)
    k01 = k_slowest(n, LOW_0_1PCT_DENOMINATOR)
    tail1 = _slowest_tail(frames, k1)
    # The 0.1% tail is the slowest part of the 1% tail (k01 <= k1), so it is taken from it.
    tail01 = np.partition(tail1, tail1.size - k01)[tail1.size - k01 :]
    low1 = fps_from_total(k1, float(np.sum(tail1)), tail1)
    low01 = fps_from_total(k01, float(np.sum(tail01)), tail01)
    return FpsFigures(avg, low1, low01)


def ratios_from_fps(
    avg_fps: float | None,
    low_1pct_fps: float | None,
    low_0_1pct_fps: float | None,
    weights: Weights,
) -> Ratios:
    """Gap, stutter and score from (already rounded) FPS figures, with the null rule.

    - F or F_1% is 0 or absent -> g and S_F null;
    - F_1% is 0 or absent, or F_0.1% absent -> s and S_F null;
    - out of order (F_1% > F or F_0.1% > F_1%) or negative -> all null, flagged corrupted.
    """
    figures = (avg_fps, low_1pct_fps, low_0_1pct_fps)
    present = [f for f in figures if f is not None]
    if any((not math.isfinite(f)) or f < 0 for f in present):
        return Ratios(None, None, None, corrupted=True)
    if (avg_fps is not None and low_1pct_fps is not None and low_1pct_fps > avg_fps) or (
        low_1pct_fps is not None and low_0_1pct_fps is not None and low_0_1pct_fps > low_1pct_fps
    ):
        return Ratios(None, None, None, corrupted=True)

    # On the decimal values of the rounded figures (28 digits), so that a tie a reader finds
    # by hand (1 - 79.5/80 = 0.00625 -> 0.0063) is not lost to binary (0.0062499...).
    gap_raw: Decimal | None = None
    if avg_fps and low_1pct_fps:  # both present and non-zero
        gap_raw = 1 - Decimal(repr(low_1pct_fps)) / Decimal(repr(avg_fps))
    stutter_raw: Decimal | None = None
    if low_1pct_fps and low_0_1pct_fps is not None:
        stutter_raw = 1 - Decimal(repr(low_0_1pct_fps)) / Decimal(repr(low_1pct_fps))

    gap = None if gap_raw is None else _round_decimal(gap_raw, 4)
    stutter = None if stutter_raw is None else _round_decimal(stutter_raw, 4)
    score = None
    if gap_raw is not None and stutter_raw is not None:
        score = fluidity_score(gap_raw, stutter_raw, weights)
    return Ratios(gap, stutter, score)


def _decimal(value: float | Decimal) -> Decimal:
    return value if isinstance(value, Decimal) else Decimal(repr(value))


def _round_decimal(value: Decimal, ndigits: int) -> float:
    return float(value.quantize(Decimal(1).scaleb(-ndigits), rounding=ROUND_HALF_UP))


def rounded_ratio(numerator: float, denominator: float, ndigits: int) -> float:
    """numerator / denominator of two printed figures, on their decimal values, rounded half
    away from zero: how the SOP's ratios are taken from rounded FPS figures."""
    return _round_decimal(_decimal(numerator) / _decimal(denominator), ndigits)


def fluidity_score(gap: float | Decimal, stutter: float | Decimal, weights: Weights) -> float:
    """S_F = 100 * (1 - (w_g * g + w_s * s)), rounded to 2 decimals (decimal arithmetic)."""
    total = _decimal(weights.consistency_gap) * _decimal(gap) + _decimal(
        weights.stutter
    ) * _decimal(stutter)
    return _round_decimal(100 * (1 - total), 2)


@dataclass(frozen=True)
class SopMetrics:
    """The SOP Step 4.2 figures of one capture."""

    frames: int
    """Frames scored (after dropping t <= 0)."""
    dropped_nonpositive: int
    avg_fps: float | None
    low_1pct_fps: float | None
    low_0_1pct_fps: float | None
    consistency_gap: float | None
    stutter: float | None
    fluidity_score: float | None
    corrupted: bool


def positive_frames(frame_times_ms: FloatArray) -> tuple[FloatArray, int]:
    """Drop t <= 0 (a zero-length frame cannot exist); return the rest and how many went."""
    if frame_times_ms.size and float(np.min(frame_times_ms)) > 0.0:
        return frame_times_ms, 0
    kept = frame_times_ms[frame_times_ms > 0.0]
    return kept, int(frame_times_ms.size - kept.size)


def compute_sop_metrics(
    frame_times_ms: FloatArray, weights: Weights, *, source: str = "capture"
) -> SopMetrics:
    """SOP v1.1 Step 4.2 figures for one capture's frame times (ms).

    Raises CaptureEmptyError when no frame is left after dropping t <= 0: such a run is
    re-run, never scored as 0 FPS.
    """
    frames, dropped = positive_frames(frame_times_ms)
    if frames.size == 0:
        raise CaptureEmptyError(
            f"no frame with a positive frame time ({dropped} dropped as <= 0); "
            "the run must be captured again",
            file=source,
        )
    fps = fps_figures(frames)
    ratios = ratios_from_fps(fps.avg_fps, fps.low_1pct_fps, fps.low_0_1pct_fps, weights)
    return SopMetrics(
        frames=int(frames.size),
        dropped_nonpositive=dropped,
        avg_fps=fps.avg_fps,
        low_1pct_fps=fps.low_1pct_fps,
        low_0_1pct_fps=fps.low_0_1pct_fps,
        consistency_gap=ratios.consistency_gap,
        stutter=ratios.stutter,
        fluidity_score=ratios.fluidity_score,
        corrupted=ratios.corrupted,
    )


def _ms(value: float | None) -> float | None:
    """Diagnostic times are reported to 0.001 ms (the tools' own resolution)."""
    return None if value is None else round_half_away(value, 3)


def weights_of(rules: Rules) -> Weights:
    """The Fluidity weights of a loaded rules file (certgen.sop.Rules)."""
    return Weights(consistency_gap=rules.weight_gap, stutter=rules.weight_stutter)
