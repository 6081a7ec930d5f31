"""The verdict of the rules (certgen.rules.verdict): tiers, the grade and its gates, the Soft Limit, the
re-run reasons and the refusals, each as data.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Final, Literal

from pydantic import ConfigDict, Discriminator, Field, JsonValue, Tag

from certgen.model.base import Frozen, GradeName, LabText, WithLaterKeys, code_tag


class WhyStutter(Frozen):
    """A re-run reason: the stutter was above the re-run line (`rules.rerun_stutter`)."""

    code: Literal["stutter_over_rerun_line"] = Field(description="The reason's code.")
    stutter: float = Field(description="The run's stutter (a fraction).")
    line: float = Field(description="The re-run line it was above.")


class WhyIncomplete(Frozen):
    """A re-run reason: the capture was incomplete."""

    code: Literal["incomplete"] = Field(description="The reason's code.")
    reason: str | None = Field(description="The capture reader's English description, or null.")


WhyDetail = Annotated[WhyStutter | WhyIncomplete, Field(discriminator="code")]
"""Why a re-run was required, as data (docs/record.md, Re-run reasons)."""


class RerunFirstCaptureMissing(Frozen):
    """Refusal: a run needed a re-run but has no archived first capture."""

    code: Literal["rerun_first_capture_missing"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    why: WhyDetail = Field(description="Why the re-run was required.")


class FirstCaptureSha256Mismatch(Frozen):
    """Refusal: the archived first capture is not the one cited in the audit trail."""

    code: Literal["first_capture_sha256_mismatch"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    file: str = Field(description="The archived first capture, as named in card.yaml.")
    sha256_declared: str = Field(description="SHA-256 declared in card.yaml.")
    sha256_actual: str = Field(description="SHA-256 of the file.")


class SoftLimitMissing(Frozen):
    """Refusal: a raised Soft Limit lacks a justification and/or a VRM re-examination."""

    code: Literal["soft_limit_missing"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    missing: tuple[Literal["justification", "vrm_reexamination"], ...] = Field(
        description="What is missing, in this order.")
    stutter: float = Field(description="The run's stutter (a fraction).")
    limit: float = Field(description="The Soft Limit it was above.")


class FirstCaptureIdentical(Frozen):
    """Refusal: the archived first capture is byte-identical to the recorded capture."""

    code: Literal["first_capture_identical"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    file: str = Field(description="The archived first capture, as named in card.yaml.")
    capture: str = Field(description="The recorded capture, as named in card.yaml.")
    sha256: str = Field(description="The SHA-256 both files have.")


RepeatField = Annotated[str, Field(pattern=r"^repeats\[[0-9]+\]$")]
"""A run's repeat capture as a refusal names it: "repeats[0]" (card.yaml `runs[].repeats`)."""

CaptureField = Literal["capture", "first_capture"] | RepeatField
"""Which of a run's capture files a refusal names."""


class CaptureUsedTwice(Frozen):
    """Refusal: one capture file (by SHA-256) backs two runs."""

    code: Literal["capture_used_twice"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based index of the later run.")
    field: CaptureField = Field(description='Which of its files ("capture", "first_capture", '
                                            '"repeats[N]").')
    file: str = Field(description="That file, as named in card.yaml.")
    other_run: int = Field(description="0-based index of the run that used it first.")
    other_field: CaptureField = Field(description="Which of its files.")
    other_file: str = Field(description="That file, as named in card.yaml.")
    sha256: str = Field(description="The SHA-256 both have.")


ProvenanceWhat = Literal["gpu", "resolution", "driver", "os", "cpu", "ram", "motherboard",
                         "captured_at", "frame_generation_mode"]
"""What a capture records that card.yaml is held against (certgen.rules.provenance)."""


class ProvenanceMismatch(Frozen):
    """Refusal: what a capture records disagrees with what card.yaml states
    (docs/spec/provenance.md). `excusable`: a run's provenance_note would excuse it (driver,
    OS, CPU, RAM, board, capture date against tested_on); a GPU or a resolution never is."""

    code: Literal["provenance_mismatch"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    field: CaptureField = Field(description="Which of the run's files.")
    file: str = Field(description="That file, as named in card.yaml.")
    what: ProvenanceWhat = Field(description="What disagrees.")
    recorded: str = Field(description="The value as the capture wrote it.")
    declared: str = Field(description="The value as card.yaml states it.")
    declared_field: str = Field(description='Where card.yaml states it, e.g. "card.driver".')
    excusable: bool = Field(description="Whether a provenance_note may explain it.")


class DateAfterIssue(Frozen):
    """Refusal: a run's tested_on, or a date a capture records, is after the issue date."""

    code: Literal["date_after_issue"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    field: str = Field(description='"tested_on", "first_capture.tested_on", "capture" or '
                                   '"first_capture" (a date the file records).')
    date: str = Field(description="The date, YYYY-MM-DD.")
    issued: str = Field(description="The certificate's issue date, YYYY-MM-DD.")


class CapturesGpuDiffer(Frozen):
    """Refusal: two captures of one bundle record different GPUs."""

    code: Literal["captures_gpu_differ"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based index of the later run.")
    field: CaptureField = Field(description="Which of its files.")
    file: str = Field(description="That file, as named in card.yaml.")
    gpu: str = Field(description="The GPU it records.")
    other_run: int = Field(description="0-based index of the first run that records a GPU.")
    other_field: CaptureField = Field(description="Which of its files.")
    other_file: str = Field(description="That file, as named in card.yaml.")
    other_gpu: str = Field(description="The GPU that one records.")


class ConditionMissing(Frozen):
    """Refusal: a condition a certificate must state is not in card.yaml (a draft may leave it
    out)."""

    code: Literal["condition_missing"] = Field(description="The refusal's code.")
    field: str = Field(description='The card.yaml field path, e.g. "runs[2].technician".')


class SampleCertificate(Frozen):
    """Refusal: a sample certificate (an id beginning SAMPLE-) under a laboratory profile that
    is not a specimen."""

    code: Literal["sample_certificate"] = Field(description="The refusal's code.")
    id: str = Field(description="The certificate id.")


class CaptureTooShort(Frozen):
    """Refusal: a recorded capture below the minimum to be graded (docs/spec/rules.md, Capture
    minimum): incomplete, so the SOP's re-run rule applies."""

    code: Literal["capture_too_short"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    file: str = Field(description="The recorded capture, as card.yaml names it.")
    frames: int = Field(description="Frames the SOP counts (positive frame times).")
    seconds: float = Field(description="Their total time in seconds, 1 dp.")
    min_seconds: float = Field(description="The minimum applied, in seconds.")
    min_frames: int = Field(description="The fewest frames with k0.1 >= min_k_0_1pct.")
    min_k_0_1pct: int = Field(description="The fewest frames the 0.1% low may be the mean of.")
    rerun: bool = Field(description="Whether the run was already re-run (a first capture is "
                                    "archived): the re-run is incomplete too.")


class CaptureTooOld(Frozen):
    """Refusal: a run's tested_on, or the date a capture records, older than the maximum age at
    issue (docs/spec/rules.md, Capture age)."""

    code: Literal["capture_too_old"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    field: str = Field(description='"tested_on", "first_capture.tested_on", "capture" or '
                                   '"first_capture" (a date the file records).')
    date: str = Field(description="The date, YYYY-MM-DD.")
    issued: str = Field(description="The certificate's issue date, YYYY-MM-DD.")
    days: int = Field(description="Days from the date to the issue date.")
    max_days: int = Field(description="The maximum age applied, in days.")
class ToolErratumRefusal(Frozen):
    """Refusal: the capture's tool version has a known defect, in a column certgen graded from,
    that makes the graded figures wrong (certgen's errata file, effect refuse)."""

    code: Literal["tool_erratum"] = Field(description="The refusal's code.")
    run: int = Field(description="0-based run index.")
    file: str = Field(description="The capture, as named in card.yaml.")
    erratum: str = Field(description="The errata entry's id.")
    tool: str = Field(description="The tool.")
    version: str = Field(description="The tool version that matched.")
    columns: tuple[str, ...] = Field(description="The affected columns certgen read.")
    source: str = Field(description="Where the defect is documented.")


class OtherRefusal(Frozen):
    """Refusal with a code this certgen does not know (a record from a newer certgen): kept
    as it is, and a certificate shows its English message."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, JsonValue] = Field(init=False)

    code: str = Field(description="The unknown code.")


REFUSAL_CODES: Final = ("rerun_first_capture_missing", "first_capture_sha256_mismatch",
                        "soft_limit_missing", "first_capture_identical", "capture_used_twice",
                        "provenance_mismatch", "date_after_issue", "captures_gpu_differ",
                        "condition_missing", "sample_certificate", "capture_too_short",
                        "capture_too_old", "tool_erratum")
"""The refusal codes this certgen knows (docs/record.md, Refusals)."""


RefusalDetail = Annotated[
    Annotated[RerunFirstCaptureMissing, Tag("rerun_first_capture_missing")]
    | Annotated[FirstCaptureSha256Mismatch, Tag("first_capture_sha256_mismatch")]
    | Annotated[SoftLimitMissing, Tag("soft_limit_missing")]
    | Annotated[FirstCaptureIdentical, Tag("first_capture_identical")]
    | Annotated[CaptureUsedTwice, Tag("capture_used_twice")]
    | Annotated[ProvenanceMismatch, Tag("provenance_mismatch")]
    | Annotated[DateAfterIssue, Tag("date_after_issue")]
    | Annotated[CapturesGpuDiffer, Tag("captures_gpu_differ")]
    | Annotated[ConditionMissing, Tag("condition_missing")]
    | Annotated[SampleCertificate, Tag("sample_certificate")]
    | Annotated[CaptureTooShort, Tag("capture_too_short")]
    | Annotated[CaptureTooOld, Tag("capture_too_old")]
    | Annotated[ToolErratumRefusal, Tag("tool_erratum")]
    | Annotated[OtherRefusal, Tag("other")],
    Discriminator(code_tag(REFUSAL_CODES)),
]
"""One refusal as data, discriminated by `code` (docs/record.md, Refusals)."""


class Status(WithLaterKeys):
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


class GradeCap(Frozen):
    """A cap on the grade imposed by another SOP phase."""

    grade: GradeName = Field(description="The highest grade allowed.")
    reason: LabText = Field(description="Why (per language or a string).")


class TierScore(Frozen):
    """One measured tier as a fluidity gate compared it."""

    resolution: str = Field(description="The tier's output resolution.")
    mean_fluidity: float = Field(description="Its mean Fluidity Score.")


class LimitingRun(Frozen):
    """A scored run under the line its tier missed."""

    run: int = Field(description="0-based run index.")
    title: str = Field(description="The run's title.")
    fluidity_score: float = Field(description="Its Fluidity Score.")


class LimitingTier(Frozen):
    """A measured tier under a gate's line: what holds the card back from that grade."""

    resolution: str = Field(description="The tier's output resolution.")
    mean_fluidity: float = Field(description="Its mean Fluidity Score.")
    distance: float = Field(description="The line minus the tier's mean, 2 dp.")
    runs: tuple[LimitingRun, ...] = Field(
        description="Its scored runs under the line, lowest score first (then card order).")


class TierLineGate(WithLaterKeys):
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


class MeasuredTierGate(Frozen):
    """Gate measured_tier: without a measured tier the grade is capped."""

    gate: Literal["measured_tier"] = Field(description="The gate.")
    passed: bool = Field(description="Whether the gate passed.")
    allows: GradeName = Field(description="The highest grade the gate permits.")
    measured_tiers: int = Field(description="How many tiers were measured.")


class GradeCapGate(Frozen):
    """Gate grade_cap: another SOP phase may cap the grade (passed: the cap does not lower it)."""

    gate: Literal["grade_cap"] = Field(description="The gate.")
    passed: bool = Field(description="Whether the cap leaves the grade as the fluidity gates set it.")
    allows: GradeName = Field(description="The highest grade the gate permits.")
    cap: GradeCap | None = Field(description="The cap, or null.")


GateReason = Annotated[TierLineGate | MeasuredTierGate | GradeCapGate,
                       Field(discriminator="gate")]
"""One gate of the grade, discriminated by `gate`."""


class Grade(Frozen):
    """`grade`: the grade and its reasoning."""

    value: GradeName = Field(description='The grade: the lowest "allows" of the gates.')
    fluidity_grade: GradeName = Field(description="What the three fluidity gates alone allow.")
    cap: GradeCap | None = Field(description="A cap from another SOP phase, or null.")
    reasons: tuple[GateReason, ...] = Field(
        description="platinum_one_tier, gold_every_tier, measured_tier, grade_cap, in this order.")


class Tier(Frozen):
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


class SoftLimit(Frozen):
    """`runs[].soft_limit`: the Stutter Soft Limit on a recorded run."""

    raised: bool = Field(description="Stutter strictly above the limit.")
    limit: float = Field(description="The limit.")
    justification: LabText | None = Field(
        description="Markdown justification (per language or a string); null unless raised.")
    vrm_reexamination: LabText | None = Field(
        description="VRM re-examination (per language or a string); null unless raised.")
    satisfied: bool = Field(description="False = a refusal names this run.")
