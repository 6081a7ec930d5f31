"""`certgen check BUNDLE [--fleet DB] [--json]`: validate a bundle, apply the rules, explain.

Exit 0 when the certificate can be issued (the grade and its reasoning on stdout), 1 when it is
refused (every reason on stderr, one per line) or the bundle is invalid, 2 on bad usage.
With --json the record (a draft record when refused) goes to stdout instead of the report.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from certgen.fleet import FleetStore
from certgen.inputs.lab import load_lab
from certgen.model import CaptureTooShort, GradeCapGate, MeasuredTierGate, text_for
from certgen.pipeline import check_bundle
from certgen.record import dump_record

if TYPE_CHECKING:
    from certgen.model import GateReason
    from certgen.record import Record


def _num(value: float | None, digits: int) -> str:
    return "null" if value is None else f"{value:.{digits}f}"


def _gate_line(gate: GateReason) -> str:
    verdict = "pass" if gate.passed else "fail"
    compared = ""
    if isinstance(gate, MeasuredTierGate):
        what = f"at least one measured tier ({gate.measured_tiers} measured)"
    elif isinstance(gate, GradeCapGate):
        what = "no cap from another SOP phase" if gate.cap is None else (
            f"cap {gate.cap.grade}: {text_for(gate.cap.reason, 'en')[0]}")
    else:
        what = (f"one measured tier >= {gate.line:.2f}" if gate.gate == "platinum_one_tier"
                else f"every measured tier >= {gate.line:.2f}")
        compared = ", ".join(f"{c.resolution} {c.mean_fluidity:.2f}" for c in gate.compared)
    return (f"  {gate.gate}: {verdict}, allows {gate.allows}: {what}"
            + (f" [{compared}]" if compared else ""))


def _margin_lines(record: Record) -> list[str]:
    """The decision rule and each gate's margin on each measured tier (issue 41)."""
    u = record.uncertainty
    if u is None:
        return []
    lines = [f"decision rule: {u.decision_rule} (ILAC-G8:09/2019 4.2.1); margins:"]
    for g in u.gates:
        sure = ("" if g.interval is None
                else f", tier mean {g.interval[0]:.2f} to {g.interval[1]:.2f} over repeats: "
                     f"{g.verdict}")
        lines.append(f"  {g.gate} {g.tier}: mean {g.mean:.2f}, line {g.line:.2f}, margin "
                     f"{g.margin:+.2f}" + (sure or f" (interval not estimated: {g.reason})"))
    return lines


def report_lines(record: Record, notes: Sequence[str] = ()) -> list[str]:
    """The readable grade report of a record: grade, tiers, each gate with its numbers, runs;
    then `notes` (what the captures record that could not be compared with card.yaml)."""

    grade = record.grade
    cap = grade.cap
    lines = [
        f"{record.certificate.id}: {grade.value}"
        + (f" (fluidity gates allow {grade.fluidity_grade}; capped: "
           f"{text_for(cap.reason, 'en')[0]})"
           if cap and grade.value != grade.fluidity_grade else ""),
        "tiers:",
    ]
    for tier in record.tiers:
        mean = "not measured" if tier.mean_fluidity is None else (
            f"mean Fluidity Score {tier.mean_fluidity:.2f}")
        lines.append(
            f"  {tier.resolution}: {mean} ({tier.scored_runs} scored of {tier.runs} "
            f"runs, {tier.not_run} not run)"
        )
    lines.append("gates:")
    lines.extend(_gate_line(gate) for gate in grade.reasons)
    lines.extend(_margin_lines(record))
    lines.append("runs:")
    short = {d.run for d in record.status.refusal_details if isinstance(d, CaptureTooShort)}
    for run in record.runs:
        name = f"  [{run.index}] {run.title} {run.resolution} {run.preset}"
        m = run.metrics
        if run.status == "not_run" or m is None:
            reason = "" if run.not_run_reason is None else text_for(run.not_run_reason, "en")[0]
            lines.append(f"{name}: not run ({reason})")
            continue
        extra = []
        if run.soft_limit is not None and run.soft_limit.raised:
            extra.append("Soft Limit raised")
        if run.capture is not None and run.capture.incomplete:
            extra.append("incomplete capture")
        if run.index in short:
            extra.append("below the capture minimum")
        if run.first_capture is not None:
            extra.append("re-run, first capture archived")
        rank = None if run.ranks is None else run.ranks.fluidity_score
        if rank is not None:
            extra.append(
                f"provisional, n = {rank.n}" if rank.percentile is None
                else f"better than {rank.percentile:.1f}% of {rank.n}"
            )
        lines.append(
            f"{name}: S_F {_num(m.fluidity_score, 2)} (avg {_num(m.avg_fps, 1)}, "
            f"1% {_num(m.low_1pct_fps, 1)}, 0.1% {_num(m.low_0_1pct_fps, 1)} FPS; "
            f"g {_num(m.consistency_gap, 4)}, s {_num(m.stutter, 4)})"
            + (f" — {'; '.join(extra)}" if extra else "")
        )
    lines.extend(f"note: {note}" for note in notes)
    refusals = record.status.refusals
    lines.append("issuable" if not refusals else f"refused ({len(refusals)} reasons, on stderr)")
    return lines


def check_json(record: Record) -> bytes:
    """`check --json`: the record, then `gate_margins` (issue 41, pinned): each gate on each
    measured tier, its margin and, with repeats, its interval and verdict (the record's
    `uncertainty.gates`)."""
    data = json.loads(dump_record(record))
    data["gate_margins"] = [] if record.uncertainty is None else [
        gate.model_dump(mode="json") for gate in record.uncertainty.gates]
    return (json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()


@click.command("check")
@click.argument("bundle", type=click.Path(exists=True, path_type=str))
@click.option("--fleet", "fleet_db", type=click.Path(dir_okay=False, path_type=str),
              envvar="CERTGEN_FLEET", help="Fleet database to rank against (SQLite).")
@click.option("--json", "as_json", is_flag=True, help="Print the record (JSON) instead.")
@click.option("--lab", "lab_file", type=click.Path(), default=None, envvar="CERTGEN_LAB",
              help="The issuing laboratory's profile, lab.yaml (default: $CERTGEN_LAB, as "
                   "`certgen build`): check as the build would issue (its capture minimum and "
                   "maximum capture age, its specimen flag). Without one, certgen's defaults.")
def command(bundle: str, fleet_db: str | None, as_json: bool, lab_file: str | None) -> None:
    """Validate BUNDLE (folder or .zip), apply the rules and print the grade with its reasons."""

    lab = None if lab_file is None else load_lab(lab_file)
    store = None
    if fleet_db:
        store = FleetStore.open(fleet_db, readonly=True)
    try:
        checked = check_bundle(bundle, fleet=store, lab=lab)
    finally:
        if store is not None:
            store.close()
    record = checked.record
    refusals = record.status.refusals
    if as_json:
        sys.stdout.buffer.write(check_json(record))
        sys.stdout.flush()
    else:
        click.echo("\n".join(report_lines(record, checked.notes)))
    for reason in refusals:
        click.echo(f"certgen: {reason}", err=True)
    if refusals:
        raise click.exceptions.Exit(1)
