"""Capture validity: patterns in a capture that say its frames may not be what they seem.

Diagnostics beside the SOP figures, never graded and never changing a figure (the SOP figures
stay the present intervals as written, SOP 4.2's drop rule included). Each check reads the
columns the capture has; a check whose columns (or declaration) are missing does not run and
is not listed as checked, so "nothing found" is only ever said of a check that ran
(docs/spec/metrics.md, "Capture validity"). In rule order:

- `generated_zero_interval`: frames PresentMon types as generated (FrameType other than
  Application) logged with a 0 ms present interval, a pattern some frame generators show; the
  SOP drops them as non-positive frame times (counted). Needs FrameType.
- `repeated_cpu_start`: frames whose CPU start (CPUStartQPC, CPUStartQPCTime,
  CPUStartQPCTimeInMs or CPUStartTime, as written) repeats the previous frame's: one CPU frame
  logged twice, the other known pattern of some frame generators. Needs a CPU start column.
- `composed_presentation`: frames presented through the desktop compositor (PresentMode
  "Composed: …") while the display timing declares full-screen presentation. Needs PresentMode
  and `presentation: fullscreen`.
- `tearing_with_vrr`: frames presented with tearing allowed (AllowsTearing 1) sooner than
  the declared VRR window's shortest refresh (present interval > 0 and < 1000 / max_hz): the
  display cannot start a new refresh that soon, so such a frame is shown torn even with VRR
  active. Tearing allowed inside the window is not a finding (borderless VRR needs the flag).
  Needs AllowsTearing and a declared VRR window.
- `wrapped_interval`: intervals the tool wrote as an unsigned wrap-around (about 2⁶⁴ × 100 ns,
  a FrameView defect), read as the negative interval they wrap and dropped by the SOP. Runs on
  every capture.

`validity_of` gives the checks and findings (record.json `runs[].measured.validity`,
`metrics --json` `validity`); `finding_warning` words a finding for `check` and `metrics`.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from certgen.model.measured import (
    CaptureValidity,
    DisplayTiming,
    ValidityCheck,
    ValidityCount,
    ValidityFinding,
)

if TYPE_CHECKING:
    from certgen.captures.model import Capture

APPLICATION: Final = "Application"
"""PresentMon's FrameType for a frame the application rendered."""
COMPOSED_PREFIX: Final = "Composed:"
"""PresentMon's PresentMode for a present the desktop compositor copied or flipped ("Composed:
Flip", "Composed: Copy with GPU GDI", …); "Hardware Composed: Independent Flip" is not one."""
TEARING: Final = "1"
"""AllowsTearing as PresentMon writes it for a present that may tear."""
DECLARED: Final[frozenset[ValidityCheck]] = frozenset(
    {"composed_presentation", "tearing_with_vrr"})
"""Checks that need the declared display (card.yaml, or metrics' options): the pipeline and
`metrics` warn about them once they know it; the others are warned about on reading."""


def _counts(names: list[str | None]) -> tuple[ValidityCount, ...]:
    """Each value with its frames, most frames first, then by value (None left out)."""
    tally = Counter(n for n in names if n is not None)
    return tuple(ValidityCount(value=v, frames=n)
                 for v, n in sorted(tally.items(), key=lambda item: (-item[1], item[0])))


def _finding(check: ValidityCheck, hit: npt.NDArray[np.bool_], capture: Capture, column: str,
             named: npt.NDArray[np.object_] | None) -> ValidityFinding | None:
    count = int(np.count_nonzero(hit))
    if not count:
        return None
    values = () if named is None else _counts(named[hit].tolist())
    return ValidityFinding(check=check, frames=count, of_frames=int(capture.frame_times_ms.size),
                           column=column, values=values)


def _generated(capture: Capture) -> npt.NDArray[np.bool_]:
    """Per frame, whether its type is a generator's (not Application, not NA)."""
    codes = capture.frame_type_codes
    if codes is not None:
        named = np.isin(codes.codes, [i for i, n in enumerate(codes.names) if n is not None])
        generated: npt.NDArray[np.bool_] = named & ~codes.of_type(APPLICATION)
        return generated
    types = capture.frame_types
    assert types is not None
    return np.array([t is not None and t != APPLICATION for t in types.tolist()], dtype=bool)


def validity_of(capture: Capture, timing: DisplayTiming | None = None) -> CaptureValidity:
    """The checks the capture's columns (and `timing`, the declared display) allow, in rule
    order, and the ones that found frames."""
    checked: list[ValidityCheck] = []
    found: list[ValidityFinding | None] = []
    types = capture.frame_types
    if types is not None:
        checked.append("generated_zero_interval")
        hit = (capture.frame_times_ms == 0.0) & _generated(capture)
        found.append(_finding("generated_zero_interval", hit, capture,
                              "FrameType, " + capture.interval_column, types))
    if capture.cpu_start_repeated is not None and capture.cpu_start_column is not None:
        checked.append("repeated_cpu_start")
        found.append(_finding("repeated_cpu_start", capture.cpu_start_repeated, capture,
                              capture.cpu_start_column, types))
    modes = capture.label_column("PresentMode")
    if modes is not None and timing is not None and timing.presentation == "fullscreen":
        checked.append("composed_presentation")
        composed = [i for i, n in enumerate(modes.names)
                    if n is not None and n.startswith(COMPOSED_PREFIX)]
        found.append(_finding("composed_presentation", np.isin(modes.codes, composed), capture,
                              "PresentMode", modes.names_of()))
    tearing = capture.label_column("AllowsTearing")
    if tearing is not None and timing is not None and timing.vrr_min_hz is not None:
        checked.append("tearing_with_vrr")
        assert timing.vrr_max_hz is not None  # a window has both ends
        t = capture.frame_times_ms
        sooner = (t > 0.0) & (t < 1000.0 / timing.vrr_max_hz)
        found.append(_finding("tearing_with_vrr", tearing.of_type(TEARING) & sooner, capture,
                              "AllowsTearing, " + capture.interval_column, None))
    checked.append("wrapped_interval")
    if capture.wrapped_intervals:
        found.append(ValidityFinding(check="wrapped_interval", frames=capture.wrapped_intervals,
                                     of_frames=int(capture.frame_times_ms.size),
                                     column=capture.interval_column, values=()))
    return CaptureValidity(checked=tuple(checked),
                           findings=tuple(f for f in found if f is not None))


def _frames(n: int) -> str:
    return f"{n} frame" if n == 1 else f"{n} frames"


def finding_warning(finding: ValidityFinding, timing: DisplayTiming | None = None) -> str:
    """The warning `check` and `metrics` print for a finding (English; the documents word it
    from the record in each language)."""
    n, of = finding.frames, finding.of_frames
    if finding.check == "generated_zero_interval":
        names = ", ".join(sorted(c.value for c in finding.values))
        return (f"{n} generated {'frame' if n == 1 else 'frames'} ({names}) logged with a 0 ms "
                "present interval, a pattern PresentMon shows with some frame generators: the "
                "SOP drops them as non-positive frame times (counted); the application frames' "
                "own figures are under frame generation")
    if finding.check == "repeated_cpu_start":
        kinds = f" ({finding.named})" if finding.values else ""
        return (f"the previous frame's CPU start ({finding.column}) repeated on {_frames(n)} "
                f"of {of}{kinds}, a pattern PresentMon shows with some frame generators: "
                "such a row is not a frame the CPU began; the SOP figures count its present "
                "interval as written")
    if finding.check == "composed_presentation":
        return (f"{_frames(n)} of {of} were presented through the desktop compositor "
                f"({finding.named}) while the display is declared full-screen: the compositor "
                "stood between the game and the display (more latency, and pacing it decides); "
                "check the game's display mode")
    if finding.check == "tearing_with_vrr":
        window = ("" if timing is None or timing.vrr_min_hz is None or timing.vrr_max_hz is None
                  else f" {timing.vrr_min_hz:g}-{timing.vrr_max_hz:g} Hz")
        return (f"{_frames(n)} of {of} allowed tearing (AllowsTearing=1) and came sooner than "
                f"the declared VRR window{window} can refresh: such a frame is shown torn even "
                "with VRR active (a frame-rate cap below the window's top avoids it)")
    return (f"{_frames(n)} of {of} with an interval written as an unsigned wrap-around "
            f"({finding.column}), a known FrameView defect: dropped as non-positive")


def reading_warnings(capture: Capture) -> tuple[str, ...]:
    """Warnings for the checks that need no declared display, as every caller of a reader
    shows them (the wrap-around has its own warning from the reader, with its values)."""
    return tuple(finding_warning(f) for f in validity_of(capture).findings
                 if f.check not in DECLARED and f.check != "wrapped_interval")


def declared_warnings(capture: Capture, timing: DisplayTiming | None) -> tuple[str, ...]:
    """Warnings for the checks that need the declared display `timing` (none without it)."""
    if timing is None:
        return ()
    return tuple(finding_warning(f, timing) for f in validity_of(capture, timing).findings
                 if f.check in DECLARED)
