"""The before/after report in memory: HTML, PDF and the frame-time chart (docs/spec/compare.md).

Everything here is a pure function of the report record (built by certgen.build.report) and a
language; nothing reads a capture or touches the disk.
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any
from xml.sax.saxutils import escape as xml_escape

SIDES = ("before", "after")
REPORT_TEMPLATE = "report.html.j2"
CSV_NAME = "compare.csv"
CHART_NAME = "frame-times.svg"



CHART_W, PANEL_H, MARGIN_L, MARGIN_R, MARGIN_T, GAP = 680.0, 150.0, 52.0, 12.0, 22.0, 40.0
COLOURS = {"before": "#1f5fa8", "after": "#c4561b"}


def frame_time_chart(series: dict[str, Any], labels: dict[str, str], unit_s: str, unit_ms: str,
                     lang: str = "en") -> str:
    """An SVG of both sides' frame times: one panel each, same time and ms scales.

    Each bucket draws a vertical bar from its fastest to its slowest frame (so a single spike
    survives the downsampling); frames over the 200 ms stall line are drawn clipped at the top
    with a marker. Labels are XML-escaped; nothing from a capture is drawn as text.
    """
    from certgen.diagnostics import STALL_MS

    duration = max((s.duration_ms for s in series.values()), default=0.0) or 1.0
    top_ms = max((hi for s in series.values() for _, _, hi in s.buckets if hi <= STALL_MS), default=1.0)
    top_ms = _nice_ceiling(min(max(top_ms * 1.1, 10.0), STALL_MS))
    plot_w = CHART_W - MARGIN_L - MARGIN_R
    height = MARGIN_T + len(series) * (PANEL_H + GAP) + 6
    out = [
        (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CHART_W:.0f} {height:.0f}" '
        f'width="{CHART_W:.0f}" height="{height:.0f}" font-family="DejaVu Sans" font-size="10">')
    ]
    for p, (side, s) in enumerate(series.items()):
        y0 = MARGIN_T + p * (PANEL_H + GAP)
        colour = COLOURS.get(side, "#333333")
        out.append(f'<text x="{MARGIN_L:.0f}" y="{y0 - 8:.1f}" font-weight="bold" fill="{colour}">'
                   f"{xml_escape(labels[side])}</text>")
        out.append(f'<rect x="{MARGIN_L:.0f}" y="{y0:.1f}" width="{plot_w:.1f}" height="{PANEL_H:.0f}" '
                   'fill="none" stroke="#999999" stroke-width="0.5"/>')
        for tick in _ticks(top_ms):
            y = y0 + PANEL_H - PANEL_H * tick / top_ms
            out.append(f'<line x1="{MARGIN_L:.0f}" x2="{MARGIN_L + plot_w:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                       'stroke="#dddddd" stroke-width="0.5"/>')
            out.append(f'<text x="{MARGIN_L - 4:.0f}" y="{y + 3:.1f}" text-anchor="end">{_tick(tick, lang)}</text>')
        out.append(f'<text x="8" y="{y0 + PANEL_H / 2:.1f}" transform="rotate(-90 8 {y0 + PANEL_H / 2:.1f})" '
                   f'text-anchor="middle">{xml_escape(unit_ms)}</text>')
        bars = []
        stalls = []
        for start, lo, hi in s.buckets:
            x = MARGIN_L + plot_w * start / duration
            y_lo = y0 + PANEL_H - PANEL_H * min(lo, top_ms) / top_ms
            y_hi = y0 + PANEL_H - PANEL_H * min(hi, top_ms) / top_ms
            if y_lo - y_hi < 0.6:
                y_lo = y_hi + 0.6
            bars.append(f"M{x:.1f} {y_lo:.1f}V{y_hi:.1f}")
            if hi > top_ms:
                stalls.append(f'<circle cx="{x:.1f}" cy="{y0 + 3:.1f}" r="2.2" fill="{colour}"/>')
        if bars:
            out.append(f'<path d="{" ".join(bars)}" stroke="{colour}" stroke-width="1.2" fill="none"/>')
        out.extend(stalls)
        for tick in _ticks(duration / 1000.0, count=6):
            x = MARGIN_L + plot_w * tick * 1000.0 / duration
            out.append(f'<text x="{x:.1f}" y="{y0 + PANEL_H + 12:.1f}" text-anchor="middle">{_tick(tick, lang)}</text>')
        out.append(f'<text x="{MARGIN_L + plot_w:.1f}" y="{y0 + PANEL_H + 24:.1f}" text-anchor="end">'
                   f"{xml_escape(unit_s)}</text>")
    out.append("</svg>\n")
    return "\n".join(out)


def _tick(value: float, lang: str) -> str:
    """An axis label in the report's language (ru/pt "2,5"), whole values without decimals."""
    from babel.numbers import format_decimal

    return str(format_decimal(value, format="#,##0.##", locale=lang))


def _nice_ceiling(value: float) -> float:
    for step in (10, 20, 25, 40, 50, 75, 100, 150, 200):
        if value <= step:
            return float(step)
    return float(value)


def _ticks(top: float, count: int = 4) -> list[float]:
    raw = top / count
    for step in (0.5, 1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 500, 1000, 2000, 5000):
        if step >= raw:
            break
    n = int(top // step)
    return [round(i * step, 6) for i in range(n + 1)]


def report_pdf(html: str, *, lang: str, title: str, date: dt.date | None,
               attachments: list[tuple[str, bytes, str]]) -> bytes:
    """The report as PDF/A-3b, dated `date` in its metadata, or undated when it is None."""
    from certgen.render.pdf import html_to_pdf

    when = None if date is None else dt.datetime(date.year, date.month, date.day, tzinfo=dt.UTC)
    return html_to_pdf(html, lang=lang, title=title, author="certgen",
                       attachments=attachments, created=when)


def render_html(record: dict[str, Any], lang: str, chart_svg: str | None,
                date: dt.date | None = None) -> str:
    """The report in one language (the certificates' Jinja environment and safety rules)."""
    from certgen.render.html import render_template

    context = {k: v for k, v in record.items() if not k.startswith("_")}
    context["date"] = date
    context["chart_src"] = None
    if chart_svg is not None:
        context["chart_src"] = "data:image/svg+xml;base64," + base64.b64encode(
            chart_svg.encode("utf-8")).decode("ascii")
    context["csv_name"] = CSV_NAME
    return render_template(REPORT_TEMPLATE, context, lang)


def chart_for(record: dict[str, Any], lang: str) -> str:
    """The two-panel frame-time chart of a pair report in `lang`."""
    from certgen import compare
    from certgen.render.i18n import gettext_for

    _ = gettext_for(lang)
    counted = record["_counted"]
    series = {side: compare.chart_series(counted[side]) for side in SIDES}
    labels = {"before": _("Before"), "after": _("After")}
    return frame_time_chart(series, labels, _("capture time, s"), _("frame time, ms"), lang)
