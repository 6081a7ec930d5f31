"""PresentMon-family CSV: PresentMon 1.x / 2.x, OCAT, NVIDIA FrameView and CapFrameX CSV.

Three paths give the same Capture:
- the vector path (numpy over the raw bytes, no polars) takes the common one-group file whose
  rows all share the first row's leading fields byte for byte; anything it cannot prove sends
  the file on to
- the fast path (polars, imported here only) reads just the columns it needs; any sign of trouble
  (a parse error, a null where PresentMon never writes one, a ragged row) sends the file to
- the slow path (stdlib csv), which reads every row and cell and raises the exact error with its
  line number; when it finds nothing wrong its result is used as is.

What is read (docs/spec/captures.md):
- the interval: MsBetweenPresents (1.0-1.6, 2.3.1+, OCAT, FrameView, CapFrameX) or
  msBetweenPresents (1.7-1.9); FrameTime (2.x --v2_metrics) only as a labelled fallback, and
  so CPUBusy + CPUWait (PresentMon 2.0.0, which has neither), the same quantity;
- `NA` in a numeric column is a missing value, never zero; a missing interval is counted;
- rows are grouped by (Application, ProcessID, SwapChainAddress); `_choose` is the group rule
  (never a system process by default, real swap chains before 0x0, most rows, first seen) unless
  `process` names an application;
- dropped frames: `Dropped=1` (1.x), or `NA` in MsUntilDisplayed (2.x) / DisplayedTime
  (--v2_metrics); they keep their interval and are counted; FrameView's `Dropped=Error` (the
  present failed) likewise, counted apart;
- ragged rows: a row with another field count than the header is refused, except that OCAT
  writes its system information on the first data row only, so OCAT rows may be shorter (never
  longer) as long as they reach every column read;
- OCAT and CapFrameX system information and FrameView's GPU/CPU columns become Hints.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from certgen.captures.common import UTF8_BOM, decode, parse_number
from certgen.captures.detect import presentmon_flavour
from certgen.captures.model import Capture, Group, Hints
from certgen.errors import CaptureFormatError, NoProcessGroupsError

KEY_COLUMNS = ("Application", "ProcessID", "SwapChainAddress")
INTERVAL_COLUMNS = ("MsBetweenPresents", "msBetweenPresents")
FALLBACK_COLUMN = "FrameTime"
FALLBACK_LABEL = "FrameTime (fallback)"
FALLBACK_WARNING = (
    "no MsBetweenPresents column: read FrameTime (PresentMon 2.x --v2_metrics), which is CPU busy "
    "+ CPU wait, not the present-to-present interval; figures are labelled as a fallback"
)
SUM_COLUMNS = ("CPUBusy", "CPUWait")
SUM_LABEL = "CPUBusy + CPUWait (fallback)"
SUM_WARNING = (
    "no MsBetweenPresents or FrameTime column (PresentMon 2.0.0): read CPUBusy + CPUWait, which "
    "later 2.x versions write as FrameTime, CPU busy + CPU wait, not the present-to-present "
    "interval; figures are labelled as a fallback"
)
SUM_SCALE = 1e6
"""PresentMon 2.0.0 writes 6 decimals: the two cells are added as whole millionths of a ms."""
DISPLAY_NA_COLUMNS = ("MsUntilDisplayed", "msUntilDisplayed", "DisplayedTime")
NA = "NA"
DROPPED_ERROR = "Error"
"""FrameView's `Dropped` token for a frame whose present failed: the frame keeps its interval."""


@dataclass(frozen=True)
class _Layout:
    """What the header says: where the needed columns are and which flavour wrote the file."""

    header: list[str]
    header_line: int
    """1-based line number of the header (after CapFrameX's //Key=Value lines)."""
    flavour: str
    interval: str
    """The interval column's name, or SUM_LABEL when CPUBusy + CPUWait is read."""
    interval_index: int
    addend_index: int | None
    """CPUWait's index when the interval is CPUBusy (at interval_index) + CPUWait, else None."""
    keys: tuple[int, ...] | None
    """Indices of Application, ProcessID, SwapChainAddress, or None when the file has none."""
    dropped_index: int | None
    dropped_is_flag: bool
    """True for a Dropped 0/1 column; False for a display column whose NA means dropped."""
    info: dict[str, str]
    """CapFrameX //Key=Value lines."""

    @property
    def needed(self) -> list[int]:
        idx = {self.interval_index}
        if self.addend_index is not None:
            idx.add(self.addend_index)
        if self.keys:
            idx.update(self.keys)
        if self.dropped_index is not None:
            idx.add(self.dropped_index)
        return sorted(idx)


def _layout(head: bytes, name: str, *, capframex: bool, flavour: str | None = None) -> _Layout:
    text = head.removeprefix(UTF8_BOM)
    lines = text.decode("utf-8", errors="replace").splitlines()
    info: dict[str, str] = {}
    index = 0
    while index < len(lines) and (not lines[index].strip() or lines[index].startswith("//")):
        key, _, value = lines[index][2:].partition("=")
        if lines[index].startswith("//") and key.strip():
            info[key.strip()] = value.strip()
        index += 1
    if index >= len(lines):
        raise CaptureFormatError("no CSV header after the //Key=Value lines", file=name)
    header = [h.strip() for h in next(csv.reader([lines[index]]))]
    line = index + 1
    interval = next((c for c in INTERVAL_COLUMNS if c in header), None)
    if interval is None and FALLBACK_COLUMN in header:
        interval = FALLBACK_COLUMN
    addend_index = None
    if interval is None and all(c in header for c in SUM_COLUMNS):
        interval, addend_index = SUM_LABEL, header.index(SUM_COLUMNS[1])
    if interval is None:
        raise CaptureFormatError(
            "no frame-time column: expected MsBetweenPresents, msBetweenPresents or FrameTime",
            file=name,
            line=line,
        )
    keys = None
    if all(k in header for k in KEY_COLUMNS):
        keys = tuple(header.index(k) for k in KEY_COLUMNS)
    dropped_index, is_flag = None, False
    if "Dropped" in header:
        dropped_index, is_flag = header.index("Dropped"), True
    else:
        for col in DISPLAY_NA_COLUMNS:
            if col in header:
                dropped_index = header.index(col)
                break
    return _Layout(
        header=header,
        header_line=line,
        flavour="capframex-csv" if capframex else (flavour or presentmon_flavour(header)),
        interval=interval,
        interval_index=header.index(SUM_COLUMNS[0] if addend_index is not None else interval),
        addend_index=addend_index,
        keys=keys,
        dropped_index=dropped_index,
        dropped_is_flag=is_flag,
        info=info,
    )


def _hints(layout: _Layout, head: bytes) -> Hints:
    """GPU/CPU/game from CapFrameX info lines or OCAT/FrameView's first data row."""
    if layout.info:
        return Hints(
            gpu=layout.info.get("GPU") or None,
            cpu=layout.info.get("Processor") or None,
            game=layout.info.get("GameName") or None,
        )
    if layout.flavour not in ("ocat", "frameview"):
        return Hints()
    text = head.removeprefix(UTF8_BOM)
    rows = list(csv.reader(io.StringIO(text.decode("utf-8", errors="replace"))))
    if len(rows) < layout.header_line + 1:
        return Hints()
    row = dict(zip(layout.header, (c.strip() for c in rows[layout.header_line])))
    cpu_column = "Processor" if layout.flavour == "ocat" else "CPU"
    return Hints(gpu=row.get("GPU") or None, cpu=row.get(cpu_column) or None)


@dataclass(frozen=True)
class _Rows:
    """The needed columns of every row, ready for grouping (either path)."""

    groups: list[tuple[tuple[str, str, str], int]]
    """(key, rows) per group, in the order the groups are first seen in the file."""
    select: Any
    """key or None -> (intervals with NaN for NA, Dropped=1 count, Dropped=Error count) of that
    group's rows."""


def read_presentmon(
    data: bytes,
    name: str,
    *,
    head: bytes,
    capframex: bool = False,
    process: str | None = None,
    flavour: str | None = None,
) -> Capture:
    """Read a PresentMon-family (or CapFrameX CSV) file into one Capture (see module doc).

    `flavour` (presentmon, ocat or frameview: a forced `--format`) replaces the one the header
    suggests, both as the reported format and in the tool's quirks (OCAT's short rows).
    """
    layout = _layout(head, name, capframex=capframex, flavour=flavour)
    if process is not None and layout.keys is None:
        raise NoProcessGroupsError(
            process, "a CSV without Application, ProcessID and SwapChainAddress columns",
            file=name,
        )
    rows = _vector(data, layout)
    if rows is None:
        try:
            rows = _fast(data, layout)
        except _Suspect:
            rows = None
    if rows is None:
        rows = _slow(data, name, layout)
    return _capture(rows, layout, name, process, _hints(layout, head))


class _Suspect(Exception):
    """The fast path saw something only the slow path can judge exactly."""


def _fast(data: bytes, layout: _Layout) -> _Rows:
    import polars as pl

    header = layout.header
    if len(set(header)) != len(header):
        raise _Suspect  # duplicate column names: let the csv module read it by position
    last = len(header) - 1
    ocat = layout.flavour == "ocat"
    width_ok, single = _scan(data, layout)
    if not width_ok and not ocat:
        raise _Suspect  # a longer row, a quoted comma or a blank line: the slow path judges
    needed = set(layout.needed) - (set(layout.keys or ()) if single else set())
    # OCAT rows are shorter than its header by design, so its width check is polars' own,
    # which it makes only when every column is read (OCAT logs are small).
    wanted = list(range(len(header))) if ocat else sorted(needed | {last})
    dtypes: dict[str, Any] = {header[layout.interval_index]: pl.Float64}
    nulls: dict[str, str] = {header[layout.interval_index]: NA}
    if layout.addend_index is not None:
        dtypes[header[layout.addend_index]] = pl.Float64
        nulls[header[layout.addend_index]] = NA
    if layout.keys and not single:
        for i in layout.keys:
            dtypes[header[i]] = pl.Categorical
    if layout.dropped_index is not None:
        col = header[layout.dropped_index]
        # The flag is read as text: FrameView writes `Error` beside 0 and 1.
        dtypes[col] = pl.String if layout.dropped_is_flag else pl.Float64
        if not layout.dropped_is_flag:
            nulls[col] = NA
    try:
        df = pl.read_csv(
            data,
            columns=[header[i] for i in wanted],
            skip_rows=layout.header_line - 1,
            infer_schema=False,
            schema_overrides=dtypes,
            null_values=nulls,
            truncate_ragged_lines=False,
            raise_if_empty=False,
            encoding="utf8",
        )
    except Exception as exc:  # any parse problem: the slow path says exactly what and where
        raise _Suspect from exc
    if df.height == 0:
        raise _Suspect
    interval = df[header[layout.interval_index]]
    checks = [interval.is_null().any(), not interval.is_finite().all()]
    if layout.addend_index is not None:
        addend = df[header[layout.addend_index]]
        checks += [addend.is_null().any(), not addend.is_finite().all()]
    if layout.keys and not single:
        checks.extend(df[header[i]].is_null().any() for i in layout.keys)
    if not ocat:
        checks.append(df[header[last]].is_null().any())  # a short row (or an empty last cell)
    if layout.dropped_index is not None and layout.dropped_is_flag:
        flag = df[header[layout.dropped_index]]
        checks.append(flag.is_null().any() or not flag.is_in(["0", "1", DROPPED_ERROR]).all())
    if any(checks):
        raise _Suspect

    key_names = [header[i] for i in layout.keys] if layout.keys else []

    def dropped_of(frame: Any) -> tuple[int, int]:
        """(Dropped=1 count, Dropped=Error count) of some rows."""
        if layout.dropped_index is None:
            return 0, 0
        col = frame[header[layout.dropped_index]]
        if not layout.dropped_is_flag:
            return int(col.null_count()), 0
        return int((col == "1").sum()), int((col == DROPPED_ERROR).sum())

    def as_key(values: tuple[Any, ...]) -> tuple[str, str, str]:
        a, b, c = (str(v) for v in values)
        return (a, b, c)

    if single:
        groups = [(single, df.height)]
    elif not key_names:
        groups = []
    elif all(df[k].n_unique() == 1 for k in key_names):
        groups = [(as_key(tuple(df[k][0] for k in key_names)), df.height)]
    else:
        counted = df.group_by(key_names, maintain_order=True).len()  # first seen first
        groups = [(as_key(row[:3]), int(row[3])) for row in counted.iter_rows()]

    def select(key: tuple[str, str, str] | None) -> tuple[np.ndarray, int, int]:
        frame = df
        if key is not None and len(groups) > 1:
            mask = pl.lit(True)
            for col, value in zip(key_names, key):
                mask = mask & (pl.col(col).cast(pl.String) == value)
            frame = df.filter(mask)
        values = frame[header[layout.interval_index]].to_numpy()
        if layout.addend_index is not None:
            values = _exact_sum(values, frame[header[layout.addend_index]].to_numpy())
        return values, *dropped_of(frame)

    return _Rows(groups=groups, select=select)


def _scan(data: bytes, layout: _Layout) -> tuple[bool, tuple[str, str, str] | None]:
    """Byte-level checks polars cannot make cheaply: (rows all as wide as the header, one key).

    polars checks a row's width only when it reads every column, so the commas after the header
    are counted: (width - 1) per line start means no row is longer (a shorter one leaves a null
    in the last column, which the fast path checks). A quoted comma also fails the count and
    sends the file to the exact slow path.

    Parsing three string columns costs polars about as much as the interval itself; in the
    common one-process file the same byte pass proves there is one group (every line start after
    the header is followed by the same `Application,ProcessID,SwapChainAddress,` prefix).
    """
    pos = -1
    for _ in range(layout.header_line):
        pos = data.find(b"\n", pos + 1)
        if pos < 0:
            return False, None
    starts = data.count(b"\n", pos) - (1 if data.endswith(b"\n") else 0)
    width_ok = data.count(b",", pos) == (len(layout.header) - 1) * starts
    if layout.keys != (0, 1, 2):
        return width_ok, None
    end = data.find(b"\n", pos + 1)
    fields = data[pos + 1 : end if end >= 0 else len(data)].split(b",", 3)
    if len(fields) < 4 or any(b'"' in f or not f.strip() for f in fields[:3]):
        return width_ok, None
    prefix = b"\n" + b",".join(fields[:3]) + b","
    if data.count(prefix, pos) != starts:
        return width_ok, None
    try:
        a, b, c = (f.decode("utf-8").strip() for f in fields[:3])
    except UnicodeDecodeError:
        return width_ok, None
    return width_ok, (a, b, c)


def _slow(data: bytes, name: str, layout: _Layout) -> _Rows:
    """Every row and cell through the csv module: exact errors, or the same rows as _fast."""
    text = decode(data, name)
    lines = io.StringIO(text, newline="")
    for _ in range(layout.header_line):  # the //Key=Value lines and the header
        lines.readline()
    reader = csv.reader(lines)
    width = len(layout.header)
    reach = max(layout.needed) + 1
    col = layout.header[layout.interval_index]
    addend = layout.addend_index
    per_group: dict[tuple[str, str, str], tuple[list[float], list[int]]] = {}
    """key -> (intervals, Dropped per row: 0, 1, or 2 for Error)."""
    addends: dict[tuple[str, str, str], list[float]] = {}
    """key -> CPUWait per row, when the interval is CPUBusy + CPUWait."""

    def key_of(row: list[str]) -> tuple[str, str, str]:
        if not layout.keys:
            return ("", "", "")
        a, b, c = (row[i].strip() for i in layout.keys)
        return (a, b, c)

    order: list[tuple[str, str, str]] = []
    for row in reader:
        line = layout.header_line + reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) > width or (len(row) < width and (layout.flavour != "ocat" or len(row) < reach)):
            raise CaptureFormatError(
                f"expected {width} fields as in the header, got {len(row)}", file=name, line=line
            )
        token = row[layout.interval_index]
        value = float("nan") if token.strip() == NA else parse_number(
            token, name=name, line=line, field=col
        )
        key = key_of(row)
        if addend is not None:
            cell = row[addend]
            second = float("nan") if cell.strip() == NA else parse_number(
                cell, name=name, line=line, field=layout.header[addend]
            )
            addends.setdefault(key, []).append(second)
        dropped = 0
        if layout.dropped_index is not None:
            cell = row[layout.dropped_index].strip()
            if layout.dropped_is_flag:
                if cell == DROPPED_ERROR:
                    dropped = 2
                elif cell in ("0", "1"):
                    dropped = int(cell)
                else:
                    raise CaptureFormatError(
                        f"expected 0 or 1, got {row[layout.dropped_index]!r}",
                        file=name, line=line, field="Dropped",
                    )
            elif cell == NA:
                dropped = 1
            else:
                parse_number(cell, name=name, line=line, field=layout.header[layout.dropped_index])
        if key not in per_group:
            per_group[key] = ([], [])
            order.append(key)
        values, drops = per_group[key]
        values.append(value)
        drops.append(dropped)
    if not per_group:
        raise CaptureFormatError(
            "no frame rows after the header", file=name, line=layout.header_line
        )
    groups = [(k, len(per_group[k][0])) for k in order] if layout.keys else []

    def select(key: tuple[str, str, str] | None) -> tuple[np.ndarray, int, int]:
        chosen = key if key is not None else ("", "", "")
        values, drops = per_group[chosen]
        intervals = np.asarray(values, dtype=np.float64)
        if addend is not None:
            intervals = _exact_sum(intervals, np.asarray(addends[chosen], dtype=np.float64))
        return intervals, drops.count(1), drops.count(2)

    return _Rows(groups=groups, select=select)


def _exact_sum(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """CPUBusy + CPUWait per row, as the decimal sum of the two cells rounded once to a float.

    PresentMon 2.0.0 writes both with 6 decimals and 2.1 writes their sum as FrameTime with 4;
    adding them as whole millionths of a ms (exact integers in a float64) and dividing once gives
    the same float as FrameTime of the same trace, where float addition could differ by a bit.
    Cells with more decimals than that (never written by PresentMon) are added as floats. NA
    (NaN) in either cell gives NaN, a missing interval.
    """
    a, b = first * SUM_SCALE, second * SUM_SCALE
    whole_a, whole_b = np.round(a), np.round(b)
    with np.errstate(invalid="ignore"):
        off = (np.abs(a - whole_a) > 1e-3) | (np.abs(b - whole_b) > 1e-3)
    total: np.ndarray = first + second if np.any(off) else (whole_a + whole_b) / SUM_SCALE
    return total


SYSTEM_PROCESSES = (
    "dwm.exe",
    "csrss.exe",
    "explorer.exe",
    "sihost.exe",
    "ShellExperienceHost.exe",
    "StartMenuExperienceHost.exe",
    "SearchHost.exe",
    "SearchApp.exe",
    "SearchUI.exe",
    "TextInputHost.exe",
    "ApplicationFrameHost.exe",
    "LockApp.exe",
    "LogonUI.exe",
)
"""Windows components that present frames in an all-process capture (compared ignoring case).

Never chosen by default while another group has frames: a certificate scored on the compositor
or the shell says nothing about the game (docs/spec/captures.md). Only parts of Windows are
listed; third-party helpers (steamwebhelper.exe, overlays, launchers) are left to the group rule
and its close-choice warning, since no fixed list of them could be complete or stay right.
"""
_SYSTEM = frozenset(p.casefold() for p in SYSTEM_PROCESSES)


def is_system_process(application: str) -> bool:
    """True for an application of SYSTEM_PROCESSES (case-insensitive)."""
    return application.strip().casefold() in _SYSTEM


def is_null_swap_chain(address: str) -> bool:
    """True for a swap chain address of all zeros (0x0, 0x0000000000000000): no real swap chain."""
    try:
        return int(address, 16) == 0
    except ValueError:
        return False


def _groups_in_file_order(groups: list[tuple[tuple[str, str, str], int]]) -> list[Group]:
    return [Group(a, p, s, n) for (a, p, s), n in groups]


def _choose(
    groups: list[Group], process: str | None, name: str
) -> tuple[Group, list[Group], list[str]]:
    """(the group to read, the others most frames first, warnings): the group rule.

    `groups` are in the order first seen in the file. Candidates: the groups of the application
    `process` names, or by default every group that is not a system process (all groups when
    only system processes presented). Among candidates: a real swap chain before 0x0, then most
    frames, then first seen. A warning names system processes passed over by that rule, and any
    runner-up with as many frames as the chosen group or within 10 % of it.
    """
    first_seen = {g: i for i, g in enumerate(groups)}

    def rank(g: Group) -> tuple[bool, int, int]:
        return (is_null_swap_chain(g.swap_chain), -g.frames, first_seen[g])

    warnings: list[str] = []
    if process is None:
        others = [g for g in groups if not is_system_process(g.application)]
        candidates = others or groups
    else:
        wanted = process.strip().casefold()
        candidates = [g for g in groups if g.application.casefold() == wanted]
        if not candidates:
            listed = "; ".join(f"{g.label()}: {g.frames} rows"
                               for g in sorted(groups, key=lambda g: (-g.frames, first_seen[g])))
            raise CaptureFormatError(f"no process named {process!r}; groups: {listed}", file=name)
    ranked = sorted(candidates, key=rank)
    chosen = ranked[0]
    if process is None and not others:
        warnings.append(
            f"every group is a system process: {chosen.label()} was chosen, but figures of a "
            "system process (such as the compositor, dwm.exe) say nothing about a game"
        )
    elif process is None:
        passed = [g for g in groups if is_system_process(g.application) and rank(g) < rank(chosen)]
        if passed:
            listed = "; ".join(f"{g.label()}: {g.frames} frames" for g in passed)
            warnings.append(
                "left out as a system process (never chosen by default while another process "
                f"has frames; --process names one): {listed}"
            )
    if len(ranked) > 1 and 10 * ranked[1].frames >= 9 * chosen.frames:
        runner = ranked[1]
        if is_null_swap_chain(runner.swap_chain) and not is_null_swap_chain(chosen.swap_chain):
            why = "a real swap chain comes before 0x0"
        elif chosen.frames > runner.frames:
            why = "it has more frames"
        else:
            why = "it was seen first in the file"
        warnings.append(
            f"close group choice: {chosen.label()} ({chosen.frames} frames) was chosen over "
            f"{runner.label()} ({runner.frames} frames) because {why}; check that it is the "
            "game (--process names an application)"
        )
    left_out = sorted((g for g in groups if g != chosen), key=lambda g: (-g.frames, first_seen[g]))
    return chosen, left_out, warnings


def _capture(
    rows: _Rows, layout: _Layout, name: str, process: str | None, hints: Hints
) -> Capture:
    group = None
    left_out: tuple[Group, ...] = ()
    warnings: list[str] = []
    group_warnings: list[str] = []
    if rows.groups:
        group, others, group_warnings = _choose(
            _groups_in_file_order(rows.groups), process, name
        )
        left_out = tuple(others)
        values, dropped, failed = rows.select(
            (group.application, group.process_id, group.swap_chain)
        )
    else:
        values, dropped, failed = rows.select(None)
    missing = np.isnan(values)
    n_missing = int(np.count_nonzero(missing))
    if n_missing:
        values = values[~missing]
    label = layout.interval
    if layout.interval == FALLBACK_COLUMN:
        label = FALLBACK_LABEL
        warnings.append(FALLBACK_WARNING)
    elif layout.interval == SUM_LABEL:
        warnings.append(SUM_WARNING)
    warnings += group_warnings
    if n_missing:
        warnings.append(f"{n_missing} rows with no interval (NA) are not frame times")
    if failed:
        warnings.append(
            f"{failed} frames with Dropped=Error (present failed) are counted with their present "
            "interval"
        )
    return Capture(
        frame_times_ms=values,
        source=name,
        format=layout.flavour,
        interval_column=label,
        group=group,
        groups_left_out=left_out,
        dropped_frames=dropped,
        failed_presents=failed,
        missing_intervals=n_missing,
        hints=hints,
        warnings=tuple(warnings),
    )


# ---------------------------------------------------------------------------------------------
# The vector path: numpy over the raw bytes, for the common one-group PresentMon file.

_CHUNK = 1 << 22
_ROW_BLOCK = 1 << 16
_MAX_TAIL = 64
_HIGH = 0x8080808080808080
_LOW7 = 0x7F7F7F7F7F7F7F7F
_ZERO_DIGITS = 0x3030303030303030
_TOP_MASKS = [((1 << 64) - 1) ^ ((1 << (8 * (8 - n))) - 1) if n else 0 for n in range(9)]
"""The top n bytes of a little-endian word, n = 0..8."""
_POW10 = [10.0**n for n in range(9)]


def _vector(data: bytes, layout: _Layout) -> _Rows | None:
    """The rows of a one-group file read with numpy alone, or None when this path cannot prove
    the file is plain (then polars and the csv module judge it, with their exact errors).

    What it proves for every data row, or it declines: the row ends with a newline (CR LF or
    LF); it starts with the first row's bytes up to the Dropped flag (or the interval), so the
    key columns, hence the group, are the first row's; the Dropped flag is 0 or 1; the rest of
    the row (at most 64 bytes) holds exactly the commas the header asks for; the interval is
    `NA` or digits with at most one decimal point (at most 8 characters), which numpy turns into
    the same float as any correctly rounding parser. The file must be ASCII with no quote, NUL
    or lone CR. Everything is whole-array work: one pass over the bytes in cache-sized chunks,
    then a few operations per row.
    """
    header = layout.header
    width = len(header)
    if (
        layout.flavour == "ocat"
        or layout.addend_index is not None
        or layout.keys != (0, 1, 2)
        or len(set(header)) != width
        or (layout.dropped_index is not None and not layout.dropped_is_flag)
    ):
        return None
    k = layout.interval_index
    d = layout.dropped_index
    if d is None:
        lead = k  # the interval follows the fields copied from the first row
    elif k == d + 2 and d >= 3:
        lead = d  # the Dropped flag, one field, then the interval
    else:
        return None
    return _vector_rows(data, layout, width, k, d, lead)


def _vector_rows(
    mm: Any, layout: _Layout, width: int, k: int, d: int | None, lead: int
) -> _Rows | None:
    size = len(mm)
    if size == 0 or mm[size - 1] != 10 or mm.find(b'"') >= 0 or mm.find(b"\0") >= 0:
        return None
    start = 0
    for _ in range(layout.header_line):
        start = mm.find(b"\n", start) + 1
        if start <= 0 or start >= size:
            return None
    buf = np.frombuffer(mm, dtype=np.uint8)

    def scan(a: int) -> tuple[np.ndarray, int] | None:
        """Newline positions and CR count of one chunk (None if it is not ASCII)."""
        part = buf[a : a + _CHUNK]
        if int(part.max()) >= 128:
            return None
        return np.flatnonzero(part == 10) + a, int(np.count_nonzero(part == 13))

    # One pass in chunks that stay in cache: newline positions, CR count, ASCII only.
    scanned = _in_two_threads(scan, list(range(start, size, _CHUNK)))
    if any(chunk is None for chunk in scanned):
        return None
    found = [chunk[0] for chunk in scanned if chunk is not None]
    cr = sum(chunk[1] for chunk in scanned if chunk is not None)
    newlines = np.concatenate(found)
    rows = newlines.size
    # The first row gives the bytes every row must start with.
    end = int(newlines[0])
    first = bytes(mm[start : end - 1 if end > start and mm[end - 1] == 13 else end]).split(b",")
    if len(first) != width or any(not f.strip() for f in first[:3]):
        return None
    prefix = b",".join(first[:lead]) + b","
    shape = _Shape(
        lead=prefix + (b"0," if d is not None else b""),
        flag=len(prefix) if d is not None else None,
        commas=width - 1 - (lead + (1 if d is not None else 0)),
    )
    values = np.empty(rows, dtype=np.float64)

    def block(r: int) -> tuple[int, int] | None:
        """Rows r .. r + _ROW_BLOCK into values: (Dropped=1 count, CR LF count), or None."""
        block_ends = newlines[r : r + _ROW_BLOCK]
        starts = np.empty_like(block_ends)
        starts[0] = start if r == 0 else newlines[r - 1] + 1
        starts[1:] = block_ends[:-1] + 1
        done = _row_block(mm, buf, shape, starts, block_ends)
        if done is None:
            return None
        values[r : r + _ROW_BLOCK], ones, crs = done
        return ones, crs

    # Row blocks keep every temporary small (in cache, no fresh pages to fault in).
    counts = _in_two_threads(block, list(range(0, rows, _ROW_BLOCK)))
    if any(c is None for c in counts):
        return None
    dropped = sum(c[0] for c in counts if c is not None)
    if sum(c[1] for c in counts if c is not None) != cr:
        return None  # a CR that does not end a line: the csv module would split there
    a, b, c = (f.decode("ascii").strip() for f in first[:3])
    key = (a, b, c)

    def select(_key: tuple[str, str, str] | None) -> tuple[np.ndarray, int, int]:
        return values, dropped, 0  # a Dropped=Error row is not plain: this path declines

    return _Rows(groups=[(key, rows)], select=select)


_T = TypeVar("_T")


def _in_two_threads(work: Callable[[int], _T], items: list[int]) -> list[_T]:
    """[work(i) for i in items], shared with a second thread when there are enough items.

    The work is numpy array operations, which release the GIL, so two cores read two halves of
    the file at once (polars uses every core too). The results keep the order of items.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if len(items) < 4 or (cores or 1) < 2:
        return [work(i) for i in items]
    import threading

    results: list[Any] = [None] * len(items)
    errors: list[Exception] = []

    def run(indices: range) -> None:
        try:
            for n in indices:
                results[n] = work(items[n])
        except Exception as exc:
            errors.append(exc)

    helper = threading.Thread(target=run, args=(range(1, len(items), 2),))
    helper.start()
    run(range(0, len(items), 2))
    helper.join()
    if errors:
        raise errors[0]
    return results


@dataclass(frozen=True)
class _Shape:
    """What every row of a file the vector path reads looks like."""

    lead: bytes
    """The first row's bytes up to the interval, or up to the Dropped flag then `0,`."""
    flag: int | None
    """Offset of the Dropped flag in `lead`, or None without a flag."""
    commas: int
    """Commas in the tail (the bytes after `lead`) of every row."""


def _row_block(
    mm: Any, buf: np.ndarray, shape: _Shape, starts: np.ndarray, newlines: np.ndarray
) -> tuple[np.ndarray, int, int] | None:
    """(intervals, Dropped=1 count, CR LF count) of one block of rows, or None if a row is not
    as shaped. `newlines` are the positions of the rows' line feeds."""
    size = buf.size
    rows = starts.size
    after = len(shape.lead)
    has_cr = buf[newlines - 1] == 13
    ends = newlines - has_cr
    tail_max = int((ends - starts).max()) - after
    if int((ends - starts).min()) <= after or tail_max > _MAX_TAIL:
        return None
    window = next(w for w in (8, 16, 32, 64) if w >= tail_max)
    if int(ends[0]) < window:
        return None
    # Every row starts with the lead bytes (the flag byte may be 0 or 1): one gather of whole
    # 8-byte words, compared as words (the bytes past the lead masked off in the last one).
    nwords = -(-after // 8)
    if int(starts[-1]) + 8 * nwords > size:
        return None  # a short last row at the very end of the file: not worth a special case
    span = np.ndarray(shape=(size - 8 * nwords + 1,), dtype=f"V{8 * nwords}", buffer=mm,
                      strides=(1,))
    got = span[starts]
    as_bytes = got.view(np.uint8).reshape(rows, 8 * nwords)
    ones = 0
    if shape.flag is not None:
        flags = as_bytes[:, shape.flag]
        is_one = flags == 49
        ones = int(np.count_nonzero(is_one))
        if not np.all(is_one | (flags == 48)):
            return None
        as_bytes[:, shape.flag] = 48
    words = got.view(np.dtype("<u8")).reshape(rows, nwords)
    pad = 8 * nwords - after
    if pad:
        words[:, -1] &= np.uint64((1 << (8 * (8 - pad))) - 1)
    want = np.frombuffer(shape.lead + b"\0" * pad, dtype=np.dtype("<u8"))
    if not np.all(words == want):
        return None
    # The tail (after the lead) as a bit mask of its commas: the last `window` bytes of each
    # row, compared with ',' and packed to one bit per byte (bit b = byte ends - window + b).
    uint = np.dtype(f"<u{window // 8}")
    last = np.ndarray(shape=(size - window + 1,), dtype=f"V{window}", buffer=mm, strides=(1,))
    # Packed flat (rows of whole bytes, so the same bits as per row), the SIMD path.
    bits = np.packbits(last[ends - window].view(np.uint8) == 44, bitorder="little").view(uint)
    tail_start = starts + after
    bits >>= (window - (ends - tail_start)).astype(uint)  # bit b = byte b of the tail now
    if not np.all(np.bitwise_count(bits) == shape.commas):
        return None
    # The interval is the first field of the tail when there is no Dropped flag, else the
    # second: it ends at the tail's first or second comma (or the end of the row).
    one = uint.type(1)
    field_start = tail_start
    if shape.flag is not None:
        first_bit = bits & (~bits + one)
        field_start = tail_start + np.bitwise_count(first_bit - one) + 1
        bits ^= first_bit
    field_end = ends
    if shape.commas > (0 if shape.flag is None else 1):
        field_end = tail_start + np.bitwise_count((bits & (~bits + one)) - one)
    values = _parse_decimals(mm, size, field_end, field_end - field_start)
    return None if values is None else (values, ones, int(np.count_nonzero(has_cr)))


def _parse_decimals(
    mm: Any, size: int, end: np.ndarray, length: np.ndarray
) -> np.ndarray | None:
    """Fields of 1-8 bytes ending at `end` that are `NA` (NaN) or digits with at most one inner
    point, as float64: the integer of the digits divided by a power of ten (exact operands, one
    correctly rounded division: the same float as strtod). None when any field is else.

    Each field is read as the 8 bytes that end where it ends (right-aligned in a little-endian
    word), the bytes before it set to '0', the point taken out, then the classic SWAR sum.
    """
    if int(length.min()) < 1 or int(length.max()) > 8 or int(end.min()) < 8:
        return None
    u = np.uint64
    words = np.ndarray(shape=(size - 7,), dtype=np.dtype("<u8"), buffer=mm, strides=(1,))
    raw = words[end - 8]
    field = np.asarray(_TOP_MASKS, dtype=u)[length]  # the top `length` bytes
    raw &= field
    raw |= u(_ZERO_DIGITS) & ~field
    # The common case: every field has its point at the same place as the first (fixed
    # decimals); a second point would fail the digit check below.
    place = bytes(int(raw[0]).to_bytes(8, "little")).find(b".")
    if place > 0 and np.all(((raw >> u(8 * place)) & u(0xFF)) == u(0x2E)):
        decimals = 7 - place
        # The fraction stays where it is; the integer part moves up over the point.
        below = (1 << (8 * place)) - 1
        digits = (raw & ~u((below << 8) | 0xFF)) | ((raw & u(below)) << u(8)) | u(0x30)
        ok = length > decimals + 1  # a digit before the point
        ok &= decimals > 0
    else:
        missing = (length == 2) & (raw == u(0x414E303030303030))  # "NA" after six '0'
        x = raw ^ u(0x2E2E2E2E2E2E2E2E)
        dot = ~(((x & u(_LOW7)) + u(_LOW7)) | x | u(_LOW7)) & u(_HIGH)
        return _parse_general(raw, dot, length, missing)
    ok &= (digits & u(0xF0F0F0F0F0F0F0F0)) == u(_ZERO_DIGITS)
    ok &= ((digits & u(0x0F0F0F0F0F0F0F0F)) + u(0x0606060606060606)) & u(0xF0F0F0F0F0F0F0F0) == 0
    if not np.all(ok):
        return None
    return _swar_sum(digits).astype(np.float64) / _POW10[decimals]


def _parse_general(
    raw: np.ndarray, dot: np.ndarray, length: np.ndarray, missing: np.ndarray
) -> np.ndarray | None:
    """_parse_decimals when the point moves (or is absent, or a field is NA): per field."""
    u = np.uint64
    dots = np.bitwise_count(dot)
    bit = dot >> u(7)  # 1 << (8 * place), or 0 without a point
    below = bit - u(1)
    moved = (raw & ~((bit << u(8)) - u(1))) | ((raw & below) << u(8)) | u(0x30)
    digits = np.where(dots == 1, moved, raw)
    place = np.bitwise_count(below) // 8
    decimals = np.where(dots == 1, u(7) - place, u(0))
    ok = (dots <= 1) & ((dots == 0) | ((decimals > 0) & (length > decimals + u(1))))
    ok &= (digits & u(0xF0F0F0F0F0F0F0F0)) == u(_ZERO_DIGITS)
    ok &= ((digits & u(0x0F0F0F0F0F0F0F0F)) + u(0x0606060606060606)) & u(0xF0F0F0F0F0F0F0F0) == 0
    if not np.all(ok | missing):
        return None
    digits[missing] = u(_ZERO_DIGITS)
    values: np.ndarray = _swar_sum(digits).astype(np.float64) / np.asarray(_POW10)[decimals]
    values[missing] = np.nan
    return values


def _swar_sum(digits: np.ndarray) -> np.ndarray:
    """8 ASCII digits per little-endian word (first byte most significant) -> their integer."""
    u = np.uint64
    v = digits - u(_ZERO_DIGITS)
    v = v * u(10) + (v >> u(8))
    return (((v & u(0x000000FF000000FF)) * u(100 + (1000000 << 32)))
            + (((v >> u(16)) & u(0x000000FF000000FF)) * u(1 + (10000 << 32)))) >> u(32)
