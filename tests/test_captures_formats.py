"""Small hand-made captures of every format, with figures worked out by hand.

Capture A = 10, 10, 10, 20 ms: N = 4, sum 50 ms -> average 1000*4/50 = 80.0 FPS; k = 1 for both
lows -> 1000/20 = 50.0 and 50.0; g = 1 - 50/80 = 0.375, s = 1 - 50/50 = 0, score
100*(1 - 0.7*0.375) = 73.75. Capture B = 5, 5, 5, 5 ms: 200.0 / 200.0 / 200.0, g = s = 0,
score 100.0.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from certgen.captures.detect import detect_format, read_capture_file
from certgen.captures.model import Capture
from certgen.metrics.figures import compute_sop_metrics
from certgen.metrics.pagefigures import checked
from certgen.model import Weights

A = [10.0, 10.0, 10.0, 20.0]
B = [5.0, 5.0, 5.0, 5.0]
FIGURES_A = (4, 80.0, 50.0, 50.0, 0.375, 0.0, 73.75)
FIGURES_B = (4, 200.0, 200.0, 200.0, 0.0, 0.0, 100.0)


def figures(capture: Capture) -> tuple[object, ...]:
    m = compute_sop_metrics(capture.frame_times_ms, Weights(consistency_gap=0.7, stutter=0.3))
    return (m.frames, m.avg_fps, m.low_1pct_fps, m.low_0_1pct_fps, m.consistency_gap,
            m.stutter, m.fluidity_score)


def write(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def read_one(path: pathlib.Path, **kw: object) -> Capture:
    [capture] = read_capture_file(path, name=path.name, **kw)  # type: ignore[arg-type]
    return capture


# --- MangoHud ---------------------------------------------------------------------------------

def mangohud(frame_tokens: list[str], frame_ms: list[float], *, versioned: bool) -> str:
    info = "os,cpu,gpu,ram,kernel,driver,cpuscheduler\nArch,Ryzen 7 5800X,RX 6800,32,6.9,Mesa,\n"
    head = "v1\n0.7.2\n---------SYSTEM INFO---------\n" + info + "---------FRAME METRICS---------\n"
    text = (head if versioned else info) + "fps,frametime,cpu_load,gpu_load,elapsed\n"
    elapsed = np.cumsum([0.0] + frame_ms[1:]) * 1e6
    for token, ns in zip(frame_tokens, elapsed):
        text += f"60,{token},10,20,{int(ns)}\n"
    return text


@pytest.mark.parametrize("versioned", [False, True])
def test_mangohud_ms_log(tmp_path: pathlib.Path, versioned: bool) -> None:
    path = write(tmp_path, "mh.csv", mangohud(["10.000", "10.000", "10.000", "20.000"], A,
                                              versioned=versioned))
    capture = read_one(path)
    assert (capture.format, capture.interval_column, capture.warnings) == ("mangohud", "frametime", ())
    assert (capture.recorded.gpu, capture.recorded.cpu) == ("RX 6800", "Ryzen 7 5800X")
    assert figures(capture) == FIGURES_A


def test_mangohud_old_integer_microseconds_are_converted(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "mh.csv", mangohud(["10000", "10000", "10000", "20000"], A,
                                              versioned=False))
    capture = read_one(path)
    assert capture.frame_times_ms.tolist() == A
    assert capture.warnings == (
        "frametime is in integer microseconds (MangoHud 0.6.8 or older): converted to ms",)
    assert figures(capture) == FIGURES_A


# --- CapFrameX JSON ---------------------------------------------------------------------------

def test_capframex_json_with_two_runs_gives_two_captures(tmp_path: pathlib.Path) -> None:
    session = {
        "Hash": "abc",
        "Info": {"GPU": "RTX 4070", "Processor": "i5-13600K", "GameName": "Some Game"},
        "Runs": [
            {"CaptureData": {"TimeInSeconds": [0, 0.01, 0.02, 0.03], "MsBetweenPresents": A,
                             "Dropped": [True, False, False, False]}, "SensorData2": None},
            {"CaptureData": {"MsBetweenPresents": B}},
        ],
    }
    path = tmp_path / "session.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(session).encode())
    first, second = read_capture_file(path, name="session.json")
    assert (first.run_index, first.label, second.run_index, second.label) == (
        0, "run 1", 1, "run 2")
    assert (first.dropped_frames, second.dropped_frames) == (1, 0)
    assert first.recorded.game == "Some Game" and second.recorded.gpu == "RTX 4070"
    assert figures(first) == FIGURES_A
    assert figures(second) == FIGURES_B


def test_capframex_json_single_run_has_no_label(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "one.json", json.dumps({"Runs": [{"CaptureData": {
        "MsBetweenPresents": A}}]}))
    capture = read_one(path)
    assert (capture.format, capture.label, capture.run_index) == ("capframex-json", None, 0)


# --- Engine frame stats -----------------------------------------------------------------------

def line(tick: int, interval: float | None, kind: str = "full") -> str:
    return json.dumps(
        {"schema_version": 1, "tick": tick, "t_ms": 0.0, "sim_ms": 0.01, "submit_ms": 1.0,
         "gpu_ms": None, "gpu_tick": None, "present_interval_ms": interval, "kind": kind,
         "size": [160, 96], "device": "desktop", "hud_ms": None},
        separators=(",", ":"),
    ) + "\n"


def end(frames: int, dropped: int) -> str:
    return f'{{"schema_version":1,"end":true,"frames":{frames},"dropped":{dropped}}}\n'


# Tick 0: null interval (pipeline creation); tick 1: 2 ms, far under the median 10 ms (skipped
# until the interval settles); ticks 2-5: capture A.
WARM = line(0, None) + line(1, 2.0)
BODY = "".join(line(t, v) for t, v in zip(range(2, 6), A))
SKIP_NOTE = ("skipped 2 warm-up frames (the first frame, then until the interval settled within "
             "2x of the median)")


def test_frame_stats_complete_run(tmp_path: pathlib.Path) -> None:
    capture = read_one(write(tmp_path, "run.jsonl", WARM + BODY + end(6, 0)))
    assert capture.format == "frame-stats"
    assert (capture.incomplete, capture.incomplete_reason, capture.incomplete_detail) == (
        False, None, ())
    assert (capture.skipped_frames, capture.idle_frames) == (2, 0)
    assert capture.warnings == (SKIP_NOTE,)
    assert figures(capture) == FIGURES_A


NO_END = {"code": "no_end_line"}


@pytest.mark.parametrize(
    ("text", "reason", "detail"),
    [
        (WARM + BODY, "no end line (the process did not exit cleanly)", [NO_END]),
        (WARM + BODY + '{"schema_version":1,"tick":6,"t_m', ("no end line (the process did not "
         "exit cleanly)"), [NO_END]),
        (WARM + BODY + end(7, 1), "the end line reports 1 dropped lines",
         [{"code": "dropped_lines", "dropped": 1}]),
        (WARM + "".join(line(t, v) for t, v in zip([2, 3, 5, 6], A)) + end(7, 1),
         "1 lines missing in 1 tick gaps; the end line reports 1 dropped lines",
         [{"code": "tick_gaps", "missing_lines": 1, "gaps": 1},
          {"code": "dropped_lines", "dropped": 1}]),
        (WARM + BODY + end(9, 0),
         "the end line reports 9 frames (0 dropped) but the file holds 6 frame lines",
         [{"code": "frame_count_mismatch", "frames": 9, "dropped": 0, "lines": 6}]),
    ],
    ids=["no-end", "cut-short", "dropped", "tick-gap", "count-mismatch"],
)
def test_frame_stats_incomplete_runs(
    tmp_path: pathlib.Path, text: str, reason: str, detail: list[dict[str, object]]
) -> None:
    capture = read_one(write(tmp_path, "run.jsonl", text))
    assert (capture.incomplete, capture.incomplete_reason) == (True, reason)
    assert [r.model_dump() for r in capture.incomplete_detail] == detail
    assert figures(capture) == FIGURES_A


def test_frame_stats_idle_frames_are_counted_apart(tmp_path: pathlib.Path) -> None:
    body = line(2, 10.0) + line(3, 10.0, "idle") + line(4, 10.0, "idle") + line(5, 20.0)
    capture = read_one(write(tmp_path, "run.jsonl", WARM + body + end(6, 0)))
    assert capture.idle_frames == 2
    assert capture.warnings == (
        SKIP_NOTE, "2 idle frames (the last image presented again) are counted")
    assert figures(capture) == FIGURES_A


def test_frame_stats_later_slow_frames_are_not_warm_up(tmp_path: pathlib.Path) -> None:
    body = "".join(line(t, v) for t, v in zip(range(1, 6), [10.0, 10.0, 10.0, 40.0, 10.0]))
    capture = read_one(write(tmp_path, "run.jsonl", line(0, None) + body + end(6, 0)))
    assert capture.skipped_frames == 1
    assert capture.frame_times_ms.tolist() == [10.0, 10.0, 10.0, 40.0, 10.0]


# --- Benchmark-page CSV -----------------------------------------------------------------------

def test_bench_csv_gives_one_capture_per_side_and_checks_the_metrics(
    tmp_path: pathlib.Path,
) -> None:
    rows = ["side,kind,name,value"]
    rows += [f"before,frame,,{v}" for v in A]
    rows += ["before,metric,avg_fps,80.0", "before,metric,low_1pct_fps,50.0",
             "before,metric,frames,4", "before,metric,excluded_over_stall_ms,0"]
    rows += [f"after,frame,,{v}" for v in B]
    rows += ["after,metric,avg_fps,199.0", "after,metric,colour,3"]
    before, after = checked(read_capture_file(write(tmp_path, "report.csv",
                                                    "\n".join(rows) + "\n")))
    assert (before.label, after.label, before.run_index, after.run_index) == (
        "before", "after", 0, 1)
    assert before.warnings == ()
    assert after.warnings == (
        "side 'after': avg_fps is 199.0 in the file, recomputed 200.0",
        "side 'after': metric 'colour' is not recomputed",
    )
    assert figures(before) == FIGURES_A and figures(after) == FIGURES_B


# --- PresentMon family (hand-made) ------------------------------------------------------------

def test_presentmon_groups_na_and_dropped(tmp_path: pathlib.Path) -> None:
    rows = ["Application,ProcessID,SwapChainAddress,Dropped,MsBetweenPresents,MsUntilDisplayed"]
    rows += ["a.exe,1,0x1,0,7,NA"] * 3
    rows += ["b.exe,2,0x2,1,NA,NA", "b.exe,2,0x2,0,10,5", "b.exe,2,0x2,1,10,5",
             "b.exe,2,0x2,0,10,5", "b.exe,2,0x2,0,20,5"]
    path = write(tmp_path, "pm.csv", "\ufeff" + "\r\n".join(rows) + "\r\n")
    capture = read_one(path)
    assert capture.group is not None and capture.group.label() == "b.exe (pid 2, swap chain 0x2)"
    assert capture.group.frames == 5
    assert [g.label() for g in capture.groups_left_out] == ["a.exe (pid 1, swap chain 0x1)"]
    assert (capture.missing_intervals, capture.dropped_frames) == (1, 2)
    assert capture.warnings == ("1 rows with no interval (NA) are not frame times",)
    assert figures(capture) == FIGURES_A
    other = read_one(path, process="A.EXE")
    assert other.group is not None and other.group.application == "a.exe"
    assert other.frame_times_ms.tolist() == [7.0, 7.0, 7.0]


def test_presentmon_1_7_spelling_and_frameview_flavour(tmp_path: pathlib.Path) -> None:
    old = "Application,ProcessID,SwapChainAddress,Dropped,msBetweenPresents\n" + "".join(
        f"g.exe,1,0x1,0,{v}\n" for v in A)
    capture = read_one(write(tmp_path, "old.csv", old))
    assert (capture.format, capture.interval_column) == ("presentmon", "msBetweenPresents")
    assert figures(capture) == FIGURES_A
    fv = ("Application,GPU,CPU,Resolution,Runtime,ProcessID,SwapChainAddress,Dropped,"
          "MsBetweenPresents\n") + "".join(
        f"g.exe,RTX 4060 Ti,Ryzen 5 7600,1920x1080,DXGI,1,0x1,0, {v:.14f}\n" for v in A)
    capture = read_one(write(tmp_path, "fv.csv", fv))
    assert capture.format == "frameview"
    assert (capture.recorded.gpu, capture.recorded.cpu) == ("RTX 4060 Ti", "Ryzen 5 7600")
    assert figures(capture) == FIGURES_A


# --- Detection --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("first", "fmt"),
    [
        ('{"schema_version":1,"tick":0}', "frame-stats"),
        ('{"Hash": 1, "Runs": []}', "capframex-json"),
        ("//GameName=x", "capframex-csv"),
        ("side,kind,name,value", "bench-csv"),
        ("os,cpu,gpu,ram,kernel,driver,cpuscheduler", "mangohud"),
        ("v1", "mangohud"),
        ("Application,ProcessID,SwapChainAddress,MsBetweenPresents", "presentmon"),
        ("Application,ProcessID,Motherboard,OS,Processor,MsBetweenPresents", "ocat"),
        ("Application,GPU,CPU,Resolution,MsBetweenPresents", "frameview"),
        ("\ufeff\n\nCPUStartQPC,FrameTime", "presentmon"),
    ],
)
def test_detection_from_the_first_non_empty_line(first: str, fmt: str) -> None:
    assert detect_format(first.encode() + b"\n1,2\n", "x") == fmt


def test_detection_ignores_the_file_name(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "looks_like.json", "side,kind,name,value\nx,frame,,10\n")
    assert read_one(path).format == "bench-csv"
