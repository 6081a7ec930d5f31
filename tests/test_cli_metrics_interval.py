"""`certgen metrics --interval`: each capture's measurement intervals under the pinned
`interval` key (docs/spec/uncertainty.md), and nothing else of the output changed."""

from __future__ import annotations

import hashlib
import json
import pathlib

import numpy as np
import pytest
from bundlekit import run_cli
from realdata import REAL

from certgen.model.uncertainty import FIGURES

PINNED = ["level", "method", "resamples", "block_frames", *FIGURES, "not_estimated"]


def _long_csv(tmp_path: pathlib.Path, frames: int = 30_000) -> pathlib.Path:
    rng = np.random.default_rng(3)
    times = np.exp(rng.normal(2.0, 0.15, frames))
    path = tmp_path / "long.csv"
    path.write_text("MsBetweenPresents\n" + "\n".join(f"{t:.4f}" for t in times) + "\n")
    return path


def _metrics(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    code, out, err = run_cli(["metrics", "--json", *args], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert isinstance(data, list)
    return data


def test_the_interval_key_has_the_pinned_shape_and_the_rest_is_unchanged(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_long_csv(tmp_path))
    [plain] = _metrics(capsys, path)
    [with_interval] = _metrics(capsys, path, "--interval")
    interval = with_interval.pop("interval")
    stability = with_interval.pop("stability")
    assert with_interval == plain and "interval" not in plain and "stability" not in plain
    assert isinstance(stability, dict)
    assert list(stability) == ["block_s", "blocks", "worst_fps", "best_fps", "ratio",
                               "reference", "not_estimated"]
    assert stability["blocks"] == 3 and stability["ratio"] is not None  # 30,000 × ~7.5 ms
    assert isinstance(interval, dict)
    assert list(interval) == PINNED
    assert interval["level"] == 0.95 and interval["resamples"] == 10_000
    # 30,000 frames: every figure but the average and the stutter has a within-capture interval
    # (issue 41's study covers them from 20,000), and those two say why they have none.
    assert interval["method"] == "circular block bootstrap, studentized (within-capture)"
    low, high = interval["low_1pct_fps"]
    assert low <= plain["low_1pct_fps"] <= high
    assert set(interval["not_estimated"]) == {"avg_fps", "stutter"}
    for figure in FIGURES:
        assert (interval[figure] is None) == (figure in interval["not_estimated"])


def test_the_same_capture_gives_the_same_bytes(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(_long_csv(tmp_path))
    first = run_cli(["metrics", "--json", "--interval", path], capsys)
    assert first == run_cli(["metrics", "--json", "--interval", path], capsys)


def test_a_real_capture_too_short_for_any_interval_says_why(
    capsys: pytest.CaptureFixture[str]
) -> None:
    [entry] = _metrics(capsys, str(REAL / "CapFrameXFileWithHeader.csv"), "--interval")
    interval = entry["interval"]
    assert isinstance(interval, dict)
    assert interval["block_frames"] is None
    assert all(interval[figure] is None for figure in FIGURES)
    assert "7,285 frames" in interval["not_estimated"]["low_1pct_fps"]


def test_the_table_notes_the_intervals(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(["metrics", "--interval", str(_long_csv(tmp_path))], capsys)
    assert code == 0
    assert "measurement interval (95%, within-capture, not graded): 1% low " in out
    assert "; gap 0." in out and "; score " in out
    assert "not estimated (avg FPS): not printed from one capture: scene drift" in out
    assert "sustained stability (not graded, 60-second blocks): worst " in out


def test_the_api_gives_what_the_command_prints(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from certgen import api

    path = _long_csv(tmp_path)
    [entry] = _metrics(capsys, str(path), "--interval")
    [capture] = api.read_capture(path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert api.compute_intervals(capture, capture_sha256=sha).model_dump(mode="json") == \
        entry["interval"]
    assert api.compute_stability(capture).model_dump(mode="json") == entry["stability"]
