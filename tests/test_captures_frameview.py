"""FrameView logs in the tool's exact layout: its ~100-column header, `NA` cells, numbers with a
leading space, GPU/CPU on every row, and `Error` in `Dropped` for a frame whose present failed.

No licensed real FrameView log exists for the tests (../shared/captures/real/SOURCES.md), so the
files are built here. The header is FrameView's own, as a real log writes it (a Witcher 3 log
published with Pavelioso/Frameviewer, assets/witcher_3.csv; 110 columns on that machine: the
telemetry tail varies with the GPU and CPU). The rows are made up in the same token style.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from capturekit import differing_fields

from certgen.captures import presentmon
from certgen.captures.detect import read_capture
from certgen.captures.model import Capture
from certgen.metrics.figures import compute_sop_metrics
from certgen.model import RECORDED_MAX, Recorded, Weights

CORES = [f"CPUCoreUtil%[{i:2d}]" for i in range(64)]
HEADER = [
    "Application", "GPU", "CPU", "Resolution", "Runtime", "AllowsTearing", "ProcessID",
    "SwapChainAddress", "SyncInterval", "PresentFlags", "PresentMode", "Dropped",
    "TimeInSeconds", "MsBetweenPresents", "MsBetweenDisplayChange", "MsInPresentAPI",
    "MsRenderPresentLatency", "MsUntilDisplayed", "Render Queue Depth", "MsPCLatency",
    "GPU0Clk(MHz)", "GPU0MemClk(MHz)", "GPU0Util(%)", "GPU0Temp(C)", "GPU1Clk(MHz)",
    "GPU1MemClk(MHz)", "GPU1Util(%)", "GPU1Temp(C)", "PCAT Power Total(W)",
    "Perf/W Total(F/J) (PCAT)", "Perf/W Total(F/J) (API)", "Perf/W GPUOnly(F/J) (API)",
    "Perf/W Total-USBC(F/J) (API)", "GPUOnlyPwr(W) (API)", "NV-Total-USBCPwr(W) (API)",
    "NV Pwr(W) (API)", "AMDPwr(W) (API)", "CPUClk(MHz)", "CPUUtil(%)", "CPU Package Temp(C)",
    "CPU Package Power(W)", "CPU TDP (W)", *CORES, "Current Battery Capacity(Wh)",
    "Total Battery Capacity(Wh)", "Battery Percentage", "Battery Drain Rate(W)",
]
GPU, CPU = "NVIDIA GeForce RTX 4060 Ti", "AMD Ryzen 5 7600 6-Core Processor"

# (Dropped token, MsBetweenPresents): a steady run with two failed presents and one drop.
FRAMES = [("0", 16.667)] * 20 + [("Error", 33.334), ("0", 16.666), ("1", 16.668),
                                 ("Error", 16.667)] + [("0", 16.667)] * 20


def frameview_row(app: str, pid: int, swap: str, dropped: str, interval: float, t: float) -> str:
    displayed = "0.000" if dropped != "0" else "24.512"
    cells = [
        app, GPU, CPU, "2560x1440", "DXGI", "0", str(pid), swap, "1", "0",
        "Hardware: Independent Flip", dropped, f"{t:.6f}", f"{interval:.3f}",
        "0.000" if dropped != "0" else f"{interval:.3f}", "0.412", "7.530", displayed, "1",
        "NA", "2535", "9001", "97", "61", *["NA"] * 8, "0.620", "NA", "NA", "NA", "NA", "4750",
        "38", " 71", "52.410", " 65", *[" 41", "37", "NA", "45"] * 16, "NA", "NA", "NA", "NA",
    ]
    assert len(cells) == len(HEADER)
    return ",".join(cells)


def frameview_log(groups: list[tuple[str, int, str, list[tuple[str, float]]]]) -> bytes:
    """A FrameView log (CRLF, as FrameView writes on Windows): rows of the groups interleaved."""
    lines = [",".join(HEADER)]
    t = 12.5
    longest = max(len(frames) for *_, frames in groups)
    for i in range(longest):
        for app, pid, swap, frames in groups:
            if i < len(frames):
                t += frames[i][1] / 1000
                lines.append(frameview_row(app, pid, swap, frames[i][0], frames[i][1], t))
    return ("\r\n".join(lines) + "\r\n").encode()


def paths(data: bytes, name: str) -> dict[str, Capture | None]:
    """The capture each path reads (None where a path declines the file)."""
    fast, slow = presentmon.read_each_path(data, name)
    return {"polars": fast, "csv": slow}


def same(a: Capture, b: Capture) -> bool:
    return bool(np.array_equal(a.frame_times_ms, b.frame_times_ms)) and not differing_fields(a, b)


def test_the_header_is_frameviews_width() -> None:
    assert len(HEADER) == 110


def test_error_in_dropped_keeps_the_frame_and_counts_it() -> None:
    data = frameview_log([("Witcher3.exe", 1832, "0x000002900C071B50", FRAMES)])
    [capture] = read_capture(data, name="fv.csv")
    assert capture.format == "frameview"
    assert (capture.recorded.gpu, capture.recorded.cpu) == (GPU, CPU)
    assert capture.frame_times_ms.size == len(FRAMES) == 44
    assert capture.frame_times_ms.tolist() == [v for _, v in FRAMES]
    assert (capture.dropped_frames, capture.failed_presents) == (1, 2)
    assert capture.warnings == (
        "2 frames with Dropped=Error (present failed) are counted with their present interval",
    )
    # Dropped does not change the SOP figures: the same intervals all flagged 0 give the same.
    plain = frameview_log([("Witcher3.exe", 1832, "0x000002900C071B50",
                            [("0", v) for _, v in FRAMES])])
    [reference] = read_capture(plain, name="fv.csv")
    weights = Weights(consistency_gap=0.7, stutter=0.3)
    assert compute_sop_metrics(capture.frame_times_ms, weights) == compute_sop_metrics(
        reference.frame_times_ms, weights)


@pytest.mark.parametrize("groups", [1, 2], ids=["one process", "two processes"])
def test_every_path_reads_error_rows_alike(groups: int) -> None:
    made = [("Witcher3.exe", 1832, "0x000002900C071B50", FRAMES)]
    if groups == 2:
        made.append(("Discord.exe", 9120, "0x000001F4A2B3C4D0",
                     [("0", 8.0), ("Error", 8.1), ("0", 8.2)]))
    data = frameview_log(made)
    got = paths(data, "fv.csv")
    polars, slow = got["polars"], got["csv"]
    assert polars is not None and slow is not None and same(polars, slow)
    assert slow.failed_presents == 2 and slow.dropped_frames == 1


def test_a_presentmon_layout_with_error_rows_agrees_on_every_path(tmp_path: pathlib.Path) -> None:
    """polars and the csv module read the PresentMon 1.x layout with Error rows alike, and the
    same intervals flagged 0 give the same frame times."""
    header = ("Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,Dropped,"
              "TimeInSeconds,MsBetweenPresents,MsInPresentAPI\n")
    rows = "".join(f"Game.exe,7124,0x1D5E3F2A070,DXGI,0,0,{d},1.0,{v:.3f},0.2\n"
                   for d, v in FRAMES)
    data = (header + rows).encode()
    got = paths(data, "pm.csv")
    assert got["polars"] is not None and got["csv"] is not None
    assert same(got["polars"], got["csv"])
    assert got["csv"].failed_presents == 2
    plain = paths(data.replace(b",Error,", b",0,"), "pm.csv")
    assert plain["polars"] is not None and same(plain["polars"], plain["csv"])  # type: ignore[arg-type]
    assert np.array_equal(plain["polars"].frame_times_ms, got["csv"].frame_times_ms)


def test_other_tokens_in_dropped_are_still_refused() -> None:
    data = frameview_log([("Witcher3.exe", 1832, "0x1", [("0", 16.6), ("error", 16.6)])])
    with pytest.raises(Exception, match=r"^fv.csv:3: Dropped: expected 0 or 1, got 'error'$"):
        read_capture(data, name="fv.csv")


def test_the_gpu_cpu_resolution_and_runtime_columns_are_recorded_from_the_groups_first_row(
) -> None:
    """FrameView repeats GPU, CPU, Resolution and Runtime on every row; what is recorded is the
    read group's first row, on both paths, though another process's row comes first in the
    file (docs/spec/captures.md, What a capture records)."""
    data = frameview_log([("Discord.exe", 9120, "0x000001F4A2B3C4D0", [("0", 8.0)] * 3),
                          ("Witcher3.exe", 1832, "0x000002900C071B50", FRAMES)])
    data = b"\r\n".join(line.replace(b",2560x1440,DXGI,", b",1280x720,D3D9,")
                        if line.startswith(b"Discord.exe") else line for line in data.split(b"\r\n"))
    got = paths(data, "fv.csv")
    polars, slow = got["polars"], got["csv"]
    assert polars is not None and slow is not None and same(polars, slow)
    assert slow.group is not None and slow.group.application == "Witcher3.exe"
    assert slow.recorded == Recorded(gpu=GPU, cpu=CPU, resolution="2560x1440", runtime="DXGI",
                                     tool="NVIDIA FrameView")
    [discord] = read_capture(data, name="fv.csv", process="Discord.exe")
    assert (discord.recorded.resolution, discord.recorded.runtime) == ("1280x720", "D3D9")


def test_a_long_gpu_cell_is_cut_on_both_paths() -> None:
    data = frameview_log([("Witcher3.exe", 1832, "0x1", FRAMES)]).replace(
        GPU.encode(), b"G" * 5000)
    got = paths(data, "fv.csv")
    polars, slow = got["polars"], got["csv"]
    assert polars is not None and slow is not None and same(polars, slow)
    assert slow.recorded.gpu == "G" * (RECORDED_MAX - 1) + "…"
