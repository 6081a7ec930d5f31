"""Frame generation and display timing: diagnostics beside the SOP figures, never instead.

The SOP figures stay what the SOP defines: the present intervals of the chosen group, every
frame (certgen.metrics.figures). Where a capture carries the columns (read in the same pass as the
frame times, certgen.captures.presentmon and capframex), this stage adds, for the reader
(docs/spec/metrics.md, "Frame generation and display timing"):

- frame generation (PresentMon 2.x `FrameType`): how many frames of the group the tool marks
  as generated (any type but "Application"; NA types are left out of both counts), their share
  of the frames with a type, the count per type as written, and the SOP figures over the
  application frames' own present intervals. PresentMon writes one row per displayed instance
  of a present, generated instances first, each carrying the present's MsBetweenPresents; the
  application row's interval is the game's own present-to-present time, so filtering the rows
  is the application's frame rate (summing the generated rows in would count the time twice);
- display timing (`MsBetweenDisplayChange`): the same figures over the display-change
  intervals. A frame that never reached the screen has no display change: PresentMon 1.x
  writes 0 for it (and for the first displayed frame of a swap chain), 2.x writes NA; both are
  left out and counted as not displayed (PresentMon's own statistics skip a 0 the same way).
  The time of a frame that was not displayed is inside the next displayed frame's interval,
  so the displayed intervals still cover the capture.

The figures (frames, average, 1 % low, 0.1 % low, gap, stutter) are certgen.metrics.figures'
arithmetic on another set of intervals; no Fluidity Score is given, since nothing here is
graded. No column, no figure: null, never 0.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from certgen.metrics.figures import compute_sop_metrics, positive_frames, round_half_away
from certgen.model import Weights
from certgen.model.figures import (
    DiagnosticFigures,
    DisplayDiagnostic,
    FrameDiagnostics,
    FrameGenerationDiagnostic,
    FrameGenerationObserved,
    FrameTypeCount,
    PerSecondRange,
)

if TYPE_CHECKING:
    from certgen.captures.model import Capture, FrameTypeCodes

FloatArray = npt.NDArray[np.float64]
APPLICATION = "Application"
"""PresentMon's FrameType for a frame the application rendered (NotSet and Repeated frames are
written so too)."""


def figures_of(intervals_ms: FloatArray, weights: Weights) -> DiagnosticFigures | None:
    """The SOP figures of these intervals (t <= 0 dropped as certgen.metrics.figures does), or None
    when none is positive."""
    frames, _ = positive_frames(intervals_ms)
    if frames.size == 0:
        return None
    sop = compute_sop_metrics(frames, weights)
    return DiagnosticFigures(frames=sop.frames, avg_fps=sop.avg_fps, low_1pct_fps=sop.low_1pct_fps,
                             low_0_1pct_fps=sop.low_0_1pct_fps,
                             consistency_gap=sop.consistency_gap, stutter=sop.stutter)


def compute_frame_generation(frame_times_ms: FloatArray, frame_types: npt.NDArray[np.object_],
                             weights: Weights, codes: FrameTypeCodes | None = None
                             ) -> FrameGenerationDiagnostic:
    """Frame-generation diagnostics of frame times and their types (same length); `codes`,
    the same types as codes into a table (the PresentMon reader's form), are counted faster."""
    if codes is not None:  # a bincount: a million frames in about a millisecond
        counts = Counter(codes.counts())
        app = codes.of_type(APPLICATION)
    else:  # Counter over the list and numpy's elementwise ==, both in C
        counts = Counter(frame_types.tolist())
        app = np.asarray(frame_types == APPLICATION, dtype=bool)
    typed = {t: n for t, n in counts.items() if t is not None}  # NA: no type, in neither count
    n = sum(typed.values())
    generated = n - int(np.count_nonzero(app))
    return FrameGenerationDiagnostic(
        column="FrameType",
        frames=n,
        generated_frames=generated,
        generated_share=round_half_away(generated / n, 4) if n else None,
        frame_types=tuple(FrameTypeCount(frame_type=t, frames=c) for t, c in sorted(typed.items())),
        application=figures_of(frame_times_ms[app], weights),
    )


def compute_display_timing(display_change_ms: FloatArray, column: str, weights: Weights
                           ) -> DisplayDiagnostic:
    """Display-timing diagnostics of display-change intervals (NaN = NA)."""
    shown = display_change_ms[display_change_ms > 0.0]  # NaN compares false: left out
    return DisplayDiagnostic(column=column, not_displayed=int(display_change_ms.size - shown.size),
                             figures=figures_of(shown, weights))


NOT_SHOWN_NO_COLUMN = ("not shown by this capture: it has no frame-type column (PresentMon "
                       "2.x FrameType)")
NOT_SHOWN_NO_APPLICATION = ("not shown by this capture: no frame of the group is typed as an "
                            "application frame")


def _multiplier(frames: int, application: int) -> float:
    return round_half_away(frames / application, 2)


def observe_frame_generation(frame_times_ms: FloatArray, frame_types: npt.NDArray[np.object_]
                             | None, codes: FrameTypeCodes | None = None
                             ) -> FrameGenerationObserved:
    """The frame-generation multiplier a capture shows (docs/spec/metrics.md,
    "Frame-generation mode"): typed frames per application frame, over the capture and per whole
    second.

    The multiplier is (application + generated) / application, on the scale of the modes
    card.yaml declares (a 2x mode shows one generated frame per application frame). Seconds
    are counted on the application frames' own time (generated rows repeat their present's
    interval, so summing every row would count time twice), each generated row in the second of
    the application frame it precedes; a row with no type (NA) counts in neither, and only whole
    seconds are taken (a part second at the end would read high or low by one frame)."""
    if frame_types is None and codes is None:
        return FrameGenerationObserved(observed_multiplier=None, per_second=None,
                                       not_shown=NOT_SHOWN_NO_COLUMN)
    if codes is not None:
        app = codes.of_type(APPLICATION)
        typed = codes.codes != codes.names.index(None) if None in codes.names else \
            np.ones(codes.codes.shape, dtype=bool)
    else:
        assert frame_types is not None
        app = np.asarray(frame_types == APPLICATION, dtype=bool)
        typed = np.asarray([t is not None for t in frame_types.tolist()], dtype=bool)
    applications = int(np.count_nonzero(app))
    if applications == 0:
        return FrameGenerationObserved(observed_multiplier=None, per_second=None,
                                       not_shown=NOT_SHOWN_NO_APPLICATION)
    # Each application frame at the time reached with it; a generated row belongs to the
    # application frame written after it (PresentMon writes the generated instances first).
    app_rows = np.flatnonzero(app)
    ends = np.cumsum(np.where(frame_times_ms[app_rows] > 0.0, frame_times_ms[app_rows], 0.0))
    whole = int(ends[-1] // 1000.0)
    per_second = None
    if whole >= 1:
        owner = np.searchsorted(app_rows, np.arange(app.size))  # len(app_rows): no owner
        owned = owner < app_rows.size
        app_second = (ends // 1000.0).astype(np.int64)
        second = np.full(app.size, whole, dtype=np.int64)
        second[owned] = app_second[owner[owned]]
        inside = second < whole  # whole seconds only
        shown = np.bincount(second[inside & typed], minlength=whole)
        apps = np.bincount(second[inside & app], minlength=whole)
        ratios = [_multiplier(int(n), int(a)) for n, a in zip(shown, apps) if a > 0]
        if ratios:
            per_second = PerSecondRange(min=min(ratios), max=max(ratios))
    return FrameGenerationObserved(
        observed_multiplier=_multiplier(int(np.count_nonzero(typed)), applications),
        per_second=per_second, not_shown=None)


def application_clock_ms(frame_times_ms: FloatArray, frame_types: npt.NDArray[np.object_]
                         | None, codes: FrameTypeCodes | None = None) -> FloatArray | None:
    """Each frame's end on the capture's clock when the capture types some frames as generated,
    else None (the running sum of the frame times is then the clock).

    PresentMon writes a generated frame as its own row carrying its present's interval, so the
    running sum of every row counts a 2x capture's time twice (a 40 s capture would read 80 s).
    The clock runs on the application frames' own intervals; a generated row ends with the
    application frame written after it (or, after the last one, with the last)."""
    if codes is not None:
        app = codes.of_type(APPLICATION)
        typed = int(np.count_nonzero(codes.codes != codes.names.index(None))) \
            if None in codes.names else int(codes.codes.size)
    elif frame_types is not None:
        app = np.asarray(frame_types == APPLICATION, dtype=bool)
        typed = sum(1 for t in frame_types.tolist() if t is not None)
    else:
        return None
    app_rows = np.flatnonzero(app)
    if app_rows.size == 0 or typed == app_rows.size:  # nothing generated: the plain clock
        return None
    steps = frame_times_ms[app_rows]
    ends = np.cumsum(np.where(steps > 0.0, steps, 0.0))
    owner = np.minimum(np.searchsorted(app_rows, np.arange(app.size)), app_rows.size - 1)
    clock: FloatArray = ends[owner]
    return clock


def compute_frame_diagnostics(capture: Capture, weights: Weights) -> FrameDiagnostics:
    """The diagnostics of a Capture (certgen.captures.model.Capture) from its optional columns."""
    fg = None
    if capture.frame_types is not None:
        fg = compute_frame_generation(capture.frame_times_ms, capture.frame_types, weights,
                                      capture.frame_type_codes)
    display = None
    if capture.display_change_ms is not None:
        display = compute_display_timing(capture.display_change_ms,
                                         capture.display_change_column or "", weights)
    observed = observe_frame_generation(capture.frame_times_ms, capture.frame_types,
                                        capture.frame_type_codes)
    return FrameDiagnostics(frame_generation=fg, display=display,
                            frame_generation_observed=observed)
