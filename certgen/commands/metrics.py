"""`certgen metrics CAPTURE... [--format F] [--process NAME] [--json] [--interval]`.

Reads every capture (format detected from content unless forced), computes the SOP v1.1 figures
and the diagnostics with the default SOP's weights, and prints a table or, with --json, one JSON
array with one object per capture (per run, for files holding several). A batch does not stop at
a bad file: every readable capture is reported, and each refused one is named (on stderr as
`certgen: <the one-line message>`; in the JSON array, in its place in argument order, as
`{"file": ..., "error": "<the one-line message>"}`); the exit code is 1 when any was refused.
Before it, `frame_generation` (the multiplier the capture shows, or why not) and `errata` (known
defects of the tool version it records; docs/errata.md). Each object has `recorded`: what the
capture itself records about the system and the capture (docs/spec/captures.md, What a capture
records), each value as written or null, then `unusable_columns`: the diagnostic columns set
aside, each with the count of frames and why (their figures read not measured;
docs/spec/captures.md, PresentMon family). With --interval it ends with `interval`, each SOP figure's 95 % measurement interval or why it is
not estimated, and `stability`, the worst whole minute's FPS over the best's
(docs/spec/uncertainty.md; notes, never a grade).
"""

from __future__ import annotations

import ctypes
import os

# Before numpy is first imported: `metrics` makes no BLAS call, and OpenBLAS's worker threads,
# started at import, would otherwise take CPU from the reader (~0.1 s of CPU on 2 cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json
import sys
from collections.abc import Sequence
from typing import Any

import click
from pydantic import ValidationError

from certgen.api import CaptureReport, RefusedCapture, report_captures
from certgen.captures.detect import FORMATS
from certgen.inputs.bundle import CardDisplayTiming, display_timing_of
from certgen.model.capture import Recorded, UnusableColumn
from certgen.model.figures import DiagnosticFigures, FrameDiagnostics
from certgen.model.measured import (
    AnimationError,
    DisplayTiming,
    HitchCauses,
    Latency,
    LatencySpread,
    PowerThermals,
    RefreshCadence,
)
from certgen.model.uncertainty import FIGURES, FigureIntervals, SustainedStability
from certgen.support.untrusted import escape_invisible


def keep_freed_memory() -> None:
    """Ask glibc to serve large arrays from the heap and keep freed memory for reuse.

    Reading a 1M-frame capture makes many short-lived arrays of a few MB; by default glibc maps
    each afresh and returns it on free, so every one is page-faulted in again (~35k faults,
    ~60 ms on a 74 MB file). A one-shot command can keep them: thresholds of 256 MB (mmap) and
    512 MB (trim). Elsewhere (not glibc) this does nothing.
    """

    if not sys.platform.startswith("linux"):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_mmap_threshold, 256 << 20)
    mallopt(m_trim_threshold, 512 << 20)


def measure(paths: list[str], fmt: str | None, process: str | None,
            interval: bool = False, timing: DisplayTiming | None = None) -> list[dict[str, Any]]:
    """The JSON objects of `certgen metrics --json`, in argument order: the API's reports
    (certgen.api.report_captures) as their pinned keys (`interval` adds each capture's
    measurement intervals; `timing`, the display's refresh, the refresh-cadence figures that
    need it). A capture refused gives `{"file": ..., "error": "<the one-line message>"}`."""

    return [report.as_json() for report in report_captures(paths, format=fmt, process=process,
                                                            interval=interval, timing=timing)]


COLUMNS = (
    ("file", "capture", "{}"),
    ("frames", "frames", "{}"),
    ("avg_fps", "avg FPS", "{:.1f}"),
    ("low_1pct_fps", "1% low", "{:.1f}"),
    ("low_0_1pct_fps", "0.1% low", "{:.1f}"),
    ("consistency_gap", "gap", "{:.4f}"),
    ("stutter", "stutter", "{:.4f}"),
    ("fluidity_score", "score", "{:.2f}"),
    ("p99_ms", "p99 ms", "{:.3f}"),
    ("p99_9_ms", "p99.9 ms", "{:.3f}"),
    ("stall_count", "stalls", "{}"),
    ("stutter_count", "stutters", "{}"),
)
"""(JSON key, column title, format) of the table; figures keep their SOP precision."""


def _cell(value: object, spec: str) -> str:
    return "-" if value is None else spec.format(value)


def _column(report: CaptureReport, key: str) -> object:
    """A table column's value: the file, or one of the SOP figures."""
    return report.file if key == "file" else getattr(report.figures, key)


def render_table(reports: list[CaptureReport]) -> str:
    """An aligned text table, one row per capture, then the notes that qualify the figures."""
    rows = [[title for _, title, _ in COLUMNS]]
    rows += [[_cell(_column(r, key), spec) for key, _, spec in COLUMNS] for r in reports]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    for r in reports:
        figures, measured = r.figures, r.measured
        extra = [f"format {r.format}, interval {r.interval_column}"]
        if r.group:
            extra.append(f"group used: {r.group}")
        if r.groups_left_out:
            extra.append("groups left out: " + "; ".join(r.groups_left_out))
        recorded = recorded_note(r.recorded)
        if recorded:
            extra.append(recorded)
        if figures.dropped_nonpositive:
            extra.append(f"{figures.dropped_nonpositive} frames <= 0 ms dropped")
        if figures.too_short:
            extra.append(f"too short: {figures.frames} frames (< 900), percentiles mean little")
        if figures.corrupted:
            extra.append("corrupted: the FPS figures are out of order")
        if r.incomplete:
            extra.append(f"incomplete: {r.incomplete_reason}")
        extra += r.warnings
        extra += [f"known {e.tool} {e.version} defect {e.id} in {', '.join(e.columns)} "
                  f"(effect: {e.effect}): {e.defect} {e.source}" for e in r.errata]
        fg = r.frame_generation
        if fg.observed_multiplier is not None:
            spread = fg.per_second
            extra.append(f"frame generation: {fg.observed_multiplier:.2f}x shown per "
                         "application frame" + ("" if spread is None else
                         f" ({spread.min:.2f}x to {spread.max:.2f}x per second)"))
        extra += diagnostic_notes(r.frame_diagnostics)
        extra += measured_notes(measured.latency, measured.animation_error)
        extra += unusable_notes(r.unusable_columns)
        extra += cadence_notes(measured.refresh_cadence, measured.hitch_causes)
        extra += power_notes(measured.power_thermals)
        if r.interval is not None and r.stability is not None:
            extra += interval_notes(r.interval)
            extra.append(stability_note(r.stability))
        lines.append("")
        lines.append(f"{r.file}:")
        lines.extend(f"  - {e}" for e in extra)
    return "\n".join(lines)


def recorded_note(recorded: Recorded) -> str | None:
    """The table's note of what the capture records ("recorded by the capture: gpu …; driver
    …"), the values escaped as names read from a capture are; None when it records nothing."""
    shown = [f"{key} {escape_invisible(value)}"
             for key, value in recorded.model_dump(mode="json").items() if value is not None]
    return "recorded by the capture: " + "; ".join(shown) if shown else None


def _figures(f: DiagnosticFigures) -> str:
    return (f"{f.frames} frames, avg {_cell(f.avg_fps, '{:.1f}')} FPS, 1% low "
            f"{_cell(f.low_1pct_fps, '{:.1f}')}, 0.1% low {_cell(f.low_0_1pct_fps, '{:.1f}')}")


def diagnostic_notes(diag: FrameDiagnostics) -> list[str]:
    """The frame-generation and display-timing diagnostics as table notes (not graded)."""
    out = []
    fg = diag.frame_generation
    if fg is not None:
        share = "-" if fg.generated_share is None else f"{fg.generated_share:.2%}"
        app = fg.application
        out.append(f"diagnostic, not graded: {fg.generated_frames} of {fg.frames} frames "
                   f"generated ({share}); application frames only: "
                   + ("none" if app is None else _figures(app)))
    display = diag.display
    if display is not None:
        fig = display.figures
        out.append(f"diagnostic, not graded: from {display.column} "
                   f"({display.not_displayed} frames not displayed): "
                   + ("no display change" if fig is None else _figures(fig)))
    return out


LATENCY_NAMES = {"pc_latency_ms": "PC latency", "click_to_photon_ms": "click to photon",
                 "all_input_to_photon_ms": "all input to photon"}


def measured_notes(latency: Latency, animation: AnimationError | None) -> list[str]:
    """Latency and animation error as table notes (not graded), then one note naming what the
    capture did not measure."""
    out = []
    missing = []
    for key, name in LATENCY_NAMES.items():
        spread: LatencySpread | None = getattr(latency, key)
        if spread is None:
            missing.append(name)
        else:
            left = f"; {spread.left_out} negative values left out" if spread.left_out else ""
            out.append(f"diagnostic, not graded: {name} ({spread.column}, {spread.frames} "
                       f"frames): median {spread.median:.2f} ms, p90 {spread.p90:.2f} ms, "
                       f"p99 {spread.p99:.2f} ms{left}")
    if animation is not None:
        out.append(f"diagnostic, not graded: animation error ({animation.column}, "
                   f"{animation.frames} frames): mean |error| {animation.mean_abs_ms:.2f} "
                   f"ms, p99 {animation.p99_abs_ms:.2f} ms; time over 1 ms "
                   f"{animation.time_share_over_1ms:.1%}, over 4 ms "
                   f"{animation.time_share_over_4ms:.1%}")
    else:
        missing.append("animation error")
    if missing:
        out.append("diagnostic: not measured by this capture: " + ", ".join(missing))
    return out


UNUSABLE_WHY = {
    "wrap_around": "FrameView's 2^64 x 100 ns wrap-around",
    "not_finite": "not a finite number",
    "out_of_range": "beyond 10,000,000 either way",
}


def unusable_notes(unusable: Sequence[UnusableColumn]) -> list[str]:
    """One note per diagnostic column set aside: its figures are not measured, and why."""
    return [f"diagnostic: {u.column} not measured: {u.frames} of {u.of_frames} frames "
            f"hold a value the column cannot hold ({UNUSABLE_WHY[u.reason]}; first at frame "
            f"{u.first_frame}); the SOP figures and the other columns stand"
            for u in unusable]


def cadence_notes(cadence: RefreshCadence | None, hitches: HitchCauses | None) -> list[str]:
    """Refresh cadence and hitch causes as table notes (not graded), or what they lack."""
    out = []
    if cadence is None:
        out.append("diagnostic: refresh cadence not measured by this capture (no display changes)")
    elif cadence.refresh_hz is None:
        out.append(f"diagnostic: refresh cadence ({cadence.column}, {cadence.frames} "
                   "frames) needs the display's refresh: --refresh-hz [--vrr]")
    else:
        if cadence.held is not None:
            held = cadence.held
            shares = (f"held 1 refresh {held.one:.1%}, 2 {held.two:.1%}, 3+ "
                      f"{held.three_or_more:.1%}; beyond one refresh")
        else:
            window = cadence.vrr_window
            assert window is not None and cadence.vrr_min_hz is not None \
                and cadence.vrr_max_hz is not None  # a declared refresh: fixed or VRR
            shares = (f"{cadence.vrr_min_hz:g}-{cadence.vrr_max_hz:g} Hz window: inside "
                      f"{window.inside:.1%}, below {window.below:.1%}, above "
                      f"{window.above:.1%}; below the window")
        out.append(f"diagnostic, not graded: refresh cadence at {cadence.refresh_hz:g} Hz "
                   f"({cadence.column}, {cadence.frames} frames): {shares} "
                   f"{cadence.beyond_refresh_ms_per_min:.0f} ms per minute; present and "
                   f"display apart by over half a refresh: "
                   f"{cadence.present_display_mismatch_share:.1%} of frames")
    if hitches is None:
        out.append("diagnostic: hitch causes not measured by this capture (no CPU or GPU busy)")
    else:
        ledger = ", ".join(f"{t.cause} {t.events}" for t in hitches.ledger)
        out.append(f"diagnostic, not graded: hitch causes of {hitches.events} stutter events "
                   f"({', '.join(hitches.columns.values())}): {ledger}")
    return out


def power_notes(power: PowerThermals | None) -> list[str]:
    """FrameView's power and GPU sensors as a table note (not graded); nothing without them."""
    if power is None:
        return []
    parts = []
    if power.avg_power_w is None:
        parts.append("power: no reading")
    else:
        parts.append(f"power {power.avg_power_w:.1f} W ({power.power_column}), "
                     f"{_cell(power.fps_per_watt, '{:.3f}')} FPS per W")
    for ends, name, unit in ((power.temperature_c, "GPU temperature", "°C"),
                             (power.clock_mhz, "GPU clock", "MHz")):
        if ends is not None:
            parts.append(f"{name} {_cell(ends.start, '{:.0f}')} -> "
                         f"{_cell(ends.end, '{:.0f}')} {unit}")
    return [f"diagnostic, not graded: {'; '.join(parts)} (first and last "
            f"{power.span_s:g} s)"]


def interval_notes(interval: FigureIntervals) -> list[str]:
    """The measurement intervals as table notes, each figure named and formatted as its column
    (COLUMNS): the printed ones, then the others grouped by why they are not estimated."""
    column = {key: (title, spec) for key, title, spec in COLUMNS if key in FIGURES}
    ends: dict[str, tuple[float, float] | None] = {f: getattr(interval, f) for f in FIGURES}
    shown = [f"{column[f][0]} {column[f][1].format(pair[0])}–{column[f][1].format(pair[1])}"
             for f in FIGURES if (pair := ends[f]) is not None]
    level = f"{interval.level:.0%}"
    out = [f"measurement interval ({level}, within-capture, not graded): "
           + ("; ".join(shown) or "none")]
    reasons: dict[str, list[str]] = {}
    for figure, why in interval.not_estimated.items():
        reasons.setdefault(why, []).append(column[figure][0])
    out += [f"not estimated ({', '.join(names)}): {why}" for why, names in reasons.items()]
    return out


def stability_note(stability: SustainedStability) -> str:
    """Sustained stability as a table note."""
    head = f"sustained stability (not graded, {stability.block_s}-second blocks): "
    if stability.ratio is None or stability.worst_fps is None or stability.best_fps is None:
        return head + f"not estimated: {stability.not_estimated}"
    return (head + f"worst {stability.worst_fps:.1f} FPS / best {stability.best_fps:.1f} "
            f"FPS = {stability.ratio:.2%} over {stability.blocks} blocks (reference: "
            f"3DMark's {stability.reference:.0%})")


def display_timing_option(refresh_hz: float | None, vrr: str | None,
                          presentation: str | None = None) -> DisplayTiming | None:
    """--refresh-hz, --vrr and --presentation as card.yaml's display_timing would give them,
    checked by the same rules (a usage error names the option)."""
    if refresh_hz is None:
        for given, option in ((vrr, "--vrr"), (presentation, "--presentation")):
            if given is not None:
                raise click.UsageError(
                    f"{option} needs --refresh-hz (the display's highest refresh)")
        return None
    window: object = "none"
    if vrr is not None and vrr.strip().lower() != "none":
        low, sep, high = vrr.partition("-")
        try:
            if not sep:
                raise ValueError
            window = {"min_hz": float(low), "max_hz": float(high)}
        except ValueError:
            raise click.BadParameter(f"expected MIN-MAX in Hz (e.g. 48-165) or none, got {vrr!r}",
                                     param_hint="--vrr") from None
    try:
        fields: dict[str, object] = {"refresh_hz": refresh_hz, "vrr": window}
        if presentation is not None:
            fields["presentation"] = presentation
        card = CardDisplayTiming.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        hint = "--refresh-hz" if error["loc"][:1] == ("refresh_hz",) else "--vrr"
        raise click.BadParameter(error["msg"], param_hint=hint) from None
    return display_timing_of(card)


@click.command(name="metrics")
@click.argument("captures", nargs=-1, required=True, metavar="CAPTURE...")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default=None,
    help="Force a reader instead of detecting the format from content.",
)
@click.option(
    "--process", default=None, metavar="NAME",
    help="PresentMon family: the application to read, or one group as certgen prints it, e.g. "
    "'Game.exe (pid 7124)' (default: the group rule, docs/spec/captures.md).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON array, one object per capture.")
@click.option("--interval", is_flag=True,
              help="Add each figure's 95 % measurement interval, or why it is not estimated "
              "(a circular block bootstrap, 10,000 resamples; not graded).")
@click.option("--refresh-hz", type=float, default=None, metavar="HZ",
              help="The display's refresh rate (its highest under VRR), for the refresh-cadence "
              "figures that need it; as card.yaml's test_system.display_timing.refresh_hz.")
@click.option("--vrr", default=None, metavar="MIN-MAX|none",
              help="The display's variable-refresh window in Hz, e.g. 48-165, or none (the "
              "default with --refresh-hz: a fixed refresh).")
@click.option("--presentation", type=click.Choice(("fullscreen", "windowed")), default=None,
              help="How the game presented (needs --refresh-hz): fullscreen checks the "
              "captures for composed presentation; as card.yaml's "
              "test_system.display_timing.presentation.")
def command(captures: tuple[str, ...], fmt: str | None, process: str | None, as_json: bool,
            interval: bool, refresh_hz: float | None, vrr: str | None,
            presentation: str | None) -> None:
    """SOP v1.1 figures and diagnostics per capture."""
    keep_freed_memory()
    timing = display_timing_option(refresh_hz, vrr, presentation)
    reports = report_captures(list(captures), format=fmt, process=process, interval=interval,
                              timing=timing)
    good = [r for r in reports if isinstance(r, CaptureReport)]
    if as_json:
        click.echo(json.dumps([r.as_json() for r in reports], indent=2, ensure_ascii=False))
    elif good:
        click.echo(render_table(good))
    errors = [r.error for r in reports if isinstance(r, RefusedCapture)]
    for error in errors:
        click.echo(f"certgen: {error}", err=True)
    if errors:
        raise click.exceptions.Exit(1)  # EXIT_REFUSED: a file was refused
