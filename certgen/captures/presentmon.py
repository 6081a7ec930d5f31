"""PresentMon-family CSV: PresentMon 1.x / 2.x, OCAT, NVIDIA FrameView and CapFrameX CSV.

Two paths give the same Capture:
- the fast path (polars, imported here only) reads just the columns it needs and judges what
  it reads to be what the csv module would read: `NA` is a null and nothing else is, numbers are
  float()'s, every row as wide as the header (checked on the bytes, see _byte_facts); real files
  take it whatever their shape (NA cells, a BOM, CRLF, many groups, FrameView's ~110 columns);
  any sign of trouble (a parse error, an empty number, a ragged row, a key with spaces) sends
  the file to
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
- what the file records about the system and the capture (`Capture.recorded`, _recorded):
  CapFrameX's //Key=Value lines, OCAT's system cells on the first data row, and the columns
  ROW_COLUMNS names (Runtime, FrameView's GPU/CPU/Resolution, OCAT's Width/Height) at the
  chosen group's first row, read in the same pass as the frame times;
- diagnostics only (certgen.metrics.framegen), in the same pass: `FrameType` (PresentMon 2.x: the
  name as written, `NA` or empty is None) and `MsBetweenDisplayChange` /
  `msBetweenDisplayChange` (`NA` is NaN, 0 stays 0: 1.x writes it for a frame never
  displayed), kept for the chosen group's rows that have an interval; never read beside
  CPUBusy + CPUWait (PresentMon 2.0.0 writes neither);
- diagnostics only (certgen.metrics.measured), in the same pass: the latency and animation-error
  columns of MEASURED_COLUMNS, `NA` as NaN, NaN too on a frame not displayed, and the CPU /
  GPU columns of WORK_COLUMNS (`NA` as NaN, on every frame);
- an interval of about 2⁶⁴ × 100 ns (WRAP_MS, a FrameView defect) is read as the negative
  interval it wraps, with a warning (_unwrapped).
"""

from __future__ import annotations

import codecs
import csv
import io
import mmap
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar, cast

import numpy as np

from certgen.captures.common import (
    UTF8_BOM,
    Data,
    decode,
    diagnostic_number,
    parse_number,
    recorded_text,
)
from certgen.captures.model import Capture, FrameTypeCodes, Group
from certgen.errors import CaptureFormatError, NoProcessGroupsError
from certgen.model.capture import Recorded

if TYPE_CHECKING:
    import polars as pl

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
FRAME_TYPE_COLUMN = "FrameType"
DISPLAY_CHANGE_COLUMNS = ("MsBetweenDisplayChange", "msBetweenDisplayChange")
MEASURED_COLUMNS = ("MsPCLatency", "MsClickToPhotonLatency", "MsAllInputToPhotonLatency",
                    "MsAnimationError", "PCLatency", "ClickToPhotonLatency",
                    "AllInputToPhotonLatency", "AnimationError")
"""Per-frame figures PresentMon 2.x and FrameView write beside the intervals (diagnostics,
certgen.metrics.measured), then their `--v2_metrics` names (no `Ms`): read as numbers, `NA` as NaN,
kept for displayed frames only (a dropped frame's value, should a tool write one, is NaN: the
figures are over displayed frames). Any other token is refused with its line, as in the
display-change column: PresentMon and FrameView write `NA`, never an empty cell."""
WORK_COLUMNS = (("MsCPUBusy", "CPUBusy"), ("MsCPUWait", "CPUWait"),
                ("MsGPUBusy", "GPUBusy", "MsGPUTime", "GPUTime"))
"""Where each frame's time went, as PresentMon 2.x writes it (CPU busy, CPU wait, GPU busy):
per role, the first column the header has (`--v2_metrics` names without `Ms`; GPU time where
there is no GPU busy). Diagnostics (the hitch causes, certgen.metrics.measured), read as
MEASURED_COLUMNS are but kept on every frame, displayed or not: a frame the display dropped
still took its CPU and GPU time."""
SENSOR_COLUMNS = ("PCAT Power Total(W)", "NV Pwr(W) (API)", "AMDPwr(W) (API)",
                  "GPUOnlyPwr(W) (API)", "GPU0Temp(C)", "GPU0Clk(MHz)")
"""FrameView's power and GPU sensors (diagnostics, certgen.metrics.measured: power, FPS per watt, the
temperature and clock at the run's start and end): read as WORK_COLUMNS are, on every frame
(a sample of the sensor at that frame; `NA` as NaN: no sensor or no reading)."""
LABEL_COLUMNS = ("PresentMode", "AllowsTearing")
"""Per-frame text the capture-validity checks read (certgen.metrics.validity): the presentation mode
as written (e.g. "Hardware: Independent Flip", "Composed: Flip") and the tearing flag (0 / 1),
stripped, `NA` or empty as None; kept as codes into a table (few distinct values)."""
CPU_START_COLUMNS = ("CPUStartQPC", "CPUStartQPCTime", "CPUStartQPCTimeInMs", "CPUStartTime")
"""When the CPU began each frame (PresentMon 2.x; QPC ticks, or ms / s with --qpc_time_ms or
by default), the first the header has: a frame whose cell repeats the previous frame's of its
group (compared as text, stripped; `NA` or empty repeats nothing) is a known pattern of some
frame generators (certgen.metrics.validity). Never read as a number: only equality matters."""
NA = "NA"
DROPPED_ERROR = "Error"
"""FrameView's `Dropped` token for a frame whose present failed: the frame keeps its interval."""

WRAP_MS = 2.0**64 * 1e-4
"""2⁶⁴ ticks of 100 ns, in ms (1844674407370955.2). FrameView has been seen writing a small
negative interval as an unsigned 64-bit count of such ticks: 1844674407370951.2 ms is about
−4 ms. Such a value is a known tool defect, not a frame time: it is read as the negative
interval it wraps (so the SOP drops it as non-positive, counted), and warned about."""
WRAP_SPAN_MS = 1e7
"""How far below WRAP_MS a value is still read as a wrap-around: a negative interval of up to
10,000 s (the largest frame time certgen accepts, certgen.captures.detect)."""

INTERVAL_MARKERS = ("MsBetweenPresents", "msBetweenPresents", "FrameTime")
"""A header naming one of these (or starting `Application,`: PresentMon 2.0.0) is this family's."""

ROW_COLUMNS = ("Runtime", "PresentRuntime", "GPU", "CPU", "Resolution", "Width", "Height")
"""Columns whose cell at the chosen group's first row is what the file records (_recorded):
the present runtime (every PresentMon-family layout), FrameView's GPU, CPU and Resolution
(on every row), OCAT's Width and Height (1.5 and later). Read in the same pass as the frame
times, whichever path reads them."""

OCAT_SYSTEM: dict[str, tuple[str, ...]] = {
    "motherboard": ("Motherboard",), "os": ("OS",), "cpu": ("Processor",), "ram": ("System RAM",),
    "driver": ("Driver Package", "Base Driver Version"), "gpu": ("GPU",)}
"""OCAT's system cells, written on the first data row only (OCAT `PresentMon/PresentMon.cpp`):
each recorded field and its columns, the first one with a value. The driver is `Driver Package`
(on NVIDIA the driver's build branch, such as r418_77), else `Base Driver Version` (on NVIDIA
the version without its dot, 41891 for 418.91)."""

CAPFRAMEX_INFO: dict[str, tuple[str, ...]] = {
    "gpu": ("GPU",), "driver": ("Driver Package", "Base Driver Version"), "os": ("OS",),
    "cpu": ("Processor",), "ram": ("System RAM",), "motherboard": ("Motherboard",),
    "game": ("GameName",)}
"""CapFrameX CSV's //Key=Value lines (CapFrameX `RecordManager.cs`): each recorded field and
its keys, the first one with a value (the driver as OCAT's, whose keys CapFrameX writes);
`captured_at` is CreationDate and CreationTime, joined by a space."""

NO_VALUE = {"NA", "-"}
"""Cells that say the tool had no value (PresentMon and FrameView write NA, OCAT writes - for a
driver it cannot read): not recorded."""


def presentmon_flavour(header: list[str]) -> str:
    """presentmon, ocat or frameview, from a PresentMon-family header's extra columns."""
    names = {h.strip() for h in header}
    if "Motherboard" in names:
        return "ocat"
    if {"GPU", "CPU", "Resolution"} <= names:
        return "frameview"
    return "presentmon"


def sniff_flavour(line: str) -> str | None:
    """presentmon, ocat or frameview when a capture's first line is a PresentMon-family header
    (docs/spec/captures.md, Detection), else None."""
    fields = next(csv.reader([line]), [])
    if any(f.strip() in INTERVAL_MARKERS for f in fields) or line.startswith("Application,"):
        return presentmon_flavour(fields)
    return None


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
    frame_type_index: int | None = None
    """FrameType's index (a diagnostic, certgen.metrics.framegen), or None."""
    display_index: int | None = None
    """MsBetweenDisplayChange's (or msBetweenDisplayChange's) index (a diagnostic), or None."""
    row_columns: tuple[int, ...] = ()
    """Indices of the ROW_COLUMNS the header has (read at the chosen group's first row)."""
    measured: tuple[tuple[str, int], ...] = ()
    """(name, index) of each MEASURED_COLUMNS column the header has, then of each WORK_COLUMNS
    role's first, then of each SENSOR_COLUMNS column (diagnostics)."""
    labels: tuple[tuple[str, int], ...] = ()
    """(name, index) of each LABEL_COLUMNS column the header has (validity checks)."""
    cpu_start_index: int | None = None
    """The first CPU_START_COLUMNS column's index (validity checks), or None."""

    @property
    def required(self) -> list[int]:
        """The columns the SOP figures and the group rule read (an OCAT row must reach them)."""
        idx = {self.interval_index}
        if self.addend_index is not None:
            idx.add(self.addend_index)
        if self.keys:
            idx.update(self.keys)
        if self.dropped_index is not None:
            idx.add(self.dropped_index)
        return sorted(idx)

    @property
    def needed(self) -> list[int]:
        """Every column read: the required ones and the optional diagnostic ones."""
        optional = (i for i in (self.frame_type_index, self.display_index, self.cpu_start_index)
                    if i is not None)
        return sorted({*self.required, *optional, *(i for _, i in self.measured),
                       *(i for _, i in self.labels)})

    @property
    def cpu_start_name(self) -> str | None:
        return None if self.cpu_start_index is None else self.header[self.cpu_start_index]

    @property
    def display_name(self) -> str | None:
        return None if self.display_index is None else self.header[self.display_index]


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
    # Frame type and display change: diagnostics beside the SOP figures (certgen.metrics.framegen).
    # Not read beside CPUBusy + CPUWait: PresentMon 2.0.0 writes neither.
    frame_type_index = display_index = None
    if addend_index is None:
        if FRAME_TYPE_COLUMN in header:
            frame_type_index = header.index(FRAME_TYPE_COLUMN)
        shown = next((c for c in DISPLAY_CHANGE_COLUMNS if c in header), None)
        if shown is not None:
            display_index = header.index(shown)
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
        frame_type_index=frame_type_index,
        display_index=display_index,
        row_columns=tuple(header.index(c) for c in ROW_COLUMNS if c in header),
        # Whatever the interval column (PresentMon 2.0.0 writes ClickToPhotonLatency too).
        measured=(*((c, header.index(c)) for c in MEASURED_COLUMNS if c in header),
                  *((c, header.index(c)) for c in _first_of_each(header, WORK_COLUMNS)),
                  *((c, header.index(c)) for c in SENSOR_COLUMNS if c in header)),
        labels=tuple((c, header.index(c)) for c in LABEL_COLUMNS if c in header),
        cpu_start_index=next((header.index(c) for c in CPU_START_COLUMNS if c in header), None),
    )


def _first_of_each(header: list[str], roles: tuple[tuple[str, ...], ...]) -> list[str]:
    """The first column of each role the header has (roles without one left out)."""
    return [next(c for c in role if c in header) for role in roles
            if any(c in header for c in role)]


def _recorded(layout: _Layout, first_row: dict[str, str], first: dict[int, str | None]
              ) -> Recorded:
    """What the file records (docs/spec/captures.md, What a capture records), from its content
    alone (a forced --format changes nothing here): CapFrameX's //Key=Value lines, or OCAT's
    system cells on the file's first data row (`first_row`, by column name), and the
    ROW_COLUMNS cells at the chosen group's first row (`first`, by column index)."""
    row = {layout.header[i]: _cell(cell) for i, cell in first.items()}
    width, height = row.get("Width"), row.get("Height")
    resolution = row.get("Resolution") or (recorded_text(f"{width}x{height}")
                                           if width and height else None)
    runtime = row.get("Runtime") or row.get("PresentRuntime")
    info = layout.info
    if info:
        made = " ".join(v for v in (recorded_text(info.get("CreationDate")),
                                    recorded_text(info.get("CreationTime"))) if v)
        return Recorded(resolution=resolution, runtime=runtime, tool="CapFrameX",
                        captured_at=recorded_text(made), **_first_given(info, CAPFRAMEX_INFO))
    content = presentmon_flavour(layout.header)
    if content == "ocat":
        return Recorded(resolution=resolution, runtime=runtime, tool="OCAT",
                        **_first_given(first_row, OCAT_SYSTEM))
    return Recorded(gpu=row.get("GPU"), cpu=row.get("CPU"), resolution=resolution,
                    runtime=runtime, tool="NVIDIA FrameView" if content == "frameview" else None)


def _first_given(cells: dict[str, str], keys: dict[str, tuple[str, ...]]) -> dict[str, str | None]:
    """Each field of `keys` as the first of its cells (or //Key=Value values) with a value."""
    return {field: next((v for v in (_cell(cells.get(k)) for k in names) if v), None)
            for field, names in keys.items()}


def _cell(cell: str | None) -> str | None:
    """A recorded cell as written (trimmed), None for an empty cell or a NO_VALUE token."""
    text = recorded_text(cell)
    return None if text in NO_VALUE else text


def _first_data_row(layout: _Layout, head: bytes, data: Data) -> dict[str, str]:
    """An OCAT file's first data row, by column name (its system cells), read from `head`, the
    file's first bytes; {} for another flavour, or when the head does not hold all of that row
    (a first row longer than the head is not read, never read cut short)."""
    if layout.info or presentmon_flavour(layout.header) != "ocat":
        return {}
    text = head.removeprefix(UTF8_BOM).decode("utf-8", errors="replace")
    rows = list(csv.reader(io.StringIO(text, newline="")))[layout.header_line:]
    rows = [row for row in rows if row and (len(row) > 1 or row[0].strip())]
    if not rows or (len(rows) == 1 and len(head) < len(data)):
        return {}
    return dict(zip(layout.header, rows[0]))


class _Selected(NamedTuple):
    """The read columns of one group's rows, in file order (NA intervals still in)."""

    intervals: np.ndarray
    """NaN for NA."""
    dropped: int
    """Dropped=1 (or NA in the display column)."""
    failed: int
    """Dropped=Error."""
    frame_types: np.ndarray | FrameTypeCodes | None
    """FrameType per row: the fast path's codes, or the csv module's names (object: the name,
    None for NA or empty); None without the column."""
    display: np.ndarray | None
    """MsBetweenDisplayChange per row (NaN for NA), None without the column."""
    measured: dict[str, np.ndarray]
    """Each MEASURED_COLUMNS column the file has, per row (NaN for NA or a dropped frame), and
    each WORK_COLUMNS one (NaN for NA)."""
    first: dict[int, str | None]
    """The ROW_COLUMNS cells of the group's first row, by column index (None past a short
    row's end or for an empty cell; as written, untrimmed)."""
    labels: dict[str, FrameTypeCodes]
    """Each LABEL_COLUMNS column the file has, per row, as codes (None: NA or empty)."""
    cpu_start_repeated: np.ndarray | None
    """Per row, whether its CPU_START_COLUMNS cell repeats the group's previous row's; None
    without the column."""


@dataclass(frozen=True)
class _Rows:
    """The needed columns of every row, ready for grouping (either path)."""

    groups: list[tuple[tuple[str, str, str], int]]
    """(key, rows) per group, in the order the groups are first seen in the file."""
    select: Callable[[tuple[str, str, str] | None], _Selected]
    """key or None -> that group's rows."""


def read_presentmon(
    data: Data,
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
    try:
        rows = _fast(data, layout)
    except _Suspect:
        rows = _slow(data, name, layout)
    return _capture(rows, layout, name, process, _first_data_row(layout, head, data))


def fast_path(
    data: Data, name: str, *, capframex: bool = False, process: str | None = None
) -> Capture | None:
    """The capture as the fast path reads it, or None when it declines the file (then the exact
    path decides). With exact_path, the seam the tests use to compare the two."""
    head = data[:65536]
    layout = _layout(head, name, capframex=capframex)
    try:
        rows = _fast(data, layout)
    except _Suspect:
        return None
    return _capture(rows, layout, name, process, _first_data_row(layout, head, data))


def exact_path(
    data: Data, name: str, *, capframex: bool = False, process: str | None = None
) -> Capture:
    """The capture as the csv module reads it, every row and cell (or its exact error)."""
    head = data[:65536]
    layout = _layout(head, name, capframex=capframex)
    return _capture(_slow(data, name, layout), layout, name, process,
                    _first_data_row(layout, head, data))


def read_each_path(
    data: Data, name: str, *, capframex: bool = False, process: str | None = None
) -> tuple[Capture | None, Capture]:
    """(fast_path, exact_path) of one file: read_presentmon uses the first when there is one,
    so the two must be equal; the tests check it on real, generated and fuzzed files."""
    return (fast_path(data, name, capframex=capframex, process=process),
            exact_path(data, name, capframex=capframex, process=process))


class _Suspect(Exception):
    """The fast path saw something only the slow path can judge exactly."""


def _fast(data: Data, layout: _Layout) -> _Rows:
    """The read columns through polars, or _Suspect when the csv module must judge the file.

    What polars reads is judged to be what the csv module would read: `NA` is a missing value
    and nothing else is (an empty cell, a short row or a number polars cannot parse is suspect);
    numbers go through polars' correctly rounding parser (the same float as Python's float());
    non-finite ones are suspect. A file without quotes (what capture tools write) is parsed by
    polars on every core: bytes in memory in one call, a mapped file a block of whole lines at
    a time (_BLOCK bytes, each released once read, so memory holds the columns read, never the
    whole file). Beside each polars call, one pass over the same bytes (_byte_facts, in a
    second thread) proves every row as wide as the header, no lone CR, no NUL and valid UTF-8,
    and says whether there is a quote or an empty cell; the numeric columns are read as
    Float64 with `NA` as null, and read again as text and cast when a null there could be an
    empty cell. With quotes (or OCAT, whose rows are short by design) the file is read whole
    and polars reads the last column and one past it: a null there is a short row, a value a
    longer one.
    """
    width = len(layout.header)
    if len(set(layout.header)) != width:
        raise _Suspect  # duplicate names (read by position): the csv module judges
    skip = _header_end_lines(data, layout)
    frame = None
    if layout.flavour != "ocat":
        try:
            if isinstance(data, bytes):  # in memory already: one call, which copies nothing
                frame = _read_part(data, layout, skip, plain=True)
            else:
                frame = _read_blocks(data, layout, skip)
        except _Quoted:
            frame = None
    import polars as pl

    if frame is None:
        whole = data if isinstance(data, bytes) else data[:]
        if not _is_utf8_text(whole):
            raise _Suspect  # not text: the csv module judges
        frame = _read_part(whole, layout, skip, plain=False)
    if frame.height == 0:
        raise _Suspect
    groups: list[tuple[tuple[str, str, str], int]] = []
    codes: dict[tuple[str, str, str], int] = {}
    """key -> the group's first row."""
    if layout.keys:
        if all(frame[k].n_unique() == 1 for k in _KEYS):  # the common one-group file
            firsts, counts = [0], [frame.height]
        else:
            # One integer per row from the three categorical codes (0: an empty cell), grouped
            # by polars on every core in order of first appearance: a single UInt64 column
            # costs far less memory than grouping by the three columns themselves.
            # A categorical's physical codes are UInt32: their max is an int (None: all null).
            sizes = [int(cast("int | None", frame[k].to_physical().max()) or 0) + 2
                     for k in _KEYS]
            if sizes[0] * sizes[1] * sizes[2] >= 1 << 63:
                raise _Suspect  # cannot happen with real category counts
            key_codes = [(pl.col(k).to_physical().cast(pl.UInt64) + 1).fill_null(0) for k in _KEYS]
            row_key = key_codes[0]
            for code, size in zip(key_codes[1:], sizes[1:]):
                row_key = row_key * size + code
            found = (
                frame.select(row_key.alias("key"))
                .with_row_index("first")
                .group_by("key", maintain_order=True)
                .agg(pl.len().alias("rows"), pl.col("first").first())
            )
            firsts, counts = found["first"].to_list(), found["rows"].to_list()
        for first, n, (a, b, c) in zip(firsts, counts, frame[list(_KEYS)][firsts].iter_rows()):
            key = (a or "", b or "", c or "")  # an empty cell (the row is whole): ""
            if key != tuple(v.strip() for v in key) or key in codes:
                raise _Suspect  # the csv module strips keys: two groups could be one
            groups.append((key, int(n)))
            codes[key] = int(first)

    def select(key: tuple[str, str, str] | None) -> _Selected:
        rows = frame
        if key is not None and len(groups) > 1:  # the rows whose key codes are its first row's
            first = codes[key]
            rows = frame.filter(*(
                pl.col(k).is_null() if code is None else pl.col(k).to_physical() == code
                for k, code in ((k, frame[k].to_physical()[first]) for k in _KEYS)
            ))
        values = rows["interval"].to_numpy()
        if layout.addend_index is not None:
            values = _exact_sum(values, rows["addend"].to_numpy())
        types = None if layout.frame_type_index is None else _type_codes(rows["ftype"])
        shown = None if layout.display_index is None else rows["shown"].to_numpy()
        dropped = failed = 0
        dropped_rows = None
        if layout.dropped_index is not None and not layout.dropped_is_flag:
            dropped = int(rows["flag"].sum())
            dropped_rows = rows["flag"]
        elif layout.dropped_index is not None:
            flag = rows["flag"]
            dropped, failed = int((flag == "1").sum()), int((flag == DROPPED_ERROR).sum())
            dropped_rows = flag == "1"
        measured = {}
        for name, i in layout.measured:
            column = rows[f"m{i}"].to_numpy()  # float64, nulls as NaN
            if dropped and dropped_rows is not None and name in MEASURED_COLUMNS:
                if not column.flags.writeable:  # polars may hand out a view of its buffer
                    column = column.copy()
                column[dropped_rows.to_numpy()] = np.nan  # over displayed frames only
            measured[name] = column
        at = codes[key] if key is not None else 0  # the group's first row
        cells = {i: frame[f"r{i}"][at] for i in layout.row_columns}
        labels = {name: _type_codes(rows[f"l{i}"]) for name, i in layout.labels}
        repeated = None
        if layout.cpu_start_index is not None:
            start = rows["cpus"].str.strip_chars()
            repeated = ((start == start.shift(1)) & ~start.is_in(["", NA])).fill_null(
                False).to_numpy()
        return _Selected(values, dropped, failed, types, shown, measured, cells, labels,
                         repeated)

    return _Rows(groups=groups, select=select)


_KEYS = ("k0", "k1", "k2")
"""The key columns (Application, ProcessID, SwapChainAddress) in the frame _read_part gives."""

_BLOCK = 1 << 26
"""Bytes of a mapped file the fast path reads at a time (64 MiB, cut at a line end): large
enough that polars parses each on every core, small enough that memory holds the columns
read and a block or two, never the whole file. Measured against one read of the whole file
(polars mapping it itself): as fast, at half the peak memory (bench/run.py a2, a3)."""


class _Quoted(Exception):
    """A block holds a quote: the file is read whole (quoted cells may span lines)."""


def _read_blocks(data: Data, layout: _Layout, skip: int) -> pl.DataFrame:
    """The columns read from every block of whole lines after the header, concatenated.

    A mapped file's pages are released behind the reader, so resident memory stays at the
    columns read plus a block or two whatever the file's size and width."""
    import polars as pl

    start = 0
    for _ in range(skip):
        start = data.find(b"\n", start) + 1
    if not _is_utf8_text(data[:start]):
        raise _Suspect
    parts = []
    released = 0
    page = mmap.ALLOCATIONGRANULARITY
    while start < len(data):
        end = data.find(b"\n", start + _BLOCK)
        end = len(data) if end < 0 else end + 1
        block = data[start:end]
        parts.append(_read_part(block, layout, 0, plain=True))
        del block
        start = end
        if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            upto = start // page * page
            if upto > released:
                data.madvise(mmap.MADV_DONTNEED, released, upto - released)
                released = upto
    if not parts:
        raise _Suspect  # no rows after the header: the csv module says so
    return pl.concat(parts, rechunk=False) if len(parts) > 1 else parts[0]


def _read_part(data: bytes, layout: _Layout, skip: int, *, plain: bool) -> pl.DataFrame:
    """The read columns of `data` (rows after `skip` lines) as a DataFrame: `interval`,
    `addend` (CPUWait, when summed), `flag` (the Dropped token, or True where the display
    column is NA) and the keys (_KEYS, categorical); _Suspect when polars' reading could differ
    from the csv module's (see _fast)."""
    width = len(layout.header)
    # The byte checks of a plain read run in a second thread beside polars (which leaves part
    # of a core idle), started first: polars' first import takes ~0.1 s of one core.
    facts = _Beside(lambda: _byte_facts(data, skip, width)) if plain else None
    try:
        return _read_checked(data, layout, skip, facts)
    finally:
        if facts is not None:
            facts.result()  # never left running on bytes its caller may release


def _read_checked(data: bytes, layout: _Layout, skip: int, facts: _Beside[_Facts] | None
                  ) -> pl.DataFrame:
    """_read_part's work, with its byte checks (`facts`, already started) for a plain read;
    _read_part waits for them whatever happens here."""
    import polars as pl

    header = layout.header
    width = len(header)
    ocat = layout.flavour == "ocat"
    plain = facts is not None
    names = [f"c{i}" for i in range(width + 1)]
    numeric = {layout.interval_index}
    if layout.addend_index is not None:
        numeric.add(layout.addend_index)
    if layout.dropped_index is not None and not layout.dropped_is_flag:
        numeric.add(layout.dropped_index)
    if layout.display_index is not None:
        numeric.add(layout.display_index)
    numeric.update(i for _, i in layout.measured)
    keys = set(layout.keys or ())  # few distinct values: categorical, grouped by their codes
    if layout.dropped_index is not None and layout.dropped_is_flag:
        keys.add(layout.dropped_index)  # 0, 1 or Error: categorical too
    if layout.frame_type_index is not None:
        keys.add(layout.frame_type_index)  # Application or a generator's name
    keys.update(layout.row_columns)  # a runtime, a GPU name: few values, one row's wanted
    keys.update(i for _, i in layout.labels)  # a presentation mode, a 0 / 1 flag
    read_too = set(layout.row_columns)
    wanted = (range(width) if ocat else sorted(set(layout.needed) | read_too) if plain
              else sorted(set(layout.needed) | read_too | {width - 1, width}))

    def read(as_float: bool) -> pl.DataFrame:
        schema: dict[str, pl.DataType | type[pl.DataType]] = {
            n: pl.Categorical if i in keys else pl.String for i, n in enumerate(names)
        }
        if as_float:
            schema.update({names[i]: pl.Float64 for i in numeric})
        try:
            return pl.read_csv(
                data,
                has_header=False,
                skip_lines=skip,
                columns=list(wanted),
                schema=schema,
                missing_columns="insert",
                truncate_ragged_lines=False,
                raise_if_empty=False,
                encoding="utf8",
                null_values={names[i]: NA for i in numeric} if as_float else None,
            )
        except Exception as exc:  # any parse problem: the slow path says what and where
            raise _Suspect from exc

    # Numbers as Float64 with `NA` as null, unless a null there could be an empty cell (which
    # polars also reads as null): then as text, judged by _numbers.
    as_float = plain
    if facts is not None:
        df = read(as_float)
        checked = facts.result()
        if checked.quoted:
            raise _Quoted
        if not checked.plain:
            raise _Suspect
        if checked.empty_cell and any(df[names[i]].has_nulls() for i in numeric):
            as_float = False
            df = read(as_float)
    else:
        df = read(as_float)
    if df.height == 0:
        raise _Suspect
    if ocat:  # a short row reads as nulls (a FrameType cell past its end is None, as in _slow)
        text = {layout.frame_type_index, layout.cpu_start_index, *(i for _, i in layout.labels)}
        suspect = any(df[names[i]].has_nulls() for i in layout.needed if i not in text)
    elif plain:
        suspect = False
    else:  # a longer row fills the extra column; a shorter (or empty last cell) leaves a null
        longer = df[names[width]].null_count() != df.height
        suspect = longer or df[names[width - 1]].has_nulls()
    if suspect:
        raise _Suspect
    if as_float:  # every numeric column checked in one polars pass (one per column is slower)
        _all_finite(df, [names[i] for i in sorted(numeric)])
    number = _as_read if as_float else _numbers
    columns = {"interval": number(df[names[layout.interval_index]])}
    if layout.addend_index is not None:
        columns["addend"] = number(df[names[layout.addend_index]])
    if layout.dropped_index is not None:
        cell = df[names[layout.dropped_index]]
        if layout.dropped_is_flag:
            if cell.has_nulls() or not cell.is_in(["0", "1", DROPPED_ERROR]).all():
                raise _Suspect
            columns["flag"] = cell
        else:
            columns["flag"] = number(cell).is_null()  # NA: never displayed, a dropped frame
    if layout.keys:
        columns.update({k: df[names[i]] for k, i in zip(_KEYS, layout.keys)})
    if layout.frame_type_index is not None:
        columns["ftype"] = df[names[layout.frame_type_index]]
    if layout.display_index is not None:
        columns["shown"] = number(df[names[layout.display_index]])
    columns.update({f"m{i}": number(df[names[i]]) for _, i in layout.measured})
    columns.update({f"r{i}": df[names[i]] for i in layout.row_columns})
    columns.update({f"l{i}": df[names[i]] for _, i in layout.labels})
    if layout.cpu_start_index is not None:
        columns["cpus"] = df[names[layout.cpu_start_index]]
    return pl.DataFrame(columns)


def _type_codes(cells: pl.Series) -> FrameTypeCodes:
    """Categorical FrameType cells as the csv module reads them (the name stripped, None for
    `NA` or an empty cell), as codes into a table of names: 2 bytes a frame, counted in C."""
    import polars as pl

    present = cells.drop_nulls().unique()
    codes = present.to_physical().cast(pl.Int64).to_numpy()
    order = np.argsort(codes)
    names = [_type_name(t) for t in present.cast(pl.String).to_list()]
    table = (None, *(names[i] for i in order))
    if len(table) > np.iinfo(np.int16).max:
        raise _Suspect  # tens of thousands of frame types: no tool writes that
    physical = cells.to_physical().cast(pl.Int64).fill_null(-1).to_numpy()
    where = np.searchsorted(codes[order], physical) + 1
    where[physical < 0] = 0
    return FrameTypeCodes(table, where.astype(np.int16))


def _type_name(cell: str) -> str | None:
    text = cell.strip()
    return None if text in ("", NA) else text


def _all_finite(df: pl.DataFrame, columns: list[str]) -> None:
    """Float64 columns read with `NA` as their only null: _Suspect when a value is not finite
    (NaN or inf: text the slow path names with its line)."""
    import polars as pl

    if df.select(pl.any_horizontal(
            (pl.col(c).is_nan() | pl.col(c).is_infinite()).any() for c in columns)).item():
        raise _Suspect


def _as_read(values: pl.Series) -> pl.Series:
    """A Float64 column _all_finite has checked, as it is."""
    return values


def _numbers(cells: pl.Series) -> pl.Series:
    """Text cells -> Float64 with NA as null; _Suspect for anything float() would not give."""
    import polars as pl

    if cells.has_nulls():
        raise _Suspect  # an empty cell (or a short OCAT row): not a missing value
    missing = int((cells == NA).sum())
    values = cells.replace(NA, None).cast(pl.Float64, strict=False)
    if values.null_count() != missing or values.is_nan().any() or values.is_infinite().any():
        raise _Suspect  # text that is no number, or an infinite one: the slow path names it
    return values


def _is_utf8_text(data: bytes) -> bool:
    """No NUL byte and valid UTF-8 (as `decode` demands), checked without a copy of the text."""
    if data.find(b"\0") >= 0:
        return False
    body = np.frombuffer(data, dtype=np.uint8, offset=len(UTF8_BOM) if data[:3] == UTF8_BOM
                         else 0)
    if body.size == 0 or int(body.max()) < 128:
        return True  # ASCII after the BOM: the common case, one vectorised pass
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for start in range(0, len(data), _DECODE_CHUNK):  # chunks: never the whole text at once
            decoder.decode(view[start : start + _DECODE_CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


_DECODE_CHUNK = 1 << 20

_TWO_COMMAS = 0x2C2C
"""",," read as one uint16 (either byte order)."""


class _Facts(NamedTuple):
    """What one pass over a plain file's bytes after the header found (_byte_facts)."""

    plain: bool
    """Text (no NUL, valid UTF-8) whose every line ends in LF and holds width - 1 commas, and
    every CR ends a line (the csv module breaks a line at a lone CR): then each row has exactly
    the csv module's field count."""
    quoted: bool
    """A quote somewhere: quoted cells may hold commas and line breaks (read another way)."""
    empty_cell: bool
    """Two adjacent commas, or a comma that starts or ends a line."""


def _byte_facts(data: bytes, skip: int, width: int) -> _Facts:
    """One pass over the bytes after the first `skip` lines, in cache-sized chunks cut at line
    ends.

    Per-line comma counts are summed in uint8 (or uint16), which wraps; with the exact total
    also equal, no line can be off by a multiple of the wrap (width - 1 is below it, so no count
    is below width - 1 by a whole wrap, and the surpluses would have to sum to zero).
    """
    start = 0
    for _ in range(skip):
        start = data.find(b"\n", start) + 1
    size = len(data)
    if data[-1:] != b"\n" or start >= size or width - 1 >= 65535:
        return _Facts(plain=False, quoted=data.find(b'"', start) >= 0, empty_cell=False)
    buf = np.frombuffer(data, dtype=np.uint8)
    wrap = np.uint8 if width - 1 < 255 else np.uint16
    plain, quoted, empty = True, False, False
    text = _is_utf8_text(data[:start])
    while start < size:
        end = data.find(b"\n", start + _CHUNK)
        end = size if end < 0 else end + 1
        part = buf[start:end]
        ends = np.flatnonzero(part == 10)
        starts = np.empty_like(ends)
        starts[0], starts[1:] = 0, ends[:-1] + 1
        comma = (part == 44).view(np.uint8)
        counts = np.add.reduceat(comma, starts, dtype=wrap)
        # reduceat gives an empty line (a lone LF) that byte itself: no comma, and
        # ends > starts fails anyway. A CR must end a line (the csv module breaks a line at a
        # lone one); a NUL is no text. Rare bytes are looked for with find (memchr).
        plain = plain and (
            bool(np.all(counts == width - 1))
            and int(np.count_nonzero(comma)) == (width - 1) * ends.size
            and bool(np.all(ends > starts))
            and data.find(b"\0", start, end) < 0
            and (data.find(b"\r", start, end) < 0 or int(np.count_nonzero(part == 13))
                 == int(np.count_nonzero(part[ends - 1] == 13)))
        )
        quoted = quoted or data.find(b'"', start, end) >= 0
        if plain and int(part.max()) >= 128 and not _is_utf8_text(bytes(part)):
            text = False  # not UTF-8 (a chunk ends at a LF, never inside a character)
        if not (plain and text):  # the csv module will judge; only a quote further on matters
            quoted = quoted or data.find(b'"', end) >= 0
            break
        if not empty:  # ",," (two byte pairs, at even and odd offsets), or a comma at a line end
            even, odd = part[: part.size // 2 * 2], part[1 : 1 + (part.size - 1) // 2 * 2]
            last = part[ends - 1]
            before = np.where(last == 13, part[np.maximum(ends - 2, 0)], last)
            empty = (
                bool(np.any(even.view(np.uint16) == _TWO_COMMAS))
                or bool(np.any(odd.view(np.uint16) == _TWO_COMMAS))
                or bool(np.any(part[starts] == 44))
                or bool(np.any(before == 44))
            )
        start = end
    return _Facts(plain=plain and text, quoted=quoted, empty_cell=empty)


_CHUNK = 1 << 20


_T = TypeVar("_T")


class _Beside(Generic[_T]):
    """`work()` run in a second thread, its result (or exception) taken with result().

    The byte checks are numpy passes, which release the GIL, as polars does while it parses:
    the two share the cores (polars alone leaves part of one idle).
    """

    def __init__(self, work: Callable[[], _T]) -> None:
        self._result: list[_T] = []
        self._error: list[BaseException] = []

        def run() -> None:
            try:
                self._result.append(work())
            except BaseException as exc:  # handed to the caller by result()
                self._error.append(exc)

        self._thread = threading.Thread(target=run, name="certgen-byte-checks", daemon=True)
        self._thread.start()

    def result(self) -> _T:
        self._thread.join()
        if self._error:
            raise self._error[0]
        return self._result[0]


def _header_end_lines(data: Data, layout: _Layout) -> int:
    """How many raw lines (ending in LF) precede the first data row; _Suspect when that is not
    the header line `_layout` counted (a lone CR or another line break in the lines before)."""
    pos = -1
    for _ in range(layout.header_line):
        pos = data.find(b"\n", pos + 1)
        if pos < 0:
            raise _Suspect
    lines = data[: pos + 1].removeprefix(UTF8_BOM).decode("utf-8", errors="replace")
    if len(lines.splitlines()) != layout.header_line:
        raise _Suspect
    return layout.header_line


def _slow(data: Data, name: str, layout: _Layout) -> _Rows:
    """Every row and cell through the csv module: exact errors, or the same rows as _fast."""
    text = decode(data if isinstance(data, bytes) else data[:], name)
    lines = io.StringIO(text, newline="")
    for _ in range(layout.header_line):  # the //Key=Value lines and the header
        lines.readline()
    reader = csv.reader(lines)
    width = len(layout.header)
    reach = max(layout.required) + 1
    col = layout.header[layout.interval_index]
    addend = layout.addend_index
    per_group: dict[tuple[str, str, str], tuple[list[float], list[int]]] = {}
    """key -> (intervals, Dropped per row: 0, 1, or 2 for Error)."""
    addends: dict[tuple[str, str, str], list[float]] = {}
    """key -> CPUWait per row, when the interval is CPUBusy + CPUWait."""
    ftype, display, display_name = layout.frame_type_index, layout.display_index, layout.display_name
    types: dict[tuple[str, str, str], list[str | None]] = {}
    shown: dict[tuple[str, str, str], list[float]] = {}
    """key -> FrameType / display change per row (diagnostics), when the file has them."""
    measured: dict[str, dict[tuple[str, str, str], list[float]]] = {
        name: {} for name, _ in layout.measured}
    """column -> key -> its value per row (NaN for NA or a dropped frame)."""
    firsts: dict[tuple[str, str, str], dict[int, str | None]] = {}
    """key -> the ROW_COLUMNS cells of the group's first row (None past a short row's end)."""
    labels: dict[str, dict[tuple[str, str, str], list[str | None]]] = {
        name: {} for name, _ in layout.labels}
    """column -> key -> its text per row (validity checks; None for NA, empty or past the end)."""
    starts: dict[tuple[str, str, str], list[str | None]] = {}
    """key -> the CPU start cell per row (stripped; None for NA, empty or past the end)."""
    cpu_start = layout.cpu_start_index

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
        # An OCAT row may end before the optional columns: no type, no display change.
        if ftype is not None:
            types.setdefault(key, []).append(
                _type_name(row[ftype]) if ftype < len(row) else None)
        if display is not None and display_name is not None:
            token = row[display] if display < len(row) else NA
            shown.setdefault(key, []).append(diagnostic_number(
                token, name=name, line=line, field=display_name))
        for column, i in layout.measured:
            token = row[i] if i < len(row) else NA
            value_of = diagnostic_number(token, name=name, line=line, field=column)
            measured[column].setdefault(key, []).append(
                float("nan") if dropped == 1 and column in MEASURED_COLUMNS
                else value_of)  # over displayed frames only (WORK_COLUMNS: every frame)
        for column, i in layout.labels:
            labels[column].setdefault(key, []).append(_type_name(row[i]) if i < len(row) else None)
        if cpu_start is not None:
            starts.setdefault(key, []).append(
                _type_name(row[cpu_start]) if cpu_start < len(row) else None)
        if key not in per_group:
            per_group[key] = ([], [])
            order.append(key)
            firsts[key] = {i: row[i] if i < len(row) else None for i in layout.row_columns}
        values, drops = per_group[key]
        values.append(value)
        drops.append(dropped)
    if not per_group:
        raise CaptureFormatError(
            "no frame rows after the header", file=name, line=layout.header_line
        )
    groups = [(k, len(per_group[k][0])) for k in order] if layout.keys else []

    def select(key: tuple[str, str, str] | None) -> _Selected:
        chosen = key if key is not None else ("", "", "")
        values, drops = per_group[chosen]
        intervals = np.asarray(values, dtype=np.float64)
        if addend is not None:
            intervals = _exact_sum(intervals, np.asarray(addends[chosen], dtype=np.float64))
        return _Selected(
            intervals, drops.count(1), drops.count(2),
            None if ftype is None else np.array(types[chosen], dtype=object),
            None if display is None else np.asarray(shown[chosen], dtype=np.float64),
            {column: np.asarray(rows[chosen], dtype=np.float64)
             for column, rows in measured.items()},
            firsts[chosen],
            {column: FrameTypeCodes.of(rows[chosen]) for column, rows in labels.items()},
            None if cpu_start is None else _repeats(starts[chosen]),
        )

    return _Rows(groups=groups, select=select)


def _repeats(cells: list[str | None]) -> np.ndarray:
    """Per row, whether its cell (a value, not None) equals the previous row's."""
    return np.array([i > 0 and cell is not None and cell == cells[i - 1]
                     for i, cell in enumerate(cells)], dtype=bool)


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


_GROUP_LABEL = re.compile(
    r"(?P<name>.*?) \(pid (?P<pid>[^,()]+?)(?:, swap chain (?P<swap>[^,()]+?))?\)", re.DOTALL)
"""`--process` naming one group as Group.label prints it: "Game.exe (pid 7124)", optionally
with ", swap chain 0x1" before the closing parenthesis."""


def process_matches(process: str, group: Group) -> bool:
    """Whether `--process` (or card.yaml `process:`) names this group: an application name
    (ignoring case), or a group as certgen prints it, "NAME (pid PID)" or "NAME (pid PID, swap
    chain ADDRESS)", which tells apart two processes (or swap chains) of one application."""
    label = _GROUP_LABEL.fullmatch(process.strip())
    if label is None:
        return group.application.casefold() == process.strip().casefold()
    name = label["name"].strip()
    if name == "(no name)":
        name = ""
    swap = label["swap"]
    return (group.application.casefold() == name.casefold()
            and group.process_id == label["pid"].strip()
            and (swap is None or _same_address(group.swap_chain, swap.strip())))


def _same_address(a: str, b: str) -> bool:
    """Two swap chain addresses alike as hexadecimal numbers (0x1 is 0x0000000000000001)."""
    try:
        return int(a, 16) == int(b, 16)
    except ValueError:
        return a.casefold() == b.casefold()


def _choose(
    groups: list[Group], process: str | None, name: str
) -> tuple[Group, list[Group], list[str]]:
    """(the group to read, the others most frames first, warnings): the group rule.

    `groups` are in the order first seen in the file. Candidates: the groups `process` names
    (process_matches: an application, or one process or swap chain of it), or by default every
    group that is not a system process (all groups when only system processes presented). Among candidates: a real swap chain before 0x0, then most
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
        candidates = [g for g in groups if process_matches(process, g)]
        if not candidates:
            listed = "; ".join(f"{g.label()}: {g.frames} rows"
                               for g in sorted(groups, key=lambda g: (-g.frames, first_seen[g])))
            what = "group" if _GROUP_LABEL.fullmatch(process.strip()) else "process named"
            raise CaptureFormatError(f"no {what} {process!r}; groups: {listed}", file=name)
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
            f"game (--process names an application, or one group as printed here: "
            f"--process \"{runner.label()}\" reads the other)"
        )
    left_out = sorted((g for g in groups if g != chosen), key=lambda g: (-g.frames, first_seen[g]))
    return chosen, left_out, warnings


def _unwrapped(values: np.ndarray, column: str) -> tuple[np.ndarray, int, str | None]:
    """The intervals with each unsigned wrap-around (WRAP_MS) read as the negative interval it
    wraps, how many there were, and the warning that says so (None when there is none)."""
    wrapped = np.flatnonzero((values <= WRAP_MS) & (values >= WRAP_MS - WRAP_SPAN_MS))
    if not wrapped.size:
        return values, 0, None
    values = values.copy()  # the reader's column may be read-only
    first = float(values[wrapped[0]])
    values[wrapped] -= WRAP_MS
    count = int(wrapped.size)
    frames = "frame" if count == 1 else "frames"
    return values, count, (
        f"{count} {frames} with {column} of about 2^64 x 100 ns (the first {first!r} ms, "
        f"frame {int(wrapped[0]) + 1}): an unsigned wrap-around of a negative interval, a known "
        f"FrameView defect; read as the negative interval ({float(values[wrapped[0]]):.2f} ms "
        "for the first), so the SOP drops it as a non-positive frame time")


def _capture(
    rows: _Rows, layout: _Layout, name: str, process: str | None, first_row: dict[str, str]
) -> Capture:
    """The Capture of the group the rule chooses; `first_row`: the file's first data row
    (_first_data_row), where OCAT writes its system cells."""
    group = None
    left_out: tuple[Group, ...] = ()
    warnings: list[str] = []
    group_warnings: list[str] = []
    if rows.groups:
        group, others, group_warnings = _choose(
            _groups_in_file_order(rows.groups), process, name
        )
        left_out = tuple(others)
        selected = rows.select((group.application, group.process_id, group.swap_chain))
    else:
        selected = rows.select(None)
    values, dropped, failed, types, shown, measured, first, labels, repeated = selected
    missing = np.isnan(values)
    n_missing = int(np.count_nonzero(missing))
    if n_missing:  # the frame columns stay aligned with the frame times
        values = values[~missing]
        types = None if types is None else types[~missing]  # FrameTypeCodes slices alike
        shown = None if shown is None else shown[~missing]
        measured = {column: cells[~missing] for column, cells in measured.items()}
        labels = {column: codes[~missing] for column, codes in labels.items()}
        repeated = None if repeated is None else repeated[~missing]
    values, wrapped, wrap_warning = _unwrapped(values, layout.header[layout.interval_index])
    label = layout.interval
    if layout.interval == FALLBACK_COLUMN:
        label = FALLBACK_LABEL
        warnings.append(FALLBACK_WARNING)
    elif layout.interval == SUM_LABEL:
        warnings.append(SUM_WARNING)
    warnings += group_warnings
    if n_missing:
        warnings.append(f"{n_missing} rows with no interval (NA) are not frame times")
    if wrap_warning:
        warnings.append(wrap_warning)
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
        recorded=_recorded(layout, first_row, first),
        warnings=tuple(warnings),
        frame_types=None if isinstance(types, FrameTypeCodes) else types,
        frame_type_codes=types if isinstance(types, FrameTypeCodes) else None,
        display_change_ms=shown,
        display_change_column=layout.display_name,
        measured=tuple(sorted(measured.items())),
        labels=tuple(sorted(labels.items())),
        cpu_start_repeated=repeated,
        cpu_start_column=layout.cpu_start_name,
        wrapped_intervals=wrapped,
    )
