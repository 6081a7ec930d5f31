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
