"""What the capture measured beside the present intervals: latency, animation error, refresh
cadence and the causes of its hitches.

Diagnostics beside the SOP figures, never graded and never instead of them. PresentMon 2.x and
NVIDIA FrameView write these per frame (certgen.captures.presentmon reads them in the same pass
as the intervals, NaN for `NA` and for a frame that was not displayed); this stage summarises
them (docs/spec/metrics.md, "Measured by the capture"):

- **Latency** (`latency_of`): per column, over the displayed frames that carry a value, the
  median, 90th and 99th percentile (numpy's linear interpolation, as `p99_ms`). `NA` and 0 are
  no value (PresentMon 2.0.0 writes 0 where later versions write NA, and no latency is 0 ms);
  a negative value is left out and counted in `left_out`. A column the capture lacks, or with
  no value on any displayed frame (no latency markers in the game), is null: *not measured by
  this capture*. Latency is never estimated from present data.
- **Animation error** (`animation_error_of`): MsAnimationError (PresentMon 2.3.1 and later;
  `AnimationError` with `--v2_metrics`) is how far the frame's animation time advanced minus how
  far its display time advanced since the previous displayed frame; its sign says early or
  late, so the figures take |error|: the mean, the 99th percentile, and the share of time with
  |error| above the limits (ANIMATION_ERROR_LIMITS_MS), each frame weighted by its present
  interval (the time the SOP figures count it for; an interval of 0 ms or less weighs nothing,
  as the SOP drops it).

- **Refresh cadence** (`refresh_cadence_of`): the display-change intervals d (MsBetweenDisplayChange,
  CapFrameX's display times) over the frames with d > 0, against the refresh the card declares
  (test_system.display_timing; R Hz, one refresh P = 1000 / R ms). Fixed refresh: the share of
  display time held under 1.5 P (one refresh), 1.5 P to 2.5 P (two) and 2.5 P or more (three or
  more). VRR window [lo, hi] Hz: the share of display time with d inside [1000 / hi, 1000 / lo]
  ms, longer (below the window) and shorter (above it). Time beyond the refresh per minute:
  the sum of max(0, d - L) per 60,000 ms of display time, L = P at a fixed refresh and
  1000 / lo under VRR. And the share of displayed frames whose present interval and d differ
  by more than P / 2. Without a declared display only the frame count is given: every figure
  that needs the refresh rate is null, never guessed.
- **Hitch causes** (`hitch_causes_of`): every stutter event of the diagnostics' rule
  (certgen.metrics.diagnostics.stutter_events) set against its neighbours, the HITCH_NEIGHBOURS frames
  on each side (fewer at the ends): its excess E = t - (median neighbour frame time), and for
  each of CPU busy, GPU busy and CPU wait (WORK_COLUMNS) the frame's value minus the median of
  the neighbours' values (NaN left out). A busy column whose excess is at least HITCH_SHARE of E
  names the cause (cpu or gpu; both: the larger, gpu on a tie); else a CPU wait excess of at
  least HITCH_SHARE of E is present_wait (the CPU waited on the present queue or the display,
  neither processor busier); else unknown: never guessed. Needs a CPU busy or GPU busy column.

Figures are unrounded (documents round them when they print them). No value, no figure: null,
never 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from certgen.captures.presentmon import SENSOR_COLUMNS, WORK_COLUMNS
from certgen.metrics.diagnostics import stutter_events
from certgen.metrics.validity import validity_of
from certgen.model.measured import (
    AnimationError,
    DisplayTiming,
    HeldShares,
    HitchCause,
    HitchCauses,
    HitchCauseTotal,
    HitchEvent,
    Latency,
    LatencySpread,
    MeasuredByCapture,
    PowerThermals,
    RefreshCadence,
    SensorEnds,
    VrrShares,
)

if TYPE_CHECKING:
    from certgen.captures.model import Capture

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

LATENCY_COLUMNS: Final = {
    "pc_latency_ms": ("MsPCLatency", "PCLatency"),
    "click_to_photon_ms": ("MsClickToPhotonLatency", "ClickToPhotonLatency"),
    "all_input_to_photon_ms": ("MsAllInputToPhotonLatency", "AllInputToPhotonLatency"),
}
"""`latency` key → the PresentMon / FrameView columns it summarises (the default layout's name,
then `--v2_metrics`'s), the first the capture has."""
ANIMATION_ERROR_COLUMNS: Final = ("MsAnimationError", "AnimationError")
ANIMATION_ERROR_LIMITS_MS: Final = (1.0, 4.0)
"""The |error| thresholds of the two time shares (ms): documented diagnostic thresholds, not SOP
rules (at 60 Hz, 1 ms is a sixteenth of a refresh and 4 ms a quarter)."""



def latency_spread(values: FloatArray, column: str) -> LatencySpread | None:
    """Median, p90 and p99 of the positive values, or None without one. NaN and 0 are no
    value (PresentMon 2.0.0 writes 0 where later versions write NA: no input on that frame, and
    no latency is 0 ms); a negative value is left out and counted."""
    known = values[values > 0.0]  # NaN compares false: one pass, one copy
    if known.size == 0:
        return None
    median, p90, p99 = np.percentile(known, [50.0, 90.0, 99.0])
    return LatencySpread(frames=int(known.size), median=float(median), p90=float(p90),
                         p99=float(p99), left_out=int(np.count_nonzero(values < 0.0)),
                         column=column)


def latency_of(capture: Capture) -> Latency:
    """Each latency the capture measured (null: not measured by this capture)."""
    spreads: dict[str, LatencySpread | None] = {}
    for key, columns in LATENCY_COLUMNS.items():
        found = capture.measured_column(*columns)
        spreads[key] = None if found is None else latency_spread(found[1], found[0])
    return Latency(**spreads)


def animation_error_figures(errors_ms: FloatArray, intervals_ms: FloatArray, column: str
                            ) -> AnimationError | None:
    """The animation-error figures of the frames with a value (errors NaN elsewhere), each
    frame weighted by its present interval (t <= 0 weighs nothing); None without a value, or
    when no frame with a value has a positive interval (no time to share)."""
    has = np.isfinite(errors_ms)
    size = np.abs(errors_ms[has])
    weight = np.where(intervals_ms[has] > 0.0, intervals_ms[has], 0.0)
    total = float(weight.sum())
    if size.size == 0 or total <= 0.0:
        return None
    low, high = (float(weight[size > limit].sum()) / total for limit in ANIMATION_ERROR_LIMITS_MS)
    return AnimationError(frames=int(size.size), mean_abs_ms=float(size.mean()),
                          p99_abs_ms=float(np.percentile(size, 99.0)),
                          time_share_over_1ms=low, time_share_over_4ms=high, column=column)


def animation_error_of(capture: Capture) -> AnimationError | None:
    """The animation-error figures, or None: not measured by this capture."""
    found = capture.measured_column(*ANIMATION_ERROR_COLUMNS)
    if found is None:
        return None
    return animation_error_figures(found[1], capture.frame_times_ms, found[0])


HELD_LIMITS: Final = (1.5, 2.5)
"""Refresh intervals that split held-for-one from two, and two from three or more (the nearest
whole number of refreshes)."""
MINUTE_MS: Final = 60_000.0


def _share(d: FloatArray, where: npt.NDArray[np.bool_], total: float) -> float:
    """The share of display time `total` in the intervals `where` holds (each part summed on
    its own, so that no share is a difference of rounded sums)."""
    return float(d[where].sum()) / total


def refresh_cadence_figures(display_ms: FloatArray, present_ms: FloatArray, column: str,
                            timing: DisplayTiming | None) -> RefreshCadence | None:
    """The refresh-cadence figures of display-change intervals (NaN or <= 0: not displayed)
    beside the same frames' present intervals; None without a displayed frame."""
    shown = display_ms > 0.0  # NaN compares false
    d = display_ms[shown]
    if d.size == 0:
        return None
    if timing is None:
        return RefreshCadence(column=column, frames=int(d.size), refresh_hz=None,
                              vrr_min_hz=None, vrr_max_hz=None, held=None, vrr_window=None,
                              beyond_refresh_ms_per_min=None, present_display_mismatch_share=None)
    total = float(d.sum())
    refresh = timing.refresh_ms
    held = vrr_window = None
    if timing.vrr_min_hz is not None and timing.vrr_max_hz is not None:
        longest, shortest = 1000.0 / timing.vrr_min_hz, 1000.0 / timing.vrr_max_hz
        vrr_window = VrrShares(inside=_share(d, (d >= shortest) & (d <= longest), total),
                               below=_share(d, d > longest, total),
                               above=_share(d, d < shortest, total))
        limit = longest
    else:
        one, two = (refresh * k for k in HELD_LIMITS)
        held = HeldShares(one=_share(d, d < one, total), two=_share(d, (d >= one) & (d < two), total),
                          three_or_more=_share(d, d >= two, total))
        limit = refresh
    beyond = float(np.maximum(d - limit, 0.0).sum()) / (total / MINUTE_MS)
    mismatch = np.abs(present_ms[shown] - d) > refresh / 2.0
    return RefreshCadence(
        column=column, frames=int(d.size), refresh_hz=timing.refresh_hz,
        vrr_min_hz=timing.vrr_min_hz, vrr_max_hz=timing.vrr_max_hz, held=held,
        vrr_window=vrr_window, beyond_refresh_ms_per_min=beyond,
        present_display_mismatch_share=float(np.count_nonzero(mismatch)) / d.size)


def refresh_cadence_of(capture: Capture, timing: DisplayTiming | None) -> RefreshCadence | None:
    """The refresh cadence, or None: not measured by this capture (no display-change column,
    or no displayed frame)."""
    if capture.display_change_ms is None:
        return None
    return refresh_cadence_figures(capture.display_change_ms, capture.frame_times_ms,
                                   capture.display_change_column or "", timing)


HITCH_NEIGHBOURS: Final = 32
"""Frames on each side of a stutter event whose medians are its surroundings."""
HITCH_SHARE: Final = 0.5
"""A column explains a hitch when its excess is at least this share of the frame's excess."""
HITCH_TOP: Final = 5
"""Events listed one by one (the longest)."""
HITCH_ROLES: Final = dict(zip(("cpu_busy", "cpu_wait", "gpu_busy"), WORK_COLUMNS, strict=True))
"""Role -> the columns that can fill it, the first the capture has (the reader's WORK_COLUMNS,
which read them)."""
CAUSES: Final[tuple[HitchCause, ...]] = ("cpu", "gpu", "present_wait", "unknown")


def _neighbour_medians(values: FloatArray, events: IntArray) -> FloatArray:
    """Per event, the median of the finite values of the HITCH_NEIGHBOURS frames on each side
    (the event itself left out; fewer at the ends), NaN where none is finite."""
    offsets = np.concatenate((np.arange(-HITCH_NEIGHBOURS, 0), np.arange(1, HITCH_NEIGHBOURS + 1)))
    index = events[:, None] + offsets[None, :]
    inside = (index >= 0) & (index < values.size)
    rows = np.where(inside, values[np.clip(index, 0, values.size - 1)], np.nan)
    rows.sort(axis=1)  # NaN sorts last
    count = np.count_nonzero(np.isfinite(rows), axis=1)
    at = np.arange(rows.shape[0])
    low = rows[at, np.maximum((count - 1) // 2, 0)]
    high = rows[at, np.maximum(count // 2, 0)]
    return np.where(count > 0, (low + high) / 2.0, np.nan)


def hitch_causes_figures(frames_ms: FloatArray, columns: dict[str, tuple[str, FloatArray]]
                         ) -> HitchCauses | None:
    """The hitch ledger of a run's frame times (every frame, as the capture has them) and its
    work columns (role -> (column, values per frame)); None without a CPU or GPU busy one."""
    if "cpu_busy" not in columns and "gpu_busy" not in columns:
        return None
    positive = np.flatnonzero(frames_ms > 0.0)  # the SOP's frames (t <= 0 dropped)
    frames = frames_ms[positive]
    events = stutter_events(frames)
    excess = frames[events] - _neighbour_medians(frames, events)
    shares: dict[str, FloatArray] = {}
    excess_of: dict[str, FloatArray] = {}
    for role, (_, values) in columns.items():
        kept = values[positive]
        excess_of[role] = kept[events] - _neighbour_medians(kept, events)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares[role] = np.where(excess > 0.0, excess_of[role] / excess, np.nan)
    none = np.full(events.size, np.nan)
    cpu, gpu, wait = (shares.get(r, none) for r in ("cpu_busy", "gpu_busy", "cpu_wait"))
    cpu_ok, gpu_ok = cpu >= HITCH_SHARE, gpu >= HITCH_SHARE  # NaN compares false
    cause = np.full(events.size, 3)  # unknown
    cause[wait >= HITCH_SHARE] = 2
    cause[cpu_ok] = 0
    cause[gpu_ok & (~cpu_ok | (gpu >= cpu))] = 1
    present_at = np.cumsum(frames)
    ledger = tuple(
        HitchCauseTotal(cause=name, events=int(np.count_nonzero(cause == k)),
                        time_ms=float(frames[events[cause == k]].sum()))
        for k, name in enumerate(CAUSES))
    longest = np.argsort(-frames[events], kind="stable")[:HITCH_TOP]

    def value(role: str, j: int) -> float | None:
        got = excess_of.get(role)
        return None if got is None or not np.isfinite(got[j]) else float(got[j])

    top = tuple(
        HitchEvent(frame=int(events[j]) + 1, at_s=float(present_at[events[j]]) / 1000.0,
                   frame_ms=float(frames[events[j]]),
                   surrounding_ms=float(frames[events[j]] - excess[j]),
                   cause=CAUSES[int(cause[j])], cpu_busy_excess_ms=value("cpu_busy", j),
                   gpu_busy_excess_ms=value("gpu_busy", j), wait_excess_ms=value("cpu_wait", j))
        for j in longest.tolist())
    return HitchCauses(events=int(events.size),
                       columns={role: column for role, (column, _) in sorted(columns.items())},
                       neighbours=HITCH_NEIGHBOURS, share=HITCH_SHARE, ledger=ledger, top=top)


def hitch_causes_of(capture: Capture) -> HitchCauses | None:
    """The hitch ledger, or None: not measured by this capture (no CPU or GPU busy column
    with a value: a column `NA` on every frame is no column)."""
    columns: dict[str, tuple[str, FloatArray]] = {}
    for role, names in HITCH_ROLES.items():
        found = capture.measured_column(*names)
        if found is not None and bool(np.isfinite(found[1]).any()):
            columns[role] = found
    return hitch_causes_figures(capture.frame_times_ms, columns)


POWER_COLUMNS: Final = SENSOR_COLUMNS[:4]
"""FrameView's power columns, in the order they are trusted: PCAT's measured board power, then
the drivers' own figures (NVIDIA's board power, AMD's), then NVIDIA's GPU-only power."""
TEMPERATURE_COLUMN, CLOCK_COLUMN = SENSOR_COLUMNS[4:]
SENSOR_SPAN_S: Final = 10.0
"""Seconds at each end of a run whose median sensor value is its start and end value (half
the run when it is shorter than twice that)."""


def _median(values: FloatArray) -> float | None:
    known = values[np.isfinite(values)]
    return float(np.median(known)) if known.size else None


def sensor_ends(values: FloatArray, frames_ms: FloatArray, column: str) -> SensorEnds:
    """A per-frame sensor's median over the first and the last SENSOR_SPAN_S seconds of the
    run (frames_ms: the present intervals beside it; t <= 0 counts no time)."""
    t = np.where(frames_ms > 0.0, frames_ms, 0.0)
    ends = np.cumsum(t)
    total = float(ends[-1]) if ends.size else 0.0
    span = min(SENSOR_SPAN_S * 1000.0, total / 2.0)
    first = ends - t < span  # began inside the first span
    last = ends > total - span  # ended inside the last span
    return SensorEnds(column=column, start=_median(values[first]), end=_median(values[last]))


def power_thermals_figures(frames_ms: FloatArray, power: tuple[str, FloatArray] | None,
                           temperature: FloatArray | None, clock: FloatArray | None
                           ) -> PowerThermals | None:
    """The power and sensor figures of a run (every frame as the capture has it, each sensor
    beside it, NaN: no reading); None without any of the three."""
    if power is None and temperature is None and clock is None:
        return None
    positive = frames_ms > 0.0
    fps = 1000.0 * np.count_nonzero(positive) / float(frames_ms[positive].sum()) \
        if positive.any() else None
    avg = None
    count = 0
    column = None
    if power is not None:
        column, watts = power
        has = positive & (watts > 0.0)  # NaN compares false; 0 W is no reading
        count = int(np.count_nonzero(has))
        weight = float(frames_ms[has].sum())
        avg = float((watts[has] * frames_ms[has]).sum()) / weight if count else None
    return PowerThermals(
        power_column=column if avg is not None else None, power_frames=count, avg_power_w=avg,
        fps_per_watt=None if avg is None or fps is None else fps / avg,
        span_s=min(SENSOR_SPAN_S, float(frames_ms[positive].sum()) / 2000.0),
        temperature_c=None if temperature is None
        else sensor_ends(temperature, frames_ms, TEMPERATURE_COLUMN),
        clock_mhz=None if clock is None else sensor_ends(clock, frames_ms, CLOCK_COLUMN))


def power_thermals_of(capture: Capture) -> PowerThermals | None:
    """FrameView's power and GPU sensors, or None: not measured by this capture. The power
    column is the first of POWER_COLUMNS with a value above 0 W (FrameView writes every one,
    NA where it has no such sensor); a sensor column `NA` on every frame is no column."""
    power = None
    for name in POWER_COLUMNS:
        found = capture.measured_column(name)
        if found is not None and bool((found[1] > 0.0).any()):
            power = found
            break
    sensors = []
    for name in (TEMPERATURE_COLUMN, CLOCK_COLUMN):
        found = capture.measured_column(name)
        sensors.append(None if found is None or not bool(np.isfinite(found[1]).any())
                       else found[1])
    return power_thermals_figures(capture.frame_times_ms, power, *sensors)


def measured_by(capture: Capture, timing: DisplayTiming | None = None) -> MeasuredByCapture:
    """Everything together (record.json `runs[].measured`)."""
    return MeasuredByCapture(latency=latency_of(capture), animation_error=animation_error_of(capture),
                             refresh_cadence=refresh_cadence_of(capture, timing),
                             hitch_causes=hitch_causes_of(capture),
                             validity=validity_of(capture, timing),
                             power_thermals=power_thermals_of(capture))
