"""The capture minimum and the capture age (docs/spec/rules.md, "Capture minimum" and "Capture
age"; issue 39).

- A recorded capture shorter than the minimum (in seconds of counted frame time, or with fewer
  frames than make k₀.₁ reach its minimum) is incomplete: it cannot be graded, the certificate
  cannot be issued, and the SOP's re-run rule applies (re-run the configuration; the re-run is
  the recorded run and this capture its archived first capture). One refusal per run, naming
  the run, its frames and seconds and the minimum. An archived first capture below the minimum
  is a reason it was re-run (certgen.pipeline passes it on as incomplete).
- A run's tested_on, its first capture's, and the date a capture records (CapFrameX's) older
  than the maximum age before the issue date are refused, naming the field and both dates.

The limits are certgen's defaults or the issuing lab's (certgen.sop.capture_limits,
certgen.inputs.lab). Pure functions; nothing here reads a file or a clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np
import numpy.typing as npt

from certgen.inputs.bundle import CARD_FILE, CardFile
from certgen.metrics.figures import (
    LOW_0_1PCT_DENOMINATOR,
    k_slowest,
    positive_frames,
    round_half_away,
)
from certgen.model.verdict import CaptureTooOld, CaptureTooShort
from certgen.rules.agreement import captured_date
from certgen.rules.provenance import HeldCapture
from certgen.rules.verdict import Refusal
from certgen.sop.capture_limits import CaptureLimits


@dataclass(frozen=True)
class Extent:
    """How much a capture holds, as the SOP counts it: its positive frame times."""

    frames: int
    seconds: float
    """Their total in seconds, rounded to 1 decimal (as the record's `duration_s` and every
    message print it; the minimum is compared with this printed value)."""

    @property
    def k_0_1pct(self) -> int:
        """How many frames the 0.1% low is the mean of."""
        return k_slowest(self.frames, LOW_0_1PCT_DENOMINATOR)


def extent_of(frame_times_ms: npt.NDArray[np.float64]) -> Extent:
    """The frames and seconds of a capture's frame times (non-positive ones left out)."""
    kept, _ = positive_frames(frame_times_ms)
    total_ms = float(np.sum(kept)) if kept.size else 0.0
    return Extent(frames=int(kept.size), seconds=round_half_away(total_ms / 1000.0, 1))


def below_minimum(extent: Extent, limits: CaptureLimits) -> bool:
    """Whether a capture is too short to be graded."""
    return extent.seconds < limits.min_seconds or extent.k_0_1pct < limits.min_k_0_1pct


def minimum_text(limits: CaptureLimits) -> str:
    """The minimum in words, as every message gives it."""
    return (f"at least {limits.min_seconds:g} s and {limits.min_frames} frames (the 0.1% low "
            f"the mean of at least {limits.min_k_0_1pct} frames)")


def shortfall(extent: Extent, limits: CaptureLimits) -> str:
    """Why a capture below the minimum is incomplete (a first capture's re-run reason)."""
    return (f"{extent.frames} frames over {extent.seconds:g} s, below the minimum to be graded "
            f"({minimum_text(limits)})")


def too_short(index: int, label: str, file: str, extent: Extent, limits: CaptureLimits, *,
              rerun: bool) -> Refusal | None:
    """The refusal of a recorded capture below the minimum, or None when it is not."""
    if not below_minimum(extent, limits):
        return None
    then = ("the configuration was re-run and the re-run is incomplete too, so it cannot be "
            "graded under the SOP's re-run rule" if rerun else
            "re-run the configuration (the SOP's re-run rule): the re-run is the recorded run "
            "and this capture its archived first_capture")
    return Refusal(
        f"{CARD_FILE}: runs[{index}].capture: run \"{label}\": {file} is incomplete: "
        f"{extent.frames} frames over {extent.seconds:g} s; a graded capture needs "
        f"{minimum_text(limits)}; {then}",
        CaptureTooShort(code="capture_too_short", run=index, file=file, frames=extent.frames,
                        seconds=extent.seconds, min_seconds=limits.min_seconds,
                        min_frames=limits.min_frames, min_k_0_1pct=limits.min_k_0_1pct,
                        rerun=rerun))


def _too_old(index: int, field: str, what: str, day: date, issued: date,
             limits: CaptureLimits) -> Refusal | None:
    days = (issued - day).days
    if days <= limits.max_age_days:
        return None
    return Refusal(
        f"{CARD_FILE}: runs[{index}].{field}: {what} {days} days before the issue date "
        f"{issued} (certificate.issued); a capture may be at most {limits.max_age_days} days "
        "old when its certificate is issued (lab.yaml max_capture_age_days)",
        CaptureTooOld(code="capture_too_old", run=index, field=field, date=day.isoformat(),
                      issued=issued.isoformat(), days=days, max_days=limits.max_age_days))


def too_old(card: CardFile, captures: Sequence[HeldCapture], limits: CaptureLimits
            ) -> list[Refusal]:
    """Every tested_on (runs and first captures) and every recorded capture date older than the
    maximum age at issue, in card order (a date certgen cannot read is not compared)."""
    issued = card.certificate.issued
    found: list[Refusal | None] = []
    by_run: dict[int, list[HeldCapture]] = {}
    for held in captures:
        by_run.setdefault(held.run, []).append(held)
    for index, run in enumerate(card.runs):
        if run.tested_on is not None:
            found.append(_too_old(index, "tested_on", f"{run.tested_on} is", run.tested_on,
                                  issued, limits))
        first = run.first_capture
        if first is not None and first.tested_on is not None:
            found.append(_too_old(index, "first_capture.tested_on", f"{first.tested_on} is",
                                  first.tested_on, issued, limits))
        for held in by_run.get(index, []):
            text = held.recorded.captured_at
            day = None if text is None else captured_date(text)
            if day is not None:
                found.append(_too_old(
                    index, held.field,
                    f"run \"{run.label}\": {held.file} records capture date {text!r},",
                    day, issued, limits))
    return [r for r in found if r is not None]
