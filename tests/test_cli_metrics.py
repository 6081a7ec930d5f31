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
                "frame_diagnostics"]
    assert all(list(d) == expected for d in data)
    for key in ("file", "format", "frames", "dropped_nonpositive", "avg_fps", "low_1pct_fps",
                "low_0_1pct_fps", "consistency_gap", "stutter", "fluidity_score", "p99_ms",
                "p99_9_ms", "stall_count", "stutter_count"):
        assert key in expected
    assert data[1]["interval_column"] == "FrameTime (fallback)"


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
