"""certgen's Python API: what the CLI does, callable from Python (docs/api.md).

Every function here is a thin, documented entry to one stage of the pipeline

    read_capture -> compute_figures            (one capture: SOP v1.1 figures and diagnostics)
    report_captures                            (capture files to what `certgen metrics` prints)
    load_bundle -> check_bundle / make_record  (a bundle: card.yaml, captures, rules, fleet)
    render_certificate                         (a record -> HTML, PDF and record.json, in memory)
    build_certificates / build_report / build_site   (the builders: they write to disk)

and takes and returns the same frozen, typed records the CLI uses. Errors a user can act on
are `certgen.errors.CertgenError` subclasses (each names the file, line or field); anything else
is a bug. Names in `__all__` are the stable API; everything else in certgen may move.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from certgen.builders.batch import build_many, check_unique_ids
from certgen.builders.certificate import BuildResult, check_verify_base
from certgen.builders.report import build_report as _build_report
from certgen.builders.report import report_date
from certgen.builders.site import build_site as _build_site
from certgen.errors import CertgenError
from certgen.fleet import FleetStore
from certgen.inputs.bundle import load_bundle as _load
from certgen.inputs.lab import load_lab
from certgen.metrics.capturereport import read_runs
from certgen.metrics.capturereport import report_captures as _report_captures
from certgen.metrics.diagnostics import compute_metrics
from certgen.metrics.figures import weights_of
from certgen.metrics.uncertainty import figure_intervals, interval_seed, sustained_stability
from certgen.model.capturereport import CaptureReport, RefusedCapture
from certgen.pipeline import record_from_bundle, uncertainty_from_record
from certgen.record import dump_record
from certgen.render.certificate import (
    DEFAULT_VERIFY_BASE,
    certificate_print_html,
    render_certificate_html,
    render_certificate_pdf,
)
from certgen.render.i18n import check_language
from certgen.sop import load_rules

if TYPE_CHECKING:
    from certgen.captures.model import Capture
    from certgen.inputs.bundle import LoadedBundle
    from certgen.inputs.lab import LabProfile
    from certgen.model import RunMetrics
    from certgen.model.measured import DisplayTiming
    from certgen.model.uncertainty import (
        FigureIntervals,
        GateMargin,
        SustainedStability,
        Uncertainty,
    )
    from certgen.pipeline import Fleet
    from certgen.record import Record
    from certgen.sop import Rules

__all__ = [
    "BuildResult",
    "CaptureReport",
    "CertgenError",
    "RefusedCapture",
    "RenderedCertificate",
    "build_certificates",
    "build_report",
    "build_site",
    "check_bundle",
    "compute_figures",
    "compute_intervals",
    "compute_stability",
    "gate_margins",
    "how_sure",
    "load_bundle",
    "make_record",
    "read_capture",
    "record_json",
    "render_certificate",
    "report_captures",
]



# --------------------------------------------------------------------------- one capture


def read_capture(
    path: str | os.PathLike[str], *, format: str | None = None, process: str | None = None
) -> list[Capture]:
    """The runs of one capture file as `Capture` records (most formats hold exactly one).

    The format is detected from the content unless `format` names one (see
    `certgen.captures.detect.FORMATS`); `process` picks an application from a PresentMon-family
    capture of several processes. Raises `CaptureFormatError` naming the file and line.
    """

    return read_runs(Path(path), name=str(path), format=format, process=process)


def compute_figures(capture: Capture, rules: Rules | None = None) -> RunMetrics:
    """The SOP v1.1 figures (time-weighted FPS, 1% / 0.1% lows, gap, stutter, Fluidity Score)
    and the diagnostics of one capture, with the weights of `rules` (default: the current SOP
    rules file). `.as_json()` gives the pinned keys of `certgen metrics --json`."""

    weights = weights_of(rules if rules is not None else load_rules())
    return compute_metrics(capture.frame_times_ms, weights, source=capture.source)


def compute_intervals(
    capture: Capture, *, capture_sha256: str, rules: Rules | None = None
) -> FigureIntervals:
    """Each SOP figure's 95 % measurement interval, or why it is not estimated
    (docs/spec/uncertainty.md): a note beside the figures, never a grade. `capture_sha256` is the
    SHA-256 of the capture file, which seeds the bootstrap as `certgen metrics --interval` does
    (with the capture's group), so both give the same interval."""

    weights = weights_of(rules if rules is not None else load_rules())
    group = capture.group.label() if capture.group else None
    return figure_intervals(capture.frame_times_ms, weights,
                            seed=interval_seed(capture_sha256, group))


def compute_stability(capture: Capture) -> SustainedStability:
    """The worst whole minute's average FPS over the best's, or why not (under two minutes)."""

    return sustained_stability(capture.frame_times_ms)


def report_captures(
    paths: Sequence[str | os.PathLike[str]],
    *,
    format: str | None = None,
    process: str | None = None,
    interval: bool = False,
    timing: DisplayTiming | None = None,
    rules: Rules | None = None,
) -> list[CaptureReport | RefusedCapture]:
    """`certgen metrics`: one `CaptureReport` per run of each capture file, in the given order
    (`.as_json()` is the object `metrics --json` prints), or a `RefusedCapture` in the place of
    a file or run that cannot be measured (the others are measured as usual).

    `process` applies to the captures that have process groups; when none of them has, the
    first refusal is raised (`NoProcessGroupsError`). `interval` adds the measurement intervals
    and sustained stability; `timing` (the display's refresh) the refresh-cadence figures that
    need it. Weights from `rules` (default: the current SOP rules file).
    """

    weights = weights_of(rules if rules is not None else load_rules())
    return _report_captures([os.fspath(p) for p in paths], weights, format=format,
                            process=process, interval=interval, timing=timing)


# --------------------------------------------------------------------------- one bundle


def load_bundle(path: str | os.PathLike[str]) -> LoadedBundle:
    """A bundle folder or .zip, validated, with card.yaml and every file it names read once
    (nothing else is read). Raises `BundleErrors` listing every problem at once."""

    return _load(path)


@contextmanager
def _fleet(fleet: str | os.PathLike[str] | Fleet | None) -> Iterator[Fleet | None]:
    """An open fleet for ranking: a path is opened read-only for the call; a store is used."""
    if fleet is None or not isinstance(fleet, (str, os.PathLike)):
        yield fleet
        return

    with FleetStore.open(os.fspath(fleet), readonly=True) as store:
        yield store


def _loaded(bundle: str | os.PathLike[str] | LoadedBundle) -> LoadedBundle:
    return load_bundle(bundle) if isinstance(bundle, (str, os.PathLike)) else bundle


def check_bundle(
    bundle: str | os.PathLike[str] | LoadedBundle,
    *,
    fleet: str | os.PathLike[str] | Fleet | None = None,
    lab: str | os.PathLike[str] | LabProfile | None = None,
) -> Record:
    """The record `certgen check` reports on: every rule applied, never raising for a refusal
    (the reasons are in `record.status.refusals`). `fleet` is a fleet database path or an open
    store; without one every rank is provisional (n = 1). `lab` (a lab.yaml path or a loaded
    profile) checks as `certgen check --lab`: the lab's capture minimum and maximum capture
    age, its specimen flag and its issuer block."""

    profile = load_lab(lab) if isinstance(lab, (str, os.PathLike)) else lab
    with _fleet(fleet) as store:
        return record_from_bundle(_loaded(bundle), fleet=store, draft=False, refuse=False,
                                  lab=profile)


def make_record(
    bundle: str | os.PathLike[str] | LoadedBundle,
    *,
    fleet: str | os.PathLike[str] | Fleet | None = None,
    draft: bool = False,
    lab: str | os.PathLike[str] | LabProfile | None = None,
) -> Record:
    """The certificate record of a bundle, as `certgen build` makes it.

    A certificate the rules refuse raises `RefusalError` (every reason in `.reasons`) unless
    `draft` is true: then the record is returned marked not issuable. `lab` (a lab.yaml path
    or a loaded profile) fills the record's `issuer`; without one it is null.
    """

    profile = load_lab(lab) if isinstance(lab, (str, os.PathLike)) else lab
    with _fleet(fleet) as store:
        return record_from_bundle(_loaded(bundle), fleet=store, draft=draft, lab=profile)


def record_json(record: Record) -> bytes:
    """record.json's exact bytes (the same record always gives the same bytes)."""

    return dump_record(record)


def how_sure(record: Record) -> Uncertainty:
    """How sure the record's grade is (docs/spec/uncertainty.md), derived from the record's own
    figures under its rules file, as `certgen verify` derives it: the decision rule, each gate's
    margin on each measured tier and, where the runs have repeat captures, the intervals and the
    non-binary verdicts. Equal to `record.uncertainty` for a record this certgen made; a record
    of an older certgen (no `uncertainty`) gets its margins, every verdict "not estimated"."""

    return uncertainty_from_record(record)


def gate_margins(record: Record) -> tuple[GateMargin, ...]:
    """`certgen check --json`'s `gate_margins`: each gate on each measured tier, its signed
    margin and, with repeats, its interval and verdict (`how_sure(record).gates`)."""

    return how_sure(record).gates


# --------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class RenderedCertificate:
    """One certificate in one language, in memory: what `certgen build` writes for it."""

    lang: str
    html: str
    pdf: bytes
    """PDF/A-3b with record.json attached."""
    record_json: bytes
    record_sha256: str
    """SHA-256 of record_json, printed in the document's verification block."""


def render_certificate(
    record: Record,
    lang: str = "en",
    *,
    verify_base: str | None = None,
    languages: Sequence[str] | None = None,
) -> RenderedCertificate:
    """Render a record as a certificate in `lang` (en, ru, pt), HTML and PDF, in memory.

    `languages` are the sibling languages built beside it (for the HTML's language switcher;
    the PDF is rendered from the print form, `certificate_print_html`, the same for any
    `languages`); `verify_base` is the base of the verification URL in the QR code (default:
    the issuer's). Nothing touches the disk.
    """

    check_language(lang)
    check_verify_base(verify_base)
    data = dump_record(record)
    sha = hashlib.sha256(data).hexdigest()
    base = verify_base or (record.issuer.verification_base if record.issuer is not None
                           else DEFAULT_VERIFY_BASE)
    html = render_certificate_html(record, lang, record_sha256=sha, verify_base=base,
                                   languages=languages)
    pdf = render_certificate_pdf(certificate_print_html(record, lang, record_sha256=sha,
                                                        verify_base=base, signed=False),
                                 record, data, lang)
    return RenderedCertificate(lang=lang, html=html, pdf=pdf, record_json=data, record_sha256=sha)


def build_certificates(
    bundles: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    languages: Sequence[str] | None = None,
    fleet: str | os.PathLike[str] | None = None,
    draft: bool = False,
    verify_base: str | None = None,
    jobs: int = 1,
    lab: str | os.PathLike[str] | LabProfile | None = None,
) -> list[BuildResult]:
    """`certgen build`: each bundle into `out/<certificate id>/` (record.json, HTML, PDF,
    manifest.json last), skipping bundles whose inputs did not change.

    All bundles are attempted; if any failed, the first failure is raised after the others
    were built (its message names the bundle). `lab` is the issuing laboratory's profile (a
    lab.yaml path or a loaded one), required unless `draft`.
    """

    profile = load_lab(lab) if isinstance(lab, (str, os.PathLike)) else lab

    names = [str(b) for b in bundles]
    check_unique_ids(names)
    results = build_many(names, str(out), languages=languages,
                         fleet=None if fleet is None else str(fleet), draft=draft,
                         verify_base=verify_base, jobs=jobs, lab=profile)
    built: list[BuildResult] = []
    for _name, result in results:
        if isinstance(result, Exception):
            raise result
        built.append(result)
    return built


def build_report(
    captures: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    languages: Sequence[str] = ("en",),
    series: str | os.PathLike[str] | None = None,
    date: dt.date | None = None,
) -> list[str]:
    """`certgen compare`: a before/after report of BEFORE AFTER (or one file holding both
    sides, or a paired `series` file) written into `out`; returns the file names written."""

    return _build_report([Path(c) for c in captures], Path(out), list(languages),
                  series=None if series is None else Path(series), date=report_date(date))


def build_site(out: str | os.PathLike[str], *, examples: str | os.PathLike[str] | None = None
               ) -> list[str]:
    """`certgen site`: the publishable static site (sample certificates, reports, explainers
    in en, ru and pt) into `out`; returns the site-relative paths written."""

    return _build_site(out, examples=None if examples is None else Path(examples))

