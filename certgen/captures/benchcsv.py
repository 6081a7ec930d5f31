"""The benchmark-page CSV export (docs/spec/compare.md): `side,kind,name,value`, one Capture per side.

`kind=frame` rows are one side's frame times in ms, in order (stalls included). `kind=metric`
rows are the exporting tool's own summary: the reader returns them as what the file states
(`Capture.stated_figures`, by name; a name given twice keeps its last value) and computes no
figure. Reading a capture (certgen.captures.detect.read_capture) holds them against the frame
rows (certgen.metrics.pagefigures) and reports every disagreement, and every unknown name, as a warning;
they are never silently trusted.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from certgen.captures.common import decode, parse_number
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError
from certgen.support.untrusted import shorten

HEADER = ["side", "kind", "name", "value"]
KINDS = ("frame", "metric")
MAX_NAME = 100
"""Longest side or metric name (both are printed as labels and in warnings)."""


def read_bench_csv(data: bytes, name: str) -> list[Capture]:
    """One Capture per side, in the order the sides first appear (label = the side)."""
    text = decode(data, name)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = None
    frames: dict[str, list[float]] = {}
    metrics: dict[str, dict[str, float | None]] = {}
    for row in reader:
        line = reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if header is None:
            header = [c.strip() for c in row]
            if header != HEADER:
                raise CaptureFormatError(
                    f"expected the header {','.join(HEADER)}", file=name, line=line
                )
            continue
        if len(row) != len(HEADER):
            raise CaptureFormatError(
                f"expected {len(HEADER)} fields as in the header, got {len(row)}",
                file=name, line=line,
            )
        side, kind, metric, value = (c.strip() for c in row)
        if not side:
            raise CaptureFormatError("expected a side name, got ''", file=name, line=line,
                                     field="side")
        if kind not in KINDS:
            raise CaptureFormatError(
                f"expected frame or metric, got {shorten(kind)!r}", file=name, line=line,
                field="kind",
            )
        for field, text in (("side", side), ("name", metric)):
            # Side and metric names are printed (labels, warnings): bounded like card texts.
            if len(text) > MAX_NAME:
                raise CaptureFormatError(
                    f"expected at most {MAX_NAME} characters, got {len(text)}", file=name,
                    line=line, field=field,
                )
        frames.setdefault(side, [])
        metrics.setdefault(side, {})
        if kind == "frame":
            frames[side].append(parse_number(value, name=name, line=line, field="value"))
        elif value in ("", "null"):
            metrics[side][metric] = None
        else:
            metrics[side][metric] = parse_number(value, name=name, line=line, field="value")
    if header is None:
        raise CaptureFormatError("empty file, expected a capture", file=name)
    if not frames:
        raise CaptureFormatError("no rows after the header", file=name, line=1)
    captures = []
    for index, side in enumerate(frames):
        if not frames[side]:
            raise CaptureFormatError(f"side {side!r} has no frame rows", file=name)
        values = np.asarray(frames[side], dtype=np.float64)
        captures.append(
            Capture(
                frame_times_ms=values,
                source=name,
                format="bench-csv",
                interval_column="value (kind=frame)",
                run_index=index,
                label=side,
                stated_figures=tuple(sorted(metrics[side].items())),
            )
        )
    return captures
