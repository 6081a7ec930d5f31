"""What the capture measured beside the present intervals: latency and animation error.

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

Figures are unrounded (documents round them when they print them). No value, no figure: null,
never 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from certgen.model.measured import AnimationError, Latency, LatencySpread, MeasuredByCapture

if TYPE_CHECKING:
    from certgen.captures.model import Capture

FloatArray = npt.NDArray[np.float64]

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


def measured_by(capture: Capture) -> MeasuredByCapture:
    """Latency and animation error together (record.json `runs[].measured`)."""
    return MeasuredByCapture(latency=latency_of(capture), animation_error=animation_error_of(capture))
