"""`certgen compare`: the CSV a spreadsheet user re-computes, the report in three languages,
the paired-series file, and the refusals."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest
from bundlekit import run_cli

from certgen.cli import main
from certgen.compare import statistics as compare
from certgen.render.i18n import fmt_number

LANGS = ("en", "ru", "pt")


@pytest.fixture(autouse=True)
def _undated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports here are undated unless a test sets a date (a dated report would not match the
    snapshots), whatever the environment the suite runs in."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def frames_with_stalls(seed: int, base_ms: float, seconds: float) -> list[float]:
    """A seeded capture: jittery frames around base_ms, a few stutters, three stalls (> 200 ms)."""
    rng = np.random.default_rng(seed)
    n = int(seconds * 1000.0 / base_ms)
    frames = np.round(base_ms + rng.gamma(2.0, 0.4, size=n), 3)
    frames[n // 7] = round(base_ms * 3.1, 3)  # a stutter
    frames[n // 3] = 250.0  # a shader hitch: a stall and a stutter
    frames[n // 2] = 1200.0  # a loading screen: a stall only
    frames[(2 * n) // 3] = 200.0  # on the line: counted, not a stall
    frames[(3 * n) // 4] = 450.5
    return [float(v) for v in frames]


def write_bench_csv(path: Path, sides: dict[str, list[float]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["side", "kind", "name", "value"])
        for side, frames in sides.items():
            for v in frames:
                w.writerow([side, "frame", "frame_time_ms", repr(v)])


# --------------------------------------------------------------------------- the CSV, by hand


def spreadsheet_low(values: list[float], share: Decimal) -> float:
    """The spreadsheet recipe: drop rows over 200, sort descending, average the first
    ceil(rows x share) rows (at least one), 1000 / that mean, rounded to 1 decimal."""
    kept = sorted((v for v in values if v <= 200.0), reverse=True)
    take = max(1, int((Decimal(len(kept)) * share).to_integral_value(rounding="ROUND_CEILING")))
    mean = sum(Decimal(repr(v)) for v in kept[:take]) / take
    return float((Decimal(1000) / mean).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def test_csv_recomputes_by_hand_as_a_spreadsheet_user_would() -> None:
    sides = [
        ("before", compare.count_side(compare.SideInput(np.asarray(frames_with_stalls(1, 12.0, 30)), "b.csv"))),
        ("after", compare.count_side(compare.SideInput(np.asarray(frames_with_stalls(2, 10.0, 30)), "a.csv"))),
    ]
    rows = list(csv.DictReader(io.StringIO(compare.csv_text(sides))))
    assert list(rows[0]) == ["side", "kind", "name", "value"]
    for side in ("before", "after"):
        metric = {r["name"]: r["value"] for r in rows if r["side"] == side and r["kind"] == "metric"}
        values = [float(r["value"]) for r in rows if r["side"] == side and r["kind"] == "frame"]
        assert sum(v <= 200 for v in values) == int(metric["frames"])
        assert sum(v > 200 for v in values) == int(metric["excluded_over_stall_ms"]) == 3
        assert spreadsheet_low(values, Decimal("0.01")) == float(metric["low_1pct_fps"])
        assert spreadsheet_low(values, Decimal("0.001")) == float(metric["low_0_1pct_fps"])
        counted = [v for v in values if v <= 200]
        assert float(metric["avg_fps"]) == float(
            (Decimal(len(counted)) * 1000 / sum(Decimal(repr(v)) for v in counted)).quantize(
                Decimal("0.1"), rounding=ROUND_HALF_UP))
    # Dot decimals and English identifiers whatever the report language.
    assert all("," not in r["value"] for r in rows)
    assert {r["kind"] for r in rows} == {"metric", "frame"}


def test_csv_snapshot(snapshot: object) -> None:
    """A small pair: 300 frames a side with one stall each (the whole table under a snapshot)."""
    b = [10.0, 10.5, 11.25, 9.875] * 75
    a = [8.0, 8.5, 9.125, 7.75] * 75
    b[100], a[200] = 230.0, 16.5
    a[50] = 205.125
    sides = [(s, compare.count_side(compare.SideInput(np.asarray(f), f"{s}.csv"))) for s, f in
             (("before", b), ("after", a))]
    assert compare.csv_text(sides) == snapshot


# --------------------------------------------------------------------------- the command


@pytest.fixture(scope="module")
def pair_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One benchmark CSV holding both sides (130 s each), compared in en, ru and pt."""
    base = tmp_path_factory.mktemp("pair")
    src = base / "both.csv"
    write_bench_csv(src, {"before": frames_with_stalls(1, 12.0, 130),
                          "after": frames_with_stalls(2, 10.0, 130)})
    # Relative paths, as a user types them: the report names the files as given.
    # Undated whatever ran before in this worker (the certificate renderer sets the variable).
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SOURCE_DATE_EPOCH", raising=False)
        mp.chdir(base)
        try:
            main(["compare", "both.csv", "--out", "out", "--lang", "en,ru,pt"])
        except SystemExit as exc:  # pragma: no cover - a failure shows in the asserts below
            assert exc.code == 0
    return base / "out"


def test_outputs_and_manifest_last(pair_report: Path) -> None:
    names = sorted(p.name for p in pair_report.iterdir())
    assert names == sorted(["compare.csv", "frame-times.svg", "manifest.json"]
                           + [f"report.{lang}.{ext}" for lang in LANGS for ext in ("html", "pdf")])
    manifest = json.loads((pair_report / "manifest.json").read_text())
    assert [f["path"] for f in manifest["files"]] == sorted(n for n in names if n != "manifest.json")
    assert manifest["languages"] == list(LANGS)


def test_the_export_reads_back_as_input_without_a_warning(pair_report: Path) -> None:
    """Our CSV is also an input: both sides come back with the same figures, no disagreement."""
    from certgen.captures.detect import read_capture_file

    runs = read_capture_file(pair_report / "compare.csv")
    assert [r.label for r in runs] == ["before", "after"]
    assert all(r.warnings == () for r in runs)


@pytest.mark.parametrize("lang", LANGS)
def test_report_html_snapshot(pair_report: Path, lang: str, snapshot: object) -> None:
    assert (pair_report / f"report.{lang}.html").read_text(encoding="utf-8") == snapshot


@pytest.mark.parametrize(("lang", "words"), [
    ("en", ("gain", "gained", "caused by", "because of")),
    ("ru", ("выигрыш", "прирост", "вызвал", "из-за")),
    ("pt", ("ganho", "ganhou", "causado", "por causa")),
])
def test_no_fps_gained_figure_and_no_cause(pair_report: Path, lang: str, words: tuple[str, ...]) -> None:
    import re

    html = (pair_report / f"report.{lang}.html").read_text(encoding="utf-8").lower()
    assert [w for w in words if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", html)] == []


def test_report_reads_the_noise_floor_verdicts(pair_report: Path) -> None:
    html = (pair_report / "report.en.html").read_text(encoding="utf-8")
    assert "Focus not recorded" in html
    assert "Not comparable" not in html
    assert html.count("±") == 3


@pytest.mark.parametrize("lang", LANGS)
def test_pdf_has_the_title_and_carries_the_csv(pair_report: Path, lang: str) -> None:
    from pypdf import PdfReader

    reader = PdfReader(str(pair_report / f"report.{lang}.pdf"))
    title = {"en": "Before/after report", "ru": "Отчёт «до\u00a0и\u00a0после»", "pt": "Relatório antes/depois"}[lang]
    assert reader.metadata is not None and reader.metadata.title == title
    assert title in reader.pages[0].extract_text()
    assert list(reader.attachments) == ["compare.csv"]
    assert reader.attachments["compare.csv"][0] == (pair_report / "compare.csv").read_bytes()


def test_two_files_and_one_block_is_not_comparable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    b, a = tmp_path / "before.csv", tmp_path / "after.csv"
    write_bench_csv(b, {"run": frames_with_stalls(3, 10.0, 90)})
    write_bench_csv(a, {"run": frames_with_stalls(4, 10.0, 150)})
    code, _out, err = run_cli(["compare", str(b), str(a), "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (0, "")
    html = (tmp_path / "o" / "report.en.html").read_text(encoding="utf-8")
    assert html.count("Not comparable: the before capture has fewer than two whole 60 s blocks") == 3


def test_file_names_are_escaped_in_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = tmp_path / "<img src=x onerror=alert(1)>.csv"
    write_bench_csv(hostile, {"before": [10.0] * 950, "after": [9.0] * 950})
    code, _, err = run_cli(["compare", str(hostile), "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (0, "")
    html = (tmp_path / "o" / "report.en.html").read_text(encoding="utf-8")
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;.csv" in html


def test_one_file_without_two_sides_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "one.csv"
    write_bench_csv(src, {"run": [10.0] * 100})
    code, _, err = run_cli(["compare", str(src), "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert err == (f"certgen: {src}: one file compares only when it holds the sides 'before' and "
                   "'after' (found: run); otherwise give BEFORE AFTER\n").replace(
                       "BEFORE AFTER", "BEFORE and AFTER")


def test_unknown_language_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["compare", "x.csv", "y.csv", "--out", str(tmp_path), "--lang", "de"], capsys)
    assert code == 2 and "Invalid value for --lang: 'de': expected a comma-separated list of en, ru, pt" in err


# --------------------------------------------------------------------------- paired series


def write_series(base: Path, before: list[float], after: list[float], pilot: list[float] | None) -> Path:
    """One single-side CSV per run (1000 frames at 1000 / fps ms), and the series file."""
    lines = ["series: 1", "order: ABBA", "pairs:"]
    for i, (b, a) in enumerate(zip(before, after)):
        for tag, fps in (("before", b), ("after", a)):
            write_bench_csv(base / f"{i:02d}-{tag}.csv", {"run": [round(1000.0 / fps, 4)] * 1000})
        lines.append(f"  - {{before: {i:02d}-before.csv, after: {i:02d}-after.csv}}")
    if pilot is not None:
        lines.append("pilot:")
        for i, fps in enumerate(pilot):
            write_bench_csv(base / f"pilot-{i:02d}.csv", {"run": [round(1000.0 / fps, 4)] * 1000})
            lines.append(f"  - pilot-{i:02d}.csv")
    path = base / "series.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


PILOT = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 100.8, 99.2, 100.3, 99.7]
BEFORE8 = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1]
AFTER8 = [110.0, 111.5, 108.9, 110.0, 109.8, 110.4, 109.6, 110.3]


def test_series_of_eight_clear_pairs_reports_a_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], snapshot: object
) -> None:
    series = write_series(tmp_path, BEFORE8, AFTER8, PILOT)
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (0, "")
    html = (tmp_path / "o" / "report.en.html").read_text(encoding="utf-8")
    assert html.count("Higher: every condition holds") == 3
    assert html == snapshot
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o" / "compare.csv").read_text())))
    assert {r["side"] for r in rows} == {f"pair_{i:02d}_{s}" for i in range(1, 9) for s in ("before", "after")}


def test_series_of_five_pairs_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    series = write_series(tmp_path, BEFORE8[:5], AFTER8[:5], PILOT)
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert err == (f"certgen: {series}: pairs: 5 pairs given, at least 6 are needed (with 5 the "
                   "smallest possible p-value of the exact signed-rank test is 0.0625); "
                   "8 recommended, in ABBA order\n")
    assert not (tmp_path / "o").exists()


def test_series_file_with_an_unknown_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("series: 1\npairs: []\npliot: []\n", encoding="utf-8")
    code, _, err = run_cli(["compare", "--series", str(path), "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (1, f"certgen: {path}: pliot: unknown key "
                           "(expected series, order, description, settings, pairs, pilot)\n")


def test_series_file_with_a_duplicate_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("series: 1\npairs: []\npairs: []\n", encoding="utf-8")
    code, _, err = run_cli(["compare", "--series", str(path), "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and "duplicate key 'pairs'" in err and err.startswith(f"certgen: {path}:3: ")


# --------------------------------------------------------------------------- the date


def _pdf_dates(path: Path) -> tuple[object, object, bytes]:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    info = reader.metadata or {}
    xmp = reader.trailer["/Root"]["/Metadata"].get_object().get_data()
    return info.get("/CreationDate"), info.get("/ModDate"), xmp


@pytest.fixture()
def bench_csv(tmp_path: Path) -> Path:
    path = tmp_path / "both.csv"
    write_bench_csv(path, {"before": frames_with_stalls(1, 8.0, 130),
                           "after": frames_with_stalls(2, 7.6, 130)})
    return path


def test_without_a_date_the_report_prints_none(
    bench_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No SOURCE_DATE_EPOCH, no --date: no date on the page, none in the PDF's metadata."""
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    code, _, err = run_cli(["compare", str(bench_csv), "--out", str(tmp_path / "o"),
                            "--lang", "en,ru"], capsys)
    assert code == 0, err
    for lang in ("en", "ru"):
        html = (tmp_path / "o" / f"report.{lang}.html").read_text("utf-8")
        assert 'class="date"' not in html and "2000" not in html and "1980" not in html
        created, modified, xmp = _pdf_dates(tmp_path / "o" / f"report.{lang}.pdf")
        assert created is None and modified is None
        assert b"CreateDate" not in xmp and b"ModifyDate" not in xmp
    assert json.loads((tmp_path / "o" / "manifest.json").read_text("utf-8"))["date"] is None
    assert "SOURCE_DATE_EPOCH" not in os.environ  # rendering left the environment as it was


@pytest.mark.render_uncached  # the second render is the point
def test_undated_report_is_byte_stable(
    bench_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    for out in ("a", "b"):
        code, _, err = run_cli(["compare", str(bench_csv), "--out", str(tmp_path / out)], capsys)
        assert code == 0, err
    assert (tmp_path / "a/report.en.pdf").read_bytes() == (tmp_path / "b/report.en.pdf").read_bytes()


def test_date_option_is_printed_in_the_language_and_the_pdf(
    bench_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    code, _, err = run_cli(["compare", str(bench_csv), "--out", str(tmp_path / "o"),
                            "--lang", "en,ru,pt", "--date", "2026-03-07"], capsys)
    assert code == 0, err
    expected = {"en": "Date: March 7, 2026", "ru": "Дата: 7 марта 2026\u202fг.",
                "pt": "Data: 7 de março de 2026"}
    for lang, text in expected.items():
        assert text in (tmp_path / "o" / f"report.{lang}.html").read_text("utf-8")
    created, modified, xmp = _pdf_dates(tmp_path / "o" / "report.en.pdf")
    assert str(created).startswith("D:20260307") and created == modified
    assert b"2026-03-07T00:00:00Z" in xmp


def test_source_date_epoch_comes_before_the_date_option(
    bench_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764374400")  # 2025-11-29T00:00:00Z
    code, _, err = run_cli(["compare", str(bench_csv), "--out", str(tmp_path / "o"),
                            "--date", "2026-03-07"], capsys)
    assert code == 0, err
    assert "Date: November 29, 2025" in (tmp_path / "o/report.en.html").read_text("utf-8")
    assert os.environ["SOURCE_DATE_EPOCH"] == "1764374400"


def test_a_malformed_date_is_a_usage_error(
    bench_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(["compare", str(bench_csv), "--out", str(tmp_path / "o"),
                            "--date", "07/03/2026"], capsys)
    assert code == 2 and "--date" in err


def test_chart_axis_labels_follow_the_report_language(pair_report: Path) -> None:
    """The chart's tick labels and low legend use the report's decimal sign (2,5 in ru/pt)."""
    from certgen.record import Chart
    from certgen.render.charts import chart_scale, frame_time_chart

    chart = Chart(duration_ms=2500.0, buckets=((0.0, 2.0, 7.5), (1250.0, 2.5, 9.0)),
                  low_1pct_ms=8.25, low_0_1pct_ms=9.0)
    labels = dict(x_label="x", y_label="y", low_1pct_label="1", low_0_1pct_label="0.1", title="t")
    ticks = {lang: re.findall(r'class="tick"[^>]*>([^<]*)<', frame_time_chart(chart, lang, **labels))
             for lang in ("en", "ru", "pt")}
    assert "0.5" in ticks["en"] and "0,5" in ticks["ru"] and "0,5" in ticks["pt"]
    assert chart_scale([chart]).seconds == 2.5


def test_the_report_chart_is_the_certificate_drawer_with_one_scale_for_both_sides(
    pair_report: Path,
) -> None:
    """frame-times.svg: one panel per side drawn by render.charts (its band and low lines),
    both on the same frame-time axis."""
    svg = (pair_report / "frame-times.svg").read_text(encoding="utf-8")
    panels = re.findall(r'<svg xmlns="http://www.w3.org/2000/svg" class="chart"[^>]*>', svg)
    assert len(panels) == 2 and 'y="0.0"' in panels[0] and 'y="190.0"' in panels[1]
    assert svg.count("<polygon") == 2 and svg.count('stroke-dasharray="6 3"') >= 2
    y_ticks = [re.findall(r'text-anchor="end" class="tick"[^>]*>([^<]*)<', part)
               for part in svg.split('class="chart"')[1:]]
    assert y_ticks[0] == y_ticks[1] and len(y_ticks[0]) >= 3


# --------------------------------------------------------------------------- what was compared

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "compare"


@pytest.fixture(scope="module")
def named_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample driver change (CapFrameX captures that name game, GPU and date), with a
    description and settings given as options; the description tries to be markup."""
    out = tmp_path_factory.mktemp("named") / "o"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("SOURCE_DATE_EPOCH", raising=False)
        mp.chdir(EXAMPLES)
        try:
            main(["compare", "change/before.json", "change/after.json", "--out", str(out),
                  "--lang", "en,ru,pt", "--description", "Driver 24.10.1 → 24.12.1 <b>x</b>",
                  "--settings", "2560x1440, Ultra"])
        except SystemExit as exc:  # pragma: no cover - a failure shows in the asserts below
            assert exc.code == 0
    return out


@pytest.mark.parametrize(("lang", "heads"), [
    ("en", ("Before/after report: Cyberpunk 2077", "Change", "Game", "Card", "Settings",
            "Captured", "Driver", "Files")),
    ("ru", ("Отчёт «до\u00a0и\u00a0после»: Cyberpunk 2077", "Изменение", "Игра", "Видеокарта",
            "Настройки", "Дата записи", "Драйвер", "Файлы")),
    ("pt", ("Relatório antes/depois: Cyberpunk 2077", "Mudança", "Jogo", "Placa de vídeo",
            "Configurações", "Capturado em", "Driver", "Arquivos")),
])
def test_report_names_what_was_compared(named_report: Path, lang: str, heads: tuple[str, ...]) -> None:
    """Title with the game; the change (as text, never markup), game, card, settings, capture
    date and both file names, before the first section."""
    html = (named_report / f"report.{lang}.html").read_text(encoding="utf-8")
    top = html.split("<h2>", 1)[0]
    assert f"<title>{heads[0]}</title>" in html and f"<h1>{heads[0]}</h1>" in top
    for head in heads[1:]:
        assert f"<dt>{head}</dt>" in top
    # The tool's 2026-11-20T10:00:00 (before) and 2026-11-21T09:30:00 (after), each side its own.
    captured = {"en": ("November 20, 2026, 10:00\u202fAM", "November 21, 2026, 9:30\u202fAM"),
                "ru": ("20 ноября 2026\u202fг., 10:00", "21 ноября 2026\u202fг., 09:30"),
                "pt": ("20 de novembro de 2026 10:00", "21 de novembro de 2026 09:30")}[lang]
    sides = {"en": ("Before", "After"), "ru": ("До", "После"), "pt": ("Antes", "Depois")}[lang]
    for value in ("Driver 24.10.1 → 24.12.1 &lt;b&gt;x&lt;/b&gt;", "Cyberpunk 2077",
                  "Illustrative RX 7800 XT", "2560x1440, Ultra",
                  f'<dd class="side">{sides[0]}: {captured[0]}</dd>',
                  f'<dd class="side">{sides[1]}: {captured[1]}</dd>',
                  "change/before.json", "change/after.json"):
        assert value in top, value
    assert "<b>x</b>" not in html


def test_report_without_metadata_says_what_is_not_recorded(pair_report: Path) -> None:
    """A benchmark CSV records no game, card or date: the report says so, and states no
    change it was not told about."""
    top = (pair_report / "report.en.html").read_text(encoding="utf-8").split("<h2>", 1)[0]
    assert "<h1>Before/after report</h1>" in top
    # game, card, capture date and driver; said once for both sides, not once per side
    assert top.count("not recorded in the captures") == 4 and "<dt>Change</dt>" not in top
    assert "<dd>not stated</dd>" in top


@pytest.mark.parametrize("lang", LANGS)
def test_report_chart_has_a_text_alternative_per_side(named_report: Path, lang: str) -> None:
    """The SVG's <desc> and the visible caption give each side's figures in words, in the
    report's language; the image's alt text names the chart (the caption says the figures, so
    a screen reader reads them once)."""
    import html as html_lib

    from certgen.render.i18n import gettext_for

    _ = gettext_for(lang)
    page = (named_report / f"report.{lang}.html").read_text(encoding="utf-8")
    texts = [html_lib.unescape(t) for t in re.findall(r'<span class="chart-text">([^<]*)</span>', page)]
    assert [t.split(":", 1)[0] for t in texts] == [_("Before"), _("After")]
    alt = re.search(r'<img src="data:image/svg\+xml;base64,([^"]*)" alt="([^"]*)"', page)
    phone = re.search(r'<source media="\(max-width: 600px\)" '
                      r'srcset="data:image/svg\+xml;base64,([^"]*)">', page)
    assert alt is not None and phone is not None
    title = _("Frame times of both captures over capture time")
    assert html_lib.unescape(alt.group(2)) == title != "" and title not in " ".join(texts)
    for encoded in (alt.group(1), phone.group(1)):  # the wide drawing and the phone's
        svg = base64.b64decode(encoded).decode("utf-8")
        descs = [html_lib.unescape(d) for d in re.findall(r"<desc>([^<]*)</desc>", svg)]
        assert descs[1:] == texts and descs[0] == " ".join(texts)
    mean = _("mean")
    csv_rows = list(csv.DictReader(io.StringIO((named_report / "compare.csv").read_text())))
    for side, text in zip(("before", "after"), texts, strict=True):
        avg = float(next(r["value"] for r in csv_rows if r["side"] == side and r["name"] == "avg_fps"))
        assert f"{mean} {fmt_number(round(1000.0 / avg, 3), lang, 1)} " in text


def test_series_description_comes_from_the_series_file(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    series = write_series(tmp_path, BEFORE8, AFTER8, PILOT)
    series.write_text(series.read_text().replace(
        "order: ABBA\n", "order: ABBA\ndescription: 'ReBAR off -> on'\nsettings: 1080p Low\n"))
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (0, "")
    top = (tmp_path / "o" / "report.en.html").read_text(encoding="utf-8").split("<h2>", 1)[0]
    assert '<dd class="description">ReBAR off -&gt; on</dd>' in top and "<dd>1080p Low</dd>" in top
    assert '<dd class="file">series.yaml</dd>' in top


@pytest.mark.parametrize("lang", ("ru", "pt"))
def test_a_description_in_another_language_is_marked_as_such(named_report: Path, lang: str) -> None:
    """--description is the lab's English: a ru or pt report keeps it as written, inside an
    element that says lang="en" (a screen reader reads it in English), followed by the
    report's own words for "original in English"."""
    from certgen.render.i18n import gettext_for

    top = (named_report / f"report.{lang}.html").read_text(encoding="utf-8").split("<h2>", 1)[0]
    note = gettext_for(lang)("original in English")
    assert note != "original in English"
    assert ('<dd class="description"><span lang="en">Driver 24.10.1 → 24.12.1 &lt;b&gt;x&lt;/b&gt;'
            f'</span> <span class="original-note">({note})</span></dd>') in top
    english = (named_report / "report.en.html").read_text(encoding="utf-8")
    assert 'class="original-note"' not in english and '<span lang="en">' not in english


def test_a_series_description_per_language_is_shown_in_each_language(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """description: {en, ru}: en and ru reports show their own text unmarked; the pt report,
    given none, shows the English, marked."""
    series = write_series(tmp_path, BEFORE8, AFTER8, PILOT)
    series.write_text(series.read_text().replace(
        "order: ABBA\n", "order: ABBA\ndescription:\n  en: ReBAR off, then on\n"
        "  ru: ReBAR выключен, затем включён\n"))
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o"),
                            "--lang", "en,ru,pt"], capsys)
    assert (code, err) == (0, "")
    tops = {lang: (tmp_path / "o" / f"report.{lang}.html").read_text(encoding="utf-8")
            .split("<h2>", 1)[0] for lang in LANGS}
    assert '<dd class="description">ReBAR off, then on</dd>' in tops["en"]
    assert '<dd class="description">ReBAR выключен, затем включён</dd>' in tops["ru"]
    assert ('<dd class="description"><span lang="en">ReBAR off, then on</span> '
            '<span class="original-note">(original em inglês)</span></dd>') in tops["pt"]


@pytest.mark.parametrize(("description", "field"), [
    ("{de: Treiber neu}", "description.de"),
    ("{}", "description"),
    ("{en: ''}", "description.en"),
    ("[a, b]", "description"),
])
def test_a_malformed_series_description_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], description: str, field: str) -> None:
    series = write_series(tmp_path, BEFORE8, AFTER8, PILOT)
    series.write_text(series.read_text().replace(
        "order: ABBA\n", f"order: ABBA\ndescription: {description}\n"))
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o")], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert field in err, err


def test_each_side_shows_the_dates_and_drivers_its_own_captures_record(named_report: Path) -> None:
    """The change sample's dates and drivers, read here from the CapFrameX files themselves
    (Info.CreationDate, Info.BaseDriverVersion), each printed against its own side."""
    from certgen.render.i18n import fmt_moment

    top = (named_report / "report.en.html").read_text(encoding="utf-8").split("<h2>", 1)[0]
    info = {side: json.loads((EXAMPLES / "change" / f"{side}.json").read_text())["Info"]
            for side in ("before", "after")}
    assert info["before"]["BaseDriverVersion"] != info["after"]["BaseDriverVersion"]
    assert info["before"]["CreationDate"] != info["after"]["CreationDate"]
    captured, driver = top.split("<dt>Captured</dt>", 1)[1].split("<dt>Driver</dt>", 1)
    driver = driver.split("<dt>", 1)[0]
    for side, name in (("before", "Before"), ("after", "After")):
        assert f'<dd class="side">{name}: {fmt_moment(info[side]["CreationDate"], "en")}</dd>' in captured
        assert f'<dd class="side">{name}: {info[side]["BaseDriverVersion"]}</dd>' in driver


@pytest.mark.parametrize("lang", LANGS)
def test_series_report_does_not_explain_the_noise_floor(tmp_path: Path, lang: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The series is decided by the signed-rank test and the bootstrap: its report never
    mentions the two-capture noise floor (which the pair report does)."""
    from certgen.render.i18n import gettext_for

    floor = gettext_for(lang)("Noise floor").lower()
    series = write_series(tmp_path, BEFORE8, AFTER8, PILOT)
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o"),
                            "--lang", lang], capsys)
    assert (code, err) == (0, "")
    html = (tmp_path / "o" / f"report.{lang}.html").read_text(encoding="utf-8").lower()
    assert floor not in html and "noise floor" not in html


@pytest.mark.parametrize("lang", LANGS)
def test_pair_report_explains_its_noise_floor(pair_report: Path, lang: str) -> None:
    """The counterpart of the series check: the word it looks for is there in a pair report."""
    from certgen.render.i18n import gettext_for

    floor = gettext_for(lang)("Noise floor").lower()
    assert floor in (pair_report / f"report.{lang}.html").read_text(encoding="utf-8").lower()


def test_description_longer_than_the_limit_is_refused(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "both.csv"
    write_bench_csv(src, {"before": [10.0] * 950, "after": [9.0] * 950})
    code, _, err = run_cli(["compare", str(src), "--out", str(tmp_path / "o"),
                            "--description", "x" * 1001], capsys)
    assert (code, err) == (1, "certgen: --description: expected at most 1000 characters, got 1001\n")
    code, _, err = run_cli(["compare", str(src), "--out", str(tmp_path / "o"),
                            "--settings", "EVIL\u202egnp.exe"], capsys)
    assert (code, err) == (1, "certgen: --settings: bidirectional control U+202E is not allowed "
                              "(it reorders the text)\n")
    assert not (tmp_path / "o").exists()


def test_series_file_description_is_checked_and_given_once(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    series = write_series(tmp_path, BEFORE8, AFTER8, PILOT)
    text = series.read_text()
    series.write_text(text.replace("order: ABBA\n", "order: ABBA\ndescription: [1]\n"))
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o")], capsys)
    assert (code, err) == (1, f"certgen: {series}: description: expected a text\n")
    series.write_text(text.replace("order: ABBA\n", "order: ABBA\ndescription: a\n"))
    code, _, err = run_cli(["compare", "--series", str(series), "--out", str(tmp_path / "o"),
                            "--description", "b"], capsys)
    assert (code, err) == (1, f"certgen: {series}: description: given in the series file and "
                              "as --description; give it once\n")


# --------------------------------------------------------------------------- the stall count row


def test_the_stall_count_is_written_under_the_new_name_and_the_pinned_one(pair_report: Path) -> None:
    rows = list(csv.DictReader(io.StringIO((pair_report / "compare.csv").read_text())))
    for side in ("before", "after"):
        metric = {r["name"]: r["value"] for r in rows if r["side"] == side and r["kind"] == "metric"}
        frames = [float(r["value"]) for r in rows if r["side"] == side and r["kind"] == "frame"]
        stalls = sum(v > 200 for v in frames)
        assert stalls == 3
        assert metric["excluded_over_stall_count"] == metric["excluded_over_stall_ms"] == str(stalls)
    names = [r["name"] for r in rows if r["side"] == "before" and r["kind"] == "metric"]
    assert names.index("excluded_over_stall_count") < names.index("excluded_over_stall_ms")


def test_the_time_in_stalls_is_written_as_a_time(pair_report: Path) -> None:
    """The report prints "Time in stalls, ms"; the CSV gives the same time as stall_time_ms (the
    pinned excluded_over_stall_ms stays the count)."""
    rows = list(csv.DictReader(io.StringIO((pair_report / "compare.csv").read_text())))
    html = (pair_report / "report.en.html").read_text(encoding="utf-8")
    shown = html.split("Time in stalls, ms</td>", 1)[1].split("</tr>", 1)[0]
    for side in ("before", "after"):
        metric = {r["name"]: r["value"] for r in rows if r["side"] == side and r["kind"] == "metric"}
        frames = [float(r["value"]) for r in rows if r["side"] == side and r["kind"] == "frame"]
        time_ms = round(sum(v for v in frames if v > 200), 3)
        assert float(metric["stall_time_ms"]) == time_ms
        assert f"{time_ms:,.1f}" in shown


def _stalled_side_warnings(path: Path, name: str, value: str) -> tuple[str, ...]:
    """The before side's warnings when a benchmark CSV of 950 frames of 10 ms and two stalls
    (250 and 300 ms) on each side states metric `name` = `value` for the before side."""
    from certgen.captures.detect import read_capture_file
    from certgen.metrics.pagefigures import checked

    frames = [10.0] * 950 + [250.0, 300.0]
    rows = ["side,kind,name,value", *(f"before,frame,frame_time_ms,{v}" for v in frames),
            f"before,metric,{name},{value}", *(f"after,frame,frame_time_ms,{v}" for v in frames)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before, _after = checked(read_capture_file(path))
    return before.warnings


def test_a_wrong_stall_time_in_a_benchmark_csv_is_reported(tmp_path: Path) -> None:
    assert _stalled_side_warnings(tmp_path / "a.csv", "stall_time_ms", "550.0") == ()
    assert _stalled_side_warnings(tmp_path / "b.csv", "stall_time_ms", "90.0") == (
        "side 'before': stall_time_ms is 90.0 in the file, recomputed 550.0",)


@pytest.mark.parametrize("name", ["excluded_over_stall_ms", "excluded_over_stall_count"])
def test_a_benchmark_csv_with_either_stall_row_name_is_read_and_checked(
    tmp_path: Path, name: str,
) -> None:
    """An export of an older certgen (only the old name) reads back without a warning; a
    wrong count under either name is reported."""
    assert _stalled_side_warnings(tmp_path / "a.csv", name, "2") == ()
    assert _stalled_side_warnings(tmp_path / "b.csv", name, "5") == (
        f"side 'before': {name} is 5.0 in the file, recomputed 2",)


def test_a_description_in_another_language_is_not_called_english(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--description` in Russian with `--description-lang ru`: the Russian report shows it as
    its own words, the English one marks it as written in Russian; without the option a
    description is English (the pair report's own marking)."""
    src = tmp_path / "both.csv"
    write_bench_csv(src, {"before": frames_with_stalls(1, 12.0, 130),
                          "after": frames_with_stalls(2, 10.0, 130)})
    code, _, err = run_cli(["compare", str(src), "--out", str(tmp_path / "o"), "--lang", "en,ru",
                            "--description", "Драйвер обновлён", "--description-lang", "ru"],
                           capsys)
    assert (code, err) == (0, "")
    ru = (tmp_path / "o" / "report.ru.html").read_text(encoding="utf-8")
    en = (tmp_path / "o" / "report.en.html").read_text(encoding="utf-8")
    assert '<dd class="description">Драйвер обновлён</dd>' in ru
    assert '<span lang="ru">Драйвер обновлён</span>' in en and "(original in Russian)" in en
    code, _, err = run_cli(["compare", str(src), "--out", str(tmp_path / "o2"),
                            "--description", "x", "--description-lang", "de"], capsys)
    assert code == 2 and "--description-lang" in err and not (tmp_path / "o2").exists()
