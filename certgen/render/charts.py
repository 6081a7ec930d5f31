"""Frame-time charts as inline SVG, drawn from the record's downsampled series.

The record carries, per run, equal-time buckets `[t_start_ms, min_ms, max_ms]` (so a single
spike survives downsampling) and the 1% / 0.1% lows as frame times. The chart draws the band
between each bucket's shortest and longest frame over capture time, and the two low lines.
Coordinates are printed with fixed decimals, so the same series gives the same bytes.
Text comes in already translated; it is XML-escaped here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from certgen.render.i18n import fmt_number

if TYPE_CHECKING:
    from certgen.record import Chart

WIDTH = 680.0
HEIGHT = 190.0
LEFT = 52.0
RIGHT = 12.0
TOP = 22.0
BOTTOM = 34.0


def _nice_step(span: float, target: int) -> float:
    """A 1/2/5 × 10^k step giving about `target` intervals over `span`."""
    if span <= 0:
        return 1.0
    raw = span / target
    power = 10 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * power:
            return float(mult * power)
    return float(10 * power)


def _f(value: float) -> str:
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


@dataclass(frozen=True)
class Scale:
    """The axes of a chart: capture time (s) and frame time (ms), each with its tick step.

    Charts drawn one above the other (the two sides of a before/after report) share one Scale,
    so the same height means the same frame time and the same x the same second."""

    seconds: float
    step_x: float
    y_max: float
    step_y: float


def chart_scale(charts: Sequence[Chart], *, cap_ms: float | None = None) -> Scale:
    """The Scale that fits every chart's buckets and low lines; with `cap_ms`, the frame-time
    axis stops there (frames above it are drawn clipped, with a marker)."""
    values = [b[2] for c in charts for b in c.buckets if cap_ms is None or b[2] <= cap_ms]
    values += [v for c in charts for v in (c.low_1pct_ms, c.low_0_1pct_ms) if v]
    top_value = max([*values, 1.0])
    step_y = _nice_step(top_value, 4)
    y_max = float(step_y * math.ceil(top_value * 1.08 / step_y))
    if cap_ms is not None:
        y_max = min(y_max, cap_ms)
    seconds = max(max((c.duration_ms for c in charts), default=0.0) / 1000.0, 1e-9)
    return Scale(seconds=seconds, step_x=_nice_step(seconds, 6), y_max=y_max, step_y=step_y)


def frame_time_chart(
    chart: Chart,
    lang: str,
    *,
    x_label: str,
    y_label: str,
    low_1pct_label: str,
    low_0_1pct_label: str,
    title: str,
    unit: str = "ms",
    scale: Scale | None = None,
    label: str | None = None,
    top: float | None = None,
) -> str:
    """One run's chart: frame time (ms) over capture time (s), with the 1% and 0.1% low lines.

    `scale` shares axes with other charts (default: this chart's own); `label` is a visible
    caption at the top left (a report's "Before" / "After"); `top` places the chart at that y
    inside an outer SVG (see stack_charts) instead of as a document of its own.
    """
    buckets: Sequence[Sequence[float]] = chart.buckets
    duration = chart.duration_ms
    low1 = chart.low_1pct_ms
    low01 = chart.low_0_1pct_ms
    scale = scale or chart_scale([chart])
    y_max, step_y, seconds, step_x = scale.y_max, scale.step_y, scale.seconds, scale.step_x
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x_of(t_ms: float) -> float:
        return LEFT + plot_w * min(max(t_ms / 1000.0 / seconds, 0.0), 1.0)

    def y_of(ms: float) -> float:
        return TOP + plot_h * (1.0 - min(max(ms / y_max, 0.0), 1.0))

    placed = ('width="100%"' if top is None
              else f'x="0" y="{_f(top)}" width="{WIDTH:.0f}" height="{HEIGHT:.0f}"')
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH:.0f} '
        f'{HEIGHT:.0f}" {placed} role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">',
        f"<title>{escape(title)}</title>",
        f'<rect x="{_f(LEFT)}" y="{_f(TOP)}" width="{_f(plot_w)}" height="{_f(plot_h)}" '
        'fill="#ffffff" stroke="#9aa3ad" stroke-width="0.6"/>',
    ]
    # Grid and axis labels.
    digits_y = 0 if step_y >= 1 else 1
    value = 0.0
    while value <= y_max + 1e-9:
        y = y_of(value)
        out.append(f'<line x1="{_f(LEFT)}" y1="{_f(y)}" x2="{_f(LEFT + plot_w)}" y2="{_f(y)}" '
                   'stroke="#e3e7eb" stroke-width="0.6"/>')
        out.append(f'<text x="{_f(LEFT - 5)}" y="{_f(y + 3)}" text-anchor="end" class="tick" font-size="9" fill="#5c6670">'
                   f"{escape(fmt_number(value, lang, digits_y))}</text>")
        value += step_y
    digits_x = 0 if step_x >= 1 else 1
    value = 0.0
    while value <= seconds + 1e-9:
        x = LEFT + plot_w * value / seconds
        out.append(f'<line x1="{_f(x)}" y1="{_f(TOP + plot_h)}" x2="{_f(x)}" '
                   f'y2="{_f(TOP + plot_h + 4)}" stroke="#9aa3ad" stroke-width="0.6"/>')
        out.append(f'<text x="{_f(x)}" y="{_f(TOP + plot_h + 15)}" text-anchor="middle" '
                   f'class="tick" font-size="9" fill="#5c6670">{escape(fmt_number(value, lang, digits_x))}</text>')
        value += step_x
    out.append(f'<text x="{_f(LEFT + plot_w / 2)}" y="{_f(HEIGHT - 3)}" text-anchor="middle" '
               f'class="axis" font-size="9.5" fill="#3c4650">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(12 {_f(TOP + plot_h / 2)}) rotate(-90)" '
               f'text-anchor="middle" class="axis" font-size="9.5" fill="#3c4650">{escape(y_label)}</text>')
    # The min–max band: upper edge left to right, lower edge right to left.
    if buckets:
        width_ms = duration / max(len(buckets), 1)
        upper: list[str] = []
        lower: list[str] = []
        for t0, lo, hi in buckets:
            xa, xb = x_of(t0), x_of(min(t0 + width_ms, duration))
            upper.append(f"{_f(xa)},{_f(y_of(hi))} {_f(xb)},{_f(y_of(hi))}")
            lower.append(f"{_f(xb)},{_f(y_of(lo))} {_f(xa)},{_f(y_of(lo))}")
        points = " ".join(upper + lower[::-1])
        out.append(f'<polygon points="{points}" fill="#5b8fd6" fill-opacity="0.45" '
                   'stroke="#2f5f9e" stroke-width="0.5" stroke-linejoin="round"/>')
        # Frames above a capped axis (stalls on a report) are clipped: a dot marks each.
        for t0, _lo, hi in buckets:
            if hi > y_max:
                out.append(f'<circle cx="{_f(x_of(t0 + width_ms / 2))}" cy="{_f(TOP + 3)}" '
                           'r="2.2" fill="#2f5f9e"/>')
    if label:
        out.append(f'<text x="{_f(LEFT)}" y="{_f(TOP - 6)}" class="label" font-size="10" '
                   f'font-weight="bold" fill="#1f2a36">{escape(label)}</text>')
    # The low lines (as frame times: a low of F FPS is a line at 1000 / F ms).
    # The low lines (a low of F FPS is a line at 1000 / F ms), with a legend above the plot.
    legend_x = LEFT + plot_w
    for value_ms, label, colour, dash in (
        (low01, low_0_1pct_label, "#b3261e", "2 2"),
        (low1, low_1pct_label, "#c77700", "5 3"),
    ):
        if not value_ms:
            continue
        y = y_of(float(value_ms))
        out.append(f'<line x1="{_f(LEFT)}" y1="{_f(y)}" x2="{_f(LEFT + plot_w)}" y2="{_f(y)}" '
                   f'stroke="{colour}" stroke-width="1.2" stroke-dasharray="{dash}"/>')
        text = f"{label}: {fmt_number(float(value_ms), lang, 1)} {unit}"
        width = 5.6 * len(text) + 30
        out.append(f'<line x1="{_f(legend_x - width)}" y1="{_f(TOP - 9)}" '
                   f'x2="{_f(legend_x - width + 22)}" y2="{_f(TOP - 9)}" stroke="{colour}" '
                   f'stroke-width="1.5" stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{_f(legend_x - width + 26)}" y="{_f(TOP - 6)}" class="low" '
                   f'font-size="9" font-weight="bold" fill="{colour}">{escape(text)}</text>')
        legend_x -= width + 8
    out.append("</svg>")
    return "".join(out)


def stack_charts(charts: Sequence[str], *, title: str) -> str:
    """Charts drawn with `top=i * HEIGHT` (i = 0, 1, …) as one SVG document, one above the
    other (a before/after report's frame-times.svg)."""
    height = HEIGHT * len(charts)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH:.0f} {height:.0f}" '
            f'width="{WIDTH:.0f}" height="{height:.0f}" role="img" '
            f'aria-label="{escape(title, {chr(34): "&quot;"})}"><title>{escape(title)}</title>'
            + "".join(charts) + "</svg>\n")
