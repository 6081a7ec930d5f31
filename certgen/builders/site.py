"""The publishable static site: an index per language, the explainers, the sample certificates.

Layout of DIR (every link relative, nothing fetched from outside):

    index.html                      the English index (the site's entry point)
    <lang>/index.html               the index in en, ru, pt
    <lang>/explainers/<slug>.html   each explainer (MathML formulas)
    <lang>/explainers/<slug>.pdf    the same page as PDF (SVG formulas)
    samples/<id>/…                  the sample certificates, built by the real build pipeline
                                    (record.json, certificate.<lang>.html / .pdf)
    verify/…                        the verification registry of the samples, built from
                                    samples/ by `certgen registry`'s code with
                                    examples/revocations.yaml (certgen/render/registry.py);
                                    the sample lab's verification base points here
    reports/<name>/…                the sample before/after reports, built by `certgen compare`
                                    (report.<lang>.html / .pdf, compare.csv, frame-times.svg)
    calibration/…                   the sample fleet calibration review, built by the code of
                                    `certgen calibrate` (calibration.<lang>.html / .pdf,
                                    calibration.json, calibration.csv)
    assets/site.css
    manifest.json                   written last

The samples come from examples/ through `certgen.builders.certificate.build_bundle`, ranked against
the sample fleet examples/fleet.jsonl (imported into a temporary database, never into DIR).
The reports come from examples/compare/ through the code of `certgen compare`. The calibration
review comes from examples/calibration/ (a synthetic 300-card fleet, imported into a temporary
database, and one candidate rules file) through the code of `certgen calibrate`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from certgen.builders.calibration import calibrate, read_candidate, write_calibration
from certgen.builders.certificate import build_bundle
from certgen.builders.explainers import SAMPLE_BUNDLE, build_page
from certgen.builders.registry import build_registry, registry_statuses
from certgen.builders.report import report_date, report_record, write_report
from certgen.errors import CertgenError, ExplainerError
from certgen.fleet import FleetStore
from certgen.inputs.lab import load_lab
from certgen.record import load_record
from certgen.registry import REVOCATIONS_FILE
from certgen.render.explainers import LANGS, PAGES, ExplainerPage
from certgen.render.pdf import html_to_pdf
from certgen.render.site import (
    ReportSample,
    SampleLink,
    explainer_path,
    render_explainer_html,
    render_index_html,
)
from certgen.sop import Rules, load_rules
from certgen.support.builddate import source_date_epoch
from certgen.support.paths import templates_dir
from certgen.writer import Writer

if TYPE_CHECKING:
    from certgen.record import Record
    from certgen.registry import PublishedWheel

DEFAULT_DATE = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)




REPORT_SAMPLES: tuple[ReportSample, ...] = (
    ReportSample(
        "change", captures=("change/before.json", "change/after.json"),
        title="A change larger than the noise floor",
        description="Graphics driver updated from 24.10.1 (before) to 24.12.1 (after)",
        blurb="Two 3-minute captures before and after a driver update: the average and the 1% "
        "low move by more than the floor the captures show themselves; the 0.1% low does not.",
    ),
    ReportSample(
        "inside-floor", captures=("inside-floor/both.csv",),
        title="A difference inside the noise floor",
        blurb="One benchmark-page CSV holding both sides of a settings toggle: every "
        "difference is smaller than the floor, so the report shows no change.",
    ),
    ReportSample(
        "series", series="series/series.yaml",
        title="A paired A/B series",
        blurb="Eight pairs run in ABBA order and a 10-run pilot: a change is reported only "
        "where the signed-rank test, the bootstrap interval and the pilot's smallest "
        "detectable effect all agree.",
    ),
)

Progress = Callable[[str], None]


def repo_examples_dir() -> Path:
    """examples/ of the source checkout (the samples are not shipped inside the wheel)."""
    return Path(__file__).resolve().parent.parent.parent / "examples"


def site_date() -> dt.datetime:
    """The date the PDFs carry: SOURCE_DATE_EPOCH when set, else the samples' issue date."""

    return source_date_epoch() or DEFAULT_DATE


SITE_HOME = "../../{lang}/index.html"
"""The index in the page's language, seen from samples/<id>/ and reports/<name>/."""

SAMPLE_LAB = "lab.yaml"
"""The sample laboratory profile in examples/ (specimen: true)."""

REGISTRY_FOLDER = "verify"
"""Where the site publishes the registry: the sample lab's verification base is <site>/verify."""

CALIBRATION_FOLDER = "calibration"
"""The sample calibration review: examples/calibration/ in, <site>/calibration/ out."""
CALIBRATION_FLEET = "fleet.jsonl"
"""The synthetic fleet the review reads, in examples/calibration/."""
CALIBRATION_CANDIDATE = "sop-gpu-001-v1.2-draft.yaml"
"""The candidate rules file the review re-grades by, in examples/calibration/."""


def build_samples(out: Path, examples: Path, progress: Progress | None = None, *,
                  languages: tuple[str, ...] = LANGS, only: str | None = None,
                  ) -> tuple[list[SampleLink], dict[str, Record]]:
    """Build every sample bundle of examples/ (or only the folder named `only`) into
    out/samples with the sample fleet, in `languages`.

    Returns the index's links and each sample's record by its folder name (the certificate
    tour quotes the GOLD sample's, so nothing reads the sample or the fleet a second time).
    """

    # The samples are issued by the examples' sample laboratory (marked SPECIMEN throughout).
    lab = load_lab(examples / SAMPLE_LAB)

    bundles = sorted(p for p in examples.iterdir() if (p / "card.yaml").is_file()
                     and (only is None or p.name == only))
    if not bundles:
        raise CertgenError("no sample bundle (a folder with card.yaml)", file=str(examples))
    links: list[SampleLink] = []
    records: dict[str, Record] = {}
    with tempfile.TemporaryDirectory(prefix="certgen-site-") as tmp:
        fleet_db = Path(tmp) / "fleet.sqlite"
        with FleetStore.open(fleet_db) as store, (examples / "fleet.jsonl").open(
            encoding="utf-8"
        ) as fh:
            store.import_jsonl(fh, name="examples/fleet.jsonl")
        for bundle in bundles:
            if progress:
                progress(f"sample {bundle.name}")
            result = build_bundle(bundle, out / "samples", languages=list(languages),
                                  fleet=fleet_db, use_cache=False, lab=lab, home=SITE_HOME)
            path = Path(result.folder) / "record.json"
            record = load_record(path.read_bytes(), source=str(path))
            records[bundle.name] = record
            links.append(SampleLink(
                id=result.certificate_id,
                grade=record.grade.value,
                model=record.card.model,
                languages=tuple(result.languages),
            ))
    order = {"PLATINUM": 0, "GOLD": 1, "SILVER": 2}
    return sorted(links, key=lambda s: (order.get(s.grade, 9), s.id)), records


def tour_record(records: dict[str, Record], examples: Path) -> Record:
    """The GOLD sample's record, which the certificate tour quotes (docs.SAMPLE_BUNDLE)."""
    record = records.get(SAMPLE_BUNDLE)
    if record is None:
        raise ExplainerError(
            "the certificate tour quotes the GOLD sample: its bundle is missing "
            "(build the site from a source checkout)", file=str(examples / SAMPLE_BUNDLE))
    return record


GUIDE_FOLDER = "guide"
"""Where `certgen registry --explainers` publishes the explainers, inside the registry folder."""


def guide_languages(languages: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The languages a lab's guide is published in: every language one of its certificates is
    in, in the explainers' order (en, ru, pt); at least English."""
    wanted = {lang for langs in languages for lang in langs}
    return tuple(lang for lang in LANGS if lang in wanted) or ("en",)


def build_guide(out: Path, *, languages: tuple[str, ...], folder: str = GUIDE_FOLDER,
                examples: Path | None = None, progress: Progress | None = None,
                pdf: bool = True) -> list[str]:
    """The explainers a laboratory publishes beside its registry (`certgen registry
    --explainers`), in `languages`: out/folder/<lang>/explainers/<slug>.html and .pdf, an
    index per language, and what the explainers quote and link, built from examples/ by the
    production code as the site builds them: the GOLD sample certificate (samples/<id>/,
    marked SPECIMEN), the sample before/after reports and the sample calibration review.
    Returns the paths written (relative to out/folder), sorted.

    The tour's worked example is the GOLD sample, which only a source checkout holds
    (examples/ is not in the wheel): without it this is refused in one line."""
    examples = examples or repo_examples_dir()
    if not (examples / SAMPLE_BUNDLE / "card.yaml").is_file():
        raise ExplainerError(
            "the explainers quote the GOLD sample certificate, whose bundle is missing: "
            "publish them from a source checkout of certgen (examples/ is not in the wheel)",
            file=str(examples / SAMPLE_BUNDLE))
    unknown = [lang for lang in languages if lang not in LANGS]
    if unknown or not languages:
        raise ExplainerError(f"no explainers in {', '.join(unknown) or 'no language'}; "
                             f"they exist in {', '.join(LANGS)}")
    created = site_date()
    rules = load_rules()
    css = "\n".join((templates_dir() / name).read_text(encoding="utf-8")
                    for name in ("site.css", "nav.css"))
    with Writer(out, folder) as writer:
        samples, records = build_samples(writer.staging, examples, progress,
                                         languages=languages, only=SAMPLE_BUNDLE)
        tour = tour_record(records, examples)
        reports = build_reports(writer.staging, examples, progress, report_date(None),
                                languages=languages)
        build_calibration(writer.staging, examples, progress, languages=languages)
        writer.write("assets/site.css", css.encode("utf-8"))
        for lang in languages:
            pages = {}
            for slug in PAGES:
                if progress:
                    progress(f"explainer {lang}/{slug}")
                page = build_page(slug, lang, rules, sample=tour)
                pages[slug] = page
                writer.write(explainer_path(lang, slug), render_explainer_html(
                    page, rules_version=rules.rules_version, languages=languages
                ).encode("utf-8"))
                if pdf:
                    writer.write(explainer_path(lang, slug, "pdf"), html_to_pdf(
                        render_explainer_html(page, rules_version=rules.rules_version,
                                              for_pdf=True, languages=languages),
                        lang=lang, title=page.title, author="certgen", created=created))
            for at in (f"{lang}/index.html", "index.html")[:2 if lang == languages[0] else 1]:
                writer.write(at, render_index_html(
                    lang, samples, pages, at=at, reports=reports,
                    calibration=CALIBRATION_FOLDER, languages=languages, registry=None
                ).encode("utf-8"))
        writer.finish({"guide": list(languages), "samples": [s.id for s in samples]})
    root = Path(out) / folder
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def guide_home(languages: tuple[str, ...], folder: str = GUIDE_FOLDER) -> str:
    """The registry pages' home link to the guide (build_registry's `home`): the index in the
    page's language when the guide has every language a registry page is written in, else the
    guide's own first page."""
    if set(LANGS) <= set(languages):
        return f"{folder}/{{lang}}/index.html"
    return f"{folder}/index.html"


def build_reports(out: Path, examples: Path, progress: Progress | None = None,
                  date: dt.date | None = None, languages: tuple[str, ...] = LANGS
                  ) -> list[ReportSample]:
    """Build each sample report of examples/compare into out/reports/<name> (in `languages`).

    `date` is printed on the reports (None: undated, as `certgen compare` without a date).
    """

    base = examples / "compare"
    built = []
    for sample in REPORT_SAMPLES:
        if progress:
            progress(f"report {sample.name}")
        record = report_record(
            [base / c for c in sample.captures],
            None if sample.series is None else base / sample.series,
            base=base, description=sample.description,
        )
        write_report(record, out / "reports" / sample.name, list(languages), date,
                     home=SITE_HOME)
        built.append(sample)
    return built


def build_calibration(out: Path, examples: Path, progress: Progress | None = None,
                      languages: tuple[str, ...] = LANGS) -> list[str]:
    """The sample calibration review of examples/calibration into out/calibration (in
    `languages`): its fleet imported into a temporary SQLite file, reviewed with its candidate
    rules file by the code of `certgen calibrate`. Returns the file names written."""
    source = examples / CALIBRATION_FOLDER
    if progress:
        progress("calibration review")
    candidate = read_candidate(source / CALIBRATION_CANDIDATE)
    with tempfile.TemporaryDirectory(prefix="certgen-site-") as tmp:
        fleet_db = Path(tmp) / "fleet.sqlite"
        with FleetStore.open(fleet_db) as store, (source / CALIBRATION_FLEET).open(
            encoding="utf-8"
        ) as fh:
            store.import_jsonl(fh, name=f"examples/{CALIBRATION_FOLDER}/{CALIBRATION_FLEET}")
        review = calibrate(fleet_db, candidates=[candidate])
    return write_calibration(review, out / CALIBRATION_FOLDER, list(languages),
                             home="../{lang}/index.html")


def build_site(out: str | os.PathLike[str], *, examples: Path | None = None,
               progress: Progress | None = None, pdf: bool = True,
               as_of: dt.date | None = None, software: PublishedWheel | None = None
               ) -> list[str]:
    """Write the whole site into `out`; return the site-relative paths written, sorted.

    `as_of` is the registry's date (the samples' statuses); None: the site's date.
    `software`: the checked certgen wheel the registry publishes (certgen.distribution).
    """

    created = site_date()
    reports_date = report_date(None)
    out_path = Path(out)
    rules = load_rules()
    # The site's stylesheet and the shared navigation's (templates/nav.css), one file.
    css = "\n".join((templates_dir() / name).read_text(encoding="utf-8")
                    for name in ("site.css", "nav.css"))
    examples = examples or repo_examples_dir()
    # The whole site (samples, reports, registry, pages) is built into the writer's staging
    # folder and moved in by its commit: a rebuild that fails anywhere keeps the previous site
    # whole, not its samples new and its pages old.
    with Writer(out_path) as writer:
        _write_site(writer, examples, progress, pdf=pdf, as_of=as_of, software=software,
                    created=created, reports_date=reports_date, rules=rules, css=css)
    files = [p.relative_to(out_path).as_posix() for p in out_path.rglob("*") if p.is_file()]
    return sorted(files)


def _write_site(writer: Writer, examples: Path, progress: Progress | None, *, pdf: bool,
                as_of: dt.date | None, software: PublishedWheel | None, created: dt.datetime,
                reports_date: dt.date | None, rules: Rules, css: str) -> None:
    """Build every part of the site into `writer.staging`, then finish the writer."""
    stage = writer.staging
    samples, records = build_samples(stage, examples, progress)
    tour = tour_record(records, examples)
    reports = build_reports(stage, examples, progress, reports_date)
    build_calibration(stage, examples, progress)
    if progress:
        progress("registry")
    revocations = examples / REVOCATIONS_FILE
    revoked = revocations if revocations.is_file() else None
    day = as_of or created.date()
    build_registry(stage / "samples", stage, folder=REGISTRY_FOLDER, as_of=day,
                   revocations=revoked, home="../{lang}/index.html", software=software)
    # The index marks a revoked or expired sample as its registry page does.
    statuses = registry_statuses(stage / "samples", as_of=day, revocations=revoked)
    samples = [dataclasses.replace(s, status=statuses.get(s.id, s.status)) for s in samples]

    writer.write("assets/site.css", css.encode("utf-8"))
    pages: dict[str, dict[str, ExplainerPage]] = {}
    for lang in LANGS:
        pages[lang] = {}
        for slug in PAGES:
            if progress:
                progress(f"explainer {lang}/{slug}")
            page = build_page(slug, lang, rules, sample=tour)
            pages[lang][slug] = page
            writer.write(explainer_path(lang, slug), render_explainer_html(
                page, rules_version=rules.rules_version).encode("utf-8"))
            if pdf:
                printable = render_explainer_html(page, rules_version=rules.rules_version,
                                                  for_pdf=True)
                writer.write(explainer_path(lang, slug, "pdf"), html_to_pdf(
                    printable, lang=lang, title=page.title, author="certgen",
                    created=created))
        writer.write(f"{lang}/index.html",
                     render_index_html(lang, samples, pages[lang], at=f"{lang}/index.html",
                                       reports=reports, calibration=CALIBRATION_FOLDER
                                       ).encode("utf-8"))
    writer.write("index.html", render_index_html("en", samples, pages["en"], at="index.html",
                                                 reports=reports, calibration=CALIBRATION_FOLDER
                                                 ).encode("utf-8"))
    writer.finish({"samples": [s.id for s in samples], "reports": [r.name for r in reports],
                   "calibration": CALIBRATION_FOLDER})
