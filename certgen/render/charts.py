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
) -> str:
    """One run's chart: frame time (ms) over capture time (s), with the 1% and 0.1% low lines."""
    buckets: Sequence[Sequence[float]] = chart.buckets
    duration = chart.duration_ms
    low1 = chart.low_1pct_ms
    low01 = chart.low_0_1pct_ms
    top_value = max([b[2] for b in buckets] + [v for v in (low1, low01) if v] + [1.0])
    step_y = _nice_step(top_value, 4)
    y_max = float(step_y * math.ceil(top_value * 1.08 / step_y))
    seconds = max(duration / 1000.0, 1e-9)
    step_x = _nice_step(seconds, 6)
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x_of(t_ms: float) -> float:
        return LEFT + plot_w * min(max(t_ms / 1000.0 / seconds, 0.0), 1.0)

    def y_of(ms: float) -> float:
        return TOP + plot_h * (1.0 - min(max(ms / y_max, 0.0), 1.0))

    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH:.0f} '
        f'{HEIGHT:.0f}" width="100%" role="img" aria-label="{escape(title, {chr(34): "&quot;"})}">',
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
