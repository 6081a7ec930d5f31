"""What the capture measured beside the present intervals: latency, animation error, refresh
cadence and the causes of its hitches (certgen.metrics.measured, docs/spec/metrics.md "Measured by the
capture"). Diagnostics, never graded; `metrics --json` keys `latency`, `animation_error`,
`refresh_cadence`, `hitch_causes`, `validity` and `power_thermals` (pinned)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from certgen.model.base import Frozen, WithLaterKeys


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


Presentation = Literal["fullscreen", "windowed"]


class DisplayTiming(WithLaterKeys):
    """card.yaml `test_system.display_timing` (or `metrics --refresh-hz/--vrr/--presentation`):
    the refresh the display ran at, which the refresh-cadence figures need, and how the game
    presented. Declared, never guessed."""

    refresh_hz: float = Field(description="The display's refresh rate (its highest under VRR), Hz.")
    vrr_min_hz: float | None = Field(
        description="Lowest refresh of the variable-refresh window, Hz; null: fixed refresh.")
    vrr_max_hz: float | None = Field(
        description="Highest refresh of the variable-refresh window, Hz; null: fixed refresh.")

    presentation: Presentation | None = Field(
        default=None, description="How the runs were presented, as declared: fullscreen or "
                                  "windowed; null: not declared (absent in records of an older "
                                  "certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("presentation",)

    @property
    def refresh_ms(self) -> float:
        """One refresh interval, ms."""
        return 1000.0 / self.refresh_hz


class HeldShares(Frozen):
    """Fixed refresh: the share of display time of frames held for 1, 2, 3 or more refreshes."""

    one: float = Field(description="Held under 1.5 refresh intervals (0-1, of display time).")
    two: float = Field(description="Held 1.5 to 2.5 refresh intervals.")
    three_or_more: float = Field(description="Held 2.5 refresh intervals or more.")


class VrrShares(Frozen):
    """Variable refresh: the share of display time inside the declared window, below it (the
    display held a frame longer than its lowest refresh allows) and above it."""

    inside: float = Field(description="Display intervals inside [1000/max, 1000/min] ms (0-1).")
    below: float = Field(description="Longer than 1000/min ms: below the window (0-1).")
    above: float = Field(description="Shorter than 1000/max ms: above the window (0-1).")


class RefreshCadence(Frozen):
    """`refresh_cadence`: how the displayed frames met the display's refresh, from the
    display-change intervals. Without a declared display only `frames` and `column` are
    given: every figure that needs the refresh rate is null."""

    column: str = Field(description="The display-change column read, e.g. MsBetweenDisplayChange.")
    frames: int = Field(description="Displayed frames with a display-change interval above 0 ms.")
    refresh_hz: float | None = Field(description="The declared refresh rate, Hz; null: not declared.")
    vrr_min_hz: float | None = Field(description="Declared VRR window low end, Hz; null: none.")
    vrr_max_hz: float | None = Field(description="Declared VRR window high end, Hz; null: none.")
    held: HeldShares | None = Field(
        description="Fixed refresh only: time share held for 1, 2, 3+ refreshes.")
    vrr_window: VrrShares | None = Field(description="VRR only: time share inside / below / above.")
    beyond_refresh_ms_per_min: float | None = Field(
        description="Display time beyond one refresh interval (fixed), or beyond the VRR "
                    "window's longest interval (VRR), per minute of display time, ms.")
    present_display_mismatch_share: float | None = Field(
        description="Share of displayed frames whose present and display-change intervals "
                    "differ by more than half a refresh interval (0-1).")


HitchCause = Literal["cpu", "gpu", "present_wait", "unknown"]


class HitchCauseTotal(Frozen):
    """One cause in the ledger: how many stutter events it explains and their frame time."""

    cause: HitchCause = Field(description="cpu, gpu, present_wait or unknown.")
    events: int = Field(description="Stutter events attributed to it.")
    time_ms: float = Field(description="Their frame times added up, ms.")


class HitchEvent(Frozen):
    """One stutter event with what its columns say (excess: the frame's value minus the median
    of its neighbours; null where the capture has no such column or no value)."""

    frame: int = Field(description="Its position among the run's frames (1-based).")
    at_s: float = Field(description="When it ended, seconds from the start of the run.")
    frame_ms: float = Field(description="Its frame time, ms.")
    surrounding_ms: float = Field(description="The median frame time of its neighbours, ms.")
    cause: HitchCause = Field(description="The attribution (docs/spec/metrics.md, hitch causes).")
    cpu_busy_excess_ms: float | None = Field(description="CPU busy excess, ms.")
    gpu_busy_excess_ms: float | None = Field(description="GPU busy excess, ms.")
    wait_excess_ms: float | None = Field(
        description="CPU wait excess, ms (the CPU waiting on the present queue or the GPU).")


class HitchCauses(Frozen):
    """`hitch_causes`: each stutter event (the diagnostics' rule) attributed from the
    capture's CPU busy, CPU wait and GPU busy columns by a documented rule, never guessed."""

    events: int = Field(description="Stutter events in the run.")
    columns: dict[str, str] = Field(
        description="Role -> the capture column read (cpu_busy, cpu_wait, gpu_busy).")
    neighbours: int = Field(description="Frames on each side whose median is 'surrounding'.")
    share: float = Field(description="Share of the event's excess a column must explain (0-1).")
    ledger: tuple[HitchCauseTotal, ...] = Field(
        description="Per cause, in the order cpu, gpu, present_wait, unknown.")
    top: tuple[HitchEvent, ...] = Field(description="The longest events, longest first.")


ValidityCheck = Literal["generated_zero_interval", "repeated_cpu_start",
                        "composed_presentation", "tearing_with_vrr", "wrapped_interval"]


class ValidityCount(Frozen):
    """What some of a finding's frames carry in the column it reads, and how many."""

    value: str = Field(description="As written, e.g. a frame type or a presentation mode.")
    frames: int = Field(description="Frames with it.")


class ValidityFinding(Frozen):
    """One capture-validity check that found frames (certgen.metrics.validity)."""

    check: ValidityCheck = Field(description="Which check (docs/spec/metrics.md, \"Capture validity\").")
    frames: int = Field(description="Frames it found.")
    of_frames: int = Field(description="The run's frames: every frame time the capture gave.")
    column: str = Field(description="The capture column the check reads.")
    values: tuple[ValidityCount, ...] = Field(
        description="What the frames found carry (frame types, presentation modes), most "
                    "frames first; empty where there is nothing to name.")

    @property
    def named(self) -> str:
        """`values` as one line, e.g. "Composed: Flip ×7, Composed: Copy with GPU GDI ×3"
        (capture text: the documents escape it)."""
        return ", ".join(f"{c.value} ×{c.frames}" for c in self.values)


class CaptureValidity(Frozen):
    """`validity`: the capture-validity checks the capture's columns (and the declared display)
    allow, and what they found. A check that could not run is not in `checked`: never passed."""

    checked: tuple[ValidityCheck, ...] = Field(description="The checks that ran, in rule order.")
    findings: tuple[ValidityFinding, ...] = Field(
        description="The checks that found frames, in rule order (empty: none found any).")


class SensorEnds(Frozen):
    """A sensor FrameView samples per frame, at the run's start and end (a throttling hint)."""

    column: str = Field(description="The capture column read, e.g. GPU0Temp(C).")
    start: float | None = Field(
        description="Median over the frames of the run's first span_s seconds; null: no value.")
    end: float | None = Field(
        description="Median over the frames of the run's last span_s seconds; null: no value.")


class PowerThermals(Frozen):
    """`power_thermals`: FrameView's power and GPU sensors over the run (diagnostics)."""

    power_column: str | None = Field(
        description="The power column read (the first with a value of PCAT Power Total(W), NV "
                    "Pwr(W) (API), AMDPwr(W) (API), GPUOnlyPwr(W) (API)); null: none has one.")
    power_frames: int = Field(description="Frames with a power value above 0 W.")
    avg_power_w: float | None = Field(
        description="Their power weighted by present interval (time-weighted), W; null: none.")
    fps_per_watt: float | None = Field(
        description="The run's time-weighted FPS (every frame, as the SOP's average) divided "
                    "by avg_power_w; null without a power value.")
    span_s: float = Field(description="Seconds at each end of the run the sensor ends cover "
                                      "(half the run when it is shorter than twice that).")
    temperature_c: SensorEnds | None = Field(description="GPU temperature, °C; null: no column.")
    clock_mhz: SensorEnds | None = Field(description="GPU clock, MHz; null: no column.")


class MeasuredByCapture(WithLaterKeys):
    """record.json `runs[].measured`: what the capture measured beside its present intervals,
    as `metrics --json` gives it (each part null where the capture did not measure it)."""

    latency: Latency = Field(description="Latency per kind; each null when not measured.")
    animation_error: AnimationError | None = Field(
        description="Animation error; null when not measured.")
    refresh_cadence: RefreshCadence | None = Field(
        default=None, description="Refresh cadence; null without a display-change column "
                                  "(absent in records of an older certgen).")
    hitch_causes: HitchCauses | None = Field(
        default=None, description="Hitch causes; null without a CPU or GPU busy column "
                                  "(absent in records of an older certgen).")

    validity: CaptureValidity | None = Field(
        default=None, description="Capture-validity checks (absent in records of an older "
                                  "certgen).")
    power_thermals: PowerThermals | None = Field(
        default=None, description="FrameView power and GPU sensors; null without a power, "
                                  "temperature or clock column (absent in records of an older "
                                  "certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("refresh_cadence", "hitch_causes", "validity",
                                             "power_thermals")

    @property
    def any(self) -> bool:
        """Whether the capture measured latency or animation error (the documents show that
        section only then)."""
        lat = self.latency
        return any(x is not None for x in (self.animation_error, lat.pc_latency_ms,
                                           lat.click_to_photon_ms, lat.all_input_to_photon_ms))

    @property
    def validity_or_power(self) -> bool:
        """Whether a capture-validity check found frames, or FrameView recorded power or GPU
        sensors (the documents show that section only then)."""
        found = self.validity is not None and bool(self.validity.findings)
        return found or self.power_thermals is not None

    @property
    def cadence_or_hitches(self) -> bool:
        """Whether there is a refresh cadence against a declared refresh, or a hitch ledger
        (the documents show that section only then)."""
        cadence = self.refresh_cadence
        return (cadence is not None and cadence.refresh_hz is not None) or (
            self.hitch_causes is not None)
