"""Frame-stats GPU time: joined to frames by gpu_tick (never by line), absent stays absent."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import lagged_gpu_run

from certgen.captures.detect import read_capture_file
from certgen.captures.framestats import read_frame_stats
from certgen.cli import main
from certgen.errors import CaptureFormatError

END = '{{"schema_version":1,"end":true,"frames":{n},"dropped":0}}\n'


def line(tick: int, gpu: tuple[int, float] | None, interval: float | None = 10.0) -> str:
    gpu_tick, gpu_ms = gpu if gpu is not None else (None, None)
    return json.dumps(
        {"schema_version": 1, "tick": tick, "t_ms": 0.0, "sim_ms": None, "submit_ms": 1.0,
         "gpu_ms": gpu_ms, "gpu_tick": gpu_tick,
         "present_interval_ms": None if tick == 0 else interval, "kind": "full",
         "size": [160, 96], "device": "desktop", "hud_ms": None},
        separators=(",", ":"),
    ) + "\n"


# Each line's GPU time and the tick it measured: lags of 1 and 2, own tick, nulls; ticks 3, 5
# and 7 never get a time. Tick 0 is the skipped first frame (its time, 5.0, joins no frame).
LAGGED = [None, (0, 5.0), (1, 1.0), None, (2, 2.0), (4, 4.0), (6, 6.0), None]


def write(tmp_path: pathlib.Path, lines: list[tuple[int, float] | None]) -> pathlib.Path:
    path = tmp_path / "run.jsonl"
    text = "".join(line(t, g) for t, g in enumerate(lines)) + END.format(n=len(lines))
    path.write_text(text, encoding="utf-8")
    return path


def test_gpu_time_joins_by_gpu_tick_not_by_line(tmp_path: pathlib.Path) -> None:
    [capture] = read_capture_file(write(tmp_path, LAGGED))
    assert capture.frame_times_ms.tolist() == [10.0] * 7  # ticks 1..7
    assert capture.gpu_ms is not None
    # By line it would be 5, 1, -, 2, 4, 6, -; by tick: tick 1 -> 1.0, tick 2 -> 2.0, ...
    got = [None if math.isnan(v) else v for v in capture.gpu_ms.tolist()]
    assert got == [1.0, 2.0, None, 4.0, None, 6.0, None]
    assert capture.gpu_summary() == (4, 3.0)
    assert not capture.gpu_ms.flags.writeable


def test_no_gpu_time_at_all_is_absent_not_zero(tmp_path: pathlib.Path) -> None:
    capture = read_frame_stats(write(tmp_path, [None] * 5).read_bytes(), "run.jsonl")
    assert capture.gpu_ms is not None and bool(np.isnan(capture.gpu_ms).all())
    assert capture.gpu_summary() == (0, None)


def test_other_formats_carry_no_gpu_time(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "pm.csv"
    path.write_text("Application,ProcessID,SwapChainAddress,MsBetweenPresents\na,1,0x1,10\n",
                    encoding="utf-8")
    [capture] = read_capture_file(path)
    assert (capture.gpu_ms, capture.gpu_summary()) == (None, None)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([None, (2, 1.0)],
         "run.jsonl:2: gpu_tick: gpu_tick 2 is ahead of the line's tick 1 (expected the tick it "
         "measured, at or before its line)"),
        ([None, (0, 1.0), (0, 2.0)],
         "run.jsonl:3: gpu_tick: tick 0 already has a GPU time (line 2); each GPU time is "
         "written once"),
        ([None, (1, -1.0)],
         "run.jsonl:2: gpu_ms: expected a finite number >= 0 or null, got -1.0"),
        ([None, (1, None)],  # type: ignore[list-item]
         "run.jsonl:2: gpu_ms is null but gpu_tick is 1 (expected both null or both set)"),
    ],
    ids=["ahead", "twice", "negative", "half-null"],
)
def test_malformed_gpu_times_are_refused(
    tmp_path: pathlib.Path, lines: list[tuple[int, float] | None], message: str
) -> None:
    with pytest.raises(CaptureFormatError) as info:
        read_frame_stats(write(tmp_path, lines).read_bytes(), "run.jsonl")
    assert str(info.value) == message


@settings(max_examples=60, deadline=None)
@given(lagged_gpu_run())
def test_property_each_frame_gets_exactly_its_own_ticks_time(
    tmp_path_factory: pytest.TempPathFactory,
    run: tuple[list[tuple[int, float] | None], dict[int, float]],
) -> None:
    lines, written = run
    capture = read_frame_stats(write(tmp_path_factory.mktemp("gpu"), lines).read_bytes(), "run.jsonl")
    assert capture.gpu_ms is not None
    # All intervals are equal, so only the first frame (tick 0) is skipped.
    expected = [written.get(t) for t in range(1, len(lines))]
    got = [None if math.isnan(v) else v for v in capture.gpu_ms.tolist()]
    assert got == expected


def test_metrics_notes_say_how_many_frames_have_a_gpu_time(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, LAGGED)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["metrics", "--json", "run.jsonl"])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    assert (info.value.code, err) == (0, "")
    [entry] = json.loads(out)
    assert entry["warnings"][-1] == (
        "GPU time (gpu_ms joined to frames by gpu_tick) resolved for 4 of 7 frames, "
        "median 3.000 ms")
