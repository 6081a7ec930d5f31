"""How sure is the grade: the decision rule, each gate's margin, and what repeated captures say
(docs/spec/uncertainty.md, issue 41).

The SOP's grade is a statement of conformity: a gate is met when a tier's mean Fluidity Score
reaches its line (simple acceptance, ILAC-G8:09/2019 §4.2.1). ISO/IEC 17025 §7.8.6 asks a report
to name that rule and the risk it carries, so every gate on every measured tier gets its signed
margin (mean − line), which needs no interval.

How far the grade could move is measured by repeating captures of a run's configuration
(card.yaml `runs[].repeats`). The measurand is "the SOP figure of one SOP-length capture of this
configuration"; the recorded capture stays the graded one, the repeats estimate its spread:

- **Per run** (`run_repeats`): each SOP figure's mean, sd (n − 1), CV and, from three captures,
  the 95 % Student-t interval of the expected figure of one capture (mean ± t·sd/√K). Two
  captures give the spread only.
- **Per tier** (`tier_interval`), only when every scored run has two captures or more: the mean
  over runs of each run's mean score, with variance Σ vᵢ/Kᵢ ÷ n², where vᵢ is the larger of the
  run's between-capture variance and its within-capture variance where that is estimated (a
  single capture's studentized bootstrap; the larger, because a handful of captures can agree
  by chance). The degrees of freedom are Welch–Satterthwaite's over the runs' Kᵢ − 1.
- **Per gate** (`gate_verdict`): ILAC-G8 §4.2.3's non-binary statement with a guard band equal to
  the half-width: pass (the whole interval at or above the line: a wrong "pass" has 2.5 %
  risk nominally, one tail of the 95 % interval; 0.6–4.0 % measured on skewed simulated
  scores, so documents say "under 5 %"), conditional pass (the centre at or above the line,
  the interval reaching under it), conditional fail (the centre under, the interval reaching the
  line), fail (the whole interval under). A verdict is a note beside the SOP grade, never a gate.
  A conditional verdict gets the second stage (Eurachem/CITAC): capture the tier's runs again,
  with the count of captures per run at which the half-width would fall under the distance
  between the centre and the line, at the spread seen.

Pure functions: figures in, the record's `Uncertainty` out. verify calls `uncertainty_of` on a
record's own figures to re-derive every number of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Literal, cast

from certgen.metrics.figures import round_half_away
from certgen.metrics.uncertainty import STUDENTIZED_METHOD, t_quantile
from certgen.model.figures import RunMetrics
from certgen.model.uncertainty import (
    FIGURES,
    DecisionRule,
    FigureIntervals,
    FigureSpread,
    GateMargin,
    GateVerdict,
    Pair,
    RepeatCapture,
    RunRepeats,
    SecondStage,
    TierInterval,
    Uncertainty,
)
from certgen.model.verdict import Tier
from certgen.sop import Rules

LEVEL: Final = 0.95
_NOT_MEASURED: Final = FigureIntervals(
    level=0.95, method=STUDENTIZED_METHOD, resamples=0, block_frames=None,
    not_estimated=dict.fromkeys(FIGURES, "no frame times: not measured"))
"""A run whose within-capture intervals were not computed (a record read back is never
recomputed without its captures)."""
DIGITS: Final[dict[str, int]] = {"avg_fps": 2, "low_1pct_fps": 2, "low_0_1pct_fps": 2,
                                 "consistency_gap": 4, "stutter": 4, "fluidity_score": 2}
"""Decimals a figure's mean, sd and interval are given to (one more than the SOP prints FPS
with: a mean of repeats is finer than one capture)."""
MOST_CAPTURES: Final = 20
"""The largest captures-per-run count the second stage considers."""

Gate = Literal["gold", "platinum"]


def _mean(values: Sequence[float]) -> float:
    """Exact in decimal, as the tier means are (certgen.rules.verdict.mean_score)."""
    total = sum((Decimal(repr(v)) for v in values), Decimal(0))
    return float(total / len(values))


def _variance(values: Sequence[float]) -> float:
    centre = _mean(values)
    return math.fsum((v - centre) ** 2 for v in values) / (len(values) - 1)


def _pair(lo: float, hi: float, digits: int) -> Pair:
    return (round_half_away(lo, digits) + 0.0, round_half_away(hi, digits) + 0.0)


# --------------------------------------------------------------------------- per run


def figure_spread(figure: str, values: Sequence[float | None]) -> FigureSpread:
    """One figure over a run's captures: mean, sd, CV, spread and (from three values) the 95 %
    t-interval of the expected figure of one capture."""
    digits = DIGITS[figure]
    given = [v for v in values if v is not None]
    k = len(given)
    if k < 2:
        few = (f"{k} of {len(values)} captures have this figure; a spread needs two"
               if len(values) >= 2 else "one capture")
        return FigureSpread(figure=figure, values=tuple(values), mean=None, sd=None, cv=None,
                            spread=None, interval=None, not_estimated=few)
    centre = _mean(given)
    sd = math.sqrt(_variance(given))
    cv = None if centre == 0 else round_half_away(sd / abs(centre), 4)
    interval: Pair | None = None
    why: str | None = None
    if k >= 3:
        half = t_quantile(k - 1) * sd / math.sqrt(k)
        interval = _pair(centre - half, centre + half, digits)
    else:
        why = "interval not estimated (2 captures)"
    return FigureSpread(figure=figure, values=tuple(values),
                        mean=round_half_away(centre, digits) + 0.0,
                        sd=round_half_away(sd, digits) + 0.0, cv=cv,
                        spread=_pair(min(given), max(given), digits),
                        interval=interval, not_estimated=why)


def run_repeats(run: int, recorded: RunMetrics, repeats: Sequence[RepeatCapture],
                within: FigureIntervals, within_se: float | None) -> RunRepeats:
    """A recorded run's captures (its recorded one first), each SOP figure's spread, and the
    recorded capture's within-capture intervals."""
    every = [recorded, *(r.metrics for r in repeats)]
    figures = () if not repeats else tuple(
        figure_spread(name, [getattr(m, name) for m in every]) for name in FIGURES)
    return RunRepeats(run=run, captures=len(every), repeats=tuple(repeats), figures=figures,
                      within=within, within_se=within_se)


# --------------------------------------------------------------------------- per tier


@dataclass(frozen=True)
class RunScores:
    """One scored run as the tier interval takes it: its scores over its captures (recorded
    first) and, where estimated, the within-capture standard error of its recorded score."""

    run: int
    scores: tuple[float, ...]
    within_se: float | None = None


def run_variance(scores: Sequence[float], within_se: float | None) -> tuple[float, bool]:
    """(vᵢ, whether the within-capture variance was the larger): the variance of one capture's
    score, the larger of the between-capture estimate (n − 1) and within_se² where given."""
    between = _variance(scores)
    if within_se is not None and within_se**2 > between:
        return within_se**2, True
    return between, False


def _half_width(parts: Sequence[tuple[float, int]], runs: int) -> tuple[float, float | None]:
    """(half-width, df) of the mean over `runs` runs of run means, from (vᵢ, Kᵢ) per run."""
    shares = [v / k for v, k in parts]
    total = math.fsum(shares)
    if total == 0.0:
        return 0.0, None  # every capture of every run scored the same: nothing to spread
    df = total**2 / math.fsum(s**2 / (k - 1) for s, (_, k) in zip(shares, parts, strict=True))
    return t_quantile(df) * math.sqrt(total) / runs, df


def tier_interval(tier: Tier, runs: Sequence[RunScores]) -> tuple[TierInterval, float | None,
                                                                   float | None]:
    """The tier mean's 95 % interval over repeated captures, pooled over its scored runs; with
    the unrounded centre and half-width (the verdicts and the second stage use them)."""
    members = tuple(r.run for r in runs)
    single = tuple(r.run for r in runs if len(r.scores) < 2)
    empty = TierInterval(tier=tier.resolution, runs=members, single_capture_runs=single,
                         centre=None, half_width=None, interval=None, df=None, within_used=(),
                         reason=None, second_stage=())
    if single:
        listed = ", ".join(str(i + 1) for i in single)
        words = "run {} has" if len(single) == 1 else "runs {} have"
        return empty.model_copy(update={"reason": (
            f"{words.format(listed)} one capture; an interval for tier {tier.resolution} needs "
            "two captures or more of every scored run")}), None, None
    parts = []
    used = []
    for r in runs:
        v, within = run_variance(r.scores, r.within_se)
        parts.append((v, len(r.scores)))
        if within:
            used.append(r.run)
    centre = _mean([_mean(r.scores) for r in runs])
    half, df = _half_width(parts, len(runs))
    return empty.model_copy(update={
        "centre": round_half_away(centre, 2) + 0.0,
        "half_width": round_half_away(half, 2) + 0.0,
        "interval": _pair(centre - half, centre + half, 2),
        "df": None if df is None else round_half_away(df, 2),
        "within_used": tuple(used),
    }), centre, half


def captures_needed(parts: Sequence[float], runs: int, distance: float,
                    most: int = MOST_CAPTURES) -> int | None:
    """The fewest captures per run (the same for every run, above two) at which the tier's
    half-width, at the run variances `parts`, falls under `distance`; None when no count up to
    `most` does (or the centre sits on the line)."""
    if distance <= 0.0:
        return None
    for k in range(2, most + 1):
        half, _ = _half_width([(v, k) for v in parts], runs)
        if half < distance:
            return k
    return None


# --------------------------------------------------------------------------- per gate


def gate_verdict(interval: Pair, line: float) -> GateVerdict:
    """ILAC-G8 §4.2.3 with a guard band equal to the half-width, on a lower line (a gate is met
    at or above it): the verdict follows from the interval's ends and its centre alone."""
    lo, hi = interval
    centre = (lo + hi) / 2
    if lo >= line:
        return "pass"
    if hi < line:
        return "fail"
    return "conditional pass" if centre >= line else "conditional fail"


def uncertainty_of(tiers: Sequence[Tier], recorded: Sequence[tuple[int, str, RunMetrics]],
                   repeats: dict[int, Sequence[RepeatCapture]], rules: Rules,
                   within: dict[int, tuple[FigureIntervals, float | None]] | None = None,
                   ) -> Uncertainty:
    """The record's `uncertainty`: from the tiers the rules graded, each recorded run's
    (index, resolution, figures), each run's repeats, and each recorded capture's
    within-capture intervals and score standard error (metrics.uncertainty.within_intervals;
    absent: not estimated). The pipeline and verify both call it."""
    within = within or {}
    within_se = {i: se for i, (_, se) in within.items() if se is not None}
    runs = tuple(run_repeats(i, m, repeats.get(i, ()),
                             *within.get(i, (_NOT_MEASURED, None))) for i, _, m in recorded)
    tier_rows: list[TierInterval] = []
    gates: dict[Gate, list[GateMargin]] = {"gold": [], "platinum": []}
    lines: dict[Gate, float] = {"gold": rules.gold_line, "platinum": rules.platinum_line}
    for tier in tiers:
        if not tier.measured or tier.mean_fluidity is None:
            continue
        scored = [
            RunScores(i, tuple(s for s in (m.fluidity_score,
                                           *(r.metrics.fluidity_score
                                             for r in repeats.get(i, ()))) if s is not None),
                      within_se.get(i))
            for i, resolution, m in recorded
            if resolution == tier.resolution and m.fluidity_score is not None]
        row, centre, half = tier_interval(tier, scored)
        stages = []
        for gate in ("gold", "platinum"):
            line = lines[gate]
            if row.interval is None:
                verdict: GateVerdict = "not estimated"
            else:
                verdict = gate_verdict(row.interval, line)
            gates[gate].append(GateMargin(
                gate=gate, tier=tier.resolution, line=line, mean=tier.mean_fluidity,
                margin=round_half_away(tier.mean_fluidity - line, 2) + 0.0,
                interval=row.interval, verdict=verdict, reason=row.reason))
            if verdict.startswith("conditional") and centre is not None and half is not None:
                parts = [run_variance(r.scores, r.within_se)[0] for r in scored]
                stages.append(SecondStage(
                    gate=gate, runs=row.runs,
                    captures=captures_needed(parts, len(scored), abs(centre - line)),
                    most=MOST_CAPTURES))
        tier_rows.append(row.model_copy(update={"second_stage": tuple(stages)}))
    return Uncertainty(decision_rule=cast(DecisionRule, rules.decision_rule), level=LEVEL, runs=runs, tiers=tuple(tier_rows),
                       gates=(*gates["gold"], *gates["platinum"]))


# --------------------------------------------------------------------------- re-derivation


def recorded_runs(runs: Sequence[tuple[int, str, str, RunMetrics | None]]
                  ) -> list[tuple[int, str, RunMetrics]]:
    """(index, resolution, figures) of the recorded runs, from (index, resolution, status,
    metrics) of every run: what uncertainty_of takes, as the pipeline and verify both read it."""
    return [(i, resolution, m) for i, resolution, status, m in runs
            if status == "recorded" and m is not None]


@dataclass(frozen=True)
class Finding:
    """One finding of the uncertainty checks: its English sentence, and its kind and values for
    a reader that words it in another language (`certgen verify` prints it in the PDF's)."""

    text: str
    kind: str
    values: tuple[tuple[str, str], ...] = ()


def _found(kind: str, text: str, **values: object) -> Finding:
    return Finding(text, kind, tuple((k, str(v)) for k, v in values.items()))


def uncertainty_problems(stated: Uncertainty | None, tiers: Sequence[Tier],
                         runs: Sequence[tuple[int, str, RunMetrics]], rules: Rules) -> list[str]:
    """uncertainty_findings in English."""
    return [f.text for f in uncertainty_findings(stated, tiers, runs, rules)]


def uncertainty_findings(stated: Uncertainty | None, tiers: Sequence[Tier],
                         runs: Sequence[tuple[int, str, RunMetrics]],
                         rules: Rules) -> list[Finding]:
    """What of a record's `uncertainty` does not follow from its own figures under its rules
    (`certgen verify`): every number is derived again from the tiers, the recorded runs'
    figures and the repeats' figures the record holds. Empty: all of it follows. A record of an
    older certgen has no `uncertainty`: nothing to check."""
    if stated is None:
        return []
    # One capture's within-capture intervals need its frames: taken as stated here, computed
    # again from the capture with --bundle (repeat_differences).
    within = {r.run: (r.within, r.within_se) for r in stated.runs}
    derived = uncertainty_of(tiers, runs, {r.run: r.repeats for r in stated.runs if r.repeats},
                             rules, within)
    problems: list[Finding] = []
    if stated.decision_rule != derived.decision_rule or stated.level != derived.level:
        problems.append(_found(
            "rule", f"uncertainty: decision rule {stated.decision_rule!r} at {stated.level} "
            f"does not follow from the rules ({derived.decision_rule!r} at {derived.level})",
            stated_rule=repr(stated.decision_rule), stated_level=stated.level,
            rule=repr(derived.decision_rule), level=derived.level))
    for label, mine, theirs in (("runs", stated.runs, derived.runs),
                                ("tiers", stated.tiers, derived.tiers),
                                ("gates", stated.gates, derived.gates)):
        if len(mine) != len(theirs):
            problems.append(_found(
                "count", f"uncertainty.{label}: {len(mine)} entries, the figures give "
                f"{len(theirs)}", part=label, count=len(mine), derived=len(theirs)))
            continue
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            if a != b:
                keys = [k for k in type(a).model_fields if getattr(a, k) != getattr(b, k)]
                problems.append(_found(
                    "fields", f"uncertainty.{label}[{i}]: {', '.join(keys)} do not follow "
                    "from the record's figures", part=label, index=i, fields=", ".join(keys)))
    return problems


def repeat_differences(stated: Uncertainty | None, again: Uncertainty | None) -> list[str]:
    """repeat_findings in English."""
    return [f.text for f in repeat_findings(stated, again)]


def repeat_findings(stated: Uncertainty | None, again: Uncertainty | None) -> list[Finding]:
    """What differs between the repeats a record cites and the bundle's, read again
    (`certgen verify --bundle`): each repeat's file, SHA-256 and figures recomputed from its
    capture, and each run's within-capture standard error."""
    mine = {r.run: r for r in (stated.runs if stated else ())}
    theirs = {r.run: r for r in (again.runs if again else ())}
    problems: list[Finding] = []
    for run in sorted(set(mine) | set(theirs)):
        a, b = mine.get(run), theirs.get(run)
        cited = () if a is None else a.repeats
        found = () if b is None else b.repeats
        if len(cited) != len(found):
            problems.append(_found(
                "repeat-count", f"run {run + 1}: the record cites {len(cited)} repeats, the "
                f"bundle has {len(found)}", run=run + 1, count=len(cited), found=len(found)))
            continue
        for j, (x, y) in enumerate(zip(cited, found, strict=True)):
            if (x.file, x.sha256) != (y.file, y.sha256):
                problems.append(_found(
                    "repeat-sha256", f"run {run + 1}: repeat {x.file} has SHA-256 {y.sha256} in "
                    f"the bundle ({y.file}), the record's is {x.sha256}", run=run + 1,
                    file=x.file, sha256=y.sha256, found=y.file, recorded=x.sha256))
            elif x.metrics != y.metrics:
                keys = [k for k in RunMetrics.model_fields
                        if getattr(x.metrics, k) != getattr(y.metrics, k)]
                problems.append(_found(
                    "repeat-figures", f"run {run + 1}: repeat {j + 1} ({x.file}): "
                    f"{', '.join(keys)} recomputed differently", run=run + 1, number=j + 1,
                    file=x.file, fields=", ".join(keys)))
        if a is not None and b is not None and (a.within, a.within_se) != (b.within,
                                                                            b.within_se):
            problems.append(_found(
                "within", f"run {run + 1}: the within-capture intervals recomputed differently",
                run=run + 1))
    return problems
