"""Diagnostics never refuse a capture (issue 39, item 4).

A value a diagnostic column cannot hold (FrameView's 2⁶⁴ × 100 ns wrap-around, NaN or infinity
written as a number, beyond 10,000,000 either way) sets that column aside: its figures read "not
measured", with the count of frames and why (`unusable_columns` in `metrics --json` and the
record), and the SOP figures and every other diagnostic stand. Before, `MsPCLatency: frame 123:
1844674407371036.8 ms is outside the range certgen accepts` refused the whole log.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bundlekit import run_cli
from issuablekit import SAMPLE_LAB, html_only
from test_captures_frameview import FRAMES, HEADER, frameview_log
from test_measured import pm25

from certgen.captures.detect import read_capture
from certgen.errors import CaptureFormatError
from certgen.metrics.diagnostics import compute_metrics
from certgen.metrics.measured import measured_by
from certgen.model import Weights

WEIGHTS = Weights(consistency_gap=0.7, stutter=0.3)

# Wrap-around values as public FrameView logs hold them (about 1844674407370950 to
# 1844674407371037 ms), in MsPCLatency and MsBetweenDisplayChange.
WRAPS = ("1844674407371036.8", "1844674407370951.2", "1844674407370955.2", "1844674407370999.9",
         "1844674407370950.0", "1844674407371012.4", "1844674407370960.7", "1844674407371030.1",
         "1844674407370977.3", "1844674407371001.0")


def _with(data: bytes, cells: dict[str, dict[int, str]]) -> bytes:
    """`data` (a CSV, CRLF) with the given cells replaced: {column: {data row: text}}."""
    lines = data.decode("utf-8").split("\r\n")
    header = lines[0].lstrip("\ufeff").split(",")
    for column, rows in cells.items():
        at = header.index(column)
        for row, text in rows.items():
            parts = lines[1 + row].split(",")
            parts[at] = text
            lines[1 + row] = ",".join(parts)
    return "\r\n".join(lines).encode("utf-8")


def _frameview(latency: str = "12.5") -> bytes:
    """The FrameView test log with a PC latency on every frame (the fixture writes NA)."""
    base = frameview_log([("Game.exe", 7, "0x1", FRAMES)])
    return _with(base, {"MsPCLatency": dict.fromkeys(range(len(FRAMES)), latency)})


def _sop(capture: object) -> tuple[object, ...]:
    m = compute_metrics(capture.frame_times_ms, WEIGHTS, source="x")  # type: ignore[attr-defined]
    return (m.frames, m.avg_fps, m.low_1pct_fps, m.low_0_1pct_fps, m.consistency_gap,
            m.stutter, m.fluidity_score, m.p99_ms, m.stall_count, m.stutter_count)


def test_the_header_is_frameviews() -> None:
    assert "MsPCLatency" in HEADER and "MsBetweenDisplayChange" in HEADER


@pytest.mark.parametrize("log", range(10))
def test_ten_of_ten_frameview_logs_with_wrapped_latency_read(log: int) -> None:
    """Ten FrameView logs, each with MsPCLatency wrap-around values on other frames: every one
    reads, its SOP figures are those of the same log without them, and its latency is not
    measured, with the count of frames and why; power, temperature and clock still stand."""
    clean = _frameview()
    rows = {r: WRAPS[(log + r) % len(WRAPS)] for r in range(log, len(FRAMES), 3 + log)}
    data = _with(clean, {"MsPCLatency": rows})
    [capture] = read_capture(data, name=f"fv{log}.csv")
    [reference] = read_capture(clean, name="clean.csv")
    assert _sop(capture) == _sop(reference)
    [unusable] = capture.unusable_columns
    # A frame the display dropped has no latency (its cell is never read): not counted.
    shown = [r for r in rows if FRAMES[r][0] != "1"]
    assert (unusable.column, unusable.reason, unusable.frames, unusable.of_frames,
            unusable.first_frame) == ("MsPCLatency", "wrap_around", len(shown), len(FRAMES),
                                      min(shown) + 1)
    measured = measured_by(capture, None)
    assert measured.latency.pc_latency_ms is None  # not measured
    assert measured_by(reference, None).latency.pc_latency_ms is not None
    # The other diagnostics of the log stand, exactly as without the wrapped latency.
    assert measured.power_thermals == measured_by(reference, None).power_thermals
    assert measured.power_thermals is not None
    assert capture.display_change_ms is not None


def test_metrics_json_names_the_column_the_frames_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "fv.csv"
    path.write_bytes(_with(_frameview(), {"MsPCLatency": {122 % len(FRAMES): WRAPS[0],
                                                          30: WRAPS[1]}}))
    code, out, err = run_cli(["metrics", "--json", str(path)], capsys)
    assert (code, err) == (0, "")
    [entry] = json.loads(out)
    assert entry["latency"]["pc_latency_ms"] is None
    assert entry["unusable_columns"] == [{
        "column": "MsPCLatency", "reason": "wrap_around", "frames": 2, "of_frames": len(FRAMES),
        "first_frame": 31}]
    assert entry["avg_fps"] is not None and entry["power_thermals"] is not None
    code, out, err = run_cli(["metrics", str(path)], capsys)
    assert code == 0, err
    assert (f"diagnostic: MsPCLatency not measured: 2 of {len(FRAMES)} frames hold a value the "
            "column cannot hold (FrameView's 2^64 x 100 ns wrap-around; first at frame 31); the "
            "SOP figures and the other columns stand") in out


@pytest.mark.parametrize(("column", "cell", "reason"), [
    ("MsBetweenDisplayChange", WRAPS[0], "wrap_around"),
    ("MsBetweenDisplayChange", "nan", "not_finite"),
    ("MsBetweenDisplayChange", "1e300", "out_of_range"),
    ("MsPCLatency", "inf", "not_finite"),
    ("MsPCLatency", "-1e12", "out_of_range"),
    ("PCAT Power Total(W)", WRAPS[3], "wrap_around"),
    ("PCAT Power Total(W)", "NaN", "not_finite"),
    ("GPU0Temp(C)", "1e9", "out_of_range"),
    ("GPU0Clk(MHz)", "-inf", "not_finite"),
])
def test_every_diagnostic_column_of_frameview_is_set_aside_alone(
    column: str, cell: str, reason: str,
) -> None:
    clean = _frameview()
    [reference] = read_capture(clean, name="clean.csv")
    [capture] = read_capture(_with(clean, {column: {7: cell}}), name="fv.csv")
    assert _sop(capture) == _sop(reference)
    assert [(u.column, u.reason, u.frames, u.first_frame)
            for u in capture.unusable_columns] == [(column, reason, 1, 8)]
    kept = dict(capture.measured)
    assert column not in kept
    # Every other column is read as before.
    others = {c: v for c, v in reference.measured if c != column}
    assert sorted(kept) == sorted(others)
    assert all(np.array_equal(kept[c], others[c], equal_nan=True) for c in kept)
    if column == "MsBetweenDisplayChange":
        assert capture.display_change_ms is None
        assert measured_by(capture, None).refresh_cadence is None
    else:
        assert capture.display_change_ms is not None and reference.display_change_ms is not None
        assert np.array_equal(capture.display_change_ms, reference.display_change_ms,
                              equal_nan=True)


@pytest.mark.parametrize("column", ["MsAnimationError", "MsCPUBusy", "MsGPUBusy",
                                    "MsClickToPhotonLatency", "MsBetweenDisplayChange"])
def test_presentmon_2x_diagnostic_columns_likewise(column: str) -> None:
    rows = [{"MsBetweenPresents": f"{10 + i % 3}.0", "MsPCLatency": "20", "MsAnimationError": "0.5",
             "MsCPUBusy": "4", "MsGPUBusy": "6", "MsClickToPhotonLatency": "30"}
            for i in range(60)]
    clean = pm25(rows)
    [reference] = read_capture(clean, name="pm.csv")
    wrapped = [dict(r) for r in rows]
    wrapped[5][column] = WRAPS[2]
    [capture] = read_capture(pm25(wrapped), name="pm.csv")
    assert _sop(capture) == _sop(reference)
    assert [(u.column, u.reason) for u in capture.unusable_columns] == [(column, "wrap_around")]
    assert measured_by(capture, None).latency.pc_latency_ms == \
        measured_by(reference, None).latency.pc_latency_ms


def test_text_that_is_no_number_is_still_refused() -> None:
    """Only numbers the column cannot hold are set aside; a cell that is not a number at all is
    a malformed file, refused with its line as before."""
    with pytest.raises(CaptureFormatError, match="expected a number, got 'abc'"):
        read_capture(_with(_frameview(), {"MsPCLatency": {3: "abc"}}), name="fv.csv")


def test_the_record_and_the_certificate_say_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bundle of a FrameView log with wrapped latency builds; record.json carries
    `unusable_columns`, and each language's certificate names the column, the frames and why."""
    import yaml
    from issuablekit import real_card

    html_only(monkeypatch)
    long_frames = FRAMES * 60  # 2,640 frames, about 44 s: long enough to grade
    data = frameview_log([("Game.exe", 7, "0x1", long_frames)])
    data = _with(data, {"MsPCLatency": {r: WRAPS[r % 10] for r in range(0, len(long_frames), 9)}})
    bundle = tmp_path / "b"
    (bundle / "captures").mkdir(parents=True)
    (bundle / "captures" / "fv.csv").write_bytes(data)
    card = real_card(["fv.csv"], recorded={"gpu": "NVIDIA GeForce RTX 4060 Ti"})
    (bundle / "card.yaml").write_text(yaml.safe_dump(card, sort_keys=False), encoding="utf-8")
    code, _out, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--draft",
                               "--lab", str(SAMPLE_LAB)], capsys)
    assert code == 0, err
    folder = tmp_path / "out" / "LAB-2026-0001"
    record = json.loads((folder / "record.json").read_text("utf-8"))
    frames = len(long_frames)
    n = len([r for r in range(0, frames, 9) if long_frames[r][0] != "1"])  # dropped: no latency
    assert record["runs"][0]["capture"]["unusable_columns"] == [{
        "column": "MsPCLatency", "reason": "wrap_around", "frames": n, "of_frames": frames,
        "first_frame": 1}]
    assert record["runs"][0]["metrics"]["avg_fps"] is not None
    expected = {
        "en": f"MsPCLatency not measured: {n} of {frames:,} frames hold FrameView",
        "ru": "MsPCLatency не измерено:",
        "pt": "MsPCLatency não medido:",
    }
    for lang, words in expected.items():
        html = (folder / f"certificate.{lang}.html").read_text("utf-8")
        assert 'class="unusable-columns"' in html
        assert words in html.replace("\u00a0", " ").replace("&#39;", "'"), lang
