"""Every real capture the suite names (tests/realdata.py, read from ../shared/captures/real) reads,
with its figures pinned in a snapshot."""

from __future__ import annotations

import json

import numpy as np
import pytest
from capturekit import differing_fields
from realdata import FILES, REAL

from certgen.captures import presentmon
from certgen.captures.detect import read_capture_file
from certgen.commands.metrics import measure

# What `metrics --json` reports beside the figures: which file, group and column, and notes.
NOT_FIGURES = ("file", "group", "groups_left_out", "interval_column", "warnings",
               "animation_error")
"""Keys that name or qualify the figures (and animation error: PresentMon 2.1.0 writes an
AnimationError column that 2.0.0 does not)."""


def test_the_real_files_are_there() -> None:
    assert len(FILES) == 9


@pytest.mark.parametrize("name", FILES)
def test_real_capture_figures(name: str, snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole `certgen metrics --json` object of each real file, under a snapshot."""
    monkeypatch.chdir(REAL)
    assert json.dumps(measure([name], None, None), indent=2) == snapshot


@pytest.mark.parametrize("name", FILES)
def test_fast_and_slow_paths_agree(name: str) -> None:
    """polars and the csv module read the same frames, groups and counts from every file."""
    path = REAL / name
    fast, slow = presentmon.read_each_path(path.read_bytes(), name,
                                           capframex=name.startswith("CapFrameX"))
    assert fast is not None  # every real file stays on the fast path
    assert np.array_equal(fast.frame_times_ms, slow.frame_times_ms)
    assert differing_fields(fast, slow) == []


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
    assert capture.recorded.gpu == "NVIDIA GeForce RTX 2080 Ti"
    assert capture.recorded.game == "re2.exe"


def test_ocat_is_told_apart_and_gives_what_it_records() -> None:
    [capture] = read_capture_file(REAL / "OCAT-MetroExodus.exe-2019-02-20T101522.csv")
    assert capture.format == "ocat"
    assert capture.frame_times_ms.size == 2502
    assert capture.recorded.gpu == "GeForce RTX 2080 Ti"
    assert capture.recorded.cpu == "Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz"


def test_frame_times_are_read_only() -> None:
    [capture] = read_capture_file(REAL / "PresentMonTestOutputFilename.csv")
    with pytest.raises(ValueError):
        capture.frame_times_ms[0] = 1.0


def test_presentmon_2_0_0_reads_cpubusy_plus_cpuwait_as_2_1_0_reads_frametime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same trace (test_case_0) written by 2.0.0 (CPUBusy, CPUWait) and 2.1.0 (FrameTime)."""
    monkeypatch.chdir(REAL)
    [old] = measure(["PresentMon-2.0.0_test_case_0.csv"], None, None)
    [new] = measure(["PresentMon-2.1.0_test_case_0.csv"], None, None)
    assert old["interval_column"] == "CPUBusy + CPUWait (fallback)"
    assert new["interval_column"] == "FrameTime (fallback)"
    assert old["warnings"][0] == presentmon.SUM_WARNING
    assert new["warnings"][0] == presentmon.FALLBACK_WARNING
    figures = {k: v for k, v in old.items() if k not in NOT_FIGURES}
    assert figures == {k: v for k, v in new.items() if k not in NOT_FIGURES}
    assert figures["frames"] > 0
    # Not only the rounded figures: every frame time of every group is the same float.
    groups = {}
    for name in ("PresentMon-2.0.0_test_case_0.csv", "PresentMon-2.1.0_test_case_0.csv"):
        data = (REAL / name).read_bytes()
        layout = presentmon._layout(data[:65536], name, capframex=False)
        for slow in (True, False):
            rows = presentmon._slow(data, name, layout) if slow else presentmon._fast(data, layout)
            for (app, pid, swap), _ in rows.groups:
                key = (name, slow, app, pid, int(swap, 16))
                groups[key] = rows.select((app, pid, swap))[0].tolist()
    old_keys = [k for k in groups if k[0].startswith("PresentMon-2.0.0")]
    assert len(old_keys) == len(groups) // 2 == 20  # 10 groups, both paths
    for key in old_keys:
        assert groups[key] == groups[("PresentMon-2.1.0_test_case_0.csv", *key[1:])], key
