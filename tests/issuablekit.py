"""Bundles a new lab would write, around any capture (issue 39): the helpers of
tests/test_issuable_builds.py and tests/test_issuable_property.py.

- `real_card(...)`: a card.yaml mapping for real captures, stating what they record (the GPU they
  name as the card's model, the bench they name) with a provenance note for the rest, so a
  refusal comes only from what a test makes wrong;
- `html_only(monkeypatch)`: `certgen build` without WeasyPrint (the PDF step returns a stand-in),
  for the tests whose point is the build's exit code and HTML, not the PDF;
- `check_and_build(bundle, out, capsys)`: `certgen check`'s exit and `certgen build`'s, under the
  examples' lab.
"""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from bundlekit import run_cli

import certgen.builders.certificate
from certgen.api import read_capture

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_LAB = ROOT / "examples" / "lab.yaml"

STAND_IN_PDF = b"%PDF-1.7\n% a stand-in: this test renders no PDF\n"

ISSUED = dt.date(2026, 11, 29)


def html_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Builds in this process render HTML only: every PDF is a stand-in (a WeasyPrint render costs
    seconds, and these tests are about the build's exit and its HTML)."""
    monkeypatch.setattr(certgen.builders.certificate, "render_certificate_pdf",
                        lambda html, record, record_bytes, lang: STAND_IN_PDF)


def recorded_of(path: Path) -> dict[str, Any]:
    """What the one capture in `path` records about the system (`recorded` of metrics --json)."""
    [capture] = read_capture(path)
    return capture.recorded.model_dump()


def real_card(captures: list[str], *, display_timing: dict[str, Any] | None = None,
              recorded: dict[str, Any] | None = None, issued: dt.date = ISSUED,
              tested_on: dt.date | None = None) -> dict[str, Any]:
    """A card.yaml mapping with one run per capture (captures/<name>), stating the GPU the
    captures record as the card's model (else an example name), the bench, and a provenance
    note for what the capture records that card.yaml words otherwise."""
    rec = recorded or {}
    gpu = rec.get("gpu") or "Example GPU"
    data: dict[str, Any] = {
        "certificate": {"id": "LAB-2026-0001", "issued": issued,
                        "sop": "SOP-GPU-001 v1.1", "languages": ["en", "ru", "pt"]},
        "customer": "A new laboratory's customer",
        "card": {"vendor": "Example", "model": gpu, "gpu": "Example die", "vram_gb": 11,
                 "serial": "EX-0001", "hardware_ray_tracing": True, "driver": "418.77"},
        "phase1": {"vrm_rail_resistance": "pass"},
        "grade_cap": None,
        "test_system": {"cpu": "Example 8-core CPU", "memory_gb": 32, "os": "Windows 10 Pro",
                        "motherboard": "Example board", "display": "Example 27-inch monitor"},
        "runs": [],
    }
    if display_timing is not None:
        data["test_system"]["display_timing"] = copy.deepcopy(display_timing)
    for i, name in enumerate(captures):
        data["runs"].append({
            "title": f"Game {i}", "resolution": "2560x1440", "preset": "Ultra",
            "ray_tracing": False, "upscaler": "none", "upscaler_mode": None,
            "frame_generation": False, "capture": f"captures/{name}",
            "tested_on": tested_on or issued, "technician": "T. Tester",
            "provenance_note": "The capture tool words the bench's driver, OS, CPU, memory and "
                               "board its own way; this capture was made on this bench.",
        })
    return data


def check_and_build(bundle: Path, out: Path, capsys: pytest.CaptureFixture[str],
                    *extra: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(`certgen check BUNDLE --lab`, `certgen build BUNDLE --out OUT --lab`): each (exit, out,
    err), under the examples' sample lab."""
    checked = run_cli(["check", str(bundle), "--lab", str(SAMPLE_LAB)], capsys)
    built = run_cli(["build", str(bundle), "--out", str(out), "--lab", str(SAMPLE_LAB),
                     *extra], capsys)
    return checked, built


# --- a capture of every supported format, from frame times -----------------------------------

FORMAT_IDS = ("presentmon", "presentmon-2", "ocat", "frameview", "capframex-csv",
              "capframex-json", "mangohud", "frame-stats", "bench-csv")
"""Every supported format (presentmon twice: the 1.x and the 2.x layout)."""


def _ms(values: list[float]) -> list[str]:
    return [f"{v:.3f}" for v in values]


def capture_text(fmt: str, frames: list[float], *, gpu: str, day: dt.date) -> str:
    """A capture of `fmt` holding `frames` (ms, 3 decimals) of one game, in the tool's layout.
    It records no system values but the GPU (FrameView, CapFrameX) and the capture date
    (CapFrameX), so that what a card states is held against something of each kind."""
    cells = _ms(frames)
    if fmt == "presentmon":
        rows = ["Application,ProcessID,SwapChainAddress,Runtime,Dropped,TimeInSeconds,"
                "MsBetweenPresents"]
        t = 0.0
        for c, v in zip(cells, frames):
            t += v / 1000
            rows.append(f"Game.exe,4242,0x1,DXGI,0,{t:.6f},{c}")
        return "\n".join(rows) + "\n"
    if fmt == "presentmon-2":
        rows = ["Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,"
                "AllowsTearing,PresentMode,FrameType,CPUStartTime,MsBetweenPresents,"
                "MsBetweenDisplayChange,MsUntilDisplayed,MsCPUBusy,MsCPUWait,MsGPUBusy,"
                "MsPCLatency"]
        t = 0.0
        for c, v in zip(cells, frames):
            rows.append(f"Game.exe,4242,0x1,DXGI,0,0,0,Hardware: Independent Flip,Application,"
                        f"{t:.4f},{c},{c},2.000,{v * 0.4:.3f},{v * 0.1:.3f},{v * 0.8:.3f},"
                        f"{v * 2 + 5:.3f}")
            t += v
        return "\r\n".join(rows) + "\r\n"
    if fmt == "ocat":
        rows = ["Application,ProcessID,SwapChainAddress,Runtime,Dropped,TimeInSeconds,"
                "MsBetweenPresents,MsBetweenDisplayChange,Motherboard"]
        t = 0.0
        for i, (c, v) in enumerate(zip(cells, frames)):
            t += v / 1000
            rows.append(f"Game.exe,4242,0x1,DXGI,0,{t:.6f},{c},{c}" + (",Example board" if i == 0
                                                                         else ","))
        return "\n".join(rows) + "\n"
    if fmt == "frameview":
        rows = ["Application,GPU,CPU,Resolution,Runtime,ProcessID,SwapChainAddress,Dropped,"
                "TimeInSeconds,MsBetweenPresents,MsBetweenDisplayChange,MsUntilDisplayed,"
                "MsPCLatency,PCAT Power Total(W),GPU0Temp(C),GPU0Clk(MHz)"]
        t = 0.0
        for c, v in zip(cells, frames):
            t += v / 1000
            rows.append(f"Game.exe,{gpu},Example CPU,2560x1440,DXGI,4242,0x1,0,{t:.6f},{c},{c},"
                        f"2.000,1844674407371036.8,210.5,65,2500")  # every latency wrapped
        return "\r\n".join(rows) + "\r\n"
    if fmt == "capframex-csv":
        head = [f"//GPU={gpu}", f"//CreationDate={day.isoformat()}", "//CreationTime=10:00:00"]
        rows = ["Application,ProcessID,SwapChainAddress,Dropped,TimeInSeconds,MsBetweenPresents"]
        t = 0.0
        for c, v in zip(cells, frames):
            t += v / 1000
            rows.append(f"Game.exe,4242,0x1,0,{t:.6f},{c}")
        return "\n".join(head + rows) + "\n"
    if fmt == "capframex-json":
        import json

        times, t = [], 0.0
        for v in frames:
            t += v / 1000
            times.append(round(t, 6))
        return json.dumps({"Info": {"GPU": gpu, "CreationDate": f"{day.isoformat()}T10:00:00"},
                           "Runs": [{"CaptureData": {"TimeInSeconds": times,
                                                     "MsBetweenPresents": [float(c) for c in cells],
                                                     "Dropped": [False] * len(cells)}}]})
    if fmt == "mangohud":
        rows = ["fps,frametime,cpu_load,gpu_load,elapsed"]
        elapsed = 0.0
        for i, (c, v) in enumerate(zip(cells, frames)):
            if i:
                elapsed += v
            rows.append(f"{1000 / v:.1f},{c},10,20,{int(elapsed * 1e6)}")
        return "\n".join(rows) + "\n"
    if fmt == "frame-stats":
        lines = ['{"schema_version":1,"tick":0,"t_ms":0.000,"sim_ms":0.010,"submit_ms":1.000,'
                 '"gpu_ms":null,"gpu_tick":null,"present_interval_ms":null,"kind":"full",'
                 '"size":[2560,1440],"device":"desktop","hud_ms":null}']
        t = 0.0
        for tick, (c, v) in enumerate(zip(cells, frames), start=1):
            t += v
            lines.append(f'{{"schema_version":1,"tick":{tick},"t_ms":{t:.3f},"sim_ms":0.010,'
                         f'"submit_ms":1.000,"gpu_ms":{v * 0.8:.3f},"gpu_tick":{tick},'
                         f'"present_interval_ms":{c},"kind":"full","size":[2560,1440],'
                         f'"device":"desktop","hud_ms":null}}')
        lines.append(f'{{"schema_version":1,"end":true,"frames":{len(cells) + 1},"dropped":0}}')
        return "\n".join(lines) + "\n"
    if fmt == "bench-csv":
        return "side,kind,name,value\n" + "".join(f"before,frame,,{c}\n" for c in cells)
    raise ValueError(fmt)
