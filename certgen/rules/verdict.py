"""The verdict of SOP-GPU-001 (docs/spec/rules.md): tiers, grade gates, Soft Limit, re-run audit.

Pure functions over frozen records: the figures of each run come in (already computed by
certgen.metrics.figures), the thresholds come from the versioned rules file (certgen.sop.Rules), and a
Verdict comes out with its reasoning as data. Nothing here reads a file or a clock.

- A tier is the set of runs with one output resolution; its score is the mean Fluidity Score of
  its scored runs (rounded to 2 decimals, half away from zero). Not-run runs never enter a mean.
- Gates: PLATINUM needs one measured tier >= the platinum line; GOLD and PLATINUM need every
  measured tier >= the gold line; no measured tier caps the grade (SILVER); another SOP phase
  may cap it too. The grade is the highest that every gate allows.
- Soft Limit: a recorded run with stutter strictly above the limit needs a justification and a
  Phase 1 VRM re-examination, else the certificate is refused (naming the run).
- Re-run audit: a recorded run that is incomplete or over the re-run line must come with its
  archived first capture, whose SHA-256 must match the one declared; the first capture is
  scored like a recorded one and its own figures give the reason it was re-run. A first
  capture byte-identical to the recorded one is refused, and so is one capture file (by
  name) backing two runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, cast

from certgen.metrics.figures import round_half_away
from certgen.model.base import GradeName, LocalText
from certgen.model.capture import CaptureInfo
from certgen.model.figures import RunMetrics
from certgen.model.verdict import (
    CaptureUsedTwice,
    FirstCaptureIdentical,
    FirstCaptureSha256Mismatch,
    GateReason,
    Grade,
    GradeCap,
    GradeCapGate,
    LimitingRun,
    LimitingTier,
    MeasuredTierGate,
    RefusalDetail,
    RerunFirstCaptureMissing,
    SoftLimitMissing,
    Tier,
    TierLineGate,
    TierScore,
    WhyDetail,
    WhyIncomplete,
    WhyStutter,
)
from certgen.sop import Rules

CARD_FILE = "card.yaml"

Written = str | Mapping[str, str | None] | LocalText
"""Text a lab writes: a plain string (English) or {language: text} (docs/spec/bundle.md). The
bundle loader has checked every given language's text; a rule asks only whether it is given."""


@dataclass(frozen=True)
class RunFacts:
    """What the rules need to know about one run of the bundle (card.yaml order)."""

    index: int
    title: str
    resolution: str
    recorded: bool
    """False for a run declared `not_run`."""
    fluidity_score: float | None = None
    stutter: float | None = None
    incomplete: bool = False
    incomplete_reason: str | None = None
    justification: Written | None = None
    vrm_reexamination: Written | None = None
    first_capture_file: str | None = None
    first_capture_declared: str | None = None
    first_capture_actual: str | None = None
    """SHA-256 recomputed from the archived file (None when no first capture is declared)."""
    capture_file: str | None = None
    """The recorded capture as card.yaml names it (None for a not-run run)."""
    capture_sha256: str | None = None
    """SHA-256 of the recorded capture."""
    first_capture_stutter: float | None = None
    """The archived first capture's own stutter, scored like a recorded capture."""
    first_capture_incomplete: bool = False
    first_capture_incomplete_reason: str | None = None
    repeats: tuple[tuple[str, str], ...] = ()
    """(file, SHA-256) of each repeat capture (card.yaml `runs[].repeats`), in card order."""

    @property
    def label(self) -> str:
        """How messages name the run."""
        return f"{self.title} {self.resolution}"


def run_facts(
    *, index: int, title: str, resolution: str, capture: CaptureInfo | None,
    metrics: RunMetrics | None, justification: Written | None = None,
    vrm_reexamination: Written | None = None, first_file: str | None = None,
    first_declared: str | None = None, first_actual: str | None = None,
    first_metrics: RunMetrics | None = None, first_incomplete: bool = False,
    first_incomplete_reason: str | None = None,
    repeats: tuple[tuple[str, str], ...] = (),
) -> RunFacts:
    """What the rules need of one run, from the record's own parts: the one derivation the
    pipeline (from the bundle) and verify (from a record) both use. `capture` None is a run
    declared not_run."""
    recorded = capture is not None
    return RunFacts(
        index=index, title=title, resolution=resolution, recorded=recorded,
        fluidity_score=None if metrics is None else metrics.fluidity_score,
        stutter=None if metrics is None else metrics.stutter,
        incomplete=capture is not None and capture.incomplete,
        incomplete_reason=None if capture is None else capture.incomplete_reason,
        justification=justification if recorded else None,
        vrm_reexamination=vrm_reexamination if recorded else None,
        first_capture_file=first_file, first_capture_declared=first_declared,
        first_capture_actual=first_actual,
        capture_file=None if capture is None else capture.file,
        capture_sha256=None if capture is None else capture.sha256,
        first_capture_stutter=None if first_metrics is None else first_metrics.stutter,
        first_capture_incomplete=first_incomplete,
        first_capture_incomplete_reason=first_incomplete_reason,
        repeats=repeats if recorded else (),
    )


# --------------------------------------------------------------------------------------------
# Tiers
# --------------------------------------------------------------------------------------------


def resolution_pixels(resolution: str) -> int:
    """'2560x1440' -> 3686400 (the tier sort key)."""
    width, height = resolution.split("x")
    return int(width) * int(height)


def mean_score(scores: Sequence[float]) -> float:
    """Mean of Fluidity Scores, exact in decimal, rounded to 2 decimals half away from zero."""
    total = sum((Decimal(repr(s)) for s in scores), Decimal(0))
    return round_half_away(float(total / len(scores)), 2)


def grade_tiers(runs: Iterable[RunFacts], rules: Rules) -> tuple[Tier, ...]:
    """Group runs by output resolution; sorted by pixel count, then resolution text."""
    by_res: dict[str, list[RunFacts]] = {}
    for run in runs:
        by_res.setdefault(run.resolution, []).append(run)
    tiers = []
    for resolution in sorted(by_res, key=lambda r: (resolution_pixels(r), r)):
        members = by_res[resolution]
        scores = [r.fluidity_score for r in members if r.recorded and r.fluidity_score is not None]
        mean = mean_score(scores) if scores else None
        tiers.append(
            Tier(
                resolution=resolution,
                runs=len(members),
                scored_runs=len(scores),
                not_run=sum(1 for r in members if not r.recorded),
                mean_fluidity=mean,
                measured=mean is not None,
                meets_gold=mean is not None and mean >= rules.gold_line,
                meets_platinum=mean is not None and mean >= rules.platinum_line,
            )
        )
    return tuple(tiers)


# --------------------------------------------------------------------------------------------
# Gates
# --------------------------------------------------------------------------------------------


def limiting_tiers(
    tiers: Sequence[Tier], runs: Sequence[RunFacts], line: float
) -> tuple[LimitingTier, ...]:
    """The measured tiers whose mean is under `line`, closest first (then by tier order), each
    with its scored runs under the line, lowest score first (then card order): what holds the
    card back from the grade that line stands for."""
    order = {t.resolution: i for i, t in enumerate(tiers)}
    below = [t for t in tiers
             if t.measured and t.mean_fluidity is not None and t.mean_fluidity < line]
    out = []
    for tier in sorted(below, key=lambda t: (line - (t.mean_fluidity or 0.0), order[t.resolution])):
        mean = float(tier.mean_fluidity or 0.0)
        under = sorted(
            (r for r in runs if r.resolution == tier.resolution and r.recorded
             and r.fluidity_score is not None and r.fluidity_score < line),
            key=lambda r: (r.fluidity_score, r.index),
        )
        out.append(LimitingTier(
            resolution=tier.resolution, mean_fluidity=mean,
            distance=round_half_away(line - mean, 2),
            runs=tuple(LimitingRun(run=r.index, title=r.title,
                                   fluidity_score=float(r.fluidity_score or 0.0)) for r in under),
        ))
    return tuple(out)


def _lowest(grades: Iterable[GradeName], order: Sequence[GradeName]) -> GradeName:
    return max(grades, key=order.index)


def grade_gates(
    tiers: Sequence[Tier], cap: GradeCap | None, rules: Rules, runs: Sequence[RunFacts] = ()
) -> Grade:
    """Apply the three fluidity gates and the cap; the grade is the highest all of them allow.

    A failed tier gate names what limits the card (`limiting_tiers`, from `runs`)."""
    # highest first: PLATINUM, GOLD, SILVER (a name outside GradeName fails the models' check)
    order = cast(tuple[GradeName, ...], rules.grades)
    no_measured_cap = cast(GradeName, rules.no_measured_tier_cap)
    top, gold, below_gold = order[0], order[1], order[2]
    measured = [t for t in tiers if t.measured]
    compared = tuple(TierScore(resolution=t.resolution, mean_fluidity=t.mean_fluidity)
                     for t in measured if t.mean_fluidity is not None)

    platinum_ok = any(t.meets_platinum for t in measured)
    gold_ok = all(t.meets_gold for t in measured)
    measured_ok = bool(measured)
    gates: list[GateReason] = [
        TierLineGate(gate="platinum_one_tier", passed=platinum_ok,
                     allows=top if platinum_ok else gold, line=rules.platinum_line,
                     compared=compared, limiting=() if platinum_ok
                     else limiting_tiers(tiers, runs, rules.platinum_line)),
        TierLineGate(gate="gold_every_tier", passed=gold_ok,
                     allows=top if gold_ok else below_gold, line=rules.gold_line,
                     compared=compared, limiting=() if gold_ok
                     else limiting_tiers(tiers, runs, rules.gold_line)),
        MeasuredTierGate(gate="measured_tier", passed=measured_ok,
                         allows=top if measured_ok else no_measured_cap,
                         measured_tiers=len(measured)),
    ]
    fluidity = _lowest((g.allows for g in gates), order)
    cap_allows = top if cap is None else cap.grade
    cap_ok = order.index(cap_allows) <= order.index(fluidity)
    gates.append(GradeCapGate(gate="grade_cap", passed=cap_ok, allows=cap_allows, cap=cap))
    value = _lowest((g.allows for g in gates), order)
    return Grade(value=value, fluidity_grade=fluidity, cap=cap, reasons=tuple(gates))


# --------------------------------------------------------------------------------------------
# Soft Limit and re-run audit
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftLimitCheck:
    """The Stutter Soft Limit on one recorded run."""

    run: int
    stutter: float | None
    limit: float
    raised: bool
    justification: Written | None
    vrm_reexamination: Written | None

    @property
    def satisfied(self) -> bool:
        """Not raised, or raised with both a justification and a VRM re-examination."""
        return not self.raised or (bool(self.justification) and bool(self.vrm_reexamination))


def _fmt_limit(value: float) -> str:
    return f"{value:.2f}"


@dataclass(frozen=True)
class Refusal:
    """One reason the certificate cannot be issued, as an English message and as data.

    `message` is the API text (`certgen check` prints it, tests assert it word for word);
    `detail` is the same as data (the record's `status.refusal_details[]`, certgen.model), so
    a renderer can say it in another language (docs/record.md, Refusals).
    """

    message: str
    detail: RefusalDetail

    @property
    def code(self) -> str:
        return self.detail.code


Requirement = Literal["justification", "vrm_reexamination"]
CaptureField = str
"""Which of a run's files: "capture", "first_capture" or "repeats[N]"."""

SOFT_LIMIT_REQUIREMENTS: tuple[tuple[Requirement, str], ...] = (
    ("justification", "a justification"),
    ("vrm_reexamination", "a Phase 1 VRM re-examination"),
)
"""What a raised Soft Limit needs: (code in `missing`, words of the English message)."""


def soft_limit_check(run: RunFacts, rules: Rules) -> tuple[SoftLimitCheck, Refusal | None]:
    """The Soft Limit on one recorded run and, when unsatisfied, the refusal naming it."""
    limit = rules.soft_limit_stutter
    raised = run.recorded and run.stutter is not None and run.stutter > limit
    check = SoftLimitCheck(
        run=run.index,
        stutter=run.stutter,
        limit=limit,
        raised=raised,
        justification=run.justification if raised else None,
        vrm_reexamination=run.vrm_reexamination if raised else None,
    )
    if check.satisfied:
        return check, None
    given = {"justification": run.justification, "vrm_reexamination": run.vrm_reexamination}
    missing = [(code, words) for code, words in SOFT_LIMIT_REQUIREMENTS if not given[code]]
    verb = "are" if len(missing) == 2 else "is"
    message = (
        f"{CARD_FILE}: runs[{run.index}].soft_limit: run \"{run.label}\" has stutter "
        f"{run.stutter:.4f} > {_fmt_limit(limit)}; {' and '.join(w for _, w in missing)} "
        f"{verb} required before this certificate can be issued"
    )
    refusal = Refusal(message, SoftLimitMissing(
        code="soft_limit_missing", run=run.index,
        missing=tuple(code for code, _ in missing),
        stutter=cast(float, run.stutter), limit=limit))
    return check, refusal


@dataclass(frozen=True)
class FirstCaptureCheck:
    """The archived first capture of a run: required or not, and whether its hash matches."""

    run: int
    required: bool
    why: str | None
    """Why a re-run was required: 'incomplete: <reason>' or 'stutter 0.6110 > 0.60' (or None)."""
    file: str | None
    sha256_declared: str | None
    sha256_actual: str | None
    why_detail: WhyDetail | None = None
    """The same as data: WhyIncomplete or WhyStutter (or None)."""
    rerun_reason: WhyDetail | None = None
    """Why the archived first capture called for a re-run, from its own figures (the same
    shape as why_detail); None when its own figures show no reason or no file is declared."""

    @property
    def matches(self) -> bool | None:
        if self.file is None:
            return None
        return self.sha256_declared == self.sha256_actual


def rerun_reason(stutter: float | None, incomplete: bool, incomplete_reason: str | None,
                 rules: Rules) -> tuple[str | None, WhyDetail | None]:
    """Why a capture calls for a re-run (SOP: incomplete, or stutter over the re-run line):
    the English text and the same as data, or (None, None)."""
    if incomplete:
        return ("incomplete" + (f": {incomplete_reason}" if incomplete_reason else ""),
                WhyIncomplete(code="incomplete", reason=incomplete_reason or None))
    if stutter is not None and stutter > rules.rerun_stutter:
        return (f"stutter {stutter:.4f} > {_fmt_limit(rules.rerun_stutter)}",
                WhyStutter(code="stutter_over_rerun_line", stutter=stutter,
                           line=rules.rerun_stutter))
    return None, None


def rerun_audit(run: RunFacts, rules: Rules) -> tuple[FirstCaptureCheck, list[Refusal]]:
    """The re-run rule on one recorded run: the archived first capture and its SHA-256."""
    reasons: list[Refusal] = []
    why: str | None = None
    detail: WhyDetail | None = None
    if run.recorded:
        why, detail = rerun_reason(run.stutter, run.incomplete, run.incomplete_reason, rules)
    own = None
    if run.first_capture_file is not None:
        own = rerun_reason(run.first_capture_stutter, run.first_capture_incomplete,
                           run.first_capture_incomplete_reason, rules)[1]
    check = FirstCaptureCheck(
        run=run.index,
        required=why is not None,
        why=why,
        file=run.first_capture_file,
        sha256_declared=run.first_capture_declared,
        sha256_actual=run.first_capture_actual,
        why_detail=detail,
        rerun_reason=own,
    )
    where = f"{CARD_FILE}: runs[{run.index}].first_capture"
    if why is not None and detail is not None and run.first_capture_file is None:
        reasons.append(Refusal(
            f"{where}: run \"{run.label}\" needed a re-run ({why}) but has no archived first "
            "capture; the re-run step was skipped (archive the first capture and cite its SHA-256)",
            RerunFirstCaptureMissing(code="rerun_first_capture_missing", run=run.index,
                                     why=detail),
        ))
    if check.matches is False:
        reasons.append(Refusal(
            f"{where}: {run.first_capture_file}: SHA-256 mismatch: declared "
            f"{run.first_capture_declared}, file has {run.first_capture_actual}; "
            "the archived first capture is not the one cited in the audit trail",
            FirstCaptureSha256Mismatch(
                code="first_capture_sha256_mismatch", run=run.index,
                file=cast(str, run.first_capture_file),
                sha256_declared=cast(str, run.first_capture_declared),
                sha256_actual=cast(str, run.first_capture_actual)),
        ))
    if (run.first_capture_file is not None and run.capture_sha256 is not None
            and run.first_capture_actual == run.capture_sha256):
        reasons.append(Refusal(
            f"{where}: {run.first_capture_file} is byte-identical to the recorded capture "
            f"{run.capture_file} (SHA-256 {run.capture_sha256}); the archived first capture "
            "must be the capture that was re-run, not the re-run itself",
            FirstCaptureIdentical(code="first_capture_identical", run=run.index,
                                  file=run.first_capture_file,
                                  capture=cast(str, run.capture_file),
                                  sha256=run.capture_sha256),
        ))
    return check, reasons


def shared_captures(runs: Sequence[RunFacts]) -> list[Refusal]:
    """Refuse one capture backing two runs: every recorded capture and archived first capture
    card.yaml names must be a capture of its own.

    Captures are compared by content (SHA-256 of the bytes), so two copies of one file under
    different names are refused like one path named twice. A first capture identical to its own
    run's recorded capture is refused by rerun_audit. Each later use names the first one, in
    card.yaml order.
    """
    seen: dict[str, tuple[int, CaptureField, str]] = {}
    refusals: list[Refusal] = []
    for run in runs:
        uses: list[tuple[CaptureField, str | None, str | None]] = [
                ("capture", run.capture_file, run.capture_sha256),
                ("first_capture", run.first_capture_file, run.first_capture_actual),
                *((f"repeats[{j}]", file, sha) for j, (file, sha) in enumerate(run.repeats))]
        for field, file, sha in uses:
            if file is None or sha is None:
                continue
            first = seen.get(sha)
            if first is None:
                seen[sha] = (run.index, field, file)
                continue
            if first[0] == run.index and not field.startswith("repeats"):
                continue  # the same run's capture and first capture: rerun_audit's refusal
            other_run, other_field, other_file = first
            # A repeat is a further capture of its own: the same bytes as another capture of
            # the run would count one capture twice in its spread.
            tail = ("a repeat must be a capture of its own" if other_run == run.index
                    else "one capture file cannot back two runs")
            refusals.append(Refusal(
                f"{CARD_FILE}: runs[{run.index}].{field}: {file} is the same capture (SHA-256 "
                f"{sha}) as runs[{other_run}].{other_field} {other_file}; {tail}",
                CaptureUsedTwice(code="capture_used_twice", run=run.index, field=field,
                                 file=file, other_run=other_run, other_field=other_field,
                                 other_file=other_file, sha256=sha),
            ))
    return refusals


# --------------------------------------------------------------------------------------------
# The verdict
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Everything the rules decided about one bundle; `refusals` empty means issuable."""

    tiers: tuple[Tier, ...]
    grade: Grade
    soft_limits: tuple[SoftLimitCheck | None, ...]
    """Per run in card.yaml order; None for a not-run run."""
    first_captures: tuple[FirstCaptureCheck | None, ...]
    refusal_details: tuple[Refusal, ...]
    """Every reason the certificate cannot be issued, in run order (re-run audit, Soft Limit)."""

    @property
    def refusals(self) -> tuple[str, ...]:
        """The English messages of the refusals (what `certgen check` prints)."""
        return tuple(r.message for r in self.refusal_details)

    @property
    def issuable(self) -> bool:
        return not self.refusal_details


def decide(runs: Sequence[RunFacts], cap: GradeCap | None, rules: Rules) -> Verdict:
    """Tiers, gates, Soft Limit and re-run audit for the runs of one bundle."""
    tiers = grade_tiers(runs, rules)
    grade = grade_gates(tiers, cap, rules, runs)
    soft: list[SoftLimitCheck | None] = []
    firsts: list[FirstCaptureCheck | None] = []
    refusals: list[Refusal] = []
    for run in runs:
        if not run.recorded:
            soft.append(None)
            firsts.append(None)
            continue
        first, first_reasons = rerun_audit(run, rules)
        check, soft_reason = soft_limit_check(run, rules)
        firsts.append(first)
        soft.append(check)
        refusals.extend(first_reasons)
        if soft_reason:
            refusals.append(soft_reason)
    refusals.extend(shared_captures(runs))
    return Verdict(tiers, grade, tuple(soft), tuple(firsts), tuple(refusals))
