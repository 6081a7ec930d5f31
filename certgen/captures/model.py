"""The Capture record every reader returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from certgen.model.capture import CaptureErratum, IncompleteDetail, Recorded, UnusableColumn
from certgen.support.untrusted import escape_invisible


@dataclass(frozen=True)
class Group:
    """One (Application, ProcessID, SwapChainAddress) group of a PresentMon-family file."""

    application: str
    process_id: str
    swap_chain: str
    frames: int

    def label(self) -> str:
        """How messages name the group; an empty Application shows as `(no name)`."""
        # Escaped: a process name is untrusted text (bidi overrides reorder what is printed).
        shown = escape_invisible(self.application) or "(no name)"
        return f"{shown} (pid {self.process_id}, swap chain {self.swap_chain})"


_Scalar = TypeVar("_Scalar", bound=np.generic)


def _frozen(values: npt.ArrayLike, dtype: type[_Scalar]) -> npt.NDArray[_Scalar]:
    """`values` as a read-only array of `dtype` that nothing else can change: an array that
    owns its data is frozen in place (a reader's fresh column: no copy of a million values),
    anything else (a list, a view, another dtype) is copied first."""
    arr = np.asarray(values, dtype=dtype)
    if arr is values and not arr.flags.owndata:  # a view: what it views could still change
        arr = arr.copy()
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class FrameTypeCodes:
    """Frame types as codes into a table of names (a reader's compact form of
    Capture.frame_types): 2 bytes a frame, and counted in C, where a million Python strings
    take tens of milliseconds to count."""

    names: tuple[str | None, ...]
    """The table: each type as written (None for a frame with no type)."""
    codes: npt.NDArray[np.int16]
    """Per frame, its type's index in `names`."""

    def __getitem__(self, rows: npt.NDArray[np.bool_] | npt.NDArray[np.intp]) -> FrameTypeCodes:
        """The same table over the frames `rows` selects (a mask or indices)."""
        return FrameTypeCodes(self.names, self.codes[rows])

    def names_of(self) -> npt.NDArray[np.object_]:
        """Per frame, its type (Capture.frame_types)."""
        types: npt.NDArray[np.object_] = np.array(self.names, dtype=object)[self.codes]
        return types

    @classmethod
    def of(cls, cells: list[str | None]) -> FrameTypeCodes:
        """Names per frame (None: no value) as codes into a sorted table (None first)."""
        table: tuple[str | None, ...] = (None, *sorted({c for c in cells if c is not None}))
        index = {name: i for i, name in enumerate(table)}
        return cls(table, np.fromiter((index[c] for c in cells), dtype=np.int16, count=len(cells)))

    def counts(self) -> dict[str | None, int]:
        """Frames per type (types written alike in the table are one type)."""
        tally = np.bincount(self.codes, minlength=len(self.names))
        out: dict[str | None, int] = {}
        for name, n in zip(self.names, tally.tolist()):
            if n:
                out[name] = out.get(name, 0) + n
        return out

    def of_type(self, name: str) -> npt.NDArray[np.bool_]:
        """Per frame, whether its type is `name`."""
        wanted = [i for i, n in enumerate(self.names) if n == name]
        return np.isin(self.codes, wanted)


@dataclass(frozen=True)
class Capture:
    """Frame times of one run, as read from one capture file.

    `frame_times_ms` holds every finite interval the file gave for the chosen group, in file
    order, read-only; values <= 0 are still in it (metrics drops and counts them, SOP 4.2).
    """

    frame_times_ms: npt.NDArray[np.float64]
    source: str
    """The file as named by the user or the bundle (never an absolute path of this machine)."""
    format: str
    """Reader id, e.g. presentmon, ocat, frameview, capframex-json, mangohud, frame-stats."""
    interval_column: str
    """Which quantity was read, e.g. MsBetweenPresents; FrameTime is a labelled fallback."""
    group: Group | None = None
    groups_left_out: tuple[Group, ...] = ()
    dropped_frames: int = 0
    """Frames the tool marked as dropped (Dropped=1): kept, with their interval, and counted."""
    failed_presents: int = 0
    """Frames FrameView marked `Dropped=Error` (the present failed): kept, with their interval,
    and counted apart from dropped ones."""
    missing_intervals: int = 0
    """Rows whose interval was NA / null (e.g. a group's first present): not a frame time."""
    skipped_frames: int = 0
    """Frames a reader skipped by its format's rule (frame-stats warm-up), reported."""
    incomplete: bool = False
    incomplete_reason: str | None = None
    """Why the capture is incomplete, in English ("; " between reasons), or None."""
    incomplete_detail: tuple[IncompleteDetail, ...] = ()
    """The same reasons as data, in the same order (empty when complete)."""
    recorded: Recorded = field(default_factory=Recorded)
    """What the file itself records about the system and the capture (GPU, driver, OS, …, each
    as written, or None): never a figure, and never read from card.yaml."""
    warnings: tuple[str, ...] = ()
    run_index: int | None = None
    """For files holding several runs (CapFrameX JSON): which run this is, from 0."""
    label: str | None = None
    """How that run is named in messages, e.g. "run 2" or a benchmark CSV's side "before"."""
    idle_frames: int = 0
    """Frame-stats `idle` frames (the last image presented again): kept, and reported apart."""
    gpu_ms: npt.NDArray[np.float64] | None = None
    """Beside each frame time, that frame's GPU time in ms (frame-stats, joined by gpu_tick),
    NaN where none was written for its tick; None for formats that carry no GPU time."""
    frame_types: npt.NDArray[np.object_] | None = None
    """Beside each frame time, the frame's type as the tool wrote it (PresentMon 2.x
    `FrameType`: "Application", or the generator's name such as "AMD AFMF"), None where a
    cell was NA; None (the whole array) when the capture has no FrameType column. A
    diagnostic only (certgen.metrics.framegen): the SOP figures never look at it."""
    frame_type_codes: FrameTypeCodes | None = None
    """The frame types as codes into a table, when a reader has them so: `frame_types` is then
    made from them (give one or the other), and certgen.metrics.framegen counts the codes."""
    display_change_ms: npt.NDArray[np.float64] | None = None
    """Beside each frame time, the tool's display-change interval in ms (`MsBetweenDisplayChange`
    / `msBetweenDisplayChange`), NaN where the cell was NA (0 stays 0: not displayed in 1.x);
    None when the capture has no such column. A diagnostic only (certgen.metrics.framegen)."""
    display_change_column: str | None = None
    """Which column `display_change_ms` was read from, or None."""
    measured: tuple[tuple[str, npt.NDArray[np.float64]], ...] = ()
    """Per-frame figures the tool measured beside the intervals, by column (sorted), each array
    beside the frame times, NaN where the cell was NA or the frame was not displayed: PresentMon
    2.x / FrameView latency columns and MsAnimationError. Only columns the file has; a
    diagnostic only (certgen.metrics.measured), never read by the SOP figures."""
    labels: tuple[tuple[str, FrameTypeCodes], ...] = ()
    """Per-frame text the tool wrote beside the intervals, by column (sorted), as codes into a
    table (None: `NA` or empty): PresentMon's PresentMode and AllowsTearing. Only columns the
    file has; read by the capture-validity checks (certgen.metrics.validity), never by the figures."""
    cpu_start_repeated: npt.NDArray[np.bool_] | None = None
    """Beside each frame time, whether the frame's CPU start (PresentMon 2.x CPUStartQPC, …)
    repeats the previous frame's, as written; None without such a column (validity checks)."""
    cpu_start_column: str | None = None
    """Which column `cpu_start_repeated` compares, or None."""
    wrapped_intervals: int = 0
    """Intervals the tool wrote as an unsigned wrap-around (FrameView, about 2⁶⁴ × 100 ns),
    read as the negative interval they wrap (so the SOP drops them), and warned about."""
    unusable_columns: tuple[UnusableColumn, ...] = ()
    """Diagnostic columns set aside because some of their values are ones the column cannot
    hold (certgen.captures.detect.set_aside): the column is gone from `measured` (or
    `display_change_ms`), so its figures read "not measured", and this says how many frames
    and why. The intervals, and so the SOP figures, are never touched."""
    stated_figures: tuple[tuple[str, float | None], ...] = ()
    """Summary figures the file itself states for this run, by name (sorted), None for an empty
    value: a benchmark-page CSV's `kind=metric` rows. A claim, never used as a figure: reading
    the capture checks it against the frame times (certgen.metrics.pagefigures) and warns."""
    errata: tuple[CaptureErratum, ...] = ()
    """Known defects of the tool version the capture records in a column certgen read from it
    (certgen.captures.errata, matched as the capture is read)."""

    def with_errata(self, errata: tuple[CaptureErratum, ...]) -> Capture:
        """This capture with its errata findings."""
        types = None if self.frame_type_codes is not None else self.frame_types
        return dataclasses.replace(self, errata=errata, frame_types=types)

    def with_warnings(self, extra: tuple[str, ...]) -> Capture:
        """This capture with `extra` warnings after its own (a check made after the reader)."""
        if not extra:
            return self
        # frame_types is made from frame_type_codes when there are codes (give one, not both).
        types = None if self.frame_type_codes is not None else self.frame_types
        return dataclasses.replace(self, warnings=self.warnings + extra, frame_types=types)

    def measured_column(self, *names: str) -> tuple[str, npt.NDArray[np.float64]] | None:
        """(column, per-frame values; NaN: none) of the first of `names` the capture measured
        (one quantity's names in several layouts), or None without any."""
        held = dict(self.measured)
        return next(((name, held[name]) for name in names if name in held), None)

    def label_column(self, name: str) -> FrameTypeCodes | None:
        """The per-frame text of column `name` as codes, or None without the column."""
        return dict(self.labels).get(name)

    def gpu_summary(self) -> tuple[int, float | None] | None:
        """(frames with a GPU time, their median GPU time in ms or None), or None without GPU data."""
        if self.gpu_ms is None:
            return None
        known = self.gpu_ms[~np.isnan(self.gpu_ms)]
        return int(known.size), (float(np.median(known)) if known.size else None)

    def __post_init__(self) -> None:
        arr = np.asarray(self.frame_times_ms, dtype=np.float64)
        if arr.flags.writeable:
            arr = arr.copy() if arr is self.frame_times_ms and arr.base is not None else arr
            arr.flags.writeable = False
        object.__setattr__(self, "frame_times_ms", arr)
        if self.gpu_ms is not None:
            gpu = _frozen(self.gpu_ms, np.float64)
            if gpu.shape != arr.shape:
                raise ValueError(f"gpu_ms has {gpu.size} values for {arr.size} frame times")
            object.__setattr__(self, "gpu_ms", gpu)
        if self.frame_type_codes is not None:
            if self.frame_types is not None:
                raise ValueError("give frame_types or frame_type_codes, not both")
            object.__setattr__(self, "frame_types", self.frame_type_codes.names_of())
        if self.frame_types is not None:
            types = _frozen(self.frame_types, np.object_)
            if types.shape != arr.shape:
                raise ValueError(f"frame_types has {types.size} values for {arr.size} frame times")
            object.__setattr__(self, "frame_types", types)
        if self.frame_type_codes is not None:
            self.frame_type_codes.codes.flags.writeable = False
        frozen_measured = []
        for column, values in self.measured:
            cells = _frozen(values, np.float64)
            if cells.shape != arr.shape:
                raise ValueError(f"{column} has {cells.size} values for {arr.size} frame times")
            frozen_measured.append((column, cells))
        object.__setattr__(self, "measured", tuple(frozen_measured))
        for column, codes in self.labels:
            codes.codes.flags.writeable = False
            if codes.codes.shape != arr.shape:
                raise ValueError(f"{column} has {codes.codes.size} values for {arr.size} frame times")
        if self.cpu_start_repeated is not None:
            repeated = _frozen(self.cpu_start_repeated, np.bool_)
            if repeated.shape != arr.shape:
                raise ValueError(f"cpu_start_repeated has {repeated.size} values for {arr.size} "
                                 "frame times")
            object.__setattr__(self, "cpu_start_repeated", repeated)
        if self.display_change_ms is not None:
            shown = _frozen(self.display_change_ms, np.float64)
            if shown.shape != arr.shape:
                raise ValueError(
                    f"display_change_ms has {shown.size} values for {arr.size} frame times")
            object.__setattr__(self, "display_change_ms", shown)
