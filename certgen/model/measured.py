"""What the capture measured beside the present intervals: latency and animation error
(certgen.measured, docs/spec/metrics.md "Measured by the capture"). Diagnostics, never graded;
`metrics --json` keys `latency` and `animation_error` (pinned)."""

from __future__ import annotations

from pydantic import Field

from certgen.model.base import Frozen


class LatencySpread(Frozen):
    """One latency column over the displayed frames that carry a value (ms, unrounded)."""

    frames: int = Field(description="Displayed frames with a value above 0 ms (NA and 0: none).")
    median: float = Field(description="Median latency, ms (linear interpolation).")
    p90: float = Field(description="90th percentile, ms (linear interpolation).")
    p99: float = Field(description="99th percentile, ms (linear interpolation).")
    left_out: int = Field(description="Values below 0 ms (no latency can be), left out.")
    column: str = Field(description="The capture column read, e.g. MsPCLatency.")


class Latency(Frozen):
    """`latency` (pinned): each latency the capture measured, null when it did not (the column
    absent, or NA on every displayed frame). Never estimated from the present intervals."""

    pc_latency_ms: LatencySpread | None = Field(
        description="PC latency from the game's latency markers (MsPCLatency).")
    click_to_photon_ms: LatencySpread | None = Field(
        description="Mouse click to photon (MsClickToPhotonLatency).")
    all_input_to_photon_ms: LatencySpread | None = Field(
        description="Any input to photon (MsAllInputToPhotonLatency).")


class AnimationError(Frozen):
    """`animation_error` (pinned): how far each displayed frame's animation time is from where
    its display time says it should be (MsAnimationError), over the frames with a value."""

    frames: int = Field(description="Displayed frames with a value (NA left out).")
    mean_abs_ms: float = Field(description="Mean |error|, ms.")
    p99_abs_ms: float = Field(description="99th percentile of |error|, ms (linear).")
    time_share_over_1ms: float = Field(
        description="Share of those frames' present time with |error| > 1 ms (0–1).")
    time_share_over_4ms: float = Field(
        description="Share of those frames' present time with |error| > 4 ms (0–1).")
    column: str = Field(description="The capture column read: MsAnimationError (AnimationError with --v2_metrics).")


class MeasuredByCapture(Frozen):
    """record.json `runs[].measured`: what the capture measured beside its present intervals,
    as `metrics --json` gives it (each part null where the capture did not measure it)."""

    latency: Latency = Field(description="Latency per kind; each null when not measured.")
    animation_error: AnimationError | None = Field(
        description="Animation error; null when not measured.")

    @property
    def any(self) -> bool:
        """Whether the capture measured any of it (the documents show a section only then)."""
        lat = self.latency
        return any(x is not None for x in (self.animation_error, lat.pc_latency_ms,
                                           lat.click_to_photon_ms, lat.all_input_to_photon_ms))
