"""Every real capture the suite names (tests/realdata.py, read from ../shared/captures/real) reads,
with its figures pinned in a snapshot."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from realdata import FILES, REAL

from certgen.captures import presentmon
from certgen.captures.detect import read_capture_file
from certgen.commands.metrics import measure

# Newer files of the shared folder that read as they are: the fast and slow paths must agree on
# them too. They have no snapshot (snapshot names stay as they were). PresentMon 2.0.0's
# CPUBusy/CPUWait layout is refused today, so it is not here.
MORE = ("PresentMon-1.5_trivflip.csv", "PresentMon-2.1.0_test_case_0.csv")


def test_the_real_files_are_there() -> None:
    assert len(FILES) == 6


@pytest.mark.parametrize("name", FILES)
def test_real_capture_figures(name: str, snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole `certgen metrics --json` object of each real file, under a snapshot."""
    monkeypatch.chdir(REAL)
    assert json.dumps(measure([name], None, None), indent=2) == snapshot


@pytest.mark.parametrize("name", FILES + MORE)
def test_fast_and_slow_paths_agree(name: str) -> None:
    """polars and the csv module read the same frames, groups and counts from every file."""
    path = REAL / name
    data = path.read_bytes()
    head = data[:65536]
    layout = presentmon._layout(head, name, capframex=name.startswith("CapFrameX"))
    fast = presentmon._capture(presentmon._fast(data, layout), layout, name, None,
                               presentmon._hints(layout, head))
    slow = presentmon._capture(presentmon._slow(data, name, layout), layout, name, None,
                               presentmon._hints(layout, head))
    assert np.array_equal(fast.frame_times_ms, slow.frame_times_ms)
    fields = [f.name for f in dataclasses.fields(fast) if f.name != "frame_times_ms"]
    assert [getattr(fast, f) for f in fields] == [getattr(slow, f) for f in fields]


def test_test_case_5_uses_presentbench_main_swap_chain_and_names_the_rest() -> None:
    [capture] = read_capture_file(REAL / "test_case_5.csv", name="test_case_5.csv")
    assert capture.format == "presentmon"
    assert capture.interval_column == "MsBetweenPresents"
    assert capture.group is not None
    assert capture.group.label() == "PresentBench.exe (pid 24892, swap chain 0x2A70D2CAC00)"
    assert capture.frame_times_ms.size == capture.group.frames == 258
    assert [g.label() for g in capture.groups_left_out] == [
        "dwm.exe (pid 2656, swap chain 0x19D7EF5E390)",
        "dwm.exe (pid 2656, swap chain 0x19D7F1BA8F0)",
        "steamwebhelper.exe (pid 3980, swap chain 0x21C48E8A710)",
        "PresentBench.exe (pid 24892, swap chain 0x0)",
        "dwm.exe (pid 2656, swap chain 0x0)",
        "dwm.exe (pid 2656, swap chain 0x100000000)",
    ]
    # 2.x marks a frame that never reached the screen with NA display columns.
    assert capture.dropped_frames == 84
    assert capture.missing_intervals == 0


def test_process_option_picks_a_group_by_application() -> None:
    [capture] = read_capture_file(REAL / "test_case_5.csv", process="steamwebhelper.exe")
    assert capture.group is not None and capture.group.application == "steamwebhelper.exe"
    assert capture.frame_times_ms.size == 24
    assert len(capture.groups_left_out) == 6


def test_test_case_5_v1_uses_the_lowercase_column_and_dropped_flags() -> None:
    [capture] = read_capture_file(REAL / "test_case_5_v1.csv")
    assert capture.interval_column == "msBetweenPresents"
    assert capture.group is not None and capture.group.application == "PresentBench.exe"
    assert capture.dropped_frames == 84


def test_test_case_5_v2_reads_through_the_labelled_frametime_fallback() -> None:
    [capture] = read_capture_file(REAL / "test_case_5_v2.csv")
    assert capture.interval_column == "FrameTime (fallback)"
    assert capture.warnings == (presentmon.FALLBACK_WARNING,)
    assert capture.group is not None and capture.group.application == "PresentBench.exe"


def test_capframex_csv_counts_4236_dropped_frames_and_keeps_them() -> None:
    [capture] = read_capture_file(REAL / "CapFrameXFileWithHeader.csv")
    assert capture.format == "capframex-csv"
    assert capture.frame_times_ms.size == 7285
    assert capture.dropped_frames == 4236
    assert capture.hints.gpu == "NVIDIA GeForce RTX 2080 Ti"
    assert capture.hints.game == "re2.exe"


def test_ocat_is_told_apart_and_gives_system_hints() -> None:
    [capture] = read_capture_file(REAL / "OCAT-MetroExodus.exe-2019-02-20T101522.csv")
    assert capture.format == "ocat"
    assert capture.frame_times_ms.size == 2502
    assert capture.hints.gpu == "GeForce RTX 2080 Ti"
    assert capture.hints.cpu == "Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz"


def test_frame_times_are_read_only() -> None:
    [capture] = read_capture_file(REAL / "PresentMonTestOutputFilename.csv")
    with pytest.raises(ValueError):
        capture.frame_times_ms[0] = 1.0
