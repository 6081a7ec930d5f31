"""The re-run audit: the archived first capture scored like a recorded one, and the refusals of
a first capture identical to the re-run and of one capture file backing two runs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pypdf
import pytest
from bundlekit import card, frames_for, run_cli, run_entry, sha256_of, write_card, write_presentmon
from conftest import CliBuild

from certgen.errors import RefusalError
from certgen.pipeline import make_record


def test_the_gold_samples_audit_shows_the_first_captures_own_stutter(
    gold_build: CliBuild,
) -> None:
    """99.0 / 79.9 / 29.0 FPS: s = 1 - 29.0 / 79.9 = 63.70 %, not the re-run's 61.10 %. The
    build is `certgen build` of GOLD with the sample lab, every language (the session's
    `gold_build`, tests/conftest.py)."""
    assert (gold_build.code, gold_build.stderr) == (0, "")
    folder = gold_build.folder
    record = json.loads((folder / "record.json").read_text())
    [first] = record["audit"]["first_captures"]
    assert first["metrics"]["avg_fps"] == 99.0
    assert first["metrics"]["low_1pct_fps"] == 79.9
    assert first["metrics"]["low_0_1pct_fps"] == 29.0
    assert first["metrics"]["stutter"] == 0.637
    assert first["rerun_reason"] == {"code": "stutter_over_rerun_line", "stutter": 0.637,
                                     "line": 0.6}
    assert record["runs"][5]["first_capture"]["metrics"] == first["metrics"]
    assert record["runs"][5]["metrics"]["stutter"] == 0.611
    own = {"en": "stutter 63.70%, above the re-run line of 60.00%",
           "ru": "величина фризов 63,70 % — выше порога повторного прогона 60,00 %",
           "pt": "magnitude de engasgo de 63,70%, acima da linha de nova execução de 60,00%"}
    for lang in ("en", "ru", "pt"):
        reader = pypdf.PdfReader(io.BytesIO((folder / f"certificate.{lang}.pdf").read_bytes()))
        text = " ".join(p.extract_text() for p in reader.pages).replace("\n", " ")
        text = text.replace("\u00a0", " ").replace("\u202f", " ")
        squeezed = text.replace(" ", "")
        assert own[lang].replace("\u00a0", " ").replace(" ", "") in squeezed, lang
        for figure in ("99,0" if lang != "en" else "99.0", "79,9" if lang != "en" else "79.9",
                       "29,0" if lang != "en" else "29.0"):
            assert figure in text, (lang, figure)
        assert first["sha256"] in squeezed


def _rerun_bundle(root: Path, *, first_is_recorded: bool = False, shared: bool = False) -> Path:
    recorded = write_presentmon(root / "captures/run1.csv", frames_for(100.0, 82.0, 31.9))
    write_presentmon(root / "captures/run0.csv", frames_for(120.0, 110.0, 100.0))
    runs = [run_entry("Game 0", capture="captures/run0.csv"),
            run_entry("Game 1", capture="captures/run1.csv")]
    if first_is_recorded:
        shutil.copy(recorded, root / "captures/run1-copy.csv")
        first_name = "captures/run1-copy.csv"
    else:
        write_presentmon(root / "archive/first.csv", frames_for(100.0, 80.0, 30.0))
        first_name = "archive/first.csv"
    runs[1]["first_capture"] = {"file": first_name, "sha256": sha256_of(root / first_name)}
    runs[1]["soft_limit"] = {"justification": "j", "vrm_reexamination": "pass"}
    if shared:
        runs.append(run_entry("Game 2", capture="captures/run0.csv"))
    return write_card(root, card(runs))


def test_a_first_capture_identical_to_the_recorded_capture_is_refused(tmp_path: Path) -> None:
    bundle = _rerun_bundle(tmp_path, first_is_recorded=True)
    sha = sha256_of(bundle / "captures/run1.csv")
    with pytest.raises(RefusalError) as err:
        make_record(bundle)
    assert err.value.reasons == [
        f"card.yaml: runs[1].first_capture: captures/run1-copy.csv is byte-identical to the "
        f"recorded capture captures/run1.csv (SHA-256 {sha}); the archived first capture must "
        "be the capture that was re-run, not the re-run itself",
    ]
    draft = make_record(bundle, draft=True)
    assert [d.code for d in draft.status.refusal_details] == ["first_capture_identical"]


def test_one_capture_file_backing_two_runs_is_refused(tmp_path: Path) -> None:
    bundle = _rerun_bundle(tmp_path, shared=True)
    sha = sha256_of(bundle / "captures/run0.csv")
    with pytest.raises(RefusalError) as err:
        make_record(bundle)
    assert err.value.reasons == [
        f"card.yaml: runs[2].capture: captures/run0.csv is the same capture (SHA-256 {sha}) as "
        "runs[0].capture captures/run0.csv; one capture file cannot back two runs",
    ]


def test_two_copies_of_one_capture_under_different_names_are_refused(tmp_path: Path) -> None:
    """The same bytes under another name are the same capture: compared by SHA-256, not path.
    A copy of run 0's capture is run 2's capture, and a copy of run 1's archived first capture
    is run 3's archived first capture."""
    bundle = _rerun_bundle(tmp_path)
    shutil.copy(bundle / "captures/run0.csv", bundle / "captures/run2.csv")
    write_presentmon(bundle / "captures/run3.csv", frames_for(118.0, 108.0, 98.0))
    shutil.copy(bundle / "archive/first.csv", bundle / "archive/first-copy.csv")
    first = sha256_of(bundle / "archive/first.csv")
    data = card([run_entry("Game 0", capture="captures/run0.csv"),
                 run_entry("Game 1", capture="captures/run1.csv",
                           first_capture={"file": "archive/first.csv", "sha256": first},
                           soft_limit={"justification": "j", "vrm_reexamination": "pass"}),
                 run_entry("Game 2", capture="captures/run2.csv"),
                 run_entry("Game 3", capture="captures/run3.csv",
                           first_capture={"file": "archive/first-copy.csv", "sha256": first})])
    write_card(bundle, data)
    run0 = sha256_of(bundle / "captures/run0.csv")
    with pytest.raises(RefusalError) as err:
        make_record(bundle)
    assert err.value.reasons == [
        f"card.yaml: runs[2].capture: captures/run2.csv is the same capture (SHA-256 {run0}) as "
        "runs[0].capture captures/run0.csv; one capture file cannot back two runs",
        f"card.yaml: runs[3].first_capture: archive/first-copy.csv is the same capture (SHA-256 "
        f"{first}) as runs[1].first_capture archive/first.csv; one capture file cannot back two "
        "runs",
    ]
    draft = make_record(bundle, draft=True)
    assert [(d.run, d.file, d.other_run, d.other_file)  # type: ignore[union-attr]
            for d in draft.status.refusal_details] == [
        (2, "captures/run2.csv", 0, "captures/run0.csv"),
        (3, "archive/first-copy.csv", 1, "archive/first.csv")]


def test_a_refused_draft_words_the_new_refusals_in_each_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _rerun_bundle(tmp_path / "b", first_is_recorded=True, shared=True)
    out = tmp_path / "out"
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(out), "--draft",
                               "--lang", "en,ru,pt", "--jobs", "1"], capsys)
    assert (code, stderr) == (0, "")
    expected = {
        "en": ("is byte-identical to the recorded capture", "one capture file cannot back two runs"),
        "ru": ("побайтно совпадает с\u00a0записью прогона", "не может подтверждать два прогона"),
        "pt": ("é idêntica, byte a byte, à captura registrada", "não pode sustentar duas execuções"),
    }
    for lang, phrases in expected.items():
        # The wording, not where the typography put its no-break spaces.
        html = (out / "TEST-0001" / f"certificate.{lang}.html").read_text(encoding="utf-8")
        for phrase in phrases:
            assert phrase.replace("\u00a0", " ") in html.replace("\u00a0", " "), (lang, phrase)
