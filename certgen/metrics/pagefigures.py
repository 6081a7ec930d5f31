"""The benchmark page's summary figures of one side (docs/spec/compare.md), and the check of the
figures a file states against them.

A benchmark-page CSV (`side,kind,name,value`) carries, beside each side's frame rows, the
exporting tool's own summary as `kind=metric` rows. The reader (certgen.captures.benchcsv)
returns those as what the file states (`Capture.stated_figures`), never trusted and never a
figure certgen computes; here they are recomputed from the frame rows by the benchmark-page
rules (frames over 200 ms kept out of the mean, the lows and the percentiles, and counted) and
every disagreement, and every name certgen does not recompute, becomes a warning.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from certgen.captures.model import Capture
from certgen.metrics.diagnostics import STALL_MS, compute_diagnostics
from certgen.metrics.figures import fps_figures, positive_frames, round_half_away
from certgen.metrics.validity import reading_warnings

PageFigures = dict[str, float | int | None]
"""Summary figures by their metric-row name (certgen.compare.statistics.METRIC_ROWS)."""


def page_figures(frames: npt.NDArray[np.float64]) -> PageFigures:
    """The summary metrics of compare.md from one side's frame rows (ms)."""
    positive, _ = positive_frames(frames)
    counted = positive[positive <= STALL_MS]
    fps = fps_figures(counted)
    diag = compute_diagnostics(positive)

    def ms(value: float | None) -> float | None:
        return None if value is None else round_half_away(value, 3)

    return {
        "frames": int(counted.size),
        "avg_fps": fps.avg_fps,
        "low_1pct_fps": fps.low_1pct_fps,
        "low_0_1pct_fps": fps.low_0_1pct_fps,
        "p99_ms": ms(diag.p99_ms),
        "p99_9_ms": ms(diag.p99_9_ms),
        "stutter_count": diag.stutter_count,
        "excluded_over_stall_count": diag.stall_count,
        # The same count under the name spec/compare.md pins: exports of any version read back.
        "excluded_over_stall_ms": diag.stall_count,
        # The time in those frames, as the report prints it (its own name: a time, not a count).
        "stall_time_ms": round_half_away(float(np.sum(positive[positive > STALL_MS])), 3),
    }


def _same(given: float | None, computed: float | None) -> bool:
    if given is None or computed is None:
        return given is None and computed is None
    return abs(given - float(computed)) <= 1e-9 * max(1.0, abs(given))


def stated_figure_warnings(
    side: str,
    stated: Iterable[tuple[str, float | None]],
    frames: npt.NDArray[np.float64],
) -> tuple[str, ...]:
    """A warning per stated figure of `side` that its frame rows do not give, or that certgen
    does not recompute, in the order given (by name); none without stated figures."""
    stated = tuple(stated)
    if not stated:
        return ()
    computed = page_figures(frames)
    warnings = []
    for metric, given in stated:
        if metric not in computed:
            warnings.append(f"side {side!r}: metric {metric!r} is not recomputed")
        elif not _same(given, computed[metric]):
            warnings.append(
                f"side {side!r}: {metric} is {given} in the file, recomputed {computed[metric]}"
            )
    return tuple(warnings)


def checked(captures: Iterable[Capture]) -> list[Capture]:
    """Captures as read, each with a warning for every figure its file states that its frames
    do not give (and every stated name certgen does not recompute), and for what the validity
    checks that need no declared display find (certgen.metrics.validity): what every caller of a
    reader shows (the pipeline, `certgen metrics`, reports, the API)."""
    return [capture.with_warnings(stated_figure_warnings(
        capture.label or "", capture.stated_figures, capture.frame_times_ms)
        + reading_warnings(capture))
        for capture in captures]
