"""Engine frame stats (JSON Lines, schema_version 1, seeds/004): `present_interval_ms` per frame.

Rules, as read here:
- Every non-empty line must be one JSON object with `"schema_version": 1`; anything else is
  refused with its line number. A last line cut short without its newline (the process was
  killed mid-write) is ignored: lines are valid up to the last complete one.
- Frame lines carry an integer `tick` counting up by one. A tick that does not move forward
  means two renderers wrote the same file: refused (one run per file). A tick that jumps is a
  gap (lines dropped by the writer): the capture is incomplete.
- The end line `{"end": true, "frames": F, "dropped": D}` closes the run; without it, or with
  D > 0, or with F - D different from the frame lines read, the capture is incomplete. A line
  after the end line is refused.
- Warm-up: the first frame line (null interval, pipeline creation) never counts. Then the
  interval "settles" at the first frame whose interval lies within a factor of 2 of the median
  interval of all frames after the first (median/2 <= t <= 2 x median); the frames before it
  are skipped too. Only that leading run is skipped: later slow frames are the run's own.
  The number skipped (the first frame included) is `skipped_frames`, and a warning says so.
- `idle` frames (the last image presented again) are kept as frames and counted apart
  (`idle_frames`, and a warning); `gpu_ms` never enters the frame times.
- GPU time resolves a frame or two late, so a line carries the newest resolved `gpu_ms`
  against the tick it measured (`gpu_tick`), or null for both. It is joined to frames by
  `gpu_tick`, never by the line it sits on: `Capture.gpu_ms` holds, beside each counted frame,
  the GPU time of that frame's tick, or NaN when none was written for it (never 0). A
  `gpu_tick` ahead of its line's tick, a tick given a GPU time twice, or only one of the two
  keys null is refused. A GPU time of a tick whose line was dropped joins no frame.
- What the file records (`Capture.recorded`): the first frame line's `size` `[w, h]` (two
  whole numbers) as the resolution `WxH`; nothing else. `device` names the kind of device the
  game runs on (`desktop`, `steam-deck-lcd`, `steam-deck-oled`), not a GPU, so it is no
  recorded field; the file names no GPU, driver, system, date, tool or game.
"""

from __future__ import annotations

import json
import math

import numpy as np

from certgen.captures.common import decode, recorded_text
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError
from certgen.model.capture import (
    DroppedLines,
    FrameCountMismatch,
    IncompleteDetail,
    NoEndLine,
    Recorded,
    TickGaps,
)
from certgen.support import jsonload
from certgen.support.jsonload import JSONValue
from certgen.support.untrusted import shorten

KINDS = ("full", "partial", "reproject", "idle")
SETTLE_FACTOR = 2.0


def _object(line: str, name: str, number: int) -> dict[str, JSONValue]:
    try:
        value = jsonload.loads(line)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise CaptureFormatError(
            f"expected one JSON object per line, got {shorten(line.strip(), 40)!r}",
            file=name, line=number,
        )
    if value.get("schema_version") != 1:
        raise CaptureFormatError(
            f"expected 1, got {json.dumps(value.get('schema_version'))}",
            file=name, line=number, field="schema_version",
        )
    return value


def _integer(obj: dict[str, JSONValue], key: str, name: str, number: int) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CaptureFormatError(
            f"expected a whole number >= 0, got {json.dumps(value)}",
            file=name, line=number, field=key,
        )
    return value


def _gpu_time(
    obj: dict[str, JSONValue], tick: int, name: str, number: int
) -> tuple[int, float] | None:
    """(gpu_tick, gpu_ms) of one frame line, or None when it carries no new GPU time."""
    gpu_ms, gpu_tick = obj.get("gpu_ms"), obj.get("gpu_tick")
    if gpu_ms is None and gpu_tick is None:
        return None
    if gpu_ms is None or gpu_tick is None:
        raise CaptureFormatError(
            f"gpu_ms is {json.dumps(gpu_ms)} but gpu_tick is {json.dumps(gpu_tick)} (expected "
            "both null or both set)",
            file=name, line=number,
        )
    measured = _integer(obj, "gpu_tick", name, number)
    if measured > tick:
        raise CaptureFormatError(
            f"gpu_tick {measured} is ahead of the line's tick {tick} (expected the tick it "
            "measured, at or before its line)",
            file=name, line=number, field="gpu_tick",
        )
    if (isinstance(gpu_ms, bool) or not isinstance(gpu_ms, (int, float))
            or not math.isfinite(gpu_ms) or gpu_ms < 0):
        raise CaptureFormatError(
            f"expected a finite number >= 0 or null, got {json.dumps(gpu_ms)}",
            file=name, line=number, field="gpu_ms",
        )
    return measured, float(gpu_ms)


def join_gpu_times(ticks: list[int], gpu: dict[int, float]) -> np.ndarray:
    """Each frame's GPU time by its tick (NaN where no GPU time was written for that tick)."""
    return np.array([gpu.get(t, math.nan) for t in ticks], dtype=np.float64)


def settle_index(intervals: np.ndarray) -> int:
    """Index of the first interval within a factor of 2 of the median (0 if none is)."""
    if intervals.size == 0:
        return 0
    median = float(np.median(intervals))
    inside = (intervals >= median / SETTLE_FACTOR) & (intervals <= median * SETTLE_FACTOR)
    hits = np.flatnonzero(inside)
    return int(hits[0]) if hits.size else 0


def _size_text(size: object) -> str | None:
    """A frame line's `size` `[w, h]` as a resolution `WxH`, or None unless it is two whole
    numbers >= 0 (a size is what the file records, never a reason to refuse it)."""
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in size)):
        return None
    return recorded_text(f"{size[0]}x{size[1]}")


def read_frame_stats(data: bytes, name: str) -> Capture:
    """One frame-stats file (one renderer's run) as one Capture (see the module doc)."""
    text = decode(data, name)
    lines = text.split("\n")
    cut_short = bool(lines) and lines[-1].strip() != ""
    intervals: list[float] = []
    kinds: list[str] = []
    ticks: list[int] = []
    gpu: dict[int, float] = {}
    gpu_line: dict[int, int] = {}
    end: dict[str, int] | None = None
    previous_tick: int | None = None
    resolution: str | None = None
    gaps = 0
    missing_lines = 0
    frame_lines = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if cut_short and number == len(lines):
            try:
                jsonload.loads(line)
            except json.JSONDecodeError:
                break  # a half-written last line of a killed process
        obj = _object(line, name, number)
        if end is not None:
            raise CaptureFormatError(
                "a line after the end line (two runs in one file?)", file=name, line=number
            )
        if obj.get("end") is True:
            end = {k: _integer(obj, k, name, number) for k in ("frames", "dropped")}
            continue
        tick = _integer(obj, "tick", name, number)
        if previous_tick is not None:
            if tick <= previous_tick:
                raise CaptureFormatError(
                    f"tick {tick} after tick {previous_tick}: two renderers wrote this file; "
                    "capture one run per file",
                    file=name, line=number,
                )
            if tick > previous_tick + 1:
                gaps += 1
                missing_lines += tick - previous_tick - 1
        previous_tick = tick
        resolved = _gpu_time(obj, tick, name, number)
        if resolved is not None:
            measured, gpu_ms = resolved
            if measured in gpu:
                raise CaptureFormatError(
                    f"tick {measured} already has a GPU time (line {gpu_line[measured]}); each "
                    "GPU time is written once",
                    file=name, line=number, field="gpu_tick",
                )
            gpu[measured], gpu_line[measured] = gpu_ms, number
        kind = obj.get("kind")
        if kind not in KINDS:
            raise CaptureFormatError(
                f"expected one of {', '.join(KINDS)}, got {json.dumps(kind)}",
                file=name, line=number, field="kind",
            )
        interval = obj.get("present_interval_ms")
        if frame_lines == 0:
            resolution = _size_text(obj.get("size"))
            frame_lines += 1
            continue  # the first frame: no interval, pipeline creation
        frame_lines += 1
        if isinstance(interval, bool) or not isinstance(interval, (int, float)):
            raise CaptureFormatError(
                f"expected a number after the first frame, got {json.dumps(interval)}",
                file=name, line=number, field="present_interval_ms",
            )
        if not math.isfinite(interval):
            raise CaptureFormatError(
                f"expected a finite number, got {interval}",
                file=name, line=number, field="present_interval_ms",
            )
        intervals.append(float(interval))
        kinds.append(str(kind))
        ticks.append(tick)
    if frame_lines == 0:
        raise CaptureFormatError("no frame lines", file=name)

    reasons: list[tuple[str, IncompleteDetail]] = []
    if end is None:
        reasons.append(("no end line (the process did not exit cleanly)",
                        NoEndLine(code="no_end_line")))
    if gaps:
        reasons.append((f"{missing_lines} lines missing in {gaps} tick gaps",
                        TickGaps(code="tick_gaps", missing_lines=missing_lines, gaps=gaps)))
    if end is not None:
        if end["dropped"] > 0:
            reasons.append((f"the end line reports {end['dropped']} dropped lines",
                            DroppedLines(code="dropped_lines", dropped=end["dropped"])))
        if end["frames"] - end["dropped"] != frame_lines:
            reasons.append((
                f"the end line reports {end['frames']} frames ({end['dropped']} dropped) "
                f"but the file holds {frame_lines} frame lines",
                FrameCountMismatch(code="frame_count_mismatch", frames=end["frames"],
                                   dropped=end["dropped"], lines=frame_lines),
            ))

    all_intervals = np.asarray(intervals, dtype=np.float64)
    start = settle_index(all_intervals)
    frames = all_intervals[start:]
    idle = sum(1 for k in kinds[start:] if k == "idle")
    skipped = 1 + start
    warnings = [
        (f"skipped {skipped} warm-up frames (the first frame, then until the interval settled "
        "within 2x of the median)")
    ]
    if idle:
        warnings.append(f"{idle} idle frames (the last image presented again) are counted")
    return Capture(
        frame_times_ms=frames,
        source=name,
        format="frame-stats",
        interval_column="present_interval_ms",
        skipped_frames=skipped,
        incomplete=bool(reasons),
        incomplete_reason="; ".join(text for text, _ in reasons) if reasons else None,
        incomplete_detail=tuple(detail for _, detail in reasons),
        warnings=tuple(warnings),
        idle_frames=idle,
        gpu_ms=join_gpu_times(ticks[start:], gpu),
        recorded=Recorded(resolution=resolution),
    )
