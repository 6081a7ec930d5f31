"""Rules versions coexist: a bundle grades by the SOP it names, and its record pins the file.

tests/data/sop/sop-gpu-001-v1.2-test.yaml is a test rules file with other weights and grade
lines (never shipped), found through CERTGEN_RULES_PATH. The same captures grade SILVER under
SOP-GPU-001 v1.1 and GOLD under the test rules; both are loadable side by side, each record
names its rules version, file and SHA-256, and the certificate says which rules it applies.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from bundlekit import run_cli, simple_bundle

from certgen.errors import RulesError
from certgen.pipeline import make_record
from certgen.sop import RULES_PATH_ENV, available_sops, load_rules

ROOT = Path(__file__).resolve().parent.parent
TEST_RULES = ROOT / "tests" / "data" / "sop"
TEST_SOP = "SOP-GPU-001 v1.2-test"
V11 = "SOP-GPU-001 v1.1"
# g = 0.15, s = 1 - 75/85: S_F 85.97 with v1.1's 0.7/0.3 (below its gold line 88), 86.62 with
# the test rules' 0.5/0.5 (above their gold line 80).
FIGURES = [(100.0, 85.0, 75.0)]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def test_rules_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(RULES_PATH_ENV, str(TEST_RULES))
    return TEST_RULES


def test_the_test_sop_is_unknown_without_the_search_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(RULES_PATH_ENV, raising=False)
    assert TEST_SOP not in available_sops()
    with pytest.raises(RulesError) as info:
        load_rules(TEST_SOP)
    assert str(info.value) == (
        "sop: no rules file for SOP 'SOP-GPU-001 v1.2-test' (known: SOP-GPU-001 v1.1)")
    bundle = simple_bundle(tmp_path / "b", FIGURES, certificate={
        "id": "T-1", "issued": "2026-11-29", "sop": TEST_SOP, "languages": ["en"]})
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1 and "certificate.sop: expected one of SOP-GPU-001 v1.1" in err


def test_both_rules_versions_coexist(test_rules_path: Path) -> None:
    assert available_sops() == [V11, TEST_SOP]
    old, new = load_rules(V11), load_rules(TEST_SOP)
    assert (old.rules_version, old.gold_line, old.weight_gap) == ("sop-gpu-001-v1.1", 88.0, 0.7)
    assert (new.rules_version, new.gold_line, new.weight_gap) == ("sop-gpu-001-v1.2-test", 80.0, 0.5)
    assert old.sha256 == _sha256(ROOT / "certgen" / "sop" / "sop-gpu-001-v1.1.yaml")
    assert new.sha256 == _sha256(test_rules_path / "sop-gpu-001-v1.2-test.yaml")
    assert (old.file, new.file) == ("sop-gpu-001-v1.1.yaml", "sop-gpu-001-v1.2-test.yaml")


def test_a_bundle_grades_by_the_rules_it_names(tmp_path: Path, test_rules_path: Path) -> None:
    under_old = simple_bundle(tmp_path / "old", FIGURES)
    under_new = simple_bundle(tmp_path / "new", FIGURES, certificate={
        "id": "T-2", "issued": "2026-11-29", "sop": TEST_SOP, "languages": ["en"]})
    old, new = make_record(under_old), make_record(under_new)
    assert old.runs[0].metrics is not None and new.runs[0].metrics is not None
    assert old.runs[0].metrics.fluidity_score == 85.97
    assert new.runs[0].metrics.fluidity_score == 86.62
    assert (old.grade.value, new.grade.value) == ("SILVER", "GOLD")
    assert (old.rules_version, new.rules_version) == ("sop-gpu-001-v1.1", "sop-gpu-001-v1.2-test")
    assert (old.rules.gold_line, new.rules.gold_line) == (88.0, 80.0)
    assert old.rules.sha256 == load_rules(V11).sha256
    assert new.rules.sha256 == _sha256(test_rules_path / "sop-gpu-001-v1.2-test.yaml")
    assert new.rules.file == "sop-gpu-001-v1.2-test.yaml"
    # An old bundle rebuilt while a newer rules file exists still grades by its own rules.
    assert make_record(under_old) == old


def test_the_certificate_says_which_rules_it_applies(
        tmp_path: Path, test_rules_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = simple_bundle(tmp_path / "b", FIGURES, certificate={
        "id": "T-3", "issued": "2026-11-29", "sop": TEST_SOP, "languages": ["en"]})
    lab = Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "out"), "--jobs", "1",
                            "--lab", str(lab)], capsys)
    assert code == 0, err
    html = (tmp_path / "out" / "T-3" / "certificate.en.html").read_text(encoding="utf-8")
    assert "<dt>Rules applied</dt><dd>sop-gpu-001-v1.2-test</dd>" in html
    assert "the grade lines (80 and 92)" in html  # the calibration block states these rules' lines


def test_one_sop_in_two_folders_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shadow = tmp_path / "sop"
    shadow.mkdir()
    (shadow / "sop-gpu-001-v1.1.yaml").write_bytes(
        (ROOT / "certgen" / "sop" / "sop-gpu-001-v1.1.yaml").read_bytes())
    monkeypatch.setenv(RULES_PATH_ENV, str(shadow))
    with pytest.raises(RulesError) as info:
        load_rules(V11)
    assert str(info.value).startswith(
        "sop: SOP 'SOP-GPU-001 v1.1' has a rules file in more than one folder: ")


# The released v1.1 file, byte for byte. Issued certificates name this SHA-256 and `verify
# --reproduce` regrades by the file it finds here, refusing one with other bytes: an edit, even
# of wording (its ru/pt calibration statement says "мягкий предел рывков" / "limite suave de
# travamentos" where the documents say "мягкий предел по фризам" / "limite de tolerância de
# engasgo"), would make every issued v1.1 certificate fail to reproduce. Wording is fixed in the
# next SOP version's file, never in this one (docs/reproducibility.md, "Rules versions").
RELEASED_V11_SHA256 = "a6cd9d1aec1c04137173e6cb06213b23a24b1e70b9c5ba1acf609bfb2aabd027"


def test_the_released_v11_rules_file_is_never_edited() -> None:
    assert _sha256(ROOT / "certgen" / "sop" / "sop-gpu-001-v1.1.yaml") == RELEASED_V11_SHA256
    assert load_rules(V11).sha256 == RELEASED_V11_SHA256
