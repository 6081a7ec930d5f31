"""Refresh cadence and hitch causes (certgen.metrics.measured; docs/spec/metrics.md, "Refresh cadence"
and "Hitch causes"): diagnostics, never graded.

Hand-computed values on files in PresentMon 2.5's exact layout (both read paths), the real gold
files against an independent computation here (the csv module's rows and numpy), card.yaml's
display_timing and the metrics options refused in one line, and the certificate section in
each language."""

from __future__ import annotations

import csv
import io
import json
import pathlib
from typing import Any

import numpy as np
import pytest
from bundlekit import card, run_cli, run_entry, write_card
from realdata import REAL
from test_measured import MEASURED, both_paths, pm25

from certgen.captures.detect import read_capture_file
from certgen.commands.metrics import measure
from certgen.metrics.diagnostics import stutter_events
from certgen.metrics.measured import hitch_causes_of, refresh_cadence_of
from certgen.model.measured import DisplayTiming

FIXED_100 = DisplayTiming(refresh_hz=100.0, vrr_min_hz=None, vrr_max_hz=None)
VRR_50_100 = DisplayTiming(refresh_hz=100.0, vrr_min_hz=50.0, vrr_max_hz=100.0)

# Display-change intervals 10, 20, 30, 10 and 5 ms (the fourth frame's present interval is 20 ms:
# 10 ms apart from its display change, more than half of a 10 ms refresh); a sixth frame was
# never displayed and the first row has no interval (not a frame).
CADENCE = [
    {"MsBetweenPresents": "NA", "MsBetweenDisplayChange": "99"},
    {"MsBetweenPresents": "10.0", "MsBetweenDisplayChange": "10.0"},
    {"MsBetweenPresents": "20.0", "MsBetweenDisplayChange": "20.0"},
    {"MsBetweenPresents": "30.0", "MsBetweenDisplayChange": "30.0"},
    {"MsBetweenPresents": "20.0", "MsBetweenDisplayChange": "10.0"},
    {"MsBetweenPresents": "5.0", "MsBetweenDisplayChange": "5.0"},
    {"MsBetweenPresents": "10.0", "MsBetweenDisplayChange": "NA", "MsUntilDisplayed": "NA"},
]


def test_fixed_refresh_by_hand() -> None:
    capture = both_paths(pm25(CADENCE), "cadence.csv")
    got = refresh_cadence_of(capture, FIXED_100)
    assert got is not None and got.frames == 5 and got.column == "MsBetweenDisplayChange"
    # 75 ms of display time: held for one refresh (under 15 ms) 10 + 10 + 5, two (15 to 25) 20,
    # three or more 30.
    assert got.held is not None and got.vrr_window is None
    assert got.held.one == pytest.approx(25 / 75)
    assert got.held.two == pytest.approx(20 / 75)
    assert got.held.three_or_more == pytest.approx(30 / 75)
    # Beyond one refresh: 10 + 20 ms in 75 ms of display time, per minute.
    assert got.beyond_refresh_ms_per_min == pytest.approx(30 / (75 / 60_000))
    # Present and display apart by more than 5 ms: the fourth frame only (20 vs 10).
    assert got.present_display_mismatch_share == pytest.approx(1 / 5)


def test_a_vrr_window_by_hand() -> None:
    capture = both_paths(pm25(CADENCE), "cadence.csv")
    got = refresh_cadence_of(capture, VRR_50_100)
    assert got is not None and got.held is None and got.vrr_window is not None
    # The window holds 10 to 20 ms: 10 + 20 + 10 inside, 30 below (a frame held past the
    # display's 50 Hz), 5 above (faster than 100 Hz).
    assert got.vrr_window.inside == pytest.approx(40 / 75)
    assert got.vrr_window.below == pytest.approx(30 / 75)
    assert got.vrr_window.above == pytest.approx(5 / 75)
    # Below the window: 30 - 20 ms, per minute of display time.
    assert got.beyond_refresh_ms_per_min == pytest.approx(10 / (75 / 60_000))
    assert (got.vrr_min_hz, got.vrr_max_hz, got.refresh_hz) == (50.0, 100.0, 100.0)


def test_without_a_declared_display_only_the_count_is_given() -> None:
    capture = both_paths(pm25(CADENCE), "cadence.csv")
    got = refresh_cadence_of(capture, None)
    assert got is not None and got.frames == 5
    assert all(value is None for key, value in got.model_dump().items()
               if key not in ("frames", "column"))


def test_without_the_column_it_is_not_measured() -> None:
    capture = read_capture_file(REAL / "PresentMon-2.1.0_test_case_0.csv")[0]
    assert capture.display_change_ms is None
    assert refresh_cadence_of(capture, FIXED_100) is None


def _independent_cadence(path: pathlib.Path, refresh_hz: float) -> dict[str, float]:
    """The fixed-refresh figures of the file's largest group, from the csv module's rows."""
    text = path.read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for row in rows:
        groups.setdefault((row["Application"], row["ProcessID"], row["SwapChainAddress"]),
                          []).append(row)
    game = max((g for g in groups.values() if g[0]["Application"] != "dwm.exe"), key=len)
    kept = [r for r in game if r["MsBetweenPresents"] != "NA"]
    d = np.array([float("nan") if r["MsBetweenDisplayChange"] == "NA"
                  else float(r["MsBetweenDisplayChange"]) for r in kept])
    t = np.array([float(r["MsBetweenPresents"]) for r in kept])
    shown = d > 0
    d, t = d[shown], t[shown]
    p = 1000.0 / refresh_hz
    return {"frames": d.size, "one": d[d < 1.5 * p].sum() / d.sum(),
            "three": d[d >= 2.5 * p].sum() / d.sum(),
            "beyond": np.clip(d - p, 0, None).sum() / (d.sum() / 60_000),
            "mismatch": np.mean(np.abs(t - d) > p / 2)}


@pytest.mark.parametrize("name", ["PresentMon-2.5_test_case_1.csv", "PresentMon-2.5_test_case_2.csv",
                                  "PresentMon-2.5_test_case_3.csv"])
@pytest.mark.parametrize("hz", [60.0, 144.0])
def test_real_gold_files_match_an_independent_computation(name: str, hz: float) -> None:
    capture = read_capture_file(REAL / name)[0]
    got = refresh_cadence_of(capture, DisplayTiming(refresh_hz=hz, vrr_min_hz=None,
                                                    vrr_max_hz=None))
    want = _independent_cadence(REAL / name, hz)
    assert got is not None and got.held is not None
    assert got.frames == want["frames"]
    assert got.held.one == pytest.approx(want["one"])
    assert got.held.three_or_more == pytest.approx(want["three"])
    assert got.beyond_refresh_ms_per_min == pytest.approx(want["beyond"])
    assert got.present_display_mismatch_share == pytest.approx(want["mismatch"])


def _hitchy(events: dict[int, dict[str, str]]) -> bytes:
    """200 frames of 10 ms (CPU busy 6, CPU wait 4, GPU busy 5), with the rows `events` gives."""
    rows = []
    for i in range(200):
        row = {"MsBetweenPresents": "10.0", "MsCPUBusy": "6.0", "MsCPUWait": "4.0",
               "MsGPUBusy": "5.0", "MsGPUTime": "5.5"}
        row.update(events.get(i, {}))
        rows.append(row)
    return pm25(rows)


HITCHES = {
    # A 40 ms frame (30 ms over its neighbours) whose CPU busy time rose by 30 ms: cpu.
    100: {"MsBetweenPresents": "40.0", "MsCPUBusy": "36.0"},
    # GPU busy up 30 ms, the CPU waiting on it: gpu.
    150: {"MsBetweenPresents": "40.0", "MsGPUBusy": "35.0", "MsCPUWait": "34.0"},
    # Only the CPU's wait rose: present_wait.
    50: {"MsBetweenPresents": "40.0", "MsCPUWait": "34.0"},
    # Each up 12 ms (40 % of 30): no column explains half of it: unknown.
    180: {"MsBetweenPresents": "40.0", "MsCPUBusy": "18.0", "MsGPUBusy": "17.0",
          "MsCPUWait": "16.0"},
    # CPU up 20 and GPU up 25 ms: both past half, the larger wins: gpu.
    20: {"MsBetweenPresents": "50.0", "MsCPUBusy": "26.0", "MsGPUBusy": "30.0"},
}


def test_hitch_causes_by_hand() -> None:
    capture = both_paths(_hitchy(HITCHES), "hitches.csv")
    got = hitch_causes_of(capture)
    assert got is not None and got.events == 5
    assert got.columns == {"cpu_busy": "MsCPUBusy", "cpu_wait": "MsCPUWait",
                           "gpu_busy": "MsGPUBusy"}  # GPU busy before GPU time
    ledger = {t.cause: (t.events, t.time_ms) for t in got.ledger}
    assert ledger == {"cpu": (1, 40.0), "gpu": (2, 90.0), "present_wait": (1, 40.0),
                      "unknown": (1, 40.0)}
    # Longest first, then in frame order; frame numbers are 1-based, times at the frame's end.
    assert [(e.frame, e.cause) for e in got.top] == [
        (21, "gpu"), (51, "present_wait"), (101, "cpu"), (151, "gpu"), (181, "unknown")]
    first = got.top[0]
    assert first.at_s == pytest.approx((20 * 10.0 + 50.0) / 1000)
    assert (first.frame_ms, first.surrounding_ms) == (50.0, 10.0)
    assert (first.cpu_busy_excess_ms, first.gpu_busy_excess_ms, first.wait_excess_ms) == (
        20.0, 25.0, 0.0)


def test_the_events_are_the_diagnostics_stutter_events() -> None:
    capture = both_paths(_hitchy(HITCHES), "hitches.csv")
    got = hitch_causes_of(capture)
    assert got is not None
    assert got.events == stutter_events(capture.frame_times_ms[capture.frame_times_ms > 0]).size


def test_gpu_time_stands_in_for_gpu_busy_and_na_is_no_value() -> None:
    data = _hitchy(HITCHES).decode("utf-8").replace(",MsGPUBusy,", ",XsGPUBusy,")
    got = hitch_causes_of(both_paths(data.encode("utf-8"), "gputime.csv"))
    assert got is not None and got.columns["gpu_busy"] == "MsGPUTime"
    # GPU time did not rise on any hitch here: frame 21 (CPU up 20 of 40) is now cpu, 151 is
    # present_wait (its CPU wait rose).
    causes = {e.frame: e.cause for e in got.top}
    assert causes[21] == "cpu" and causes[151] == "present_wait"
    # An NA busy cell on the hitch itself: that column says nothing there.
    na = _hitchy({**HITCHES, 100: {"MsBetweenPresents": "40.0", "MsCPUBusy": "NA"}})
    got = hitch_causes_of(both_paths(na, "na.csv"))
    assert got is not None
    event = next(e for e in got.top if e.frame == 101)
    assert event.cause == "unknown" and event.cpu_busy_excess_ms is None


def test_without_busy_columns_hitch_causes_are_not_measured() -> None:
    capture = read_capture_file(REAL / "PresentMonTestOutputFilename.csv")[0]
    assert hitch_causes_of(capture) is None


@pytest.mark.parametrize("name", ["PresentMon-2.5_test_case_3.csv", "test_case_5.csv",
                                  "PresentMon-2.0.0_test_case_0.csv", "test_case_5_v2.csv"])
def test_real_files_name_their_columns_and_count_their_events(name: str) -> None:
    [entry] = measure([str(REAL / name)], None, None)
    hitches = entry["hitch_causes"]
    assert hitches is not None
    assert hitches["events"] == entry["stutter_count"]
    assert sum(t["events"] for t in hitches["ledger"]) == hitches["events"]
    header = (REAL / name).read_text(encoding="utf-8-sig").splitlines()[0].split(",")
    assert set(hitches["columns"].values()) <= set(header)


def test_metrics_json_keys_sit_before_recorded() -> None:
    [entry] = measure([str(REAL / "PresentMon-2.5_test_case_2.csv")], None, None,
                      timing=FIXED_100)
    keys = list(entry)
    # issue 42 added `frame_generation` and `errata` before `recorded`; issue 39 added
    # `unusable_columns` after it, the last of the keys.
    assert keys[-10:] == ["latency", "animation_error", "refresh_cadence", "hitch_causes",
                          "validity", "power_thermals", "frame_generation", "errata", "recorded",
                          "unusable_columns"]
    assert entry["refresh_cadence"]["refresh_hz"] == 100.0


@pytest.mark.parametrize(("args", "message"), [
    (["--vrr", "48-144"], "--vrr needs --refresh-hz"),
    (["--refresh-hz", "144", "--vrr", "fast"], "expected MIN-MAX in Hz"),
    (["--refresh-hz", "144", "--vrr", "144-48"], "expected min_hz below max_hz"),
    (["--refresh-hz", "60", "--vrr", "48-144"], "expected vrr.max_hz at most refresh_hz"),
    (["--refresh-hz", "0"], "greater than 0"),
])
def test_metrics_display_options_are_checked(args: list[str], message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["metrics", str(REAL / "test_case_5.csv"), *args], capsys)
    assert code == 2 and out == "" and message in err and "Traceback" not in err


def test_metrics_vrr_option_gives_the_window(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["metrics", str(REAL / "test_case_5.csv"), "--json",
                              "--refresh-hz", "144", "--vrr", "48-144"], capsys)
    assert (code, err) == (0, "")
    cadence = json.loads(out)[0]["refresh_cadence"]
    assert (cadence["vrr_min_hz"], cadence["vrr_max_hz"]) == (48.0, 144.0)
    window = cadence["vrr_window"]
    assert window["inside"] + window["below"] + window["above"] == pytest.approx(1.0)


@pytest.mark.parametrize(("timing", "message"), [
    ({"refresh_hz": 144, "vrr": {"min_hz": 144, "max_hz": 48}}, "expected min_hz below max_hz"),
    ({"refresh_hz": 60, "vrr": {"min_hz": 48, "max_hz": 144}},
     "expected vrr.max_hz at most refresh_hz"),
    ({"refresh_hz": 144}, "display_timing.vrr"),
    ({"refresh_hz": -5, "vrr": "none"}, "display_timing.refresh_hz"),
    ({"refresh_hz": 144, "vrr": "yes"}, "display_timing.vrr"),
])
def test_card_display_timing_is_checked_in_one_line(
        tmp_path: pathlib.Path, timing: dict[str, Any], message: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from bundlekit import TEST_SYSTEM, frames_for, write_presentmon

    write_presentmon(tmp_path / "captures/run.csv", frames_for(100.0, 80.0, 70.0))
    data = card([run_entry("Game", capture="captures/run.csv")],
                test_system={**TEST_SYSTEM, "display_timing": timing})
    write_card(tmp_path, data)
    code, _, err = run_cli(["check", str(tmp_path)], capsys)
    assert code == 1 and "Traceback" not in err
    assert "card.yaml" in err and message in err, err


def test_the_record_keeps_the_declared_timing(tmp_path: pathlib.Path) -> None:
    from bundlekit import TEST_SYSTEM, frames_for, write_presentmon

    from certgen.pipeline import check_bundle
    from certgen.record import dump_record

    write_presentmon(tmp_path / "captures/run.csv", frames_for(100.0, 80.0, 70.0))
    data = card([run_entry("Game", capture="captures/run.csv")],
                test_system={**TEST_SYSTEM, "display_timing": {"refresh_hz": 144, "vrr": "none"}})
    write_card(tmp_path, data)
    saved = json.loads(dump_record(check_bundle(tmp_path).record))
    assert saved["test_system"]["display_timing"] == {"refresh_hz": 144.0, "vrr_min_hz": None,
                                                      "vrr_max_hz": None}
    # This capture has no display-change column: not measured, whatever the card declares.
    assert saved["runs"][0]["measured"]["refresh_cadence"] is None


CADENCE_FIXED = {"column": "MsBetweenDisplayChange", "frames": 3000, "refresh_hz": 144.0,
                 "vrr_min_hz": None, "vrr_max_hz": None,
                 "held": {"one": 0.912, "two": 0.071, "three_or_more": 0.017},
                 "vrr_window": None, "beyond_refresh_ms_per_min": 812.4,
                 "present_display_mismatch_share": 0.0123}
CADENCE_VRR = {**CADENCE_FIXED, "vrr_min_hz": 48.0, "vrr_max_hz": 144.0, "held": None,
               "vrr_window": {"inside": 0.95, "below": 0.04, "above": 0.01}}
LEDGER = {"events": 6, "columns": {"cpu_busy": "MsCPUBusy", "cpu_wait": "MsCPUWait",
                                   "gpu_busy": "MsGPUBusy"},
          "neighbours": 32, "share": 0.5,
          "ledger": [{"cause": "cpu", "events": 3, "time_ms": 140.0},
                     {"cause": "gpu", "events": 2, "time_ms": 90.0},
                     {"cause": "present_wait", "events": 0, "time_ms": 0.0},
                     {"cause": "unknown", "events": 1, "time_ms": 41.0}],
          "top": [{"frame": 1201, "at_s": 12.34, "frame_ms": 52.5, "surrounding_ms": 10.1,
                   "cause": "cpu", "cpu_busy_excess_ms": 38.0, "gpu_busy_excess_ms": 1.0,
                   "wait_excess_ms": 0.5}]}


@pytest.mark.parametrize(("lang", "title", "cause"), [
    ("en", "Refresh cadence and hitch causes", "CPU-bound 3"),
    ("ru", "Частота обновления и\u00a0причины фризов", "упор в\u00a0ЦП 3"),
    ("pt", "Cadência de atualização e\u00a0causas dos engasgos", "limitado pela CPU 3"),
])
def test_certificate_shows_cadence_and_hitch_causes(lang: str, title: str, cause: str,
                                                    snapshot: object) -> None:
    from recordkit import complete_record

    from certgen.render.certificate import render_certificate_html

    runs = [{"measured": {**MEASURED, "refresh_cadence": CADENCE_FIXED, "hitch_causes": LEDGER}},
            {"measured": {**MEASURED, "refresh_cadence": CADENCE_VRR, "hitch_causes": None}},
            {"measured": {**MEASURED, "refresh_cadence": {**CADENCE_FIXED, "refresh_hz": None,
                                                         "held": None,
                                                         "beyond_refresh_ms_per_min": None,
                                                         "present_display_mismatch_share": None},
                          "hitch_causes": {**LEDGER, "events": 0, "top": [], "ledger": [
                              {**t, "events": 0, "time_ms": 0.0} for t in LEDGER["ledger"]]}}}]
    html = render_certificate_html(complete_record({"runs": runs}), lang, record_sha256="0" * 64)
    section = html.split('<section class="cadence-diagnostics">', 1)[1].split("</section>")[0]
    assert title in section and cause in section
    assert section == snapshot
    for absent in ({}, {"measured": MEASURED}, {"measured": None}):
        html = render_certificate_html(complete_record({"runs": [absent]}), lang,
                                       record_sha256="0" * 64)
        assert 'class="cadence-diagnostics"' not in html
