"""The figures of one capture: the SOP metrics and diagnostics (certgen.metrics.figures) and the frame
generation and display diagnostics (certgen.metrics.framegen).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, JsonValue

from certgen.model.base import Frozen, WithLaterKeys


class RunMetrics(Frozen):
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

    # The public API (docs/api.md) has promised `figures.sop.<figure>` and `.as_json()` since
    # certgen 0.1; both stay, and nothing inside certgen uses them.
    @property
    def sop(self) -> RunMetrics:
        """The same figures (`figures.sop.avg_fps` is `figures.avg_fps`), for the public API."""
        return self

    def as_json(self) -> dict[str, JsonValue]:
        """The pinned keys of `certgen metrics --json`, in order (`model_dump(mode="json")`)."""
        data: dict[str, JsonValue] = self.model_dump(mode="json")
        return data


class DiagnosticFigures(Frozen):
    """SOP arithmetic over another set of intervals (diagnostic, not graded)."""

    frames: int = Field(description="Intervals counted (after dropping t <= 0).")
    avg_fps: float | None = Field(description="Time-weighted average FPS, 1 dp.")
    low_1pct_fps: float | None = Field(description="1% low FPS (slowest-k), 1 dp.")
    low_0_1pct_fps: float | None = Field(description="0.1% low FPS (slowest-k), 1 dp.")
    consistency_gap: float | None = Field(description="1 - 1% low / average, 4 dp.")
    stutter: float | None = Field(description="1 - 0.1% low / 1% low, 4 dp.")


class FrameTypeCount(Frozen):
    """Frames of one FrameType value."""

    frame_type: str = Field(description='The type as the tool wrote it, e.g. "Application".')
    frames: int = Field(description="Frames of that type.")


class FrameGenerationDiagnostic(Frozen):
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


class DisplayDiagnostic(Frozen):
    """`runs[].frame_diagnostics.display`: the figures over display-change intervals."""

    column: str = Field(description="The column read, e.g. MsBetweenDisplayChange.")
    not_displayed: int = Field(description="Frames with no display change (0 or NA), left out.")
    figures: DiagnosticFigures | None = Field(
        description="The figures over the positive intervals; null without one.")


class PerSecondRange(Frozen):
    """The lowest and highest of a figure taken per second of a capture."""

    min: float = Field(description="The lowest per-second value, 2 dp.")
    max: float = Field(description="The highest per-second value, 2 dp.")


class FrameGenerationObserved(Frozen):
    """What the capture shows of frame generation, on the scale of card.yaml's modes
    (`metrics --json` per capture `frame_generation`; `runs[].frame_diagnostics.
    frame_generation_observed`; docs/spec/metrics.md, "Frame-generation mode")."""

    observed_multiplier: float | None = Field(
        description="Frames shown per application frame: (application + generated) / "
                    "application frames of the FrameType column, 2 dp (1.00: no frame "
                    "generated; 2.00: one generated frame per rendered one, a 2x mode); null "
                    "when the capture does not show it (see not_shown).")
    per_second: PerSecondRange | None = Field(
        description="The same ratio taken over each whole second of the capture (by the "
                    "application frames' time), its lowest and highest: the spread a dynamic "
                    "mode shows; null without a whole second with an application frame.")
    not_shown: str | None = Field(
        description='Why no multiplier is given ("not shown by this capture: …"), or null.')


class FrameDiagnostics(WithLaterKeys):
    """`runs[].frame_diagnostics`: frame generation and display timing, diagnostic and never
    graded (docs/spec/metrics.md); each null when the capture lacks its column."""

    frame_generation: FrameGenerationDiagnostic | None = Field(
        description="From FrameType; null without that column.")
    display: DisplayDiagnostic | None = Field(
        description="From the display-change column; null without one.")
    frame_generation_observed: FrameGenerationObserved | None = Field(
        default=None, description="The frame-generation multiplier the capture shows (the "
                                  "object `metrics --json` gives as `frame_generation`); absent "
                                  "in records of an older certgen.")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("frame_generation_observed",)
