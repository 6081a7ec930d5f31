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
import pathlib

import numpy as np

from certgen.captures.common import MAX_CAPTURE_FRAMES, Data, check_head, first_line, mapped_capture
from certgen.captures.errata import capture_errata
from certgen.captures.formats import DETECTION_ORDER, ReadRequest, format_of, listed_formats
from certgen.captures.formats import FORMATS as FORMATS  # re-exported: --format takes it from here
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError
from certgen.errors import NoProcessGroupsError as NoProcessGroupsError  # re-exported (moved)
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


def check_frame_times(capture: Capture, name: str) -> None:
    """Refuse a capture holding more than MAX_CAPTURE_FRAMES frames, or a frame time (or a
    measured latency or animation error) outside the documented range (docs/limits.md), naming
    the first such frame (1-based, in the capture's order) and its column."""
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
    # What the tool measured beside the intervals (latency, animation error) is summed and
    # sorted too: the same bound keeps those sums finite (NaN, no value, compares false).
    for column, values in capture.measured:
        beyond = np.flatnonzero(np.abs(values) > MAX_FRAME_TIME_MS)
        if beyond.size:
            first = int(beyond[0])
            raise CaptureFormatError(
                f"{where}frame {first + 1}: {float(values[first])!r} ms is outside the range "
                f"certgen accepts for it (up to {MAX_FRAME_TIME_MS:g} ms either way)",
                file=name, field=column,
            )


def _dispatch(data: Data, name: str, format: str | None, process: str | None
              ) -> list[Capture]:
    head = check_head(data, name)
    fmt = format_of(format or detect_format(head, name))
    if process is not None and not fmt.grouped:
        assert fmt.noun is not None  # Format: a format without process groups has a noun
        raise NoProcessGroupsError(process, fmt.noun, file=name)
    return fmt.read(data, ReadRequest(name=name, head=head, forced=format is not None,
                                      process=process))
