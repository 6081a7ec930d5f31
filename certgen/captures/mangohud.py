"""MangoHud CSV logs: the `frametime` column, one line per frame.

Layout: optional `v1`, version and `----` separator lines; the system line pair
`os,cpu,gpu,ram,kernel,driver,cpuscheduler` + values; then the frame table
`fps,frametime,…,elapsed` (MangoHud `src/logging.cpp`, writeFileHeaders).

- What the log records (`Capture.recorded`): the system line's os, cpu, gpu, ram and driver
  cells, as written (`kernel` and `cpuscheduler` have no field); the tool is MangoHud when the
  log has the system line or the `v1` line, and its version is the line after `v1` (a
  versioned log only). Nothing in the log records the resolution, the API, the date or the
  game.

- `frametime` is ms (float) since 0.6.9. Up to 0.6.8 it was integer microseconds: when every
  value is an integer with no decimal point and their median is above 100, the log is read as
  µs, converted to ms, and a warning says so (no real ms log has a median frame under 10 FPS).
- `elapsed` is nanoseconds since the log started. With `log_interval > 0` MangoHud samples
  instead of logging each frame: the frame times then cover only a sliver of the elapsed span.
  A log whose frame times (after the first line) add up to less than half of its elapsed span
  is refused as sampled.
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np

from certgen.captures.common import decode, parse_number, recorded_text
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError
from certgen.model.capture import Recorded

SYSTEM_HEADER = "os,cpu,gpu"
TOOL = "MangoHud"
SYSTEM_FIELDS = {"os": "os", "cpu": "cpu", "gpu": "gpu", "ram": "ram", "driver": "driver"}
"""Each recorded field and the system line's cell it is read from."""
INTEGER = re.compile(r"\s*\d+\s*")
MICROSECOND_MEDIAN = 100.0
SAMPLED_SHARE = 0.5


def read_mangohud(data: bytes, name: str) -> Capture:
    """One MangoHud log as one Capture (see the module doc for units and sampled logs)."""
    text = decode(data, name)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    system: int | None = None
    start: int | None = None
    for i, row in enumerate(rows):
        first = row[0].strip() if row else ""
        if first == "os" and system is None:
            system = i
        if first == "fps" and "frametime" in (c.strip() for c in row):
            start = i
            break
    if start is None:
        raise CaptureFormatError(
            "no MangoHud frame table (a header line starting 'fps,frametime')", file=name
        )
    header = [c.strip() for c in rows[start]]
    ft_index = header.index("frametime")
    el_index = header.index("elapsed") if "elapsed" in header else None
    tokens: list[str] = []
    values: list[float] = []
    elapsed: list[float] = []
    for offset, row in enumerate(rows[start + 1 :], start=start + 2):
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != len(header):
            raise CaptureFormatError(
                f"expected {len(header)} fields as in the header, got {len(row)}",
                file=name, line=offset,
            )
        tokens.append(row[ft_index])
        values.append(parse_number(row[ft_index], name=name, line=offset, field="frametime"))
        if el_index is not None:
            elapsed.append(parse_number(row[el_index], name=name, line=offset, field="elapsed"))
    if not values:
        raise CaptureFormatError("no frame rows after the header", file=name, line=start + 1)
    frames = np.asarray(values, dtype=np.float64)
    warnings = []
    if all(INTEGER.fullmatch(t) for t in tokens) and float(np.median(frames)) > MICROSECOND_MEDIAN:
        frames = frames / 1000.0
        warnings.append(
            "frametime is in integer microseconds (MangoHud 0.6.8 or older): converted to ms"
        )
    if len(elapsed) >= 2:
        span_ms = (elapsed[-1] - elapsed[0]) / 1e6
        covered_ms = float(np.sum(frames[1:]))
        if span_ms > 0 and covered_ms < SAMPLED_SHARE * span_ms:
            raise CaptureFormatError(
                f"a sampled log, not one line per frame: its {frames.size} frame times add up "
                f"to {covered_ms / 1000:.1f} s of a {span_ms / 1000:.1f} s log; "
                "record it again with log_interval=0",
                file=name,
            )
    return Capture(
        frame_times_ms=frames,
        source=name,
        format="mangohud",
        interval_column="frametime",
        recorded=_recorded(rows[:start], system),
        warnings=tuple(warnings),
    )


def _recorded(before: list[list[str]], system: int | None) -> Recorded:
    """What the lines before the frame table record (`system`: the system line's index, or
    None): its values line's cells, and the tool when the log names itself MangoHud (by the
    system line, or a `v1` line, after which comes the version)."""
    lines = [row for row in before if any(c.strip() for c in row)]
    versioned = bool(lines) and [c.strip() for c in lines[0]] == ["v1"]
    if system is None and not versioned:
        return Recorded()
    version = None
    if versioned and len(lines) > 1 and (system is None or lines[1] is not before[system]):
        written = ",".join(lines[1])
        version = None if written.strip().startswith("---") else recorded_text(written)
    cells: dict[str, str] = {}
    if system is not None and system + 1 < len(before):
        cells = dict(zip((c.strip() for c in before[system]), before[system + 1]))
    return Recorded(tool=TOOL, tool_version=version,
                    **{field: recorded_text(cells.get(cell))
                       for field, cell in SYSTEM_FIELDS.items()})
