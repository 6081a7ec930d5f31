"""Diagnostics beside the SOP figures (benchmark-page rules): they never change the SOP numbers.

- p99 / p99.9 frame time in ms: linear interpolation between closest ranks (numpy's default,
  what PresentMon's own statistics use), over frames up to the stall line;
- stalls: frames over 200 ms, counted with their total time, kept out of the percentiles;
- stutter events: a frame of at most 1 s that is longer than both 2x the median of the 3 s of
  capture time centred on it and that median + 8 ms (frames of 200 ms to 1 s count here);
- too short: under 900 frames a percentile means little.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

STALL_MS = 200.0
STUTTER_MAX_MS = 1000.0
STUTTER_WINDOW_MS = 3000.0
STUTTER_RATIO = 2.0
STUTTER_MARGIN_MS = 8.0
TOO_SHORT_FRAMES = 900


@dataclass(frozen=True)
class Diagnostics:
    """Reader-facing figures of one capture (frame times in ms)."""

    p99_ms: float | None
    p99_9_ms: float | None
    stall_count: int
    stall_total_ms: float
    stutter_count: int
    too_short: bool


def percentile_ms(frames: FloatArray, q: float) -> float | None:
    """Frame time at percentile q (linear interpolation), or None without frames."""
    if frames.size == 0:
        return None
    return float(np.percentile(frames, q))


def _range_min(values: FloatArray, lo: npt.NDArray[np.intp], hi: npt.NDArray[np.intp]) -> FloatArray:
    """min(values[lo[i]:hi[i]]) for every i (hi > lo), by a sparse table: O(N log W)."""
    lengths = hi - lo
    levels = [values]
    span = 1
    while span * 2 <= int(lengths.max()):
        prev = levels[-1]
        levels.append(np.minimum(prev[:-span], prev[span:]))
        span *= 2
    level = np.floor(np.log2(lengths)).astype(np.intp)
    out = np.empty(values.size, dtype=np.float64)
    for j, table in enumerate(levels):
        sel = np.flatnonzero(level == j)
        if sel.size == 0:
            continue
        width = 1 << j
        out[sel] = np.minimum(table[lo[sel]], table[hi[sel] - width])
    return out


def stutter_events(frames: FloatArray) -> npt.NDArray[np.intp]:
    """Indices of stutter events (see the module docstring), in frame order.

    Each frame sits at its present time (the running sum of frame times); its window holds the
    frames whose present time is within 1.5 s either side. Computing an exact median for every
    frame is costly, so a cheap lower bound (the window minimum) first rules out every frame that
    cannot qualify; the exact median is taken only for the few that remain.
    """
    n = frames.size
    if n == 0:
        return np.empty(0, dtype=np.intp)
    present = np.cumsum(frames)
    half = STUTTER_WINDOW_MS / 2.0
    lo = np.searchsorted(present, present - half, side="left")
    hi = np.searchsorted(present, present + half, side="right")
    # median >= window minimum, so t <= max(2*min, min+8) can never be a stutter.
    floor = _range_min(frames, lo, hi)
    maybe = (frames <= STUTTER_MAX_MS) & (frames > STUTTER_RATIO * floor) & (
        frames > floor + STUTTER_MARGIN_MS
    )
    events = []
    for i in np.flatnonzero(maybe):
        median = float(np.median(frames[lo[i] : hi[i]]))
        t = float(frames[i])
        if t > STUTTER_RATIO * median and t > median + STUTTER_MARGIN_MS:
            events.append(int(i))
    return np.asarray(events, dtype=np.intp)


def compute_diagnostics(frames: FloatArray) -> Diagnostics:
    """Diagnostics of positive frame times (ms)."""
    stalled = frames > STALL_MS
    stall_count = int(np.count_nonzero(stalled))
    counted = frames[~stalled] if stall_count else frames
    return Diagnostics(
        p99_ms=percentile_ms(counted, 99.0),
        p99_9_ms=percentile_ms(counted, 99.9),
        stall_count=stall_count,
        stall_total_ms=float(np.sum(frames[stalled])) if stall_count else 0.0,
        stutter_count=int(stutter_events(frames).size),
        too_short=bool(frames.size < TOO_SHORT_FRAMES),
    )
