"""What the capture measured beside the intervals: latency and animation error (certgen.metrics.measured,
docs/spec/metrics.md "Measured by the capture").

Hand-computed values on files in the tools' exact layouts (PresentMon 2.5's header as its gold
outputs write it, FrameView's 110 columns), and the real PresentMon gold files checked against
an independent computation here (the csv module's rows and numpy)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import pathlib
from typing import Any

import numpy as np
import pytest
from capturekit import differing_fields
from realdata import REAL
from test_captures_frameview import FRAMES, HEADER, frameview_log
from test_framegen import HEADER as FRAMEGEN_HEADER

from certgen.captures import presentmon
from certgen.captures.detect import read_capture_file
from certgen.commands.metrics import measure
from certgen.metrics.measured import animation_error_of, latency_of

PM25_HEADER = FRAMEGEN_HEADER.split(",")
"""PresentMon 2.5's default header, as its gold outputs write it (tests/test_framegen.py's)."""


def pm25(rows: list[dict[str, str]]) -> bytes:
    """A PresentMon 2.5 CSV (BOM, CRLF) of one game's rows; cells not given are PresentMon's."""
    out = ["\ufeff" + ",".join(PM25_HEADER)]
    for i, given in enumerate(rows):
        cells = {name: "NA" for name in PM25_HEADER}
        cells.update({"Application": "Game.exe", "ProcessID": "4242",
                      "SwapChainAddress": "0x1F0FF310E98", "PresentRuntime": "DXGI",
                      "SyncInterval": "0", "PresentFlags": "512", "AllowsTearing": "1",
                      "PresentMode": "Hardware: Independent Flip", "FrameType": "Application",
                      "TimeInQPC": str(1857900376640 + 100000 * i), "MsUntilDisplayed": "1.5",
                      "MsBetweenDisplayChange": "10.0", "CPUStartQPC": str(1857900212645 + i)})
        cells.update(given)
        out.append(",".join(cells[name] for name in PM25_HEADER))
    return ("\r\n".join(out) + "\r\n").encode("utf-8")


# The worked example of docs/spec/metrics.md: five displayed frames with a PC latency and three
# with an animation error; the first row has no interval (not a frame), the last one was not
# displayed: the values on both are left out.
WORKED = [
    {"MsBetweenPresents": "NA", "MsPCLatency": "99", "MsAnimationError": "100"},
    {"MsBetweenPresents": "10.0", "MsPCLatency": "10", "MsAnimationError": "-0.5000"},
    {"MsBetweenPresents": "20.0", "MsPCLatency": "20", "MsAnimationError": "2.0"},
    {"MsBetweenPresents": "10.0", "MsPCLatency": "30", "MsAnimationError": "-5"},
    {"MsBetweenPresents": "10.0", "MsPCLatency": "40"},
    {"MsBetweenPresents": "10.0", "MsPCLatency": "50"},
    {"MsBetweenPresents": "10.0", "MsPCLatency": "500", "MsAnimationError": "50",
     "MsUntilDisplayed": "NA", "MsBetweenDisplayChange": "NA"},
]


def both_paths(data: bytes, name: str) -> presentmon.Capture:
    fast, slow = presentmon.read_each_path(data, name)
    assert fast is not None, "the fast path declined a plain file"
    assert differing_fields(fast, slow) == []
    return slow


def test_the_worked_example_by_hand() -> None:
    capture = both_paths(pm25(WORKED), "worked.csv")
    latency = latency_of(capture)
    assert latency.pc_latency_ms is not None
    assert latency.pc_latency_ms.model_dump() == {
        "frames": 5, "median": 30.0, "p90": pytest.approx(46.0), "p99": pytest.approx(49.6),
        "left_out": 0, "column": "MsPCLatency"}
    # NA on every row: not measured by this capture (the column is there, the values are not).
    assert latency.click_to_photon_ms is None and latency.all_input_to_photon_ms is None
    animation = animation_error_of(capture)
    assert animation is not None
    assert animation.model_dump() == {
        "frames": 3, "mean_abs_ms": pytest.approx(2.5), "p99_abs_ms": pytest.approx(4.94),
        "time_share_over_1ms": pytest.approx(0.75), "time_share_over_4ms": pytest.approx(0.25),
        "column": "MsAnimationError"}


def test_the_sop_figures_ignore_the_new_columns() -> None:
    """Six frame times either way: the first row has no interval, the undisplayed one counts."""
    capture = both_paths(pm25(WORKED), "worked.csv")
    assert capture.frame_times_ms.tolist() == [10.0, 20.0, 10.0, 10.0, 10.0, 10.0]
    assert capture.dropped_frames == 1


def test_a_negative_latency_is_left_out_and_counted_and_0_is_no_value() -> None:
    rows = [{"MsBetweenPresents": "10.0", "MsClickToPhotonLatency": value}
            for value in ("NA", "-3.0", "12.0", "0.0000", "18.0")]
    spread = latency_of(both_paths(pm25(rows), "negative.csv")).click_to_photon_ms
    assert spread is not None
    assert (spread.frames, spread.left_out, spread.median) == (2, 1, 15.0)


def test_a_file_without_the_columns_measures_none_of_them() -> None:
    capture = read_capture_file(REAL / "PresentMon-1.5_trivflip.csv")[0]
    assert capture.measured == ()
    assert latency_of(capture).model_dump() == dict.fromkeys(
        ("pc_latency_ms", "click_to_photon_ms", "all_input_to_photon_ms"))
    assert animation_error_of(capture) is None


def test_frameview_pc_latency_over_displayed_frames() -> None:
    """FrameView's layout (110 columns, CRLF, leading spaces): Dropped=1 frames give no value."""
    at = HEADER.index("MsPCLatency")
    lines = frameview_log([("Game.exe", 7, "0x1", FRAMES)]).decode().split("\r\n")
    body = []
    for i, line in enumerate(lines[1:-1]):
        cells = line.split(",")
        cells[at] = f"{20 + i % 5}.5"  # 20.5, 21.5, …, 24.5, again
        body.append(",".join(cells))
    data = ("\r\n".join([lines[0], *body]) + "\r\n").encode()
    capture = both_paths(data, "frameview.csv")
    spread = latency_of(capture).pc_latency_ms
    assert spread is not None
    dropped = [i for i, (token, _) in enumerate(FRAMES) if token == "1"]
    kept = np.array([20 + i % 5 + 0.5 for i in range(len(FRAMES)) if i not in dropped])
    assert spread.frames == len(FRAMES) - len(dropped) == kept.size
    assert spread.median == pytest.approx(float(np.percentile(kept, 50)))
    assert spread.p99 == pytest.approx(float(np.percentile(kept, 99)))


# --------------------------------------------------------------------------- real files

GOLD = ("PresentMon-2.5_test_case_1.csv", "PresentMon-2.5_test_case_2.csv",
        "PresentMon-2.5_test_case_3.csv", "test_case_5.csv")


def _independent(path: pathlib.Path, group: tuple[str, str, str]) -> dict[str, object]:
    """Latency and animation error computed here from the csv module's rows of the group."""
    rows = [r for r in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")))
            if (r["Application"], r["ProcessID"], r["SwapChainAddress"]) == group
            and r["MsBetweenPresents"] != "NA"]
    shown = [r for r in rows if r["MsUntilDisplayed"] != "NA"]
    out: dict[str, object] = {}
    for key, column in (("pc_latency_ms", "MsPCLatency"),
                        ("click_to_photon_ms", "MsClickToPhotonLatency"),
                        ("all_input_to_photon_ms", "MsAllInputToPhotonLatency")):
        values = np.array([float(r[column]) for r in shown
                           if r[column] != "NA" and float(r[column]) > 0])
        out[key] = None if values.size == 0 else (
            values.size, *np.percentile(values, [50, 90, 99]).tolist())
    errors = [(abs(float(r["MsAnimationError"])), float(r["MsBetweenPresents"]))
              for r in shown if r["MsAnimationError"] != "NA"]
    if errors:
        size, time = np.array(errors).T
        out["animation"] = (len(errors), size.mean(), float(np.percentile(size, 99)),
                            time[size > 1].sum() / time.sum(), time[size > 4].sum() / time.sum())
    else:
        out["animation"] = None
    return out


@pytest.mark.parametrize("name", GOLD)
def test_real_gold_files_match_an_independent_computation(name: str) -> None:
    path = REAL / name
    capture = both_paths(path.read_bytes(), name)
    assert capture.group is not None
    expected = _independent(path, (capture.group.application, capture.group.process_id,
                                   capture.group.swap_chain))
    latency = latency_of(capture).model_dump()
    for key in ("pc_latency_ms", "click_to_photon_ms", "all_input_to_photon_ms"):
        got = latency[key]
        want = expected[key]
        if want is None:
            assert got is None, key
        else:
            assert got is not None, key
            assert (got["frames"], got["median"], got["p90"], got["p99"]) == pytest.approx(want)
    animation = animation_error_of(capture)
    want_animation = expected["animation"]
    if want_animation is None:
        assert animation is None
    else:
        assert animation is not None
        assert (animation.frames, animation.mean_abs_ms, animation.p99_abs_ms,
                animation.time_share_over_1ms, animation.time_share_over_4ms
                ) == pytest.approx(want_animation, rel=1e-12)


def test_the_gold_files_measure_animation_error_but_no_latency() -> None:
    """PresentMon's 2.5 gold traces have no latency markers: every latency cell is NA."""
    for name in GOLD[:3]:
        capture = read_capture_file(REAL / name)[0]
        assert latency_of(capture).model_dump() == dict.fromkeys(
            ("pc_latency_ms", "click_to_photon_ms", "all_input_to_photon_ms"))
        assert animation_error_of(capture) is not None


def test_presentmon_2_0_0s_zero_latencies_are_no_value_as_2_1_0s_na() -> None:
    """One trace: 2.0.0 writes ClickToPhotonLatency 0 where 2.1.0 writes NA."""
    old = read_capture_file(REAL / "PresentMon-2.0.0_test_case_0.csv")[0]
    found = old.measured_column("ClickToPhotonLatency")
    assert found is not None and np.nanmax(found[1]) == 0.0
    assert latency_of(old) == latency_of(read_capture_file(
        REAL / "PresentMon-2.1.0_test_case_0.csv")[0])
    assert latency_of(old).click_to_photon_ms is None


def test_the_v2_metrics_layout_gives_the_same_figures() -> None:
    """test_case_5 and test_case_5_v2 are one trace in two layouts (ClickToPhotonLatency,
    AnimationError without `Ms`): the same latency and animation error."""
    default = read_capture_file(REAL / "test_case_5.csv")[0]
    v2 = read_capture_file(REAL / "test_case_5_v2.csv")[0]
    for ours, theirs in ((latency_of(default), latency_of(v2)),
                         (animation_error_of(default), animation_error_of(v2))):
        assert ours is not None and theirs is not None
        a, b = _without_columns(ours.model_dump()), _without_columns(theirs.model_dump())
        assert a.keys() == b.keys()
        for key in a:  # each spread compared figure by figure (FrameTime weighs in v2)
            assert a[key] == (b[key] if a[key] is None or isinstance(a[key], int)
                              else pytest.approx(b[key])), key


def _without_columns(data: dict[str, Any]) -> dict[str, Any]:
    """The figures without the column names (which differ between the two layouts)."""
    return {k: _without_columns(v) if isinstance(v, dict) else v
            for k, v in data.items() if k != "column"}


@pytest.mark.parametrize("name", GOLD)
def test_the_pinned_figures_are_unchanged_without_the_new_columns(
        name: str, tmp_path: pathlib.Path) -> None:
    """The same file with every column issue 25 reads cut out (latency, animation error, the
    work columns of the hitch causes, FrameView's sensors, and the presentation mode, tearing
    flag and CPU start of the validity checks): every pinned SOP figure equal; the new keys
    null, and only the checks that need none of those columns ran."""
    path = REAL / name
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    new_columns = {*presentmon.MEASURED_COLUMNS, *(c for role in presentmon.WORK_COLUMNS
                                                    for c in role),
                   *presentmon.SENSOR_COLUMNS, *presentmon.LABEL_COLUMNS,
                   *presentmon.CPU_START_COLUMNS}
    cut = {i for i, column in enumerate(rows[0]) if column in new_columns}
    assert cut  # the gold files carry some of them
    stripped = tmp_path / name
    stripped.write_text("\n".join(",".join(c for i, c in enumerate(row) if i not in cut)
                                  for row in rows) + "\n", encoding="utf-8")
    with_columns, without = measure([str(path)], None, None)[0], measure([str(stripped)], None, None)[0]
    for key in ("frames", "dropped_nonpositive", "avg_fps", "low_1pct_fps", "low_0_1pct_fps",
                "consistency_gap", "stutter", "fluidity_score", "p99_ms", "p99_9_ms",
                "stall_count", "stutter_count"):
        assert with_columns[key] == without[key], key
    assert without["animation_error"] is None
    assert set(without["latency"].values()) == {None}
    assert without["hitch_causes"] is None and without["power_thermals"] is None
    assert "repeated_cpu_start" not in without["validity"]["checked"]


# --------------------------------------------------------------------------- record and documents

MEASURED = {
    "latency": {"pc_latency_ms": {"frames": 5, "median": 30.0, "p90": 46.0, "p99": 49.6,
                                  "left_out": 0, "column": "MsPCLatency"},
                "click_to_photon_ms": None, "all_input_to_photon_ms": None},
    "animation_error": {"frames": 3, "mean_abs_ms": 2.5, "p99_abs_ms": 4.94,
                        "time_share_over_1ms": 0.75, "time_share_over_4ms": 0.25,
                        "column": "MsAnimationError"},
}
NOTHING = {"latency": {"pc_latency_ms": None, "click_to_photon_ms": None,
                       "all_input_to_photon_ms": None}, "animation_error": None}


def _record_bytes(run: dict[str, object]) -> bytes:
    from recordkit import record_json

    return (json.dumps(record_json({"runs": [run]}), ensure_ascii=False, indent=2)
            + "\n").encode("utf-8")


@pytest.mark.parametrize("run", [{}, {"measured": MEASURED}, {"measured": NOTHING},
                                 {"measured": None}])
def test_records_with_and_without_measured_round_trip_byte_for_byte(run: dict[str, object]) -> None:
    """A record of an older certgen has no runs[].measured and is written back without it."""
    from certgen.record import dump_record, load_record

    data = _record_bytes(run)
    record = load_record(data)
    assert ("measured" in record.runs[0].model_fields_set) == bool(run)
    assert dump_record(record) == data


@pytest.mark.parametrize(("lang", "title", "tag", "nothing"), [
    ("en", "Latency and animation error", "diagnostic, not graded",
     "not measured by this capture"),
    ("ru", "ошибка анимации", "диагностика, в\u00a0оценку не\u00a0входит",
     "в\u00a0этой записи не\u00a0измерено"),
    ("pt", "Latência e\u00a0erro de animação", "diagnóstico, fora da avaliação",
     "não medido nesta captura"),
])
def test_certificate_shows_the_section_when_a_run_measured_something(
        lang: str, title: str, tag: str, nothing: str, snapshot: object) -> None:
    from recordkit import complete_record

    from certgen.render.certificate import render_certificate_html

    html = render_certificate_html(
        complete_record({"runs": [{"measured": MEASURED}, {"measured": NOTHING}]}), lang,
        record_sha256="0" * 64)
    section = html.split('<section class="measured-diagnostics">', 1)[1].split("</section>")[0]
    assert title in section and tag in section
    # Run 2 measured nothing: it has no row (issue 42; the record keeps its nulls); run 1 says
    # "not measured" of its input latency only.
    assert section.count(f">{nothing}<") == 1
    assert 'data-run="0"' in section and 'data-run="1"' not in section
    assert section == snapshot
    for absent in ({}, {"measured": NOTHING}, {"measured": None}):
        html = render_certificate_html(complete_record({"runs": [absent]}), lang,
                                       record_sha256="0" * 64)
        assert 'class="measured-diagnostics"' not in html and title not in html


def _pair(tmp: pathlib.Path, latency: bool) -> tuple[pathlib.Path, pathlib.Path]:
    """Two 3,000-frame PresentMon 2.5 captures, after faster than before; with or without
    latency and animation error."""
    rng = np.random.default_rng(1)
    paths = []
    for name, pace in (("before", 8.0), ("after", 7.0)):
        times = np.round(rng.gamma(40.0, pace / 40.0, 3000), 4)
        rows = [{"MsBetweenPresents": f"{t:.4f}",
                 **({"MsPCLatency": f"{t * 1.5 + 5:.4f}",
                     "MsAnimationError": f"{(t - pace) * 0.5:.4f}"} if latency else {})}
                for t in times]
        path = tmp / f"{name}.csv"
        path.write_bytes(pm25(rows))
        paths.append(path)
    return paths[0], paths[1]


@pytest.fixture(scope="module")
def report_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, ...]:
    """One before/after report in the three languages (one compare run: the PDFs are the
    slow part), and its two captures."""
    from certgen.cli import main

    tmp = tmp_path_factory.mktemp("report")
    before, after = _pair(tmp, latency=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["compare", str(before), str(after), "--out", str(tmp / "r"),
                     "--lang", "en,ru,pt"])
    assert (code or 0, err.getvalue()) == (0, "")
    return tmp / "r", before, after


@pytest.mark.parametrize("lang", ["en", "ru", "pt"])
def test_the_report_shows_both_sides_latency_and_animation_error(
        lang: str, report_pair: tuple[pathlib.Path, ...], snapshot: object) -> None:
    out, before, after = report_pair
    html = (out / f"report.{lang}.html").read_text(encoding="utf-8")
    head = {"en": "Latency and animation error", "ru": "ошибка анимации",
            "pt": "Latência e\u00a0erro de animação"}[lang]
    section = html.split(head, 1)[1].split("</table>", 1)[0]
    # The figures are each side's own, computed here from the files.
    for path in (before, after):
        figures = latency_of(read_capture_file(path)[0]).pc_latency_ms
        assert figures is not None
        shown = f"{figures.median:.1f}".replace(".", "," if lang != "en" else ".")
        assert shown in section
    assert section == snapshot


def test_the_report_has_no_such_section_when_neither_side_measured_any(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bundlekit import run_cli

    before, after = _pair(tmp_path, latency=False)
    code, _, err = run_cli(["compare", str(before), str(after), "--out", str(tmp_path / "r")],
                           capsys)
    assert (code, err) == (0, "")
    assert "Latency and animation error" not in (tmp_path / "r" / "report.en.html").read_text(
        encoding="utf-8")


@pytest.mark.parametrize("column", ["MsPCLatency", "MsAnimationError", "MsClickToPhotonLatency"])
def test_a_measured_value_beyond_the_range_sets_the_column_aside(
        column: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1e308 would sum to infinity: the column is set aside (its figure not measured, with the
    count of frames and why), never the capture refused (issue 39; it was refused before)."""
    from bundlekit import run_cli

    rows = [{"MsBetweenPresents": "10.0"} for _ in range(5)]
    rows[3][column] = "1e308"
    path = tmp_path / "huge.csv"
    path.write_bytes(pm25(rows))
    code, out, err = run_cli(["metrics", "--json", str(path)], capsys)
    assert (code, err) == (0, "")
    [entry] = json.loads(out)
    assert entry["avg_fps"] == 100.0
    assert entry["unusable_columns"] == [{"column": column, "reason": "out_of_range",
                                          "frames": 1, "of_frames": 5, "first_frame": 4}]
