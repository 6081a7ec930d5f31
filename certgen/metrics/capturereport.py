"""A capture file to its reports: read (the one reader call of certgen), then per run the
figures, the diagnostics, what the capture measured and, when asked, the measurement intervals
(`certgen metrics`, `certgen.api.report_captures`). The record's runs are made of the same
stages in certgen.pipeline; this is the capture alone, with no card.
"""

from __future__ import annotations

import hashlib
import pathlib
from collections.abc import Iterator, Sequence

from certgen.captures.common import Data
from certgen.captures.detect import read_capture, read_capture_file
from certgen.captures.model import Capture
from certgen.errors import CertgenError, IntervalTooCostlyError, NoProcessGroupsError
from certgen.metrics.diagnostics import compute_metrics
from certgen.metrics.framegen import compute_frame_diagnostics, observe_frame_generation
from certgen.metrics.measured import measured_by
from certgen.metrics.pagefigures import checked
from certgen.metrics.uncertainty import (
    figure_intervals,
    interval_seed,
    sustained_stability,
)
from certgen.metrics.validity import declared_warnings
from certgen.model.capturereport import CaptureReport, RefusedCapture
from certgen.model.measured import DisplayTiming
from certgen.model.thresholds import Weights


def read_runs(source: pathlib.Path | Data, *, name: str, format: str | None = None,
              process: str | None = None) -> list[Capture]:
    """The runs of one capture, each checked against the figures its file states
    (pagefigures.checked): a file (mapped, read once) or bytes already read (a bundle's).
    Every part of certgen reads a capture through here."""
    if isinstance(source, pathlib.Path):
        return checked(read_capture_file(source, name=name, format=format, process=process))
    return checked(read_capture(source, name=name, format=format, process=process))


def display_name(name: str, label: str | None) -> str:
    """How one run of a file is named: the file, plus `#label` for multi-run files."""
    return name if label is None else f"{name}#{label}"


def notes(capture: Capture) -> list[str]:
    """Reader warnings plus what the Capture counts (dropped, missing, skipped) as sentences."""
    out = list(capture.warnings)
    if capture.dropped_frames:
        out.append(
            f"{capture.dropped_frames} frames marked dropped by the tool are counted with their "
            "present interval"
        )
    gpu = capture.gpu_summary()
    if gpu is not None:
        joined, median = gpu
        frames = capture.frame_times_ms.size
        out.append(
            f"GPU time (gpu_ms joined to frames by gpu_tick) resolved for {joined} of {frames} "
            "frames" + (f", median {median:.3f} ms" if median is not None else "")
        )
    return out


def file_sha256(path: pathlib.Path) -> str:
    """SHA-256 of a capture file (the interval's seed), read in blocks."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def capture_report(capture: Capture, weights: Weights, *, name: str, note: str | None = None,
                   timing: DisplayTiming | None = None,
                   capture_sha256: str | None = None) -> CaptureReport:
    """One run's report. `note` is one more warning (an option not applied to this file);
    `timing`, the display's refresh, for the refresh-cadence figures and checks that need it;
    `capture_sha256` (the file's, which seeds the bootstrap) asks for the measurement intervals
    and sustained stability. Raises the CertgenError of a capture with nothing to score."""
    capture = capture.with_warnings(declared_warnings(capture, timing))
    figures = compute_metrics(capture.frame_times_ms, weights, source=name)
    group = capture.group.label() if capture.group else None
    interval = stability = None
    if capture_sha256 is not None:
        interval = figure_intervals(capture.frame_times_ms, weights,
                                    seed=interval_seed(capture_sha256, group))
        stability = sustained_stability(capture.frame_times_ms)
    frame_diagnostics = compute_frame_diagnostics(capture, weights)
    return CaptureReport(
        file=name,
        format=capture.format,
        group=group,
        groups_left_out=tuple(g.label() for g in capture.groups_left_out),
        interval_column=capture.interval_column,
        figures=figures,
        incomplete=capture.incomplete,
        incomplete_reason=capture.incomplete_reason,
        warnings=tuple(notes(capture) + ([note] if note else [])),
        # Diagnostics, not graded: null where the capture lacks the column (docs/spec/metrics.md).
        frame_diagnostics=frame_diagnostics,
        # What the tool measured beside the intervals (null: not measured), as record.json's
        # runs[].measured holds it (measured_by sets every key).
        measured=measured_by(capture, timing),
        # Issue 42 (pinned): the frame-generation multiplier the capture shows, or why not.
        frame_generation=(frame_diagnostics.frame_generation_observed
                          or observe_frame_generation(capture.frame_times_ms, None)),
        # Issue 42: known defects of the tool version the capture records, in a column read.
        errata=tuple(capture.errata),
        recorded=capture.recorded,
        # Issue 39: diagnostic columns set aside (their figures read not measured), and why.
        unusable_columns=tuple(capture.unusable_columns),
        interval=interval,
        stability=stability,
    )


def read_all(paths: Sequence[str], format: str | None, process: str | None
             ) -> Iterator[tuple[str, Capture | CertgenError, str | None]]:
    """(argument, Capture or the CertgenError refusing the file, note) per run, in argument
    order, each as soon as it is read.

    `process` applies to the captures that have process groups (the PresentMon family,
    CapFrameX CSV). When some given capture has them, the others are read without it and their
    note says so; when none has, the option would do nothing and the first such capture is
    refused once all are read (a user's option is never silently dropped).
    """

    refused: list[NoProcessGroupsError] = []
    for arg in paths:
        path = pathlib.Path(arg)
        note = None
        try:
            try:
                captures = read_runs(path, name=arg, format=format, process=process)
            except NoProcessGroupsError as exc:
                refused.append(exc)
                note = f"--process {exc.process!r} not applied: {exc.what} has no process groups"
                captures = read_runs(path, name=arg, format=format)
        except CertgenError as exc:
            yield arg, exc, None
            continue
        for capture in captures:
            yield arg, capture, note
    if refused and len(refused) == len(paths):
        raise refused[0]


def report_captures(paths: Sequence[str], weights: Weights, *, format: str | None = None,
                    process: str | None = None, interval: bool = False,
                    timing: DisplayTiming | None = None
                    ) -> list[CaptureReport | RefusedCapture]:
    """One report per run of each capture file, in argument order; a file (or run) refused,
    unreadable or with nothing to score, gives a RefusedCapture in its place and the others
    are measured as usual (see `read_all` for `process`)."""
    out: list[CaptureReport | RefusedCapture] = []
    for arg, capture, note in read_all(paths, format, process):
        if isinstance(capture, CertgenError):
            out.append(RefusedCapture(file=arg, error=str(capture)))
            continue
        name = display_name(arg, capture.label)
        sha = file_sha256(pathlib.Path(arg)) if interval else None
        try:
            out.append(capture_report(capture, weights, name=name, note=note, timing=timing,
                                      capture_sha256=sha))
        except IntervalTooCostlyError as exc:  # a bootstrap over its bound (docs/limits.md)
            out.append(RefusedCapture(file=name, error=f"{name}: {exc}"))
        except CertgenError as exc:
            out.append(RefusedCapture(file=name, error=str(exc)))
    return out
