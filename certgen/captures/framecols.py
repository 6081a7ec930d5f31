"""Frame type and display-change interval of a PresentMon-family file: optional columns.

A step of its own, run after the reader has chosen the group and read its frame times
(certgen.captures.presentmon.read_presentmon): it reads only the key columns, the interval
column and these two, and attaches them to the Capture, aligned with its frame times. The
frame times themselves are never touched, so the SOP figures cannot change.

- `FrameType` (PresentMon 2.x with --track_frame_type): "Application" for a frame the game
  rendered, the generator's name for a generated one ("AMD_AFMF" in early 2.x, "AMD AFMF" and
  "Intel XeSS-FG" later; "Unknown" for a type the tool cannot name). Kept as written; `NA`
  (or an empty cell) is None.
- `MsBetweenDisplayChange` (PresentMon 1.0-1.6, 2.x, OCAT, FrameView, CapFrameX CSV) or
  `msBetweenDisplayChange` (1.7-1.9): how long the previous displayed frame stayed on screen
  before this one replaced it. `NA` is NaN (a null); 0 stays 0 (1.x writes 0 for a frame never
  displayed); certgen.framegen decides what counts.

Rows line up with the frame times as the reader keeps them: the chosen group's rows in file
order, without the rows whose interval is NA. The fast path (polars) proves it by reading the
interval column again and comparing it with the Capture's frame times, bit for bit; any doubt
(a parse problem, a difference) sends the file to the csv module, which names the line of a
cell that is no number.
"""

from __future__ import annotations

import csv
import dataclasses
import io

import numpy as np

from certgen.captures.common import decode, parse_number
from certgen.captures.model import Capture

FRAME_TYPE_COLUMN = "FrameType"
DISPLAY_COLUMNS = ("MsBetweenDisplayChange", "msBetweenDisplayChange")
NA = "NA"


@dataclasses.dataclass(frozen=True)
class _Columns:
    """Where the columns are (indices into the header)."""

    keys: tuple[int, ...] | None
    interval: int
    frame_type: int | None
    display: int | None
    display_name: str | None
    header_line: int


def with_frame_columns(
    capture: Capture,
    data: bytes,
    *,
    header: list[str],
    header_line: int,
    keys: tuple[int, ...] | None,
    interval_index: int,
    single_interval: bool,
    name: str,
) -> Capture:
    """`capture` with frame_types / display_change_ms set where the file has the columns.

    `single_interval` is False when the frame time is the sum of two cells (PresentMon 2.0.0,
    which writes neither optional column); such a capture is returned unchanged.
    """
    frame_type = header.index(FRAME_TYPE_COLUMN) if FRAME_TYPE_COLUMN in header else None
    display_name = next((c for c in DISPLAY_COLUMNS if c in header), None)
    if (frame_type is None and display_name is None) or not single_interval:
        return capture
    cols = _Columns(
        keys=keys, interval=interval_index, frame_type=frame_type,
        display=None if display_name is None else header.index(display_name),
        display_name=display_name, header_line=header_line,
    )
    wanted = _group_key(capture)
    found = _fast(data, cols, wanted, capture.frame_times_ms)
    if found is None:
        found = _exact(data, cols, wanted, name)
    types, shown = found
    return dataclasses.replace(
        capture,
        frame_types=types,
        display_change_ms=shown,
        display_change_column=display_name,
    )


def _group_key(capture: Capture) -> tuple[str, str, str] | None:
    g = capture.group
    return None if g is None else (g.application, g.process_id, g.swap_chain)


_Found = tuple[np.ndarray | None, np.ndarray | None]


def _fast(data: bytes, cols: _Columns, wanted: tuple[str, str, str] | None,
          frame_times: np.ndarray) -> _Found | None:
    """Through polars, or None when the csv module must read the file."""
    import polars as pl

    indices = sorted({cols.interval, *(cols.keys or ()),
                      *(i for i in (cols.frame_type, cols.display) if i is not None)})
    try:
        df = pl.read_csv(
            data, has_header=False, skip_lines=cols.header_line, columns=indices,
            infer_schema=False, truncate_ragged_lines=True, raise_if_empty=False,
            encoding="utf8",
        )
    except Exception:  # any parse problem: the csv module reads it
        return None
    names = dict(zip(indices, df.columns))

    def text(i: int) -> pl.Expr:
        return pl.col(names[i]).str.strip_chars()

    keep = text(cols.interval) != NA
    if cols.keys and wanted is not None:
        for i, value in zip(cols.keys, wanted):
            keep = keep & (text(i) == value)
    try:
        rows = df.filter(keep)
        intervals = rows.select(text(cols.interval).cast(pl.Float64, strict=False))[:, 0]
    except Exception:
        return None
    if intervals.has_nulls():
        return None
    values = intervals.to_numpy()
    if values.shape != frame_times.shape or not np.array_equal(values, frame_times):
        return None  # not provably the reader's rows: the csv module decides
    types = None
    if cols.frame_type is not None:
        cells = rows.select(text(cols.frame_type))[:, 0]
        types = np.array([None if c is None or c in ("", NA) else c for c in cells.to_list()],
                         dtype=object)
    shown = None
    if cols.display is not None:
        cells = rows.select(text(cols.display))[:, 0]
        missing = int((cells.is_null() | (cells == NA) | (cells == "")).sum())
        numbers = cells.replace(NA, None).cast(pl.Float64, strict=False)
        if cells.has_nulls() or numbers.null_count() != missing:
            return None  # an empty or non-numeric cell: the csv module names its line
        if numbers.is_nan().any() or numbers.is_infinite().any():
            return None
        shown = numbers.fill_null(float("nan")).to_numpy()
    return types, shown


def _exact(data: bytes, cols: _Columns, wanted: tuple[str, str, str] | None,
           name: str) -> _Found:
    """Through the csv module, row by row, as the reader's exact path reads the file."""
    lines = io.StringIO(decode(data, name), newline="")
    for _ in range(cols.header_line):
        lines.readline()
    reader = csv.reader(lines)
    types: list[str | None] = []
    shown: list[float] = []
    for row in reader:
        line = cols.header_line + reader.line_num
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if cols.keys and wanted is not None:
            if tuple(row[i].strip() for i in cols.keys) != wanted:
                continue
        if row[cols.interval].strip() == NA:
            continue
        if cols.frame_type is not None:
            cell = row[cols.frame_type].strip() if cols.frame_type < len(row) else ""
            types.append(None if cell in ("", NA) else cell)
        if cols.display is not None and cols.display_name is not None:
            token = row[cols.display] if cols.display < len(row) else NA
            shown.append(float("nan") if token.strip() == NA else parse_number(
                token, name=name, line=line, field=cols.display_name))
    return (None if cols.frame_type is None else np.array(types, dtype=object),
            None if cols.display is None else np.asarray(shown, dtype=np.float64))
