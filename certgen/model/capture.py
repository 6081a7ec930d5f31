"""What a capture's reader reported about the file: which quantity, which group, what was
skipped, why it is incomplete, and what the capture itself records about the system.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Final, Literal

from pydantic import ConfigDict, Discriminator, Field, JsonValue, Tag, model_validator

from certgen.model.base import Frozen, WithLaterKeys, code_tag


class NoEndLine(Frozen):
    """Incomplete: no end line (the process did not exit cleanly)."""

    code: Literal["no_end_line"] = Field(description="The reason's code.")


class TickGaps(Frozen):
    """Incomplete: `missing_lines` lines missing in `gaps` tick gaps."""

    code: Literal["tick_gaps"] = Field(description="The reason's code.")
    missing_lines: int = Field(description="Lines missing.")
    gaps: int = Field(description="Gaps in the tick numbers.")


class DroppedLines(Frozen):
    """Incomplete: the end line reports `dropped` dropped lines."""

    code: Literal["dropped_lines"] = Field(description="The reason's code.")
    dropped: int = Field(description="Dropped lines the end line reports.")


class FrameCountMismatch(Frozen):
    """Incomplete: the end line's frame count disagrees with the frame lines in the file."""

    code: Literal["frame_count_mismatch"] = Field(description="The reason's code.")
    frames: int = Field(description="Frames the end line reports.")
    dropped: int = Field(description="Dropped frames the end line reports.")
    lines: int = Field(description="Frame lines the file holds.")


class OtherIncompleteReason(Frozen):
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
    Discriminator(code_tag(INCOMPLETE_CODES)),
]
"""One reason a capture is incomplete, as data, discriminated by `code`."""


UnusableReason = Literal["wrap_around", "not_finite", "out_of_range"]
"""Why a diagnostic column was set aside (docs/spec/captures.md, PresentMon family)."""


class UnusableColumn(Frozen):
    """A diagnostic column set aside: some of its values are ones the column cannot hold, so
    every figure read from it is "not measured" (never the SOP figures, never another column's)."""

    column: str = Field(description="The column as the capture names it, e.g. MsPCLatency.")
    reason: UnusableReason = Field(
        description="wrap_around: about 2^64 x 100 ns (a FrameView defect); not_finite: NaN or "
                    "infinity written as a number; out_of_range: beyond 1e7 either way.")
    frames: int = Field(description="Frames whose value has this reason.")
    of_frames: int = Field(description="Frames of the capture.")
    first_frame: int = Field(description="The first such frame, 1-based, in the capture's order.")
ErratumEffect = Literal["refuse", "warn", "none"]
"""What a known tool defect means for certgen's figures (certgen/captures/errata.yaml)."""


class CaptureErratum(Frozen):
    """A known defect of the capture's tool version in a column certgen read from it: a
    capture-check finding (`runs[].capture.errata`, `metrics --json` `errata`)."""

    id: str = Field(description="The entry's id in certgen's errata file.")
    tool: str = Field(description="The tool, as certgen's format table names it.")
    version: str = Field(description="The capture's tool version that matched.")
    versions: str = Field(description='The affected versions, e.g. "2.5.0 to before 2.5.1".')
    columns: tuple[str, ...] = Field(description="The affected columns certgen read.")
    defect: str = Field(description="What is wrong, in certgen's words (English).")
    source: str = Field(description="Where the defect is documented (a URL).")
    effect: ErratumEffect = Field(description="refuse | warn | none, for certgen's figures.")


class CaptureInfo(WithLaterKeys):
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
    unusable_columns: tuple[UnusableColumn, ...] = Field(
        default=(),
        description="Diagnostic columns set aside (their figures not measured), by column and "
                    "reason; absent when none was (and in records of an older certgen).")

    errata: tuple[CaptureErratum, ...] | None = Field(
        default=None, description="Known defects of the capture's tool version in a column "
                                  "certgen read (certgen's errata file), each a capture-check "
                                  "finding; empty when none matches or no version is known "
                                  "(absent in records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("incomplete_detail", "tool", "tool_version",
                                             "duration_s", "unusable_columns", "errata")


RECORDED_MAX: Final = 200
"""Longest value a `Recorded` field holds: a longer one is cut to this many characters, the last
being `…` (docs/spec/captures.md, What a capture records)."""


RecordedText = Annotated[str, Field(min_length=1, max_length=RECORDED_MAX)]
"""A value as a capture wrote it: trimmed, not empty, at most RECORDED_MAX characters."""


class Recorded(Frozen):
    """What a capture itself records about the system and the capture, each value as the file
    wrote it (trimmed; cut at RECORDED_MAX characters), or None where its format does not
    record it (docs/spec/captures.md, What a capture records). Never guessed, defaulted or
    normalised: holding it against card.yaml (normalised for comparison) is another step's."""

    gpu: RecordedText | None = Field(default=None, description="The GPU, or null.")
    driver: RecordedText | None = Field(default=None, description="The GPU driver, or null.")
    os: RecordedText | None = Field(default=None, description="The operating system, or null.")
    cpu: RecordedText | None = Field(default=None, description="The CPU, or null.")
    ram: RecordedText | None = Field(default=None, description="The system memory, or null.")
    motherboard: RecordedText | None = Field(default=None, description="The motherboard, or null.")
    resolution: RecordedText | None = Field(default=None, description="The resolution, or null.")
    runtime: RecordedText | None = Field(
        default=None, description="The graphics API or present runtime, or null.")
    captured_at: RecordedText | None = Field(
        default=None, description="When the capture was made, as written (never parsed), or null.")
    tool: RecordedText | None = Field(default=None, description="The capture tool, or null.")
    tool_version: RecordedText | None = Field(
        default=None, description="The capture tool's version, or null.")
    game: RecordedText | None = Field(default=None, description="The game, or null.")

    @model_validator(mode="after")
    def _trimmed(self) -> Recorded:
        for name, value in self:
            if isinstance(value, str) and value != value.strip():
                raise ValueError(f"{name}: expected a trimmed value, got {value[:40]!r}")
        return self

