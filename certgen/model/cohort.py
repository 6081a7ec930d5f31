"""A run's standing in its cohort (certgen.fleet) and the certificate's fleet comparison.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final, Literal, NamedTuple, cast, get_args

from pydantic import Field, JsonValue, SerializerFunctionWrapHandler, model_serializer

from certgen.model.base import Frozen


class Rank(Frozen):
    """A run's standing in its cohort for one metric."""

    percentile: float | None = Field(
        description="Share of the other cohort runs it strictly beats; null when provisional.")
    n: int = Field(description="Cohort size including the run.")
    cohort_mean: float | None = Field(description="Mean over the n values; null when provisional.")
    z: float | None = Field(description="z-score over the n values; null when provisional.")


class Ranks(Frozen):
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


class FleetSection(Frozen):
    """`fleet`: the certificate's fleet comparison (certgen.record.fleet_section)."""

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


FrameGenerationMode = Literal["off", "2x", "3x", "4x", "6x", "dynamic"]
"""card.yaml `runs[].frame_generation_mode`: how many frames the screen gets per frame the game
renders (2x: one generated frame per rendered one), or `dynamic` where the driver changes the
multiplier during the run."""

FRAME_GENERATION_MODES: Final[tuple[FrameGenerationMode, ...]] = get_args(FrameGenerationMode)

MODE_MULTIPLIERS: Final[dict[FrameGenerationMode, int]] = {"2x": 2, "3x": 3, "4x": 4, "6x": 6}
"""The frames shown per rendered frame of each fixed mode."""


@lru_cache(maxsize=4096)
def _cohort_key(fields: tuple[str | bool | None, ...]) -> str:
    # Cached: an import computes the key of every row, and a fleet has few cohorts.
    return json.dumps(list(fields), ensure_ascii=False, separators=(",", ":"))


class _CohortFields(NamedTuple):
    title: str
    resolution: str
    preset: str
    ray_tracing: bool
    upscaler: str
    upscaler_mode: str | None
    frame_generation: bool
    frame_generation_mode: FrameGenerationMode | None


class Cohort(_CohortFields):
    """The configuration key: runs are ranked only against runs with an identical one. The one
    cohort type of the record, the rules, the pipeline and the fleet.

    `frame_generation_mode` is "off" exactly when `frame_generation` is false; with frame
    generation on it is the declared mode, or None: on, mode not stated (a card or a fleet row
    from before modes were declared). It is never guessed: left out, it is derived from
    `frame_generation` (off, or not stated), and a mode that contradicts it is a ValueError.
    """

    __slots__ = ()

    def __new__(cls, title: str, resolution: str, preset: str, ray_tracing: bool,
                upscaler: str, upscaler_mode: str | None, frame_generation: bool,
                frame_generation_mode: FrameGenerationMode | None = None) -> Cohort:
        if not frame_generation:
            if frame_generation_mode not in (None, "off"):
                raise ValueError(f"frame_generation_mode {frame_generation_mode!r} with "
                                 "frame_generation off")
            frame_generation_mode = "off"
        elif frame_generation_mode == "off":
            raise ValueError("frame_generation_mode 'off' with frame_generation on")
        return super().__new__(cls, title, resolution, preset, ray_tracing, upscaler,
                               upscaler_mode, frame_generation, frame_generation_mode)

    def _replace(self, **changes: Any) -> Cohort:
        """A copy with some fields changed, through the constructor (a new frame_generation
        without a mode derives the mode again)."""
        fields = self._asdict()
        if "frame_generation" in changes and "frame_generation_mode" not in changes:
            fields["frame_generation_mode"] = None
        fields.update(changes)
        return Cohort(**fields)

    @classmethod
    def from_key(cls, fields: Sequence[object]) -> Cohort:
        """The cohort a key's JSON array names (the inverse of key()); a ValueError if it is not
        one."""
        if len(fields) != 7:
            raise ValueError(f"a cohort key has 7 fields, got {len(fields)}")
        t, r, p, rt, up, mode, fg = fields
        if not (isinstance(t, str) and isinstance(r, str) and isinstance(p, str)
                and isinstance(rt, bool) and isinstance(up, str)
                and (mode is None or isinstance(mode, str))):
            raise ValueError(f"not a cohort key: {list(fields)!r}")
        if isinstance(fg, bool):
            return cls(t, r, p, rt, up, mode, fg)
        if fg in MODE_MULTIPLIERS or fg == "dynamic":
            return cls(t, r, p, rt, up, mode, True, fg)
        raise ValueError(f"not a frame-generation mode: {fg!r}")

    @property
    def frame_generation_token(self) -> str | bool:
        """The key's last field: the declared mode, or (off, or on with no mode stated) the
        frame_generation flag itself, so a key from before modes existed is unchanged and an
        older fleet is never re-keyed."""
        mode = self.frame_generation_mode
        return self.frame_generation if mode in (None, "off") else cast("str", mode)

    def key(self) -> str:
        """An unambiguous text key (a JSON array), stored and indexed in the database."""
        return _cohort_key((*self[:6], self.frame_generation_token))

    def line(self) -> str:
        """The record's `runs[].cohort`: 'Cyberpunk 2077|2560x1440|Ultra|rt:off|none|-|fg:off'
        (fg:on with no mode stated, fg:2x with one)."""
        fg = self.frame_generation_token
        return "|".join([
            self.title, self.resolution, self.preset, "rt:on" if self.ray_tracing else "rt:off",
            self.upscaler, "-" if self.upscaler_mode is None else self.upscaler_mode,
            f"fg:{fg}" if isinstance(fg, str) else ("fg:on" if fg else "fg:off"),
        ])

    def label(self) -> str:
        """One readable line: `Cyberpunk 2077 · 2560x1440 · Ultra · RT off · upscaler none …`,
        ending `FG off`, `FG 2x` or, with frame generation on and no mode stated, `FG on (mode
        not stated)`."""
        mode = f" {self.upscaler_mode}" if self.upscaler_mode else ""
        fg = self.frame_generation_token
        shown = fg if isinstance(fg, str) else ("on (mode not stated)" if fg else "off")
        return (
            f"{self.title} · {self.resolution} · {self.preset} · "
            f"RT {'on' if self.ray_tracing else 'off'} · upscaler {self.upscaler}{mode} · "
            f"FG {shown}"
        )
