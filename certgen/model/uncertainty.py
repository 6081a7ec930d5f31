"""How sure a figure is: the measurement interval of one capture's SOP figures
(certgen.metrics.uncertainty, docs/spec/uncertainty.md). A note beside the figures, never graded."""

from __future__ import annotations

from typing import Final

from pydantic import Field, model_validator

from certgen.model.base import Frozen

FIGURES: Final = ("avg_fps", "low_1pct_fps", "low_0_1pct_fps", "consistency_gap", "stutter",
                  "fluidity_score")
"""The SOP figures an interval is given for, in the order of `metrics --json`."""

Pair = tuple[float, float]


class FigureIntervals(Frozen):
    """`metrics --json` `interval` (pinned): each figure's 95 % measurement interval
    [low end, high end], or null exactly when `not_estimated` names the figure and why."""

    level: float = Field(description="The interval's level, 0.95.")
    method: str = Field(description="How the interval was made, in words.")
    resamples: int = Field(description="Bootstrap resamples drawn.")
    block_frames: int | None = Field(
        description="Frames per resampled block; null when nothing was estimated.")
    avg_fps: Pair | None = Field(default=None, description="Average FPS, 1 dp.")
    low_1pct_fps: Pair | None = Field(default=None, description="1% low FPS, 1 dp.")
    low_0_1pct_fps: Pair | None = Field(default=None, description="0.1% low FPS, 1 dp.")
    consistency_gap: Pair | None = Field(default=None, description="Consistency gap g, 4 dp.")
    stutter: Pair | None = Field(default=None, description="Stutter s, 4 dp.")
    fluidity_score: Pair | None = Field(default=None, description="Fluidity Score, 2 dp.")
    not_estimated: dict[str, str] = Field(
        description="Figure → why it has no interval (in FIGURES order).")

    @model_validator(mode="after")
    def _null_exactly_when_not_estimated(self) -> FigureIntervals:
        for figure in FIGURES:
            if (getattr(self, figure) is None) != (figure in self.not_estimated):
                raise ValueError(f"{figure}: an interval is null exactly when it is not "
                                 "estimated")
        unknown = set(self.not_estimated) - set(FIGURES)
        if unknown:
            raise ValueError(f"not_estimated names unknown figures: {sorted(unknown)}")
        return self


class SustainedStability(Frozen):
    """`metrics --json --interval` `stability`: the worst whole minute's average FPS ÷ the
    best's; every figure null, and `not_estimated` saying why, without two whole minutes."""

    block_s: int = Field(description="Seconds per block: 60.")
    blocks: int = Field(description="Whole blocks in the capture (the partial last one left out).")
    worst_fps: float | None = Field(default=None, description="The worst block's average FPS, 1 dp.")
    best_fps: float | None = Field(default=None, description="The best block's average FPS, 1 dp.")
    ratio: float | None = Field(default=None, description="worst_fps / best_fps, 4 dp.")
    reference: float = Field(description="3DMark's 97 % stability mark: a reference, not a rule.")
    not_estimated: str | None = Field(default=None, description="Why there is no ratio, or null.")

    @model_validator(mode="after")
    def _ratio_or_reason(self) -> SustainedStability:
        if (self.ratio is None) == (self.not_estimated is None):
            raise ValueError("stability has a ratio or a reason, never both or neither")
        return self
