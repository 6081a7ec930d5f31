"""How sure a figure is: the measurement interval of one capture's SOP figures
(certgen.metrics.uncertainty, docs/spec/uncertainty.md). A note beside the figures, never graded."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, model_validator

from certgen.model.base import Frozen
from certgen.model.figures import RunMetrics

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


# --------------------------------------------------------------------------- how sure a grade is
# record.json `uncertainty` and `check --json` `gate_margins` (issue 41, names pinned):
# certgen.rules.uncertainty computes them, docs/spec/uncertainty.md says how.

DecisionRule = Literal["simple acceptance"]
"""The decision rules a rules file may name (ILAC-G8:09/2019 §4.2.1: a gate is met when the
measured value reaches the line, no guard band). SOP-GPU-001 v1.1 prescribes this one."""

GateVerdict = Literal["pass", "conditional pass", "conditional fail", "fail", "not estimated"]
"""ILAC-G8 §4.2.3's non-binary statement of a gate's margin, guard band = the half-width."""


class GateMargin(Frozen):
    """One gate on one measured tier: its signed margin to the line and, where repeats allow,
    the tier mean's interval and the non-binary verdict. A note beside the SOP grade, never a
    gate."""

    gate: Literal["gold", "platinum"] = Field(description="The grade line compared.")
    tier: str = Field(description="The tier's output resolution.")
    line: float = Field(description="The line (rules file).")
    mean: float = Field(description="The tier's mean Fluidity Score, as the SOP grades it.")
    margin: float = Field(description="mean − line, 2 dp (signed: negative is under it).")
    interval: Pair | None = Field(
        description="The 95 % interval of the tier mean over repeated captures, 2 dp; null when "
                    "not estimated.")
    verdict: GateVerdict = Field(description="pass, conditional pass, conditional fail, fail, "
                                             "or not estimated.")
    reason: str | None = Field(description="Why not estimated (English), else null.")

    @model_validator(mode="after")
    def _verdict_of_interval(self) -> GateMargin:
        if (self.interval is None) != (self.verdict == "not estimated"):
            raise ValueError("a gate has an interval exactly when it has a verdict")
        if (self.reason is None) == (self.verdict == "not estimated"):
            raise ValueError("a gate has a reason exactly when it is not estimated")
        return self


class FigureSpread(Frozen):
    """One SOP figure over a run's captures (the recorded one first, then the repeats)."""

    figure: str = Field(description="The figure's name, as in `metrics --json`.")
    values: tuple[float | None, ...] = Field(description="Its value in each capture.")
    mean: float | None = Field(description="Mean over the captures; null without two values.")
    sd: float | None = Field(description="Standard deviation (n − 1); null without two values.")
    cv: float | None = Field(description="sd ÷ |mean| (a fraction, 4 dp); null without two "
                                         "values or a mean of 0.")
    spread: Pair | None = Field(description="[lowest, highest] value; null without two values.")
    interval: Pair | None = Field(
        description="95 % t-interval of the expected figure of one capture; null below three "
                    "captures (then `not_estimated` says why).")
    not_estimated: str | None = Field(description="Why there is no interval, or null.")


class RepeatCapture(Frozen):
    """`uncertainty.runs[].repeats[]`: a further capture of the run's configuration (card.yaml
    `runs[].repeats[]`), hashed and measured like the recorded one; never graded."""

    file: str = Field(description="Path inside the bundle.")
    sha256: str = Field(description="SHA-256 of the file.")
    tested_on: str | None = Field(description="The day it was made, YYYY-MM-DD, or null.")
    technician: str | None = Field(description="Who made it, or null.")
    metrics: RunMetrics = Field(description="Its own SOP figures, computed like the recorded "
                                            "capture's.")


class RunRepeats(Frozen):
    """`uncertainty.runs[]`: one recorded run's captures and the spread of each SOP figure."""

    run: int = Field(description="0-based run index.")
    captures: int = Field(description="Captures of the run: the recorded one and its repeats.")
    repeats: tuple[RepeatCapture, ...] = Field(description="The repeats, in card.yaml order.")
    figures: tuple[FigureSpread, ...] = Field(description="Each SOP figure, in FIGURES order; "
                                                          "empty with one capture.")
    within: FigureIntervals = Field(
        description="The recorded capture's within-capture 95 % intervals (studentized block "
                    "bootstrap: from 20,000 frames, never the average; `metrics --interval`'s "
                    "`interval`); they hold no capture-to-capture variation.")
    within_se: float | None = Field(
        description="The recorded capture's within-capture standard error of its Fluidity "
                    "Score, 4 dp; null below 20,000 frames.")


class SecondStage(Frozen):
    """For a conditional verdict: Eurachem/CITAC's second stage, capture the tier's runs again."""

    gate: Literal["gold", "platinum"] = Field(description="The gate.")
    runs: tuple[int, ...] = Field(description="The runs to capture again (0-based).")
    captures: int | None = Field(
        description="Captures per run (in all) that would bring the half-width under the "
                    "distance to the line, at the spread seen; null when no count up to "
                    "`most` would.")
    most: int = Field(description="The largest count considered.")


class TierInterval(Frozen):
    """`uncertainty.tiers[]`: a measured tier's mean over repeated captures, pooled over its
    scored runs."""

    tier: str = Field(description="The tier's output resolution.")
    runs: tuple[int, ...] = Field(description="Its scored runs (0-based).")
    single_capture_runs: tuple[int, ...] = Field(
        description="Its scored runs with one capture (then nothing is estimated).")
    centre: float | None = Field(
        description="Mean over the runs of each run's mean Fluidity Score over its captures, "
                    "2 dp; null when not estimated.")
    half_width: float | None = Field(description="The 95 % half-width, 2 dp; or null.")
    interval: Pair | None = Field(description="[centre − half-width, centre + half-width] or "
                                              "null.")
    df: float | None = Field(description="Welch–Satterthwaite degrees of freedom, 2 dp; or null.")
    within_used: tuple[int, ...] = Field(
        description="Runs whose within-capture variance exceeded the between-capture one and "
                    "was used instead.")
    reason: str | None = Field(description="Why not estimated (English), or null.")
    second_stage: tuple[SecondStage, ...] = Field(
        description="For each gate whose verdict on the tier is conditional: what to capture "
                    "again.")


class Uncertainty(Frozen):
    """record.json `uncertainty`: the decision rule the grade applies, and how sure it is."""

    decision_rule: DecisionRule = Field(description="The decision rule (rules file).")
    level: float = Field(description="The intervals' level, 0.95.")
    runs: tuple[RunRepeats, ...] = Field(description="Each recorded run, card.yaml order.")
    tiers: tuple[TierInterval, ...] = Field(description="Each measured tier, tier order.")
    gates: tuple[GateMargin, ...] = Field(
        description="Each gate on each measured tier (gold, then platinum; tier order): the "
                    "objects `check --json` prints as `gate_margins`.")
