"""The vocabulary: one frozen, strict type per concept of the certificate (figures,
diagnostics, verdict and gates, card parts, cohort, software, issuer), as record.json holds it.

Every stage returns these types and `certgen.record.Record` composes them; this package imports
nothing else of certgen (docs/architecture.md). Each object of docs/record.md is one model here,
its fields in record.json's key order.
"""

from __future__ import annotations

from certgen.model.base import (
    TEXT_ORDER as TEXT_ORDER,
)
from certgen.model.base import (
    Frozen as Frozen,
)
from certgen.model.base import (
    GradeName as GradeName,
)
from certgen.model.base import (
    LabText as LabText,
)
from certgen.model.base import (
    Language as Language,
)
from certgen.model.base import (
    LocalText as LocalText,
)
from certgen.model.base import (
    WithLaterKeys as WithLaterKeys,
)
from certgen.model.base import (
    code_tag as code_tag,
)
from certgen.model.base import (
    lab_text as lab_text,
)
from certgen.model.base import (
    text_for as text_for,
)
from certgen.model.capture import (
    INCOMPLETE_CODES as INCOMPLETE_CODES,
)
from certgen.model.capture import (
    RECORDED_MAX as RECORDED_MAX,
)
from certgen.model.capture import (
    CaptureInfo as CaptureInfo,
)
from certgen.model.capture import (
    DroppedLines as DroppedLines,
)
from certgen.model.capture import (
    FrameCountMismatch as FrameCountMismatch,
)
from certgen.model.capture import (
    IncompleteDetail as IncompleteDetail,
)
from certgen.model.capture import (
    NoEndLine as NoEndLine,
)
from certgen.model.capture import (
    OtherIncompleteReason as OtherIncompleteReason,
)
from certgen.model.capture import (
    Recorded as Recorded,
)
from certgen.model.capture import (
    TickGaps as TickGaps,
)
from certgen.model.capture import (
    UnusableColumn as UnusableColumn,
)
from certgen.model.card import (
    CardInfo as CardInfo,
)
from certgen.model.card import (
    CertificateInfo as CertificateInfo,
)
from certgen.model.card import (
    Phase1 as Phase1,
)
from certgen.model.card import (
    RunConditions as RunConditions,
)
from certgen.model.card import (
    Scope as Scope,
)
from certgen.model.card import (
    ScopeGame as ScopeGame,
)
from certgen.model.card import (
    TestSystem as TestSystem,
)
from certgen.model.cohort import (
    RANKED_METRICS as RANKED_METRICS,
)
from certgen.model.cohort import (
    FleetSection as FleetSection,
)
from certgen.model.cohort import (
    Rank as Rank,
)
from certgen.model.cohort import (
    Ranks as Ranks,
)
from certgen.model.figures import (
    DiagnosticFigures as DiagnosticFigures,
)
from certgen.model.figures import (
    DisplayDiagnostic as DisplayDiagnostic,
)
from certgen.model.figures import (
    FrameDiagnostics as FrameDiagnostics,
)
from certgen.model.figures import (
    FrameGenerationDiagnostic as FrameGenerationDiagnostic,
)
from certgen.model.figures import (
    FrameTypeCount as FrameTypeCount,
)
from certgen.model.figures import (
    RunMetrics as RunMetrics,
)
from certgen.model.issuer import (
    Accreditation as Accreditation,
)
from certgen.model.issuer import (
    Issuer as Issuer,
)
from certgen.model.issuer import (
    Signatory as Signatory,
)
from certgen.model.software import (
    DataDigests as DataDigests,
)
from certgen.model.software import (
    Software as Software,
)
from certgen.model.thresholds import (
    Calibration as Calibration,
)
from certgen.model.thresholds import (
    CalibrationStatement as CalibrationStatement,
)
from certgen.model.thresholds import (
    RulesBlock as RulesBlock,
)
from certgen.model.thresholds import (
    Weights as Weights,
)
from certgen.model.verdict import (
    REFUSAL_CODES as REFUSAL_CODES,
)
from certgen.model.verdict import (
    CapturesGpuDiffer as CapturesGpuDiffer,
)
from certgen.model.verdict import (
    CaptureTooOld as CaptureTooOld,
)
from certgen.model.verdict import (
    CaptureTooShort as CaptureTooShort,
)
from certgen.model.verdict import (
    CaptureUsedTwice as CaptureUsedTwice,
)
from certgen.model.verdict import (
    ConditionMissing as ConditionMissing,
)
from certgen.model.verdict import (
    DateAfterIssue as DateAfterIssue,
)
from certgen.model.verdict import (
    FirstCaptureIdentical as FirstCaptureIdentical,
)
from certgen.model.verdict import (
    FirstCaptureSha256Mismatch as FirstCaptureSha256Mismatch,
)
from certgen.model.verdict import (
    GateReason as GateReason,
)
from certgen.model.verdict import (
    Grade as Grade,
)
from certgen.model.verdict import (
    GradeCap as GradeCap,
)
from certgen.model.verdict import (
    GradeCapGate as GradeCapGate,
)
from certgen.model.verdict import (
    LimitingRun as LimitingRun,
)
from certgen.model.verdict import (
    LimitingTier as LimitingTier,
)
from certgen.model.verdict import (
    MeasuredTierGate as MeasuredTierGate,
)
from certgen.model.verdict import (
    OtherRefusal as OtherRefusal,
)
from certgen.model.verdict import (
    ProvenanceMismatch as ProvenanceMismatch,
)
from certgen.model.verdict import (
    RefusalDetail as RefusalDetail,
)
from certgen.model.verdict import (
    RerunFirstCaptureMissing as RerunFirstCaptureMissing,
)
from certgen.model.verdict import (
    SampleCertificate as SampleCertificate,
)
from certgen.model.verdict import (
    SoftLimit as SoftLimit,
)
from certgen.model.verdict import (
    SoftLimitMissing as SoftLimitMissing,
)
from certgen.model.verdict import (
    Status as Status,
)
from certgen.model.verdict import (
    Tier as Tier,
)
from certgen.model.verdict import (
    TierLineGate as TierLineGate,
)
from certgen.model.verdict import (
    TierScore as TierScore,
)
from certgen.model.verdict import (
    ToolErratumRefusal as ToolErratumRefusal,
)
from certgen.model.verdict import (
    WhyDetail as WhyDetail,
)
from certgen.model.verdict import (
    WhyIncomplete as WhyIncomplete,
)
from certgen.model.verdict import (
    WhyStutter as WhyStutter,
)
