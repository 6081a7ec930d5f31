"""Which reader a capture file needs, decided from its content (never its name).

Detection looks at the first non-empty line after a UTF-8 BOM (docs/spec/captures.md):

| first line | format id |
| --- | --- |
| `{"schema_version":` | frame-stats (engine JSON Lines) |
| any other `{` | capframex-json (the reader requires a `Runs` array) |
| `//` | capframex-csv |
| `side,kind,name,value` | bench-csv |
| `os,cpu,gpu,…`, `v1`, or `fps,frametime,…` | mangohud |
| a CSV header with MsBetweenPresents / msBetweenPresents / FrameTime, or starting `Application,` | PresentMon family |

In the PresentMon family the header tells the tools apart: a `Motherboard` column is OCAT (its
system information sits on the first data row); `GPU`, `CPU` and `Resolution` columns are an
NVIDIA FrameView log; anything else is PresentMon. All three go through one reader and report
their own id ("ocat", "frameview", "presentmon").

Each test is a format's `sniff` in the one table of formats (captures/formats.py), tried in its
`sniff_order`; this module reads a capture through that table: detect, refuse a `process` the
format cannot apply, read, then check what every reader's result must satisfy.
"""

from __future__ import annotations

import csv
import dataclasses
import pathlib

import numpy as np
import numpy.typing as npt

from certgen.captures.common import MAX_CAPTURE_FRAMES, Data, check_head, first_line, mapped_capture
from certgen.captures.errata import capture_errata
from certgen.captures.formats import DETECTION_ORDER, ReadRequest, format_of, listed_formats
from certgen.captures.formats import FORMATS as FORMATS  # re-exported: --format takes it from here
from certgen.captures.model import Capture
from certgen.captures.presentmon import SENSOR_COLUMNS, WRAP_MS, WRAP_SPAN_MS
from certgen.errors import CaptureFormatError
from certgen.errors import NoProcessGroupsError as NoProcessGroupsError  # re-exported (moved)
from certgen.model.capture import UnusableColumn, UnusableReason
from certgen.support.untrusted import shorten


def detect_format(head: bytes, name: str) -> str:
    """The format id of a capture from its first bytes, or a CaptureFormatError."""
    number, line = first_line(head)
    for fmt in DETECTION_ORDER:
        if fmt.sniff(line):
            return fmt.id
    raise CaptureFormatError(
        f"not a capture format certgen reads: the first line is {shorten(line)!r} (expected a "
        f"{listed_formats()} file)",
        file=name,
        line=number,
    )


def read_capture_file(
    path: pathlib.Path,
    *,
    name: str | None = None,
    format: str | None = None,
    process: str | None = None,
) -> list[Capture]:
    """Read one capture file into Captures (see `read_capture`); the file is opened once.

    `name` is how messages and results name the file (default: the path as given). The file is
    mapped, not read: the PresentMon-family reader walks it a block at a time (bounded memory).
    """
    path = pathlib.Path(path)
    shown = str(path) if name is None else name
    check_format(format, shown)
    with mapped_capture(path, shown) as data:
        return read_capture(data, name=shown, format=format, process=process)


def check_format(format: str | None, name: str) -> None:
    """Refuse a `--format` / card.yaml `format` that is not an id of FORMATS."""
    if format is not None and format not in FORMATS:
        raise CaptureFormatError(
            f"unknown format {format!r} (known: {', '.join(FORMATS)})", file=name
        )


def read_capture(
    data: Data,
    *,
    name: str,
    format: str | None = None,
    process: str | None = None,
) -> list[Capture]:
    """A capture's bytes as Captures: one per run (most formats hold exactly one). Pure.

    `name` is how messages and results name the file; `format` forces a reader (an id of
    FORMATS, then reported as the capture's format); `process` picks a PresentMon-family group
    by its Application name (`""` picks the groups with an empty name). A `process`
    for a capture without process groups (MangoHud, CapFrameX JSON, frame-stats, benchmark
    CSV, or a CSV with no Application column) is refused with a NoProcessGroupsError, never
    ignored.
    """
    check_format(format, name)
    try:
        captures = _dispatch(data, name, format, process)
    except csv.Error as exc:
        # e.g. a field over the csv module's 128 KiB limit: no capture has one.
        raise CaptureFormatError(f"not a readable CSV file ({exc})", file=name) from None
    for capture in captures:
        check_frame_times(capture, name)
    captures = [set_aside(capture) for capture in captures]
    # Known tool defects in the columns read, through the tool and version the file records.
    captures = [capture.with_errata(capture_errata(capture, format_of(capture.format).tool))
                for capture in captures]
    # What a file states about its own figures stays a claim here (Capture.stated_figures):
    # the callers check it against the frames (certgen.metrics.pagefigures.checked), as readers
    # compute no figure.
    return captures


MAX_FRAME_TIME_MS = 1e7
"""Largest frame time (and largest negative one) a capture may hold: 10,000 s, far beyond any
stall. Larger values overflow the SOP arithmetic (1e308 ms sums to infinity)."""

MIN_FRAME_TIME_MS = 1e-6
"""Smallest positive frame time (1 ns): below it 1000 / t overflows (denormals such as 5e-324)."""


POWER_COLUMNS = SENSOR_COLUMNS[:4]
"""FrameView's power columns (W), as certgen.metrics.measured reads them."""
MIN_POWER_W = 1e-3
"""Smallest power reading above 0 W: FPS per watt divides by it (5e-324 W made it infinite)."""
MAX_POWER_W = 1e5
"""Largest power reading (100 kW, far beyond any GPU system)."""


def check_frame_times(capture: Capture, name: str) -> None:
    """Refuse a capture holding more than MAX_CAPTURE_FRAMES frames, or a frame time outside the
    documented range (docs/limits.md), naming the first such frame (1-based, in the capture's
    order) and its column. The diagnostic columns are never refused: set_aside drops the ones
    it cannot use."""
    times = capture.frame_times_ms
    if times.size > MAX_CAPTURE_FRAMES:
        where = f"{capture.label}: " if capture.label else ""
        raise CaptureFormatError(
            f"{where}{times.size} frames, more than the limit of {MAX_CAPTURE_FRAMES} for a "
            "capture", file=name)
    size = np.abs(times)
    bad = np.flatnonzero((size > MAX_FRAME_TIME_MS) | ((times > 0) & (times < MIN_FRAME_TIME_MS)))
    where = f"{capture.label}: " if capture.label else ""
    if bad.size:
        first = int(bad[0])
        raise CaptureFormatError(
            f"{where}frame {first + 1}: frame time {float(times[first])!r} ms is outside the "
            f"range certgen accepts ({MIN_FRAME_TIME_MS:g} to {MAX_FRAME_TIME_MS:g} ms)",
            file=name, field=capture.interval_column,
        )


WRAP_SPAN = (WRAP_MS - WRAP_SPAN_MS, WRAP_MS + WRAP_SPAN_MS)
"""A diagnostic value this close to 2⁶⁴ × 100 ns is FrameView's unsigned wrap-around (public
logs show about 1844674407370950 to 1844674407371037 ms in MsPCLatency and
MsBetweenDisplayChange), named so rather than as merely out of range."""


def _unusable(column: str, values: npt.NDArray[np.float64]) -> list[UnusableColumn]:
    """Why `column` cannot be used, one entry per reason (empty: every value can be held). NaN is
    no value (`NA`) and is fine; a value beyond MAX_FRAME_TIME_MS either way would overflow the
    sums and sorts of the diagnostics (the same bound as a frame time's); a power reading above
    0 W must lie in MIN_POWER_W..MAX_POWER_W."""
    infinite = np.isinf(values)
    wrapped = (values >= WRAP_SPAN[0]) & (values <= WRAP_SPAN[1])
    beyond = ~infinite & ~wrapped & (np.abs(values) > MAX_FRAME_TIME_MS)
    if column in POWER_COLUMNS:
        # A power reading is divided by (FPS per watt): above 0 W (0 or below is no reading) it
        # must lie in MIN_POWER_W..MAX_POWER_W (issue 40: a 5e-324 W cell made it infinite).
        beyond |= ~infinite & ~wrapped & (values > 0.0) & (
            (values < MIN_POWER_W) | (values > MAX_POWER_W))
    found = []
    reasons: tuple[tuple[UnusableReason, npt.NDArray[np.bool_]], ...] = (
        ("wrap_around", wrapped), ("not_finite", infinite), ("out_of_range", beyond))
    for reason, mask in reasons:
        hits = np.flatnonzero(mask)
        if hits.size:
            found.append(UnusableColumn(column=column, reason=reason, frames=int(hits.size),
                                        of_frames=int(values.size),
                                        first_frame=int(hits[0]) + 1))
    return found


def set_aside(capture: Capture) -> Capture:
    """The capture with every diagnostic column it cannot use set aside (issue 39): a latency,
    animation-error, CPU/GPU, sensor or display-change column holding a value the column cannot
    hold (FrameView's wrap-around, NaN or infinity written as a number, beyond 10,000,000 either
    way) is dropped, so its figures read "not measured", and `unusable_columns` says how many
    frames and why. The intervals and every other column stand: a diagnostic never refuses a
    capture."""
    unusable: list[UnusableColumn] = []
    kept = []
    for column, values in capture.measured:
        found = _unusable(column, values)
        unusable.extend(found)
        if not found:
            kept.append((column, values))
    shown, shown_column = capture.display_change_ms, capture.display_change_column
    if shown is not None:
        found = _unusable(shown_column or "display change", shown)
        if found:
            unusable.extend(found)
            shown, shown_column = None, None
    if not unusable:
        return capture
    # frame_types is made from frame_type_codes when there are codes (give one, not both).
    types = None if capture.frame_type_codes is not None else capture.frame_types
    return dataclasses.replace(
        capture, measured=tuple(kept), display_change_ms=shown,
        display_change_column=shown_column, frame_types=types,
        unusable_columns=tuple(sorted(unusable, key=lambda u: (u.column, u.reason))))


def _dispatch(data: Data, name: str, format: str | None, process: str | None
              ) -> list[Capture]:
    head = check_head(data, name)
    fmt = format_of(format or detect_format(head, name))
    if process is not None and not fmt.grouped:
        assert fmt.noun is not None  # Format: a format without process groups has a noun
        raise NoProcessGroupsError(process, fmt.noun, file=name)
    return fmt.read(data, ReadRequest(name=name, head=head, forced=format is not None,
                                      process=process))
