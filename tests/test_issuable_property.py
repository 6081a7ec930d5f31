"""Issuable ⇒ builds ⇒ re-renders, as a property (issue 39, item 1).

Hypothesis draws a card.yaml across its optional space (display_timing fixed and VRR with a
presentation, first_capture with a right or wrong SHA-256, not_run, grade_cap, provenance notes,
soft_limit, frame generation and upscalers, per-language texts, game and tool versions, test
conditions left out, runs tested long before issue) over captures of every supported format
(tests/issuablekit.capture_text, long enough to grade or not) and every real file in
../shared/captures/real, and asserts:

- `certgen check --lab` is issuable exactly when `certgen build --lab` exits 0; each exits 0 or
  1, never with a traceback (a template error is exit 70 and fails this);
- a bundle the build refuses still builds as a --draft;
- every built record reads back to the same bytes, and re-renders to the same HTML in en, ru and
  pt (the verify path, without signing); for a small drawn subset, to the same PDF bytes.

PDFs are rendered only for the drawn subset (a WeasyPrint render costs seconds); otherwise the
build's PDF step is a stand-in (issuablekit.html_only). The budget is modest (`max_examples`);
`HYPOTHESIS_PROFILE=long` draws more. Each failure it found is a named test in
tests/test_issuable_builds.py.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from bundlekit import run_cli
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from issuablekit import FORMAT_IDS, SAMPLE_LAB, capture_text, html_only
from realdata import REAL

from certgen.inputs.lab import load_lab
from certgen.record import dump_record, load_record
from certgen.render.certificate import render_certificate_html, render_certificate_pdf

ISSUED = dt.date(2026, 11, 29)
LANGS = ("en", "ru", "pt")
REAL_NAMES = sorted(p.name for p in REAL.iterdir() if p.suffix == ".csv")
"""Every real capture in ../shared (all CSV: PresentMon 1.x and 2.x, OCAT, CapFrameX)."""

_word = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz ABCDEFXYZ0123456789-"
                                "абвгдежзиклмнопрстуфэюяçãõéáíóú"),
                min_size=1, max_size=18).map(str.strip).filter(bool)
_sentence = st.lists(_word, min_size=1, max_size=6).map(" ".join)


def _local(text: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """A lab's text: a plain string, or per language (at least one given)."""
    return st.one_of(text, st.lists(st.sampled_from(LANGS), min_size=1, max_size=3,
                                    unique=True).flatmap(
        lambda langs: st.fixed_dictionaries({lang: text for lang in langs})))


@st.composite
def _capture(draw: st.DrawFn, gpu: str, day: dt.date) -> tuple[str, bytes]:
    """(file name suffix, bytes): a real file of ../shared, or a synthetic capture of any format,
    either long enough to grade (20-40 s) or not (1-19 s)."""
    if draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from(REAL_NAMES))
        return name, (REAL / name).read_bytes()
    fmt = draw(st.sampled_from(FORMAT_IDS))
    fps = draw(st.sampled_from([45.0, 60.0, 90.0, 144.0]))
    seconds = draw(st.one_of(st.integers(20, 40), st.integers(1, 19)))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    n = int(fps * seconds)
    base = 1000.0 / fps
    frames = base * (1 + 0.08 * rng.standard_normal(n)).clip(0.5, 3.0)
    spikes = rng.random(n) < draw(st.sampled_from([0.0, 0.002, 0.02]))
    frames[spikes] *= rng.uniform(2.5, 6.0, int(spikes.sum()))
    values = [round(float(v), 3) for v in frames]
    suffix = ".json" if fmt == "capframex-json" else ".jsonl" if fmt == "frame-stats" else ".csv"
    return f"{fmt}{suffix}", capture_text(fmt, values, gpu=gpu, day=day).encode()


def _day(draw: st.DrawFn) -> dt.date:
    """A test day: mostly within the last month, sometimes long before issue (refused)."""
    old = draw(st.integers(0, 9)) == 0
    return ISSUED - dt.timedelta(days=draw(st.integers(181, 3000) if old else st.integers(0, 30)))


@st.composite
def bundles(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(card.yaml mapping, {path in the bundle: bytes})."""
    gpu = draw(st.sampled_from(["Example GPU 8G", "GeForce RTX 2080 Ti"]))
    files: dict[str, bytes] = {}
    runs = []
    for i in range(draw(st.integers(1, 4))):
        upscaler = draw(st.sampled_from(["none", "DLSS", "FSR", "XeSS"]))
        run: dict[str, Any] = {
            "title": draw(st.sampled_from(["Cyberpunk 2077", "DOOM Eternal", "Игра", "Jogo"])),
            "resolution": draw(st.sampled_from(["1920x1080", "2560x1440", "3840x2160"])),
            "preset": draw(st.sampled_from(["High", "Ultra"])),
            "ray_tracing": draw(st.booleans()),
            "upscaler": upscaler,
            "upscaler_mode": None if upscaler == "none" else draw(
                st.sampled_from(["Quality", "Performance"])),
            "frame_generation": draw(st.booleans()),
        }
        if draw(st.integers(0, 4)) == 0:
            run["not_run"] = draw(_local(_sentence))
            runs.append(run)
            continue
        day = _day(draw)
        suffix, data = draw(_capture(gpu, day))
        path = f"captures/run{i}-{suffix}"
        files[path] = data
        run["capture"] = path
        if draw(st.integers(0, 19)):  # rarely left out: a condition missing
            run["tested_on"] = day
        if draw(st.integers(0, 19)):
            run["technician"] = draw(_word)
        for key, text in (("game_version", _word), ("tool_version", _word),
                          ("provenance_note", _local(_sentence))):
            if draw(st.booleans()):
                run[key] = draw(text)
        if draw(st.integers(0, 3)) == 0:
            first_suffix, first_data = draw(_capture(gpu, day))
            first_path = f"archive/run{i}-first-{first_suffix}"
            files[first_path] = first_data
            right = hashlib.sha256(first_data).hexdigest()
            run["first_capture"] = {
                "file": first_path,
                "sha256": right if draw(st.integers(0, 5)) else "0" * 64,
                "tested_on": day, "technician": draw(_word)}
        if draw(st.integers(0, 2)) == 0:
            run["soft_limit"] = {"justification": draw(_local(_sentence)),
                                 "vrm_reexamination": draw(_local(_sentence))}
        runs.append(run)
    bench: dict[str, Any] = {"cpu": "Example 8-core CPU", "memory_gb": 32, "os": "Windows 11",
                             "motherboard": "Example board", "display": "27-inch monitor"}
    timing = draw(st.sampled_from(["none", "fixed", "vrr"]))
    hz = draw(st.sampled_from([60, 144, 165, 240]))
    if timing == "fixed":
        bench["display_timing"] = {"refresh_hz": hz, "vrr": "none"}
    elif timing == "vrr":
        bench["display_timing"] = {"refresh_hz": hz, "vrr": {"min_hz": 48, "max_hz": hz}}
    if timing != "none" and draw(st.booleans()):
        bench["display_timing"]["presentation"] = draw(st.sampled_from(["fullscreen",
                                                                       "windowed"]))
    bench["notes"] = draw(st.one_of(st.none(), _local(_sentence)))
    if draw(st.integers(0, 19)) == 0:
        del bench["display"]  # a condition missing: refused, a draft builds
    card = {
        "certificate": {"id": "LAB-2026-0001", "issued": ISSUED, "sop": "SOP-GPU-001 v1.1",
                        "languages": draw(st.lists(st.sampled_from(LANGS), min_size=1,
                                                   max_size=3, unique=True))},
        "customer": draw(_sentence),
        "card": {"vendor": "Example", "model": gpu, "gpu": "Example die", "vram_gb": 8,
                 "serial": "EX-1", "hardware_ray_tracing": True, "driver": "566.14"},
        "phase1": {"vrm_rail_resistance": draw(st.one_of(st.sampled_from(["pass", "fail"]),
                                                         _local(_sentence)))},
        "grade_cap": draw(st.one_of(st.none(), st.fixed_dictionaries({
            "grade": st.sampled_from(["PLATINUM", "GOLD", "SILVER"]),
            "reason": _local(_sentence)}))),
        "test_system": bench,
        "runs": runs,
    }
    return card, files


def _write(root: Path, card: dict[str, Any], files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True)
    (root / "card.yaml").write_text(yaml.safe_dump(card, sort_keys=False, allow_unicode=True),
                                    encoding="utf-8")
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def _rerenders(folder: Path, *, pdf: bool) -> None:
    """The built record reads back byte for byte and renders the same HTML in every language
    built (and, with `pdf`, the same PDF): what verify re-renders, without the signature."""
    record_bytes = (folder / "record.json").read_bytes()
    record = load_record(record_bytes)
    assert dump_record(record) == record_bytes
    sha = hashlib.sha256(record_bytes).hexdigest()
    base = load_lab(SAMPLE_LAB).lab.verification_base
    for lang in LANGS:
        html = render_certificate_html(record, lang, record_sha256=sha, verify_base=base,
                                       languages=LANGS)
        assert html.encode("utf-8") == (folder / f"certificate.{lang}.html").read_bytes(), lang
        if pdf:
            assert render_certificate_pdf(html, record, record_bytes, lang) == (
                folder / f"certificate.{lang}.pdf").read_bytes(), lang


def _reported_case() -> tuple[dict[str, Any], dict[str, bytes]]:
    """The issue's case, always tried first: display_timing over a real OCAT capture (no CPU or
    GPU busy columns), which made every build exit 1 (`No first item, sequence was empty.`)."""
    name = "OCAT-MetroExodus.exe-2019-02-20T101522.csv"
    run = {"title": "Metro Exodus", "resolution": "2560x1440", "preset": "Ultra",
           "ray_tracing": False, "upscaler": "none", "upscaler_mode": None,
           "frame_generation": False, "capture": f"captures/{name}",
           "tested_on": ISSUED - dt.timedelta(days=3), "technician": "T. Tester",
           "provenance_note": "The OCAT file words the bench its own way."}
    card = {
        "certificate": {"id": "LAB-2026-0001", "issued": ISSUED, "sop": "SOP-GPU-001 v1.1",
                        "languages": list(LANGS)},
        "customer": "A new laboratory's customer",
        "card": {"vendor": "NVIDIA", "model": "GeForce RTX 2080 Ti", "gpu": "TU102",
                 "vram_gb": 11, "serial": "EX-1", "hardware_ray_tracing": True,
                 "driver": "418.77"},
        "phase1": {"vrm_rail_resistance": "pass"}, "grade_cap": None,
        "test_system": {"cpu": "Intel Core i9-9900K", "memory_gb": 32, "os": "Windows 10 Pro",
                        "motherboard": "MSI MPG Z390 GAMING PRO CARBON",
                        "display": "27-inch 144 Hz monitor",
                        "display_timing": {"refresh_hz": 144, "vrr": "none"}},
        "runs": [run],
    }
    return card, {f"captures/{name}": (REAL / name).read_bytes()}


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(bundle=bundles(), pdf=st.integers(0, 7).map(lambda k: k == 0))
@example(bundle=_reported_case(), pdf=False)
def test_check_issuable_iff_build_exits_0_and_the_record_re_renders(
    bundle: tuple[dict[str, Any], dict[str, bytes]], pdf: bool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    card, files = bundle
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        if not pdf:
            html_only(mp)
        root = _write(Path(tmp) / "b", copy.deepcopy(card), files)
        checked, _, check_err = run_cli(["check", str(root), "--lab", str(SAMPLE_LAB)], capsys)
        out = Path(tmp) / "out"
        built, _, build_err = run_cli(["build", str(root), "--out", str(out), "--lab",
                                       str(SAMPLE_LAB), "--lang", "en,ru,pt"], capsys)
        assert checked in (0, 1) and built in (0, 1), (check_err, build_err)
        assert "Traceback" not in check_err + build_err, (check_err, build_err)
        assert (checked == 0) == (built == 0), (check_err, build_err)
        event("issuable" if checked == 0 else "refused")
        if built != 0:
            # Refused for issue: a draft still builds, marked not issuable.
            built, _, build_err = run_cli(["build", str(root), "--out", str(out), "--lab",
                                           str(SAMPLE_LAB), "--lang", "en,ru,pt", "--draft"],
                                          capsys)
            assert built == 0, build_err
        _rerenders(out / "LAB-2026-0001", pdf=pdf)
