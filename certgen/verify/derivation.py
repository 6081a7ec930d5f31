"""Derivation from the record and the bundle: every score, tier mean and the grade follow from the
record's figures under the rules file it names (derivation), and with a bundle folder, every
capture the certificate cites has the record's SHA-256 (captures) and every figure recomputed
from the captures equals the record's (recomputed)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from certgen.errors import CertgenError
from certgen.inputs.bundle import load_bundle
from certgen.metrics.figures import ratios_from_fps, weights_of
from certgen.model import RunMetrics, WhyIncomplete
from certgen.pipeline import record_from_bundle
from certgen.rules.uncertainty import (
    Finding,
    recorded_runs,
    repeat_findings,
    uncertainty_findings,
)
from certgen.rules.verdict import decide, run_facts
from certgen.sop import load_rules
from certgen.verify.outcome import Check, Said, joined, verbatim

if TYPE_CHECKING:

    from certgen.record import Record
    from certgen.rules.verdict import RunFacts

def record_facts(record: Record) -> list[RunFacts]:
    """What the rules need of each run, read back from a record (certgen.rules.verdict.run_facts, the
    derivation the pipeline uses on the bundle)."""

    facts = []
    # The repeats are in the record's uncertainty section (issue 41), by run.
    repeats = {} if record.uncertainty is None else {
        r.run: tuple((c.file, c.sha256) for c in r.repeats) for r in record.uncertainty.runs}
    for run in record.runs:
        first = run.first_capture
        # The first capture's own incompleteness is in the record as its re-run reason
        # (incomplete outranks stutter there, as in rules.rerun_reason).
        own = None if first is None else first.rerun_reason
        facts.append(run_facts(
            index=run.index, title=run.title, resolution=run.resolution,
            capture=run.capture if run.status == "recorded" else None, metrics=run.metrics,
            justification=None if run.soft_limit is None else run.soft_limit.justification,
            vrm_reexamination=None if run.soft_limit is None
            else run.soft_limit.vrm_reexamination,
            first_file=None if first is None else first.file,
            first_declared=None if first is None else first.sha256_declared,
            first_actual=None if first is None else first.sha256_actual,
            first_metrics=None if first is None else first.metrics,
            first_incomplete=isinstance(own, WhyIncomplete),
            first_incomplete_reason=own.reason if isinstance(own, WhyIncomplete) else None,
            repeats=repeats.get(run.index, ()),
        ))
    return facts


def derivation_problems(record: Record) -> list[str]:
    """derivation_reasons in English."""
    return [said.render() for said in derivation_reasons(record)]


def derivation_reasons(record: Record) -> list[Said]:
    """What does not follow from the record's figures under its rules file (empty: all does)."""

    problems: list[Said] = []
    rules = load_rules(record.rules.sop)
    if record.rules.sha256 is not None and rules.sha256 != record.rules.sha256:
        problems.append(Said("the rules file %(file)s here has SHA-256 %(here)s; the record was "
                             "graded by %(graded)s", file=rules.file, here=rules.sha256,
                             graded=record.rules.sha256))
    weights = weights_of(rules)
    for run in record.runs:
        m = run.metrics
        label = Said("run %(number)s (%(title)s %(resolution)s)", number=run.index + 1,
                     title=run.title, resolution=run.resolution)
        if m is not None:
            ratios = ratios_from_fps(m.avg_fps, m.low_1pct_fps, m.low_0_1pct_fps, weights)
            for key in ("consistency_gap", "stutter", "fluidity_score"):
                if getattr(ratios, key) != getattr(m, key):
                    problems.append(Said("%(label)s: %(key)s %(value)s does not follow from its "
                                         "FPS figures (%(derived)s)", label=label, key=key,
                                         value=getattr(m, key), derived=getattr(ratios, key)))
    facts = record_facts(record)
    cap = record.grade.cap
    verdict = decide(facts, cap, rules)
    by_res = {t.resolution: t for t in verdict.tiers}
    for tier in record.tiers:
        derived = by_res.get(tier.resolution)
        if derived is None or derived.mean_fluidity != tier.mean_fluidity:
            problems.append(Said("tier %(resolution)s: mean %(mean_fluidity)s does not follow from"
                                 " its runs' scores (%(derived)s)", resolution=tier.resolution,
                                 mean_fluidity=tier.mean_fluidity,
                                 derived=str(None if derived is None else derived.mean_fluidity)))
    if [t.resolution for t in verdict.tiers] != [t.resolution for t in record.tiers]:
        problems.append(Said("the record's tiers are not its runs' resolutions"))
    if verdict.grade.value != record.grade.value:
        problems.append(Said("grade %(grade)s does not follow from the tiers (the rules give "
                             "%(derived)s)", grade=record.grade.value, derived=verdict.grade.value))
    problems += [_finding_said(f) for f in uncertainty_findings(
        record.uncertainty, record.tiers, recorded_runs(
            [(r.index, r.resolution, r.status, r.metrics) for r in record.runs]), rules)]
    return problems



def bundle_checks(record: Record, bundle: str) -> list[Check]:
    """captures and recomputed: the bundle read as `certgen check` reads it (only the files its
    card.yaml names, inside the bundle, regular files within their limits), its record made
    again, and every capture the certificate cites compared with it, first captures included."""

    try:
        again = record_from_bundle(load_bundle(Path(bundle)), refuse=False)
    except CertgenError as exc:
        reason = Said("the bundle cannot be read: %(error)s", error=str(exc))
        return [Check("captures", "fail", reason), Check("recomputed", "fail", reason)]

    def label(index: int) -> Said:
        run = record.runs[index] if index < len(record.runs) else None
        if run is None:
            return Said("run %(number)s", number=index + 1)
        return Said("run %(number)s (%(title)s %(resolution)s)", number=index + 1,
                    title=run.title, resolution=run.resolution)

    wrong: list[Said] = []
    # The recorded captures, then the archived first captures, each against the bundle's.
    for cited, found, first in ((record.audit.captures, again.audit.captures, False),
                                (record.audit.first_captures, again.audit.first_captures, True)):
        fresh = {c.run: c for c in found}
        for item in cited:
            other = fresh.get(item.run)
            if other is None:
                wrong.append(Said("%(label)s: the bundle has no archived first capture for it"
                                  if first else "%(label)s: the bundle has no capture for it",
                                  label=label(item.run)))
            elif other.file != item.file:
                wrong.append(Said("%(label)s: the record cites the archived first capture "
                                  "%(file)s; the bundle's card.yaml names %(named)s" if first else
                                  "%(label)s: the record cites %(file)s; the bundle's card.yaml "
                                  "names %(named)s", label=label(item.run), file=item.file,
                                  named=other.file))
            elif other.sha256 != item.sha256:
                wrong.append(Said("%(label)s: the archived first capture %(file)s has SHA-256 "
                                  "%(sha256)s, the record's is %(recorded)s" if first else
                                  "%(label)s: %(file)s has SHA-256 %(sha256)s, the record's is "
                                  "%(recorded)s", label=label(item.run), file=item.file,
                                  sha256=other.sha256, recorded=item.sha256))
    extra = (len(again.audit.captures) - len(record.audit.captures),
             len(again.audit.first_captures) - len(record.audit.first_captures))
    if extra[0] > 0 or extra[1] > 0:
        wrong.append(Said("the bundle has captures the record does not cite"))
    count = len(record.audit.captures) + len(record.audit.first_captures)
    checks = [Check("captures", "fail", joined(wrong)) if wrong else
              Check("captures", "pass", Said("all %(count)s captures the certificate cites "
                                             "(%(first)s archived first captures among them) have"
                                             " the record's SHA-256", count=count,
                                             first=len(record.audit.first_captures)))]

    def differs(a: RunMetrics | None, b: RunMetrics | None) -> str:
        keys = [k for k in RunMetrics.model_fields if getattr(a, k, None) != getattr(b, k, None)]
        return ", ".join(keys) or "metrics"

    differ: list[Said] = []
    for run, fresh_run in zip(record.runs, again.runs):
        if run.metrics != fresh_run.metrics:
            differ.append(Said("%(label)s: %(differs)s recomputed differently",
                               label=label(run.index),
                               differs=differs(run.metrics, fresh_run.metrics)))
        mine, theirs = run.first_capture, fresh_run.first_capture
        if (mine is None) != (theirs is None):
            differ.append(Said("%(label)s: the first capture is missing from the bundle"
                               if theirs is None else
                               "%(label)s: the first capture is not in the record",
                               label=label(run.index)))
        elif mine is not None and theirs is not None and mine.metrics != theirs.metrics:
            differ.append(Said("%(label)s: the archived first capture %(file)s: %(differs)s "
                               "recomputed differently", label=label(run.index), file=mine.file,
                               differs=differs(mine.metrics, theirs.metrics)))
    if len(record.runs) != len(again.runs):
        differ.append(Said("the bundle has %(count)s runs, the record %(recorded)s",
                           count=len(again.runs), recorded=len(record.runs)))
    differ += [_finding_said(f) for f in repeat_findings(record.uncertainty, again.uncertainty)]
    checks.append(Check("recomputed", "fail", joined(differ)) if differ else
                  Check("recomputed", "pass", Said("every run's and first capture's figures, "
                                                   "recomputed from the captures, equal the "
                                                   "record's")))
    return checks


def _finding_said(finding: Finding) -> Said:
    """An uncertainty finding of certgen.rules as a message (rules words it in English; its kind
    and values let verify say it in the line's language)."""
    v = dict(finding.values)
    said = {
        "rule": lambda: Said("uncertainty: decision rule %(stated_rule)s at %(stated_level)s does "
                             "not follow from the rules (%(rule)s at %(level)s)", **v),
        "count": lambda: Said("uncertainty.%(part)s: %(count)s entries, the figures give "
                              "%(derived)s", **v),
        "fields": lambda: Said("uncertainty.%(part)s[%(index)s]: %(fields)s do not follow from "
                               "the record's figures", **v),
        "repeat-count": lambda: Said("run %(run)s: the record cites %(count)s repeats, the bundle "
                                     "has %(found)s", **v),
        "repeat-sha256": lambda: Said("run %(run)s: repeat %(file)s has SHA-256 %(sha256)s in the "
                                      "bundle (%(found)s), the record's is %(recorded)s", **v),
        "repeat-figures": lambda: Said("run %(run)s: repeat %(number)s (%(file)s): %(fields)s "
                                       "recomputed differently", **v),
        "within": lambda: Said("run %(run)s: the within-capture intervals recomputed "
                               "differently", **v),
    }.get(finding.kind)
    return said() if said is not None else verbatim(finding.text)
