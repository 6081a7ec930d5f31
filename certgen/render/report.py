"""The before/after report in memory: HTML, PDF and the frame-time chart (docs/spec/compare.md).

Everything here is a pure function of the report record (built by certgen.builders.report) and a
language; nothing reads a capture or touches the disk.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from certgen.compare.report import PairReport
from certgen.metrics.diagnostics import STALL_MS
from certgen.model.base import text_for
from certgen.render.charts import (
    PHONE,
    WIDE,
    ChartWords,
    Layout,
    chart_scale,
    chart_text,
    frame_time_chart,
    stack_charts,
)
from certgen.render.html import render_template
from certgen.render.i18n import gettext_for
from certgen.render.nav import doc_nav
from certgen.render.pdf import html_to_pdf

if TYPE_CHECKING:
    from certgen.compare.report import ReportRecord
    from certgen.model.base import LabText
    from certgen.record import Chart
    from certgen.render.charts import Scale

SIDES = ("before", "after")
REPORT_TEMPLATE = "report.html.j2"
CSV_NAME = "compare.csv"
CHART_NAME = "frame-times.svg"



def report_pdf(html: str, *, lang: str, title: str, date: dt.date | None,
               attachments: list[tuple[str, bytes, str]]) -> bytes:
    """The report as PDF/A-3b, dated `date` in its metadata, or undated when it is None."""

    when = None if date is None else dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC)
    return html_to_pdf(html, lang=lang, title=title, author="certgen",
                       attachments=attachments, created=when)


def html_name(lang: str) -> str:
    """The report's HTML file name in one language."""
    return f"report.{lang}.html"


def pdf_name(lang: str) -> str:
    """The report's PDF file name in one language."""
    return f"report.{lang}.pdf"


def render_html(record: ReportRecord, lang: str, chart_svg: str | None,
                date: dt.date | None = None, *, languages: tuple[str, ...] = (),
                home: str | None = None) -> str:
    """The report in one language (the certificates' Jinja environment and safety rules).

    The navigation (screen only) links the same report in `languages`, its PDF and CSV
    (written beside it by certgen.builders.report), and `home` when given: the site index
    relative to the report, `{lang}` standing for the language.
    """

    # The template reads the record's fields by name (the chart series and the CSV are
    # written beside it, not printed).
    context: dict[str, object] = {f.name: getattr(record, f.name)
                                  for f in dataclasses.fields(record)
                                  if f.name not in ("charts", "csv")}
    context["nav"] = doc_nav(home=None if home is None else home.format(lang=lang),
                             languages=[(other, html_name(other)) for other in languages],
                             files=[("PDF", pdf_name(lang)), ("CSV", CSV_NAME)])
    context["date"] = date
    context["description"] = shown_description(record.compared.description, lang)
    context["chart_src"] = None
    context["chart_phone_src"] = None
    context["chart_texts"] = []
    if chart_svg is not None and isinstance(record, PairReport):  # a series has no chart
        context["chart_src"] = _data_uri(chart_svg)
        # Screens under 600 px get the chart drawn for their width (charts.PHONE); the PDF
        # and wider screens the one written to frame-times.svg.
        context["chart_phone_src"] = _data_uri(chart_for(record, lang, PHONE))
        context["chart_alt"] = chart_title(lang)
        context["chart_texts"] = chart_texts(record, lang)
    context["csv_name"] = CSV_NAME
    return render_template(REPORT_TEMPLATE, context, lang)


@dataclass(frozen=True)
class ShownDescription:
    """The change as a report in one language shows it: the text, and the language it is
    written in when that is not the report's (the report then marks it, as certificates mark
    lab-written texts)."""

    text: str
    other_lang: str | None


def shown_description(value: LabText | None, lang: str) -> ShownDescription | None:
    """`value` in `lang` (its own text, else the English, else the first given; a plain
    string is English), or None when the report states no change."""
    if value is None:
        return None
    text, source = text_for(value, lang)
    return ShownDescription(text, None if source == lang else source)


def _panels(record: PairReport) -> tuple[list[Chart], Scale]:
    """Each side's chart series (computed by the report builder) and the one scale both panels
    share (capture time; frame time up to the 200 ms stall line, frames above it clipped with a
    marker)."""

    charts = list(record.charts)
    return charts, chart_scale(charts, cap_ms=STALL_MS)


def chart_texts(record: PairReport, lang: str) -> list[str]:
    """One sentence per panel of a pair report's chart, its figures in words (the text
    alternative, and the caption under the chart)."""

    _ = gettext_for(lang)
    charts, scale = _panels(record)
    words = ChartWords(
        sentence=_("%(side)s: over %(seconds)s s, %(mean_label)s %(mean)s ms, %(low1_label)s "
                   "%(low1)s ms, %(low01_label)s %(low01)s ms; frames took from %(fastest)s to "
                   "%(slowest)s ms."),
        baseline=_("The frame-time axis starts at %(start)s ms, not at zero."),
    )
    labels = {"before": _("Before"), "after": _("After")}
    return [
        chart_text(chart, lang, words, scale, side=labels[side], mean_label=_("mean"),
                   low1_label=_("1%% low") % {}, low01_label=_("0.1%% low") % {})
        for side, chart in zip(SIDES, charts, strict=True)
    ]


def chart_for(record: PairReport, lang: str, layout: Layout = WIDE) -> str:
    """The frame-time chart of a pair report in `lang`: the certificates' chart drawer, one
    panel per side, on one shared scale, each panel with its text alternative; `layout` WIDE
    (frame-times.svg, the PDF, a wide screen) or PHONE (the HTML under 600 px)."""

    _ = gettext_for(lang)
    charts, scale = _panels(record)
    texts = chart_texts(record, lang)
    labels = {"before": _("Before"), "after": _("After")}
    panels = [
        frame_time_chart(chart, lang, x_label=_("capture time, s"), y_label=_("frame time, ms"),
                         low_1pct_label=_("1%% low") % {}, low_0_1pct_label=_("0.1%% low") % {},
                         mean_label=_("mean"), title=labels[side], description=text,
                         unit=_("ms"), scale=scale, label=labels[side], top=i * layout.height,
                         layout=layout)
        for i, (side, chart, text) in enumerate(zip(SIDES, charts, texts, strict=True))
    ]
    return stack_charts(panels, title=chart_title(lang), description=" ".join(texts),
                        layout=layout)


def chart_title(lang: str) -> str:
    """The chart's name: its SVG title and the image's alternative text (the figures in words
    follow in the caption, so a screen reader reads them once)."""
    return gettext_for(lang)("Frame times of both captures over capture time")


def _data_uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
