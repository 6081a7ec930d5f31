"""Capture validity and FrameView power (issue 25, steps 5 and 6; certgen.metrics.validity,
certgen.metrics.measured; docs/spec/metrics.md "Capture validity" and "Power and GPU sensors").

Hand-computed findings on files in PresentMon 2.5's and FrameView's exact layouts, read through
both paths; the real PresentMon 2.5 gold files checked against an independent computation here
(the csv module's rows); the record and the certificate section in en/ru/pt."""

from __future__ import annotations

import csv
import io
import json
import pathlib
from typing import Any

import pytest
from bundlekit import card, run_cli, run_entry, write_card
from realdata import REAL
from test_captures_frameview import HEADER as FV_HEADER
from test_captures_frameview import frameview_log
from test_captures_wrap import WRAPPED, _log_with
from test_measured import MEASURED, both_paths, pm25

from certgen.captures.detect import read_capture_file
from certgen.commands.metrics import measure
from certgen.metrics.measured import power_thermals_of
from certgen.metrics.pagefigures import checked
from certgen.metrics.validity import validity_of
from certgen.model.measured import DisplayTiming

VRR_144 = DisplayTiming(refresh_hz=144.0, vrr_min_hz=48.0, vrr_max_hz=144.0,
                        presentation="fullscreen")
FIXED_60 = DisplayTiming(refresh_hz=60.0, vrr_min_hz=None, vrr_max_hz=None)

# One game's rows, PresentMon 2.5 layout. The first has no interval (not a frame); cells not
# given are pm25's: Application frames, "Hardware: Independent Flip", AllowsTearing 1, a CPU
# start of its own on each row.
ROWS: list[dict[str, str]] = [
    {"MsBetweenPresents": "NA", "CPUStartQPC": "500"},
    {"MsBetweenPresents": "10.0", "AllowsTearing": "0", "CPUStartQPC": "1000"},
    # Generated, logged with 0 ms, repeating the CPU start before it: both generator patterns.
    {"MsBetweenPresents": "0.0", "FrameType": "AMD AFMF", "CPUStartQPC": "1000"},
    {"MsBetweenPresents": "10.0", "PresentMode": "Composed: Flip"},
    # Composed, tearing allowed, and sooner than 1000 / 144 = 6.94 ms: torn under VRR.
    {"MsBetweenPresents": "5.0", "PresentMode": "Composed: Copy with GPU GDI"},
    {"MsBetweenPresents": "10.0", "PresentMode": "Composed: Flip", "CPUStartQPC": "NA"},
    # "Hardware Composed" is the display's own overlay, not the desktop compositor.
    {"MsBetweenPresents": "10.0", "PresentMode": "Hardware Composed: Independent Flip",
     "CPUStartQPC": "NA"},
    {"MsBetweenPresents": "4.0", "FrameType": "AMD AFMF"},
]


def _found(validity: Any) -> dict[str, dict[str, Any]]:
    return {f.check: f.model_dump(mode="json") for f in validity.findings}


def test_every_check_by_hand() -> None:
    capture = both_paths(pm25(ROWS), "pm25.csv")
    got = validity_of(capture, VRR_144)
    assert got.checked == ("generated_zero_interval", "repeated_cpu_start",
                           "composed_presentation", "tearing_with_vrr", "wrapped_interval")
    assert _found(got) == {
        "generated_zero_interval": {"check": "generated_zero_interval", "frames": 1,
                                    "of_frames": 7, "column": "FrameType, MsBetweenPresents",
                                    "values": [{"value": "AMD AFMF", "frames": 1}]},
        "repeated_cpu_start": {"check": "repeated_cpu_start", "frames": 1, "of_frames": 7,
                               "column": "CPUStartQPC",
                               "values": [{"value": "AMD AFMF", "frames": 1}]},
        "composed_presentation": {"check": "composed_presentation", "frames": 3,
                                  "of_frames": 7, "column": "PresentMode",
                                  "values": [{"value": "Composed: Flip", "frames": 2},
                                             {"value": "Composed: Copy with GPU GDI",
                                              "frames": 1}]},
        # 5.0 and 4.0 ms with tearing allowed; the 10 ms frames fit the window; the first
        # frame (10 ms) does not allow tearing; the 0 ms frame is no interval.
        "tearing_with_vrr": {"check": "tearing_with_vrr", "frames": 2, "of_frames": 7,
                             "column": "AllowsTearing, MsBetweenPresents", "values": []},
    }


def test_checks_run_only_with_their_columns_and_declaration() -> None:
    capture = both_paths(pm25(ROWS), "pm25.csv")
    # No declared display: the two checks that need one do not run (and are not "passed").
    alone = validity_of(capture)
    assert alone.checked == ("generated_zero_interval", "repeated_cpu_start", "wrapped_interval")
    # A fixed refresh: no VRR window, so no tearing check; windowed: no compositor check.
    fixed = validity_of(capture, FIXED_60)
    assert "tearing_with_vrr" not in fixed.checked
    assert "composed_presentation" not in fixed.checked
    windowed = validity_of(capture, VRR_144.model_copy(update={"presentation": "windowed"}))
    assert "composed_presentation" not in windowed.checked
    assert "tearing_with_vrr" in windowed.checked
    # Without FrameType, PresentMode, AllowsTearing and CPUStartQPC only the wrap check runs.
    header = [c for c in pm25(ROWS).decode("utf-8-sig").split("\r\n")[0].split(",")]
    drop = {header.index(c) for c in ("FrameType", "PresentMode", "AllowsTearing",
                                      "CPUStartQPC")}
    lines = pm25(ROWS).decode("utf-8-sig").split("\r\n")
    bare = "\r\n".join(",".join(c for i, c in enumerate(line.split(",")) if i not in drop)
                       for line in lines).encode()
    plain = both_paths(bare, "bare.csv")
    assert validity_of(plain, VRR_144).model_dump() == {"checked": ("wrapped_interval",),
                                                        "findings": ()}


def test_the_generator_patterns_are_warned_on_reading(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "pm25.csv"
    path.write_bytes(pm25(ROWS))
    [capture] = checked(read_capture_file(path, name="pm25.csv"))
    zero = [w for w in capture.warnings if "0 ms present interval" in w]
    repeat = [w for w in capture.warnings if "CPU start" in w]
    assert zero == [
        "1 generated frame (AMD AFMF) logged with a 0 ms present interval, a pattern PresentMon "
        "shows with some frame generators: the SOP drops them as non-positive frame times "
        "(counted); the application frames' own figures are under frame generation"]
    assert repeat == [
        "the previous frame's CPU start (CPUStartQPC) repeated on 1 frame of 7 (AMD AFMF ×1), a "
        "pattern PresentMon shows with some frame generators: such a row is not a frame the "
        "CPU began; the SOP figures count its present interval as written"]
    # The declared checks are not warned about on reading: nothing is declared there.
    assert not any("compositor" in w or "tearing" in w for w in capture.warnings)


def test_metrics_warns_of_the_declared_checks(tmp_path: pathlib.Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pm25.csv"
    path.write_bytes(pm25(ROWS))
    code, out, _ = run_cli(["metrics", str(path), "--refresh-hz", "144", "--vrr", "48-144",
                              "--presentation", "fullscreen", "--json"], capsys)
    assert code == 0
    [entry] = json.loads(out)
    assert [f["check"] for f in entry["validity"]["findings"]] == [
        "generated_zero_interval", "repeated_cpu_start", "composed_presentation",
        "tearing_with_vrr"]
    assert ("3 frames of 7 were presented through the desktop compositor (Composed: Flip ×2, "
            "Composed: Copy with GPU GDI ×1) while the display is declared full-screen") in " ".join(entry["warnings"])
    assert ("2 frames of 7 allowed tearing (AllowsTearing=1) and came sooner than the declared "
            "VRR window 48-144 Hz can refresh") in " ".join(entry["warnings"])


def test_presentation_needs_the_refresh(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["metrics", str(REAL / "PresentMon-2.5_test_case_1.csv"),
                            "--presentation", "fullscreen"], capsys)
    assert code == 2 and "--presentation needs --refresh-hz" in err


def test_the_wrap_around_is_a_finding() -> None:
    _, slow = both_paths_fv(_log_with(WRAPPED))
    got = validity_of(slow)
    assert _found(got)["wrapped_interval"] == {
        "check": "wrapped_interval", "frames": 1, "of_frames": 44, "column": "MsBetweenPresents",
        "values": []}


def both_paths_fv(data: bytes) -> tuple[Any, Any]:
    from capturekit import differing_fields

    from certgen.captures import presentmon

    fast, slow = presentmon.read_each_path(data, "fv.csv")
    assert fast is not None and differing_fields(fast, slow) == []
    return fast, slow


def _independent_validity(path: pathlib.Path, group: tuple[str, str, str],
                          max_hz: float) -> dict[str, int]:
    """The findings counted from the csv module's rows of the chosen group: frames are its rows
    with an interval; a CPU start repeats the group's previous row's (as written, not NA)."""
    text = path.read_text(encoding="utf-8-sig")
    rows = [r for r in csv.DictReader(io.StringIO(text))
            if (r["Application"], r["ProcessID"], r["SwapChainAddress"]) == group]
    counts = {"generated_zero_interval": 0, "repeated_cpu_start": 0,
              "composed_presentation": 0, "tearing_with_vrr": 0}
    previous = None
    for row in rows:
        start = row["CPUStartQPC"].strip()
        repeated = start not in ("", "NA") and start == previous
        previous = start
        if row["MsBetweenPresents"] == "NA":
            continue
        t = float(row["MsBetweenPresents"])
        counts["generated_zero_interval"] += t == 0.0 and row["FrameType"] not in (
            "Application", "NA", "")
        counts["repeated_cpu_start"] += repeated
        counts["composed_presentation"] += row["PresentMode"].startswith("Composed:")
        counts["tearing_with_vrr"] += (row["AllowsTearing"] == "1" and 0.0 < t < 1000.0 / max_hz)
    return {k: v for k, v in counts.items() if v}


@pytest.mark.parametrize("name", ["PresentMon-2.5_test_case_1.csv",
                                  "PresentMon-2.5_test_case_2.csv",
                                  "PresentMon-2.5_test_case_3.csv"])
@pytest.mark.parametrize("max_hz", [144.0, 60.0])
def test_real_gold_files_match_an_independent_count(name: str, max_hz: float) -> None:
    [capture] = read_capture_file(REAL / name, name=name)
    assert capture.group is not None
    group = (capture.group.application, str(capture.group.process_id),
             capture.group.swap_chain)
    timing = DisplayTiming(refresh_hz=max_hz, vrr_min_hz=48.0, vrr_max_hz=max_hz,
                           presentation="fullscreen")
    got = {f.check: f.frames for f in validity_of(capture, timing).findings}
    expected = _independent_validity(REAL / name, group, max_hz)
    assert got == expected
    assert expected["composed_presentation"] > 0  # every gold file composes some frames


# FrameView power and GPU sensors: four frames of 10, 20, 10 and 20 ms.
SENSORS = [
    {"MsBetweenPresents": "10.000", "NV Pwr(W) (API)": "100.0", "GPU0Temp(C)": "60",
     "GPU0Clk(MHz)": "2600"},
    {"MsBetweenPresents": "20.000", "NV Pwr(W) (API)": "200.0", "GPU0Temp(C)": "62",
     "GPU0Clk(MHz)": "2610"},
    {"MsBetweenPresents": "10.000", "NV Pwr(W) (API)": "NA", "GPU0Temp(C)": "70",
     "GPU0Clk(MHz)": "2400"},
    {"MsBetweenPresents": "20.000", "NV Pwr(W) (API)": "150.0", "GPU0Temp(C)": "71",
     "GPU0Clk(MHz)": "NA"},
]


def _frameview(rows: list[dict[str, str]]) -> bytes:
    """The FrameView test log's layout (110 columns) with these rows' cells in place."""
    base = frameview_log([("Game.exe", 7, "0x1", [("0", 1.0)] * len(rows))]).decode()
    lines = base.split("\r\n")
    for i, given in enumerate(rows):
        cells = lines[1 + i].split(",")
        for column, value in given.items():
            cells[FV_HEADER.index(column)] = value
        lines[1 + i] = ",".join(cells)
    return "\r\n".join(lines).encode()


def test_power_and_sensors_by_hand() -> None:
    _, capture = both_paths_fv(_frameview(SENSORS))
    got = power_thermals_of(capture)
    assert got is not None
    assert got.model_dump() == {
        # Time-weighted over the frames with a reading: (100·10 + 200·20 + 150·20) / 50 = 160 W.
        "power_column": "NV Pwr(W) (API)", "power_frames": 3, "avg_power_w": 160.0,
        # The run's FPS (4 frames in 60 ms: 66.67) per watt.
        "fps_per_watt": pytest.approx(4000.0 / 60.0 / 160.0),
        # A 60 ms run: each end is half of it (30 ms): frames 1-2 begin in it, frames 3-4 end in it.
        "span_s": 0.03,
        "temperature_c": {"column": "GPU0Temp(C)", "start": 61.0, "end": 70.5},
        "clock_mhz": {"column": "GPU0Clk(MHz)", "start": 2605.0, "end": 2400.0},
    }


def test_the_measured_board_power_is_preferred_and_na_is_no_reading() -> None:
    pcat = [{**row, "PCAT Power Total(W)": "250.0"} for row in SENSORS]
    _, capture = both_paths_fv(_frameview(pcat))
    got = power_thermals_of(capture)
    assert got is not None and (got.power_column, got.avg_power_w) == ("PCAT Power Total(W)",
                                                                       250.0)
    # Every power cell NA (or 0 W): power has no reading; the sensors are still given.
    none = [{**row, "NV Pwr(W) (API)": "NA" if i % 2 else "0"} for i, row in enumerate(SENSORS)]
    _, capture = both_paths_fv(_frameview(none))
    got = power_thermals_of(capture)
    assert got is not None
    assert (got.power_column, got.power_frames, got.avg_power_w, got.fps_per_watt) == (
        None, 0, None, None)
    assert got.temperature_c is not None and got.temperature_c.start == 61.0
    # Every sensor NA too: not measured by this capture (the columns are there, no value is).
    blank = [{**row, "GPU0Temp(C)": "NA", "GPU0Clk(MHz)": "NA"} for row in none]
    assert power_thermals_of(both_paths_fv(_frameview(blank))[1]) is None


def test_busy_columns_na_on_every_frame_give_no_hitch_causes() -> None:
    from certgen.metrics.measured import hitch_causes_of

    plain = both_paths(pm25([{"MsBetweenPresents": "10.0"}] * 50), "plain.csv")
    assert plain.measured_column("MsCPUBusy") is not None  # the column is there, all NA
    assert hitch_causes_of(plain) is None


def test_a_capture_without_sensors_has_no_power() -> None:
    assert power_thermals_of(both_paths(pm25(ROWS), "pm25.csv")) is None
    [capture] = read_capture_file(REAL / "PresentMon-2.5_test_case_2.csv", name="tc2.csv")
    assert power_thermals_of(capture) is None


def test_the_sop_figures_do_not_move_with_the_sensors(tmp_path: pathlib.Path) -> None:
    with_sensors = tmp_path / "with.csv"
    with_sensors.write_bytes(_frameview(SENSORS))
    without = tmp_path / "without.csv"
    without.write_bytes(_frameview([{"MsBetweenPresents": r["MsBetweenPresents"]}
                                    for r in SENSORS]))
    a, b = measure([str(with_sensors), str(without)], None, None)
    differ = {k for k in a if a[k] != b[k]}
    assert differ == {"file", "power_thermals"}
    assert a["power_thermals"]["avg_power_w"] == 160.0


def test_the_record_carries_validity_and_power(tmp_path: pathlib.Path) -> None:
    from bundlekit import TEST_SYSTEM

    from certgen.pipeline import check_bundle
    from certgen.record import dump_record

    (tmp_path / "captures").mkdir()
    (tmp_path / "captures/pm.csv").write_bytes(pm25(ROWS))
    timing = {"refresh_hz": 144, "vrr": {"min_hz": 48, "max_hz": 144},
              "presentation": "fullscreen"}
    data = card([run_entry("Game", capture="captures/pm.csv")],
                test_system={**TEST_SYSTEM, "display_timing": timing})
    write_card(tmp_path, data)
    checked = check_bundle(tmp_path)
    saved = json.loads(dump_record(checked.record))
    assert saved["test_system"]["display_timing"]["presentation"] == "fullscreen"
    measured = saved["runs"][0]["measured"]
    assert [f["check"] for f in measured["validity"]["findings"]] == [
        "generated_zero_interval", "repeated_cpu_start", "composed_presentation",
        "tearing_with_vrr"]
    assert measured["power_thermals"] is None
    # The run's warnings (what `check` prints) name every finding, the declared ones included.
    warned = json.dumps(saved["runs"][0], ensure_ascii=False)
    for words in ("logged with a 0 ms present interval", "previous frame's CPU start",
                  "desktop compositor", "allowed tearing"):
        assert words in warned, words


@pytest.mark.parametrize("value", ["borderless", "", 1])
def test_card_presentation_is_checked_in_one_line(tmp_path: pathlib.Path, value: object,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from bundlekit import TEST_SYSTEM

    (tmp_path / "captures").mkdir()
    (tmp_path / "captures/pm.csv").write_bytes(pm25(ROWS))
    timing = {"refresh_hz": 144, "vrr": "none", "presentation": value}
    data = card([run_entry("Game", capture="captures/pm.csv")],
                test_system={**TEST_SYSTEM, "display_timing": timing})
    write_card(tmp_path, data)
    code, _, err = run_cli(["check", str(tmp_path)], capsys)
    assert code == 1 and "Traceback" not in err
    assert "presentation" in err and "card.yaml" in err, err


FINDINGS = {"checked": ["generated_zero_interval", "repeated_cpu_start",
                        "composed_presentation", "tearing_with_vrr", "wrapped_interval"],
            "findings": [
                {"check": "generated_zero_interval", "frames": 1200, "of_frames": 5000,
                 "column": "FrameType, MsBetweenPresents",
                 "values": [{"value": "AMD AFMF", "frames": 1200}]},
                {"check": "repeated_cpu_start", "frames": 3, "of_frames": 5000,
                 "column": "CPUStartQPC", "values": []},
                {"check": "composed_presentation", "frames": 40, "of_frames": 5000,
                 "column": "PresentMode",
                 "values": [{"value": "Composed: Flip <b>", "frames": 40}]},
                {"check": "tearing_with_vrr", "frames": 7, "of_frames": 5000,
                 "column": "AllowsTearing, MsBetweenPresents", "values": []},
                {"check": "wrapped_interval", "frames": 1, "of_frames": 5000,
                 "column": "MsBetweenPresents", "values": []}]}
POWER = {"power_column": "NV Pwr(W) (API)", "power_frames": 5000, "avg_power_w": 212.46,
         "fps_per_watt": 0.5123, "span_s": 10.0,
         "temperature_c": {"column": "GPU0Temp(C)", "start": 58.0, "end": 79.5},
         "clock_mhz": {"column": "GPU0Clk(MHz)", "start": 2745.0, "end": 2610.0}}


@pytest.mark.parametrize(("lang", "words"), [
    ("en", ("Capture checks and power", "5,000", "shown torn", "FPS per watt")),
    ("ru", ("Проверки записи и\u00a0питание", "5\u00a0000", "показаны с\u00a0разрывом", "FPS на\u00a0ватт")),
    ("pt", ("Verificações da captura e\u00a0energia", "5.000", "exibidos com tearing",
            "FPS por watt")),
])
def test_certificate_shows_checks_and_power(lang: str, words: tuple[str, ...],
                                           snapshot: object) -> None:
    from bundlekit import TEST_SYSTEM
    from recordkit import complete_record

    from certgen.render.certificate import render_certificate_html

    timing = {"refresh_hz": 144.0, "vrr_min_hz": 48.0, "vrr_max_hz": 144.0,
              "presentation": "fullscreen"}
    runs = [{"measured": {**MEASURED, "validity": FINDINGS, "power_thermals": POWER}},
            {"measured": {**MEASURED, "validity": {"checked": ["wrapped_interval"],
                                                   "findings": []},
                          "power_thermals": {**POWER, "power_column": None, "power_frames": 0,
                                             "avg_power_w": None, "fps_per_watt": None,
                                             "clock_mhz": None}}},
            {"measured": {**MEASURED, "validity": {"checked": ["wrapped_interval"],
                                                   "findings": []}}}]
    record = complete_record({"runs": runs, "test_system": {**TEST_SYSTEM, "notes": None, "display_timing": timing}})
    html = render_certificate_html(record, lang, record_sha256="0" * 64)
    section = html.split('<section class="validity-diagnostics">', 1)[1].split("</section>")[0]
    for word in words:
        assert word in section, word
    assert "&lt;b&gt;" in section and "<b>" not in section  # capture text is never markup
    assert section == snapshot
    # Nothing found and no sensors anywhere: no section.
    quiet = complete_record({"runs": [runs[2]], "test_system": {**TEST_SYSTEM, "notes": None, "display_timing": timing}})
    assert 'class="validity-diagnostics"' not in render_certificate_html(
        quiet, lang, record_sha256="0" * 64)


def _hitchy_pm25(frames: int, seed: int) -> bytes:
    """A PresentMon 2.5 capture with work columns: steady 10 ms frames (CPU busy 6, wait 4, GPU
    busy 8) and a CPU-bound 40 ms hitch every 500 frames; 20 generated frames logged at 0 ms."""
    rows: list[dict[str, str]] = [{"MsBetweenPresents": "NA"}]
    for i in range(frames):
        t, cpu, wait, gpu = (40.0, 33.0, 7.0, 8.0) if i % 500 == 250 else (10.0, 6.0, 4.0, 8.0)
        row = {"MsBetweenPresents": f"{t:.4f}", "MsCPUBusy": f"{cpu:.4f}",
               "MsCPUWait": f"{wait:.4f}", "MsGPUBusy": f"{gpu:.4f}"}
        if i % 150 == 75:
            row.update({"MsBetweenPresents": "0.0000", "FrameType": "AMD AFMF"})
        rows.append(row)
    return pm25(rows)


@pytest.fixture(scope="module")
def checks_report(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A before/after report: before is a FrameView log with power and GPU sensors, after a
    PresentMon 2.5 capture with hitches and generated frames at 0 ms (one compare run)."""
    import contextlib

    from certgen.cli import main

    tmp = tmp_path_factory.mktemp("checks")
    before = tmp / "before.csv"
    rows = [{"MsBetweenPresents": f"{10.0 + (i % 7) * 0.1:.3f}", "NV Pwr(W) (API)": "180.0",
             "GPU0Temp(C)": str(60 + i // 1000), "GPU0Clk(MHz)": str(2700 - i // 100)}
            for i in range(3000)]
    before.write_bytes(_frameview(rows))
    after = tmp / "after.csv"
    after.write_bytes(_hitchy_pm25(3000, 1))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["compare", str(before), str(after), "--out", str(tmp / "r"),
                     "--lang", "en,ru,pt"])
    assert (code or 0) == 0, err.getvalue()
    return tmp / "r"


@pytest.mark.parametrize(("lang", "head"), [
    ("en", "Hitch causes, capture checks and power"),
    ("ru", "Причины фризов, проверки записи и\u00a0питание"),
    ("pt", "Causas dos engasgos, verificações da captura e\u00a0energia"),
])
def test_the_report_shows_hitches_checks_and_power(lang: str, head: str,
                                                    checks_report: pathlib.Path,
                                                    snapshot: object) -> None:
    html = (checks_report / f"report.{lang}.html").read_text(encoding="utf-8")
    assert head in html
    section = html.split(head, 1)[1].split("</table>", 1)[0]
    # The after side: 6 CPU-bound hitches (frames 250, 750, …), 20 generated frames at 0 ms.
    assert ">6 <span" in section
    assert section == snapshot


def test_the_report_has_no_such_section_for_plain_captures(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for name in ("before", "after"):
        path = tmp_path / f"{name}.csv"
        path.write_bytes(pm25([{"MsBetweenPresents": f"{10.0 + (i % 5) * 0.2:.4f}"}
                               for i in range(2000)]))
        paths.append(str(path))
    code, _, err = run_cli(["compare", *paths, "--out", str(tmp_path / "r")], capsys)
    assert code == 0, err
    html = (tmp_path / "r" / "report.en.html").read_text(encoding="utf-8")
    assert "Hitch causes, capture checks and power" not in html
