"""The site's own pages in memory: the index per language and the explainer pages.

Pure functions of what the site builder gathered (certgen.builders.site): sample links, report
samples, explainer pages. Every link is relative to the page that holds it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from certgen.render.explainers import LANGS, PAGES, ExplainerPage
from certgen.render.html import render_template
from certgen.render.i18n import LANGUAGE_NAMES, gettext_for
from certgen.render.nav import doc_nav

# Sample folder -> one-line description (msgid, translated in site.po).
SAMPLE_BLURBS = {
    "PLATINUM": "Every resolution tier clears the GOLD line and one clears the PLATINUM line; "
    "the runs are ranked against full cohorts.",
    "GOLD": "The 2560×1440 tier mean clears the GOLD line while one run is past the stutter "
    "Soft Limit: its justification, the VRM re-examination and the archived first capture "
    "are in the audit trail.",
    "SILVER": "No hardware ray tracing, so one title is disclosed as not run; one tier is below "
    "the GOLD line; small cohorts stay provisional.",
}


@dataclass(frozen=True)
class ReportSample:
    """One sample before/after report: its inputs under examples/compare and what it shows."""

    name: str
    captures: tuple[str, ...] = ()
    series: str | None = None
    title: str = ""
    """msgid (site.po)."""
    blurb: str = ""
    """msgid (site.po)."""
    description: str | None = None
    """The change in the lab's words (`certgen compare --description`; English, so the ru and
    pt reports mark it as such), for a pair sample; a series file states its own."""


def explainer_path(lang: str, slug: str, ext: str = "html") -> str:
    return f"{lang}/explainers/{slug}.{ext}"


def rel(from_file: str, to_file: str) -> str:
    """A relative link from one site file to another (both relative to the site root)."""
    fragment = ""
    if "#" in to_file:
        to_file, fragment = to_file.split("#", 1)
        fragment = "#" + fragment
    return posixpath.relpath(to_file, posixpath.dirname(from_file) or ".") + fragment


def _alternates(from_file: str, target_of: Callable[[str], str],
                languages: Sequence[str] = LANGS) -> list[dict[str, str]]:
    return [
        {"lang": lang, "name": LANGUAGE_NAMES[lang], "href": rel(from_file, target_of(lang))}
        for lang in languages
    ]


def render_explainer_html(page: ExplainerPage, *, rules_version: str, for_pdf: bool = False,
                          languages: Sequence[str] = LANGS) -> str:
    """One explainer page as a complete HTML document (browser form or the PDF's form).
    `languages`: the languages published beside it (a lab's guide may have fewer than three),
    the only ones its language links name. The PDF's form names none but its own (print hides
    the links), so the PDF is the same whatever was published beside it."""

    if for_pdf:
        languages = (page.lang,)
    me = explainer_path(page.lang, page.slug)
    context: dict[str, Any] = {
        "page": page,
        "body": page.body_pdf_html if for_pdf else page.body_html,
        "alternates": _alternates(me, lambda lang: explainer_path(lang, page.slug), languages),
        "x_default": rel(me, explainer_path(languages[0], page.slug)),
        "inline_css": for_pdf,  # the PDF reads templates/site.css inline (no file links)
        "css_href": rel(me, "assets/site.css"),
        "index_href": rel(me, f"{page.lang}/index.html"),
        "pdf_href": rel(me, explainer_path(page.lang, page.slug, "pdf")),
        "nav": doc_nav(home=rel(me, f"{page.lang}/index.html"),
                       languages=[(lang, rel(me, explainer_path(lang, page.slug)))
                                  for lang in languages],
                       files=[("PDF", rel(me, explainer_path(page.lang, page.slug, "pdf")))]),
        "rules_version": rules_version,
    }
    return render_template("explainer.html.j2", context, page.lang)


@dataclass(frozen=True)
class SampleLink:
    """What the index shows of one built sample certificate."""

    id: str
    grade: str
    model: str
    languages: tuple[str, ...]
    status: str = "valid"
    """valid, expired or revoked on the registry's date (the index marks the last two)."""


def report_path(name: str, lang: str, ext: str = "html") -> str:
    """Site path of one sample report (or its CSV with ext='csv')."""
    if ext == "csv":
        return f"reports/{name}/compare.csv"
    return f"reports/{name}/report.{lang}.{ext}"


def calibration_path(folder: str, lang: str, ext: str = "html") -> str:
    """Site path of the sample calibration review (or its JSON / CSV with ext='json' / 'csv')."""
    if ext in ("json", "csv"):
        return f"{folder}/calibration.{ext}"
    return f"{folder}/calibration.{lang}.{ext}"


def render_index_html(lang: str, samples: Sequence[SampleLink], pages: dict[str, ExplainerPage],
                      *, at: str, reports: Sequence[ReportSample] = (),
                      calibration: str | None = None, languages: Sequence[str] = LANGS,
                      registry: str | None = "verify") -> str:
    """The index in `lang`, written at site path `at` (links are relative to it).
    `calibration`: the site folder of the sample calibration review (None: the site has none).
    `languages`: the languages published; `registry`: the site folder of the samples'
    registry (None: the samples have no registry page, as in a lab's guide)."""

    _ = gettext_for(lang)
    context: dict[str, Any] = {
        "alternates": _alternates(at, lambda other: f"{other}/index.html", languages),
        "x_default": rel(at, "index.html"),
        "css_href": rel(at, "assets/site.css"),
        "self_href": rel(at, at),
        "nav": doc_nav(home=rel(at, at), languages=[(other, rel(at, f"{other}/index.html"))
                                                    for other in languages]),
        "pages": [
            {
                "title": pages[slug].title,
                "description": pages[slug].description,
                "href": rel(at, explainer_path(lang, slug)),
                "pdf_href": rel(at, explainer_path(lang, slug, "pdf")),
            }
            for slug in PAGES
        ],
        "samples": [
            {
                "id": s.id,
                "grade": s.grade,
                "model": s.model,
                "status": s.status,
                "blurb": _(SAMPLE_BLURBS[s.grade]) if s.grade in SAMPLE_BLURBS else "",
                "html_href": rel(at, f"samples/{s.id}/certificate.{_pick(lang, s)}.html"),
                "pdf_href": rel(at, f"samples/{s.id}/certificate.{_pick(lang, s)}.pdf"),
                "record_href": rel(at, f"samples/{s.id}/record.json"),
                "verify_href": None if registry is None
                else rel(at, f"{registry}/{s.id}/{lang}/index.html"),
            }
            for s in samples
        ],
        "reports": [
            {
                "name": r.name,
                "title": _(r.title),
                "blurb": _(r.blurb),
                "html_href": rel(at, report_path(r.name, lang)),
                "pdf_href": rel(at, report_path(r.name, lang, "pdf")),
                "csv_href": rel(at, report_path(r.name, lang, "csv")),
            }
            for r in reports
        ],
        "calibration": None if calibration is None else {
            ext: rel(at, calibration_path(calibration, lang, ext))
            for ext in ("html", "pdf", "json", "csv")
        } | {"explainer": rel(at, explainer_path(lang, "calibration"))},
    }
    return render_template("index.html.j2", context, lang)


def _pick(lang: str, sample: SampleLink) -> str:
    return lang if lang in sample.languages else sample.languages[0]
