"""Bundle -> record: the whole certificate pipeline up to record.json (DESIGN.md, The pipeline).

    load_bundle -> read captures -> compute metrics -> rank (fleet) -> decide (rules) -> record

Only `load_bundle` touches the disk (it reads card.yaml and every file it names, once each);
every later step, the capture readers included, is a pure function of those bytes.
`make_record` is what `certgen check`, `certgen build` and `certgen fleet add` call.

The fleet plugs in through `Fleet` (a Protocol): `certgen.fleet.FleetStore` satisfies it. With
no fleet every rank is provisional with n = 1: the cohort holds only the run itself, as in an empty fleet.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Protocol, overload, runtime_checkable

from certgen.captures.errata import capture_errata
from certgen.captures.formats import FORMAT_TABLE
from certgen.captures.model import Capture
from certgen.errors import BundleError, RefusalError
from certgen.inputs.bundle import (
    CardRun,
    CardTestSystem,
    LoadedBundle,
    Written,
    display_timing_of,
    load_bundle,
)
from certgen.inputs.lab import LabProfile, LocalizedText, add_months
from certgen.metrics.capturereport import read_runs
from certgen.metrics.diagnostics import compute_metrics
from certgen.metrics.figures import round_half_away, weights_of
from certgen.metrics.framegen import (
    application_clock_ms,
    compute_frame_diagnostics,
    observe_frame_generation,
)
from certgen.metrics.measured import measured_by
from certgen.metrics.uncertainty import interval_seed, within_intervals
from certgen.metrics.validity import declared_warnings
from certgen.model import (
    RANKED_METRICS,
    Accreditation,
    CaptureInfo,
    CardInfo,
    CertificateInfo,
    GradeCap,
    Issuer,
    LabText,
    LocalText,
    Phase1,
    Rank,
    Ranks,
    RunConditions,
    RunMetrics,
    Scope,
    ScopeGame,
    Signatory,
    TestSystem,
    lab_text,
)
from certgen.model.cohort import Cohort
from certgen.model.measured import DisplayTiming
from certgen.model.uncertainty import RepeatCapture, Uncertainty
from certgen.record import (
    Record,
    RunInput,
    build_record,
    chart_series,
)
from certgen.rules.completeness import below_minimum, extent_of, shortfall, too_old, too_short
from certgen.rules.conditions import dates_after_issue, required_conditions, sample_refusal
from certgen.rules.provenance import HeldCapture, hold_captures, tool_errata
from certgen.rules.uncertainty import recorded_runs, uncertainty_of
from certgen.rules.verdict import Refusal, RunFacts, decide, run_facts
from certgen.rules.verdict import Written as RulesText
from certgen.sop import Rules, load_rules
from certgen.sop.capture_limits import DEFAULT_LIMITS, CaptureLimits

__all__ = ["RANKED_METRICS", "Checked", "Fleet", "bundle_cohorts", "check_bundle", "check_record",
           "make_record", "provisional_ranks", "record_from_bundle", "uncertainty_from_record"]


@runtime_checkable
class Fleet(Protocol):
    """What the pipeline asks of a fleet store (certgen.fleet.FleetStore implements it).

    `run_ranks` returns the `runs[].ranks` of one run: an entry for each metric the run has a
    value for, comparing only against runs of the same cohort from *other* certificates
    (so a re-check of an already-added certificate does not rank it against itself), with
    percentile, cohort_mean and z null below `min_cohort` (the bundle's rules file).
    `cohort_runs` counts the fleet's runs in the given cohorts (the record's `fleet.fleet_runs`:
    what the certificate is ranked against, and all the build cache keys it on).
    """

    def run_ranks(
        self,
        cohort: Cohort,
        metrics: RunMetrics,
        certificate_id: str,
        *,
        min_cohort: int | None = None,
    ) -> Ranks: ...

    def cohort_runs(self, cohorts: Iterable[Cohort]) -> int: ...


def provisional_ranks(metrics: RunMetrics) -> Ranks:
    """Ranks with no fleet: provisional, n = 1 (the run itself, as certgen.fleet counts it)."""
    rank = Rank(percentile=None, n=1, cohort_mean=None, z=None)
    return Ranks(**{name: rank for name in RANKED_METRICS if getattr(metrics, name) is not None})


def bundle_cohorts(bundle: LoadedBundle) -> list[Cohort]:
    """The cohort of every run card.yaml declares (what the bundle's ranks can depend on);
    read from card.yaml alone, no capture is parsed."""
    return [run_cohort(run) for run in bundle.card.runs]


def run_cohort(run: CardRun) -> Cohort:
    """A card.yaml run's cohort (its mode as declared, or derived from frame_generation:
    off, or on with the mode not stated)."""
    return Cohort(run.title, run.resolution, run.preset, run.ray_tracing, run.upscaler,
                  run.upscaler_mode, run.frame_generation, run.frame_generation_mode)


def _single_capture(bundle: LoadedBundle, name: str, run: CardRun, index: int, field: str
                    ) -> list[Capture]:
    """The one capture a file holds (read from the bundle's bytes); several is an error."""

    captures = read_runs(bundle.file(name).data, name=name, format=run.format,
                         process=run.process)
    if len(captures) != 1:
        raise BundleError(
            f"{name} holds {len(captures)} runs; certgen never pools runs: give each "
            "run its own capture file",
            file="card.yaml",
            field=f"runs[{index}].{field}",
        )
    return list(captures)


CAPTURE_TOOLS = {f.id: f.tool for f in FORMAT_TABLE}
"""The capture tool a format id names (the record's `capture.tool`), from the format table."""


@overload
def _written(value: Written) -> RulesText: ...
@overload
def _written(value: None) -> None: ...
@overload
def _written(value: Written | None) -> RulesText | None: ...
def _written(value: Written | None) -> RulesText | None:
    """Lab-written text as the rules and the record take it: a plain string stays one, text
    per language becomes {language: text or None}."""
    if value is None or isinstance(value, str):
        return value
    return {lang: getattr(value, lang) for lang in ("en", "ru", "pt")}


def _conditions(run: CardRun) -> RunConditions:
    """How the run was made, as card.yaml states it (None where it does not)."""
    return RunConditions(
        game_version=run.game_version,
        tested_on=None if run.tested_on is None else run.tested_on.isoformat(),
        technician=run.technician,
    )


def _read_run(bundle: LoadedBundle, index: int, run: CardRun, rules: Rules,
              timing: DisplayTiming | None = None, limits: CaptureLimits = DEFAULT_LIMITS,
              ) -> tuple[RunInput, RunFacts, tuple[HeldCapture, ...], Refusal | None]:
    """Read, measure and describe one run of the bundle (on the display `timing` card.yaml
    declares, if any); with what its captures record, and the refusal of a recorded capture
    below the minimum to be graded (`limits`), if it is."""
    first_file = run.first_capture.file if run.first_capture else None
    first_declared = run.first_capture.sha256 if run.first_capture else None
    first_actual = bundle.file(first_file).sha256 if first_file else None
    soft = run.soft_limit
    if run.capture is None:
        facts = run_facts(
            index=index, title=run.title, resolution=run.resolution, capture=None, metrics=None,
            first_file=first_file, first_declared=first_declared, first_actual=first_actual,
        )
        return RunInput(index=index, config=run_cohort(run),
                        not_run_reason=lab_text(_written(run.not_run)),
                        conditions=_conditions(run),
                        provenance_note=lab_text(_written(run.provenance_note))), facts, (), None

    capture_file = bundle.file(run.capture)
    [capture] = _single_capture(bundle, run.capture, run, index, "capture")
    capture = capture.with_warnings(declared_warnings(capture, timing))
    metrics = compute_metrics(capture.frame_times_ms, weights_of(rules), source=run.capture)
    diagnostics = compute_frame_diagnostics(capture, weights_of(rules))
    observed = diagnostics.frame_generation_observed
    held = [HeldCapture(run=index, field="capture", file=run.capture, recorded=capture.recorded,
                        frame_generation=None if observed is None
                        else observed.observed_multiplier)]
    first_metrics = None
    first_recorded = None
    first_incomplete, first_incomplete_reason = False, None
    if first_file is not None:
        # The archived first capture is scored like a recorded one: its own figures, not the
        # re-run's, say why it was re-run (its bytes were read with the bundle).
        [first] = _single_capture(bundle, first_file, run, index, "first_capture")
        first_metrics = compute_metrics(first.frame_times_ms, weights_of(rules), source=first_file)
        first_incomplete, first_incomplete_reason = first.incomplete, first.incomplete_reason
        first_extent = extent_of(first.frame_times_ms)
        if not first_incomplete and below_minimum(first_extent, limits):
            # Below the minimum is incomplete (docs/spec/rules.md): a reason it was re-run.
            first_incomplete = True
            first_incomplete_reason = shortfall(first_extent, limits)
        first_recorded = first.recorded
        held.append(HeldCapture(run=index, field="first_capture", file=first_file,
                                recorded=first.recorded, frame_generation=observe_frame_generation(
                                    first.frame_times_ms, first.frame_types,
                                    first.frame_type_codes).observed_multiplier))
    repeats = []
    for j, repeat in enumerate(run.repeats or ()):
        # A repeat is read, measured and held against the card like the recorded capture
        # (the same reader, the same figures, the same provenance rules); never graded.
        [again] = _single_capture(bundle, repeat.capture, run, index, f"repeats[{j}].capture")
        held.append(HeldCapture(run=index, field=f"repeats[{j}]", file=repeat.capture,
                                recorded=again.recorded, frame_generation=observe_frame_generation(
                                    again.frame_times_ms, again.frame_types,
                                    again.frame_type_codes).observed_multiplier))
        repeats.append(RepeatCapture(
            file=repeat.capture, sha256=bundle.file(repeat.capture).sha256,
            tested_on=None if repeat.tested_on is None else repeat.tested_on.isoformat(),
            technician=repeat.technician,
            metrics=compute_metrics(again.frame_times_ms, weights_of(rules),
                                    source=repeat.capture)))
    # One capture's within-capture intervals (from 20,000 frames; at once below): a note.
    within = within_intervals(capture.frame_times_ms, weights_of(rules),
                              seed=interval_seed(capture_file.sha256, None if capture.group is None
                                                 else capture.group.label()))
    # A capture with generated frames runs on the application frames' clock (issue 42: its
    # rows would otherwise count the time twice); any other on the running sum, as before.
    clock = application_clock_ms(capture.frame_times_ms, capture.frame_types,
                                 capture.frame_type_codes)
    shown = capture.frame_times_ms > 0.0
    chart = chart_series(capture.frame_times_ms if clock is None else capture.frame_times_ms[shown],
                         metrics.low_1pct_fps, metrics.low_0_1pct_fps, avg_fps=metrics.avg_fps,
                         ends_ms=None if clock is None else clock[shown])
    capture_info = CaptureInfo(
        file=run.capture,
        sha256=capture_file.sha256,
        format=capture.format,
        interval_column=capture.interval_column,
        group=None if capture.group is None else capture.group.label(),
        groups_left_out=tuple(sorted(g.label() for g in capture.groups_left_out)),
        dropped_frames=capture.dropped_frames,
        missing_intervals=capture.missing_intervals,
        skipped_frames=capture.skipped_frames,
        incomplete=capture.incomplete,
        incomplete_reason=capture.incomplete_reason,
        incomplete_detail=capture.incomplete_detail if capture.incomplete else None,
        warnings=tuple(capture.warnings),
        tool=CAPTURE_TOOLS.get(capture.format, capture.format),
        # The version the capture records wins; else the one card.yaml gives, else null.
        tool_version=capture.recorded.tool_version or run.tool_version,
        duration_s=(None if chart.duration_ms <= 0
                    else round_half_away(chart.duration_ms / 1000.0, 1)),
        # Present only when a diagnostic column was set aside, so a record whose columns were
        # all usable keeps its bytes (certgen.captures.detect.set_aside).
        **({"unusable_columns": capture.unusable_columns} if capture.unusable_columns else {}),
        # Known tool defects: the version the capture records, else the one card.yaml gives.
        errata=capture_errata(capture, CAPTURE_TOOLS.get(capture.format), run.tool_version),
    )
    facts = run_facts(
        index=index, title=run.title, resolution=run.resolution, capture=capture_info,
        metrics=metrics,
        justification=_written(soft.justification) if soft else None,
        vrm_reexamination=_written(soft.vrm_reexamination) if soft else None,
        first_file=first_file, first_declared=first_declared, first_actual=first_actual,
        first_metrics=first_metrics, first_incomplete=first_incomplete,
        first_incomplete_reason=first_incomplete_reason,
        repeats=tuple((r.file, r.sha256) for r in repeats),
    )
    run_input = RunInput(
        index=index, config=run_cohort(run), capture=capture_info, metrics=metrics,
        chart=chart, first_capture_metrics=first_metrics, conditions=_conditions(run),
        frame_diagnostics=diagnostics, recorded=capture.recorded,
        first_capture_recorded=first_recorded,
        provenance_note=lab_text(_written(run.provenance_note)),
        measured=measured_by(capture, timing),
        repeats=tuple(repeats),
        within=within,
    )
    short = too_short(index, run.label, run.capture, extent_of(capture.frame_times_ms), limits,
                      rerun=first_file is not None)
    return run_input, facts, tuple(held), short


def _rank(
    run_input: RunInput, fleet: Fleet | None, certificate_id: str, rules: Rules
) -> RunInput:
    if run_input.metrics is None:
        return run_input
    if fleet is None:
        ranks = provisional_ranks(run_input.metrics)
    else:
        ranks = fleet.run_ranks(run_input.config, run_input.metrics, certificate_id,
                                min_cohort=rules.ranking_min_cohort)
    return dataclasses.replace(run_input, ranks=ranks)


def issuer_block(profile: LabProfile, issued: date) -> Issuer:
    """The record's `issuer`: the lab profile as printed, and the validity from the issue date."""

    lab = profile.lab
    signatory = lab.signatory
    pinned = ({} if signatory.certificate_sha256 is None  # a later key: absent unless pinned
              else {"certificate_sha256": signatory.certificate_sha256})
    return Issuer(
        name=lab.name,
        address=_lab_written(lab.address),
        accreditation=None if lab.accreditation is None else Accreditation(
            body=lab.accreditation.body, number=lab.accreditation.number),
        signatory=Signatory(name=signatory.name, role=_lab_written(signatory.role), **pinned),
        contact=lab.contact,
        verification_base=lab.verification_base,
        validity_months=lab.validity_months,
        valid_until=add_months(issued, lab.validity_months).isoformat(),
        specimen=lab.specimen,
        profile_sha256=profile.sha256,
    )


def _lab_written(value: str | LocalizedText) -> LabText:
    """lab.yaml's text (a string, or {en, ru, pt}) as the record holds it."""
    if isinstance(value, str):
        return value
    return LocalText(en=value.en, ru=value.ru, pt=value.pt)


def _test_system(bench: CardTestSystem) -> TestSystem:
    """card.yaml's test bench as the record holds it (memory in GB as a number, 32 -> 32.0)."""
    later: dict[str, Any] = {} if bench.display is None else {"display": bench.display}
    if bench.display_timing is not None:
        later["display_timing"] = display_timing_of(bench.display_timing)
    return TestSystem(
        cpu=bench.cpu, memory_gb=None if bench.memory_gb is None else float(bench.memory_gb),
        os=bench.os, motherboard=bench.motherboard, notes=lab_text(_written(bench.notes)),
        **later)


def scope_of(card: CardInfo, runs: Sequence[CardRun], test_system: TestSystem | None) -> Scope:
    """What the grade covers (the record's `certificate.scope`): this unit and driver, every
    recorded run's game build, and the test system, as card.yaml states them."""
    return Scope(
        serial=card.serial,
        driver=card.driver,
        game_versions=tuple(
            ScopeGame(run=index, title=run.title, game_version=run.game_version)
            for index, run in enumerate(runs) if run.capture is not None),
        test_system=test_system,
    )



@dataclass(frozen=True)
class Checked:
    """A bundle's record as `certgen check` reports it, and the notes on what the captures
    record that could not be compared with card.yaml (certgen.rules.provenance)."""

    record: Record
    notes: tuple[str, ...]


def _checked(
    bundle: LoadedBundle, *, fleet: Fleet | None, draft: bool, refuse: bool,
    lab: LabProfile | None,
) -> Checked:
    card = bundle.card
    rules = load_rules(card.certificate.sop)
    inputs: list[RunInput] = []
    facts: list[RunFacts] = []
    held: list[HeldCapture] = []
    test_system = None if card.test_system is None else _test_system(card.test_system)
    timing = None if test_system is None else test_system.display_timing
    limits = DEFAULT_LIMITS if lab is None else lab.lab.capture_limits()
    short: list[Refusal] = []
    for index, run in enumerate(card.runs):
        run_input, run_facts, run_held, run_short = _read_run(bundle, index, run, rules, timing,
                                                              limits)
        inputs.append(_rank(run_input, fleet, card.certificate.id, rules))
        facts.append(run_facts)
        held.extend(run_held)
        if run_short is not None:
            short.append(run_short)
    cap = (None if card.grade_cap is None
           else GradeCap(grade=card.grade_cap.grade, reason=lab_text(_written(card.grade_cap.reason))))
    verdict = decide(facts, cap, rules)
    card_info = CardInfo(
        vendor=card.card.vendor, model=card.card.model, gpu=card.card.gpu,
        vram_gb=card.card.vram_gb, serial=card.card.serial,
        hardware_ray_tracing=card.card.hardware_ray_tracing, driver=card.card.driver)
    # What the rules of the SOP refuse, then what the card must state and what its captures
    # record (a sample id under a real lab, each capture held against the card, dates after
    # the issue date, the conditions not stated): every reason, one line each.
    provenance = hold_captures(card, held)
    sample = sample_refusal(card, specimen=None if lab is None else lab.lab.specimen)
    verdict = dataclasses.replace(verdict, refusal_details=(
        *verdict.refusal_details, *short, *([] if sample is None else [sample]),
        *provenance.refusals, *tool_errata(card, [
            (r.index, r.capture.file, r.capture.errata or ()) for r in inputs
            if r.capture is not None]),
        *dates_after_issue(card), *too_old(card, held, limits), *required_conditions(card)))
    # The card's own models become the record's through their JSON form (one shape, checked).
    record = build_record(
        certificate=CertificateInfo(
            id=card.certificate.id, issued=card.certificate.issued.isoformat(),
            sop=card.certificate.sop, languages=tuple(card.certificate.languages),
            scope=scope_of(card_info, card.runs, test_system)),
        customer=card.customer,
        card=card_info,
        phase1=Phase1(vrm_rail_resistance=lab_text(_written(card.phase1.vrm_rail_resistance))),
        runs=inputs,
        verdict=verdict,
        rules=rules,
        # The runs of the bundle's own cohorts, not the whole fleet: the build cache keys a bundle
        # on its cohorts only (certgen.builders.certificate.inputs_key), so a count of the whole
        # fleet would differ between a cached and a fresh build of the same inputs.
        fleet_runs=None if fleet is None else fleet.cohort_runs(bundle_cohorts(bundle)),
        draft=draft,
        issuer=None if lab is None else issuer_block(lab, card.certificate.issued),
        test_system=test_system,
    )
    if verdict.refusals and refuse and not draft:
        raise RefusalError(list(verdict.refusals))
    return Checked(record, provenance.notes)


def record_from_bundle(
    bundle: LoadedBundle, *, fleet: Fleet | None = None, draft: bool = False, refuse: bool = True,
    lab: LabProfile | None = None,
) -> Record:
    """The record of an opened bundle (see make_record).

    `lab` is the issuing laboratory's profile (the record's `issuer`); None leaves it null.

    refuse=False returns a refused certificate's record (status.issuable false) even when it is
    not a draft: `certgen check` reports on it without building anything.
    """
    return _checked(bundle, fleet=fleet, draft=draft, refuse=refuse, lab=lab).record


def make_record(
    bundle_path: str | os.PathLike[str], *, fleet: Fleet | None = None, draft: bool = False,
    lab: LabProfile | None = None,
) -> Record:
    """The certificate record of a bundle folder or zip.

    A certificate the rules refuse raises RefusalError (every reason in `.reasons`) unless
    `draft` is true: then the record comes back with status.issuable false and the reasons in
    status.refusals, for a draft build visibly marked as not issuable. `lab` fills `issuer`.
    """
    return record_from_bundle(load_bundle(bundle_path), fleet=fleet, draft=draft, lab=lab)


def check_record(bundle_path: str | os.PathLike[str], *, fleet: Fleet | None = None) -> Record:
    """The record of a bundle as `certgen check` sees it: never raises for a refusal (the
    reasons are in status.refusals), and is not marked as a draft."""
    return check_bundle(bundle_path, fleet=fleet).record


def check_bundle(bundle_path: str | os.PathLike[str], *, fleet: Fleet | None = None,
                 lab: LabProfile | None = None) -> Checked:
    """check_record's record, with the notes on what could not be compared (`certgen check`
    prints them). With `lab`, checked as a build issued by that laboratory would be (its
    capture minimum and maximum capture age, its specimen flag, its issuer block)."""
    return _checked(load_bundle(bundle_path), fleet=fleet, draft=False, refuse=False, lab=lab)


def uncertainty_from_record(record: Record) -> Uncertainty:
    """A record's `uncertainty` derived from its own figures under its rules file (as verify
    derives it, certgen.rules.uncertainty): each recorded capture's within-capture intervals,
    which need its frames, are taken as the record states them."""
    stated = record.uncertainty
    return uncertainty_of(
        record.tiers,
        recorded_runs([(r.index, r.resolution, r.status, r.metrics) for r in record.runs]),
        {} if stated is None else {r.run: r.repeats for r in stated.runs if r.repeats},
        load_rules(record.rules.sop),
        None if stated is None else {r.run: (r.within, r.within_se) for r in stated.runs})
