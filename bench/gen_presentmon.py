"""A deterministic, seeded PresentMon 1.x CSV for the benchmarks (1M frames by default, ~74 MB).

The frame times look like a real game run: scenes of a few thousand frames at 60-144 FPS,
a slow drift, per-frame jitter, occasional spikes of 2-4x, a few stalls of 0.2-0.8 s and rare
dropped frames. Every figure is drawn from one seeded numpy Generator and written from integer
microseconds, so the same seed and size always give the same bytes (on any platform).

The columns are PresentMon 1.x's as it writes them without display tracking
(`-no_track_display`: no AllowsTearing, PresentMode, MsBetweenDisplayChange,
MsUntilRenderComplete, MsUntilDisplayed), with its decimals: 6 for TimeInSeconds, 3 for the
milliseconds. That keeps 1M frames near the ~78 MB of the benchmark's brief (the full 1.x set
with display tracking would write ~122 MB for the same frames).

The file goes to bench/out/ (gitignored) and is reused when it already exists: its name carries
the seed, the size and the generator version. Lines end in CRLF, as PresentMon writes them.

    python bench/gen_presentmon.py [--frames N] [--seed S]   # prints the path
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

OUT_DIR = Path(__file__).resolve().parent / "out"
GENERATOR_VERSION = 2
DEFAULT_FRAMES = 1_000_000
DEFAULT_SEED = 20240601

HEADER = (
    "Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,Dropped,"
    "TimeInSeconds,MsBetweenPresents,MsInPresentAPI"
)
# One process, one swap chain: the peer in bench/run.py reads the column without grouping.
ROW_PREFIX = "Benchmark.exe,7124,0x000001D5E3F2A070,DXGI,0,0,"


def frame_times_us(frames: int, seed: int) -> np.ndarray:
    """Present-to-present intervals in integer microseconds (>= 1)."""
    rng = np.random.default_rng(seed)
    # Scenes: runs of 2k-20k frames, each with its own target rate between 60 and 144 FPS.
    scene_lengths = rng.integers(2_000, 20_000, size=frames // 2_000 + 2)
    scene_of_frame = np.repeat(np.arange(scene_lengths.size), scene_lengths)[:frames]
    scene_fps = rng.uniform(60.0, 144.0, size=scene_lengths.size)
    base_ms = 1000.0 / scene_fps[scene_of_frame]
    # A slow drift (+-4 %) and multiplicative jitter (about 6 %).
    drift = 1.0 + 0.04 * np.sin(np.arange(frames) * (2.0 * np.pi / 50_000.0))
    ms = base_ms * drift * rng.lognormal(0.0, 0.06, size=frames)
    # Spikes: ~0.4 % of frames take 2-4x as long (shader compiles, streaming).
    spikes = rng.random(frames) < 0.004
    ms[spikes] *= rng.uniform(2.0, 4.0, size=int(spikes.sum()))
    # A few stalls of 200-800 ms (about 5 per million frames, at least one).
    stall_count = max(1, frames // 200_000)
    stall_at = rng.choice(frames, size=stall_count, replace=False)
    ms[stall_at] = rng.uniform(200.0, 800.0, size=stall_count)
    return np.maximum(1, np.rint(ms * 1000.0)).astype(np.int64)


def _fixed(values_us: np.ndarray, decimals: int) -> list[str]:
    """Non-negative integer microseconds -> 'ms.fff' (3 decimals) or 's.ffffff' (6 decimals)."""
    scale = 10**decimals
    whole, frac = np.divmod(values_us, scale)
    fmt = f"{{}}.{{:0{decimals}d}}"
    return [fmt.format(w, f) for w, f in zip(whole.tolist(), frac.tolist())]


def generate(path: Path, frames: int, seed: int) -> None:
    """Write the CSV to `path` (atomically: a temporary file, then a rename)."""
    interval = frame_times_us(frames, seed)
    rng = np.random.default_rng(seed + 1)
    present_at = np.cumsum(interval)  # us since the capture started
    dropped = rng.random(frames) < 0.002
    in_present = rng.integers(40, 600, size=frames)

    columns = [
        [str(d) for d in dropped.astype(np.int8).tolist()],
        _fixed(present_at, 6),
        _fixed(interval, 3),
        _fixed(in_present, 3),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="ascii", newline="") as out:
        out.write(HEADER + "\r\n")
        chunk: list[str] = []
        for row in zip(*columns):
            chunk.append(ROW_PREFIX + ",".join(row) + "\r\n")
            if len(chunk) == 65_536:
                out.write("".join(chunk))
                chunk.clear()
        out.write("".join(chunk))
    os.replace(tmp, path)


def capture_path(
    frames: int = DEFAULT_FRAMES, seed: int = DEFAULT_SEED, out_dir: Path = OUT_DIR
) -> Path:
    """The cached CSV for (frames, seed) in out_dir, generated on first use."""
    path = out_dir / f"presentmon1x_n{frames}_seed{seed}_v{GENERATOR_VERSION}.csv"
    if not path.exists():
        generate(path, frames, seed)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=DEFAULT_FRAMES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="folder for the CSV")
    args = parser.parse_args()
    print(capture_path(args.frames, args.seed, args.out))


if __name__ == "__main__":
    main()
