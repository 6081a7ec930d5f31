#!/usr/bin/env python3
"""Make the sample bundles and the sample fleet from synthetic frame-time logs.

Deterministic: every series comes from a seeded generator, every float is written with a
fixed number of decimals, every listing is sorted, so running this script twice writes the
same bytes. The bundles are written in the real formats certgen reads (PresentMon 2.x CSV
with its BOM and CRLF, CapFrameX JSON sessions, MangoHud CSV logs, engine frame-stats JSON
Lines) so that the samples go through the production readers like any lab capture.

THE NUMBERS ARE ILLUSTRATIVE. No card was measured: the frame times are shaped on purpose
(a steady bulk, a slower 1% tail, a few spikes) to show a PLATINUM card, a GOLD card whose
tier mean hides a run past the stutter Soft Limit, and a SILVER card with a title it could
not run.

Usage: python examples/make_examples.py [--out examples]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

ILLUSTRATIVE = (
    "Illustrative sample: synthetic frame-time logs run through the production parser, "
    "not a measured card."
)


# --------------------------------------------------------------------------- frame times


@dataclass(frozen=True)
class Shape:
    """The target of one synthetic run: average FPS, gap, stutter, length in seconds."""

    fps: float
    gap: float
    stutter: float
    seconds: float
    seed: int


def frame_times(shape: Shape) -> np.ndarray:
    """Frame times (ms) whose SOP figures land close to the shape's targets.

    The slowest 1% tail is built explicitly: k_0.1% spikes at the 0.1% mean and the rest of
    the 1% tail at the value that makes its mean t_1% = t / (1 - g); the bulk then takes
    whatever keeps the overall mean at 1000 / fps. A little jitter on each part keeps the
    series from looking machine-made, never enough to reorder the parts.
    """
    rng = np.random.default_rng(shape.seed)
    mean = 1000.0 / shape.fps
    n = round(shape.seconds * shape.fps)
    k1 = max(1, -(-n // 100))
    k01 = max(1, -(-n // 1000))
    t1 = mean / (1.0 - shape.gap)
    t01 = t1 / (1.0 - shape.stutter)
    mid = (k1 * t1 - k01 * t01) / (k1 - k01)
    bulk_mean = (n * mean - k1 * t1) / (n - k1)
    # Jitter that keeps the bulk below the tail, with a slow wobble (scene changes).
    room = max(mid - bulk_mean, 0.02)
    amp = min(0.06 * bulk_mean, 0.45 * room)
    wobble = np.sin(np.linspace(0.0, 6.0 * math.pi, n - k1) + rng.uniform(0, 6.28))
    bulk = bulk_mean + amp * (0.5 * wobble + rng.uniform(-0.5, 0.5, n - k1))
    bulk += bulk_mean - bulk.mean()
    mid_part = mid + rng.uniform(-0.3, 0.3, k1 - k01) * min(room, 0.3 * mid)
    mid_part += mid - mid_part.mean()
    spikes = t01 + rng.uniform(-0.05, 0.05, k01) * t01
    spikes += t01 - spikes.mean()
    series = bulk.copy()
    positions = np.sort(rng.choice(np.arange(30, n - k1 - 30), size=k1, replace=False))
    tail = np.concatenate([mid_part, spikes])
    rng.shuffle(tail)
    series = np.insert(series, positions, tail)
    return np.round(series, 4)


# --------------------------------------------------------------------------- writers


def write_presentmon2(path: Path, times: np.ndarray, app: str, seed: int,
                      generated: str | None = None) -> None:
    """PresentMon 2.x CSV: BOM, CRLF, NA tokens, a second process (dwm.exe) mixed in.

    `generated`: a frame generator's FrameType (e.g. "AMD AFMF"): each present after the first
    is then shown twice, a generated row first and the application's row after it, both with
    the present's MsBetweenPresents and each on screen for half of it (2x frame generation, as
    PresentMon writes it)."""
    rng = np.random.default_rng(seed)
    header = (
        "Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,"
        "AllowsTearing,PresentMode,FrameType,TimeInQPC,MsBetweenSimulationStart,"
        "MsBetweenPresents,MsBetweenDisplayChange,MsInPresentAPI,MsRenderPresentLatency,"
        "MsUntilDisplayed,MsPCLatency,CPUStartQPC,MsBetweenAppStart,MsCPUBusy,MsCPUWait,"
        "MsGPULatency,MsGPUTime,MsGPUBusy,MsGPUWait,MsVideoBusy,MsAnimationError,AnimationTime,"
        "MsFlipDelay,MsAllInputToPhotonLatency,MsClickToPhotonLatency,MsInstrumentedLatency"
    )
    lines = [header]
    qpc = 2466961604351
    t_dwm = 0.0
    t_game = 0.0
    # What PresentMon measures beside the intervals (a game with latency markers): PC latency
    # and animation error, from their own generator so that the other columns stay as they were.
    measured = np.random.default_rng(seed + 1)
    # Where a hitch's time went (CPU, GPU or waiting on the present queue): its own generator
    # again, so that every other column stays as it was.
    hitch = np.random.default_rng(seed + 2)
    pace = float(np.median(times))
    for i, t in enumerate(times):
        t_game += float(t)
        # dwm.exe presents now and then in the same file (the game is in independent flip):
        # another group, which the reader must keep apart from the game's frames.
        while t_dwm + 1000.0 < t_game:
            t_dwm += 1000.0
            lines.append(
                f"dwm.exe,2656,0x19D7EF5E390,DXGI,1,0,0,Hardware: Legacy Flip,Application,"
                f"{qpc + int(t_dwm * 10000)},NA,16.66670000000000,16.66670000000000,"
                f"0.37230000000000,0.32520000000000,14.1630,NA,{qpc + int(t_dwm * 10000) - 1000},"
                f"16.6667,16.2350,0.4317,16.0327,0.5275,0.5275,0.0000,0.0000,NA,"
                f"{t_dwm / 1000:.4f},NA,NA,NA,NA"
            )
        busy = float(t) * float(rng.uniform(0.55, 0.7))
        gpu_busy = busy * 0.9
        if float(t) > 2.0 * pace:  # a hitch: one processor (or neither) took the extra time
            cause = hitch.choice(["cpu", "gpu", "wait"], p=[0.5, 0.3, 0.2])
            usual = pace * 0.6
            busy = float(t) - 0.4 * pace if cause == "cpu" else usual
            gpu_busy = float(t) * 0.9 if cause == "gpu" else usual * 0.9
        first = i == 0
        pc_latency = f"{float(t) * 1.6 + float(measured.gamma(4.0, 1.5)):.4f}"
        # Animation error tracks how uneven the frame was against the run's usual pace.
        animation = "NA" if first else f"{(float(t) - pace) * 0.15 + float(measured.normal(0.0, 0.4)):.4f}"
        between = "NA" if first else f"{t:.14f}"
        shown = "NA" if first else f"{t:.14f}"
        if generated is not None and not first:
            shown = f"{t / 2:.14f}"
            lines.append(
                f"{app},24892,0x2A70D2CAC00,DXGI,0,512,1,Hardware Composed: Independent Flip,"
                f"{generated},{qpc + int(t_game * 10000) - 1},{t:.4f},{between},{shown},"
                f"0.52690000000000,0.78810000000000,{t * 0.45:.4f},{pc_latency},"
                f"{qpc + int(t_game * 10000) - 2000},0.0000,{busy:.4f},{float(t) - busy:.4f},"
                f"{busy * 0.4:.4f},{gpu_busy:.4f},{gpu_busy:.4f},0.0000,0.0000,NA,"
                f"{t_game / 1000:.4f},NA,NA,NA,NA"
            )
        lines.append(
            f"{app},24892,0x2A70D2CAC00,DXGI,0,512,1,Hardware Composed: Independent Flip,"
            f"Application,{qpc + int(t_game * 10000)},{'NA' if first else f'{t:.4f}'},"
            f"{between},{shown},0.52690000000000,"
            f"0.78810000000000,{t * 0.9:.4f},{pc_latency},{qpc + int(t_game * 10000) - 2000},"
            f"{t:.4f},{busy:.4f},{float(t) - busy:.4f},{busy * 0.4:.4f},{gpu_busy:.4f},"
            f"{gpu_busy:.4f},0.0000,0.0000,{animation},{t_game / 1000:.4f},NA,NA,NA,NA"
        )
    # The first frame of the group has no previous present: its interval is NA.
    data = "\ufeff" + "\r\n".join(lines) + "\r\n"
    path.write_bytes(data.encode("utf-8"))


COMPARE_SYSTEM = {
    "CreationDate": "2026-11-20T10:00:00",
    "Motherboard": "Illustrative",
    "OS": "Microsoft Windows 11 Pro",
    "Processor": "Illustrative 8-core CPU",
    "SystemRam": "32 GB",
}
"""The system the before/after samples' CapFrameX sessions record (no card.yaml to agree with)."""


def write_capframex_json(path: Path, runs: list[np.ndarray], info: dict[str, str],
                         system: dict[str, str] | None = None) -> None:
    """A CapFrameX JSON session (one file, one or more runs). `system` is what its Info block
    records about the bench and the day (CreationDate, Motherboard, OS, Processor, SystemRam,
    AppVersion), as the sample's card.yaml declares it."""
    system = COMPARE_SYSTEM if system is None else system
    run_objs = []
    for times in runs:
        elapsed = np.concatenate([[0.0], np.cumsum(times)[:-1]]) / 1000.0
        run_objs.append(
            {
                "Hash": hashlib.sha256(times.tobytes()).hexdigest()[:32],
                "CaptureData": {
                    "TimeInSeconds": [round(float(x), 6) for x in elapsed],
                    "MsBetweenPresents": [round(float(x), 4) for x in times],
                    "MsBetweenDisplayChange": [round(float(x), 4) for x in times],
                    "Dropped": [False] * len(times),
                },
                "SensorData2": None,
            }
        )
    session = {
        "Hash": hashlib.sha256(b"".join(r.tobytes() for r in runs)).hexdigest()[:32],
        "Info": {
            "Id": "00000000-0000-4000-8000-000000000000",
            "ProcessName": info["process"],
            "GameName": info["game"],
            "CreationDate": system["CreationDate"],
            "Motherboard": system["Motherboard"],
            "OS": system["OS"],
            "Processor": system["Processor"],
            "SystemRam": system["SystemRam"],
            **({"AppVersion": system["AppVersion"]} if "AppVersion" in system else {}),
            "BaseDriverVersion": info.get("driver", ""),
            "GPU": info["gpu"],
            "Comment": ILLUSTRATIVE,
            "ApiInfo": "DirectX 12",
            "PresentationMode": "Hardware: Independent Flip",
        },
        "Runs": run_objs,
    }
    path.write_text(json.dumps(session, separators=(",", ":")) + "\n", encoding="utf-8")


GOLD_BENCH = {
    "os": "Illustrative Linux",
    "cpu": "Illustrative 8-core CPU",
    # MangoHud writes /proc/meminfo's MemTotal, in kB: a 32 GB bench shows a little less.
    "ram": "32803468",
    "kernel": "6.6.0",
    "driver": "Mesa 24.2.0",
}
"""What the GOLD sample's MangoHud logs record (its card.yaml declares the same bench)."""


def write_mangohud(path: Path, times: np.ndarray, gpu: str, seed: int) -> None:
    """A MangoHud log (0.7 layout: info lines, separator, per-frame rows, elapsed in ns)."""
    rng = np.random.default_rng(seed)
    bench = GOLD_BENCH
    lines = [
        "os,cpu,gpu,ram,kernel,driver,cpuscheduler",
        f"{bench['os']},{bench['cpu']},{gpu},{bench['ram']},{bench['kernel']},"
        f"{bench['driver']},",
        "--------------------FRAME METRICS--------------------",
        "fps,frametime,cpu_load,cpu_power,gpu_load,cpu_temp,gpu_temp,gpu_core_clock,"
        "gpu_mem_clock,gpu_vram_used,gpu_power,ram_used,swap_used,process_rss,elapsed",
    ]
    elapsed_ns = 0
    for t in times:
        elapsed_ns += round(float(t) * 1e6)
        load = int(rng.integers(93, 100))
        lines.append(
            f"{1000.0 / float(t):.4f},{float(t):.4f},{int(rng.integers(35, 60))},45,{load},"
            f"61,68,2450,1250,7.1,210,11.2,0,3.9,{elapsed_ns}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_frame_stats(path: Path, times: np.ndarray, size: tuple[int, int], *, end: bool) -> None:
    """Engine frame-stats JSON Lines (seeds/004): a warm-up first frame, then one line per frame."""
    w, h = size
    lines = []
    t_ms = 0.0
    all_times = np.concatenate([[0.0], times])  # tick 0 is pipeline creation, interval null
    for tick, t in enumerate(all_times):
        if tick == 0:
            interval = "null"
            submit = 333.435
        else:
            interval = f"{float(t):.3f}"
            t_ms += float(t)
            submit = float(t) * 0.2
        gpu = "null" if tick == 0 else f"{float(t) * 0.8:.3f}"
        gtick = "null" if tick == 0 else str(tick)
        lines.append(
            f'{{"schema_version":1,"tick":{tick},"t_ms":{t_ms:.3f},"sim_ms":0.013,'
            f'"submit_ms":{submit:.3f},"gpu_ms":{gpu},"gpu_tick":{gtick},'
            f'"present_interval_ms":{interval},"kind":"full","size":[{w},{h}],'
            f'"device":"desktop","hud_ms":null}}'
        )
    if end:
        lines.append(f'{{"schema_version":1,"end":true,"frames":{len(all_times)},"dropped":0}}')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------- bundles


RUN_KEYS = (
    "title", "resolution", "preset", "ray_tracing", "upscaler", "upscaler_mode",
    "frame_generation",
)


def _yaml_scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return value  # a YAML date
    return json.dumps(str(value), ensure_ascii=False)


def _dump_yaml(data: object, indent: int = 0) -> list[str]:
    """A tiny, ordered YAML writer (key order as given, strings JSON-quoted)."""
    pad = "  " * indent
    out: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, dict) and value:
                out.append(f"{pad}{key}:")
                out.extend(_dump_yaml(value, indent + 1))
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                out.append(f"{pad}{key}:")
                for item in value:
                    sub = _dump_yaml(item, indent + 2)
                    sub[0] = f"{pad}  - " + sub[0].lstrip()
                    out.extend(sub)
            elif isinstance(value, list):
                out.append(f"{pad}{key}: [{', '.join(_yaml_scalar(v) for v in value)}]")
            else:
                out.append(f"{pad}{key}: {_yaml_scalar(value)}")
    return out


def run_entry(title: str, resolution: str, preset: str, *, rt: bool = False,
              upscaler: str = "none", mode: str | None = None, fg: bool = False,
              **rest: object) -> dict[str, object]:
    entry: dict[str, object] = {
        "title": title,
        "resolution": resolution,
        "preset": preset,
        "ray_tracing": rt,
        "upscaler": upscaler,
        "upscaler_mode": mode,
        "frame_generation": fg,
    }
    entry.update(rest)
    return entry


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


TECHNICIAN = "A. Sample (illustrative)"

GAME_VERSIONS = {
    "Cyberpunk 2077": "2.12 (illustrative)",
    "Red Dead Redemption 2": "1491.50 (illustrative)",
    "DOOM Eternal": "6.66 rev 3 (illustrative)",
    "Horizon Zero Dawn": "1.11.2 (illustrative)",
}
"""The game builds the samples state (illustrative)."""


def conditions(day: str, title: str) -> dict[str, object]:
    """How a sample run was made: the day, the game build and who ran it."""
    return {"tested_on": day, "technician": TECHNICIAN, "game_version": GAME_VERSIONS[title]}


def windows_bench(cpu: str, board: str, display: str, timing: dict[str, object]
                  ) -> dict[str, object]:
    """The Windows test bench a sample's card.yaml declares (CapFrameX records the same)."""
    return {"cpu": cpu, "memory_gb": 32, "os": "Windows 11 Pro 23H2 (illustrative)",
            "motherboard": board, "display": display, "display_timing": timing, "notes": None}


def capframex_system(bench: dict[str, object], day: str) -> dict[str, str]:
    """What a sample's CapFrameX session records of its bench and its day."""
    return {"CreationDate": f"{day}T10:00:00", "Motherboard": str(bench["motherboard"]),
            "OS": "Microsoft Windows 11 Pro", "Processor": str(bench["cpu"]),
            "SystemRam": "32 GB", "AppVersion": "1.7.2"}


def make_platinum(root: Path) -> None:
    """A card whose 1080p tier clears 95 and whose every tier clears 88."""
    b = root / "platinum-rtx4070s"
    (b / "captures").mkdir(parents=True, exist_ok=True)
    bench = windows_bench("Illustrative 8-core CPU", "Illustrative X670E board",
                          "Illustrative 27-inch 2560x1440 165 Hz monitor",
                          {"refresh_hz": 165, "vrr": {"min_hz": 48, "max_hz": 165}})
    runs = []
    # 1920x1080: two titles, both very even (tier mean above 95).
    t = frame_times(Shape(fps=148.0, gap=0.030, stutter=0.060, seconds=60, seed=101))
    write_capframex_json(b / "captures/cp2077-1080p.json", [t],
                         {"process": "Cyberpunk2077.exe", "game": "Cyberpunk 2077",
                          "gpu": "NVIDIA GeForce RTX 4070 SUPER", "driver": "566.14"},
                         capframex_system(bench, "2026-11-16"))
    runs.append(run_entry("Cyberpunk 2077", "1920x1080", "Ultra",
                          capture="captures/cp2077-1080p.json",
                          **conditions("2026-11-16", "Cyberpunk 2077")))
    t = frame_times(Shape(fps=132.0, gap=0.028, stutter=0.070, seconds=60, seed=102))
    write_capframex_json(b / "captures/rdr2-1080p.json", [t],
                         {"process": "RDR2.exe", "game": "Red Dead Redemption 2",
                          "gpu": "NVIDIA GeForce RTX 4070 SUPER", "driver": "566.14"},
                         capframex_system(bench, "2026-11-16"))
    runs.append(run_entry("Red Dead Redemption 2", "1920x1080", "Ultra",
                          capture="captures/rdr2-1080p.json",
                          **conditions("2026-11-16", "Red Dead Redemption 2")))
    # 2560x1440: a little less even, still well above 88.
    t = frame_times(Shape(fps=96.0, gap=0.060, stutter=0.110, seconds=40, seed=103))
    write_presentmon2(b / "captures/cp2077-1440p.csv", t, "Cyberpunk2077.exe", 1103)
    runs.append(run_entry("Cyberpunk 2077", "2560x1440", "Ultra",
                          capture="captures/cp2077-1440p.csv",
                          **conditions("2026-11-17", "Cyberpunk 2077")))
    t = frame_times(Shape(fps=88.0, gap=0.070, stutter=0.120, seconds=40, seed=104))
    write_frame_stats(b / "captures/rdr2-1440p.jsonl", t, (2560, 1440), end=True)
    runs.append(run_entry("Red Dead Redemption 2", "2560x1440", "Ultra",
                          capture="captures/rdr2-1440p.jsonl",
                          **conditions("2026-11-17", "Red Dead Redemption 2")))
    card = {
        "certificate": {"id": "SAMPLE-PLATINUM-0001", "issued": "2026-11-29",
                        "sop": "SOP-GPU-001 v1.1", "languages": ["en", "ru", "pt"]},
        "customer": "Sample only — illustrative numbers",
        "card": {"vendor": "Illustrative", "model": "Illustrative RTX 4070 SUPER 12G",
                 "gpu": "AD104", "vram_gb": 12, "serial": "SAMPLE-4070S-0001",
                 "hardware_ray_tracing": True, "driver": "566.14"},
        "phase1": {"vrm_rail_resistance": "pass"},
        "grade_cap": None,
        "test_system": bench,
        "runs": runs,
    }
    write_card(b, card)


GOLD_CAPTURES = 3
"""Captures of every GOLD run (the recorded one and two repeats): the published sample shows
how sure its grade is (docs/spec/uncertainty.md)."""


def gold_repeats(b: Path, name: str, shape: Shape, gpu: str, day: str) -> list[dict[str, object]]:
    """Further captures of a GOLD run's configuration (card.yaml `repeats`): the same target
    moved a little, as a second pass over the same benchmark path moves (a seeded draw)."""
    rng = np.random.default_rng(shape.seed + 5000)
    out: list[dict[str, object]] = []
    for j in range(1, GOLD_CAPTURES):
        again = Shape(fps=shape.fps * (1.0 + float(rng.uniform(-0.02, 0.02))),
                      gap=shape.gap * (1.0 + float(rng.uniform(-0.3, 0.3))),
                      stutter=shape.stutter * (1.0 + float(rng.uniform(-0.3, 0.3))),
                      seconds=shape.seconds, seed=shape.seed + 100 * j)
        repeat = f"repeats/{Path(name).stem}-{j + 1}.csv"
        write_mangohud(b / repeat, frame_times(again), gpu, 1200 + again.seed)
        out.append({"capture": repeat, "tested_on": day, "technician": TECHNICIAN})
    return out


def make_gold(root: Path) -> None:
    """A GOLD card whose 1440p tier mean (above 88) hides one run past the Soft Limit.

    Its bench is a Linux one (MangoHud logs, the Mesa driver), declared as its logs record it."""
    b = root / "gold-rx7800xt"
    (b / "captures").mkdir(parents=True, exist_ok=True)
    (b / "archive").mkdir(parents=True, exist_ok=True)
    (b / "repeats").mkdir(parents=True, exist_ok=True)
    gpu = "AMD Radeon RX 7800 XT"
    runs = []
    # 1920x1080: comfortably GOLD, not PLATINUM (tier mean between 88 and 95).
    shape = Shape(fps=141.0, gap=0.090, stutter=0.150, seconds=40, seed=201)
    write_mangohud(b / "captures/cp2077-1080p.csv", frame_times(shape), gpu, 1201)
    runs.append(run_entry("Cyberpunk 2077", "1920x1080", "Ultra",
                          capture="captures/cp2077-1080p.csv",
                          **conditions("2026-11-18", "Cyberpunk 2077"),
                          repeats=gold_repeats(b, "cp2077-1080p.csv", shape, gpu, "2026-11-18")))
    shape = Shape(fps=155.0, gap=0.085, stutter=0.140, seconds=60, seed=202)
    write_mangohud(b / "captures/doom-1080p.csv", frame_times(shape), gpu, 1202)
    runs.append(run_entry("DOOM Eternal", "1920x1080", "Ultra Nightmare",
                          capture="captures/doom-1080p.csv",
                          **conditions("2026-11-19", "DOOM Eternal"),
                          repeats=gold_repeats(b, "doom-1080p.csv", shape, gpu, "2026-11-19")))
    # 2560x1440: three very even runs and one with isolated spikes (stutter above 0.60).
    for i, (title, preset, fps, seed) in enumerate((
        ("Cyberpunk 2077", "Ultra", 102.0, 203),
        ("DOOM Eternal", "Ultra Nightmare", 118.0, 204),
        ("Red Dead Redemption 2", "Ultra", 96.0, 205),
    )):
        shape = Shape(fps=fps, gap=0.008, stutter=0.012, seconds=40, seed=seed)
        name = f"captures/run{i + 1}-1440p.csv"
        write_mangohud(b / name, frame_times(shape), gpu, 1200 + seed)
        day = f"2026-11-{20 + i:02d}"
        runs.append(run_entry(title, "2560x1440", preset, capture=name,
                              **conditions(day, title),
                              repeats=gold_repeats(b, name, shape, gpu, day)))
    # The Soft Limit run: F 100 / F1% 82 / F0.1% 31.9 (g 0.18, s about 0.61), re-run once.
    first = frame_times(Shape(fps=99.0, gap=0.185, stutter=0.640, seconds=40, seed=206))
    write_mangohud(b / "archive/hzd-1440p-first.csv", first, gpu, 1206)
    rerun_shape = Shape(fps=100.0, gap=0.180, stutter=0.611, seconds=40, seed=207)
    write_mangohud(b / "captures/hzd-1440p.csv", frame_times(rerun_shape), gpu, 1207)
    runs.append(run_entry(
        "Horizon Zero Dawn", "2560x1440", "Ultimate Quality",
        capture="captures/hzd-1440p.csv",
        first_capture={"file": "archive/hzd-1440p-first.csv",
                       "sha256": sha256_of(b / "archive/hzd-1440p-first.csv"),
                       "tested_on": "2026-11-23", "technician": TECHNICIAN},
        # Lab-written text per language: the justification in all three languages; the VRM
        # outcome in English and Russian only, so the Portuguese certificate shows the English
        # and says so ("original em inglês").
        soft_limit={
            "justification": {
                "en": "Both captures show the same handful of isolated long frames at the same "
                      "streaming points of the benchmark path; the bulk of the run is steady. "
                      "Recorded as a Soft Limit for investigation (illustrative sample).",
                "ru": "На обеих записях видны одни и те же единичные длинные кадры в одних и тех "
                      "же точках подгрузки данных на маршруте теста; в остальном прогон ровный. "
                      "Превышение мягкого предела зафиксировано для разбора (иллюстративный "
                      "образец).",
                "pt": "As duas capturas mostram os mesmos poucos quadros longos e isolados nos "
                      "mesmos pontos de carregamento do percurso do teste; o restante da execução "
                      "é estável. Registrado como ultrapassagem do limite de tolerância, para "
                      "investigação (amostra ilustrativa).",
            },
            "vrm_reexamination": {
                "en": "pass: all rails within 5% of nominal (illustrative)",
                "ru": "норма: все цепи питания в пределах 5 % от номинала (иллюстративно)",
            },
        },
        **conditions("2026-11-23", "Horizon Zero Dawn"),
        repeats=gold_repeats(b, "hzd-1440p.csv", rerun_shape, gpu, "2026-11-23"),
    ))
    card = {
        "certificate": {"id": "SAMPLE-GOLD-0002", "issued": "2026-11-29",
                        "sop": "SOP-GPU-001 v1.1", "languages": ["en", "ru", "pt"]},
        "customer": "Sample only — illustrative numbers",
        "card": {"vendor": "Illustrative", "model": "Illustrative RX 7800 XT 16G",
                 "gpu": "Navi 32", "vram_gb": 16, "serial": "SAMPLE-7800XT-0002",
                 "hardware_ray_tracing": True, "driver": GOLD_BENCH["driver"]},
        "phase1": {"vrm_rail_resistance": "pass"},
        "grade_cap": None,
        # The test bench as a lab states it (illustrative), and as its MangoHud logs record it:
        # a Linux system with the Mesa driver (the card's driver above).
        "test_system": {"cpu": GOLD_BENCH["cpu"], "memory_gb": 32,
                        "os": f"{GOLD_BENCH['os']} (kernel {GOLD_BENCH['kernel']})",
                        "motherboard": "Illustrative B650 board",
                        "display": "Illustrative 27-inch 2560x1440 144 Hz monitor",
                        "display_timing": {"refresh_hz": 144, "vrr": "none"},
                        "notes": None},
        "runs": runs,
    }
    write_card(b, card)


def make_silver(root: Path) -> None:
    """A card without hardware ray tracing: one title not run, 1440p tier below 88."""
    b = root / "silver-gtx1660s"
    (b / "captures").mkdir(parents=True, exist_ok=True)
    bench = windows_bench("Illustrative 6-core CPU", "Illustrative B550 board",
                          "Illustrative 24-inch 1920x1080 144 Hz monitor",
                          {"refresh_hz": 144, "vrr": {"min_hz": 48, "max_hz": 144}})
    runs = []
    t = frame_times(Shape(fps=78.0, gap=0.080, stutter=0.160, seconds=80, seed=301))
    t2 = frame_times(Shape(fps=84.0, gap=0.075, stutter=0.150, seconds=40, seed=302))
    write_capframex_json(b / "captures/cp2077-1080p.json", [t, t2][:1],
                         {"process": "Cyberpunk2077.exe", "game": "Cyberpunk 2077",
                          "gpu": "NVIDIA GeForce GTX 1660 SUPER", "driver": "566.14"},
                         capframex_system(bench, "2026-11-24"))
    runs.append(run_entry("Cyberpunk 2077", "1920x1080", "High",
                          capture="captures/cp2077-1080p.json",
                          **conditions("2026-11-24", "Cyberpunk 2077")))
    write_frame_stats(b / "captures/rdr2-1080p.jsonl", t2, (1920, 1080), end=True)
    runs.append(run_entry("Red Dead Redemption 2", "1920x1080", "High",
                          capture="captures/rdr2-1080p.jsonl",
                          **conditions("2026-11-24", "Red Dead Redemption 2")))
    t = frame_times(Shape(fps=52.0, gap=0.160, stutter=0.240, seconds=90, seed=303))
    # A PresentMon 2.x capture on the Windows bench (the NVIDIA driver card.yaml names).
    write_presentmon2(b / "captures/cp2077-1440p.csv", t, "Cyberpunk2077.exe", 1303)
    runs.append(run_entry("Cyberpunk 2077", "2560x1440", "High",
                          capture="captures/cp2077-1440p.csv",
                          **conditions("2026-11-25", "Cyberpunk 2077")))
    runs.append(run_entry("Alan Wake 2", "2560x1440", "High", rt=True,
                          not_run={"en": "no hardware ray tracing on this GPU",
                                   "ru": "у этого GPU нет аппаратной трассировки лучей",
                                   "pt": "esta GPU não tem ray tracing por hardware"}))
    card = {
        "certificate": {"id": "SAMPLE-SILVER-0003", "issued": "2026-11-29",
                        "sop": "SOP-GPU-001 v1.1", "languages": ["en", "ru", "pt"]},
        "customer": "Sample only — illustrative numbers",
        "card": {"vendor": "Illustrative", "model": "Illustrative GTX 1660 SUPER 6G",
                 "gpu": "TU116", "vram_gb": 6, "serial": "SAMPLE-1660S-0003",
                 "hardware_ray_tracing": False, "driver": "566.14"},
        "phase1": {"vrm_rail_resistance": "pass"},
        "grade_cap": None,
        "test_system": bench,
        "runs": runs,
    }
    write_card(b, card)


def make_framegen(root: Path) -> None:
    """A card with a run at 2x frame generation (AMD AFMF, FrameType in its PresentMon 2.x
    capture) beside the same title without it: two cohorts, the multiplier the capture shows
    held against the declared mode, and page 1 naming the graded and the displayed rate."""
    b = root / "framegen-rx7800xt"
    (b / "captures").mkdir(parents=True, exist_ok=True)
    bench = windows_bench("Illustrative 8-core CPU", "Illustrative X670 board",
                          "Illustrative 27-inch 2560x1440 165 Hz monitor",
                          {"refresh_hz": 165, "vrr": {"min_hz": 48, "max_hz": 165}})
    runs = []
    t = frame_times(Shape(fps=74.0, gap=0.060, stutter=0.100, seconds=40, seed=401))
    write_presentmon2(b / "captures/cp2077-1440p-afmf.csv", t, "Cyberpunk2077.exe", 1401,
                      generated="AMD AFMF")
    runs.append(run_entry("Cyberpunk 2077", "2560x1440", "Ultra", upscaler="FSR",
                          mode="Quality", fg=True, frame_generation_mode="2x",
                          capture="captures/cp2077-1440p-afmf.csv", process="Cyberpunk2077.exe",
                          **conditions("2026-11-26", "Cyberpunk 2077")))
    t = frame_times(Shape(fps=76.0, gap=0.055, stutter=0.095, seconds=40, seed=402))
    write_presentmon2(b / "captures/cp2077-1440p.csv", t, "Cyberpunk2077.exe", 1402)
    runs.append(run_entry("Cyberpunk 2077", "2560x1440", "Ultra", upscaler="FSR",
                          mode="Quality", frame_generation_mode="off",
                          capture="captures/cp2077-1440p.csv", process="Cyberpunk2077.exe",
                          **conditions("2026-11-26", "Cyberpunk 2077")))
    card = {
        "certificate": {"id": "SAMPLE-FG-0004", "issued": "2026-11-29",
                        "sop": "SOP-GPU-001 v1.1", "languages": ["en", "ru", "pt"]},
        "customer": "Sample only — illustrative numbers",
        "card": {"vendor": "Illustrative", "model": "Illustrative RX 7800 XT 16G",
                 "gpu": "Navi 32", "vram_gb": 16, "serial": "SAMPLE-7800XT-0004",
                 "hardware_ray_tracing": True, "driver": "24.10.1"},
        "phase1": {"vrm_rail_resistance": "pass"},
        "grade_cap": None,
        "test_system": bench,
        "runs": runs,
    }
    write_card(b, card)


def write_card(bundle: Path, card: dict[str, object]) -> None:
    head = [
        "# " + ILLUSTRATIVE,
        "# Written by examples/make_examples.py; edit the script, not this file.",
    ]
    text = "\n".join(head + _dump_yaml(card)) + "\n"
    (bundle / "card.yaml").write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- fleet


FLEET_COHORTS = (
    # (title, resolution, preset, rt, upscaler, mode, fg, runs, fps, gap, stutter, spread)
    # A ranked cohort that holds a sample run is centred on the sample cards' own figures
    # (fps, gap and stutter between the cards' runs of that configuration) with a spread wide
    # enough that each sample run lands inside the cohort, not past its best run: a lab's
    # samples should rank like ordinary cards of their class.
    ("Cyberpunk 2077", "1920x1080", "Ultra", False, "none", None, False, 64, 140, 0.08, 0.135, 0.9),
    ("Cyberpunk 2077", "2560x1440", "Ultra", False, "none", None, False, 48, 95, 0.044, 0.08, 1.4),
    ("Red Dead Redemption 2", "1920x1080", "Ultra",
     False, "none", None, False, 36, 128, 0.032, 0.075, 0.45),
    ("Red Dead Redemption 2", "2560x1440", "Ultra",
     False, "none", None, False, 31, 88, 0.04, 0.07, 1.55),
    ("DOOM Eternal", "1920x1080", "Ultra Nightmare",
     False, "none", None, False, 22, 160, 0.08, 0.15, 0.35),
    ("DOOM Eternal", "2560x1440", "Ultra Nightmare",
     False, "none", None, False, 12, 120, 0.06, 0.12, 0.35),
    ("Cyberpunk 2077", "1920x1080", "High", False, "none", None, False, 9, 90, 0.08, 0.17, 0.35),
    ("Cyberpunk 2077", "2560x1440", "High", False, "none", None, False, 7, 60, 0.12, 0.2, 0.35),
    ("Red Dead Redemption 2", "1920x1080", "High",
     False, "none", None, False, 5, 85, 0.07, 0.15, 0.35),
    ("Horizon Zero Dawn", "2560x1440", "Ultimate Quality",
     False, "none", None, False, 18, 95, 0.05, 0.18, 0.35),
    ("Cyberpunk 2077", "2560x1440", "Ultra",
     True, "DLSS", "Quality", False, 33, 70, 0.09, 0.16, 0.35),
)


def make_fleet(path: Path) -> None:
    """Sample fleet in the `certgen fleet export` JSON Lines format.

    Some cohorts hold at least 30 runs (ranked), others fewer (Provisional). The rows are
    synthetic FPS triples; gap, stutter and score come from the engine (certgen.metrics.figures), so
    the file holds what a real export would. No timestamps; lines sorted by certificate id.

    Each row draws its average FPS within 15% of the cohort's centre, and its gap and stutter
    log-normally around the cohort's centre: one shared draw (how even the card is, scaled by
    the cohort's spread) and a small one of their own, so that an even card is even on both.
    """
    from certgen.fleet import JSONL_FIELDS
    from certgen.metrics.figures import ratios_from_fps, weights_of
    from certgen.sop import load_rules

    weights = weights_of(load_rules())
    rng = np.random.default_rng(4242)
    rows = []
    for c_i, (title, res, preset, rt, up, mode, fg, n, fps, gap, stutter, spread) in enumerate(
        FLEET_COHORTS
    ):
        for r in range(n):
            f = round(fps * float(rng.uniform(0.85, 1.15)), 1)
            even = spread * float(rng.normal())
            g = min(0.5, max(0.002, gap * math.exp(even + 0.2 * float(rng.normal()))))
            s = min(0.7, max(0.004, stutter * math.exp(even + 0.2 * float(rng.normal()))))
            low1 = round(f * (1 - g), 1)
            low01 = round(low1 * (1 - s), 1)
            ratios = ratios_from_fps(f, low1, low01, weights)
            card = f"FLEET-{c_i:02d}{r:03d}"
            row = {
                "certificate_id": card, "run_index": 0, "issued": "2026-10-01",
                "card_model": "Illustrative fleet card", "card_serial": f"SAMPLE-{card}",
                "title": title, "resolution": res, "preset": preset, "ray_tracing": rt,
                "upscaler": up, "upscaler_mode": mode, "frame_generation": fg,
                "avg_fps": f, "low_1pct_fps": low1, "low_0_1pct_fps": low01,
                "consistency_gap": ratios.consistency_gap, "stutter": ratios.stutter,
                "fluidity_score": ratios.fluidity_score,
                "source": "examples/make_examples.py (synthetic, illustrative)",
            }
            # Written as a certgen from before frame-generation modes exported it (no
            # frame_generation_mode): it imports as off, or on with the mode not stated.
            rows.append({k: row[k] for k in JSONL_FIELDS if k in row})
    rows.sort(key=lambda r: (r["certificate_id"], r["run_index"]))
    text = "".join(
        json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows
    )
    path.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- calibration fleet


CALIBRATION_CARDS = 300
"""Certified cards of the calibration example: the SOP's n ≈ 300."""

CALIBRATION_TITLES = (
    # (title, preset, FPS of a mid-range card at 1920x1080, gap and stutter centres there,
    #  how often a card runs it): each title's cohorts have a pacing of their own.
    ("Cyberpunk 2077", "Ultra", 105.0, 0.055, 0.16, 0.30),
    ("Red Dead Redemption 2", "Ultra", 98.0, 0.045, 0.13, 0.25),
    ("DOOM Eternal", "Ultra Nightmare", 230.0, 0.030, 0.10, 0.20),
    ("Horizon Zero Dawn", "Ultimate Quality", 125.0, 0.050, 0.17, 0.21),
    ("Alan Wake 2", "High", 72.0, 0.065, 0.20, 0.04),
)

CALIBRATION_TIERS = (
    # (resolution, FPS factor, gap factor, stutter factor, how often a card is run there):
    # at higher resolutions the GPU sets the pace and frames come more evenly.
    ("1920x1080", 1.00, 1.00, 1.00, 0.40),
    ("2560x1440", 0.68, 0.90, 0.92, 0.40),
    ("3840x2160", 0.40, 0.85, 0.88, 0.20),
)

CALIBRATION_CLASSES = (
    # (card model, FPS factor, share of the fleet)
    ("Illustrative entry card 8G", 0.60, 0.35),
    ("Illustrative mid-range card 12G", 1.00, 0.45),
    ("Illustrative high-end card 16G", 1.60, 0.20),
)

CALIBRATION_HITCHY = 0.04
"""Share of runs with a burst of shader-compilation hitches (stutter between 0.50 and 0.75):
some pass the 0.60 Soft Limit, as real fleets' do."""


def make_calibration_fleet(path: Path) -> None:
    """The calibration example's fleet: 300 certified cards in `certgen fleet export` JSON Lines.

    Every card has 2 to 6 runs over 1 to 3 resolution tiers, one title per run and tier. Its
    FPS follows its class, the title and the tier; its gap and stutter are drawn log-normally
    around the cohort's centres with one draw shared by the card's runs (how even the card is)
    and a small one per run, so the three grades all occur. A few runs have a burst of hitches
    past the 0.60 stutter Soft Limit. The lows come from the drawn gap and stutter, rounded to
    0.1 FPS; gap and stutter are then recomputed from the rounded FPS triple and the Fluidity
    Score from them (certgen.metrics.figures), so every row holds what a real export would. Issue
    dates run from January 2025 to October 2026 in certificate order. No clock, sorted lines.
    """
    import datetime as dt

    from certgen.fleet import JSONL_FIELDS
    from certgen.metrics.figures import fluidity_score, ratios_from_fps, weights_of
    from certgen.sop import load_rules

    weights = weights_of(load_rules())
    rng = np.random.default_rng(2626)
    title_p = np.array([t[5] for t in CALIBRATION_TITLES])
    tier_p = np.array([t[4] for t in CALIBRATION_TIERS])
    class_p = np.array([c[2] for c in CALIBRATION_CLASSES])
    start = dt.date(2025, 1, 6)
    rows = []
    for i in range(CALIBRATION_CARDS):
        card = f"CAL-{i + 1:04d}"
        model, fps_class, _ = CALIBRATION_CLASSES[int(rng.choice(len(class_p), p=class_p))]
        speed = fps_class * float(rng.uniform(0.9, 1.1))
        even = 0.45 * float(rng.normal())
        n_tiers = int(rng.choice(3, p=[0.25, 0.45, 0.30])) + 1
        tiers = sorted(rng.choice(len(tier_p), size=n_tiers, replace=False, p=tier_p).tolist())
        n_runs = int(rng.integers(max(2, n_tiers), 7))
        # At least one run per tier, the rest spread over the tiers (one title per run there).
        per_tier = [1] * n_tiers
        for _ in range(n_runs - n_tiers):
            per_tier[int(rng.integers(n_tiers))] += 1
        issued = (start + dt.timedelta(days=round(i * 660 / CALIBRATION_CARDS))).isoformat()
        index = 0
        for t, count in zip(tiers, per_tier, strict=True):
            res, fps_tier, g_tier, s_tier, _ = CALIBRATION_TIERS[t]
            titles = sorted(rng.choice(len(title_p), size=min(count, len(title_p)),
                                       replace=False, p=title_p).tolist())
            for k in titles:
                title, preset, fps, gap, stutter, _ = CALIBRATION_TITLES[k]
                f = round(fps * fps_tier * speed * float(rng.uniform(0.93, 1.07)), 1)
                g = min(0.45, gap * g_tier * math.exp(even + 0.25 * float(rng.normal())))
                s = min(0.75, stutter * s_tier * math.exp(1.1 * even + 0.3 * float(rng.normal())))
                if float(rng.random()) < CALIBRATION_HITCHY:
                    s = float(rng.uniform(0.50, 0.75))
                low1 = round(f * (1 - g), 1)
                low01 = round(low1 * (1 - s), 1)
                ratios = ratios_from_fps(f, low1, low01, weights)
                assert ratios.consistency_gap is not None and ratios.stutter is not None
                row = {
                    "certificate_id": card, "run_index": index, "issued": issued,
                    "card_model": model, "card_serial": f"SAMPLE-{card}",
                    "title": title, "resolution": res, "preset": preset, "ray_tracing": False,
                    "upscaler": "none", "upscaler_mode": None, "frame_generation": False,
                    "avg_fps": f, "low_1pct_fps": low1, "low_0_1pct_fps": low01,
                    "consistency_gap": ratios.consistency_gap, "stutter": ratios.stutter,
                    "fluidity_score": fluidity_score(ratios.consistency_gap, ratios.stutter,
                                                     weights),
                    "source": "examples/make_examples.py (synthetic calibration fleet, "
                              "illustrative)",
                }
                # As the sample fleet: an export from before frame-generation modes.
                rows.append({key: row[key] for key in JSONL_FIELDS if key in row})
                index += 1
    rows.sort(key=lambda r: (r["certificate_id"], r["run_index"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                            for r in rows), encoding="utf-8")


CALIBRATION_CANDIDATE = """\
# An ILLUSTRATIVE draft rules file, the candidate of the calibration example: what a lab might
# propose after reviewing a fleet (lower grade lines, more weight on stutter). It is not an SOP.
# `certgen calibrate --rules` re-grades every certificate of the fleet under it.
# Written by examples/make_examples.py; edit the script, not this file.
sop: SOP-GPU-001 v1.2-draft
rules_version: sop-gpu-001-v1.2-draft
fluidity_weights:
  consistency_gap: 0.65
  stutter: 0.35
grade_lines:
  gold: 87
  platinum: 94
grades: [PLATINUM, GOLD, SILVER]
no_measured_tier_cap: SILVER
soft_limit:
  stutter: 0.60
rerun:
  stutter: 0.60
ranking:
  min_cohort: 30
calibrated: false
calibration_fleet_target: 300
calibration_statement:
  en: >-
    Illustrative draft (SOP-GPU-001 v1.2-draft): the 0.65 / 0.35 weights and the 87 and 94 grade
    lines are a candidate for review, not an SOP.
  ru: >-
    Черновик для примера (SOP-GPU-001 v1.2-draft): веса 0,65 / 0,35 и границы оценок 87 и 94 —
    кандидат на рассмотрение, а не SOP.
  pt: >-
    Rascunho ilustrativo (SOP-GPU-001 v1.2-draft): os pesos 0,65 / 0,35 e as linhas de
    classificação 87 e 94 são uma candidata para revisão, não um SOP.
"""
"""examples/calibration/sop-gpu-001-v1.2-draft.yaml: the candidate rules the demo re-grades by."""

CALIBRATION_README = """\
# Calibration example (illustrative)

Written by examples/make_examples.py; no card was measured. `fleet.jsonl` is a synthetic fleet
of 300 certified cards (the SOP's n ≈ 300) in `certgen fleet export` format; the candidate
rules file `sop-gpu-001-v1.2-draft.yaml` is an illustrative draft, not an SOP. The site builds
the review into calibration/:

    certgen fleet import fleet.jsonl --fleet cal.sqlite
    certgen calibrate --fleet cal.sqlite --rules sop-gpu-001-v1.2-draft.yaml --out OUT --lang en,ru,pt
"""


def make_calibration(root: Path) -> None:
    """examples/calibration/: the 300-card fleet, the candidate rules file, a README."""
    c = root / "calibration"
    make_calibration_fleet(c / "fleet.jsonl")
    (c / "sop-gpu-001-v1.2-draft.yaml").write_text(CALIBRATION_CANDIDATE, encoding="utf-8")
    (c / "README.md").write_text(CALIBRATION_README, encoding="utf-8")


# --------------------------------------------------------------------------- before/after samples


def session_frames(fps: float, seconds: float, seed: int, *, tail: float = 1.7,
                   tail_share: float = 0.012, spike: float = 3.2,
                   wobble: float = 0.015, stalls: tuple[float, ...] = ()) -> np.ndarray:
    """Frame times (ms) of one gameplay session for the before/after samples.

    A steady bulk around 1000 / fps with a slow scene wobble (which is what makes 60 s blocks
    differ from each other, the spread the noise floor measures), a share of slower frames
    around `tail` times the bulk, a few spikes around `spike` times, and the given stalls
    (> 200 ms) at fixed fractions of the session. The series runs just past `seconds`.
    """
    rng = np.random.default_rng(seed)
    base = 1000.0 / fps
    n = int(seconds * fps * 1.3) + 10
    phase = rng.uniform(0.0, 2.0 * math.pi)
    t = np.linspace(0.0, 1.3 * seconds / 50.0, n)  # about one scene cycle every 50 s
    level = base * (1.0 + wobble * np.sin(2.0 * math.pi * t + phase))
    frames = level * rng.lognormal(0.0, 0.05, n)
    slow = rng.random(n) < tail_share
    frames[slow] *= tail * rng.uniform(0.85, 1.15, int(slow.sum()))
    spikes = rng.random(n) < tail_share / 10.0
    frames[spikes] *= spike * rng.uniform(0.8, 1.25, int(spikes.sum()))
    cut = int(np.searchsorted(np.cumsum(frames), seconds * 1000.0)) + 1
    frames = frames[:cut]
    for i, stall in enumerate(stalls):
        frames[int(frames.size * (i + 1) / (len(stalls) + 1))] = stall
    return np.round(frames, 3)


def write_bench_csv(path: Path, sides: dict[str, np.ndarray]) -> None:
    """A benchmark-page CSV (side,kind,name,value) holding both sides' frame rows."""
    lines = ["side,kind,name,value"]
    for side, times in sides.items():
        lines.extend(f"{side},frame,frame_time_ms,{float(v):.3f}" for v in times)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


COMPARE_README = """\
# Before/after samples (illustrative)

Synthetic frame-time logs written by examples/make_examples.py; no card was measured. The site
builds a report of each (`certgen compare`) into reports/:

- change/: two 3-minute sessions (CapFrameX JSON) before and after a driver update that really
  makes the game faster; the average and the 1% low move by more than the noise floor.
- inside-floor/: one benchmark-page CSV holding both sides of a setting toggle; the difference
  is smaller than the noise floor, so the report shows no change.
- series/: an 8-pair ABBA series (series.yaml) and a 10-run pilot of the unchanged
  configuration, 20 s runs in CapFrameX JSON.

    certgen compare change/before.json change/after.json --out OUT --lang en,ru,pt \\
      --description "Graphics driver updated from 24.10.1 (before) to 24.12.1 (after)"
    certgen compare inside-floor/both.csv --out OUT
    certgen compare --series series/series.yaml --out OUT
"""


def make_compare(root: Path) -> None:
    """The before/after samples: a real change, a difference inside the floor, a series."""
    c = root / "compare"
    info = {"process": "Cyberpunk2077.exe", "game": "Cyberpunk 2077",
            "gpu": "Illustrative RX 7800 XT"}
    (c / "change").mkdir(parents=True, exist_ok=True)
    # The driver update shortens the slow frames (the tail) more than the bulk.
    before = session_frames(62.0, 181.0, 501, tail=1.9, stalls=(380.0,))
    after = session_frames(66.0, 181.0, 502, tail=1.55)
    write_capframex_json(c / "change/before.json", [before], {**info, "driver": "24.10.1"})
    # The after session was recorded the next morning, once the new driver was in.
    write_capframex_json(c / "change/after.json", [after], {**info, "driver": "24.12.1"},
                         {**COMPARE_SYSTEM, "CreationDate": "2026-11-21T09:30:00"})
    (c / "inside-floor").mkdir(parents=True, exist_ok=True)
    write_bench_csv(c / "inside-floor/both.csv", {
        "before": session_frames(62.0, 181.0, 511, tail=1.9),
        "after": session_frames(62.3, 181.0, 512, tail=1.9),
    })
    s = c / "series"
    (s / "runs").mkdir(parents=True, exist_ok=True)
    (s / "pilot").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(520)
    pairs = []
    for i in range(8):
        # ABBA: A then B in pairs 1, 4, 5, 8; B then A in pairs 2, 3, 6, 7 (the file lists
        # each pair as before/after whatever the order it was run in).
        day = float(rng.normal(0.0, 0.006))  # the run-to-run drift both runs of a pair share
        a = session_frames(62.0 * (1.0 + day + float(rng.normal(0, 0.004))), 20.0, 530 + 2 * i,
                           tail=1.9)
        b = session_frames(65.0 * (1.0 + day + float(rng.normal(0, 0.004))), 20.0, 531 + 2 * i,
                           tail=1.85)
        name_a, name_b = f"runs/{i + 1:02d}-a.json", f"runs/{i + 1:02d}-b.json"
        write_capframex_json(s / name_a, [a], {**info, "driver": "24.10.1"})
        write_capframex_json(s / name_b, [b], {**info, "driver": "24.10.1"})
        pairs.append((name_a, name_b))
    pilot = []
    for j in range(10):
        p = session_frames(62.0 * (1.0 + float(rng.normal(0, 0.007))), 20.0, 560 + j, tail=1.9)
        name = f"pilot/{j + 1:02d}.json"
        write_capframex_json(s / name, [p], {**info, "driver": "24.10.1"})
        pilot.append(name)
    lines = [
        "# " + ILLUSTRATIVE,
        "# Written by examples/make_examples.py; edit the script, not this file.",
        "# Eight pairs run in ABBA order: Resizable BAR off (before) and on (after).",
        "series: 1",
        "order: ABBA",
        # The description per language, so the ru and pt reports read it in their own.
        "description:",
        "  en: Resizable BAR off (before) and on (after)",
        "  ru: Resizable BAR выключен (до) и включён (после)",
        "  pt: Resizable BAR desativado (antes) e ativado (depois)",
        "pairs:",
        *(f"  - {{before: {a}, after: {b}}}" for a, b in pairs),
        "pilot:",
        *(f"  - {p}" for p in pilot),
    ]
    (s / "series.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (c / "README.md").write_text(COMPARE_README, encoding="utf-8")


SAMPLE_LAB = {
    "name": "Sample Frame-Pacing Laboratory (SPECIMEN, not a real laboratory)",
    "address": {
        "en": "1 Sample Street, Exampletown (a made-up address)",
        "ru": "Образцовая ул., 1, Примерск (вымышленный адрес)",
        "pt": "Rua Exemplo, 1, Cidade Exemplo (endereço fictício)",
    },
    "accreditation": {"body": "Sample Accreditation Body (illustrative)",
                      "number": "SAMPLE-0000"},
    "signatory": {
        "name": "A. Sample",
        "role": {"en": "Head of laboratory (sample)", "ru": "Руководитель лаборатории (образец)",
                 "pt": "Diretor(a) do laboratório (exemplo)"},
    },
    # A reserved example domain: the QR code of a specimen must lead nowhere real.
    "verification_base": "https://certificates.example.org/verify",
    "validity_months": 24,
    "contact": "certificates@lab.example",
    "specimen": True,
}
"""The examples' laboratory: visibly a sample, so its certificates are marked SPECIMEN."""


def make_lab(path: Path) -> None:
    """examples/lab.yaml: the sample laboratory profile the site and the tests build with."""
    lines = [
        "# A SAMPLE laboratory profile: every certificate it issues is marked SPECIMEN.",
        "# Written by examples/make_examples.py; edit the script, not this file.",
        *_dump_yaml(SAMPLE_LAB),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


SAMPLE_REVOCATIONS = [
    {
        "id": "SAMPLE-SILVER-0003",
        # The samples' issue date: the site, dated that day, shows the revoked state.
        "date": "2026-11-29",
        "reason": {
            "en": "Illustrative revocation: this sample shows how the registry marks a "
                  "withdrawn certificate.",
            "ru": "Отзыв для примера: на этом образце видно, как реестр отмечает отозванный "
                  "сертификат.",
            "pt": "Revogação ilustrativa: este exemplo mostra como o registro assinala um "
                  "certificado revogado.",
        },
    },
]
"""examples/revocations.yaml: one sample certificate withdrawn, to show the revoked page."""


def make_revocations(path: Path) -> None:
    """examples/revocations.yaml: the sample laboratory's withdrawn certificates."""
    lines = [
        "# Withdrawn certificates of the SAMPLE laboratory (examples/lab.yaml); the registry",
        "# pages are rebuilt from it and the records. Written by examples/make_examples.py;",
        "# edit the script, not this file.",
    ]
    for item in SAMPLE_REVOCATIONS:
        body = _dump_yaml(item)
        lines.append("- " + body[0])
        lines.extend("  " + line for line in body[1:])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    make_platinum(out)
    make_gold(out)
    make_silver(out)
    make_framegen(out)
    make_compare(out)
    make_fleet(out / "fleet.jsonl")
    make_calibration(out)
    make_lab(out / "lab.yaml")
    make_revocations(out / "revocations.yaml")


if __name__ == "__main__":
    main()
