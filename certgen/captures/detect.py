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
"""

from __future__ import annotations

import csv
import pathlib

import numpy as np

from certgen.captures.common import (
    MAX_CAPTURE_FRAMES,
    Data,
    check_head,
    first_line,
    mapped_capture,
    shorten,
)
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError
from certgen.errors import NoProcessGroupsError as NoProcessGroupsError  # re-exported (moved)

FORMATS = (
    "presentmon",
    "ocat",
    "frameview",
    "capframex-json",
    "capframex-csv",
    "mangohud",
    "frame-stats",
    "bench-csv",
)
"""Format ids `--format` accepts (ocat and frameview force the PresentMon-family reader)."""

PRESENTMON_FAMILY = ("presentmon", "ocat", "frameview")
GROUPED_FORMATS = (*PRESENTMON_FAMILY, "capframex-csv")
"""Formats whose rows carry (Application, ProcessID, SwapChainAddress): `process` applies."""

FORMAT_NOUNS = {
    "capframex-json": "a CapFrameX JSON session",
    "mangohud": "a MangoHud log",
    "frame-stats": "an engine frame-stats file",
    "bench-csv": "a benchmark-page CSV",
}
"""How a refusal names a capture of a format that has no process groups."""


INTERVAL_MARKERS = ("MsBetweenPresents", "msBetweenPresents", "FrameTime")


def presentmon_flavour(header: list[str]) -> str:
    """presentmon, ocat or frameview, from a PresentMon-family header's extra columns."""
    names = {h.strip() for h in header}
    if "Motherboard" in names:
        return "ocat"
    if {"GPU", "CPU", "Resolution"} <= names:
        return "frameview"
    return "presentmon"


def detect_format(head: bytes, name: str) -> str:
    """The format id of a capture from its first bytes, or a CaptureFormatError."""
    number, line = first_line(head)
    if line.startswith('{"schema_version":'):
        return "frame-stats"
    if line.startswith("{"):
        return "capframex-json"
    if line.startswith("//"):
        return "capframex-csv"
    if line.replace(" ", "") == "side,kind,name,value":
        return "bench-csv"
    if line.startswith(("os,cpu,gpu", "fps,frametime")) or line == "v1":
        return "mangohud"
    fields = next(csv.reader([line]), [])
    if any(f.strip() in INTERVAL_MARKERS for f in fields) or line.startswith("Application,"):
        return presentmon_flavour(fields)
    raise CaptureFormatError(
        f"not a capture format certgen reads: the first line is {shorten(line)!r} (expected a "
        "PresentMon, OCAT, FrameView, CapFrameX, MangoHud, frame-stats or benchmark CSV file)",
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
    return captures


MAX_FRAME_TIME_MS = 1e7
"""Largest frame time (and largest negative one) a capture may hold: 10,000 s, far beyond any
stall. Larger values overflow the SOP arithmetic (1e308 ms sums to infinity)."""

MIN_FRAME_TIME_MS = 1e-6
"""Smallest positive frame time (1 ns): below it 1000 / t overflows (denormals such as 5e-324)."""


def check_frame_times(capture: Capture, name: str) -> None:
    """Refuse a capture holding more than MAX_CAPTURE_FRAMES frames, or a frame time outside
    the documented range (docs/limits.md), naming the first such frame (1-based, in the
    capture's order) and its column."""
    times = capture.frame_times_ms
    if times.size > MAX_CAPTURE_FRAMES:
        where = f"{capture.label}: " if capture.label else ""
        raise CaptureFormatError(
            f"{where}{times.size} frames, more than the limit of {MAX_CAPTURE_FRAMES} for a "
            "capture", file=name)
    size = np.abs(times)
    bad = np.flatnonzero((size > MAX_FRAME_TIME_MS) | ((times > 0) & (times < MIN_FRAME_TIME_MS)))
    if bad.size:
        first = int(bad[0])
        where = f"{capture.label}: " if capture.label else ""
        raise CaptureFormatError(
            f"{where}frame {first + 1}: frame time {float(times[first])!r} ms is outside the "
            f"range certgen accepts ({MIN_FRAME_TIME_MS:g} to {MAX_FRAME_TIME_MS:g} ms)",
            file=name, field=capture.interval_column,
        )


def _dispatch(data: Data, name: str, format: str | None, process: str | None
              ) -> list[Capture]:
    head = check_head(data, name)
    fmt = format or detect_format(head, name)
    if process is not None and fmt not in GROUPED_FORMATS:
        raise NoProcessGroupsError(process, FORMAT_NOUNS[fmt], file=name)
    if fmt in GROUPED_FORMATS:
        from certgen.captures.presentmon import read_presentmon

        # A forced format is the one reported (and the tool whose quirks apply).
        forced = format if format in PRESENTMON_FAMILY else None
        return [read_presentmon(data, name, head=head, capframex=fmt == "capframex-csv",
                                process=process, flavour=forced)]
    data = data if isinstance(data, bytes) else data[:]  # the other readers take it whole
    if fmt == "capframex-json":
        from certgen.captures.capframex import read_capframex_json

        return read_capframex_json(data, name)
    if fmt == "mangohud":
        from certgen.captures.mangohud import read_mangohud

        return [read_mangohud(data, name)]
    if fmt == "frame-stats":
        from certgen.captures.framestats import read_frame_stats

        return [read_frame_stats(data, name)]
    from certgen.captures.benchcsv import read_bench_csv

    return read_bench_csv(data, name)
