"""The conditions a certificate must state, and the sample ids only a specimen lab may issue
(docs/spec/bundle.md, Required for issue).

A certificate that is issued states the test bench (CPU, memory, OS, board, display) and, for
every recorded run and every archived first capture, the day it was captured and who made it;
none of those dates may be after the issue date. A --draft may leave the conditions out (it
prints "not stated"), and is marked not issuable with these refusals. An id beginning SAMPLE-
names one of the examples' sample certificates: only a laboratory profile marked
`specimen: true` (whose every page says SPECIMEN) may issue it.
"""

from __future__ import annotations

from datetime import date

from certgen.inputs.bundle import CARD_FILE, CardFile, CardRun
from certgen.model.verdict import ConditionMissing, DateAfterIssue, SampleCertificate
from certgen.rules.verdict import Refusal

BENCH_FIELDS = ("cpu", "memory_gb", "os", "motherboard", "display")
"""The test_system keys a certificate must state."""

SAMPLE_PREFIX = "SAMPLE-"
"""The id prefix of the examples' sample certificates."""


def missing(field: str) -> Refusal:
    """The refusal of one condition not stated, naming its card.yaml field path."""
    return Refusal(
        f"{CARD_FILE}: {field}: required for a certificate (a --draft may leave it out)",
        ConditionMissing(code="condition_missing", field=field))


def bench_missing(card: CardFile) -> list[Refusal]:
    """test_system, or each of its required keys, when not stated."""
    if card.test_system is None:
        return [missing("test_system")]
    return [missing(f"test_system.{key}") for key in BENCH_FIELDS
            if getattr(card.test_system, key) is None]


def run_missing(index: int, run: CardRun) -> list[Refusal]:
    """A recorded run's tested_on and technician, and its first capture's, when not stated
    (a run declared not_run was not captured: it states neither)."""
    if run.capture is None:
        return []
    found = [missing(f"runs[{index}].{key}") for key in ("tested_on", "technician")
             if getattr(run, key) is None]
    if run.first_capture is not None:
        found += [missing(f"runs[{index}].first_capture.{key}")
                  for key in ("tested_on", "technician")
                  if getattr(run.first_capture, key) is None]
    for j, repeat in enumerate(run.repeats or ()):
        found += [missing(f"runs[{index}].repeats[{j}].{key}")
                  for key in ("tested_on", "technician") if getattr(repeat, key) is None]
    return found


def after_issue(index: int, field: str, day: date, issued: date) -> Refusal:
    """The refusal of a tested_on after the issue date."""
    return Refusal(
        f"{CARD_FILE}: runs[{index}].{field}: {day} is after the issue date {issued} "
        "(certificate.issued); a run cannot be tested after its certificate is issued",
        DateAfterIssue(code="date_after_issue", run=index, field=field, date=day.isoformat(),
                       issued=issued.isoformat()))


def dates_after_issue(card: CardFile) -> list[Refusal]:
    """Every tested_on (runs and first captures) after certificate.issued."""
    issued = card.certificate.issued
    found: list[Refusal] = []
    for index, run in enumerate(card.runs):
        if run.tested_on is not None and run.tested_on > issued:
            found.append(after_issue(index, "tested_on", run.tested_on, issued))
        first = run.first_capture
        if first is not None and first.tested_on is not None and first.tested_on > issued:
            found.append(after_issue(index, "first_capture.tested_on", first.tested_on, issued))
        for j, repeat in enumerate(run.repeats or ()):
            if repeat.tested_on is not None and repeat.tested_on > issued:
                found.append(after_issue(index, f"repeats[{j}].tested_on", repeat.tested_on,
                                         issued))
    return found


def required_conditions(card: CardFile) -> list[Refusal]:
    """Every condition a certificate must state and does not, in card order: the bench first,
    then each run's."""
    found = bench_missing(card)
    for index, run in enumerate(card.runs):
        found.extend(run_missing(index, run))
    return found


def sample_refusal(card: CardFile, *, specimen: bool | None) -> Refusal | None:
    """Refuse a SAMPLE- id under a laboratory profile that is not a specimen (`specimen`
    None: no profile, nothing issued, nothing to refuse)."""
    cert_id = card.certificate.id
    if specimen is None or specimen or not cert_id.upper().startswith(SAMPLE_PREFIX):
        return None
    return Refusal(
        f"{CARD_FILE}: certificate.id: {cert_id} is one of the examples' sample certificates "
        f"(an id beginning {SAMPLE_PREFIX}); only a specimen laboratory profile "
        "(specimen: true) may issue it",
        SampleCertificate(code="sample_certificate", id=cert_id))
