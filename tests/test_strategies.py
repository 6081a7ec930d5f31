"""One property per family of tests/strategies.py, each through a public seam: generated frame
times obey the metrics theorems, generated capture texts read back (read_capture_file) to exactly
the frame times they were made from, and generated cards validate and survive a YAML round trip.

These keep the shared strategies honest: a strategy that drifted away from what the readers or
the card schema accept would fail here, not silently narrow the tests that use it.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from strategies import (
    capframex_json_texts,
    card_files,
    cards,
    fleet_rows,
    frame_time_arrays,
    labs,
    mangohud_texts,
    presentmon_texts,
)

from certgen.captures.detect import read_capture_file
from certgen.inputs.bundle import parse_card_yaml, validate_card
from certgen.metrics.figures import compute_sop_metrics
from certgen.model import Weights

IO = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _write(tmp: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))  # bytes: keep CRLF and the BOM exactly as drawn
    return path


@settings(max_examples=60, deadline=None)
@given(frame_time_arrays())
def test_generated_frame_times_obey_the_metrics_theorems(frames: np.ndarray) -> None:
    m = compute_sop_metrics(frames, Weights(consistency_gap=0.7, stutter=0.3))
    assert m.frames == frames.size and m.dropped_nonpositive == 0
    assert m.avg_fps is not None and m.low_1pct_fps is not None and m.low_0_1pct_fps is not None
    assert m.low_0_1pct_fps <= m.low_1pct_fps <= m.avg_fps


@IO
@given(presentmon_texts())
def test_a_generated_presentmon_text_reads_back_its_main_group(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[str, np.ndarray]
) -> None:
    text, frames = drawn
    path = _write(tmp_path_factory.mktemp("pm"), "capture.csv", text)
    [capture] = read_capture_file(path, name="capture.csv")
    assert capture.format == "presentmon"
    assert capture.group is not None and capture.group.application == "Game.exe"
    assert capture.frame_times_ms.tolist() == frames.tolist()


@IO
@given(mangohud_texts())
def test_a_generated_mangohud_log_reads_back_its_frame_times(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[str, np.ndarray]
) -> None:
    text, frames = drawn
    path = _write(tmp_path_factory.mktemp("mh"), "mangohud.csv", text)
    [capture] = read_capture_file(path, name="mangohud.csv")
    assert (capture.format, capture.warnings) == ("mangohud", ())
    assert capture.frame_times_ms.tolist() == frames.tolist()


@IO
@given(capframex_json_texts())
def test_a_generated_capframex_session_reads_back_each_run(
    tmp_path_factory: pytest.TempPathFactory, drawn: tuple[str, list[np.ndarray]]
) -> None:
    text, runs = drawn
    path = _write(tmp_path_factory.mktemp("cx"), "session.json", text)
    captures = read_capture_file(path, name="session.json")
    assert [c.format for c in captures] == ["capframex-json"] * len(runs)
    assert [c.frame_times_ms.tolist() for c in captures] == [r.tolist() for r in runs]


@IO
@given(cards(), presentmon_texts())
def test_a_generated_card_validates_and_round_trips(
    tmp_path_factory: pytest.TempPathFactory, card: dict[str, Any], capture: tuple[str, np.ndarray]
) -> None:
    root = tmp_path_factory.mktemp("bundle")
    for name in card_files(card):
        _write(root, name, capture[0])
    model = validate_card(card, root=root)
    text = yaml.safe_dump(card, sort_keys=False, allow_unicode=True)
    data, duplicates = parse_card_yaml(text)
    assert duplicates == []
    assert validate_card(data, root=root) == model
    assert [r.capture for r in model.runs] == [r.get("capture") for r in card["runs"]]


@given(labs())
def test_a_generated_lab_parses(lab: dict[str, Any]) -> None:
    from certgen.inputs.lab import parse_lab

    text = yaml.safe_dump(lab, sort_keys=False, allow_unicode=True).encode("utf-8")
    assert parse_lab(text).lab.validity_months == lab["validity_months"]


@given(fleet_rows())
def test_a_generated_fleet_row_is_accepted(row: dict[str, Any]) -> None:
    from certgen.fleet import JSONL_FIELDS, parse_line

    assert list(row) == list(JSONL_FIELDS)
    parsed, errors = parse_line(row, "f:1")
    assert errors == [] and parsed is not None and parsed.as_json() == row
