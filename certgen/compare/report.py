"""The before/after report record: frozen and typed, what the report's documents are rendered from.

certgen.builders.report gathers the captures and computes every part of it: the statistics
(certgen.compare.statistics), the chart series of each side (min and max per bucket, as a certificate's run
chart) and the CSV export. render/report.py reads it and a language, never a capture or a frame.
A pair report compares two captures (`PairReport`), a series report a paired series
(`SeriesReport`); the template reads their fields by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from certgen.compare.statistics import Floor, SeriesFigure, SideSummary
from certgen.model import FrameDiagnostics
from certgen.model.base import LabText
from certgen.model.measured import MeasuredByCapture
from certgen.record import Chart


@dataclass(frozen=True)
class SideRecorded:
    """What the captures of one side record about themselves: their first and last capture
    date (one capture: the same) and every distinct driver, as the tool wrote them."""

    first_captured: str | None
    last_captured: str | None
    drivers: tuple[str, ...]


@dataclass(frozen=True)
class Compared:
    """What the report names at its top: the change, the settings, and every distinct game,
    card and capture date the captures record (first and last date of a series), and each
    side's own dates and drivers."""

    description: LabText | None
    """The change in the lab's words: a plain string is English; a series file may give it per
    language ({en, ru, pt}), and a report in a language it lacks shows another, marked."""
    settings: str | None
    games: tuple[str, ...]
    cards: tuple[str, ...]
    first_captured: str | None
    last_captured: str | None
    before: SideRecorded
    after: SideRecorded
    changed: tuple[str, ...] = ()
    """What the user stated changed between the sides (`compare --changed`: game, resolution,
    api), among what the captures record differently; empty when they record one configuration."""


@dataclass(frozen=True)
class ReportRules:
    """The counting and testing rules a report states (docs/spec/compare.md)."""

    stall_ms: float
    too_short_frames: int
    block_s: float
    min_blocks: int
    min_floor_fps: float
    min_pairs: int
    recommended_pairs: int
    pilot_runs: int
    resamples: int
    seed: int
    focus_regain_s: float
    focus_loss_s: float


@dataclass(frozen=True)
class PairSide(SideSummary):
    """One side of a pair report: its counted figures (SideSummary's, rounded as printed), what
    the capture says it measured, how it was read, and its frame diagnostics."""

    side: Literal["before", "after"] = field(kw_only=True)
    game: str | None = field(kw_only=True)
    card: str | None = field(kw_only=True)
    captured: str | None = field(kw_only=True)
    file: str = field(kw_only=True)
    format: str = field(kw_only=True)
    interval_column: str = field(kw_only=True)
    incomplete_reason: str | None = field(kw_only=True)
    warnings: tuple[str, ...] = field(kw_only=True)
    lost_events: bool = field(kw_only=True)
    frame_diagnostics: FrameDiagnostics = field(kw_only=True)
    """Diagnostic, not graded: generated frames and display changes (null where the capture
    lacks the column)."""
    measured: MeasuredByCapture = field(kw_only=True)
    """Diagnostic, not graded: latency and animation error (null where the capture did not
    measure them)."""


@dataclass(frozen=True)
class FloorRow(Floor):
    """One figure's noise floor (certgen.compare.statistics.Floor), with its difference and floor as
    fractions, as the template prints them."""

    difference: float | None = field(kw_only=True)
    floor: float | None = field(kw_only=True)


@dataclass(frozen=True)
class PairReport:
    """The report of two captures of one configuration."""

    mode: Literal["pair"]
    compared: Compared
    sides: tuple[PairSide, PairSide]
    floors: tuple[FloorRow, ...]
    focus_recorded: bool
    rules: ReportRules
    charts: tuple[Chart, Chart]
    """Each side's frame times for the chart (certgen.compare.statistics.chart_series), before first."""
    csv: str
    """compare.csv: side,kind,name,value."""


@dataclass(frozen=True)
class SeriesPair:
    """One pair of a series, both sides counted."""

    index: int
    before: SideSummary
    after: SideSummary


@dataclass(frozen=True)
class SeriesFigureRow(SeriesFigure):
    """One figure's paired-series test (certgen.compare.statistics.SeriesFigure), with its median,
    interval and smallest effect as fractions, as the template prints them."""

    median: float | None = field(kw_only=True)
    ci_low: float | None = field(kw_only=True)
    ci_high: float | None = field(kw_only=True)
    smallest_effect: float | None = field(kw_only=True)


@dataclass(frozen=True)
class SeriesReport:
    """The report of a paired series (ABBA order recommended) with an optional pilot."""

    mode: Literal["series"]
    compared: Compared
    order: str | None
    series_file: str
    pairs: tuple[SeriesPair, ...]
    pilot_runs: int | None
    figures: tuple[SeriesFigureRow, ...]
    rules: ReportRules
    csv: str
    """compare.csv: one metric block per run, side = pair_NN_before / pair_NN_after."""


ReportRecord = PairReport | SeriesReport
"""Either report's record."""
