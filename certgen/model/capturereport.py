"""One capture's report, as `certgen metrics` prints it and `certgen.api.report_captures`
returns it: what was read, the SOP figures, the diagnostics, what the capture measured and
records, and (when asked) the measurement intervals (docs/api.md, docs/spec/metrics.md).

The model is nested by stage (`figures` is the record's `RunMetrics`, `measured` its
`MeasuredByCapture`); `as_json()` lays it out as `metrics --json`'s pinned keys, flat and in
their order. A key added later is one field here, placed where its key goes.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from certgen.model.base import Frozen
from certgen.model.capture import CaptureErratum, Recorded, UnusableColumn
from certgen.model.figures import FrameDiagnostics, FrameGenerationObserved, RunMetrics
from certgen.model.measured import MeasuredByCapture
from certgen.model.uncertainty import FigureIntervals, SustainedStability


class CaptureReport(Frozen):
    """One run of one capture file, measured (`metrics --json`: one object of the array)."""

    file: str = Field(description="The file as given, plus `#label` for a run of a multi-run file.")
    format: str = Field(description="The format id the file was read as.")
    group: str | None = Field(description="The process group used, or null (no groups).")
    groups_left_out: tuple[str, ...] = Field(description="The other process groups, left out.")
    interval_column: str = Field(description="The column the frame times came from.")
    figures: RunMetrics = Field(description="The SOP figures (flat in the JSON).")
    incomplete: bool = Field(description="Whether the capture ended early or has gaps.")
    incomplete_reason: str | None = Field(description="Why it is incomplete, or null.")
    warnings: tuple[str, ...] = Field(description="The reader's notes and what it counted.")
    frame_diagnostics: FrameDiagnostics = Field(
        description="Frame generation and display timing (diagnostics, not graded).")
    measured: MeasuredByCapture = Field(
        description="What the tool measured beside the intervals (flat in the JSON).")
    frame_generation: FrameGenerationObserved = Field(
        description="The frame-generation multiplier the capture shows, or why not (issue 42, "
                    "pinned); given here, not inside frame_diagnostics.")
    errata: tuple[CaptureErratum, ...] = Field(
        description="Known defects of the tool version the capture records, in a column read "
                    "(issue 42).")
    recorded: Recorded = Field(description="What the file records about the system, as written.")
    unusable_columns: tuple[UnusableColumn, ...] = Field(
        description="Diagnostic columns set aside (their figures not measured), and why: after "
                    "the pinned keys (issue 39).")
    interval: FigureIntervals | None = Field(
        default=None, description="Each figure's measurement interval (only with --interval).")
    stability: SustainedStability | None = Field(
        default=None, description="Sustained stability (only with --interval).")

    FLAT: ClassVar[tuple[str, ...]] = ("figures", "measured")
    """Fields whose keys stand at the report's own level in the JSON (pinned since 0.1)."""
    WHEN_ASKED: ClassVar[tuple[str, ...]] = ("interval", "stability")
    """Fields left out of the JSON when not computed (no `--interval`), never written null."""

    @model_serializer(mode="wrap")
    def _pinned_layout(self, handler: SerializerFunctionWrapHandler) -> dict[str, JsonValue]:
        nested: dict[str, JsonValue] = handler(self)
        out: dict[str, JsonValue] = {}
        for key, value in nested.items():
            if key == "frame_diagnostics" and isinstance(value, dict):
                # The observed multiplier has its own key, `frame_generation` (issue 42).
                value = {k: v for k, v in value.items() if k != "frame_generation_observed"}
            if key in self.FLAT:
                assert isinstance(value, dict) and not set(value) & set(out)  # no key twice
                out.update(value)
            elif key not in self.WHEN_ASKED or value is not None:
                out[key] = value
        return out

    def as_json(self) -> dict[str, JsonValue]:
        """The object `certgen metrics --json` prints for this run, keys in their pinned order."""
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        return data


class RefusedCapture(Frozen):
    """A capture file (or one run of it) that could not be measured, in its place in the
    batch: `metrics --json` prints it as `{"file": ..., "error": ...}`."""

    file: str = Field(description="The file as given (plus `#label` for one run of it).")
    error: str = Field(description="The one-line message, as printed on stderr.")

    def as_json(self) -> dict[str, JsonValue]:
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        return data
