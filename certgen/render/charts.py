"""Frame-time charts as inline SVG, drawn from the record's downsampled series.

The record carries, per run, equal-time buckets `[t_start_ms, min_ms, max_ms]` (so a single
spike survives downsampling), the mean frame time and the 1% / 0.1% lows as frame times. The
chart draws the band between each bucket's shortest and longest frame over capture time, and
three lines told apart by dash pattern and legend, not by colour alone: the mean (solid), the
1% low (dashed) and the 0.1% low (dotted).

The frame-time axis is fitted to the data: when starting it at zero would squeeze the data into
a thin strip, it starts higher and a break mark on the axis says so (`chart_text` says it in
words too). Every chart carries a one-sentence text alternative (`chart_text`): in the SVG as
<title>/<desc> for screen readers, and as a visible caption on the page.

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



@dataclass(frozen=True)
class Layout:
    """Where a chart puts its parts and how large its text is, in SVG units (one unit is one
    CSS px when the chart is shown at its own width)."""

    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    tick_size: float
    axis_size: float
    label_size: float
    legend_size: float
    x_ticks: int
    """About how many capture-time intervals the axis is cut into."""
    legend_rows: bool
    """False: the legend on one line above the plot, right to left; True: one line per row,
    under the label (a narrow chart has no room for one line)."""


WIDE = Layout(width=WIDTH, height=HEIGHT, left=LEFT, right=RIGHT, top=TOP, bottom=BOTTOM,
              tick_size=9.0, axis_size=9.5, label_size=10.0, legend_size=9.0, x_ticks=6,
              legend_rows=False)
"""The chart of a certificate's run and of a report's PDF and wide screen: 680 units across a
page or a desktop window, where its 9-unit text is 2.4 mm (print) or about 9 px."""

PHONE_ROW = 16.0
"""Height of one legend row of the phone layout."""

PHONE = Layout(width=340.0, height=288.0, left=46.0, right=10.0, top=26.0 + 3 * PHONE_ROW + 6.0,
               bottom=42.0, tick_size=12.0, axis_size=12.0, label_size=13.0, legend_size=12.0,
               x_ticks=4, legend_rows=True)
"""A report's chart on a phone. The wide chart shrunk to a 390 px screen (about 350 px of
content) draws its text at half size, under 5 px; this one is drawn for that width instead:
340 units across, so 12-unit text stays over 10 px on screens down to 320 px, with fewer
capture-time ticks and the legend one line per row. (A wide chart kept at its width and
scrolled sideways would hide the later part of the capture, and its legend, off screen.)"""

ZERO_BASELINE_SHARE = 0.25
"""Start the frame-time axis at zero when the fitted start would be at most this share of its
top: the room saved is small, and a zero baseline needs no break mark."""

LINE_STYLES: dict[str, tuple[str, str | None]] = {
    "mean": ("#1f2a36", None),
    "low_1pct": ("#9a5b00", "6 3"),
    "low_0_1pct": ("#b3261e", "1.5 2.5"),
}
"""Colour and dash pattern (None: solid) of each line: the patterns alone tell them apart."""


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


def _size(value: float) -> str:
    """A font size as an attribute: 9 → "9", 9.5 → "9.5"."""
    return f"{value:g}"


def _attr(text: str) -> str:
    return escape(text, {'"': "&quot;"})


@dataclass(frozen=True)
class Scale:
    """The axes of a chart: capture time (s) and frame time (ms), each with its tick step.

    Charts that are read against each other (the two sides of a before/after report, the runs
    of one tier on a certificate) share one Scale, so the same height means the same frame time
    and the same x the same second. `y_min` above zero means the axis does not start at zero."""

    seconds: float
    step_x: float
    y_max: float
    step_y: float
    y_min: float = 0.0


def _lines(chart: Chart) -> list[float]:
    mean = getattr(chart, "mean_ms", None)
    return [v for v in (mean, chart.low_1pct_ms, chart.low_0_1pct_ms) if v]


def chart_scale(charts: Sequence[Chart], *, cap_ms: float | None = None) -> Scale:
    """The Scale that fits every chart's buckets and lines; with `cap_ms`, the frame-time
    axis stops there (frames above it are drawn clipped, with a marker).

    The frame-time axis spans the data with a little room at each end, on round ticks. It
    starts at zero unless that would leave the data in the top quarter or less of the plot."""
    tops = [b[2] for c in charts for b in c.buckets if cap_ms is None or b[2] <= cap_ms]
    bottoms = [b[1] for c in charts for b in c.buckets if cap_ms is None or b[1] <= cap_ms]
    lines = [v for c in charts for v in _lines(c)]
    top_value = max([*tops, *lines, 1.0])
    bottom_value = min([*bottoms, *lines], default=0.0)
    span = top_value - bottom_value
    y_min = 0.0
    if span > 0:
        step_y = _nice_step(span * 1.15, 4)
        y_min = step_y * math.floor((bottom_value - 0.05 * span) / step_y + 1e-9)
        y_max = step_y * math.ceil((top_value + 0.08 * span) / step_y - 1e-9)
    if span <= 0 or y_min <= ZERO_BASELINE_SHARE * y_max:
        y_min = 0.0
        step_y = _nice_step(top_value, 4)
        y_max = float(step_y * math.ceil(top_value * 1.08 / step_y))
    if cap_ms is not None:
        y_max = min(y_max, cap_ms)
    seconds = max(max((c.duration_ms for c in charts), default=0.0) / 1000.0, 1e-9)
    return Scale(seconds=seconds, step_x=_nice_step(seconds, 6), y_max=float(y_max),
                 step_y=step_y, y_min=float(y_min))


@dataclass(frozen=True)
class ChartWords:
    """The translated messages of a chart's text alternative (see chart_text)."""

    sentence: str
    """Placeholders: seconds, mean, low1, low01, fastest, slowest (locale numbers, ms / s)."""
    baseline: str
    """Said after the sentence when the axis does not start at zero; placeholder: start."""


def chart_text(chart: Chart, lang: str, words: ChartWords, scale: Scale | None = None,
               **extra: str) -> str:
    """The chart in one sentence, figures in words, for screen readers and the visible caption.

    Every figure is the record's own (duration, mean and lows, the shortest and longest
    frame of the buckets), formatted for `lang`; `extra` fills further placeholders (a report's
    side). With a scale whose axis does not start at zero, the baseline message follows."""
    scale = scale or chart_scale([chart])
    fastest = min((b[1] for b in chart.buckets), default=None)
    slowest = max((b[2] for b in chart.buckets), default=None)
    text = words.sentence % {
        "seconds": fmt_number(chart.duration_ms / 1000.0, lang, 1),
        "mean": fmt_number(getattr(chart, "mean_ms", None), lang, 1),
        "low1": fmt_number(chart.low_1pct_ms, lang, 1),
        "low01": fmt_number(chart.low_0_1pct_ms, lang, 1),
        "fastest": fmt_number(fastest, lang, 1),
        "slowest": fmt_number(slowest, lang, 1),
        **extra,
    }
    if scale.y_min > 0:
        digits = 0 if scale.step_y >= 1 else 1
        text += " " + words.baseline % {"start": fmt_number(scale.y_min, lang, digits)}
    return text


def frame_time_chart(
    chart: Chart,
    lang: str,
    *,
    x_label: str,
    y_label: str,
    low_1pct_label: str,
    low_0_1pct_label: str,
    title: str,
    mean_label: str = "mean",
    description: str | None = None,
    element_id: str | None = None,
    unit: str = "ms",
    scale: Scale | None = None,
    label: str | None = None,
    top: float | None = None,
    layout: Layout = WIDE,
) -> str:
    """One run's chart: frame time (ms) over capture time (s), with the mean, 1% and 0.1% low
    lines and their legend.

    `title` and `description` (chart_text) become the SVG's <title> and <desc>, which name the
    image for screen readers (with `element_id`, through aria-labelledby, so several charts on
    one page keep distinct ids). `scale` shares axes with other charts (default: this chart's
    own); `label` is a visible caption at the top left (a report's "Before" / "After"); `top`
    places the chart at that y inside an outer SVG (see stack_charts) instead of as a document
    of its own; `layout` is WIDE (default) or PHONE.
    """
    buckets: Sequence[Sequence[float]] = chart.buckets
    duration = chart.duration_ms
    scale = scale or chart_scale([chart])
    y_min, y_max, step_y = scale.y_min, scale.y_max, scale.step_y
    seconds, step_x = scale.seconds, scale.step_x
    if layout.x_ticks != WIDE.x_ticks:  # a narrow chart: fewer, wider-spaced time ticks
        step_x = _nice_step(seconds, layout.x_ticks)
    # The layout's box under the module constants' names, which the drawing below reads.
    WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = (
        layout.width, layout.height, layout.left, layout.right, layout.top, layout.bottom)
    tick, axis = _size(layout.tick_size), _size(layout.axis_size)
    plot_w = WIDTH - LEFT - RIGHT
    plot_h = HEIGHT - TOP - BOTTOM

    def x_of(t_ms: float) -> float:
        return LEFT + plot_w * min(max(t_ms / 1000.0 / seconds, 0.0), 1.0)

    def y_of(ms: float) -> float:
        share = (ms - y_min) / (y_max - y_min)
        return TOP + plot_h * (1.0 - min(max(share, 0.0), 1.0))

    placed = ('width="100%"' if top is None
              else f'x="0" y="{_f(top)}" width="{WIDTH:.0f}" height="{HEIGHT:.0f}"')
    if element_id is not None:
        ids = f"{element_id}-title" + (f" {element_id}-desc" if description else "")
        named = f'aria-labelledby="{_attr(ids)}"'
        title_tag = f'<title id="{_attr(element_id)}-title">'
        desc_tag = f'<desc id="{_attr(element_id)}-desc">'
    else:
        named = f'aria-label="{_attr(title if not description else title + ". " + description)}"'
        title_tag, desc_tag = "<title>", "<desc>"
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH:.0f} '
        f'{HEIGHT:.0f}" {placed} role="img" {named}>',
        f"{title_tag}{escape(title)}</title>",
    ]
    if description:
        out.append(f"{desc_tag}{escape(description)}</desc>")
    out.append(f'<rect x="{_f(LEFT)}" y="{_f(TOP)}" width="{_f(plot_w)}" height="{_f(plot_h)}" '
               'fill="#ffffff" stroke="#9aa3ad" stroke-width="0.6"/>')
    # Grid and axis labels.
    digits_y = 0 if step_y >= 1 else 1
    value = y_min
    while value <= y_max + 1e-9:
        y = y_of(value)
        out.append(f'<line x1="{_f(LEFT)}" y1="{_f(y)}" x2="{_f(LEFT + plot_w)}" y2="{_f(y)}" '
                   'stroke="#e3e7eb" stroke-width="0.6"/>')
        out.append(f'<text x="{_f(LEFT - 5)}" y="{_f(y + layout.tick_size / 3)}" text-anchor="end" class="tick" font-size="{tick}" fill="#5c6670">'
                   f"{escape(fmt_number(value, lang, digits_y))}</text>")
        value += step_y
    digits_x = 0 if step_x >= 1 else 1
    value = 0.0
    while value <= seconds + 1e-9:
        x = LEFT + plot_w * value / seconds
        out.append(f'<line x1="{_f(x)}" y1="{_f(TOP + plot_h)}" x2="{_f(x)}" '
                   f'y2="{_f(TOP + plot_h + 4)}" stroke="#9aa3ad" stroke-width="0.6"/>')
        out.append(f'<text x="{_f(x)}" y="{_f(TOP + plot_h + 6 + layout.tick_size)}" text-anchor="middle" '
                   f'class="tick" font-size="{tick}" fill="#5c6670">{escape(fmt_number(value, lang, digits_x))}</text>')
        value += step_x
    out.append(f'<text x="{_f(LEFT + plot_w / 2)}" y="{_f(HEIGHT - 3)}" text-anchor="middle" '
               f'class="axis" font-size="{axis}" fill="#3c4650">{escape(x_label)}</text>')
    out.append(f'<text transform="translate({layout.axis_size + 2.5:g} {_f(TOP + plot_h / 2)}) rotate(-90)" '
               f'text-anchor="middle" class="axis" font-size="{axis}" fill="#3c4650">{escape(y_label)}</text>')
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
        out.append(f'<polygon points="{points}" fill="#5b8fd6" fill-opacity="0.35" '
                   'stroke="#2f5f9e" stroke-width="0.5" stroke-linejoin="round"/>')
        # Frames above a capped axis (stalls on a report) are clipped: a dot marks each.
        for t0, _lo, hi in buckets:
            if hi > y_max:
                out.append(f'<circle cx="{_f(x_of(t0 + width_ms / 2))}" cy="{_f(TOP + 3)}" '
                           'r="2.2" fill="#2f5f9e"/>')
    if y_min > 0:
        # The axis does not start at zero: a break mark (two slanted strokes across the axis).
        yb = TOP + plot_h - 7
        out.append(
            f'<g class="axis-break" stroke="#3c4650" stroke-width="1">'
            f'<rect x="{_f(LEFT - 5)}" y="{_f(yb - 3)}" width="10" height="5" fill="#ffffff" '
            'stroke="none"/>'
            f'<line x1="{_f(LEFT - 5)}" y1="{_f(yb - 1)}" x2="{_f(LEFT + 5)}" y2="{_f(yb - 5)}"/>'
            f'<line x1="{_f(LEFT - 5)}" y1="{_f(yb + 3)}" x2="{_f(LEFT + 5)}" y2="{_f(yb - 1)}"/>'
            "</g>")
    label_y = PHONE_ROW + 2 if layout.legend_rows else TOP - 6
    if label:
        out.append(f'<text x="{_f(LEFT)}" y="{_f(label_y)}" class="label" '
                   f'font-size="{_size(layout.label_size)}" font-weight="bold" '
                   f'fill="#1f2a36">{escape(label)}</text>')
    # The lines (a low of F FPS is a line at 1000 / F ms), with a legend above the plot: each
    # line's dash pattern beside its name and value; on one line right to left (wide), or one
    # per row, the mean first, under the label (phone).
    lines = (
        ("low_0_1pct", chart.low_0_1pct_ms, low_0_1pct_label),
        ("low_1pct", chart.low_1pct_ms, low_1pct_label),
        ("mean", getattr(chart, "mean_ms", None), mean_label),
    )
    legend_x = LEFT + plot_w
    row = 0
    for key, value_ms, name in (lines[::-1] if layout.legend_rows else lines):
        if not value_ms:
            continue
        colour, dash = LINE_STYLES[key]
        pattern = "" if dash is None else f' stroke-dasharray="{dash}"'
        # A line spans this capture only (a shared time axis may run past its end).
        y = y_of(float(value_ms))
        out.append(f'<line class="line-{key}" x1="{_f(LEFT)}" y1="{_f(y)}" '
                   f'x2="{_f(x_of(duration))}" y2="{_f(y)}" stroke="{colour}" '
                   f'stroke-width="1.3"{pattern}/>')
        text = f"{name}: {fmt_number(float(value_ms), lang, 1)} {unit}"
        if layout.legend_rows:
            row += 1
            x0, text_y = LEFT, label_y + row * PHONE_ROW
        else:
            width = 5.4 * len(text) + 30
            x0, text_y = legend_x - width, TOP - 6
            legend_x -= width + 6
        mark_y = text_y - layout.legend_size / 3
        out.append(f'<line class="legend-{key}" x1="{_f(x0)}" y1="{_f(mark_y)}" '
                   f'x2="{_f(x0 + 22)}" y2="{_f(mark_y)}" stroke="{colour}" '
                   f'stroke-width="1.6"{pattern}/>')
        out.append(f'<text x="{_f(x0 + 26)}" y="{_f(text_y)}" class="legend" '
                   f'font-size="{_size(layout.legend_size)}" font-weight="bold" '
                   f'fill="{colour}">{escape(text)}</text>')
    out.append("</svg>")
    return "".join(out)


def stack_charts(charts: Sequence[str], *, title: str, description: str | None = None,
                 layout: Layout = WIDE) -> str:
    """Charts drawn with `top=i * layout.height` (i = 0, 1, …) in `layout` as one SVG
    document, one above the other (a before/after report's frame-times.svg); `description` is
    its <desc>."""
    height = layout.height * len(charts)
    label = title if not description else f"{title}. {description}"
    desc = "" if not description else f"<desc>{escape(description)}</desc>"
    # An <img> does not inherit the page's font: name it, or the text falls back to a serif.
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {layout.width:.0f} {height:.0f}" '
            f'width="{layout.width:.0f}" height="{height:.0f}" role="img" '
            f'font-family="DejaVu Sans, sans-serif" '
            f'aria-label="{_attr(label)}"><title>{escape(title)}</title>{desc}'
            + "".join(charts) + "</svg>\n")


HIST_WIDTH = 360.0
HIST_HEIGHT = 150.0
HIST_LEFT = 40.0
HIST_BOTTOM = 30.0
HIST_TOP = 14.0
HIST_RIGHT = 10.0


def histogram_svg(counts: Sequence[int], low: float, high: float, *, lang: str, title: str,
                  description: str, marks: Sequence[tuple[float, str]] = (),
                  digits: int = 0) -> str:
    """A histogram of equal-width bars over [low, high] as inline SVG (the calibration report's
    distributions), with a vertical dashed mark and its label at each of `marks` (a grade line,
    the Soft Limit). `title` and `description` are the text alternative (already translated).
    Text is at least 11 px at the SVG's own width, so it stays legible scaled to a phone."""
    plot_w = HIST_WIDTH - HIST_LEFT - HIST_RIGHT
    plot_h = HIST_HEIGHT - HIST_TOP - HIST_BOTTOM
    top = max(max(counts, default=0), 1)
    step = _nice_step(float(top), 3)
    y_top = math.ceil(top / step) * step
    bar_w = plot_w / max(len(counts), 1)

    def x_of(value: float) -> float:
        return HIST_LEFT + (value - low) / (high - low) * plot_w

    def y_of(count: float) -> float:
        return HIST_TOP + plot_h * (1.0 - count / y_top)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_f(HIST_WIDTH)} '
        f'{_f(HIST_HEIGHT)}" role="img" font-family="DejaVu Sans, sans-serif" font-size="11">',
        f"<title>{escape(title)}</title><desc>{escape(description)}</desc>",
    ]
    k = 0.0
    while k <= y_top + 1e-9:
        y = y_of(k)
        parts.append(f'<line x1="{_f(HIST_LEFT)}" y1="{_f(y)}" x2="{_f(HIST_WIDTH - HIST_RIGHT)}" '
                     f'y2="{_f(y)}" stroke="#d5dbe1" stroke-width="0.6"/>')
        parts.append(f'<text x="{_f(HIST_LEFT - 4)}" y="{_f(y + 4)}" text-anchor="end" '
                     f'fill="#3c4650">{escape(fmt_number(k, lang, 0))}</text>')
        k += step
    for i, count in enumerate(counts):
        if count:
            y = y_of(float(count))
            parts.append(f'<rect x="{_f(HIST_LEFT + i * bar_w + 0.5)}" y="{_f(y)}" '
                         f'width="{_f(bar_w - 1.0)}" height="{_f(HIST_TOP + plot_h - y)}" '
                         f'fill="#5b7fa6"/>')
    base = HIST_TOP + plot_h
    parts.append(f'<line x1="{_f(HIST_LEFT)}" y1="{_f(base)}" x2="{_f(HIST_WIDTH - HIST_RIGHT)}" '
                 f'y2="{_f(base)}" stroke="#3c4650" stroke-width="0.8"/>')
    for value in (low, (low + high) / 2.0, high):
        parts.append(f'<text x="{_f(x_of(value))}" y="{_f(base + 14)}" text-anchor="middle" '
                     f'fill="#3c4650">{escape(fmt_number(value, lang, digits))}</text>')
    for value, label in marks:
        if low <= value <= high:
            x = x_of(value)
            parts.append(f'<line x1="{_f(x)}" y1="{_f(HIST_TOP)}" x2="{_f(x)}" y2="{_f(base)}" '
                         f'stroke="#b3261e" stroke-width="1.2" stroke-dasharray="4 2"/>')
            anchor = "end" if x > HIST_LEFT + plot_w * 0.7 else "start"
            dx = -3.0 if anchor == "end" else 3.0
            parts.append(f'<text x="{_f(x + dx)}" y="{_f(HIST_TOP + 10)}" '
                         f'text-anchor="{anchor}" fill="#b3261e">{escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)
