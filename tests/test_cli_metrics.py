"""`certgen metrics` output: the JSON contract (keys, order, one object per run) and the table."""

from __future__ import annotations

import json
import pathlib

import pytest
from bundlekit import run_cli
from realdata import REAL

from certgen.model import RunMetrics


def run_metrics_keys() -> list[str]:
    return list(RunMetrics.model_fields)


def test_json_keys_in_contract_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REAL)
    code, out, err = run_cli(["metrics", "--json", "test_case_5.csv", "test_case_5_v2.csv"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert [d["file"] for d in data] == ["test_case_5.csv", "test_case_5_v2.csv"]
    expected = ["file", "format", "group", "groups_left_out", "interval_column",
                *run_metrics_keys(), "incomplete", "incomplete_reason", "warnings",
                "frame_diagnostics", "latency", "animation_error", "refresh_cadence",
                "hitch_causes", "validity", "power_thermals", "frame_generation", "errata",
                "recorded", "unusable_columns"]
    assert all(list(d) == expected for d in data)
    for key in ("file", "format", "frames", "dropped_nonpositive", "avg_fps", "low_1pct_fps",
                "low_0_1pct_fps", "consistency_gap", "stutter", "fluidity_score", "p99_ms",
                "p99_9_ms", "stall_count", "stutter_count"):
        assert key in expected
    assert data[1]["interval_column"] == "FrameTime (fallback)"


RECORDED_KEYS = ["gpu", "driver", "os", "cpu", "ram", "motherboard", "resolution", "runtime",
                 "captured_at", "tool", "tool_version", "game"]
"""The pinned keys of `recorded` (issue 23), in their order."""


def test_recorded_carries_exactly_the_pinned_keys_in_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every object ends with `recorded`: the pinned keys in order, each the capture's text or
    null. The OCAT file records its system; PresentMon files record no system field."""
    monkeypatch.chdir(REAL)
    ocat = "OCAT-MetroExodus.exe-2019-02-20T101522.csv"
    code, out, err = run_cli(["metrics", "--json", ocat, "PresentMonTestOutputFilename.csv",
                              "CapFrameXFileWithHeader.csv"], capsys)
    assert (code, err) == (0, "")
    data = json.loads(out)
    # `recorded` is the last of the pinned keys; issue 39 added `unusable_columns` after it.
    assert all(list(d)[-2:] == ["recorded", "unusable_columns"]
               and list(d["recorded"]) == RECORDED_KEYS for d in data)
    assert all(v is None or (isinstance(v, str) and v == v.strip() and v)
               for d in data for v in d["recorded"].values())
    assert data[0]["recorded"] == {
        "gpu": "GeForce RTX 2080 Ti", "driver": "r418_77",
        "os": "Windows 10 Pro 1809 (OS Build 17763.1.amd64fre.rs5_release.180914-1434)",
        "cpu": "Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz", "ram": "32 GB DDR4 3200 MT/s",
        "motherboard": "Micro-Star International Co. Ltd. MPG Z390 GAMING PRO CARBON (MS-7B17)",
        "resolution": None, "runtime": "DXGI", "captured_at": None, "tool": "OCAT",
        "tool_version": None, "game": None}
    assert data[1]["recorded"] == {**dict.fromkeys(RECORDED_KEYS), "runtime": "DXGI"}
    assert data[2]["recorded"]["captured_at"] == "2019-03-30 12:01:36"
    code, table, _ = run_cli(["metrics", ocat], capsys)
    assert ("  - recorded by the capture: gpu GeForce RTX 2080 Ti; driver r418_77; os Windows 10 "
            "Pro 1809 (OS Build 17763.1.amd64fre.rs5_release.180914-1434); cpu Intel(R) Core(TM) "
            "i9-9900K CPU @ 3.60GHz; ram 32 GB DDR4 3200 MT/s; motherboard Micro-Star "
            "International Co. Ltd. MPG Z390 GAMING PRO CARBON (MS-7B17); runtime DXGI; tool "
            "OCAT\n") in table


def test_multi_run_files_give_one_object_per_run(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"Runs": [
        {"CaptureData": {"MsBetweenPresents": [10.0, 10.0, 10.0, 20.0]}},
        {"CaptureData": {"MsBetweenPresents": [5.0, 5.0, 5.0, 5.0]}},
    ]}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(["metrics", "--json", "s.json"], capsys)
    data = json.loads(out)
    assert code == 0
    assert [(d["file"], d["avg_fps"], d["fluidity_score"]) for d in data] == [
        ("s.json#run 1", 80.0, 73.75), ("s.json#run 2", 200.0, 100.0)]


def test_an_empty_run_inside_a_session_is_named(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"Runs": [
        {"CaptureData": {"MsBetweenPresents": [10.0]}},
        {"CaptureData": {"MsBetweenPresents": [0.0, -1.0]}},
    ]}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["metrics", "s.json"], capsys)
    assert (code, err) == (1, ("certgen: s.json#run 2: no frame with a positive frame "
                               "time (2 dropped as <= 0); the run must be captured again\n"))
    assert "s.json#run 1" in out and "s.json#run 2" not in out  # the scorable run is reported


def test_table_is_aligned_and_notes_what_qualifies_the_figures(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot
) -> None:
    monkeypatch.chdir(REAL)
    code, out, err = run_cli(["metrics", "test_case_5.csv", "test_case_5_v2.csv",
                          "PresentMonTestOutputFilename.csv"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert len({len(line) for line in lines[:2]}) == 1  # header and rule line up
    assert "groups left out: dwm.exe (pid 2656, swap chain 0x19D7EF5E390)" in out
    assert "too short: 258 frames (< 900), percentiles mean little" in out
    assert "interval FrameTime (fallback)" in out
    assert out == snapshot
