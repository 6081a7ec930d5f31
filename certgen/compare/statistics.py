"""Before/after statistics (docs/spec/compare.md): which frames count, the noise floor, paired series.

A report compares two captures of one configuration ("before" and "after" one change), or a
paired A/B series, and never calls a difference a change when the measurement's own noise
explains it. Everything here is a pure function over frame times and figures; reading captures
and writing documents live in certgen.builders.report and certgen.render.report.

Counting rules, in this order (docs/spec/compare.md):
1. foreground only, where the capture carries focus events (1 s dropped after the game regains
   the foreground, 0.2 s dropped before a loss of focus); most formats carry none, and then the
   report says focus was not recorded;
2. stalls: an interval over 200 ms is kept out of the mean and every percentile, and counted;
3. average FPS, 1% / 0.1% lows: certgen.metrics.figures.fps_figures (the certificate's own arithmetic);
4. p99 / p99.9 frame times in ms: certgen.metrics.diagnostics.percentile_ms;
5. under 900 counted frames: too short to read;
6. stutter count: certgen.metrics.diagnostics.stutter_events (the same function as the certificates).

Noise floor: each capture is cut into 60 s blocks of capture time; a block counts only when it is
whole (the capture runs past its end), holds no lost event and loses no frame to the foreground
rule. With at least two such blocks per side, the floor of a figure is the half-width of the 95%
Welch interval of the difference of block means, as a percentage of the "before" figure. It is
never below MIN_FLOOR_FPS (one printed digit; see there). A difference inside it is "no change".

Paired series: per pair, the difference after - before as a percentage of that pair's before
figure; a change is reported only when the exact Wilcoxon signed-rank test (p < 0.05), the 95%
bootstrap interval of the median difference (10,000 resamples, fixed seed) and the smallest
detectable effect of a pilot all agree, with at least 6 pairs.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from certgen.metrics.diagnostics import (
    STALL_MS,
    TOO_SHORT_FRAMES,
    percentile_ms,
    stutter_events,
)
from certgen.metrics.figures import fps_figures, positive_frames, round_half_away
from certgen.record import chart_series as record_chart

if TYPE_CHECKING:
    from certgen.record import Chart

FloatArray = npt.NDArray[np.float64]

FOCUS_REGAIN_DROP_MS = 1000.0
"""After the game regains the foreground, its first second is left out (a chosen value)."""
FOCUS_LOSS_DROP_MS = 200.0
"""Before a detected loss of focus, the last 0.2 s is left out."""
BLOCK_MS = 60_000.0
"""Noise-floor block length: 60 s of capture time."""
MIN_BLOCKS = 2
"""Whole blocks each side needs before a floor exists (one block has no spread)."""
CONFIDENCE = 0.95
MIN_FLOOR_FPS = 0.1
"""The smallest floor, in FPS: the figures are printed to 0.1 FPS, each rounded by up to 0.05,
so two printed figures can differ by up to 0.1 FPS through rounding alone. Identical blocks (a
zero block-to-block spread) therefore still give this floor, never zero."""
MIN_PAIRS = 6
"""With 5 pairs the smallest two-sided exact signed-rank p-value is 2/32 = 0.0625 > 0.05."""
RECOMMENDED_PAIRS = 8
MIN_PILOT_RUNS = 10
"""The pilot is 10 runs of the unchanged configuration (docs/spec/compare.md)."""
ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_061_006
"""Fixed seed of numpy's default Generator: the same series gives the same document."""

FIGURES: tuple[str, ...] = ("avg_fps", "low_1pct_fps", "low_0_1pct_fps")
"""The figures a floor and a series are computed for, in report order."""

Verdict = Literal["higher", "lower", "no_change", "not_comparable"]


# --------------------------------------------------------------------------- counting rules


@dataclass(frozen=True)
class FocusChange:
    """A focus event of a capture: at capture time `at_ms` the game gained or lost the foreground."""

    at_ms: float
    foreground: bool


@dataclass(frozen=True)
class SideInput:
    """One side's frame times and what the capture says about focus and lost events."""

    frame_times_ms: FloatArray
    """Every interval the capture gave, in file order (values <= 0 are dropped and counted)."""
    source: str
    focus: tuple[FocusChange, ...] | None = None
    """None: the format records no focus events (nothing is dropped; the report says so)."""
    lost_event_frames: tuple[int, ...] = ()
    """Indices (into the positive frames) next to which the recorder lost events."""
    lost_events_unplaced: bool = False
    """The capture lost events but does not say where: no block can be trusted."""
    lost_reason: str | None = None


@dataclass(frozen=True)
class SideSummary:
    """The counted figures of one side (rounded as printed)."""

    source: str
    frames: int
    """Counted frames: positive, in the foreground, at most 200 ms."""
    dropped_nonpositive: int
    focus_recorded: bool
    focus_excluded_frames: int
    focus_excluded_ms: float
    excluded_over_stall: int
    """Frames over STALL_MS kept out of every mean and percentile."""
    stall_total_ms: float
    avg_fps: float | None
    low_1pct_fps: float | None
    low_0_1pct_fps: float | None
    p99_ms: float | None
    p99_9_ms: float | None
    too_short: bool
    stutter_count: int
    duration_ms: float
    """Capture time of the frames left after the foreground rule (stalls included)."""

    def figure(self, name: str) -> float | None:
        """One of FIGURES by name."""
        value: float | None = getattr(self, name)
        return value


def foreground_mask(frames: FloatArray, focus: tuple[FocusChange, ...] | None) -> npt.NDArray[np.bool_]:
    """True for frames the foreground rule keeps (all of them when focus is not recorded).

    A frame sits at its present time (the running sum of intervals). It is kept when the game
    held the foreground at that time, at least 1 s after it last regained it, and more than
    0.2 s before it next loses it. Before the first event the state is the opposite of that
    event (a capture that starts with "gained" started in the background).
    """
    keep = np.ones(frames.size, dtype=bool)
    if not focus or frames.size == 0:
        return keep
    events = sorted(focus, key=lambda e: (e.at_ms, e.foreground))
    present = np.cumsum(frames)
    state = not events[0].foreground
    start = -math.inf
    for event in events:
        segment = (present > start) & (present <= event.at_ms)
        if not state:
            keep[segment] = False
        elif not event.foreground:
            # The last 0.2 s before a loss of focus.
            keep[segment & (present > event.at_ms - FOCUS_LOSS_DROP_MS)] = False
        if event.foreground and not state:
            # The first second after the game regains the foreground.
            keep[(present > event.at_ms) & (present <= event.at_ms + FOCUS_REGAIN_DROP_MS)] = False
        state = event.foreground
        start = event.at_ms
    if not state:
        keep[present > start] = False
    return keep


@dataclass(frozen=True)
class CountedSide:
    """A side after the counting rules, with the arrays the CSV and the floor need."""

    summary: SideSummary
    frames: FloatArray
    """Positive frames left after the foreground rule, stalls included, in capture order."""
    present_ms: FloatArray
    """Capture time of each of `frames` (running sum over all positive frames)."""
    positive: FloatArray
    """Every positive frame, foreground or not: the capture's time line, for the blocks."""
    clean: npt.NDArray[np.bool_]
    """Per positive frame: kept by the foreground rule and not next to a lost event."""
    lost_events_unplaced: bool
    lost_reason: str | None


def count_side(side: SideInput) -> CountedSide:
    """Apply the counting rules in order and compute one side's figures."""
    positive, dropped = positive_frames(np.asarray(side.frame_times_ms, dtype=np.float64))
    present_all = np.cumsum(positive)
    keep = foreground_mask(positive, side.focus)
    frames = positive[keep]
    present = present_all[keep]
    stalled = frames > STALL_MS
    counted = frames[~stalled]
    fps = fps_figures(counted)
    n = int(counted.size)
    clean = keep.copy()
    for i in side.lost_event_frames:
        if 0 <= i < clean.size:
            clean[i] = False
    summary = SideSummary(
        source=side.source,
        frames=n,
        dropped_nonpositive=dropped,
        focus_recorded=side.focus is not None,
        focus_excluded_frames=int(positive.size - frames.size),
        focus_excluded_ms=_ms(float(np.sum(positive[~keep]))),
        excluded_over_stall=int(np.count_nonzero(stalled)),
        stall_total_ms=_ms(float(np.sum(frames[stalled]))),
        avg_fps=fps.avg_fps,
        low_1pct_fps=fps.low_1pct_fps,
        low_0_1pct_fps=fps.low_0_1pct_fps,
        p99_ms=_opt_ms(percentile_ms(counted, 99.0)),
        p99_9_ms=_opt_ms(percentile_ms(counted, 99.9)),
        too_short=n < TOO_SHORT_FRAMES,
        stutter_count=int(stutter_events(frames).size),
        duration_ms=_ms(float(np.sum(frames))),
    )
    return CountedSide(
        summary=summary,
        frames=frames,
        present_ms=present,
        positive=positive,
        clean=clean,
        lost_events_unplaced=side.lost_events_unplaced,
        lost_reason=side.lost_reason,
    )


def _ms(value: float) -> float:
    """Times are kept to 0.001 ms, the capture tools' own resolution."""
    return round_half_away(value, 3)


def _opt_ms(value: float | None) -> float | None:
    return None if value is None else _ms(value)


# --------------------------------------------------------------------------- noise floor


@dataclass(frozen=True)
class Block:
    """One whole 60 s block of a side and its figures (stalls kept out)."""

    index: int
    frames: int
    avg_fps: float | None
    low_1pct_fps: float | None
    low_0_1pct_fps: float | None


def whole_blocks(
    positive: FloatArray, clean: npt.NDArray[np.bool_], *, block_ms: float = BLOCK_MS
) -> tuple[Block, ...]:
    """The whole, clean 60 s blocks of a capture's positive frames.

    A frame belongs to the block in which it is presented (a frame ending exactly on a boundary
    closes the earlier block). A block is whole when the capture runs to its end; it is clean
    when every frame in it is kept by the foreground rule and none sits next to a lost event.
    """
    if positive.size == 0:
        return ()
    present = np.cumsum(positive)
    total = float(present[-1])
    n_whole = int(total // block_ms)
    block_of = np.ceil(present / block_ms).astype(np.int64) - 1
    block_of[block_of < 0] = 0
    out = []
    for j in range(n_whole):
        lo = int(np.searchsorted(block_of, j, side="left"))
        hi = int(np.searchsorted(block_of, j, side="right"))
        if hi <= lo or not bool(np.all(clean[lo:hi])):
            continue
        frames = positive[lo:hi]
        counted = frames[frames <= STALL_MS]
        if counted.size == 0:
            continue
        fps = fps_figures(counted)
        out.append(Block(j, int(counted.size), fps.avg_fps, fps.low_1pct_fps, fps.low_0_1pct_fps))
    return tuple(out)


@dataclass(frozen=True)
class Floor:
    """The noise floor of one figure and what the difference means against it."""

    figure: str
    verdict: Verdict
    reason: str | None
    """Why not comparable (a message id): too_few_blocks_before/after, lost_events_*, too_short, no_value."""
    before: float | None
    after: float | None
    difference_pct: float | None
    """(after - before) / before * 100 of the printed figures, 2 decimals."""
    floor_pct: float | None
    """Half-width of the 95% Welch interval, % of before, 2 decimals; never zero."""
    welch_pct: float | None
    """The Welch half-width before the minimum was applied (None when there is no spread)."""
    minimum_applied: bool
    df: float | None
    blocks_before: int
    blocks_after: int


def welch_half_width(before: FloatArray, after: FloatArray, confidence: float = CONFIDENCE) -> tuple[float, float | None]:
    """Half-width of the Welch interval for mean(after) - mean(before), and its degrees of freedom.

    Both sides need at least two values. With no spread on either side the half-width is 0 and
    the degrees of freedom are undefined (None).
    """
    from scipy import stats

    n1, n2 = before.size, after.size
    v1 = float(np.var(before, ddof=1)) / n1
    v2 = float(np.var(after, ddof=1)) / n2
    se2 = v1 + v2
    if se2 == 0.0:
        return 0.0, None
    df = se2**2 / (v1**2 / (n1 - 1) + v2**2 / (n2 - 1))
    t = float(stats.t.ppf(0.5 + confidence / 2.0, df))
    return t * math.sqrt(se2), df


def noise_floor(before: CountedSide, after: CountedSide) -> tuple[Floor, ...]:
    """The floor and verdict of each figure in FIGURES (docs/spec/compare.md, noise floor)."""
    blocks_b = () if before.lost_events_unplaced else whole_blocks(before.positive, before.clean)
    blocks_a = () if after.lost_events_unplaced else whole_blocks(after.positive, after.clean)
    out = []
    for name in FIGURES:
        b = before.summary.figure(name)
        a = after.summary.figure(name)
        diff = None
        if a is not None and b:
            diff = round_half_away(100.0 * (a - b) / b, 2)
        reason = _not_comparable_reason(before, after, blocks_b, blocks_a, b, a)
        if reason is not None:
            out.append(Floor(name, "not_comparable", reason, b, a, diff, None, None, False, None,
                             len(blocks_b), len(blocks_a)))
            continue
        assert b is not None and a is not None and diff is not None
        vb = np.array([getattr(x, name) for x in blocks_b if getattr(x, name) is not None])
        va = np.array([getattr(x, name) for x in blocks_a if getattr(x, name) is not None])
        half, df = welch_half_width(vb, va)
        welch_pct = 100.0 * half / b if half > 0 else None
        minimum_pct = 100.0 * MIN_FLOOR_FPS / b
        # Rounded up to 0.01 %: the printed floor never understates the noise, and never reads 0.
        floor_pct = math.ceil(max(welch_pct or 0.0, minimum_pct) * 100.0 - 1e-9) / 100.0
        verdict: Verdict
        if abs(diff) <= floor_pct:
            verdict = "no_change"
        else:
            verdict = "higher" if diff > 0 else "lower"
        out.append(Floor(
            name, verdict, None, b, a, diff, floor_pct,
            None if welch_pct is None else round_half_away(welch_pct, 2),
            welch_pct is None or welch_pct < minimum_pct,
            None if df is None else round_half_away(df, 2),
            len(blocks_b), len(blocks_a),
        ))
    return tuple(out)


def _not_comparable_reason(
    before: CountedSide,
    after: CountedSide,
    blocks_b: tuple[Block, ...],
    blocks_a: tuple[Block, ...],
    b: float | None,
    a: float | None,
) -> str | None:
    if b is None or a is None or b == 0:
        return "no_value"
    if before.summary.too_short or after.summary.too_short:
        return "too_short"
    if before.lost_events_unplaced:
        return "lost_events_before"
    if after.lost_events_unplaced:
        return "lost_events_after"
    if len(blocks_b) < MIN_BLOCKS:
        return "too_few_blocks_before"
    if len(blocks_a) < MIN_BLOCKS:
        return "too_few_blocks_after"
    return None


# --------------------------------------------------------------------------- paired series


@dataclass(frozen=True)
class SeriesFigure:
    """The paired-series test of one figure."""

    figure: str
    pairs: int
    differences_pct: tuple[float, ...]
    """Per pair: (after - before) / before * 100."""
    median_pct: float
    p_value: float
    ci_low_pct: float
    ci_high_pct: float
    smallest_effect_pct: float | None
    """From the pilot (None without one): see smallest_detectable_effect."""
    enough_pairs: bool
    p_ok: bool
    ci_excludes_zero: bool
    effect_ok: bool
    change_reported: bool
    direction: Verdict
    """higher / lower when a change is reported, no_change otherwise."""


def smallest_detectable_effect(pilot: FloatArray, confidence: float = CONFIDENCE) -> float:
    """Smallest effect (in %) the configuration can detect, from pilot runs with no change.

    The pilot's run-to-run spread is its coefficient of variation c (sample standard deviation
    over the mean, in %). Two runs of an unchanged configuration differ by c * sqrt(2) in
    standard deviation, so a difference smaller than t(0.975, m - 1) * sqrt(2) * c (m pilot runs)
    is one the configuration produces by itself 1 time in 20: it cannot be told from repeating.
    """
    from scipy import stats

    m = pilot.size
    mean = float(np.mean(pilot))
    cv = 100.0 * float(np.std(pilot, ddof=1)) / mean
    t = float(stats.t.ppf(0.5 + confidence / 2.0, m - 1))
    return t * math.sqrt(2.0) * cv


def bootstrap_median_interval(
    differences: FloatArray,
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the median of `differences` (fixed seed, reproducible)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, differences.size, size=(resamples, differences.size))
    medians = np.median(differences[idx], axis=1)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(medians, [tail, 1.0 - tail])
    return float(lo), float(hi)


def series_figure(
    name: str, before: FloatArray, after: FloatArray, pilot: FloatArray | None
) -> SeriesFigure:
    """Test one figure over the pairs (before[i], after[i]); a change needs every condition."""
    from scipy import stats

    diffs = 100.0 * (after - before) / before
    n = int(diffs.size)
    median = float(np.median(diffs))
    if np.all(diffs == 0):
        p = 1.0
    else:
        p = float(stats.wilcoxon(diffs, method="exact").pvalue)
    lo, hi = bootstrap_median_interval(diffs)
    sde = None if pilot is None else smallest_detectable_effect(pilot)
    enough = n >= MIN_PAIRS
    p_ok = p < ALPHA
    ci_ok = lo > 0.0 or hi < 0.0
    effect_ok = sde is not None and abs(median) >= sde and (median != 0.0)
    reported = enough and p_ok and ci_ok and effect_ok
    direction: Verdict = "no_change"
    if reported:
        direction = "higher" if median > 0 else "lower"
    return SeriesFigure(
        figure=name,
        pairs=n,
        differences_pct=tuple(round_half_away(float(d), 2) for d in diffs),
        median_pct=round_half_away(median, 2),
        p_value=round_half_away(p, 4),
        ci_low_pct=round_half_away(lo, 2),
        ci_high_pct=round_half_away(hi, 2),
        smallest_effect_pct=None if sde is None else round_half_away(sde, 2),
        enough_pairs=enough,
        p_ok=p_ok,
        ci_excludes_zero=ci_ok,
        effect_ok=effect_ok,
        change_reported=reported,
        direction=direction,
    )


def paired_series(
    pairs: list[tuple[SideSummary, SideSummary]], pilot: list[SideSummary] | None
) -> tuple[SeriesFigure, ...]:
    """The series test of every figure in FIGURES (pairs of counted sides, in run order).

    A figure missing on any run (an empty side) leaves that figure untested: it is skipped.
    """
    out = []
    for name in FIGURES:
        b = [p[0].figure(name) for p in pairs]
        a = [p[1].figure(name) for p in pairs]
        if any(v is None or v == 0 for v in b) or any(v is None for v in a):
            continue
        pv = None
        if pilot is not None:
            values = [s.figure(name) for s in pilot]
            if all(v is not None and v > 0 for v in values):
                pv = np.asarray(values, dtype=np.float64)
        out.append(series_figure(name, np.asarray(b, dtype=np.float64),
                                 np.asarray(a, dtype=np.float64), pv))
    return tuple(out)


# --------------------------------------------------------------------------- chart and CSV


def chart_series(side: CountedSide, buckets: int = 400) -> Chart:
    """A side's frame times for the chart, as a certificate's run chart (record.chart_series):
    min/max per bucket of capture time on the capture's own clock (frames left out by the
    foreground rule leave their gap), and the side's average (as the mean frame time) and 1%
    and 0.1% lows."""

    return record_chart(side.frames, side.summary.low_1pct_fps, side.summary.low_0_1pct_fps,
                        avg_fps=side.summary.avg_fps, ends_ms=side.present_ms,
                        max_buckets=buckets)


METRIC_ROWS: tuple[str, ...] = (
    "frames",
    "avg_fps",
    "low_1pct_fps",
    "low_0_1pct_fps",
    "p99_ms",
    "p99_9_ms",
    "stutter_count",
    "excluded_over_stall_count",
    "excluded_over_stall_ms",
    "stall_time_ms",
)
"""Metric rows of the CSV, in order: the names docs/spec/compare.md lists, which reading a
benchmark CSV recomputes (certgen.metrics.pagefigures), so an export reads back without a warning.

`excluded_over_stall_count` is the number of frames over the stall line (200 ms).
`excluded_over_stall_ms` repeats it under the name the spec pins (spec/compare.md), for readers
that look the row up by that name; new readers use the `_count` row. `stall_time_ms` is the time
those frames took (the report's "Time in stalls, ms"), under a name that says it is a time."""

STALL_COUNT_ROWS: tuple[str, ...] = ("excluded_over_stall_count", "excluded_over_stall_ms")
"""The rows that hold the stall count (the new name, then the pinned one)."""


def csv_number(value: float | bool | None) -> str:
    """A number as the CSV writes it: dot decimal whatever the locale, shortest exact form."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


def metric_value(summary: SideSummary, name: str) -> float | int | bool | None:
    """The value of a CSV metric row."""
    if name in STALL_COUNT_ROWS:
        return summary.excluded_over_stall
    if name == "stall_time_ms":
        return summary.stall_total_ms
    value: float | int | bool | None = getattr(summary, name)
    return value


def csv_rows(sides: list[tuple[str, CountedSide]]) -> list[tuple[str, str, str, str]]:
    """The export table: metric rows then every frame row (stalls included) per side."""
    rows: list[tuple[str, str, str, str]] = []
    for side, counted in sides:
        for name in METRIC_ROWS:
            rows.append((side, "metric", name, csv_number(metric_value(counted.summary, name))))
    for side, counted in sides:
        for value in counted.frames.tolist():
            rows.append((side, "frame", "frame_time_ms", csv_number(value)))
    return rows


def csv_text(sides: list[tuple[str, CountedSide]]) -> str:
    """The CSV export as text: header side,kind,name,value, LF line ends, no quoting needed."""

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("side", "kind", "name", "value"))
    writer.writerows(rows for rows in csv_rows(sides))
    return buf.getvalue()
