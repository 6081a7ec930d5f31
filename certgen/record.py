"""The certificate record: frozen, typed models in, deterministic JSON out, and back.

record.json is the single source every document reads; `Record` is its typed form (one frozen,
strict pydantic model per object of docs/record.md, fields in the key order of record.json).
`build_record` assembles it complete from the loaded bundle, the computed runs and the verdict;
`dump_record` writes it byte-for-byte the same for the same inputs (schema_version first, fixed
key order, sorted listings, UTF-8 text, 2-space indent, newline at the end); `load_record` reads
it back, validating every field. `python -m certgen.record --docs` regenerates the field
reference of docs/record.md, `--schema` prints the JSON Schema (docs/record.schema.json).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, ClassVar, Final, Literal, Union, get_args, get_origin

import numpy as np
import numpy.typing as npt
from pydantic import (
    BaseModel,
    Field,
    JsonValue,
    ValidationError,
)
from pydantic_core import ErrorDetails

from certgen import __version__
from certgen.errors import RecordError
from certgen.metrics.figures import round_half_away
from certgen.model.base import (
    Frozen,
    LabText,
    WithLaterKeys,
    lab_text,
)
from certgen.model.capture import (
    CaptureInfo,
    Recorded,
)
from certgen.model.card import CardInfo, CertificateInfo, Phase1, RunConditions, TestSystem
from certgen.model.cohort import Cohort, FleetSection, FrameGenerationMode, Ranks
from certgen.model.figures import (
    FrameDiagnostics,
    RunMetrics,
)
from certgen.model.issuer import Issuer
from certgen.model.measured import MeasuredByCapture
from certgen.model.software import Software
from certgen.model.thresholds import Calibration, CalibrationStatement, RulesBlock, Weights
from certgen.model.uncertainty import FigureIntervals, RepeatCapture, Uncertainty
from certgen.model.verdict import (
    Grade,
    SoftLimit,
    Status,
    Tier,
    WhyDetail,
)
from certgen.rules.uncertainty import uncertainty_of
from certgen.rules.verdict import (
    FirstCaptureCheck,
    SoftLimitCheck,
    Verdict,
)
from certgen.sop import Rules
from certgen.support.jsonload import loads
from certgen.support.software import current_software

SCHEMA_VERSION: Final = 1
CHART_BUCKETS: Final = 400
"""At most this many [t_start_ms, min_ms, max_ms] buckets per run chart."""


# --------------------------------------------------------------------------------------------
# The models (docs/record.md): one per object of record.json, fields in its key order
# --------------------------------------------------------------------------------------------


class FirstCapture(WithLaterKeys):
    """`runs[].first_capture`: the archived first capture declared in card.yaml."""

    file: str = Field(description="Path inside the bundle.")
    sha256_declared: str | None = Field(description="SHA-256 cited in card.yaml.")
    sha256_actual: str | None = Field(description="SHA-256 recomputed from the file.")
    matches: bool | None = Field(description="Whether the two agree.")
    required: bool = Field(description="The run was incomplete or over the re-run line.")
    why: str | None = Field(description='English reason, e.g. "stutter 0.6110 > 0.60"; null '
                                        "when not required.")
    why_detail: WhyDetail | None = Field(
        default=None, description="The same reason as data; null when not required (absent in "
                                  "records of an older certgen).")
    metrics: RunMetrics | None = Field(
        default=None, description="The first capture's own figures, scored like a recorded "
                                  "capture (absent in records of an older certgen).")
    rerun_reason: WhyDetail | None = Field(
        default=None, description="Why it was re-run, from its own figures; null when they show "
                                  "no reason (absent in records of an older certgen).")
    recorded: Recorded | None = Field(
        default=None, description="What the first capture itself records about the system and "
                                  "the capture, each value as the file wrote it (absent in "
                                  "records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("why_detail", "metrics", "rerun_reason", "recorded")


Bucket = tuple[float, float, float]


class Chart(WithLaterKeys):
    """`runs[].chart`: frame times downsampled for the chart."""

    duration_ms: float = Field(description="Capture duration, ms.")
    buckets: tuple[Bucket, ...] = Field(
        description="[start ms, min ms, max ms] of at most 400 equal-time buckets; a frame sits "
                    "in the bucket it starts in; empty buckets left out; 3 dp.")
    low_1pct_ms: float | None = Field(description="1000 / 1% low FPS, 3 dp (null if no low).")
    low_0_1pct_ms: float | None = Field(description="1000 / 0.1% low FPS, 3 dp (null if no low).")
    mean_ms: float | None = Field(
        default=None, description="1000 / average FPS (the mean frame time), 3 dp (null if no "
                                  "frames; absent in records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("mean_ms",)

RunStatus = Literal["recorded", "not_run"]


class Run(WithLaterKeys):
    """`runs[]`: one run in card.yaml order. For a not_run run, capture, metrics, ranks,
    soft_limit, first_capture and chart are null."""

    index: int = Field(description="0-based position in card.yaml.")
    title: str = Field(description="Game title.")
    resolution: str = Field(description="Output resolution.")
    preset: str = Field(description="Quality preset.")
    ray_tracing: bool = Field(description="Ray tracing on.")
    upscaler: str = Field(description='Upscaler, "none" for native rendering.')
    upscaler_mode: str | None = Field(description="Upscaler mode, or null.")
    frame_generation: bool = Field(description="Frame generation on.")
    frame_generation_mode: FrameGenerationMode | None = Field(
        default=None, description='The declared frame-generation mode: "off", "2x", "3x", '
                                  '"4x", "6x" or "dynamic"; null when frame generation is on '
                                  "and the mode was not stated (absent in records of an older "
                                  "certgen: read as off, or on with the mode not stated).")
    cohort: str = Field(description="The cohort key as one line.")
    status: RunStatus = Field(description="recorded | not_run.")
    not_run_reason: LabText | None = Field(
        description="The card.yaml reason for a not_run run (per language or a string).")
    capture: CaptureInfo | None = Field(description="The capture.")
    metrics: RunMetrics | None = Field(description="The figures.")
    ranks: Ranks | None = Field(description="Ranks in the cohort (provisional below the minimum; "
                                            "without a fleet n = 1).")
    soft_limit: SoftLimit | None = Field(description="The Soft Limit check.")
    first_capture: FirstCapture | None = Field(description="The archived first capture, or null.")
    chart: Chart | None = Field(description="The chart series.")
    conditions: RunConditions | None = Field(
        default=None, description="How the run was made (absent in records of an older certgen).")
    frame_diagnostics: FrameDiagnostics | None = Field(
        default=None, description="Frame generation and display timing of the capture, "
                                  "diagnostic and not graded; null for a not_run run (absent in "
                                  "records of an older certgen).")
    recorded: Recorded | None = Field(
        default=None, description="What the capture itself records about the system and the "
                                  "capture, each value as the file wrote it or null where its "
                                  "format does not record it (the keys of `metrics --json`'s "
                                  "`recorded`); null for a not_run run (absent in records of an "
                                  "older certgen).")
    provenance_note: LabText | None = Field(
        default=None, description="card.yaml's explanation of a difference between what the "
                                  "capture recorded and what card.yaml declares (per language or "
                                  "a string), or null (absent in records of an older certgen).")
    measured: MeasuredByCapture | None = Field(
        default=None, description="What the capture measured beside its present intervals "
                                  "(latency, animation error; docs/spec/metrics.md), diagnostic "
                                  "and not graded; null for a not_run run (absent in records of "
                                  "an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("conditions", "frame_diagnostics", "recorded",
                                             "provenance_note", "measured",
                                             "frame_generation_mode")


class AuditCapture(Frozen):
    """`audit.captures[]`: every recorded run's capture."""

    run: int = Field(description="0-based run index.")
    file: str = Field(description="Path inside the bundle.")
    sha256: str = Field(description="SHA-256 of the file.")


class AuditFirstCapture(WithLaterKeys):
    """`audit.first_captures[]`: every declared archived first capture."""

    run: int = Field(description="0-based run index.")
    file: str = Field(description="Path inside the bundle.")
    sha256: str | None = Field(description="SHA-256 recomputed from the file.")
    sha256_declared: str | None = Field(description="SHA-256 cited in card.yaml.")
    matches: bool | None = Field(description="Whether the two agree.")
    required: bool = Field(description="Whether a re-run was required.")
    why: str | None = Field(description="English reason, or null.")
    why_detail: WhyDetail | None = Field(
        default=None, description="The same reason as data, or null (absent in records of an "
                                  "older certgen).")
    metrics: RunMetrics | None = Field(
        default=None, description="The first capture's own figures (absent in records of an "
                                  "older certgen).")
    rerun_reason: WhyDetail | None = Field(
        default=None, description="Why it was re-run, from its own figures, or null (absent in "
                                  "records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("why_detail", "metrics", "rerun_reason")


class AuditSoftLimit(Frozen):
    """`audit.soft_limit[]`: every raised Soft Limit."""

    run: int = Field(description="0-based run index.")
    stutter: float | None = Field(description="The run's stutter.")
    justification: LabText | None = Field(
        description="The justification (per language or a string), or null.")
    vrm_reexamination: LabText | None = Field(
        description="The VRM re-examination (per language or a string), or null.")
    satisfied: bool = Field(description="Both are given.")


class AuditNotRun(Frozen):
    """`audit.not_run[]`: every run declared not_run."""

    run: int = Field(description="0-based run index.")
    reason: LabText | None = Field(description="The card.yaml reason (per language or a string).")


class Audit(Frozen):
    """`audit`: the audit trail (lists by run index)."""

    captures: tuple[AuditCapture, ...] = Field(description="Every recorded run's capture.")
    first_captures: tuple[AuditFirstCapture, ...] = Field(description="Archived first captures.")
    soft_limit: tuple[AuditSoftLimit, ...] = Field(description="Raised Soft Limits only.")
    not_run: tuple[AuditNotRun, ...] = Field(description="Runs not performed.")
    rules_version: str = Field(description="The rules file version.")
    certgen_version: str = Field(description="The certgen that wrote the record.")


class Record(Frozen):
    """The certificate record: record.json is its serialisation (`dump_record`)."""

    schema_version: Literal[1] = Field(description="The record schema version (first key).")
    certificate: CertificateInfo = Field(description="Which certificate this is.")
    issuer: Issuer | None = Field(
        default=None, description="The issuing laboratory and the validity; null when built "
                                  "without a lab profile (a draft, `certgen check`) and in "
                                  "records of an older certgen.")
    rules_version: str = Field(description="The rules file version (pinned).")
    certgen_version: str = Field(description="The certgen that built the record.")
    software: Software | None = Field(
        default=None, description="The software stack that built it (absent in records of an "
                                  "older certgen; additive, so schema_version stays 1).")
    rules: RulesBlock = Field(description="The thresholds that were applied.")
    status: Status = Field(description="Issuable or not, and why.")
    customer: str = Field(description="The customer.")
    card: CardInfo = Field(description="The certified card.")
    phase1: Phase1 = Field(description="SOP Phase 1 outcomes.")
    test_system: TestSystem | None = Field(
        default=None, description="The test bench (absent in records of an older certgen; null "
                                  "when card.yaml does not describe it).")
    grade: Grade = Field(description="The grade and its reasoning.")
    tiers: tuple[Tier, ...] = Field(description="Resolution tiers, by pixel count then text.")
    runs: tuple[Run, ...] = Field(description="Runs in card.yaml order.")
    audit: Audit = Field(description="The audit trail.")
    fleet: FleetSection = Field(description="The fleet comparison.")
    calibration: Calibration = Field(description="The calibration status.")
    uncertainty: Uncertainty | None = Field(
        default=None, description="The decision rule, each gate's margin and how sure the grade "
                                  "is from repeated captures (docs/spec/uncertainty.md; absent "
                                  "in records of an older certgen).")


# --------------------------------------------------------------------------------------------
# Chart series
# --------------------------------------------------------------------------------------------


def _r3(value: float) -> float:
    return round_half_away(float(value), 3)


def min_max_buckets(
    frames: npt.NDArray[np.float64],
    starts_ms: npt.NDArray[np.float64],
    duration_ms: float,
    max_buckets: int = CHART_BUCKETS,
) -> list[list[float]]:
    """[[bucket start ms, min ms, max ms], ...] over equal-time buckets (at most one a frame).

    Each frame falls in the bucket where it starts (`starts_ms`, in time order); a bucket keeps
    its shortest and longest frame, so a single spike survives. Buckets no frame starts in are
    left out. Every chart (certificates, before/after reports) is drawn from this.
    """
    if frames.size == 0 or duration_ms <= 0.0:
        return []
    count = min(max_buckets, int(frames.size))
    width = duration_ms / count
    index = np.minimum((starts_ms / width).astype(np.int64), count - 1)
    # Frames are in time order, so each bucket is a contiguous slice starting at `first`.
    first = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    mins = np.minimum.reduceat(frames, first)
    maxs = np.maximum.reduceat(frames, first)
    return [
        [_r3(int(b) * width), _r3(lo), _r3(hi)]
        for b, lo, hi in zip(index[first].tolist(), mins.tolist(), maxs.tolist(), strict=True)
    ]


def frame_ms(fps: float | None) -> float | None:
    """An FPS figure as the chart draws it: the frame time 1000 / FPS, 3 dp (None: no figure)."""
    return None if not fps else _r3(1000.0 / fps)


def chart_series(
    frame_times_ms: npt.NDArray[np.float64],
    low_1pct_fps: float | None,
    low_0_1pct_fps: float | None,
    *,
    avg_fps: float | None = None,
    ends_ms: npt.NDArray[np.float64] | None = None,
    max_buckets: int = CHART_BUCKETS,
) -> Chart:
    """Frame times downsampled for a chart: equal-time buckets with their min and max.

    Each frame falls in the bucket where it starts; a bucket keeps its shortest and longest
    frame, so a single spike survives the downsampling. Buckets no frame starts in (inside a
    long stall) are left out. The average FPS and the 1% and 0.1% lows are given as frame
    times (1000 / FPS): the mean line and the low lines show the run's own figures.
    A frame ends at the running sum of the frame times, unless `ends_ms` gives each frame's end
    on the capture's own clock (a before/after report, where excluded frames leave their gap);
    then the frames are used as given.
    """
    frames = np.asarray(frame_times_ms, dtype=np.float64)
    if ends_ms is None:
        frames = frames[frames > 0.0]
    low1, low01, mean = frame_ms(low_1pct_fps), frame_ms(low_0_1pct_fps), frame_ms(avg_fps)
    if frames.size == 0:
        return Chart(duration_ms=0.0, buckets=(), low_1pct_ms=low1, low_0_1pct_ms=low01,
                     mean_ms=mean)
    ends = np.cumsum(frames) if ends_ms is None else np.asarray(ends_ms, dtype=np.float64)
    duration = float(ends[-1])
    buckets = min_max_buckets(frames, ends - frames, duration, max_buckets)
    return Chart(
        duration_ms=_r3(duration),
        buckets=tuple((start, lo, hi) for start, lo, hi in buckets),
        low_1pct_ms=low1,
        low_0_1pct_ms=low01,
        mean_ms=mean,
    )


# --------------------------------------------------------------------------------------------
# Building the record
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunInput:
    """One run as the pipeline computed it (everything the record prints about it)."""

    index: int
    config: Cohort
    """The run's cohort fields, as card.yaml states them."""
    not_run_reason: LabText | None = None
    capture: CaptureInfo | None = None
    """None for a not_run run."""
    metrics: RunMetrics | None = None
    ranks: Ranks | None = None
    chart: Chart | None = None
    first_capture_metrics: RunMetrics | None = None
    """The archived first capture's figures, scored like a recorded capture (or None)."""
    conditions: RunConditions | None = None
    """How the run was made, as card.yaml states it."""
    frame_diagnostics: FrameDiagnostics | None = None
    """Frame generation and display timing (None for a not_run run)."""
    recorded: Recorded | None = None
    """What the capture itself records (None for a not_run run)."""
    first_capture_recorded: Recorded | None = None
    """What the archived first capture itself records (None without one)."""
    provenance_note: LabText | None = None
    """card.yaml's explanation of a recorded/declared difference, or None."""
    measured: MeasuredByCapture | None = None
    """Latency and animation error the capture measured (None for a not_run run)."""
    repeats: tuple[RepeatCapture, ...] = ()
    """Further captures of the run's configuration (card.yaml `runs[].repeats`), measured."""
    within: tuple[FigureIntervals, float | None] | None = None
    """The capture's within-capture intervals and score standard error (None: not run)."""


def rules_block(rules: Rules) -> RulesBlock:
    """The `rules` block: the thresholds that were applied."""
    return RulesBlock(
        sop=rules.sop,
        weights=Weights(consistency_gap=rules.weight_gap, stutter=rules.weight_stutter),
        gold_line=rules.gold_line,
        platinum_line=rules.platinum_line,
        soft_limit_stutter=rules.soft_limit_stutter,
        rerun_stutter=rules.rerun_stutter,
        ranking_min_cohort=rules.ranking_min_cohort,
        calibrated=rules.calibrated,
        calibration_fleet_target=rules.calibration_fleet_target,
        file=rules.file or None,
        sha256=rules.sha256 or None,
    )


def _soft_limit(check: SoftLimitCheck) -> SoftLimit:
    return SoftLimit(
        raised=check.raised, limit=check.limit, justification=lab_text(check.justification),
        vrm_reexamination=lab_text(check.vrm_reexamination), satisfied=check.satisfied,
    )


def _first_capture(check: FirstCaptureCheck, file: str, metrics: RunMetrics | None,
                   recorded: Recorded | None) -> FirstCapture:
    return FirstCapture(
        file=file, sha256_declared=check.sha256_declared, sha256_actual=check.sha256_actual,
        matches=check.matches, required=check.required, why=check.why, why_detail=check.why_detail,
        metrics=metrics, rerun_reason=check.rerun_reason, recorded=recorded,
    )


def fleet_section(runs: Iterable[Run], *, fleet_runs: int | None = None) -> FleetSection:
    """The certificate's fleet section from its record runs (docs/spec/rules.md, Certificate means).

    mean_consistency_gap / mean_stutter: means over the recorded runs with a value (4 decimals);
    median_percentile: median of the published per-run fluidity_score percentiles (1 decimal),
    null when none is published; cohort_mean: always null (runs of different cohorts are not
    pooled, the document prints "—"); ranked_runs / provisional_runs: runs whose fluidity_score
    rank is published / provisional; fleet_runs: the fleet's runs in these cohorts, when known.
    """
    gaps: list[float] = []
    stutters: list[float] = []
    percentiles: list[float] = []
    ranked = provisional = 0
    for run in runs:
        if run.status != "recorded":
            continue
        metrics = run.metrics
        if metrics is not None and metrics.consistency_gap is not None:
            gaps.append(metrics.consistency_gap)
        if metrics is not None and metrics.stutter is not None:
            stutters.append(metrics.stutter)
        rank = None if run.ranks is None else run.ranks.fluidity_score
        if rank is None:
            continue
        if rank.percentile is not None:
            ranked += 1
            percentiles.append(rank.percentile)
        else:
            provisional += 1

    def mean4(values: list[float]) -> float | None:
        return round_half_away(math.fsum(values) / len(values), 4) if values else None

    return FleetSection(
        mean_consistency_gap=mean4(gaps),
        mean_stutter=mean4(stutters),
        median_percentile=(
            round_half_away(float(statistics.median(percentiles)), 1) if percentiles else None
        ),
        cohort_mean=None,
        ranked_runs=ranked,
        provisional_runs=provisional,
        fleet_runs=fleet_runs,
    )


def build_record(
    *,
    certificate: CertificateInfo,
    customer: str,
    card: CardInfo,
    phase1: Phase1,
    runs: Sequence[RunInput],
    verdict: Verdict,
    rules: Rules,
    fleet_runs: int | None,
    draft: bool,
    software: Software | None = None,
    issuer: Issuer | None = None,
    test_system: TestSystem | None = None,
) -> Record:
    """The complete record of one certificate (the fleet section computed from its runs).

    `fleet_runs` is the fleet's size in the certificate's cohorts, or None without a fleet. `software` is the
    stack to name (default: this process's, certgen.support.software.current_software()). `issuer` is
    the lab block, or None when built without a lab profile.
    """
    if software is None:
        software = current_software()

    run_objs: list[Run] = []
    for run in runs:
        c = run.config
        soft = verdict.soft_limits[run.index]
        first = verdict.first_captures[run.index]
        run_objs.append(Run(
            index=run.index, title=c.title, resolution=c.resolution, preset=c.preset,
            ray_tracing=c.ray_tracing, upscaler=c.upscaler, upscaler_mode=c.upscaler_mode,
            frame_generation=c.frame_generation,
            frame_generation_mode=c.frame_generation_mode, cohort=c.line(),
            status="not_run" if run.capture is None else "recorded",
            not_run_reason=run.not_run_reason, capture=run.capture, metrics=run.metrics,
            ranks=run.ranks,
            soft_limit=None if soft is None else _soft_limit(soft),
            first_capture=None if first is None or first.file is None
            else _first_capture(first, first.file, run.first_capture_metrics,
                                run.first_capture_recorded),
            chart=run.chart, conditions=run.conditions, frame_diagnostics=run.frame_diagnostics,
            recorded=run.recorded, provenance_note=run.provenance_note, measured=run.measured,
        ))
    first_metrics = {r.index: r.first_capture_metrics for r in runs}
    audit = Audit(
        captures=tuple(
            AuditCapture(run=r.index, file=r.capture.file, sha256=r.capture.sha256)
            for r in runs if r.capture is not None
        ),
        first_captures=tuple(
            AuditFirstCapture(
                run=f.run, file=f.file, sha256=f.sha256_actual, sha256_declared=f.sha256_declared,
                matches=f.matches, required=f.required, why=f.why, why_detail=f.why_detail,
                metrics=first_metrics.get(f.run), rerun_reason=f.rerun_reason,
            )
            for f in verdict.first_captures if f is not None and f.file is not None
        ),
        soft_limit=tuple(
            AuditSoftLimit(run=s.run, stutter=s.stutter, justification=lab_text(s.justification),
                           vrm_reexamination=lab_text(s.vrm_reexamination),
                           satisfied=s.satisfied)
            for s in verdict.soft_limits if s is not None and s.raised
        ),
        not_run=tuple(
            AuditNotRun(run=r.index, reason=r.not_run_reason) for r in runs if r.capture is None
        ),
        rules_version=rules.rules_version,
        certgen_version=__version__,
    )
    statement = dict(rules.calibration_statement)
    return Record(
        schema_version=SCHEMA_VERSION,
        certificate=certificate,
        issuer=issuer,
        rules_version=rules.rules_version,
        certgen_version=__version__,
        software=software,
        rules=rules_block(rules),
        status=Status(
            issuable=verdict.issuable, draft=draft, refusals=verdict.refusals,
            specimen=issuer is not None and issuer.specimen,
            refusal_details=tuple(r.detail for r in verdict.refusal_details),
        ),
        customer=customer,
        card=card,
        phase1=phase1,
        test_system=test_system,
        grade=verdict.grade,
        tiers=verdict.tiers,
        runs=tuple(run_objs),
        audit=audit,
        fleet=fleet_section(run_objs, fleet_runs=fleet_runs),
        calibration=Calibration(
            calibrated=rules.calibrated,
            fleet_target=rules.calibration_fleet_target,
            statement=CalibrationStatement(
                en=statement.get("en", ""), pt=statement.get("pt", ""), ru=statement.get("ru", "")
            ),
        ),
        uncertainty=uncertainty_of(
            verdict.tiers,
            [(r.index, r.config.resolution, r.metrics) for r in runs
             if r.capture is not None and r.metrics is not None],
            {r.index: r.repeats for r in runs if r.repeats}, rules,
            {r.index: r.within for r in runs if r.within is not None}),
    )


# --------------------------------------------------------------------------------------------
# Bytes
# --------------------------------------------------------------------------------------------


def _check_finite(value: JsonValue, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise RecordError(f"not a finite number: {value!r}", file="record.json", field=path)
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(v, f"{path}[{i}]")


def record_json(record: Record) -> dict[str, JsonValue]:
    """The record as plain JSON data, keys in record.json order.

    A record read from an older certgen has no `issuer` key and is written back without one
    (byte for byte); `build_record` always sets it, null when built without a lab profile.
    """
    data: dict[str, JsonValue] = record.model_dump(mode="json")
    # A record of an older certgen has no `software`, `rules.file`, `rules.sha256` or `issuer`
    # (and `certgen check` makes none): they are not written back either. Handled here rather
    # than by a wrap serializer (WithLaterKeys), which would make the JSON Schema opaque.
    if "software" not in record.model_fields_set:
        del data["software"]
    if "issuer" not in record.model_fields_set:
        del data["issuer"]
    if "test_system" not in record.model_fields_set:
        del data["test_system"]
    if "uncertainty" not in record.model_fields_set:
        del data["uncertainty"]
    rules = data["rules"]
    assert isinstance(rules, dict)
    for key in ("file", "sha256"):
        if key not in record.rules.model_fields_set:
            del rules[key]
    return data


def dump_record(record: Record) -> bytes:
    """record.json bytes: schema_version first, the models' key order, UTF-8, newline."""
    data = record_json(record)
    # Models refuse NaN when built; one built around validation must not reach the file.
    _check_finite(data, "")
    text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)
    return (text + "\n").encode("utf-8")


def load_record(data: bytes, *, source: str = "record.json") -> Record:
    """Read record.json bytes back into a Record; every field is validated (strict JSON).

    Refuses another schema_version, and names the first wrong field by its path:
    `record.json: runs[0].metrics.avg_fps: expected a number or null, got "x"`.
    """
    try:
        raw = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"not a JSON record: {exc}", file=source) from None
    if not isinstance(raw, dict):
        raise RecordError("expected a JSON object", file=source)
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise RecordError(
            f"expected schema_version {SCHEMA_VERSION}, got {version!r}", file=source,
            field="schema_version",
        )
    try:
        return Record.model_validate_json(data)
    except ValidationError as exc:
        path, message = describe_error(exc.errors(include_url=False)[0])
        raise RecordError(message, file=source, field=path or None) from None


# --------------------------------------------------------------------------------------------
# Validation errors as one line: the field path and what was expected
# --------------------------------------------------------------------------------------------


def _unwrap(tp: object) -> list[object]:
    """The member types of an annotation (Annotated and unions flattened)."""
    if get_origin(tp) is Annotated:
        return _unwrap(get_args(tp)[0])
    if get_origin(tp) in (Union, types.UnionType):
        return [m for arg in get_args(tp) for m in _unwrap(arg)]
    return [tp]


def _is_model(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _tags(tp: object) -> tuple[str, ...]:
    """The discriminator values of a union member (its `code` or `gate` literal)."""
    if not isinstance(tp, type) or not issubclass(tp, BaseModel):
        return ()
    for name in ("code", "gate"):
        field = tp.model_fields.get(name)
        if field is not None and get_origin(field.annotation) is Literal:
            return tuple(str(a) for a in get_args(field.annotation))
    return ()


def _narrow(members: list[object], item: str) -> list[object] | None:
    """The union members a location element names (a tag or "other"), else None."""
    picked = [m for m in members if item in _tags(m)]
    if not picked and item == "other":
        picked = [m for m in members if _is_model(m) and not _tags(m)]
    return picked or None


_TYPE_NAMES: Final = frozenset({"int", "float", "str", "bool", "none", "tuple"})
"""Location elements pydantic adds for the members of a plain union (`int | float`)."""


def _locate(loc: tuple[int | str, ...]) -> tuple[str, list[object]]:
    """The dotted path of a pydantic location in the record, and the types allowed there."""
    path = ""
    members: list[object] = [Record]
    for item in loc:
        if isinstance(item, int):
            path += f"[{item}]"
            tuples = [m for m in members if get_origin(m) is tuple]
            members = _unwrap(get_args(tuples[0])[0]) if tuples else members
            continue
        model = next((m for m in members if isinstance(m, type) and issubclass(m, BaseModel)
                      and item in m.model_fields), None)
        if model is not None:
            path += f".{item}" if path else item
            members = _unwrap(model.model_fields[item].annotation)
            continue
        narrowed = _narrow(members, item)
        if narrowed is not None:
            members = narrowed
        elif item not in _TYPE_NAMES:
            path += f".{item}" if path else item  # a key no model declares (extra_forbidden)
    return path, members


def _describe(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _expected(members: list[object]) -> str:
    words: list[str] = []
    for m in members:
        if m is type(None) or m is None:
            continue
        if get_origin(m) is Literal:
            word = "one of " + ", ".join(json.dumps(a) for a in get_args(m))
        elif m is bool:
            word = "true or false"
        elif m is int:
            word = "an integer"
        elif m is float:
            word = "a number"
        elif m is str:
            word = "a string"
        elif get_origin(m) is tuple:
            word = "a list"
        else:
            word = "an object"
        if word not in words:
            words.append(word)
    if "an integer" in words and "a number" in words:
        words.remove("an integer")
    if any(m is type(None) or m is None for m in members):
        words.append("null")
    return " or ".join(words)


def describe_error(error: ErrorDetails) -> tuple[str, str]:
    """(field path, message) of one pydantic validation error of a record."""
    path, members = _locate(tuple(error["loc"]))
    kind = error["type"]
    if kind == "missing":
        return path, "missing"
    if kind == "extra_forbidden":
        return path, "unknown field"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        ctx = error.get("ctx") or {}
        key = str(ctx.get("discriminator", "code")).strip("'")
        tags = sorted({t for m in members for t in _tags(m)})
        got = _describe(ctx["tag"]) if "tag" in ctx else "nothing"
        return (f"{path}.{key}" if path else key,
                f"expected one of {', '.join(json.dumps(t) for t in tags)}, got {got}")
    if kind.endswith("_type") or kind in ("literal_error", "model_type", "tuple_type"):
        return path, f"expected {_expected(members)}, got {_describe(error['input'])}"
    message = error["msg"]
    return path, f"{message[:1].lower()}{message[1:]}, got {_describe(error['input'])}"


# --------------------------------------------------------------------------------------------
# Schema and field reference (generated from the models)
# --------------------------------------------------------------------------------------------


def record_schema() -> dict[str, JsonValue]:
    """The JSON Schema of record.json (docs/record.schema.json), generated from the models.

    The validation form: it lists every object's keys (the serialization form would show the
    objects with keys added by later certgen versions as opaque, because of their wrap
    serializers), and keys added later are optional, as they are in older records."""
    schema: dict[str, JsonValue] = Record.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://certgen.example/record.schema.json"
    return schema


def record_schema_text() -> str:
    """docs/record.schema.json: the schema as 2-space indented JSON with a final newline."""
    return json.dumps(record_schema(), ensure_ascii=False, indent=2) + "\n"


FIELDS_BEGIN: Final = "<!-- generated: fields (python -m certgen.record --docs) -->"
FIELDS_END: Final = "<!-- end generated: fields -->"


def _type_text(tp: object) -> str:
    members = _unwrap(tp)
    words = []
    for m in members:
        if m is type(None) or m is None:
            words.append("null")
        elif get_origin(m) is Literal:
            words.append(" \\| ".join(f"`{json.dumps(a)}`" for a in get_args(m)))
        elif get_origin(m) is tuple:
            inner = get_args(m)
            words.append(f"[{_type_text(inner[0])}]" if len(inner) == 2 and inner[1] is Ellipsis
                         else "[" + ", ".join(_type_text(a) for a in inner) + "]")
        elif _is_model(m):
            name = getattr(m, "__name__", "")
            words.append(f"[{name}](#{name.lower()})")
        else:
            words.append({bool: "boolean", int: "integer", float: "number", str: "string"}.get(
                m if isinstance(m, type) else type(None), str(m)))
    return " \\| ".join(words)


def _models() -> list[type[BaseModel]]:
    """Every model reachable from Record, in first-use order."""
    seen: list[type[BaseModel]] = []

    def visit(tp: object) -> None:
        for m in _unwrap(tp):
            if get_origin(m) is tuple:
                for arg in get_args(m):
                    if arg is not Ellipsis:
                        visit(arg)
            elif isinstance(m, type) and issubclass(m, BaseModel) and m not in seen:
                seen.append(m)
                for field in m.model_fields.values():
                    visit(field.annotation)

    visit(Record)
    return seen


def fields_reference() -> str:
    """The field reference of docs/record.md: one table per model (field, type, description)."""
    out = [FIELDS_BEGIN, ""]
    for model in _models():
        doc = " ".join((model.__doc__ or "").split())
        out += [f"### {model.__name__}", "", doc, "", "| field | type | description |",
                "|---|---|---|"]
        for name, field in model.model_fields.items():
            optional = "" if field.is_required() else " (may be absent)"
            text = (field.description or "").replace("|", "\\|")
            out.append(f"| `{name}` | {_type_text(field.annotation)}{optional} | {text} |")
        out.append("")
    out.append(FIELDS_END)
    return "\n".join(out)


def with_fields_reference(markdown: str) -> str:
    """docs/record.md with its generated section replaced by the current one."""
    start = markdown.index(FIELDS_BEGIN)
    end = markdown.index(FIELDS_END) + len(FIELDS_END)
    return markdown[:start] + fields_reference() + markdown[end:]


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m certgen.record --docs FILE | --schema FILE`: regenerate the docs."""

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] not in ("--docs", "--schema"):
        print("usage: python -m certgen.record --docs docs/record.md | "
              "--schema docs/record.schema.json", file=sys.stderr)
        return 2
    path = Path(args[1])
    if args[0] == "--docs":
        path.write_text(with_fields_reference(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        path.write_text(record_schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
