"""The worked examples of the explainer pages: every figure a page prints, computed by the engine.

The pages under locales/<lang>/explainers/*.md never type a figure the engine can compute: they
write a placeholder (`{{name}}`), and this module computes every name from certgen.metrics and
the versioned rules file (explainer_figures and the pages' own worked examples), from the GOLD
sample's record (sample_figures) and from a ten-card fleet reviewed in memory
(calibration_figures). certgen.render.explainers fills the placeholders and renders the page:
it formats, it does not compute. If the arithmetic or a prior changes, the pages change with it
(and their snapshot tests notice).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from certgen.errors import ExplainerError
from certgen.fleet.calibration import (
    BOOTSTRAP_RESAMPLES,
    INTERVAL_LEVEL,
    LINE_SPAN,
    LINE_STEP,
    NEAR_LINE_POINTS,
    WEIGHT_GRID,
    read_fleet,
    review,
)
from certgen.metrics.diagnostics import STUTTER_MARGIN_MS, STUTTER_RATIO, stutter_events
from certgen.metrics.figures import (
    LOW_0_1PCT_DENOMINATOR,
    LOW_1PCT_DENOMINATOR,
    fluidity_score,
    fps_figures,
    k_slowest,
    ratios_from_fps,
    round_half_away,
    weights_of,
)
from certgen.metrics.measured import (
    ANIMATION_ERROR_LIMITS_MS,
    HELD_LIMITS,
    HITCH_NEIGHBOURS,
    HITCH_TOP,
    MINUTE_MS,
    animation_error_figures,
    hitch_causes_figures,
    latency_spread,
    refresh_cadence_figures,
)
from certgen.metrics.uncertainty import PHORONIX_CV, WITHIN_FROM, t_quantile
from certgen.model import Weights
from certgen.model.measured import DisplayTiming
from certgen.render.explainers import (
    CALIBRATION_PAGES,
    LANGS,
    PAGES,
    SAMPLE_PAGES,
    Day,
    ExplainerPage,
    Figure,
    Percent,
    Text,
    Value,
    render_page,
)
from certgen.sop import Rules, load_rules

if TYPE_CHECKING:
    from certgen.model import Rank, RunMetrics
    from certgen.record import Record, Run


def _fig(value: float | None, decimals: int, trim: bool = False) -> Figure:
    if value is None:
        raise ExplainerError("an explainer figure came out null; the worked example is broken")
    return Figure(float(value), decimals, trim)


def _int(value: int) -> Figure:
    return Figure(float(value), 0)


def _value(value: float | None) -> float:
    return _fig(value, 0).value


def _metrics(run: Run) -> RunMetrics:
    if run.metrics is None:
        raise ExplainerError("an explainer figure came out null; the worked example is broken")
    return run.metrics


def _fluidity_rank(run: Run) -> Rank:
    rank = None if run.ranks is None else run.ranks.fluidity_score
    if rank is None:
        raise ExplainerError("an explainer figure came out null; the worked example is broken")
    return rank


def explainer_figures(rules: Rules | None = None) -> dict[str, Figure]:
    """Every figure the explainers print, computed by the engine with one rules version.

    Pure: the same rules give the same dictionary. Keys are the placeholder names.
    """
    rules = rules or load_rules()
    w = weights_of(rules)
    f: dict[str, Figure] = {}

    # Priors of the rules file.
    f["w.g"] = Figure(w.consistency_gap, 2, trim=True)
    f["w.s"] = Figure(w.stutter, 2, trim=True)
    f["w.g100"] = Figure(100 * w.consistency_gap, 0)
    f["w.s100"] = Figure(100 * w.stutter, 0)
    f["dsdg"] = Figure(-100 * w.consistency_gap, 0)
    f["dsds"] = Figure(-100 * w.stutter, 0)
    f["line.gold"] = Figure(rules.gold_line, 0)
    f["line.platinum"] = Figure(rules.platinum_line, 0)
    f["soft_limit"] = Figure(rules.soft_limit_stutter, 2)
    f["rerun_limit"] = Figure(rules.rerun_stutter, 2)
    f["min_cohort"] = _int(rules.ranking_min_cohort)
    f["calib_target"] = _int(rules.calibration_fleet_target)

    # Grade lines as straight lines in the (g, s) plane.
    for name, line in (("gold", rules.gold_line), ("platinum", rules.platinum_line)):
        budget = 1.0 - line / 100.0
        f[f"gl.{name}.budget"] = Figure(round_half_away(budget, 4), 2, trim=True)
        f[f"gl.{name}.gmax"] = _fig(round_half_away(budget / w.consistency_gap, 4), 4)
        f[f"gl.{name}.smax"] = _fig(round_half_away(budget / w.stutter, 4), 4)

    # Worked example: the FPS triple 120 / 90 / 60.
    _triple(f, "wx", 120.0, 90.0, 60.0, w)
    # The 1000-frame capture: 990 x 8 ms, 9 x 20 ms, 1 x 50 ms.
    frames = np.array([8.0] * 990 + [20.0] * 9 + [50.0], dtype=np.float64)
    fps = fps_figures(frames)
    f["cap.n"] = _int(frames.size)
    f["cap.total_ms"] = _int(round(float(frames.sum())))
    f["cap.seconds"] = Figure(float(frames.sum()) / 1000.0, 2)
    f["cap.mean_ms"] = Figure(round_half_away(float(frames.mean()), 2), 2)
    f["cap.per_frame"] = _fig(round_half_away(float(np.mean(1000.0 / frames)), 1), 1)
    f["cap.k1"] = _int(k_slowest(frames.size, LOW_1PCT_DENOMINATOR))
    f["cap.k01"] = _int(k_slowest(frames.size, LOW_0_1PCT_DENOMINATOR))
    tail = np.sort(frames)[::-1]
    f["cap.t1_ms"] = Figure(float(tail[: int(f["cap.k1"].value)].mean()), 1, trim=True)
    f["cap.t01_ms"] = Figure(float(tail[: int(f["cap.k01"].value)].mean()), 1, trim=True)
    f["cap.fast_fps"] = _int(round(1000.0 / 8.0))
    _triple(f, "cap", fps.avg_fps, fps.low_1pct_fps, fps.low_0_1pct_fps, w)
    f["cap.gap_over"] = Figure(
        round_half_away(f["cap.per_frame"].value - f["cap.avg"].value, 1), 1
    )

    # k table.
    for n in (600, 1000, 7200):
        f[f"k1.{n}"] = _int(k_slowest(n, LOW_1PCT_DENOMINATOR))
        f[f"k01.{n}"] = _int(k_slowest(n, LOW_0_1PCT_DENOMINATOR))

    # The Soft Limit dilution example: three runs at 96 and one with g 0.05, s 0.61.
    g, s = 0.05, 0.61
    bad = fluidity_score(g, s, w)
    f["dil.weighted"] = Figure(round_half_away(w.consistency_gap * g + w.stutter * s, 4), 3,
                               trim=True)
    f["dil.score"] = _fig(bad, 2, trim=True)
    f["dil.mean"] = _fig(round_half_away((3 * 96.0 + bad) / 4, 2), 2)
    f["dil.ratio"] = Figure(round_half_away(1.0 - s, 2), 2)
    # At the Soft Limit with a zero gap, the score cannot reach the GOLD line.
    f["sl.cost"] = Figure(round_half_away(w.stutter * rules.soft_limit_stutter, 4), 2, trim=True)
    f["sl.best"] = _fig(fluidity_score(0.0, rules.soft_limit_stutter, w), 2, trim=True)
    # Why g = 0.05 with s above the limit is impossible from frame times: the 0.1% tail is a
    # tenth of the 1% tail, so t_1% >= 0.1 t_0.1% + 0.9 t and t_0.1% = t_1% / (1 - s).
    tail_ratio = 0.9 / (1.0 - 0.1 / (1.0 - rules.soft_limit_stutter))
    f["sl.tail_ratio"] = Figure(round_half_away(tail_ratio, 2), 2, trim=True)
    f["sl.gmin"] = Figure(round_half_away(1.0 - 1.0 / tail_ratio, 2), 2)
    # The realisable case built from frame times: three runs near 99, one at 100 / 82 / 31.9.
    _triple(f, "real", 100.0, 82.0, 31.9, w)
    f["real.mean"] = _fig(round_half_away((3 * 99.0 + f["real.score"].value) / 4, 1), 1)

    # Frame time <-> FPS (the ms a frame takes at a given rate).
    for rate in (60, 144, 240):
        f[f"ms.{rate}"] = Figure(round_half_away(1000.0 / rate, 1), 1)
    # 200 average / 70 low: typical frame, slow-hundredth frame, how many slow frames a second.
    f["ex200.avg_ms"] = Figure(round_half_away(1000.0 / 200, 1), 0, trim=True)
    f["ex200.low_ms"] = Figure(round_half_away(1000.0 / 70, 1), 0)
    f["ex200.ratio"] = Figure(round_half_away((1000.0 / 70) / (1000.0 / 200), 1), 1)
    f["ex200.per_s"] = _int(k_slowest(200, LOW_1PCT_DENOMINATOR))
    # 99th-percentile definition vs the slowest-1% mean: 990 frames at 8 ms, 10 at 40 ms.
    p99_frames = np.array([8.0] * 990 + [40.0] * 10, dtype=np.float64)
    p99 = float(np.percentile(p99_frames, 99))
    f["p99.ms"] = Figure(round_half_away(p99, 2), 2)
    f["p99.fps"] = Figure(round_half_away(1000.0 / p99, 1), 1)
    p99_fps = fps_figures(p99_frames)
    f["p99.avg"] = _fig(p99_fps.avg_fps, 1)
    f["p99.low1"] = _fig(p99_fps.low_1pct_fps, 1)
    # The smallest p-value an exact two-sided signed-rank test can reach with 5 pairs: 2 / 2^5.
    f["pairs.p5"] = Figure(2.0 / 2**5, 4)
    f.update(measured_figures())
    f.update(cadence_figures())
    f.update(hitch_figures())
    return f


def measured_figures() -> dict[str, Figure]:
    """The worked example of "What else a capture measures" (and of docs/spec/metrics.md),
    computed by certgen.metrics.measured: five PC latencies, three animation errors."""
    f: dict[str, Figure] = {}
    latencies = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    spread = latency_spread(latencies, "MsPCLatency")
    if spread is None:
        raise ExplainerError("an explainer figure came out null; the worked example is broken")
    f["lat.n"] = _int(spread.frames)
    for i, value in enumerate(latencies.tolist(), 1):
        f[f"lat.v{i}"] = Figure(value, 0)
    f["lat.median"] = Figure(spread.median, 1, trim=True)
    f["lat.p90"] = Figure(spread.p90, 1, trim=True)
    f["lat.p99"] = Figure(spread.p99, 1, trim=True)
    f["lat.median.rank"] = Figure(0.5 * (spread.frames - 1), 2, trim=True)
    f["lat.p90.rank"] = Figure(0.9 * (spread.frames - 1), 2, trim=True)
    f["lat.p99.rank"] = Figure(0.99 * (spread.frames - 1), 2, trim=True)
    f["lat.last"] = _int(spread.frames - 1)
    errors, times = np.array([-0.5, 2.0, -5.0]), np.array([10.0, 20.0, 10.0])  # signs: − + −
    animation = animation_error_figures(errors, times, "MsAnimationError")
    if animation is None:
        raise ExplainerError("an explainer figure came out null; the worked example is broken")
    for i, (e, t) in enumerate(zip(errors.tolist(), times.tolist()), 1):
        f[f"ae.e{i}"] = Figure(abs(e), 1, trim=True)  # the page writes the sign (U+2212)
        f[f"ae.t{i}"] = Figure(t, 0)
    f["ae.total"] = Figure(float(times.sum()), 0)
    f["ae.n"] = _int(animation.frames)
    f["ae.mean"] = Figure(animation.mean_abs_ms, 2)
    f["ae.p99"] = Figure(animation.p99_abs_ms, 2)
    f["ae.over1"] = Figure(100.0 * animation.time_share_over_1ms, 0)
    f["ae.over4"] = Figure(100.0 * animation.time_share_over_4ms, 0)
    f["ae.limit1"] = Figure(ANIMATION_ERROR_LIMITS_MS[0], 0)
    f["ae.limit4"] = Figure(ANIMATION_ERROR_LIMITS_MS[1], 0)
    return f


# Refresh cadence at a fixed 60 Hz: (present interval, display-change interval) per displayed
# frame, ms, and the bin the page names for each (1, 2 or 3 = three or more refreshes).
CADENCE_FIXED: tuple[tuple[float, float], ...] = (
    (16.6, 16.6), (16.6, 16.6), (24.0, 33.4), (9.4, 16.6), (45.0, 50.0), (21.6, 16.6))
CADENCE_FIXED_HELD: tuple[int, ...] = (1, 1, 2, 1, 3, 1)
# Under VRR, a 48-144 Hz window on a 144 Hz display; the place the page names for each interval.
CADENCE_VRR: tuple[tuple[float, float], ...] = (
    (6.0, 6.0), (8.0, 8.0), (16.0, 12.0), (16.0, 20.0), (30.0, 30.0), (8.0, 8.0))
CADENCE_VRR_PLACE: tuple[str, ...] = ("above", "inside", "inside", "inside", "below", "inside")
CADENCE_FIXED_TIMING = DisplayTiming(refresh_hz=60.0, vrr_min_hz=None, vrr_max_hz=None)
CADENCE_VRR_TIMING = DisplayTiming(refresh_hz=144.0, vrr_min_hz=48.0, vrr_max_hz=144.0)


def _broken() -> ExplainerError:
    return ExplainerError("an explainer figure came out null; the worked example is broken")


def _pct(fraction: float | None) -> Figure:
    """A share for `{{name:pct}}`: to a tenth of a percent, trailing zeros dropped."""
    return _fig(None if fraction is None else round_half_away(fraction, 3), 3, trim=True)


def cadence_figures() -> dict[str, Figure]:
    """The worked examples of "Refresh cadence and VRR", computed by certgen.metrics.measured: six
    displayed frames at a fixed 60 Hz, six under a 48-144 Hz VRR window, and the same frames
    without a declared display (only the count)."""
    f: dict[str, Figure] = {}
    f["cad.held1"] = Figure(HELD_LIMITS[0], 1)
    f["cad.held2"] = Figure(HELD_LIMITS[1], 1)
    f["cad.minute"] = Figure(MINUTE_MS, 0)

    present, display = (np.array(x) for x in zip(*CADENCE_FIXED, strict=True))
    timing = CADENCE_FIXED_TIMING
    got = refresh_cadence_figures(display, present, "MsBetweenDisplayChange", timing)
    if got is None or got.held is None or got.beyond_refresh_ms_per_min is None:
        raise _broken()
    refresh = timing.refresh_ms
    one, two = (refresh * k for k in HELD_LIMITS)
    held = np.where(display < one, 1, np.where(display < two, 2, 3))
    if tuple(held.tolist()) != CADENCE_FIXED_HELD:
        raise ExplainerError("the fixed-refresh example no longer splits as its page says")
    f["cad.fx.hz"] = Figure(timing.refresh_hz, 0)
    f["cad.fx.p"] = Figure(refresh, 2)
    f["cad.fx.half"] = Figure(refresh / 2.0, 2)
    f["cad.fx.lim1"] = Figure(one, 2, trim=True)
    f["cad.fx.lim2"] = Figure(two, 2, trim=True)
    f["cad.fx.n"] = _int(got.frames)
    past = np.maximum(display - refresh, 0.0)
    gap = np.abs(present - display)
    for i, (t, d) in enumerate(CADENCE_FIXED, 1):
        f[f"cad.fx.t{i}"] = Figure(t, 1)
        f[f"cad.fx.d{i}"] = Figure(d, 1)
        f[f"cad.fx.r{i}"] = Figure(d / refresh, 2)
        f[f"cad.fx.past{i}"] = Figure(float(past[i - 1]), 2, trim=True)
        f[f"cad.fx.gap{i}"] = Figure(float(gap[i - 1]), 1, trim=True)
    f["cad.fx.total"] = Figure(float(display.sum()), 1)
    for k, name in enumerate(("one", "two", "three"), 1):
        f[f"cad.fx.{name}_ms"] = Figure(float(display[held == k].sum()), 1)
    f["cad.fx.one"] = _pct(got.held.one)
    f["cad.fx.two"] = _pct(got.held.two)
    f["cad.fx.three"] = _pct(got.held.three_or_more)
    f["cad.fx.past"] = Figure(float(past.sum()), 2)
    f["cad.fx.beyond"] = Figure(got.beyond_refresh_ms_per_min, 0)
    f["cad.fx.mismatch"] = _pct(got.present_display_mismatch_share)
    f["cad.fx.mismatch_n"] = _int(int(np.count_nonzero(gap > refresh / 2.0)))

    present, display = (np.array(x) for x in zip(*CADENCE_VRR, strict=True))
    timing = CADENCE_VRR_TIMING
    got = refresh_cadence_figures(display, present, "MsBetweenDisplayChange", timing)
    if (got is None or got.vrr_window is None or got.beyond_refresh_ms_per_min is None
            or timing.vrr_min_hz is None or timing.vrr_max_hz is None):
        raise _broken()
    refresh = timing.refresh_ms
    longest, shortest = 1000.0 / timing.vrr_min_hz, 1000.0 / timing.vrr_max_hz
    place = np.where(display > longest, "below", np.where(display < shortest, "above", "inside"))
    if tuple(place.tolist()) != CADENCE_VRR_PLACE:
        raise ExplainerError("the VRR example no longer falls where its page says")
    f["cad.vrr.hz"] = Figure(timing.refresh_hz, 0)
    f["cad.vrr.lo"] = Figure(timing.vrr_min_hz, 0)
    f["cad.vrr.hi"] = Figure(timing.vrr_max_hz, 0)
    f["cad.vrr.p"] = Figure(refresh, 2)
    f["cad.vrr.half"] = Figure(refresh / 2.0, 2)
    f["cad.vrr.shortest"] = Figure(shortest, 2)
    f["cad.vrr.longest"] = Figure(longest, 2)
    f["cad.vrr.n"] = _int(got.frames)
    past = np.maximum(display - longest, 0.0)
    gap = np.abs(present - display)
    for i, (t, d) in enumerate(CADENCE_VRR, 1):
        f[f"cad.vrr.t{i}"] = Figure(t, 0)
        f[f"cad.vrr.d{i}"] = Figure(d, 0)
        f[f"cad.vrr.past{i}"] = Figure(float(past[i - 1]), 2, trim=True)
        f[f"cad.vrr.gap{i}"] = Figure(float(gap[i - 1]), 0)
    f["cad.vrr.total"] = Figure(float(display.sum()), 0)
    for name in ("inside", "below", "above"):
        f[f"cad.vrr.{name}_ms"] = Figure(float(display[place == name].sum()), 0)
    f["cad.vrr.inside"] = _pct(got.vrr_window.inside)
    f["cad.vrr.below"] = _pct(got.vrr_window.below)
    f["cad.vrr.above"] = _pct(got.vrr_window.above)
    f["cad.vrr.past"] = Figure(float(past.sum()), 2)
    f["cad.vrr.beyond"] = Figure(got.beyond_refresh_ms_per_min, 0)
    f["cad.vrr.mismatch"] = _pct(got.present_display_mismatch_share)
    f["cad.vrr.mismatch_n"] = _int(int(np.count_nonzero(gap > refresh / 2.0)))

    # No declared display: the frames are counted and nothing else is given.
    unknown = refresh_cadence_figures(display, present, "MsBetweenDisplayChange", None)
    if unknown is None or any(
            value is not None for key, value in unknown.model_dump().items()
            if key not in ("frames", "column")):
        raise ExplainerError("without a declared display the cadence must give only the count")
    f["cad.none.n"] = _int(unknown.frames)
    return f


# Hitch causes: a steady run of HITCH_FRAMES frames (frame time, CPU busy, CPU wait, GPU busy
# in ms, as HITCH_BASE) with five hitches HITCH_EVERY frames apart, and the cause the page
# names for each.
HITCH_FRAMES = 600
HITCH_EVERY = 100
HITCH_BASE: tuple[float, float, float, float] = (10.0, 6.0, 4.0, 8.0)
HITCH_EXAMPLE: tuple[tuple[tuple[float, float, float, float], str], ...] = (
    ((40.0, 33.0, 7.0, 8.0), "cpu"),  # the CPU's own work grew
    ((35.0, 7.0, 28.0, 31.0), "gpu"),  # the GPU's work grew; the CPU waited for it
    ((30.0, 7.0, 23.0, 8.0), "present_wait"),  # only the CPU's wait grew
    ((28.0, 10.0, 6.0, 12.0), "unknown"),  # no column grew by half the extra time
    ((50.0, 30.0, 20.0, 38.0), "gpu"),  # both busy columns grew: the larger share wins
)


def hitch_figures() -> dict[str, Figure]:
    """The worked example of "What caused each hitch", computed by certgen.metrics.measured (its rule)
    and certgen.metrics.diagnostics (which frames are stutter events)."""
    f: dict[str, Figure] = {}
    rows = np.tile(np.array(HITCH_BASE), (HITCH_FRAMES, 1))
    at = [HITCH_EVERY * k - 1 for k in range(1, len(HITCH_EXAMPLE) + 1)]  # frames 100, 200, …
    for i, (values, _) in zip(at, HITCH_EXAMPLE, strict=True):
        rows[i] = values
    frames = rows[:, 0].copy()
    columns = {"cpu_busy": ("MsCPUBusy", rows[:, 1].copy()),
               "cpu_wait": ("MsCPUWait", rows[:, 2].copy()),
               "gpu_busy": ("MsGPUBusy", rows[:, 3].copy())}
    if stutter_events(frames).tolist() != at:
        raise ExplainerError("the hitch example's stutter events are not the frames its page names")
    got = hitch_causes_figures(frames, columns)
    if got is None or got.events != len(HITCH_EXAMPLE) or len(got.top) != len(HITCH_EXAMPLE):
        raise _broken()
    base_t, base_cpu, base_wait, base_gpu = HITCH_BASE
    f["hitch.frames"] = _int(HITCH_FRAMES)
    f["hitch.seconds"] = Figure(float(frames.sum()) / 1000.0, 3, trim=True)
    f["hitch.base.t"] = Figure(base_t, 0)
    f["hitch.base.cpu"] = Figure(base_cpu, 0)
    f["hitch.base.wait"] = Figure(base_wait, 0)
    f["hitch.base.gpu"] = Figure(base_gpu, 0)
    f["hitch.base.fps"] = Figure(1000.0 / base_t, 0)
    f["hitch.ratio"] = Figure(STUTTER_RATIO, 0)
    f["hitch.margin"] = Figure(STUTTER_MARGIN_MS, 0)
    f["hitch.line"] = Figure(max(STUTTER_RATIO * base_t, base_t + STUTTER_MARGIN_MS), 0)
    f["hitch.neighbours"] = _int(got.neighbours)
    f["hitch.window"] = _int(2 * HITCH_NEIGHBOURS)
    f["hitch.share"] = Figure(got.share, 1)
    f["hitch.top"] = _int(HITCH_TOP)
    f["hitch.events"] = _int(got.events)
    by_frame = sorted(got.top, key=lambda e: e.frame)
    for k, (event, (values, cause)) in enumerate(zip(by_frame, HITCH_EXAMPLE, strict=True), 1):
        if event.cause != cause or event.frame != at[k - 1] + 1:
            raise ExplainerError(f"hitch {k} of the example is no longer {cause}, as its page says")
        excess = event.frame_ms - event.surrounding_ms
        e = f"hitch.e{k}"
        f[f"{e}.frame"] = _int(event.frame)
        f[f"{e}.at"] = Figure(event.at_s, 3, trim=True)
        f[f"{e}.rank"] = _int(got.top.index(event) + 1)
        f[f"{e}.t"] = Figure(event.frame_ms, 0)
        f[f"{e}.median"] = Figure(event.surrounding_ms, 0)
        f[f"{e}.excess"] = Figure(excess, 0)
        for role, value, extra in (("cpu", values[1], event.cpu_busy_excess_ms),
                                   ("wait", values[2], event.wait_excess_ms),
                                   ("gpu", values[3], event.gpu_busy_excess_ms)):
            if extra is None or excess <= 0.0:
                raise _broken()
            f[f"{e}.{role}"] = Figure(value, 0)
            f[f"{e}.{role}_med"] = Figure(value - extra, 0)
            f[f"{e}.{role}_x"] = Figure(extra, 0)
            f[f"{e}.{role}_sh"] = Figure(round_half_away(extra / excess, 2), 2)
    for total in got.ledger:
        f[f"hitch.{total.cause}.n"] = _int(total.events)
        f[f"hitch.{total.cause}.ms"] = Figure(total.time_ms, 0)
    return f


# The calibration explainer's fleet: ten certified cards, each with one run at one resolution
# tier (so a card's tier mean is its run's Fluidity Score), as (consistency gap, stutter). One
# card sits exactly on the GOLD line, one just under it, one past the stutter Soft Limit.
CALIBRATION_EXAMPLE: tuple[tuple[float, float], ...] = (
    (0.02, 0.08), (0.03, 0.09), (0.04, 0.12), (0.05, 0.15), (0.06, 0.20),
    (0.12, 0.12), (0.09, 0.22), (0.10, 0.25), (0.15, 0.30), (0.08, 0.62))
CALIBRATION_EXAMPLE_GRADES: tuple[str, ...] = (
    "PLATINUM", "PLATINUM", "GOLD", "GOLD", "GOLD", "GOLD", "SILVER", "SILVER", "SILVER", "SILVER")
"""The grade the page's table gives each card of CALIBRATION_EXAMPLE."""
CALIBRATION_CANDIDATE_GOLD = 87.0
"""The candidate GOLD line of the calibration explainer's re-grade (everything else as now)."""


def calibration_figures(rules: Rules | None = None) -> dict[str, Figure]:
    """The worked example of "Reading a calibration review", computed by certgen.fleet.calibration:
    the ten-card fleet of CALIBRATION_EXAMPLE reviewed under `rules` (each card's Fluidity
    Score by certgen.metrics.figures.fluidity_score), the GOLD line's fleet percentile with its
    bootstrap interval, the grade shares, and the same fleet re-graded under a candidate whose
    GOLD line is CALIBRATION_CANDIDATE_GOLD."""
    rules = rules or load_rules()
    w = weights_of(rules)
    rows: list[tuple[object, ...]] = []
    for i, (g, s) in enumerate(CALIBRATION_EXAMPLE, 1):
        rows.append((f"EX-{i:02d}", "2026-11-01", "2560x1440", "example", fluidity_score(g, s, w),
                     g, s, 0))
    fleet = read_fleet([rows], where="the explainer's example")
    candidate = dataclasses.replace(rules, gold_line=CALIBRATION_CANDIDATE_GOLD,
                                    sop=f"{rules.sop} (candidate)",
                                    rules_version=f"{rules.rules_version}-candidate")
    got = review(fleet, [], rules, [candidate])
    f: dict[str, Figure] = {}
    f["cal.cards"] = _int(got.cards)
    f["cal.resamples"] = _int(BOOTSTRAP_RESAMPLES)
    f["cal.level"] = Figure(100.0 * INTERVAL_LEVEL, 0)
    f["cal.near"] = Figure(NEAR_LINE_POINTS, 0)
    f["cal.step"] = Figure(LINE_STEP, 0)
    f["cal.span"] = Figure(LINE_SPAN, 0)
    f["cal.w.lo"] = Figure(WEIGHT_GRID[0], 2)
    f["cal.w.hi"] = Figure(WEIGHT_GRID[-1], 2)
    scores = [fluidity_score(g, s, w) for g, s in CALIBRATION_EXAMPLE]
    grades = tuple(rules.grades[2] if x is None or x < rules.gold_line else
                   rules.grades[1] if x < rules.platinum_line else rules.grades[0]
                   for x in scores)
    if grades != CALIBRATION_EXAMPLE_GRADES:
        raise ExplainerError("the calibration example's cards no longer grade as its page says")
    for i, ((g, s), score) in enumerate(zip(CALIBRATION_EXAMPLE, scores, strict=True), 1):
        f[f"cal.c{i}.g"] = Figure(g, 2)
        f[f"cal.c{i}.s"] = Figure(s, 2)
        f[f"cal.c{i}.score"] = _fig(score, 2)
    gold = got.lines["gold"]
    if gold.fleet_percentile is None or gold.interval is None:
        raise _broken()
    f["cal.gold.below"] = _int(sum(1 for x in scores if x is not None and x < rules.gold_line))
    f["cal.gold.at"] = _int(sum(1 for x in scores if x == rules.gold_line))
    f["cal.gold.pct"] = Figure(gold.fleet_percentile, 0)
    f["cal.gold.lo"] = Figure(gold.interval[0], 0)
    f["cal.gold.hi"] = Figure(gold.interval[1], 0)
    limit = got.lines["soft_limit"]
    if limit.fleet_percentile is None or got.past_soft_limit is None:
        raise _broken()
    f["cal.soft.pct"] = Figure(limit.fleet_percentile, 0)
    f["cal.soft.past"] = Figure(got.past_soft_limit, 0)
    for grade, share in got.grade_shares.items():
        f[f"cal.share.{grade.lower()}"] = Figure(share, 0)
    near = [n for n in got.near_lines if n.line == "gold"]
    f["cal.gold.near"] = _int(got.near_line_counts["gold"])
    [cand] = got.candidates
    f["cal.cand.gold"] = Figure(CALIBRATION_CANDIDATE_GOLD, 0)
    f["cal.cand.changes"] = _int(len(cand.changes))
    f["cal.cand.up"] = _int(cand.up)
    f["cal.cand.down"] = _int(cand.down)
    for grade, share in cand.grade_shares.items():
        f[f"cal.cand.share.{grade.lower()}"] = Figure(share, 0)
    f["cal.card_step"] = Figure(100.0 / got.cards, 0)
    if (len(cand.changes) != 1 or len(near) != f["cal.gold.near"].value
            or sorted(n.certificate_id for n in near) != ["EX-06", "EX-07"]
            or CALIBRATION_EXAMPLE[9][1] <= rules.soft_limit_stutter
            or any(s > rules.soft_limit_stutter for _, s in CALIBRATION_EXAMPLE[:9])):
        raise ExplainerError("the calibration example no longer re-grades as its page says")
    moved = cand.changes[0]
    f["cal.cand.card"] = _int(int(moved.certificate_id.removeprefix("EX-")))
    return f


def _triple(
    f: dict[str, Figure], key: str, avg: float | None, low1: float | None, low01: float | None,
    w: Weights,
) -> None:
    """Figures of one FPS triple: the FPS, frame times, ratios, score and the weighted terms."""
    r = ratios_from_fps(avg, low1, low01, w)
    f[f"{key}.avg"] = _fig(avg, 1, trim=key == "wx")
    f[f"{key}.low1"] = _fig(low1, 1, trim=key == "wx")
    f[f"{key}.low01"] = _fig(low01, 1, trim=key == "wx")
    assert avg and low1 and low01
    f[f"{key}.t"] = Figure(1000.0 / avg, 3)
    f[f"{key}.t1"] = Figure(1000.0 / low1, 3)
    f[f"{key}.t01"] = Figure(1000.0 / low01, 3)
    f[f"{key}.fr1"] = Figure(round_half_away(low1 / avg, 4), 4, trim=True)
    f[f"{key}.fr01"] = Figure(round_half_away(low01 / low1, 4), 4, trim=True)
    f[f"{key}.g"] = _fig(r.consistency_gap, 4, trim=True)
    f[f"{key}.s"] = _fig(r.stutter, 4, trim=True)
    f[f"{key}.score"] = _fig(r.fluidity_score, 2, trim=True)
    f[f"{key}.tslow"] = Figure(round_half_away((1000.0 / low1) / (1000.0 / avg), 3), 3,
                               trim=True)
    f[f"{key}.tspike"] = Figure(round_half_away((1000.0 / low01) / (1000.0 / low1), 3), 3,
                                trim=True)
    assert r.consistency_gap is not None and r.stutter is not None
    wg = round_half_away(w.consistency_gap * r.consistency_gap, 4)
    ws = round_half_away(w.stutter * r.stutter, 4)
    f[f"{key}.wg"] = Figure(wg, 4, trim=True)
    f[f"{key}.ws"] = Figure(ws, 4, trim=True)
    f[f"{key}.weighted"] = Figure(round_half_away(wg + ws, 4), 4, trim=True)


# --------------------------------------------------------------------------- the sample record

SAMPLE_BUNDLE = "gold-rx7800xt"
"""The sample the certificate tour quotes: the GOLD card whose tier mean hides a Soft Limit run
(its folder in examples/; the site builder hands its record to `build_page`)."""


def sample_figures(record: Record) -> dict[str, Value]:
    """What the certificate tour quotes from the GOLD sample, taken from its record.

    `record` is the sample certificate's record as the site builds it (examples/gold-rx7800xt
    by the production pipeline, ranked against examples/fleet.jsonl): certgen.builders.site
    passes the record it made, so the sample's captures and the fleet are read once. Keys start
    with `gold.`. If the sample or the arithmetic changes, the tour changes with it.
    """
    f: dict[str, Value] = {}
    cert_id = record.certificate.id
    f["gold.id"] = Text(cert_id)
    f["gold.href"] = Text(f"../../samples/{cert_id}/certificate.{{lang}}.html")
    f["gold.pdf_href"] = Text(f"../../samples/{cert_id}/certificate.{{lang}}.pdf")
    f["gold.record_href"] = Text(f"../../samples/{cert_id}/record.json")
    for i, tier in enumerate(record.tiers, start=1):
        f[f"gold.tier{i}.res"] = Text(tier.resolution)
        f[f"gold.tier{i}.runs"] = _int(tier.runs)
        f[f"gold.tier{i}.mean"] = _fig(tier.mean_fluidity, 2)
    runs = record.runs
    f["gold.runs"] = _int(len(runs))
    sl = next(r for r in runs if r.soft_limit is not None and r.soft_limit.raised)
    m = _metrics(sl)
    f["gold.sl.n"] = _int(sl.index + 1)
    f["gold.sl.title"] = Text(sl.title)
    f["gold.sl.res"] = Text(sl.resolution)
    f["gold.sl.avg"] = _fig(m.avg_fps, 1)
    f["gold.sl.low1"] = _fig(m.low_1pct_fps, 1)
    f["gold.sl.low01"] = _fig(m.low_0_1pct_fps, 1)
    f["gold.sl.g"] = _fig(m.consistency_gap, 4, trim=True)
    f["gold.sl.s"] = _fig(m.stutter, 4, trim=True)
    f["gold.sl.gpct"] = Percent(_value(m.consistency_gap))
    f["gold.sl.spct"] = Percent(_value(m.stutter))
    f["gold.sl.score"] = _fig(m.fluidity_score, 2)
    f["gold.sl.events"] = _int(m.stutter_count)
    f["gold.sl.cohort_n"] = _int(_fluidity_rank(sl).n)
    peers = [r.metrics.fluidity_score for r in runs
             if r.resolution == sl.resolution and r is not sl and r.metrics
             and r.metrics.fluidity_score is not None]
    f["gold.sl.peers"] = _int(len(peers))
    f["gold.sl.peers_min"] = _fig(min(peers), 2)
    f["gold.sl.peers_max"] = _fig(max(peers), 2)
    ranked = [r for r in runs if r.metrics and _fluidity_rank(r).percentile is not None]
    best = ranked[0]  # the first ranked run in certificate order
    rank = _fluidity_rank(best)
    f["gold.rank.title"] = Text(f"{best.title} {best.resolution}")
    f["gold.rank.percentile"] = _fig(rank.percentile, 1)
    f["gold.rank.n"] = _int(rank.n)
    fleet = record.fleet
    f["gold.fleet.ranked"] = _int(fleet.ranked_runs)
    f["gold.fleet.provisional"] = _int(fleet.provisional_runs)
    f["gold.fleet.gap"] = Percent(_value(fleet.mean_consistency_gap))
    f["gold.fleet.stutter"] = Percent(_value(fleet.mean_stutter))
    f["gold.fleet.median"] = _fig(fleet.median_percentile, 1)
    f["gold.audit.captures"] = _int(len(record.audit.captures))
    f.update(_sample_issue_figures(record))
    return f


def _sample_issue_figures(record: Record) -> dict[str, Value]:
    """What the tour quotes of the sample's issue, scope, test conditions, diagnostics and
    verification block (issue 39): the issuer comes from the lab profile the site builds the
    samples with (examples/lab.yaml), so the record must carry it."""
    issuer = record.issuer
    if issuer is None:
        raise ExplainerError("the certificate tour quotes the GOLD sample's issuer: build its "
                             "record with the sample laboratory profile (lab=)")
    f: dict[str, Value] = {}
    f["gold.issued"] = Day(record.certificate.issued)
    f["gold.valid_until"] = Day(issuer.valid_until)
    f["gold.validity_months"] = _int(issuer.validity_months)
    f["gold.lab"] = Text(issuer.name)
    f["gold.signatory"] = Text(issuer.signatory.name)
    f["gold.serial"] = Text(record.card.serial)
    f["gold.driver"] = Text(record.card.driver)
    f["gold.verify_base"] = Text(issuer.verification_base)
    recorded = [r for r in record.runs if r.capture is not None]
    tested = sorted(r.conditions.tested_on for r in recorded
                    if r.conditions is not None and r.conditions.tested_on)
    if not recorded or not tested:
        raise _broken()
    f["gold.tested_first"] = Day(tested[0])
    f["gold.tested_last"] = Day(tested[-1])
    durations = [r.capture.duration_s for r in recorded
                 if r.capture is not None and r.capture.duration_s is not None]
    tools = sorted({r.capture.tool for r in recorded if r.capture is not None and r.capture.tool})
    if not durations or not tools:
        raise _broken()
    f["gold.dur_min"] = _fig(min(durations), 0)
    f["gold.dur_max"] = _fig(max(durations), 0)
    f["gold.tool"] = Text(", ".join(tools))
    timing = record.test_system.display_timing if record.test_system else None
    if timing is None or timing.refresh_hz is None:
        raise _broken()
    f["gold.refresh"] = _fig(timing.refresh_hz, 0)
    said = next((r.recorded for r in recorded if r.recorded is not None), None)
    if said is None or not said.gpu or not said.driver:
        raise _broken()
    f["gold.rec.gpu"] = Text(said.gpu)
    f["gold.rec.driver"] = Text(said.driver)
    f["gold.first_capture.n"] = _int(len(record.audit.first_captures))
    return f


SURE_VERDICTS: tuple[tuple[str, str], ...] = (("gold", "pass"), ("gold", "conditional pass"))
"""What "How sure is a grade" says in words of the GOLD sample's two tiers (1080p, 1440p): the
verdicts of the GOLD gate. sure_figures checks them: if the sample changes, the page must."""


def sure_figures(record: Record) -> dict[str, Value]:
    """What "How sure is a grade" quotes from the GOLD sample's `uncertainty` (keys `sure.`):
    its tiers' margins, intervals and verdicts, the Soft Limit run's three scores and the
    second stage. Raises ExplainerError when the sample no longer says what the page says in
    words (SURE_VERDICTS, three captures a run, a second stage on the second tier)."""
    u = record.uncertainty
    if u is None or len(u.tiers) != 2:
        raise _broken()
    f: dict[str, Value] = {}
    for i, tier in enumerate(u.tiers, start=1):
        gates = {g.gate: g for g in u.gates if g.tier == tier.tier}
        gold, platinum = gates["gold"], gates["platinum"]
        if (gold.gate, gold.verdict) != SURE_VERDICTS[i - 1] or tier.interval is None:
            raise _broken()
        f[f"sure.tier{i}.res"] = Text(tier.tier)
        f[f"sure.tier{i}.mean"] = _fig(gold.mean, 2)
        f[f"sure.tier{i}.margin"] = _fig(gold.margin, 2)
        f[f"sure.tier{i}.pmargin"] = _fig(platinum.margin, 2)
        f[f"sure.tier{i}.lo"] = _fig(tier.interval[0], 2)
        f[f"sure.tier{i}.hi"] = _fig(tier.interval[1], 2)
        f[f"sure.tier{i}.centre"] = _fig(tier.centre, 2)
        f[f"sure.tier{i}.half"] = _fig(tier.half_width, 2)
        f[f"sure.tier{i}.df"] = _fig(tier.df, 2)
    stage = [s for s in u.tiers[1].second_stage if s.gate == "gold"]
    if len(stage) != 1 or stage[0].captures is None:
        raise _broken()
    f["sure.stage.captures"] = _int(stage[0].captures)
    f["sure.stage.runs"] = _int(len(stage[0].runs))
    sl = next(r for r in record.runs if r.soft_limit is not None and r.soft_limit.raised)
    run = next(r for r in u.runs if r.run == sl.index)
    score = next(x for x in run.figures if x.figure == "fluidity_score")
    if run.captures != 3 or score.interval is None or score.sd is None or score.cv is None:
        raise _broken()
    f["sure.k"] = _int(run.captures)
    f["sure.sl.n"] = _int(sl.index + 1)
    f["sure.sl.title"] = Text(sl.title)
    for j, value in enumerate(score.values, start=1):
        f[f"sure.sl.s{j}"] = _fig(value, 2)
    f["sure.sl.mean"] = _fig(score.mean, 2)
    f["sure.sl.sd"] = _fig(score.sd, 2)
    f["sure.sl.cv"] = Percent(score.cv, 1)
    f["sure.sl.lo"] = _fig(score.interval[0], 2)
    f["sure.sl.hi"] = _fig(score.interval[1], 2)
    f["sure.t3"] = _fig(t_quantile(run.captures - 1), 2)
    f["sure.t3k"] = _fig(t_quantile(run.captures - 1) / run.captures ** 0.5, 2)
    f["sure.level"] = Percent(u.level, 0)
    f["sure.risk"] = Percent((1 - u.level) / 2, 1)
    f["sure.most"] = _int(stage[0].most)
    f["sure.within_from"] = _int(WITHIN_FROM)
    f["sure.phoronix"] = Percent(PHORONIX_CV, 0)
    return f


def build_page(slug: str, lang: str, rules: Rules | None = None, *,
               sample: Record | None = None) -> ExplainerPage:
    """Compute one page's figures and render it (certgen.render.explainers.render_page).

    A page of SAMPLE_PAGES quotes the GOLD sample: `sample` is its record (sample_figures).
    """
    if slug not in PAGES or lang not in LANGS:
        raise ExplainerError(f"no explainer {slug!r} in {lang!r}")
    figures: dict[str, Value] = dict(explainer_figures(rules))
    if slug in SAMPLE_PAGES:
        if sample is None:
            raise ExplainerError(
                f"the explainer {slug!r} quotes the GOLD sample: give its record (sample=)")
        figures.update(sample_figures(sample))
        if slug == "how-sure-is-a-grade":
            figures.update(sure_figures(sample))
    if slug in CALIBRATION_PAGES:
        figures.update(calibration_figures(rules))
    return render_page(slug, lang, figures)
