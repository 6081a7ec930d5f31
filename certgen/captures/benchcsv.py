"""The benchmark-page CSV export (docs/spec/compare.md): `side,kind,name,value`, one Capture per side.

`kind=frame` rows are one side's frame times in ms, in order (stalls included). `kind=metric`
rows are the exporting tool's own summary; certgen recomputes each metric it knows from the
frame rows by the benchmark-page rules (frames over 200 ms kept out of the mean, the lows and
the percentiles, and counted) and reports every disagreement as a warning. Unknown metric names
get a warning too; they are never silently trusted.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from certgen.captures.common import decode, parse_number, shorten
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError

HEADER = ["side", "kind", "name", "value"]
KINDS = ("frame", "metric")
MAX_NAME = 100
"""Longest side or metric name (both are printed as labels and in warnings)."""


def recompute(frames: np.ndarray) -> dict[str, float | int | None]:
    """The summary metrics of compare.md from one side's frame rows (ms)."""
    from certgen.diagnostics import STALL_MS, compute_diagnostics
    from certgen.metrics import fps_figures, positive_frames, round_half_away

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
    }


def _same(given: float | None, computed: float | None) -> bool:
    if given is None or computed is None:
        return given is None and computed is None
    return abs(given - float(computed)) <= 1e-9 * max(1.0, abs(given))


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
        warnings = []
        if metrics[side]:
            computed = recompute(values)
            for metric, given in sorted(metrics[side].items()):
                if metric not in computed:
                    warnings.append(f"side {side!r}: metric {metric!r} is not recomputed")
                elif not _same(given, computed[metric]):
                    warnings.append(
                        f"side {side!r}: {metric} is {given} in the file, recomputed "
                        f"{computed[metric]}"
                    )
        captures.append(
            Capture(
                frame_times_ms=values,
                source=name,
                format="bench-csv",
                interval_column="value (kind=frame)",
                run_index=index,
                label=side,
                warnings=tuple(warnings),
            )
        )
    return captures
