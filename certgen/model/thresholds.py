"""The thresholds a grade was computed by (from the versioned SOP rules file) and the calibration
statement every document prints.
"""

from __future__ import annotations

from pydantic import Field

from certgen.model.base import Frozen


class Weights(Frozen):
    """`rules.weights`: the Fluidity Score weights."""

    consistency_gap: float = Field(description="Weight of the consistency gap g.")
    stutter: float = Field(description="Weight of the stutter s.")


class RulesBlock(Frozen):
    """`rules`: the thresholds that were applied (from the versioned SOP rules file)."""

    sop: str = Field(description="The SOP these rules implement.")
    weights: Weights = Field(description="Fluidity Score weights.")
    gold_line: float = Field(description="Every measured tier's mean must reach this for GOLD.")
    platinum_line: float = Field(description="One measured tier must reach this for PLATINUM.")
    soft_limit_stutter: float = Field(description="Stutter above this raises the Soft Limit.")
    rerun_stutter: float = Field(description="Stutter above this requires a re-run.")
    ranking_min_cohort: int = Field(description="Cohort size from which percentiles are published.")
    calibrated: bool = Field(description="Whether the thresholds are calibrated against the fleet.")
    calibration_fleet_target: int = Field(description="Certified cards needed for calibration.")
    file: str | None = Field(
        default=None, description="The rules file's name, e.g. sop-gpu-001-v1.1.yaml (absent in "
                                  "records of an older certgen).")
    sha256: str | None = Field(
        default=None, description="SHA-256 of the rules file: the exact rules the grade was "
                                  "computed by (absent in records of an older certgen).")


class CalibrationStatement(Frozen):
    """`calibration.statement`: the calibration status in each language (from the SOP file)."""

    en: str = Field(description="English.")
    pt: str = Field(description="Portuguese.")
    ru: str = Field(description="Russian.")


class Calibration(Frozen):
    """`calibration`: whether the thresholds are calibrated, and the statement to print."""

    calibrated: bool = Field(description="Whether the thresholds are calibrated.")
    fleet_target: int = Field(description="Certified cards needed for calibration.")
    statement: CalibrationStatement = Field(description="The statement every document prints.")
