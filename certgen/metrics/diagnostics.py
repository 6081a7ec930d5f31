"""Diagnostics beside the SOP figures (benchmark-page rules): they never change the SOP numbers.

- p99 / p99.9 frame time in ms: linear interpolation between closest ranks (numpy's default,
  what PresentMon's own statistics use), over frames up to the stall line;
- stalls: frames over 200 ms, counted with their total time, kept out of the percentiles;
- stutter events: a frame of at most 1 s that is longer than both 2x the median of the 3 s of
  capture time centred on it and that median + 8 ms (frames of 200 ms to 1 s count here);
- too short: under 900 frames a percentile means little.

The stutter rule, precisely (`stutter_events`; every comparison is in float64):

- the frames are the positive frame times t_0 .. t_{N-1} in capture order (t <= 0 already
  dropped); frame i sits at its present time T_i = np.cumsum(t)[i], the end of the frame;
- the window of frame i is every frame j with fl(T_i - 1500) <= T_j <= fl(T_i + 1500): 3 s of
  capture time centred on frame i, frame i included, stalls included;
- m_i is the median of the frame times in that window, exactly as np.median computes it (the
  middle value; for an even count, (a + b) / 2 of the two middle values);
- frame i is a stutter event when t_i <= 1000 and t_i > 2 * m_i and t_i > m_i + 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from certgen.metrics.figures import (
    _ms,
    _slowest_tail,
    compute_sop_metrics,
    positive_frames,
    round_half_away,
)
from certgen.model.figures import FrameDiagnostics, RunMetrics
from certgen.model.thresholds import Weights

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

STALL_MS = 200.0
STUTTER_MAX_MS = 1000.0
STUTTER_WINDOW_MS = 3000.0
STUTTER_RATIO = 2.0
STUTTER_MARGIN_MS = 8.0
TOO_SHORT_FRAMES = 900

# Lower bound on the window median from blocks of consecutive frames (see _block_floor).
_BLOCK = 32
_BLOCK_RANKS = (7, 9, 11, 13, 14)
# Medians by padded rows cost about 10 ns per window frame, by the wavelet matrix about 0.3 us
# per capture frame: rows are used while the candidates' windows hold at most this many times
# the capture's frame count.
_ROWS_COST_PER_FRAME = 20
_ROWS_CELLS = 1 << 21


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


def _range_min(values: FloatArray, lo: IntArray, hi: IntArray) -> FloatArray:
    """min(values[lo[q]:hi[q]]) for every query q (hi > lo), by a sparse table: O(N log W).

    Level j of the table holds the minimum of every run of 2**j values; a query of length L
    is the minimum of two (overlapping) runs of the largest 2**j <= L.
    """
    out = np.empty(lo.size, dtype=np.float64)
    if lo.size == 0:
        return out
    # floor(log2(L)) exactly: frexp gives L = m * 2**e with 0.5 <= m < 1.
    level = np.frexp((hi - lo).astype(np.float64))[1] - 1
    table = values
    for j in range(int(level.max()) + 1):
        if j:
            half = 1 << (j - 1)
            table = np.minimum(table[:-half], table[half:])
        sel = np.flatnonzero(level == j)
        if sel.size:
            out[sel] = np.minimum(table[lo[sel]], table[hi[sel] - (1 << j)])
    return out


def _block_quantiles(frames: FloatArray) -> FloatArray:
    """Per block of _BLOCK consecutive frames, its values at the ranks _BLOCK_RANKS (the
    (r + 1)-th smallest: at most r of the block below it) and then at _BLOCK - 1 - r (the
    (r + 1)-th largest: at most r above it), one row per block, from one sort.

    The last, partial block is padded with +inf: still at most r real frames below the low
    quantiles, and at most r real frames above the high ones.
    """
    ranks = np.asarray(_BLOCK_RANKS)
    kth = np.concatenate((ranks, _BLOCK - 1 - ranks))
    n = frames.size
    whole = n // _BLOCK
    parts = [frames[: whole * _BLOCK].reshape(whole, _BLOCK)]
    if n % _BLOCK:
        last_block = np.full((1, _BLOCK), np.inf)
        last_block[0, : n - whole * _BLOCK] = frames[whole * _BLOCK :]
        parts.append(last_block)
    # A full sort of the short rows is faster than np.partition at ten ranks (SIMD networks).
    return np.concatenate([np.sort(part, axis=1)[:, kth] for part in parts if part.size])


def _block_floor(frames: FloatArray, present: FloatArray, quantiles: FloatArray) -> FloatArray:
    """A lower bound of every frame's window median, far tighter than the window minimum.

    Cut the frames into blocks of _BLOCK consecutive frames and let q_b be the (r + 1)-th
    smallest of block b, so that at most r of its frames are below q_b. Take, for the frames of
    one block, the union of their windows (spanning U blocks) and the part common to all of
    them (c frames). A frame's window then overlaps at most U blocks, so v = min q_b over those
    U blocks has at most U * r of its frames below it, and it holds at least c frames. When
    U * r < (c + 1) // 2, the lower middle value, hence the median, is >= v. Each block uses the
    largest r of _BLOCK_RANKS for which that holds; where none does, the bound is -inf.
    Everything is computed once per block, not per frame (quantiles: _block_quantiles): the
    result holds one bound per block.
    """
    n = frames.size
    half = STUTTER_WINDOW_MS / 2.0
    ranks = np.asarray(_BLOCK_RANKS)
    first = np.arange(quantiles.shape[0]) * _BLOCK
    last = np.minimum(first + _BLOCK, n) - 1
    union_lo = np.searchsorted(present, present[first] - half, side="left")
    union_hi = np.searchsorted(present, present[last] + half, side="right")
    common_lo = np.searchsorted(present, present[last] - half, side="left")
    common_hi = np.searchsorted(present, present[first] + half, side="right")
    need = (common_hi - common_lo + 1) // 2
    block_lo = union_lo // _BLOCK
    block_hi = (union_hi - 1) // _BLOCK + 1
    # The largest r with U * r < need, i.e. r <= (need - 1) // U; -1 if none.
    chosen = np.searchsorted(ranks, (need - 1) // (block_hi - block_lo), side="right") - 1
    bound = np.full(quantiles.shape[0], -np.inf)
    for column in range(ranks.size):
        sel = np.flatnonzero(chosen == column)
        if sel.size:
            table = np.ascontiguousarray(quantiles[:, column])
            bound[sel] = _range_min(table, block_lo[sel], block_hi[sel])
    return bound


def _window_bounds(
    quantiles: FloatArray, lo: IntArray, hi: IntArray
) -> tuple[FloatArray, FloatArray]:
    """(lower, upper) bounds of the median of each window [lo, hi), from the block quantiles.

    For a window of w frames overlapping B blocks: v = min q_b over those blocks (q_b the
    (r + 1)-th smallest of block b) has at most B * r window frames below it, so when
    B * r < (w + 1) // 2 the lower middle value, hence the median, is >= v. Likewise
    V = max Q_b (Q_b the (r + 1)-th largest) has at most B * r window frames above it, so when
    B * r <= (w - 1) // 2 the upper middle value, hence the median (also the float mean of two
    middle values), is <= V. Each window uses the largest r of _BLOCK_RANKS that the condition
    allows; where none does, the bound is -inf (lower) or +inf (upper).
    """
    ranks = np.asarray(_BLOCK_RANKS)
    first = lo // _BLOCK
    last = (hi - 1) // _BLOCK
    spanned = last - first + 1
    lower = np.full(lo.size, -np.inf)
    upper = np.full(lo.size, np.inf)
    # The largest r with spanned * r < need, i.e. r <= (need - 1) // spanned; -1 if none.
    need = (hi - lo + 1) // 2
    low_choice = np.searchsorted(ranks, (need - 1) // spanned, side="right") - 1
    high_choice = np.searchsorted(ranks, ((hi - lo - 1) // 2) // spanned, side="right") - 1
    for column in range(ranks.size):
        sel = np.flatnonzero(low_choice == column)
        if sel.size:
            table = np.ascontiguousarray(quantiles[:, column])
            lower[sel] = _range_min(table, first[sel], last[sel] + 1)
        sel = np.flatnonzero(high_choice == column)
        if sel.size:
            table = -np.ascontiguousarray(quantiles[:, ranks.size + column])
            upper[sel] = -_range_min(table, first[sel], last[sel] + 1)
    return lower, upper


def _kth_smallest(values: FloatArray, lo: IntArray, hi: IntArray, k: IntArray) -> FloatArray:
    """The k[q]-th smallest (0-based) of values[lo[q]:hi[q]] for every query q, all at once.

    A wavelet matrix over the dense ranks of the values, walked top bit first: at each level the
    frames are stably split by that bit (zeros first), and every query learns whether its answer
    has the bit set by counting zeros in its range. One pass per bit of the rank, each a handful
    of vectorised operations, so the cost is O((N + Q) log N) whatever the data.
    """
    uniques, ranks = np.unique(values, return_inverse=True)
    n = values.size
    bits = max(1, int(uniques.size - 1).bit_length())
    cur = ranks.astype(np.int32).ravel()
    positions = np.arange(n, dtype=np.int32)
    ones = np.zeros(n + 1, dtype=np.int32)
    lo = lo.astype(np.int32)
    hi = hi.astype(np.int32)
    k = k.astype(np.int32)
    result = np.zeros(lo.size, dtype=np.int32)
    for level in range(bits - 1, -1, -1):
        bit = (cur >> level) & 1
        np.cumsum(bit, out=ones[1:])
        zero_count = n - int(ones[n])
        ones_lo = ones[lo]
        ones_hi = ones[hi]
        zeros_in = (hi - ones_hi) - (lo - ones_lo)
        left = k < zeros_in
        # Zeros keep their order at the front of the next level, ones follow them.
        lo = np.where(left, lo - ones_lo, zero_count + ones_lo)
        hi = np.where(left, hi - ones_hi, zero_count + ones_hi)
        k = np.where(left, k, k - zeros_in)
        result = (result << 1) | (~left).astype(np.int32)
        if level:
            dest = np.where(bit == 1, zero_count + ones[:-1], positions - ones[:-1])
            following = np.empty_like(cur)
            following[dest] = cur
            cur = following
    return uniques[result]


def _rows_medians(frames: FloatArray, lo: IntArray, hi: IntArray) -> FloatArray:
    """Window medians by partitioning padded rows, many windows per numpy call.

    A window of w values is laid in a row of W >= w cells (W of the parity of w) with
    (W - w) / 2 cells of -inf before and as many of +inf after, so that its middle value(s) sit
    at the row's middle cells (W - 1) // 2 and W // 2 whatever w is: one np.partition of all
    rows at those two cells gives every median. Rows are grouped by length to limit padding.
    """
    width = hi - lo
    medians = np.empty(lo.size, dtype=np.float64)
    for parity in (0, 1):
        sel = np.flatnonzero(width % 2 == parity)
        sel = sel[np.argsort(width[sel], kind="stable")]
        start = 0
        while start < sel.size:
            # As many rows as fit in about _ROWS_CELLS cells (rows are sorted by length).
            stop = min(sel.size, start + max(1, _ROWS_CELLS // int(width[sel[start]])))
            while stop - start > 1 and (stop - start) * int(width[sel[stop - 1]]) > _ROWS_CELLS:
                stop = start + (stop - start) // 2
            chunk = sel[start:stop]
            cells = int(width[chunk].max())
            offset = (cells - width[chunk]) // 2
            column = np.arange(cells)
            inside = column[None, :] - offset[:, None]
            index = np.clip(lo[chunk, None] + inside, 0, frames.size - 1)
            rows = frames[index]
            rows[inside < 0] = -np.inf
            rows[inside >= width[chunk, None]] = np.inf
            middle = [(cells - 1) // 2, cells // 2]
            rows.partition(middle, axis=1)
            # np.median of an even count: the mean of the two middle values, (a + b) / 2.
            medians[chunk] = (
                rows[:, middle[0]] if parity else (rows[:, middle[0]] + rows[:, middle[1]]) / 2.0
            )
            start = stop
    return medians


def _window_medians(frames: FloatArray, lo: IntArray, hi: IntArray) -> FloatArray:
    """np.median(frames[lo[q]:hi[q]]) for every query q, bit for bit."""
    width = hi - lo
    if int(width.sum()) <= _ROWS_COST_PER_FRAME * frames.size:
        return _rows_medians(frames, lo, hi)
    even = np.flatnonzero(width % 2 == 0)
    middle = _kth_smallest(
        frames,
        np.concatenate((lo, lo[even])),
        np.concatenate((hi, hi[even])),
        np.concatenate(((width - 1) // 2, width[even] // 2)),
    )
    medians = middle[: lo.size].copy()
    # np.median of an even count: the mean of the two middle values, (a + b) / 2.
    medians[even] = (medians[even] + middle[lo.size :]) / 2.0
    return medians


def _is_stutter(times: FloatArray, medians: FloatArray) -> npt.NDArray[np.bool_]:
    """The rule itself, for frames already known to be <= 1 s."""
    return (times > STUTTER_RATIO * medians) & (times > medians + STUTTER_MARGIN_MS)


_LAST_EVENTS: list[tuple[FloatArray, IntArray]] = []
"""The last frames stutter_events was given and its answer (one entry): the diagnostics and the
hitch causes (certgen.metrics.measured) ask for the same capture's events one after the other."""


def stutter_events(frames: FloatArray) -> IntArray:
    """Indices of stutter events (the rule in the module docstring), in frame order.

    The same frames as the last call (compared value for value, a fraction of the rule's cost)
    give the same answer without computing it again; the answer is read-only."""
    if _LAST_EVENTS:
        seen, events = _LAST_EVENTS[0]
        if seen.shape == frames.shape and np.array_equal(seen, frames):
            return events
    events = _stutter_events(frames)
    events.flags.writeable = False
    _LAST_EVENTS[:] = [(frames.copy(), events)]
    return events


def _stutter_events(frames: FloatArray) -> IntArray:
    """stutter_events without the memo.

    Exact and fast on any capture: cheap bounds of each window's median decide most frames,
    since the rule is monotone in the median. Lower bounds (the block bound of _block_floor per
    block, then per window, and the window minimum) rule out the frames that cannot qualify;
    an upper bound (_window_bounds) confirms the frames that qualify whatever the median is.
    The exact median is taken for the frames left: by padded rows when they are few, otherwise
    all at once by _kth_smallest.
    """
    if frames.size == 0:
        return np.empty(0, dtype=np.intp)
    present = np.cumsum(frames)
    quantiles = _block_quantiles(frames)
    floor = _block_floor(frames, present, quantiles)
    # t > 2m and t > m + 8 is t > max(2m, m + 8), one threshold per block; t > m + 8 with
    # m > 0 needs t > 8 (the bound may be -inf).
    line = np.maximum(np.maximum(STUTTER_RATIO * floor, floor + STUTTER_MARGIN_MS),
                      STUTTER_MARGIN_MS)
    whole = frames.size // _BLOCK * _BLOCK
    rows = frames[:whole].reshape(-1, _BLOCK)
    maybe = np.flatnonzero(
        ((rows > line[: rows.shape[0], None]) & (rows <= STUTTER_MAX_MS)).ravel()
    )
    if whole < frames.size:
        rest = frames[whole:]
        extra = np.flatnonzero((rest > line[-1]) & (rest <= STUTTER_MAX_MS)) + whole
        maybe = np.concatenate((maybe, extra))
    half = STUTTER_WINDOW_MS / 2.0
    at = present[maybe]
    lo = np.searchsorted(present, at - half, side="left")
    hi = np.searchsorted(present, at + half, side="right")
    times = frames[maybe]
    lower, upper = _window_bounds(quantiles, lo, hi)
    sure = _is_stutter(times, upper)
    keep = np.flatnonzero(~sure & _is_stutter(times, lower))
    confirmed = maybe[sure]
    maybe, lo, hi, times = maybe[keep], lo[keep], hi[keep], times[keep]
    keep = np.flatnonzero(_is_stutter(times, _range_min(frames, lo, hi)))
    maybe, lo, hi, times = maybe[keep], lo[keep], hi[keep], times[keep]
    medians = _window_medians(frames, lo, hi)
    found = maybe[_is_stutter(times, medians)]
    return np.sort(np.concatenate((confirmed, found))).astype(np.intp)


def _top_percentiles(frames: FloatArray, stall_count: int) -> tuple[float, float] | None:
    """np.percentile(counted, [99, 99.9]) bit for bit, counted = the frames up to the stall line.

    numpy's linear method: virtual index h = (n - 1) * q / 100, a and b the values of ranks
    floor(h) and floor(h) + 1 (both the largest when h >= n - 1), gamma = h - floor(h), and
    a + (b - a) * gamma, or b - (b - a) * (1 - gamma) when gamma >= 0.5. Both ranks sit in the
    top 1 % + 1 of the counted frames, so only that tail is found (with the stalls, which are
    larger than every counted frame) and sorted: no copy or partition of the whole capture,
    and no np.percentile (whose np.unique imports numpy.ma, ~10 ms of start-up).
    """
    n = frames.size - stall_count
    if n <= 0:
        return None
    virtual = (n - 1) * np.true_divide(np.asarray([99.0, 99.9]), 100)
    previous = np.floor(virtual)
    gamma = virtual - previous
    low = np.where(virtual >= n - 1, n - 1, previous).astype(np.intp)
    high = np.where(virtual >= n - 1, n - 1, previous + 1).astype(np.intp)
    first = int(low.min())
    tail = np.sort(_slowest_tail(frames, n - first + stall_count))[: n - first]
    a = tail[low - first]
    b = tail[high - first]
    diff = b - a
    values = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
    return float(values[0]), float(values[1])


def compute_diagnostics(frames: FloatArray) -> Diagnostics:
    """Diagnostics of positive frame times (ms)."""
    stalled = frames > STALL_MS
    stall_count = int(np.count_nonzero(stalled))
    p99 = p99_9 = None
    top = _top_percentiles(frames, stall_count)
    if top is not None:
        p99, p99_9 = top
    return Diagnostics(
        p99_ms=p99,
        p99_9_ms=p99_9,
        stall_count=stall_count,
        stall_total_ms=float(np.sum(frames[stalled])) if stall_count else 0.0,
        stutter_count=int(stutter_events(frames).size),
        too_short=bool(frames.size < TOO_SHORT_FRAMES),
    )


def compute_metrics(frame_times_ms: FloatArray, weights: Weights, *, source: str = "capture") -> RunMetrics:
    """SOP v1.1 Step 4.2 figures and the diagnostics for one capture's frame times: the
    record's `RunMetrics` (certgen.model), the same object `metrics --json` prints."""
    sop = compute_sop_metrics(frame_times_ms, weights, source=source)
    frames, _ = positive_frames(frame_times_ms)
    diag = compute_diagnostics(frames)
    # The pinned keys of `certgen metrics --json` / `runs[].metrics`, in order (nulls where the
    # null rule says so); diagnostic times to 0.001 ms.
    return RunMetrics(
        frames=sop.frames,
        dropped_nonpositive=sop.dropped_nonpositive,
        avg_fps=sop.avg_fps,
        low_1pct_fps=sop.low_1pct_fps,
        low_0_1pct_fps=sop.low_0_1pct_fps,
        consistency_gap=sop.consistency_gap,
        stutter=sop.stutter,
        fluidity_score=sop.fluidity_score,
        corrupted=sop.corrupted,
        p99_ms=_ms(diag.p99_ms),
        p99_9_ms=_ms(diag.p99_9_ms),
        stall_count=diag.stall_count,
        stall_total_ms=round_half_away(diag.stall_total_ms, 3),
        stutter_count=diag.stutter_count,
        too_short=diag.too_short,
    )


# --------------------------------------------------------------------------- shown on documents
# Pure rules over a record's figures, so a document can apply them without reaching a reader.

P99_MIN_SAMPLES: Final = 100
"""The fewest values a 99th percentile is read from without a mark: below 100 values it is
interpolated between the largest one or two, not a tail of the distribution, so documents mark
it as indicative (docs/spec/metrics.md, "Measured by the capture")."""


DISPLAYED_RATE_SHARE: Final = 0.10
"""A run's displayed rate differs from its graded one when the two average FPS figures are more
than this share of the graded figure apart (docs/spec/metrics.md, "Displayed beside graded")."""

NOT_DISPLAYED_SHARE: Final = 0.01
"""...or when more than this share of its frames never reached the screen (a tool writes no
display change for the first frame of a swap chain: one frame is not a difference)."""


@dataclass(frozen=True)
class DisplayedBesideGraded:
    """A run whose screen showed another rate than the one graded: both average FPS figures as
    recorded, and the frames never displayed."""

    graded_fps: float
    displayed_fps: float
    not_displayed: int


def displayed_beside_graded(metrics: RunMetrics | None, diagnostics: FrameDiagnostics | None
                            ) -> DisplayedBesideGraded | None:
    """The graded and displayed rates of a run when they differ (DISPLAYED_RATE_SHARE,
    NOT_DISPLAYED_SHARE), else None; None too without a display-change column or a figure.
    The grade is never touched: the SOP grades presents."""
    display = None if diagnostics is None else diagnostics.display
    if metrics is None or display is None or display.figures is None:
        return None
    graded, shown = metrics.avg_fps, display.figures.avg_fps
    if graded is None or shown is None or graded <= 0:
        return None
    rows = display.figures.frames + display.not_displayed  # every frame of the column
    if abs(shown - graded) / graded > DISPLAYED_RATE_SHARE or \
            display.not_displayed / rows > NOT_DISPLAYED_SHARE:
        return DisplayedBesideGraded(graded, shown, display.not_displayed)
    return None
