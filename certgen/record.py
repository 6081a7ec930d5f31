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
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, ClassVar, Final, Literal, Union, get_args, get_origin

import numpy as np
import numpy.typing as npt
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic_core import ErrorDetails

from certgen import __version__
from certgen.errors import RecordError
from certgen.framegen import FrameDiagnostics as ComputedFrameDiagnostics
from certgen.metrics import RunMetrics as ComputedMetrics
from certgen.metrics import round_half_away
from certgen.rules import (
    FirstCaptureCheck,
    Refusal,
    SoftLimitCheck,
    Verdict,
    cohort_key,
    cohort_label,
)
from certgen.rules import Tier as VerdictTier
from certgen.software import Software as CurrentSoftware
from certgen.software import current_software
from certgen.sop import Rules

SCHEMA_VERSION: Final = 1
CHART_BUCKETS: Final = 400
"""At most this many [t_start_ms, min_ms, max_ms] buckets per run chart."""


# --------------------------------------------------------------------------------------------
# The models (docs/record.md): one per object of record.json, fields in its key order
# --------------------------------------------------------------------------------------------


class _Frozen(BaseModel):
    """Every record object: frozen, strict (no coercion), unknown keys refused."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


class _WithLaterKeys(_Frozen):
    """An object some of whose keys came in a later certgen: a record from before has no such
    key, and it is not written back either (so an older record.json reads back byte for byte).
    `build_record` always sets them."""

    LATER_KEYS: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        for key in self.LATER_KEYS:
            if key not in self.model_fields_set:
                del data[key]
        return data


Language = Literal["en", "ru", "pt"]
GradeName = Literal["PLATINUM", "GOLD", "SILVER"]


class CertificateInfo(_Frozen):
    """`certificate`: which certificate this is, as in card.yaml."""

    id: str = Field(description="Certificate id (also the output folder name).")
    issued: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$",
                        description="Issue date, YYYY-MM-DD (the document date).")
    sop: str = Field(description='The SOP version, e.g. "SOP-GPU-001 v1.1".')
    languages: tuple[Language, ...] = Field(description="Languages of the customer documents.")


class LocalText(_Frozen):
    """Lab-written text per language, at least one given (a lab profile always gives the
    English). A document in a language without its own text shows the English, else the first
    given (en, ru, pt), marked as written in that language."""

    en: str | None = Field(default=None, description="English, or null.")
    ru: str | None = Field(default=None, description="Russian, or null.")
    pt: str | None = Field(default=None, description="Portuguese, or null.")

    @model_validator(mode="after")
    def _one_given(self) -> LocalText:
        if self.en is None and self.ru is None and self.pt is None:
            raise ValueError("expected the text in at least one of en, ru, pt")
        return self


LabText = str | LocalText
"""A plain string (English, shown in every language) or text per language."""

TEXT_ORDER: Final = ("en", "ru", "pt")
"""The fallback order of lab-written text: a language's own text, else the first given."""


def text_for(value: LabText, lang: str) -> tuple[str, Language]:
    """Lab-written text as a document in `lang` shows it, and the language it is written in:
    `lang`'s own text, else the English, else the first given (en, ru, pt). A plain string is
    English."""
    if isinstance(value, str):
        return value, "en"
    texts: tuple[tuple[Language, str | None], ...] = (
        ("en", value.en), ("ru", value.ru), ("pt", value.pt))
    # A stable sort: the document's own language first, then en, ru, pt.
    for source, text in sorted(texts, key=lambda item: item[0] != lang):
        if text is not None:
            return text, source
    raise AssertionError("LocalText gives at least one language")


def lab_text(value: LabText | Mapping[str, str | None] | None) -> LabText | None:
    """Lab-written text as the record holds it: a plain string stays one (an older record's
    bytes do not change), a mapping of languages becomes a LocalText."""
    if value is None or isinstance(value, str | LocalText):
        return value
    return LocalText.model_validate(dict(value))


class Accreditation(_Frozen):
    """`issuer.accreditation`: the accrediting body and the number."""

    body: str = Field(description="Accreditation body.")
    number: str = Field(description="Accreditation number.")


class Signatory(_WithLaterKeys):
    """`issuer.signatory`: who signs for the laboratory."""

    name: str = Field(description="Full name.")
    role: LabText = Field(description="Role (per language or a string).")
    certificate_sha256: str | None = Field(
        default=None, description="SHA-256 of the signing certificate lab.yaml pins; absent when "
                                  "lab.yaml pins none (and in records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("certificate_sha256",)


class Issuer(_Frozen):
    """`issuer`: the laboratory that issued the certificate (its lab.yaml), and the validity."""

    name: str = Field(description="Laboratory name.")
    address: LabText = Field(description="Postal address (per language or a string).")
    accreditation: Accreditation | None = Field(description="Accreditation, or null.")
    signatory: Signatory = Field(description="Who signs for the laboratory.")
    contact: str = Field(description="Contact for questions about the certificate.")
    verification_base: str = Field(description="Base of the verification address.")
    validity_months: int = Field(description="Months of validity after the issue date.")
    valid_until: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$",
                             description="certificate.issued + validity_months, YYYY-MM-DD.")
    specimen: bool = Field(description="A sample laboratory: every document is marked SPECIMEN.")
    profile_sha256: str = Field(description="SHA-256 of the lab.yaml the build read.")


class Weights(_Frozen):
    """`rules.weights`: the Fluidity Score weights."""

    consistency_gap: float = Field(description="Weight of the consistency gap g.")
    stutter: float = Field(description="Weight of the stutter s.")


class RulesBlock(_Frozen):
    """`rules`: the thresholds that were applied (from the versioned SOP rules file)."""

    sop: str = Field(description="The SOP these rules implement.")
    weights: Weights = Field(description="Fluidity Score weights.")
    gold_line: float = Field(description="Every measured tier's mean must reach this for GOLD.")
    platinum_line: float = Field(description="One measured tier must reach this for PLATINUM.")
    soft_limit_stutter: float = Field(description="Stutter above this raises the Soft Limit.")
    rerun_stutter: float = Field(description="Stutter above this requires a re-run.")
    ranking_min_cohort: int = Field(description="Cohort size from which percentiles are published.")
    calibrated: bool = Field(description="Whether the thresholds are calibrated against the fleet.")
    calibration_fleet_target: int = Field(description="Certified cards needed for calibration.")
    file: str | None = Field(
        default=None, description="The rules file's name, e.g. sop-gpu-001-v1.1.yaml (absent in "
                                  "records of an older certgen).")
    sha256: str | None = Field(
        default=None, description="SHA-256 of the rules file: the exact rules the grade was "
                                  "computed by (absent in records of an older certgen).")


class WhyStutter(_Frozen):
    """A re-run reason: the stutter was above the re-run line (`rules.rerun_stutter`)."""

    code: Literal["stutter_over_rerun_line"] = Field(description="The reason's code.")
    stutter: float = Field(description="The run's stutter (a fraction).")
    line: float = Field(description="The re-run line it was above.")


class WhyIncomplete(_Frozen):
    """A re-run reason: the capture was incomplete."""

    code: Literal["incomplete"] = Field(description="The reason's code.")
    reason: str | None = Field(description="The capture reader's English description, or null.")


WhyDetail = Annotated[WhyStutter | WhyIncomplete, Field(discriminator="code")]
"""Why a re-run was required, as data (docs/record.md, Re-run reasons)."""


class RerunFirstCaptureMissing(_Frozen):
    """Refusal: a run needed a re-run but has no archived first capture."""

    code: Literal["rerun_first_capture_missing"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    why: WhyDetail = Field(description="Why the re-run was required.")


class FirstCaptureSha256Mismatch(_Frozen):
    """Refusal: the archived first capture is not the one cited in the audit trail."""

    code: Literal["first_capture_sha256_mismatch"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    file: str = Field(description="The archived first capture, as named in card.yaml.")
    sha256_declared: str = Field(description="SHA-256 declared in card.yaml.")
    sha256_actual: str = Field(description="SHA-256 of the file.")


class SoftLimitMissing(_Frozen):
    """Refusal: a raised Soft Limit lacks a justification and/or a VRM re-examination."""

    code: Literal["soft_limit_missing"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    missing: tuple[Literal["justification", "vrm_reexamination"], ...] = Field(
        description="What is missing, in this order.")
    stutter: float = Field(description="The run's stutter (a fraction).")
    limit: float = Field(description="The Soft Limit it was above.")


class FirstCaptureIdentical(_Frozen):
    """Refusal: the archived first capture is byte-identical to the recorded capture."""

    code: Literal["first_capture_identical"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    file: str = Field(description="The archived first capture, as named in card.yaml.")
    capture: str = Field(description="The recorded capture, as named in card.yaml.")
    sha256: str = Field(description="The SHA-256 both files have.")


class CaptureUsedTwice(_Frozen):
    """Refusal: one capture file (by SHA-256) backs two runs."""

    code: Literal["capture_used_twice"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based index of the later run.")
    field: Literal["capture", "first_capture"] = Field(description="Which of its files.")
    file: str = Field(description="That file, as named in card.yaml.")
    other_run: int = Field(description="0-based index of the run that used it first.")
    other_field: Literal["capture", "first_capture"] = Field(description="Which of its files.")
    other_file: str = Field(description="That file, as named in card.yaml.")
    sha256: str = Field(description="The SHA-256 both have.")


class OtherRefusal(_Frozen):
    """Refusal with a code this certgen does not know (a record from a newer certgen): kept
    as it is, and a certificate shows its English message."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, JsonValue] = Field(init=False)

    code: str = Field(description="The unknown code.")


REFUSAL_CODES: Final = ("rerun_first_capture_missing", "first_capture_sha256_mismatch",
                        "soft_limit_missing", "first_capture_identical", "capture_used_twice")
"""The refusal codes this certgen knows (docs/record.md, Refusals)."""


def _code_tag(known: Sequence[str]) -> Callable[[object], str]:
    def tag(value: object) -> str:
        code = value.get("code") if isinstance(value, dict) else getattr(value, "code", None)
        return code if isinstance(code, str) and code in known else "other"
    return tag


RefusalDetail = Annotated[
    Annotated[RerunFirstCaptureMissing, Tag("rerun_first_capture_missing")]
    | Annotated[FirstCaptureSha256Mismatch, Tag("first_capture_sha256_mismatch")]
    | Annotated[SoftLimitMissing, Tag("soft_limit_missing")]
    | Annotated[FirstCaptureIdentical, Tag("first_capture_identical")]
    | Annotated[CaptureUsedTwice, Tag("capture_used_twice")]
    | Annotated[OtherRefusal, Tag("other")],
    Discriminator(_code_tag(REFUSAL_CODES)),
]
"""One refusal as data, discriminated by `code` (docs/record.md, Refusals)."""


class Status(_WithLaterKeys):
    """`status`: whether the certificate can be issued, and why not."""

    issuable: bool = Field(description="False when any refusal exists.")
    draft: bool = Field(description='True for a --draft build (marked "draft, not issuable").')
    specimen: bool = Field(
        default=False, description="True when the issuing lab profile is a sample (every page "
                                   "marked SPECIMEN); absent in records of an older certgen.")
    refusals: tuple[str, ...] = Field(description="English messages, one per problem, run order.")
    refusal_details: tuple[RefusalDetail, ...] = Field(
        default=(), description="The same refusals as data, one for one, same order (absent in "
                                "records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("refusal_details", "specimen")


class CardInfo(_Frozen):
    """`card`: the certified card, as in card.yaml."""

    vendor: str = Field(description="Card vendor.")
    model: str = Field(description="Card model.")
    gpu: str = Field(description="GPU chip.")
    vram_gb: int | float = Field(description="Video memory in GB (an integer stays an integer).")
    serial: str = Field(description="Serial number.")
    hardware_ray_tracing: bool = Field(description="Whether the GPU has hardware ray tracing.")
    driver: str = Field(description="Driver version, as text.")


class Phase1(_Frozen):
    """`phase1`: outcomes of SOP Phase 1 (electrical checks)."""

    vrm_rail_resistance: LabText = Field(
        description='Outcome of the VRM rail resistance check ("pass"; per language or a string).')


class GradeCap(_Frozen):
    """A cap on the grade imposed by another SOP phase."""

    grade: GradeName = Field(description="The highest grade allowed.")
    reason: LabText = Field(description="Why (per language or a string).")


class TierScore(_Frozen):
    """One measured tier as a fluidity gate compared it."""

    resolution: str = Field(description="The tier's output resolution.")
    mean_fluidity: float = Field(description="Its mean Fluidity Score.")


class LimitingRun(_Frozen):
    """A scored run under the line its tier missed."""

    run: int = Field(description="0-based run index.")
    title: str = Field(description="The run's title.")
    fluidity_score: float = Field(description="Its Fluidity Score.")


class LimitingTier(_Frozen):
    """A measured tier under a gate's line: what holds the card back from that grade."""

    resolution: str = Field(description="The tier's output resolution.")
    mean_fluidity: float = Field(description="Its mean Fluidity Score.")
    distance: float = Field(description="The line minus the tier's mean, 2 dp.")
    runs: tuple[LimitingRun, ...] = Field(
        description="Its scored runs under the line, lowest score first (then card order).")


class TierLineGate(_WithLaterKeys):
    """Gate platinum_one_tier (one measured tier >= the platinum line) or gold_every_tier
    (every measured tier >= the gold line)."""

    gate: Literal["platinum_one_tier", "gold_every_tier"] = Field(description="The gate.")
    passed: bool = Field(description="Whether the gate passed.")
    allows: GradeName = Field(description="The highest grade the gate permits.")
    line: float = Field(description="The line compared against.")
    compared: tuple[TierScore, ...] = Field(description="The measured tiers compared.")
    limiting: tuple[LimitingTier, ...] = Field(
        default=(),
        description="For a failed gate: the measured tiers under the line, closest first, each "
                    "with its runs under the line (empty when the gate passed; absent in "
                    "records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("limiting",)


class MeasuredTierGate(_Frozen):
    """Gate measured_tier: without a measured tier the grade is capped."""

    gate: Literal["measured_tier"] = Field(description="The gate.")
    passed: bool = Field(description="Whether the gate passed.")
    allows: GradeName = Field(description="The highest grade the gate permits.")
    measured_tiers: int = Field(description="How many tiers were measured.")


class GradeCapGate(_Frozen):
    """Gate grade_cap: another SOP phase may cap the grade (passed: the cap does not lower it)."""

    gate: Literal["grade_cap"] = Field(description="The gate.")
    passed: bool = Field(description="Whether the cap leaves the grade as the fluidity gates set it.")
    allows: GradeName = Field(description="The highest grade the gate permits.")
    cap: GradeCap | None = Field(description="The cap, or null.")


GateReason = Annotated[TierLineGate | MeasuredTierGate | GradeCapGate,
                       Field(discriminator="gate")]
"""One gate of the grade, discriminated by `gate`."""


class Grade(_Frozen):
    """`grade`: the grade and its reasoning."""

    value: GradeName = Field(description='The grade: the lowest "allows" of the gates.')
    fluidity_grade: GradeName = Field(description="What the three fluidity gates alone allow.")
    cap: GradeCap | None = Field(description="A cap from another SOP phase, or null.")
    reasons: tuple[GateReason, ...] = Field(
        description="platinum_one_tier, gold_every_tier, measured_tier, grade_cap, in this order.")


class Tier(_Frozen):
    """One resolution tier (`tiers[]`, by pixel count, then resolution text)."""

    resolution: str = Field(description="Output resolution, e.g. 2560x1440.")
    runs: int = Field(description="Runs at this resolution.")
    scored_runs: int = Field(description="Recorded runs with a Fluidity Score.")
    not_run: int = Field(description="Runs declared not_run.")
    mean_fluidity: float | None = Field(
        description="Mean Fluidity Score of the scored runs, 2 dp half away; null = not measured.")
    measured: bool = Field(description="Whether the tier has a mean.")
    meets_gold: bool = Field(description="Mean >= the gold line.")
    meets_platinum: bool = Field(description="Mean >= the platinum line.")


class NoEndLine(_Frozen):
    """Incomplete: no end line (the process did not exit cleanly)."""

    code: Literal["no_end_line"] = Field(description="The reason's code.")


class TickGaps(_Frozen):
    """Incomplete: `missing_lines` lines missing in `gaps` tick gaps."""

    code: Literal["tick_gaps"] = Field(description="The reason's code.")
    missing_lines: int = Field(description="Lines missing.")
    gaps: int = Field(description="Gaps in the tick numbers.")


class DroppedLines(_Frozen):
    """Incomplete: the end line reports `dropped` dropped lines."""

    code: Literal["dropped_lines"] = Field(description="The reason's code.")
    dropped: int = Field(description="Dropped lines the end line reports.")


class FrameCountMismatch(_Frozen):
    """Incomplete: the end line's frame count disagrees with the frame lines in the file."""

    code: Literal["frame_count_mismatch"] = Field(description="The reason's code.")
    frames: int = Field(description="Frames the end line reports.")
    dropped: int = Field(description="Dropped frames the end line reports.")
    lines: int = Field(description="Frame lines the file holds.")


class OtherIncompleteReason(_Frozen):
    """A reason with a code this certgen does not know (a newer certgen): kept as it is, and a
    certificate shows `incomplete_reason` instead."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, JsonValue] = Field(init=False)

    code: str = Field(description="The unknown code.")


INCOMPLETE_CODES: Final = ("no_end_line", "tick_gaps", "dropped_lines", "frame_count_mismatch")
"""The incomplete-capture codes this certgen knows (docs/record.md, Incomplete captures)."""

IncompleteDetail = Annotated[
    Annotated[NoEndLine, Tag("no_end_line")]
    | Annotated[TickGaps, Tag("tick_gaps")]
    | Annotated[DroppedLines, Tag("dropped_lines")]
    | Annotated[FrameCountMismatch, Tag("frame_count_mismatch")]
    | Annotated[OtherIncompleteReason, Tag("other")],
    Discriminator(_code_tag(INCOMPLETE_CODES)),
]
"""One reason a capture is incomplete, as data, discriminated by `code`."""


class CaptureInfo(_WithLaterKeys):
    """`runs[].capture`: the capture file and what its reader reported."""

    file: str = Field(description="Path inside the bundle.")
    sha256: str = Field(description="SHA-256 of the capture file.")
    format: str = Field(description="Reader id, e.g. presentmon.")
    interval_column: str = Field(description="Which quantity was read, e.g. MsBetweenPresents.")
    group: str | None = Field(description="The process/swap-chain group read; null when the "
                                          "format has none.")
    groups_left_out: tuple[str, ...] = Field(description="Other groups in the file, sorted.")
    dropped_frames: int = Field(description="Frames the tool marked as dropped (kept, counted).")
    missing_intervals: int = Field(description="Rows without an interval (not frame times).")
    skipped_frames: int = Field(description="Frames skipped by the format's rule.")
    incomplete: bool = Field(description="Whether the capture is incomplete.")
    incomplete_reason: str | None = Field(description="The reader's English text, or null.")
    incomplete_detail: tuple[IncompleteDetail, ...] | None = Field(
        default=None,
        description="The same reasons as data, same order; null when complete. Absent in "
                    "records of an older certgen.")
    warnings: tuple[str, ...] = Field(description="Reader warnings.")
    tool: str | None = Field(
        default=None, description="The capture tool the file comes from (from its format).")
    tool_version: str | None = Field(
        default=None, description="The tool's version where the file states it, else null.")
    duration_s: float | None = Field(
        default=None, description="Capture length in seconds (sum of frame times), 1 dp.")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("incomplete_detail", "tool", "tool_version",
                                             "duration_s")


class RunMetrics(_Frozen):
    """`runs[].metrics`: the figures of `certgen metrics --json` minus file/format."""

    frames: int = Field(description="Frames scored (after dropping t <= 0).")
    dropped_nonpositive: int = Field(description="Frames dropped as t <= 0.")
    avg_fps: float | None = Field(description="Time-weighted average FPS F.")
    low_1pct_fps: float | None = Field(description="1% low FPS F1% (slowest-k).")
    low_0_1pct_fps: float | None = Field(description="0.1% low FPS F0.1% (slowest-k).")
    consistency_gap: float | None = Field(description="g = 1 - F1% / F.")
    stutter: float | None = Field(description="s = 1 - F0.1% / F1%.")
    fluidity_score: float | None = Field(description="S_F = 100 (1 - (w_g g + w_s s)), 2 dp.")
    corrupted: bool = Field(description="Figures out of order (a low above the average).")
    p99_ms: float | None = Field(description="99th percentile frame time, ms.")
    p99_9_ms: float | None = Field(description="99.9th percentile frame time, ms.")
    stall_count: int = Field(description="Stalls.")
    stall_total_ms: float = Field(description="Total stall time, ms.")
    stutter_count: int = Field(description="Stutter events.")
    too_short: bool = Field(description="Capture shorter than the SOP asks.")


class DiagnosticFigures(_Frozen):
    """SOP arithmetic over another set of intervals (diagnostic, not graded)."""

    frames: int = Field(description="Intervals counted (after dropping t <= 0).")
    avg_fps: float | None = Field(description="Time-weighted average FPS, 1 dp.")
    low_1pct_fps: float | None = Field(description="1% low FPS (slowest-k), 1 dp.")
    low_0_1pct_fps: float | None = Field(description="0.1% low FPS (slowest-k), 1 dp.")
    consistency_gap: float | None = Field(description="1 - 1% low / average, 4 dp.")
    stutter: float | None = Field(description="1 - 0.1% low / 1% low, 4 dp.")


class FrameTypeCount(_Frozen):
    """Frames of one FrameType value."""

    frame_type: str = Field(description='The type as the tool wrote it, e.g. "Application".')
    frames: int = Field(description="Frames of that type.")


class FrameGenerationDiagnostic(_Frozen):
    """`runs[].frame_diagnostics.frame_generation`: what the FrameType column says."""

    column: str = Field(description='The column read: "FrameType".')
    frames: int = Field(description="Frames with a type (NA left out).")
    generated_frames: int = Field(description='Frames of a type other than "Application".')
    generated_share: float | None = Field(
        description="generated_frames / frames, 4 dp; null without a typed frame.")
    frame_types: tuple[FrameTypeCount, ...] = Field(description="Frames per type, by type.")
    application: DiagnosticFigures | None = Field(
        description="The figures over the application frames' present intervals; null "
                    "without one.")


class DisplayDiagnostic(_Frozen):
    """`runs[].frame_diagnostics.display`: the figures over display-change intervals."""

    column: str = Field(description="The column read, e.g. MsBetweenDisplayChange.")
    not_displayed: int = Field(description="Frames with no display change (0 or NA), left out.")
    figures: DiagnosticFigures | None = Field(
        description="The figures over the positive intervals; null without one.")


class FrameDiagnostics(_Frozen):
    """`runs[].frame_diagnostics`: frame generation and display timing, diagnostic and never
    graded (docs/spec/metrics.md); each null when the capture lacks its column."""

    frame_generation: FrameGenerationDiagnostic | None = Field(
        description="From FrameType; null without that column.")
    display: DisplayDiagnostic | None = Field(
        description="From the display-change column; null without one.")


class Rank(_Frozen):
    """A run's standing in its cohort for one metric."""

    percentile: float | None = Field(
        description="Share of the other cohort runs it strictly beats; null when provisional.")
    n: int = Field(description="Cohort size including the run.")
    cohort_mean: float | None = Field(description="Mean over the n values; null when provisional.")
    z: float | None = Field(description="z-score over the n values; null when provisional.")


class Ranks(_Frozen):
    """`runs[].ranks`: one entry per ranked metric with a value (a null metric has no entry)."""

    fluidity_score: Rank | None = Field(default=None, description="Rank on the Fluidity Score.")
    consistency_gap: Rank | None = Field(default=None, description="Rank on the gap.")
    stutter: Rank | None = Field(default=None, description="Rank on the stutter.")
    avg_fps: Rank | None = Field(default=None, description="Rank on the average FPS.")
    low_1pct_fps: Rank | None = Field(default=None, description="Rank on the 1% low.")
    low_0_1pct_fps: Rank | None = Field(default=None, description="Rank on the 0.1% low.")

    @model_serializer(mode="wrap")
    def _omit_unranked(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = handler(self)
        return {k: v for k, v in data.items() if v is not None}

    def items(self) -> tuple[tuple[str, Rank], ...]:
        """(metric, rank) of the ranked metrics, in record order."""
        return tuple((name, rank) for name in RANKED_METRICS
                     if (rank := getattr(self, name)) is not None)


RANKED_METRICS: Final = tuple(Ranks.model_fields)
"""The metrics of `runs[].ranks`, in order."""


class SoftLimit(_Frozen):
    """`runs[].soft_limit`: the Stutter Soft Limit on a recorded run."""

    raised: bool = Field(description="Stutter strictly above the limit.")
    limit: float = Field(description="The limit.")
    justification: LabText | None = Field(
        description="Markdown justification (per language or a string); null unless raised.")
    vrm_reexamination: LabText | None = Field(
        description="VRM re-examination (per language or a string); null unless raised.")
    satisfied: bool = Field(description="False = a refusal names this run.")


class FirstCapture(_WithLaterKeys):
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

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("why_detail", "metrics", "rerun_reason")


Bucket = tuple[float, float, float]


class Chart(_WithLaterKeys):
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


class RunConditions(_Frozen):
    """`runs[].conditions`: how the run was made, as card.yaml states it (null: not stated)."""

    game_version: str | None = Field(description="The game build tested.")
    tested_on: str | None = Field(description="The day it was captured, YYYY-MM-DD.")
    technician: str | None = Field(description="Who ran it.")


class TestSystem(_Frozen):
    """`test_system`: the test bench, as card.yaml states it (null: not stated)."""

    cpu: str | None = Field(description="The CPU.")
    memory_gb: float | None = Field(description="System memory, GB.")
    os: str | None = Field(description="Operating system and build.")
    motherboard: str | None = Field(description="Motherboard.")
    notes: LabText | None = Field(
        description="Anything else about the bench (per language or a string).")


class Run(_WithLaterKeys):
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

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("conditions", "frame_diagnostics")


class AuditCapture(_Frozen):
    """`audit.captures[]`: every recorded run's capture."""

    run: int = Field(description="0-based run index.")
    file: str = Field(description="Path inside the bundle.")
    sha256: str = Field(description="SHA-256 of the file.")


class AuditFirstCapture(_WithLaterKeys):
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


class AuditSoftLimit(_Frozen):
    """`audit.soft_limit[]`: every raised Soft Limit."""

    run: int = Field(description="0-based run index.")
    stutter: float | None = Field(description="The run's stutter.")
    justification: LabText | None = Field(
        description="The justification (per language or a string), or null.")
    vrm_reexamination: LabText | None = Field(
        description="The VRM re-examination (per language or a string), or null.")
    satisfied: bool = Field(description="Both are given.")


class AuditNotRun(_Frozen):
    """`audit.not_run[]`: every run declared not_run."""

    run: int = Field(description="0-based run index.")
    reason: LabText | None = Field(description="The card.yaml reason (per language or a string).")


class Audit(_Frozen):
    """`audit`: the audit trail (lists by run index)."""

    captures: tuple[AuditCapture, ...] = Field(description="Every recorded run's capture.")
    first_captures: tuple[AuditFirstCapture, ...] = Field(description="Archived first captures.")
    soft_limit: tuple[AuditSoftLimit, ...] = Field(description="Raised Soft Limits only.")
    not_run: tuple[AuditNotRun, ...] = Field(description="Runs not performed.")
    rules_version: str = Field(description="The rules file version.")
    certgen_version: str = Field(description="The certgen that wrote the record.")


class FleetSection(_Frozen):
    """`fleet`: the certificate's fleet comparison (certgen.fleet.fleet_section)."""

    mean_consistency_gap: float | None = Field(
        description="Mean over recorded runs with a value, 4 dp.")
    mean_stutter: float | None = Field(description="Mean over recorded runs with a value, 4 dp.")
    median_percentile: float | None = Field(
        description="Median of the published fluidity_score percentiles; null if none.")
    cohort_mean: None = Field(
        description='Always null: runs of different cohorts are not pooled ("—").')
    ranked_runs: int = Field(description="Runs whose fluidity_score rank is published.")
    provisional_runs: int = Field(description="Runs whose fluidity_score rank is provisional.")
    fleet_runs: int | None = Field(description=(
        "Runs the fleet holds in this certificate's cohorts (what its ranks are measured "
        "against; runs of other cohorts do not change it); null when built without a fleet."))


class CalibrationStatement(_Frozen):
    """`calibration.statement`: the calibration status in each language (from the SOP file)."""

    en: str = Field(description="English.")
    pt: str = Field(description="Portuguese.")
    ru: str = Field(description="Russian.")


class Calibration(_Frozen):
    """`calibration`: whether the thresholds are calibrated, and the statement to print."""

    calibrated: bool = Field(description="Whether the thresholds are calibrated.")
    fleet_target: int = Field(description="Certified cards needed for calibration.")
    statement: CalibrationStatement = Field(description="The statement every document prints.")


class DataDigests(_Frozen):
    """`software.digests`: SHA-256 over the data files documents are made from (sorted relative
    paths and contents; hidden files and caches left out)."""

    templates: str = Field(description="templates/ without fonts/: Jinja templates, CSS, fonts.conf.")
    locales: str = Field(description="locales/: message catalogs, explainers, glossary.")
    fonts: str = Field(description="templates/fonts/: the bundled fonts.")
    rules: str = Field(description="The packaged SOP rules files (certgen/sop/*.yaml).")


class Software(_Frozen):
    """`software`: the software that built the record and renders its documents
    (certgen.software; docs/reproducibility.md)."""

    certgen: str = Field(description="certgen's version.")
    commit: str | None = Field(
        description="certgen's git commit when the environment states it (CERTGEN_COMMIT), "
                    "else null.")
    python: str = Field(description="The Python version, e.g. 3.11.7.")
    weasyprint: str = Field(description="The WeasyPrint version (HTML to PDF).")
    pydyf: str = Field(description="The pydyf version (WeasyPrint's PDF writer).")
    pango: str = Field(description="The Pango library version (text layout).")
    harfbuzz: str = Field(description="The HarfBuzz library version (shaping, font subsets).")
    digests: DataDigests = Field(description="Digests of the templates, locales, fonts and rules.")


class Record(_Frozen):
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
class RunConfig:
    """The cohort fields of one card.yaml run (the first fields of `runs[]`)."""

    title: str
    resolution: str
    preset: str
    ray_tracing: bool
    upscaler: str
    upscaler_mode: str | None
    frame_generation: bool

    def key(self) -> tuple[str, str, str, bool, str, str | None, bool]:
        """The cohort key (certgen.rules.cohort_key)."""
        return cohort_key(self.title, self.resolution, self.preset, self.ray_tracing,
                          self.upscaler, self.upscaler_mode, self.frame_generation)


@dataclass(frozen=True)
class RunInput:
    """One run as the pipeline computed it (everything the record prints about it)."""

    index: int
    config: RunConfig
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


def run_metrics(metrics: ComputedMetrics) -> RunMetrics:
    """`runs[].metrics` of computed figures (certgen.metrics.RunMetrics.as_json, typed)."""
    return RunMetrics.model_validate_json(json.dumps(metrics.as_json(), allow_nan=False))


def frame_diagnostics(diagnostics: ComputedFrameDiagnostics) -> FrameDiagnostics:
    """`runs[].frame_diagnostics` of computed diagnostics (certgen.framegen, typed)."""
    return FrameDiagnostics.model_validate_json(json.dumps(diagnostics.as_json(),
                                                           allow_nan=False))


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


def software_block(software: CurrentSoftware) -> Software:
    """The `software` block of a stack (certgen.software.current_software())."""
    d = software.digests
    return Software(
        certgen=software.certgen, commit=software.commit, python=software.python,
        weasyprint=software.weasyprint, pydyf=software.pydyf, pango=software.pango,
        harfbuzz=software.harfbuzz,
        digests=DataDigests(templates=d.templates, locales=d.locales, fonts=d.fonts,
                            rules=d.rules),
    )


# The verdict's reasoning carries loosely typed parameters (Refusal.params, why_detail); they
# become models through their JSON form, so strict JSON validation checks their shape.
_REFUSAL: Final[TypeAdapter[RefusalDetail]] = TypeAdapter(RefusalDetail)
_WHY: Final[TypeAdapter[WhyDetail | None]] = TypeAdapter(WhyDetail | None)


def _refusal(refusal: Refusal) -> RefusalDetail:
    return _REFUSAL.validate_json(json.dumps(refusal.as_json(), allow_nan=False))


def _why(check: FirstCaptureCheck) -> WhyDetail | None:
    return _WHY.validate_json(json.dumps(check.why_detail_json(), allow_nan=False))


def _tier(tier: VerdictTier) -> Tier:
    return Tier(
        resolution=tier.resolution, runs=tier.runs, scored_runs=tier.scored_runs,
        not_run=tier.not_run, mean_fluidity=tier.mean_fluidity, measured=tier.measured,
        meets_gold=tier.meets_gold, meets_platinum=tier.meets_platinum,
    )


def _soft_limit(check: SoftLimitCheck) -> SoftLimit:
    return SoftLimit(
        raised=check.raised, limit=check.limit, justification=lab_text(check.justification),
        vrm_reexamination=lab_text(check.vrm_reexamination), satisfied=check.satisfied,
    )


def _own_reason(check: FirstCaptureCheck) -> WhyDetail | None:
    return _WHY.validate_json(json.dumps(check.rerun_reason_json(), allow_nan=False))


def _first_capture(check: FirstCaptureCheck, file: str, metrics: RunMetrics | None
                   ) -> FirstCapture:
    return FirstCapture(
        file=file, sha256_declared=check.sha256_declared, sha256_actual=check.sha256_actual,
        matches=check.matches, required=check.required, why=check.why, why_detail=_why(check),
        metrics=metrics, rerun_reason=_own_reason(check),
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
    software: CurrentSoftware | None = None,
    issuer: Issuer | None = None,
    test_system: TestSystem | None = None,
) -> Record:
    """The complete record of one certificate (the fleet section computed from its runs).

    `fleet_runs` is the fleet's size in the certificate's cohorts, or None without a fleet. `software` is the
    stack to name (default: this process's, certgen.software.current_software()). `issuer` is
    the lab block, or None when built without a lab profile.
    """
    if software is None:
        software = current_software()
    from certgen.fleet import fleet_section  # certgen.fleet reads these models

    run_objs: list[Run] = []
    for run in runs:
        c = run.config
        soft = verdict.soft_limits[run.index]
        first = verdict.first_captures[run.index]
        run_objs.append(Run(
            index=run.index, title=c.title, resolution=c.resolution, preset=c.preset,
            ray_tracing=c.ray_tracing, upscaler=c.upscaler, upscaler_mode=c.upscaler_mode,
            frame_generation=c.frame_generation, cohort=cohort_label(c.key()),
            status="not_run" if run.capture is None else "recorded",
            not_run_reason=run.not_run_reason, capture=run.capture, metrics=run.metrics,
            ranks=run.ranks,
            soft_limit=None if soft is None else _soft_limit(soft),
            first_capture=None if first is None or first.file is None
            else _first_capture(first, first.file, run.first_capture_metrics),
            chart=run.chart, conditions=run.conditions, frame_diagnostics=run.frame_diagnostics,
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
                matches=f.matches, required=f.required, why=f.why, why_detail=_why(f),
                metrics=first_metrics.get(f.run), rerun_reason=_own_reason(f),
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
        software=software_block(software),
        rules=rules_block(rules),
        status=Status(
            issuable=verdict.issuable, draft=draft, refusals=verdict.refusals,
            specimen=issuer is not None and issuer.specimen,
            refusal_details=tuple(_refusal(r) for r in verdict.refusal_details),
        ),
        customer=customer,
        card=card,
        phase1=phase1,
        test_system=test_system,
        grade=Grade.model_validate_json(json.dumps(verdict.grade.as_json(), allow_nan=False)),
        tiers=tuple(_tier(t) for t in verdict.tiers),
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
    # than by a wrap serializer (_WithLaterKeys), which would make the JSON Schema opaque.
    if "software" not in record.model_fields_set:
        del data["software"]
    if "issuer" not in record.model_fields_set:
        del data["issuer"]
    if "test_system" not in record.model_fields_set:
        del data["test_system"]
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
        from certgen.jsonload import loads

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
    from pathlib import Path

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
