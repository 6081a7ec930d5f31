"""`calibration.json`: the fleet calibration review (certgen.fleet.calibration; docs/spec/calibration.md).

Pinned keys (issue 26): `cards`, `runs`, `target_cards`, `lines` {`gold`, `platinum`,
`soft_limit`: {`value`, `fleet_percentile`, `interval`}}, `grade_shares` {grade: share},
`candidates` [{`rules`, `grade_shares`, `changes` [{`certificate_id`, `from`, `to`, `gate`}]}].
Shares and percentiles are 0-100. Every other key is added beside them, never instead."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from pydantic import ConfigDict, Field

from certgen.model.base import Frozen


class LineReview(Frozen):
    """Where one threshold sits in the fleet."""

    name: str = Field(description="gold, platinum or soft_limit.")
    value: float = Field(description="The threshold, as the rules file gives it.")
    values: int = Field(description="How many values it is compared with: tier means (grade "
                                    "lines) or runs' stutter (Soft Limit).")
    fleet_percentile: float | None = Field(
        description="The share (0-100) of those values strictly below the threshold; null "
                    "without a value.")
    interval: list[float] | None = Field(
        description="95 % bootstrap interval of fleet_percentile over the cards (1,000 "
                    "resamples, fixed seed); null without a value.")


class CohortReadiness(Frozen):
    """One of the largest cohorts, against the ranking minimum."""

    cohort: str = Field(description="The cohort, as certificates print it.")
    runs: int
    ranked: bool = Field(description="Whether it reaches the ranking minimum.")


class Readiness(Frozen):
    """How far the fleet is from the SOP's calibration n."""

    cards: int = Field(description="Certified cards (distinct certificate ids).")
    runs: int
    target_cards: int = Field(description="The rules file's calibration_fleet_target.")
    cohorts: int
    cohorts_ranked: int = Field(description="Cohorts at or above the ranking minimum.")
    ranking_minimum: int
    issued_from: str | None = Field(description="Earliest issue date; null: none stated.")
    issued_to: str | None = Field(description="Latest issue date; null: none stated.")
    largest: list[CohortReadiness] = Field(description="The largest cohorts, largest first.")
    published_ranks: dict[str, int] = Field(
        description="Runs that would get a published rank at each ranking minimum (20, 30, 50).")


class Distribution(Frozen):
    """One figure over one group of runs (a resolution tier or a cohort)."""

    figure: str = Field(description="fluidity_score, consistency_gap or stutter.")
    group: str = Field(description="The resolution, or the cohort as certificates print it.")
    runs: int = Field(description="Runs with a value.")
    quantiles: list[float] | None = Field(
        description="The 5th, 25th, 50th, 75th and 95th percentiles (linear interpolation); "
                    "null without a value.")
    histogram_range: list[float] = Field(description="[low, high] of the histogram.")
    histogram: list[int] = Field(description="Runs per equal-width bar (values outside the "
                                             "range in the end bars); empty without a value.")


class SensitivityPoint(Frozen):
    """The grade shares with one grade line moved (the other where the rules put it)."""

    line: str = Field(description="gold or platinum.")
    value: float
    grade_shares: dict[str, float]


class WeightPoint(Frozen):
    """The grade shares with other Fluidity Score weights (S_F from the stored g and s)."""

    consistency_gap: float
    stutter: float
    grade_shares: dict[str, float]


class NearLine(Frozen):
    """A certificate with a tier mean within one point of a grade line."""

    certificate_id: str
    line: str = Field(description="gold or platinum.")
    resolution: str
    tier_mean: float


class GradeChange(Frozen):
    """A certificate whose grade a candidate rules version changes."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False,
                              populate_by_name=True, serialize_by_alias=True)

    certificate_id: str
    from_: str = Field(alias="from", description="Its grade under the current rules.")
    to: str = Field(description="Its grade under the candidate.")
    gate: str = Field(description="The gate whose verdict changes (platinum_one_tier, "
                                  "gold_every_tier).")


ChangeRow = tuple[str, str, str, str]
"""A GradeChange's values in its key order: (certificate_id, from, to, gate)."""


class ChangeList(Sequence[GradeChange]):
    """Every GradeChange of one candidate, by certificate id, held compactly: a million changes
    as GradeChange objects took over 400 MB, so each is made only when it is read (the report
    reads the first few; calibration.json and the CSV stream them all as rows)."""

    __slots__ = ("_count", "_row")

    def __init__(self, count: int, row: Callable[[int], ChangeRow]) -> None:
        self._count = count
        self._row = row
        """The i-th change's row (0 <= i < count), made on demand."""

    def rows(self) -> Iterator[ChangeRow]:
        """Every change as a row, in order (no GradeChange made: the streaming writers')."""
        return (self._row(i) for i in range(self._count))

    def _item(self, i: int) -> GradeChange:
        cert, was, now, gate = self._row(i)
        return GradeChange(certificate_id=cert, **{"from": was}, to=now, gate=gate)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> GradeChange: ...
    @overload
    def __getitem__(self, index: slice) -> list[GradeChange]: ...
    def __getitem__(self, index: int | slice) -> GradeChange | list[GradeChange]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(index)
        return self._item(index % self._count)

    def __iter__(self) -> Iterator[GradeChange]:
        return (self._item(i) for i in range(self._count))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(other) == self._count and all(a == b for a, b in zip(self, other,
                                                                        strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChangeList({self._count} changes)"


class GateTotals(Frozen):
    """How many grades a candidate moves through one gate, each way."""

    up: int
    down: int


class CandidateReview(Frozen):
    """Every certificate re-graded under one candidate rules version."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False,
                              arbitrary_types_allowed=True)

    rules: str = Field(description="The candidate's SOP id, e.g. SOP-GPU-001 v1.2.")
    rules_version: str
    weights_recomputed: bool = Field(
        description="Whether its weights differ, so each run's S_F was recomputed from the "
                    "stored g and s (4 decimals) instead of read.")
    grade_shares: dict[str, float]
    changes: ChangeList = Field(
        exclude=True, description="By certificate id. Not dumped with the model: "
        "certgen.builders.calibration streams it into calibration.json at its pinned place.")
    up: int = Field(description="Changes to a higher grade.")
    down: int = Field(description="Changes to a lower grade.")
    by_gate: dict[str, GateTotals] = Field(
        description="The changes per gate whose verdict changed (platinum_one_tier, "
                    "gold_every_tier), up and down.")


NOT_DERIVED = ("grade caps from other SOP phases", "Soft Limit refusals",
               "re-run audit outcomes")
"""What a fleet row does not hold, so the review's grades are the fluidity gates' alone."""


class CalibrationReview(Frozen):
    """The whole review (calibration.json)."""

    cards: int
    runs: int
    target_cards: int
    lines: dict[str, LineReview] = Field(description="gold, platinum, soft_limit.")
    grade_shares: dict[str, float] = Field(
        description="The share (0-100) of cards at each grade the fluidity gates give.")
    candidates: list[CandidateReview]
    sop: str = Field(description="The SOP the fleet is reviewed under.")
    rules: str = Field(description="Its rules_version.")
    readiness: Readiness
    past_soft_limit: float | None = Field(
        description="The share (0-100) of runs with stutter strictly above the Soft Limit.")
    distributions: list[Distribution]
    sensitivity: list[SensitivityPoint]
    weights: list[WeightPoint]
    near_lines: list[NearLine] = Field(
        description="Certificates with a tier mean within one point of a grade line, per line "
                    "the closest first (then by id), at most 1,000 per line.")
    near_line_counts: dict[str, int] = Field(
        description="How many tier means sit within one point of each line (all of them).")
    not_derived: list[str] = Field(default_factory=lambda: list(NOT_DERIVED),
                                   description="What fleet rows cannot re-derive.")
