"""CapFrameX JSON session: one Capture per entry of `Runs` (runs are never pooled silently).

Shape read: `{"Info": {"GPU", "Processor", "GameName", …}, "Runs": [{"CaptureData":
{"MsBetweenPresents": [...], "Dropped": [...] (optional), "MsBetweenDisplayChange": [...]
(optional, a diagnostic), …}, …}, …]}`. CapFrameX CSV files are
PresentMon tables behind //Key=Value lines and go through the PresentMon reader.

The Info block is what the session records (`Capture.recorded`, the same for every run; see
INFO_KEYS): CapFrameX's SessionInfo (`source/CapFrameX.Data.Session/Classes/SessionInfo.cs`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import numpy as np

from certgen.captures.common import decode, recorded_text
from certgen.captures.model import Capture
from certgen.errors import CaptureFormatError
from certgen.model.capture import Recorded
from certgen.support import jsonload
from certgen.support.jsonload import JSONValue

INTERVAL = "MsBetweenPresents"
DISPLAY = "MsBetweenDisplayChange"
"""Optional, one per frame: the display-change interval (a diagnostic, certgen.metrics.framegen)."""

TOOL = "CapFrameX"
"""The tool a CapFrameX session is written by (as the format table names it)."""

INFO_KEYS: dict[str, tuple[str, ...]] = {
    "gpu": ("GPU",),
    "driver": ("GPUDriverVersion", "DriverPackage", "BaseDriverVersion"),
    "os": ("OS",),
    "cpu": ("Processor",),
    "ram": ("SystemRam",),
    "motherboard": ("Motherboard",),
    "resolution": ("ResolutionInfo",),
    "runtime": ("ApiInfo",),
    "captured_at": ("CreationDate",),
    "tool_version": ("AppVersion",),
    "game": ("GameName",),
}
"""Each recorded field and the Info keys it is read from, the first one with a value: the
driver is `GPUDriverVersion` (what CapFrameX writes for its own captures), else `DriverPackage`
then `BaseDriverVersion` (kept from an OCAT or CapFrameX CSV record, in that reader's order).
A value that is not a JSON string is not recorded."""


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def _numbers(values: JSONValue, name: str, where: str) -> np.ndarray:
    if not isinstance(values, list):
        raise CaptureFormatError(
            f"expected a list of numbers, got {_type_name(values)}", file=name, field=where
        )
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CaptureFormatError(
                f"expected a number, got {json.dumps(v)[:40]}", file=name, field=f"{where}[{i}]"
            )
        if not math.isfinite(v):
            raise CaptureFormatError(
                f"expected a finite number, got {v}", file=name, field=f"{where}[{i}]"
            )
    return np.asarray(values, dtype=np.float64)


def read_capframex_json(data: bytes, name: str) -> list[Capture]:
    """Every run of a CapFrameX JSON session as its own Capture (run_index from 0)."""
    text = decode(data, name)
    try:
        doc = jsonload.loads(text)
    except json.JSONDecodeError as exc:
        raise CaptureFormatError(
            f"not valid JSON: {exc.msg} (column {exc.colno})", file=name, line=exc.lineno
        ) from None
    if not isinstance(doc, dict):
        raise CaptureFormatError(
            f"expected a CapFrameX session (a JSON object with Runs), got {_type_name(doc)}",
            file=name,
        )
    runs = doc.get("Runs")
    if not isinstance(runs, list) or not runs:
        got = "nothing" if runs is None else _type_name(runs) if runs != [] else "an empty list"
        raise CaptureFormatError(f"expected a non-empty list of runs, got {got}", file=name,
                                 field="Runs")
    info_value = doc.get("Info")
    info: dict[str, JSONValue] = info_value if isinstance(info_value, dict) else {}
    recorded = _session_recorded(info)
    captures: list[Capture] = []
    for index, run in enumerate(runs):
        where = f"Runs[{index}].CaptureData"
        capture_data = run.get("CaptureData") if isinstance(run, dict) else None
        if not isinstance(capture_data, dict):
            raise CaptureFormatError(
                f"expected an object, got {_type_name(capture_data)}", file=name, field=where
            )
        if INTERVAL not in capture_data:
            raise CaptureFormatError(
                f"no {INTERVAL} list in this run", file=name, field=where
            )
        frames = _numbers(capture_data[INTERVAL], name, f"{where}.{INTERVAL}")
        if frames.size == 0:
            raise CaptureFormatError("no frames in this run", file=name, field=f"{where}.{INTERVAL}")
        dropped = 0
        if capture_data.get("Dropped") is not None:
            flags = capture_data["Dropped"]
            if not isinstance(flags, list) or len(flags) != frames.size:
                raise CaptureFormatError(
                    f"expected a list of {frames.size} flags (one per frame)",
                    file=name, field=f"{where}.Dropped",
                )
            dropped = sum(1 for f in flags if f is True or f == 1)
        shown = _display_changes(capture_data, frames.size, name, where)
        many = len(runs) > 1
        captures.append(
            Capture(
                frame_times_ms=frames,
                source=name,
                format="capframex-json",
                interval_column=INTERVAL,
                dropped_frames=dropped,
                recorded=recorded,
                run_index=index,
                label=f"run {index + 1}" if many else None,
                display_change_ms=shown,
                display_change_column=None if shown is None else DISPLAY,
            )
        )
    return captures


def _display_changes(capture_data: dict[str, JSONValue], frames: int, name: str, where: str
                     ) -> np.ndarray | None:
    """The run's MsBetweenDisplayChange list (null entries as NaN), or None without one."""
    values = capture_data.get(DISPLAY)
    if values is None:
        return None
    field = f"{where}.{DISPLAY}"
    if not isinstance(values, list) or len(values) != frames:
        raise CaptureFormatError(
            f"expected a list of {frames} numbers (one per frame)", file=name, field=field
        )
    out = np.full(frames, np.nan)
    for i, v in enumerate(values):
        if v is None:
            continue  # a missing value, never 0
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise CaptureFormatError(
                f"expected a number or null, got {json.dumps(v)[:40]}", file=name,
                field=f"{field}[{i}]",
            )
        out[i] = v
    return out


def _session_recorded(info: Mapping[str, object]) -> Recorded:
    """What a session's Info block records (INFO_KEYS); the tool is CapFrameX."""
    values = {field: next((v for v in (recorded_text(info.get(k)) for k in keys) if v), None)
              for field, keys in INFO_KEYS.items()}
    return Recorded(tool=TOOL, **values)
