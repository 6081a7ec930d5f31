"""A run's standing in its cohort (certgen.fleet) and the certificate's fleet comparison.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Final, NamedTuple

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


@lru_cache(maxsize=4096)
def _cohort_key(fields: tuple[str | bool | None, ...]) -> str:
    # Cached: an import computes the key of every row, and a fleet has few cohorts.
    return json.dumps(list(fields), ensure_ascii=False, separators=(",", ":"))


class Cohort(NamedTuple):
    """The configuration key: runs are ranked only against runs with an identical one."""

    title: str
    resolution: str
    preset: str
    ray_tracing: bool
    upscaler: str
    upscaler_mode: str | None
    frame_generation: bool

    def key(self) -> str:
        """An unambiguous text key (a JSON array), stored and indexed in the database."""
        return _cohort_key(tuple(self))

    def label(self) -> str:
        """One readable line: `Cyberpunk 2077 · 2560x1440 · Ultra · RT off · upscaler none …`."""
        mode = f" {self.upscaler_mode}" if self.upscaler_mode else ""
        return (
            f"{self.title} · {self.resolution} · {self.preset} · "
            f"RT {'on' if self.ray_tracing else 'off'} · upscaler {self.upscaler}{mode} · "
            f"FG {'on' if self.frame_generation else 'off'}"
        )
