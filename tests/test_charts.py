"""Frame-time charts (certgen.render.charts) as certificates and reports draw them: an axis
fitted to the data, lines told apart without colour, one scale per tier, and a text
alternative with the figures in words in every language."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from certgen.record import Chart, dump_record, load_record
from certgen.render.certificate import render_certificate_html, run_scales
from certgen.render.charts import ChartWords, chart_scale, chart_text, frame_time_chart
from certgen.render.i18n import LANGUAGES, fmt_number

SAMPLE = Path(__file__).parent / "data" / "records" / "sample.json"

# 60 s of frames between 7 and 10 ms: the case where a zero baseline leaves a thin strip.
NARROW = Chart(duration_ms=60000.0,
               buckets=((0.0, 7.1, 9.4), (20000.0, 7.3, 10.4), (40000.0, 7.0, 9.8)),
               low_1pct_ms=9.9, low_0_1pct_ms=10.2, mean_ms=8.3)
LABELS: dict[str, Any] = dict(x_label="x", y_label="y", low_1pct_label="1% low",
                              low_0_1pct_label="0.1% low", mean_label="mean", title="t")


def _y_ticks(svg: str) -> list[str]:
    return re.findall(r'text-anchor="end" class="tick"[^>]*>([^<]*)<', svg)


def test_a_7_to_10_ms_chart_does_not_start_at_zero_and_shows_the_break() -> None:
    """7.0–10.4 ms data (lines up to 10.2) gets the axis 6–11 ms, not 0–12, with a break mark."""
    scale = chart_scale([NARROW])
    assert (scale.y_min, scale.y_max, scale.step_y) == (6.0, 11.0, 1.0)
    svg = frame_time_chart(NARROW, "en", **LABELS)
    assert _y_ticks(svg) == ["6", "7", "8", "9", "10", "11"]
    assert svg.count('class="axis-break"') == 1


def test_a_chart_whose_data_reach_near_zero_keeps_the_zero_baseline_without_a_break() -> None:
    """2–30 ms: starting higher would save little, so the axis starts at 0 and has no mark."""
    wide = Chart(duration_ms=10000.0, buckets=((0.0, 2.0, 30.0),), low_1pct_ms=25.0,
                 low_0_1pct_ms=29.0, mean_ms=6.0)
    assert chart_scale([wide]).y_min == 0.0
    svg = frame_time_chart(wide, "en", **LABELS)
    assert _y_ticks(svg)[0] == "0" and "axis-break" not in svg


def test_mean_and_low_lines_differ_by_dash_pattern_and_carry_labels() -> None:
    """Solid mean, dashed 1% low, dotted 0.1% low: three patterns on the plot and the legend,
    each legend entry naming its line and value."""
    svg = frame_time_chart(NARROW, "en", **LABELS)
    patterns = {}
    for key in ("mean", "low_1pct", "low_0_1pct"):
        for part in ("line", "legend"):
            tag = re.search(rf'<line class="{part}-{key}"[^>]*/>', svg)
            assert tag is not None, (part, key)
            dash = re.search(r'stroke-dasharray="([^"]*)"', tag.group(0))
            patterns[part, key] = dash.group(1) if dash else None
    assert patterns["line", "mean"] is None
    assert len({patterns["line", k] for k in ("mean", "low_1pct", "low_0_1pct")}) == 3
    assert all(patterns["line", k] == patterns["legend", k] for k in ("mean", "low_1pct", "low_0_1pct"))
    legend = re.findall(r'class="legend"[^>]*>([^<]*)<', svg)
    assert legend == ["0.1% low: 10.2 ms", "1% low: 9.9 ms", "mean: 8.3 ms"]


def test_lines_end_where_the_capture_ends_on_a_longer_shared_axis() -> None:
    short = Chart(duration_ms=30000.0, buckets=((0.0, 7.0, 9.0),), low_1pct_ms=8.9,
                  low_0_1pct_ms=9.0, mean_ms=8.0)
    svg = frame_time_chart(short, "en", **LABELS, scale=chart_scale([short, NARROW]))
    line = re.search(r'<line class="line-mean"[^>]*x2="([0-9.]+)"', svg)
    assert line is not None and float(line.group(1)) == pytest.approx(52.0 + 616.0 / 2, abs=0.1)


WORDS = ChartWords(
    sentence="Frame times over %(seconds)s s: mean %(mean)s ms, 1%% low %(low1)s ms, "
             "0.1%% low %(low01)s ms; frames took from %(fastest)s to %(slowest)s ms.",
    baseline="The axis starts at %(start)s ms.",
)


def test_text_alternative_gives_the_record_figures_in_words() -> None:
    assert chart_text(NARROW, "en", WORDS) == (
        "Frame times over 60.0 s: mean 8.3 ms, 1% low 9.9 ms, 0.1% low 10.2 ms; frames took "
        "from 7.0 to 10.4 ms. The axis starts at 6 ms.")
    assert chart_text(NARROW, "ru", WORDS).startswith(
        "Frame times over 60,0 s: mean 8,3 ms, 1% low 9,9 ms, 0.1% low 10,2 ms")


def _sample_html(lang: str) -> str:
    record = load_record(SAMPLE.read_bytes())
    data = dump_record(record)
    return render_certificate_html(record, lang, record_sha256=hashlib.sha256(data).hexdigest())


CERT_SENTENCE = {
    "en": "Frame times over {s} s: mean {mean} ms, 1% low {l1} ms, 0.1% low {l01} ms; "
          "frames took from {lo} to {hi} ms.",
    # ru: the locale's "1\u00a0%" and "0,1"; pt: no space before "%"; U+00A0 keeps "% low" together
    "ru": "Время кадра за {s} с: среднее {mean} мс, 1\u00a0%\u00a0low {l1} мс, "
          "0,1\u00a0%\u00a0low {l01} мс; "
          "кадры длились от {lo} до {hi} мс.",
    "pt": "Tempos de quadro ao longo de {s} s: média {mean} ms, 1%\u00a0low {l1} ms, "
          "0,1%\u00a0low {l01} "
          "ms; os quadros duraram de {lo} a {hi} ms.",
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_certificate_chart_has_its_sentence_for_screen_readers_and_on_the_page(lang: str) -> None:
    """Per recorded run: the SVG is role=img, labelled by its <title> and <desc>; the <desc>
    is the sentence, with the record's figures in the language's number format, and the same
    sentence is printed under the chart (so the PDF shows it too)."""
    import html as html_lib

    page = _sample_html(lang)
    record = json.loads(SAMPLE.read_text(encoding="utf-8"))
    recorded = [r for r in record["runs"] if r["chart"]]
    scales = run_scales(load_record(SAMPLE.read_bytes()).runs)
    svgs = re.findall(r'<svg xmlns="http://www.w3.org/2000/svg" class="chart".*?</svg>', page)
    captions = re.findall(r'<p class="chart-text">([^<]*)</p>', page)
    assert len(svgs) == len(captions) == len(recorded) == 4
    for run, svg, caption in zip(recorded, svgs, captions, strict=True):
        i, chart = run["index"], run["chart"]
        assert f'role="img" aria-labelledby="chart-{i}-title chart-{i}-desc"' in svg
        assert f'<title id="chart-{i}-title">' in svg
        desc = re.search(rf'<desc id="chart-{i}-desc">([^<]*)</desc>', svg)
        assert desc is not None and desc.group(1) == caption
        # sample.json comes from an older certgen (no mean_ms): the mean is 1000 / avg FPS.
        mean = round(1000.0 / run["metrics"]["avg_fps"], 3)
        expected = CERT_SENTENCE[lang].format(
            s=fmt_number(chart["duration_ms"] / 1000, lang, 1),
            mean=fmt_number(mean, lang, 1),
            l1=fmt_number(chart["low_1pct_ms"], lang, 1),
            l01=fmt_number(chart["low_0_1pct_ms"], lang, 1),
            lo=fmt_number(min(b[1] for b in chart["buckets"]), lang, 1),
            hi=fmt_number(max(b[2] for b in chart["buckets"]), lang, 1))
        # The words and figures; the typography's no-break spaces are tested in test_i18n.
        text = html_lib.unescape(caption).replace("\u00a0", " ")
        expected = expected.replace("\u00a0", " ")
        assert text.startswith(expected), (text, expected)
        # A chart whose axis starts above zero says so, with the start, in the same caption.
        assert (scales[i].y_min > 0) == (len(text) > len(expected))


def _plotted_share(scale: Any, chart: Chart) -> float:
    """How much of the frame-time axis the run's own frames span (1.0: all of it)."""
    low = min(b[1] for b in chart.buckets)
    high = max(b[2] for b in chart.buckets)
    assert scale.y_min <= low and high <= scale.y_max  # every frame is on the chart
    return (high - low) / (scale.y_max - scale.y_min)


def test_each_run_is_scaled_to_its_own_frames_and_a_tier_shares_the_time_axis() -> None:
    """sample.json: runs 0 and 3 are 2560x1440, runs 1 and 4 are 3840x2160. Each chart's
    frame-time axis fits its run's frames (the frames span at least a third of it); the runs of
    a tier share the capture-time axis."""
    runs = load_record(SAMPLE.read_bytes()).runs
    scales = run_scales(runs)
    assert sorted(scales) == [0, 1, 3, 4]
    for run in runs:
        if run.chart is not None:
            assert _plotted_share(scales[run.index], run.chart) >= 1 / 3, run.index
    assert scales[0].seconds == scales[3].seconds and scales[1].seconds == scales[4].seconds
    page = _sample_html("en")
    svgs = dict(zip((0, 1, 3, 4), re.findall(
        r'<svg xmlns="http://www.w3.org/2000/svg" class="chart".*?</svg>', page), strict=True))
    x_ticks = {i: re.findall(r'text-anchor="middle" class="tick"[^>]*>([^<]*)<', svg)
               for i, svg in svgs.items()}
    assert x_ticks[0] == x_ticks[3] and x_ticks[1] == x_ticks[4]


def test_a_steady_run_beside_a_spiky_one_keeps_its_spread_visible() -> None:
    """The issue's case: a real 2.7-8.2 ms capture in the tier of a run with 100 ms spikes was
    drawn on 0-100 ms (its frames a flat line in the bottom twelfth). Now it fills its chart."""
    runs = load_record(SAMPLE.read_bytes()).runs
    steady = Chart(duration_ms=60000.0, buckets=((0.0, 2.7, 8.2), (30000.0, 3.1, 7.9)),
                   low_1pct_ms=7.5, low_0_1pct_ms=8.0, mean_ms=4.1)
    spiky = Chart(duration_ms=60000.0, buckets=((0.0, 5.0, 99.0), (30000.0, 6.0, 40.0)),
                  low_1pct_ms=30.0, low_0_1pct_ms=60.0, mean_ms=8.0)
    a = runs[0].model_copy(update={"chart": steady})
    b = runs[3].model_copy(update={"chart": spiky})
    scales = run_scales([a, b])
    assert _plotted_share(scales[a.index], steady) >= 0.5
    assert _plotted_share(chart_scale([steady, spiky]), steady) < 0.1  # the shared axis's flat line
    assert _plotted_share(scales[b.index], spiky) >= 0.5


def test_a_stacked_chart_names_its_font() -> None:
    """A report shows the chart as an <img>, which does not inherit the page's font: the SVG
    names DejaVu Sans, or its text falls back to a serif (issue 28)."""
    from certgen.render.charts import stack_charts

    svg = stack_charts(["<svg></svg>"], title="t")
    assert 'font-family="DejaVu Sans, sans-serif"' in svg.split(">", 1)[0]
