"""The calibration report in memory: HTML and PDF (docs/spec/calibration.md).

A pure function of the review (certgen.fleet.calibration) and a language: the histograms are drawn
here (certgen.render.charts), every sentence is a message of the catalogs, and nothing reads
the fleet or touches the disk (certgen.builders.calibration writes).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, NamedTuple

from certgen.render.charts import histogram_svg
from certgen.render.html import render_template
from certgen.render.i18n import fmt_number, gettext_for
from certgen.render.nav import doc_nav
from certgen.render.pdf import html_to_pdf

if TYPE_CHECKING:
    from certgen.model.calibration import CalibrationReview, Distribution

TEMPLATE = "calibration.html.j2"


def html_name(lang: str) -> str:
    return f"calibration.{lang}.html"


def pdf_name(lang: str) -> str:
    return f"calibration.{lang}.pdf"


class HistogramChart(NamedTuple):
    """One distribution's histogram, ready for an <img> (data URL) with its text alternative."""

    distribution: Distribution
    src: str
    text: str


def _charts(calibration: CalibrationReview, lang: str) -> list[HistogramChart]:
    _ = gettext_for(lang)
    names = {"fluidity_score": _("Fluidity Score"), "consistency_gap": _("consistency gap"),
             "stutter": _("stutter")}
    lines = calibration.lines
    out = []
    for d in calibration.distributions:
        if not d.histogram:
            continue
        marks: list[tuple[float, str]] = []
        digits = 0
        if d.figure == "fluidity_score":
            marks = [(lines["gold"].value, fmt_number(lines["gold"].value, lang, 0)),
                     (lines["platinum"].value, fmt_number(lines["platinum"].value, lang, 0))]
        else:
            digits = 1
            if d.figure == "stutter":
                value = lines["soft_limit"].value
                marks = [(value, fmt_number(value, lang, 2))]
        text = _("%(figure)s of %(runs)s runs, %(group)s, in %(bars)s equal bars from "
                 "%(low)s to %(high)s; the median is %(median)s.") % {
            "figure": names[d.figure], "runs": fmt_number(d.runs, lang, 0), "group": d.group,
            "bars": len(d.histogram), "low": fmt_number(d.histogram_range[0], lang, digits),
            "high": fmt_number(d.histogram_range[1], lang, digits),
            "median": fmt_number(None if d.quantiles is None else d.quantiles[2], lang, 2)}
        svg = histogram_svg(d.histogram, d.histogram_range[0], d.histogram_range[1], lang=lang,
                            title=f"{names[d.figure]} · {d.group}", description=text,
                            marks=marks, digits=digits)
        src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
        out.append(HistogramChart(d, src, text))
    return out


def render_html(calibration: CalibrationReview, lang: str, *, languages: tuple[str, ...] = (),
                home: str | None = None) -> str:
    """The report in one language (the certificates' Jinja environment and safety rules)."""
    context: dict[str, object] = {
        "cal": calibration,
        "charts": _charts(calibration, lang),
        "nav": doc_nav(home=None if home is None else home.format(lang=lang),
                       languages=[(other, html_name(other)) for other in languages],
                       files=[("PDF", pdf_name(lang)), ("JSON", "calibration.json"),
                              ("CSV", "calibration.csv")]),
    }
    return render_template(TEMPLATE, context, lang)


def render_pdf(html: str, *, lang: str) -> bytes:
    """The report as tagged PDF, undated (a review carries the fleet's dates, not the clock's)."""
    return html_to_pdf(html, lang=lang, title="certgen calibration review", author="certgen",
                       created=None)
