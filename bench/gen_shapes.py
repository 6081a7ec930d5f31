"""Seeded captures in the shapes labs write, for the benchmarks (1M game frames by default).

- `pm2`: PresentMon 2.x as it writes an all-process capture: a UTF-8 BOM, CRLF, its 32-column
  header (test_case_5's, ../shared/captures/real), dwm.exe rows interleaved with the game's at
  the display's 60 Hz, `NA` in MsBetweenPresents for the first present of each swap chain, `NA`
  in MsUntilDisplayed for frames never displayed and in the columns 2.x leaves empty.
- `frameview`: an NVIDIA FrameView log: its 110-column header (the one in
  tests/test_captures_frameview.py, from a real log), GPU and CPU names on every row, `NA` in the
  telemetry columns, numbers with a leading space, CRLF.

The game's frame times are bench/gen_presentmon.py's (the same seed gives the same intervals),
written with PresentMon 2.x's 4 decimals or FrameView's 3. Files go to bench/out/ (gitignored),
named by shape, size, seed and generator version, and are reused when they exist.

    python bench/gen_shapes.py pm2|frameview [--frames N] [--seed S]   # prints the path
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from gen_presentmon import DEFAULT_FRAMES, DEFAULT_SEED, OUT_DIR, frame_times_us

GENERATOR_VERSION = 4
"""2: the PresentMon 2.x shape carries latency and animation-error values (bench row f); 4: its
unread peer renames the columns of the capture-validity checks too."""
SHAPES = ("pm2", "pm2-unread", "frameview")

PM2_HEADER = (
    "Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,"
    "AllowsTearing,PresentMode,FrameType,TimeInQPC,MsBetweenSimulationStart,MsBetweenPresents,"
    "MsBetweenDisplayChange,MsInPresentAPI,MsRenderPresentLatency,MsUntilDisplayed,MsPCLatency,"
    "CPUStartQPC,MsBetweenAppStart,MsCPUBusy,MsCPUWait,MsGPULatency,MsGPUTime,MsGPUBusy,"
    "MsGPUWait,MsVideoBusy,MsAnimationError,AnimationTime,MsFlipDelay,MsAllInputToPhotonLatency,"
    "MsClickToPhotonLatency,MsInstrumentedLatency"
)
PM2_UNREAD_HEADER = (PM2_HEADER.replace("MsPCLatency", "XsPCLatency")
                     .replace("MsAnimationError", "XsAnimationError")
                     .replace("MsAllInputToPhotonLatency", "XsAllInputToPhotonLatency")
                     .replace("MsClickToPhotonLatency", "XsClickToPhotonLatency")
                    .replace("MsCPUBusy", "XsCPUBusy").replace("MsCPUWait", "XsCPUWait")
                    .replace("MsGPUBusy", "XsGPUBusy").replace("MsGPUTime", "XsGPUTime")
                    .replace("AllowsTearing", "XllowsTearing").replace("PresentMode", "XresentMode")
                    .replace("CPUStartQPC", "XPUStartQPC"))
"""The same header with every column certgen.metrics.measured and certgen.metrics.validity read renamed (same
length: latency, animation error, the CPU / GPU columns of the hitch causes, and the
presentation mode, tearing flag and CPU start of the validity checks): certgen reads the same
bytes but not those columns, the in-run peer of bench row f."""
PM2_GAME = "Game.exe,24892,0x2A70D2CAC00,DXGI,0,0,0,Composed: Flip,Application,"
PM2_DWM = "dwm.exe,2656,0x19D7EF5E390,DXGI,1,0,0,Hardware: Legacy Flip,Application,"
QPC_PER_MS = 10_000  # a 10 MHz QueryPerformanceCounter

_CORES = [f"CPUCoreUtil%[{i:2d}]" for i in range(64)]
FRAMEVIEW_HEADER = ",".join([
    "Application", "GPU", "CPU", "Resolution", "Runtime", "AllowsTearing", "ProcessID",
    "SwapChainAddress", "SyncInterval", "PresentFlags", "PresentMode", "Dropped",
    "TimeInSeconds", "MsBetweenPresents", "MsBetweenDisplayChange", "MsInPresentAPI",
    "MsRenderPresentLatency", "MsUntilDisplayed", "Render Queue Depth", "MsPCLatency",
    "GPU0Clk(MHz)", "GPU0MemClk(MHz)", "GPU0Util(%)", "GPU0Temp(C)", "GPU1Clk(MHz)",
    "GPU1MemClk(MHz)", "GPU1Util(%)", "GPU1Temp(C)", "PCAT Power Total(W)",
    "Perf/W Total(F/J) (PCAT)", "Perf/W Total(F/J) (API)", "Perf/W GPUOnly(F/J) (API)",
    "Perf/W Total-USBC(F/J) (API)", "GPUOnlyPwr(W) (API)", "NV-Total-USBCPwr(W) (API)",
    "NV Pwr(W) (API)", "AMDPwr(W) (API)", "CPUClk(MHz)", "CPUUtil(%)", "CPU Package Temp(C)",
    "CPU Package Power(W)", "CPU TDP (W)", *_CORES, "Current Battery Capacity(Wh)",
    "Total Battery Capacity(Wh)", "Battery Percentage", "Battery Drain Rate(W)",
])
FRAMEVIEW_PREFIX = (
    "Witcher3.exe,NVIDIA GeForce RTX 4060 Ti,AMD Ryzen 5 7600 6-Core Processor,2560x1440,DXGI,0,"
    "1832,0x000002900C071B50,1,0,Hardware: Independent Flip,"
)


def _fixed(values: np.ndarray, decimals: int) -> list[str]:
    """Non-negative integers in units of 10**-decimals -> fixed-point text."""
    whole, frac = np.divmod(values, 10**decimals)
    fmt = f"{{}}.{{:0{decimals}d}}"
    return [fmt.format(w, f) for w, f in zip(whole.tolist(), frac.tolist())]


def _pm2_lines(frames: int, seed: int) -> Iterator[str]:
    rng = np.random.default_rng(seed + 2)
    game_us = frame_times_us(frames, seed)
    game_at = np.cumsum(game_us)
    # dwm.exe presents every 16.667 ms for as long as the game runs.
    dwm_at = np.arange(16_667, int(game_at[-1]), 16_667, dtype=np.int64)
    at = np.concatenate([game_at, dwm_at])
    is_game = np.concatenate([np.ones(game_at.size, bool), np.zeros(dwm_at.size, bool)])
    order = np.argsort(at, kind="stable")
    interval = np.concatenate([game_us, np.diff(dwm_at, prepend=0)]) * 10  # 4 decimals
    in_present = rng.integers(1_000, 9_000, size=at.size)
    busy = rng.integers(20_000, 90_000, size=at.size)
    shown = rng.random(at.size) >= 0.01
    # What PresentMon 2.x measures beside the intervals (certgen.metrics.measured): PC latency on every
    # displayed frame, a signed animation error, input latencies on one frame in 50.
    latency = busy + in_present + rng.integers(50_000, 150_000, size=at.size)
    animation = rng.integers(-40_000, 40_000, size=at.size)
    clicked = rng.random(at.size) < 0.02
    texts = {
        "interval": _fixed(interval, 4),
        "in_present": _fixed(in_present, 4),
        "busy": _fixed(busy, 4),
        "until": _fixed(busy + in_present, 4),
        "latency": _fixed(latency, 4),
        "animation": [("-" if a < 0 else "") + t
                      for a, t in zip(animation.tolist(), _fixed(np.abs(animation), 4))],
    }
    first_game, first_dwm = True, True
    for i in order.tolist():
        game = bool(is_game[i])
        first = first_game if game else first_dwm
        if game:
            first_game = False
        else:
            first_dwm = False
        qpc = 2_466_961_604_351 + int(at[i]) * QPC_PER_MS // 1000
        gap = "NA" if first else texts["interval"][i]
        until = texts["until"][i] if shown[i] else "NA"
        latency_cell = texts["latency"][i] if shown[i] else "NA"
        animation_cell = texts["animation"][i] if shown[i] and not first else "NA"
        input_cell = texts["latency"][i] if shown[i] and clicked[i] else "NA"
        yield (
            (PM2_GAME if game else PM2_DWM)
            + f"{qpc},NA,{gap},{gap if shown[i] else 'NA'},{texts['in_present'][i]},"
            f"{texts['in_present'][i]},{until},{latency_cell},{qpc - 170_000},{gap},{texts['busy'][i]},"
            f"{texts['in_present'][i]},{texts['busy'][i]},{texts['busy'][i]},"
            f"{texts['busy'][i]},0.0000,0.0000,{animation_cell},NA,NA,{input_cell},{input_cell},NA"
        )


def _frameview_lines(frames: int, seed: int) -> Iterator[str]:
    rng = np.random.default_rng(seed + 3)
    interval_us = frame_times_us(frames, seed)
    at = _fixed(np.cumsum(interval_us) + 12_500_000, 6)
    interval = _fixed(interval_us, 3)
    dropped = rng.random(frames) < 0.002
    util = rng.integers(80, 100, size=frames).tolist()
    temp = rng.integers(55, 75, size=frames).tolist()
    cores = " 41,37,NA,45," * 15 + " 41,37,NA,45"
    for i in range(frames):
        gap = interval[i]
        yield (
            FRAMEVIEW_PREFIX
            + f"{int(dropped[i])},{at[i]},{gap},{'0.000' if dropped[i] else gap},0.412,7.530,"
            f"{'0.000' if dropped[i] else '24.512'},1,NA,2535,9001,{util[i]},{temp[i]},"
            "NA,NA,NA,NA,NA,NA,NA,NA,0.620,NA,NA,NA,NA,4750,38, 71,52.410, 65,"
            f"{cores},NA,NA,NA,NA"
        )


def generate(path: Path, shape: str, frames: int, seed: int) -> None:
    """Write the capture to `path` (atomically: a temporary file, then a rename)."""
    header, lines, bom = (
        (PM2_HEADER, _pm2_lines(frames, seed), "\ufeff") if shape == "pm2"
        else (PM2_UNREAD_HEADER, _pm2_lines(frames, seed), "\ufeff") if shape == "pm2-unread"
        else (FRAMEVIEW_HEADER, _frameview_lines(frames, seed), "")
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as out:
        out.write(bom + header + "\r\n")
        chunk: list[str] = []
        for line in lines:
            chunk.append(line + "\r\n")
            if len(chunk) == 65_536:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))
    os.replace(tmp, path)


def capture_path(
    shape: str, frames: int = DEFAULT_FRAMES, seed: int = DEFAULT_SEED, out_dir: Path = OUT_DIR
) -> Path:
    """The cached capture of `shape` for (frames, seed) in out_dir, generated on first use."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    path = out_dir / f"{shape}_n{frames}_seed{seed}_v{GENERATOR_VERSION}.csv"
    if not path.exists():
        generate(path, shape, frames, seed)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=SHAPES)
    parser.add_argument("--frames", type=int, default=DEFAULT_FRAMES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="folder for the CSV")
    args = parser.parse_args()
    print(capture_path(args.shape, args.frames, args.seed, args.out))


if __name__ == "__main__":
    main()
