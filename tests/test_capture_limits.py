"""The capture minimum and the capture age (issue 39, items 2 and 3; docs/spec/rules.md).

An 18-frame capture is not issuable (one line naming the run, its frames and seconds and the
minimum); a capture dated long before issue likewise (field and dates); a lab may raise the
minimum and set its own age, never lower the minimum; a --draft states it on page 1 and every
chip the runs table prints is defined in the Terms box.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import pytest
import yaml
from bundlekit import card, frames_for, run_cli, run_entry, sha256_of, write_card, write_presentmon
from issuablekit import SAMPLE_LAB, html_only
from realdata import REAL

from certgen.errors import LabError
from certgen.inputs.lab import parse_lab
from certgen.metrics.diagnostics import TOO_SHORT_FRAMES
from certgen.pipeline import check_bundle
from certgen.rules.completeness import Extent, below_minimum
from certgen.sop.capture_limits import DEFAULT_LIMITS, CaptureLimits

CASE_3 = "PresentMon-2.5_test_case_3.csv"
CASE_5 = "test_case_5.csv"


def _issue_bundle(root: Path, **tested_on: dt.date) -> Path:
    """The issue's bundle: PresentMon 2.5 test_case_3 (18 frames, 0.3 s) and test_case_5 (258
    frames, 2.9 s), which signed GOLD 93.11 before."""
    (root / "captures").mkdir(parents=True)
    for name in (CASE_3, CASE_5):
        shutil.copyfile(REAL / name, root / "captures" / name)
    runs = [run_entry("Case 3", "1920x1080", capture=f"captures/{CASE_3}",
                      tested_on=tested_on.get("case_3", dt.date(2026, 11, 28))),
            run_entry("Case 5", "1920x1080", capture=f"captures/{CASE_5}",
                      tested_on=tested_on.get("case_5", dt.date(2026, 11, 28)))]
    return write_card(root, card(runs))


def test_the_defaults_and_the_frames_they_mean() -> None:
    assert (DEFAULT_LIMITS.min_seconds, DEFAULT_LIMITS.min_k_0_1pct,
            DEFAULT_LIMITS.max_age_days) == (20.0, 2, 180)
    assert DEFAULT_LIMITS.min_frames == 1001
    assert CaptureLimits(min_k_0_1pct=8).min_frames == 7001
    # k0.1 = ceil(N / 1000): 1,000 frames is one frame's "mean", 1,001 is two.
    assert below_minimum(Extent(frames=1000, seconds=60.0), DEFAULT_LIMITS)
    assert not below_minimum(Extent(frames=1001, seconds=20.0), DEFAULT_LIMITS)
    assert below_minimum(Extent(frames=5000, seconds=19.9), DEFAULT_LIMITS)
    # A capture certgen grades is never one `compare` calls too short to read (one threshold
    # family: compare's own limit is not duplicated, the minimum lies above it).
    assert DEFAULT_LIMITS.min_frames > TOO_SHORT_FRAMES


def test_an_18_frame_capture_is_not_issuable_in_one_line_naming_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(["check", str(_issue_bundle(tmp_path / "b"))], capsys)
    assert code == 1
    assert out.splitlines()[-1] == "refused (2 reasons, on stderr)"
    lines = err.splitlines()
    assert lines[0] == (
        f"certgen: card.yaml: runs[0].capture: run \"Case 3 1920x1080\": captures/{CASE_3} is "
        "incomplete: 18 frames over 0.3 s; a graded capture needs at least 20 s and 1001 frames "
        "(the 0.1% low the mean of at least 2 frames); re-run the configuration (the SOP's "
        "re-run rule): the re-run is the recorded run and this capture its archived "
        "first_capture")
    assert lines[1].startswith(f"certgen: card.yaml: runs[1].capture: run \"Case 5 1920x1080\": "
                               f"captures/{CASE_5} is incomplete: 258 frames over 2.9 s;")
    assert len(lines) == 2


def test_a_re_run_still_below_the_minimum_cannot_be_graded(tmp_path: Path) -> None:
    """The SOP re-runs once: a re-run below the minimum too is refused, and the archived first
    capture's own shortfall is the reason it was re-run."""
    root = tmp_path / "b"
    (root / "captures").mkdir(parents=True)
    (root / "archive").mkdir()
    shutil.copyfile(REAL / CASE_3, root / "captures" / CASE_3)
    shutil.copyfile(REAL / CASE_5, root / "archive" / CASE_5)
    run = run_entry("Case 3", "1920x1080", capture=f"captures/{CASE_3}",
                    first_capture={"file": f"archive/{CASE_5}",
                                   "sha256": sha256_of(root / "archive" / CASE_5)})
    record = check_bundle(write_card(root, card([run]))).record
    [refusal] = record.status.refusal_details
    assert refusal.code == "capture_too_short" and refusal.rerun is True  # type: ignore[union-attr]
    assert record.status.refusals[0].endswith(
        "the configuration was re-run and the re-run is incomplete too, so it cannot be graded "
        "under the SOP's re-run rule")
    first = record.runs[0].first_capture
    assert first is not None and first.rerun_reason is not None
    assert first.rerun_reason.code == "incomplete"
    assert first.rerun_reason.reason == (
        "258 frames over 2.9 s, below the minimum to be graded (at least 20 s and 1001 frames "
        "(the 0.1% low the mean of at least 2 frames))")


def test_a_capture_dated_long_before_issue_is_not_issuable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "b"
    write_presentmon(root / "captures/a.csv", frames_for(120.0, 100.0, 90.0))
    data = card([run_entry("Game", capture="captures/a.csv", tested_on=dt.date(2019, 2, 20))])
    code, out, err = run_cli(["check", str(write_card(root, data))], capsys)
    assert code == 1 and out.splitlines()[-1] == "refused (1 reasons, on stderr)"
    assert err.splitlines() == [
        "certgen: card.yaml: runs[0].tested_on: 2019-02-20 is 2839 days before the issue date "
        "2026-11-29 (certificate.issued); a capture may be at most 180 days old when its "
        "certificate is issued (lab.yaml max_capture_age_days)"]


def test_the_date_a_capture_records_is_held_to_the_age_too(tmp_path: Path) -> None:
    root = tmp_path / "b"
    (root / "captures").mkdir(parents=True)
    shutil.copyfile(REAL / "CapFrameXFileWithHeader.csv", root / "captures" / "cx.csv")
    data = card([run_entry("RE2", capture="captures/cx.csv", tested_on=dt.date(2026, 11, 20),
                           provenance_note="recorded on another bench")],
                card={"vendor": "NVIDIA", "model": "GeForce RTX 2080 Ti", "gpu": "TU102",
                      "vram_gb": 11, "serial": "S", "hardware_ray_tracing": True,
                      "driver": "418.91"})
    record = check_bundle(write_card(root, data)).record
    [old] = [d for d in record.status.refusal_details if d.code == "capture_too_old"]
    assert (old.field, old.date, old.issued, old.days, old.max_days) == (  # type: ignore[union-attr]
        "capture", "2019-03-30", "2026-11-29", 2801, 180)


def _lab(tmp_path: Path, extra: str) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(SAMPLE_LAB.read_text(encoding="utf-8") + extra, encoding="utf-8")
    return path


def test_a_lab_raises_the_minimum_and_sets_its_own_age(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    root = tmp_path / "b"
    write_presentmon(root / "captures/a.csv", frames_for(100.0, 90.0, 80.0, n=3000))  # 30 s
    data = card([run_entry("Game", capture="captures/a.csv", tested_on=dt.date(2026, 9, 1))])
    bundle = write_card(root, data)
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert (code, err) == (0, "")
    lab = _lab(tmp_path, "capture_minimum: {seconds: 40, k_0_1pct: 5}\nmax_capture_age_days: 30\n")
    code, _, err = run_cli(["check", str(bundle), "--lab", str(lab)], capsys)
    assert code == 1
    assert err.splitlines() == [
        "certgen: card.yaml: runs[0].capture: run \"Game 2560x1440\": captures/a.csv is "
        "incomplete: 3000 frames over 30 s; a graded capture needs at least 40 s and 4001 frames "
        "(the 0.1% low the mean of at least 5 frames); re-run the configuration (the SOP's "
        "re-run rule): the re-run is the recorded run and this capture its archived "
        "first_capture",
        "certgen: card.yaml: runs[0].tested_on: 2026-09-01 is 89 days before the issue date "
        "2026-11-29 (certificate.issued); a capture may be at most 30 days old when its "
        "certificate is issued (lab.yaml max_capture_age_days)"]
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--lab",
                            str(lab)], capsys)
    assert code == 1 and "is incomplete: 3000 frames over 30 s" in err
    # check reads $CERTGEN_LAB as build does, so the two agree without --lab too.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CERTGEN_LAB", str(lab))
        code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1 and "is incomplete: 3000 frames over 30 s" in err


@pytest.mark.parametrize(("extra", "message"), [
    ("capture_minimum: {seconds: 10}\n",
     "capture_minimum.seconds: expected at least certgen's default of 20 s (a laboratory may "
     "raise the capture minimum, never lower it), got '10'"),
    ("capture_minimum: {k_0_1pct: 1}\n",
     "capture_minimum.k_0_1pct: expected at least certgen's default of 2 (a laboratory may "
     "raise the capture minimum, never lower it), got '1'"),
])
def test_a_lab_may_never_lower_the_minimum(tmp_path: Path, extra: str, message: str) -> None:
    data = (SAMPLE_LAB.read_text(encoding="utf-8") + extra).encode()
    with pytest.raises(LabError) as info:
        parse_lab(data, source="lab.yaml")
    assert info.value.errors == (f"lab.yaml: {message}",)


def test_a_draft_states_it_on_page_1_and_the_terms_box_defines_every_chip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    html_only(monkeypatch)
    bundle = _issue_bundle(tmp_path / "b")
    data = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    data["certificate"]["languages"] = ["en", "ru", "pt"]
    (bundle / "card.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--draft",
                            "--lab", str(SAMPLE_LAB)], capsys)
    assert code == 0, err
    folder = tmp_path / "o" / "TEST-0001"
    words = {"en": ("holds 18 frames over 0.3 s, below the minimum to be graded",
                    "below the capture minimum", "Below the capture minimum"),
             "ru": ("18 кадров за 0,3 с — меньше минимума для оценки", "ниже минимума записи",
                    "Ниже минимума записи"),
             "pt": ("tem 18 quadros em 0,3 s, abaixo do mínimo para ser avaliada",
                    "abaixo do mínimo de captura", "Abaixo do mínimo de captura")}
    for lang, (refusal, chip, term) in words.items():
        html = (folder / f"certificate.{lang}.html").read_text("utf-8").replace("\u00a0", " ")
        # Page 1's refusal list (the status box before the grade's reasoning) states it.
        status = html[:html.index('<ul class="refusals">') + 4000]
        assert refusal in status, lang
        # Every chip the runs table prints is a term of the Terms box.
        chips = set(re.findall(r'<span class="flag(?: warn)?">([^<0-9]+?)</span>', html))
        glossary = html[html.index('<div class="glossary">'):]
        terms = {t.strip().lower() for t in re.findall(r"<dt>([^<]+)</dt>", glossary)}
        assert chip in chips and term in glossary, lang
        assert {c.strip().lower() for c in chips} <= terms, (lang, chips, terms)
