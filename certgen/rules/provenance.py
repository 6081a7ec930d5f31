"""What each capture records, held against card.yaml (docs/spec/provenance.md).

A capture may record the GPU, driver, OS, CPU, RAM, board, resolution and date it was made with
(`Recorded`, certgen.model.capture). Each comparison below is a small pure function over two
texts: the value as the capture wrote it and the value card.yaml states. Both are normalised
for the comparison only (the record keeps what was written). A field the capture does not
record, or that a rule cannot read, is not compared: nothing is guessed.

- GPU (`gpu_agrees`) and resolution (`resolution_agrees`): a disagreement is refused, and no
  note can excuse it: the capture is not of the certified card, or not of the run.
- driver, OS, CPU, RAM, board and the capture date against the run's `tested_on` (more than
  one day apart): refused unless the run carries a `provenance_note` explaining it.
- the frame-generation multiplier a capture's frame types show against the run's declared
  `frame_generation_mode` (`frame_generation_agrees`): refused unless the run carries a
  `provenance_note`; a run that states no mode, or a capture without frame types, is not
  compared.
- a date a capture records after the issue date: refused, no note can excuse it.
- two captures of one bundle recording different GPUs: refused.

`hold_captures` applies every rule to a bundle and returns the refusals (one per mismatch, in
card order) and the notes `certgen check` prints (a date it could not read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from certgen.inputs.bundle import CARD_FILE, CardFile, CardRun, CardTestSystem
from certgen.model.capture import CaptureErratum, Recorded
from certgen.model.verdict import (
    CapturesGpuDiffer,
    DateAfterIssue,
    ProvenanceMismatch,
    ProvenanceWhat,
    ToolErratumRefusal,
)
from certgen.rules.agreement import (
    board_agrees,
    captured_date,
    cpu_agrees,
    dates_agree,
    driver_agrees,
    frame_generation_agrees,
    gpu_agrees,
    gpu_model_tokens,
    gpus_agree,
    os_agrees,
    ram_agrees,
    resolution_agrees,
)
from certgen.rules.verdict import Refusal

CaptureField = str
"""Which of a run's files: "capture", "first_capture" or "repeats[N]" (card.yaml)."""


def repeat_index(field: CaptureField) -> int | None:
    """N of "repeats[N]"; None for the recorded or the first capture."""
    return int(field[len("repeats["):-1]) if field.startswith("repeats[") else None

# --------------------------------------------------------------------------------------------
# A bundle's captures held against its card
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeldCapture:
    """One capture of a bundle and what it records: the run it belongs to, which of the run's
    files it is, and its name as card.yaml gives it."""

    run: int
    field: CaptureField
    file: str
    recorded: Recorded
    frame_generation: float | None = None
    """The frame-generation multiplier the capture shows (frames shown per application frame,
    certgen.metrics.framegen), or None where it shows none."""


@dataclass(frozen=True)
class Provenance:
    """What holding a bundle's captures against its card found: the refusals, in card order,
    and the notes `certgen check` prints (what could not be compared, and why)."""

    refusals: tuple[Refusal, ...]
    notes: tuple[str, ...]


WHAT_WORDS: dict[ProvenanceWhat, str] = {
    "gpu": "GPU", "resolution": "resolution", "driver": "driver", "os": "OS", "cpu": "CPU",
    "ram": "RAM", "motherboard": "motherboard", "captured_at": "capture date",
    "frame_generation_mode": "frame-generation multiplier",
}
"""How messages name what disagrees."""


def _mismatch(held: HeldCapture, run: CardRun, what: ProvenanceWhat, recorded: str,
              declared: str, declared_field: str, *, excusable: bool) -> Refusal:
    where = f"{CARD_FILE}: runs[{held.run}].{held.field}"
    if excusable:
        tail = (f"explain it in runs[{held.run}].provenance_note or correct card.yaml")
    elif what == "gpu":
        tail = "the capture is not of the certified card (no provenance_note can excuse it)"
    else:
        tail = "the capture is not of this run (no provenance_note can excuse it)"
    message = (f"{where}: run \"{run.label}\": {held.file} records {WHAT_WORDS[what]} "
               f"{recorded!r}, {declared_field} says {declared!r}; {tail}")
    return Refusal(message, ProvenanceMismatch(
        code="provenance_mismatch", run=held.run, field=held.field, file=held.file, what=what,
        recorded=recorded, declared=declared, declared_field=declared_field,
        excusable=excusable))


def _system_checks(bench: CardTestSystem | None, driver: str
                   ) -> list[tuple[ProvenanceWhat, str | None, str]]:
    """(what, the declared value or None, where card.yaml states it) for the fields a
    provenance_note may excuse."""
    return [
        ("driver", driver, "card.driver"),
        ("os", None if bench is None else bench.os, "test_system.os"),
        ("cpu", None if bench is None else bench.cpu, "test_system.cpu"),
        ("ram", None if bench is None or bench.memory_gb is None else f"{bench.memory_gb:g} GB",
         "test_system.memory_gb"),
        ("motherboard", None if bench is None else bench.motherboard,
         "test_system.motherboard"),
    ]


def _agrees(what: ProvenanceWhat, recorded: str, declared: str, bench: CardTestSystem | None
            ) -> bool | None:
    if what == "driver":
        return driver_agrees(recorded, declared)
    if what == "os":
        return os_agrees(recorded, declared)
    if what == "cpu":
        return cpu_agrees(recorded, declared)
    if what == "ram":
        assert bench is not None and bench.memory_gb is not None
        return ram_agrees(recorded, float(bench.memory_gb))
    return board_agrees(recorded, declared)


def _tested_on(run: CardRun, field: CaptureField) -> date | None:
    if field == "first_capture":
        return None if run.first_capture is None else run.first_capture.tested_on
    repeat = repeat_index(field)
    if repeat is not None:
        return (run.repeats or [])[repeat].tested_on
    return run.tested_on


def _excused(run: CardRun, field: CaptureField) -> bool:
    """A provenance_note excuses what a note may: the run's, or a repeat's own for it."""
    repeat = repeat_index(field)
    own = None if repeat is None else (run.repeats or [])[repeat].provenance_note
    return run.provenance_note is not None or own is not None


def hold_capture(card: CardFile, held: HeldCapture) -> tuple[list[Refusal], list[str]]:
    """Every rule on one capture: its refusals (one per mismatch) and notes."""
    run = card.runs[held.run]
    rec = held.recorded
    refusals: list[Refusal] = []
    notes: list[str] = []
    excused = _excused(run, held.field)
    if rec.gpu is not None and gpu_agrees(rec.gpu, (card.card.model, card.card.gpu)) is False:
        refusals.append(_mismatch(held, run, "gpu", rec.gpu,
                                  f"{card.card.model} / {card.card.gpu}", "card.model / card.gpu",
                                  excusable=False))
    if rec.resolution is not None:
        agrees = resolution_agrees(rec.resolution, run.resolution)
        if agrees is False:
            refusals.append(_mismatch(held, run, "resolution", rec.resolution, run.resolution,
                                      f"runs[{held.run}].resolution", excusable=False))
        elif agrees is None:
            notes.append(f"runs[{held.run}].{held.field}: {held.file} records resolution "
                         f"{rec.resolution!r}, which certgen cannot read; not compared")
    if not excused:
        for what, declared, declared_field in _system_checks(card.test_system,
                                                              card.card.driver):
            value = getattr(rec, what)
            if value is None or declared is None:
                continue
            if _agrees(what, value, declared, card.test_system) is False:
                refusals.append(_mismatch(held, run, what, value, declared, declared_field,
                                          excusable=True))
    mode = run.frame_generation_mode  # only a mode card.yaml states is held (never derived)
    if mode is not None and held.frame_generation is not None and not excused:
        agrees = frame_generation_agrees(held.frame_generation, mode)
        if agrees is False:
            refusals.append(_mismatch(held, run, "frame_generation_mode",
                                      f"{held.frame_generation:.2f}x (FrameType)", mode,
                                      f"runs[{held.run}].frame_generation_mode",
                                      excusable=True))
        elif agrees is None:
            notes.append(f"runs[{held.run}].{held.field}: {held.file} types no frame as "
                         f"generated, so it cannot show the declared mode {mode!r} (PresentMon "
                         "writes some generators' frames as Application); not compared")
    if rec.captured_at is not None:
        day = captured_date(rec.captured_at)
        issued = card.certificate.issued
        tested_on = _tested_on(run, held.field)
        tested_field = ("tested_on" if held.field == "capture"
                        else f"{held.field}.tested_on")
        if day is None:
            notes.append(f"runs[{held.run}].{held.field}: {held.file} records capture date "
                         f"{rec.captured_at!r}, which certgen cannot read; not compared")
        elif day > issued:
            refusals.append(Refusal(
                f"{CARD_FILE}: runs[{held.run}].{held.field}: run \"{run.label}\": {held.file} "
                f"records capture date {rec.captured_at!r}, after the issue date {issued} "
                "(certificate.issued); a certificate cannot cite a capture made after it",
                DateAfterIssue(code="date_after_issue", run=held.run, field=held.field,
                               date=day.isoformat(), issued=issued.isoformat())))
        elif tested_on is not None and not excused and not dates_agree(day, tested_on):
            refusals.append(_mismatch(held, run, "captured_at", rec.captured_at,
                                      tested_on.isoformat(), f"runs[{held.run}].{tested_field}",
                                      excusable=True))
    return refusals, notes


def gpus_differ(card: CardFile, captures: Sequence[HeldCapture]) -> list[Refusal]:
    """Refuse captures of one bundle that record different GPUs: each capture is compared
    with the first (in card order) that records a GPU with model tokens."""
    first: HeldCapture | None = None
    refusals: list[Refusal] = []
    for held in captures:
        gpu = held.recorded.gpu
        if gpu is None or not gpu_model_tokens(gpu):
            continue
        if first is None:
            first = held
            continue
        other = first.recorded.gpu
        assert other is not None
        if gpus_agree(gpu, other) is False:
            run = card.runs[held.run]
            refusals.append(Refusal(
                f"{CARD_FILE}: runs[{held.run}].{held.field}: run \"{run.label}\": {held.file} "
                f"records GPU {gpu!r}, runs[{first.run}].{first.field} {first.file} records "
                f"{other!r}; the captures of one certificate must be of one card",
                CapturesGpuDiffer(code="captures_gpu_differ", run=held.run, field=held.field,
                                  file=held.file, gpu=gpu, other_run=first.run,
                                  other_field=first.field, other_file=first.file,
                                  other_gpu=other)))
    return refusals


def hold_captures(card: CardFile, captures: Sequence[HeldCapture]) -> Provenance:
    """Every provenance rule on a bundle's captures (card order): one refusal per mismatch,
    then the captures that record different GPUs; and the notes."""
    refusals: list[Refusal] = []
    notes: list[str] = []
    for held in captures:
        found, said = hold_capture(card, held)
        refusals.extend(found)
        notes.extend(said)
    refusals.extend(gpus_differ(card, captures))
    return Provenance(tuple(refusals), tuple(notes))


def tool_errata(card: CardFile, found: Sequence[tuple[int, str, tuple[CaptureErratum, ...]]]
                ) -> list[Refusal]:
    """Refuse a capture whose tool version has a known defect that makes a graded figure wrong
    (errata effect `refuse`); `found` is (run, capture file, its errata) in card order. A
    warning or a defect of no effect stays a finding on the certificate."""
    refusals: list[Refusal] = []
    for run_index, file, errata in found:
        run = card.runs[run_index]
        for e in errata:
            if e.effect != "refuse":
                continue
            refusals.append(Refusal(
                f"{CARD_FILE}: runs[{run_index}].capture: run \"{run.label}\": {file} comes from "
                f"{e.tool} {e.version}, whose {', '.join(e.columns)} has a known defect "
                f"({e.id}: {e.defect} {e.source}); capture the run with a version without it",
                ToolErratumRefusal(code="tool_erratum", run=run_index, file=file, erratum=e.id,
                                   tool=e.tool, version=e.version, columns=e.columns,
                                   source=e.source)))
    return refusals
