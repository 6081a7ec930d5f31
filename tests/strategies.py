"""Shared hypothesis strategies: frame times, capture file texts, card.yaml documents.

One module, in the spirit of attrs' tests/strategies.py, so that property tests draw the same
realistic inputs instead of each growing its own. Three families:

- frame times: `frame_time_arrays` (realistic runs: steady with jitter, spikes, stalls, ties,
  tiny and huge values the readers accept), plus the narrower element strategies some tests
  need (`frame_times`, `diagnostic_frame_time`, `exact_ms`, `tenths`);
- capture texts: `presentmon_texts`, `mangohud_texts`, `capframex_json_texts`, each drawing
  `(text, frame_times)` where the text is a file in the tool's real layout and frame_times are
  the intervals a reader must return; `presentmon_intervals` and `lagged_gpu_run` for the
  reader-internals tests;
- cards: `cards`, a card.yaml mapping that certgen.inputs.bundle.validate_card accepts, whose runs name
  capture files (see `card_files`);
- other documents: `labs`, a lab.yaml mapping certgen.inputs.lab.parse_lab accepts, and `fleet_rows`,
  a fleet JSON Lines object certgen.fleet.parse_line accepts (figures that obey the metrics
  theorems, as a real record's do).

Frame times in generated texts are rounded to 3 decimals so that the text states them exactly:
float(f"{t:.3f}") == t for t = round(x, 3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from certgen.model.cohort import FRAME_GENERATION_MODES

# --------------------------------------------------------------------------------------------
# Frame times
# --------------------------------------------------------------------------------------------

frame_times = arrays(
    np.float64,
    st.integers(min_value=1, max_value=3000),
    elements=st.floats(min_value=0.1, max_value=1000.0, allow_nan=False, allow_infinity=False),
)
"""Any positive frame times, 0.1 ms to 1 s, 1 to 3000 frames (the metrics theorems)."""

tenths = st.integers(min_value=1, max_value=50000).map(lambda k: k / 10)
"""FPS figures as printed (one decimal), 0.1 to 5000.0."""

diagnostic_frame_time = st.one_of(
    st.integers(1, 40).map(float),  # whole milliseconds: windows end exactly on +-1500 often
    st.floats(0.5, 40.0, allow_nan=False, allow_infinity=False),
    st.sampled_from([8.0, 16.0, 1000.0, 1000.001, 250.0, 2000.0]),
    st.floats(40.0, 1200.0, allow_nan=False, allow_infinity=False),
)
"""One frame time that often sits on the edges of the stutter and stall rules."""

exact_ms = st.sampled_from(
    [2.5, 3.0, 4.0, 5.0, 6.0, 7.5, 8.0, 10.0, 12.0, 12.5, 15.0, 16.0, 20.0, 24.0, 25.0, 40.0]
)
"""Frame times exact in binary that divide 60 s: every block ends exactly on its boundary."""


@st.composite
def frame_time_arrays(draw: st.DrawFn, min_size: int = 1, max_size: int = 600) -> np.ndarray:
    """A realistic run: a steady base (4-40 ms) with jitter, then spikes (2-10x the base), stalls
    (200 ms to 2 s), ties (repeated values) and now and then a tiny (0.001 ms) or huge (60 s)
    frame. Values are rounded to 3 decimals, so a capture text can state them exactly."""
    n = draw(st.integers(min_size, max_size))
    base = draw(st.floats(4.0, 40.0))
    jitter = draw(st.floats(0.0, 0.3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    frames = base * (1.0 + jitter * rng.standard_normal(n))
    frames = np.clip(frames, 0.5, None)
    k = draw(st.integers(0, max(0, n // 20)))
    spikes = rng.choice(n, size=k, replace=False) if k else np.array([], dtype=int)
    frames[spikes] *= rng.uniform(2.0, 10.0, size=k)
    for _ in range(draw(st.integers(0, 2))):
        frames[draw(st.integers(0, n - 1))] = draw(st.floats(200.0, 2000.0))
    if draw(st.booleans()):  # ties: a quantised run, as tools that print 2 decimals give
        frames = np.round(frames, 1)
    for extreme in draw(st.lists(st.sampled_from([0.001, 60000.0]), max_size=2)):
        frames[draw(st.integers(0, n - 1))] = extreme
    return np.round(frames, 3)


# --------------------------------------------------------------------------------------------
# Capture file texts
# --------------------------------------------------------------------------------------------

presentmon_intervals = st.one_of(
    st.just("NA"),
    st.integers(0, 99_999_999).map(str),
    st.tuples(st.integers(0, 9999), st.integers(1, 3)).map(
        lambda t: f"{t[0] / 10 ** t[1]:.{t[1]}f}"
    ),
    st.decimals(min_value=0, max_value=99_999, places=3, allow_nan=False).map(str),
)
"""MsBetweenPresents cells as PresentMon and hand edits write them, NA and odd widths included."""

_PM1_HEADER = ("Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,"
               "Dropped,TimeInSeconds,MsBetweenPresents,MsInPresentAPI")
_PM2_HEADER = ("Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,"
               "TimeInSeconds,MsBetweenPresents,MsInPresentAPI,MsUntilDisplayed")
_APPS = ["Game.exe", "dwm.exe", "steamwebhelper.exe", "Игра.exe", "Jogo Ação.exe"]


def _ms(value: float) -> str:
    return f"{value:.3f}"


@st.composite
def presentmon_texts(draw: st.DrawFn, frames: st.SearchStrategy[np.ndarray] | None = None
                     ) -> tuple[str, np.ndarray]:
    """(file text, the main group's frame times): a PresentMon 1.x (Dropped column) or 2.x (NA
    display cells for dropped frames) CSV whose main process has the most rows; other processes
    with fewer rows (NA intervals among them) are interleaved; optional BOM and CRLF."""
    main = draw(frames if frames is not None else frame_time_arrays(min_size=2, max_size=300))
    v2 = draw(st.booleans())
    groups: list[tuple[str, list[str]]] = [(f"{_APPS[0]},7124,0x1D5E3F2A070", [])]
    for i in range(draw(st.integers(0, 3))):
        app = draw(st.sampled_from(_APPS[1:]))
        size = draw(st.integers(1, max(1, main.size - 1)))
        if size >= main.size:
            break
        cells = draw(st.lists(st.one_of(st.just("NA"), st.floats(0.5, 100.0).map(_ms)),
                              min_size=size, max_size=size))
        groups.append((f"{app},{1000 + i},0x{0x2A70 + i:X}", cells))
    groups[0][1].extend(_ms(t) for t in main.tolist())
    rows: list[str] = []
    cursors = [0] * len(groups)
    t = 0.0
    while any(c < len(g[1]) for c, g in zip(cursors, groups)):
        live = [i for i, (c, g) in enumerate(zip(cursors, groups)) if c < len(g[1])]
        gi = draw(st.sampled_from(live))
        key, cells = groups[gi]
        cell = cells[cursors[gi]]
        cursors[gi] += 1
        t += 0.004
        dropped = draw(st.booleans()) and cell != "NA"
        if v2:
            shown = "NA" if dropped else "12.5000"
            rows.append(f"{key},DXGI,0,0,{t:.6f},{cell},0.372,{shown}")
        else:
            rows.append(f"{key},DXGI,0,0,{int(dropped)},{t:.6f},{cell},0.372")
    eol = draw(st.sampled_from(["\r\n", "\n"]))
    bom = "\ufeff" if draw(st.booleans()) else ""
    text = bom + eol.join([_PM2_HEADER if v2 else _PM1_HEADER, *rows]) + eol
    return text, main


@st.composite
def mangohud_texts(draw: st.DrawFn) -> tuple[str, np.ndarray]:
    """(file text, frame times): a per-frame MangoHud log (log_interval=0), with or without the
    versioned `v1` head, frametime in ms with 3 decimals and elapsed in ns."""
    frames = draw(frame_time_arrays(min_size=2, max_size=300))
    info = "os,cpu,gpu,ram,kernel,driver,cpuscheduler\nArch,Ryzen 7 5800X,RX 6800,32,6.9,Mesa,\n"
    head = ("v1\n0.7.2\n---------SYSTEM INFO---------\n" + info
            + "---------FRAME METRICS---------\n") if draw(st.booleans()) else info
    elapsed = np.cumsum([0.0, *frames.tolist()[1:]]) * 1e6
    lines = [f"{1000.0 / ft:.1f},{ft:.3f},10,20,{int(ns)}" for ft, ns in zip(frames.tolist(), elapsed)]
    return head + "fps,frametime,cpu_load,gpu_load,elapsed\n" + "\n".join(lines) + "\n", frames


@st.composite
def capframex_json_texts(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    """(file text, frame times of each run): a CapFrameX session with 1-3 runs, optional BOM."""
    runs = draw(st.lists(frame_time_arrays(max_size=200), min_size=1, max_size=3))
    session = {
        "Hash": draw(st.text("0123456789abcdef", min_size=8, max_size=8)),
        "Info": {"GPU": "RTX 4070", "Processor": "i5-13600K", "GameName": "Some Game"},
        "Runs": [
            {"CaptureData": {"TimeInSeconds": np.cumsum(r / 1000.0).tolist(),
                             "MsBetweenPresents": r.tolist(),
                             "Dropped": [False] * r.size},
             "SensorData2": None}
            for r in runs
        ],
    }
    bom = "\ufeff" if draw(st.booleans()) else ""
    return bom + json.dumps(session), runs


@st.composite
def lagged_gpu_run(draw: st.DrawFn) -> tuple[list[tuple[int, float] | None], dict[int, float]]:
    """Frame-stats gpu_ms lines as the engine writes them: each carries at most one not-yet-written
    time, of its own tick or one or two before; some times are never written."""
    n = draw(st.integers(2, 40))
    truth = draw(st.lists(st.floats(0.01, 50.0, allow_nan=False), min_size=n, max_size=n))
    lines: list[tuple[int, float] | None] = []
    written: dict[int, float] = {}
    for tick in range(n):
        lag = draw(st.one_of(st.none(), st.integers(0, 2)))
        measured = None if lag is None else tick - lag
        if measured is None or measured < 0 or measured in written:
            lines.append(None)
            continue
        written[measured] = truth[measured]
        lines.append((measured, truth[measured]))
    return lines, written


# --------------------------------------------------------------------------------------------
# card.yaml documents
# --------------------------------------------------------------------------------------------

_words = st.text(
    st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -:'"
                    "абвгдеёжзийклмнопрстуфхцчшщыэюяçãõéêáíóú"),
    min_size=1, max_size=24,
).filter(lambda s: s.strip() == s and s != "")
_cert_id = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,20}\Z")
_resolution = st.sampled_from(["1920x1080", "2560x1440", "3840x2160", "3440x1440", "1280x720"])
_sha256 = st.text("0123456789abcdef", min_size=64, max_size=64)


@st.composite
def run_entries(draw: st.DrawFn, index: int) -> dict[str, Any]:
    """One runs[] entry: the cohort fields, then `capture: captures/run<index>.csv` or a
    not_run reason; recorded runs sometimes carry an archived first capture and a Soft Limit."""
    upscaler = draw(st.sampled_from(["none", "DLSS", "FSR", "XeSS"]))
    entry: dict[str, Any] = {
        "title": draw(_words),
        "resolution": draw(_resolution),
        "preset": draw(st.sampled_from(["Low", "Medium", "High", "Ultra"])),
        "ray_tracing": draw(st.booleans()),
        "upscaler": upscaler,
        "upscaler_mode": None if upscaler == "none" else draw(
            st.sampled_from(["Quality", "Balanced", "Performance"])),
        "frame_generation": draw(st.booleans()),
    }
    if draw(st.integers(0, 4)) == 0:
        entry["not_run"] = draw(_words)
        return entry
    entry["capture"] = f"captures/run{index}.csv"
    if draw(st.booleans()):
        entry["first_capture"] = {"file": f"archive/run{index}-first.csv", "sha256": draw(_sha256)}
        entry["soft_limit"] = {"justification": draw(_words), "vrm_reexamination": draw(_words)}
    return entry


@st.composite
def cards(draw: st.DrawFn) -> dict[str, Any]:
    """A card.yaml mapping (as yaml.safe_load gives it) that validate_card accepts."""
    n = draw(st.integers(1, 6))
    issued = draw(st.dates())
    card = {
        "certificate": {
            "id": draw(_cert_id),
            "issued": issued.isoformat(),
            "sop": "SOP-GPU-001 v1.1",
            "languages": draw(st.lists(st.sampled_from(["en", "ru", "pt"]), min_size=1,
                                       max_size=3, unique=True)),
        },
        "customer": draw(_words),
        "card": {
            "vendor": draw(_words),
            "model": draw(_words),
            "gpu": draw(_words),
            "vram_gb": draw(st.one_of(st.integers(1, 48), st.sampled_from([1.5, 12.0, 24.0]))),
            "serial": draw(_words),
            "hardware_ray_tracing": draw(st.booleans()),
            "driver": draw(st.from_regex(r"\A[0-9]{3}\.[0-9]{2}\Z")),
        },
        "phase1": {"vrm_rail_resistance": draw(st.sampled_from(["pass", "fail", "pass: 2% of nominal"]))},
        "grade_cap": draw(st.one_of(st.none(), st.fixed_dictionaries(
            {"grade": st.sampled_from(["PLATINUM", "GOLD", "SILVER"]), "reason": _words}))),
        # The conditions a certificate must state (certgen.rules.conditions), so that a drawn card
        # is refused only for what the draw makes wrong.
        "test_system": {"cpu": draw(_words), "memory_gb": draw(st.sampled_from([16, 32, 64])),
                        "os": draw(_words), "motherboard": draw(_words),
                        "display": draw(_words)},
        "runs": [draw(run_entries(i)) for i in range(n)],
    }
    technician = draw(_words)
    for run in card["runs"]:
        if "capture" in run:
            run.update(tested_on=issued, technician=technician)
        if "first_capture" in run:
            run["first_capture"].update(tested_on=issued, technician=technician)
    return card


def card_files(card: dict[str, Any]) -> list[str]:
    """Every file a card names (captures and archived first captures), in run order."""
    files = []
    for run in card["runs"]:
        if "capture" in run:
            files.append(run["capture"])
        if "first_capture" in run:
            files.append(run["first_capture"]["file"])
    return files


@st.composite
def bundles(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, str]]:
    """(card.yaml mapping, {bundle path: file text}): a whole bundle, every file the card names
    a PresentMon capture (archived first captures too; their declared SHA-256 is random, so
    most re-run audits fail and the record carries refusals — both paths get rendered)."""
    card = draw(cards())
    # One plain PresentMon 1.x group per file: the readers' variety is drawn elsewhere
    # (presentmon_texts); here the frames matter, and drawing row by row would be slow.
    files = {}
    for name in card_files(card):
        frames = draw(frame_time_arrays(min_size=20, max_size=200))
        rows = [f"{_APPS[0]},7124,0x1D5E3F2A070,DXGI,0,0,0,{0.001 * i:.6f},{_ms(t)},0.372"
                for i, t in enumerate(frames.tolist())]
        files[name] = "\n".join([_PM1_HEADER, *rows]) + "\n"
    return card, files


def write_bundle(root: Path, bundle: tuple[dict[str, Any], dict[str, str]]) -> Path:
    """Write a drawn bundle into the folder `root` (created) and return it."""
    import yaml

    card, files = bundle
    root.mkdir(parents=True, exist_ok=True)
    (root / "card.yaml").write_text(yaml.safe_dump(card, allow_unicode=True, sort_keys=False),
                                    encoding="utf-8")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    return root


# --------------------------------------------------------------------------------------------
# lab.yaml and fleet rows
# --------------------------------------------------------------------------------------------

_lab_text = st.one_of(_words, st.fixed_dictionaries(
    {"en": _words}, optional={"ru": st.one_of(st.none(), _words),
                              "pt": st.one_of(st.none(), _words)}))


@st.composite
def labs(draw: st.DrawFn) -> dict[str, Any]:
    """A lab.yaml mapping (as yaml.safe_load gives it) that certgen.inputs.lab.parse_lab accepts."""
    lab: dict[str, Any] = {
        "name": draw(_words),
        "address": draw(_lab_text),
        "signatory": {"name": draw(_words), "role": draw(_lab_text)},
        "verification_base": "https://" + draw(st.sampled_from(
            ["certs.lab.ru", "lab.example.org/verify", "x.test/a/b", "verify.lab-1.com"])),
        "validity_months": draw(st.integers(1, 120)),
        "contact": draw(_words),
    }
    if draw(st.booleans()):
        lab["accreditation"] = {"body": draw(_words), "number": draw(_words)}
    if draw(st.booleans()):
        lab["specimen"] = draw(st.booleans())
    return lab


@st.composite
def fleet_rows(draw: st.DrawFn) -> dict[str, Any]:
    """One fleet JSON Lines object (certgen.fleet.JSONL_FIELDS, in order) a store imports:
    FPS figures to 1 decimal with F0.1% <= F1% <= F, g and s from them, S_F in 0-100; any
    figure may be null; frame_generation_mode "off" with frame generation off, else a mode or
    null (not stated)."""
    upscaler = draw(st.sampled_from(["none", "DLSS", "FSR", "XeSS"]))
    fps = sorted((round(draw(st.floats(0, 2000)), 1) for _ in range(3)), reverse=True)
    avg, low1, low01 = (None if draw(st.integers(0, 9)) == 0 else v for v in fps)
    g = round(1 - low1 / avg, 4) if avg and low1 is not None else None
    s = round(1 - low01 / low1, 4) if low1 and low01 is not None else None
    score = round(100 * (1 - (0.7 * g + 0.3 * s)), 2) if g is not None and s is not None else None
    frame_generation = draw(st.booleans())
    # "off" exactly when frame generation is off; on, a declared mode or null (not stated)
    mode = draw(st.one_of(st.none(), st.sampled_from([m for m in FRAME_GENERATION_MODES
                                                      if m != "off"]))) if frame_generation else "off"
    return {
        "certificate_id": draw(_cert_id), "run_index": draw(st.integers(0, 40)),
        "issued": draw(st.one_of(st.none(), st.dates().map(lambda d: d.isoformat()))),
        "card_model": draw(_words), "card_serial": draw(_words),
        "title": draw(_words), "resolution": draw(_resolution),
        "preset": draw(st.sampled_from(["Low", "Medium", "High", "Ultra"])),
        "ray_tracing": draw(st.booleans()), "upscaler": upscaler,
        "upscaler_mode": None if upscaler == "none" else draw(
            st.sampled_from(["Quality", "Balanced", "Performance"])),
        "frame_generation": frame_generation, "frame_generation_mode": mode,
        "fluidity_score": score, "consistency_gap": g, "stutter": s,
        "avg_fps": avg, "low_1pct_fps": low1, "low_0_1pct_fps": low01,
        "source": draw(st.sampled_from(["import", "record:sha256:" + "ab" * 32])),
    }
