"""What each capture records, held against card.yaml (issue 23 steps 2, 3 and 5): each rule's
normalisation, the real captures with a card that is not theirs, the conditions a certificate
must state, sample ids, and every sample's captures agreeing with its card."""

from __future__ import annotations

import copy
import datetime as dt
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from bundlekit import card, run_cli, run_entry, write_card
from realdata import REAL

from certgen.inputs.bundle import load_bundle
from certgen.pipeline import check_bundle
from certgen.record import load_record
from certgen.rules.agreement import (
    board_agrees,
    captured_date,
    cpu_agrees,
    driver_agrees,
    gpu_agrees,
    os_agrees,
    ram_agrees,
    resolution_agrees,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SAMPLES = ("platinum-rtx4070s", "gold-rx7800xt", "silver-gtx1660s")
LAB = EXAMPLES / "lab.yaml"

OCAT = "OCAT-MetroExodus.exe-2019-02-20T101522.csv"
PRESENTMON = "PresentMonTestOutputFilename.csv"
CAPFRAMEX = "CapFrameXFileWithHeader.csv"


# --------------------------------------------------------------------------------------------
# Each comparison
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("recorded", "declared", "agrees"), [
    ("GeForce RTX 2080 Ti", ["Example RTX 2080 Ti 11G", "TU102"], True),
    ("NVIDIA GeForce RTX 2080 Ti", ["Example RTX 2080 8G", "TU104"], False),
    ("NVIDIA GeForce RTX 2080", ["Example RTX 2080 Ti 11G", "TU102"], False),
    ("AMD Radeon RX 7900 XT", ["Example RX 7900 XTX", "Navi 31"], False),
    ("AMD Radeon(TM) RX 7800 XT", ["Illustrative RX 7800 XT 16G", "Navi 32"], True),
    ("nvidia geforce rtx4070super", ["Example RTX 4070 SUPER 12G", "AD104"], True),
    ("NVIDIA GeForce GTX 1660 SUPER", ["Example GTX 1660 6G", "TU116"], False),
    ("NVIDIA", ["Example GTX 1660 6G", "TU116"], None),
])
def test_gpu_model_tokens_and_variant_suffixes(recorded: str, declared: list[str],
                                               agrees: bool | None) -> None:
    assert gpu_agrees(recorded, declared) is agrees


@pytest.mark.parametrize(("recorded", "declared", "agrees"), [
    ("r418_77", "418.91", True),
    ("r418_77", "430.64", False),
    ("41891", "418.91", True),
    ("Mesa 24.2.0", "24.10.1", False),
    ("Mesa 24.2.0", "24.2.0", False),
    ("Mesa 24.2.0", "Mesa 24.2.0", True),
    ("566.14", "566.14", True),
    ("566.14", "565.90", False),
    ("bla", "418.91", False),
])
def test_driver_normalisation(recorded: str, declared: str, agrees: bool) -> None:
    assert driver_agrees(recorded, declared) is agrees


@pytest.mark.parametrize(("recorded", "declared", "agrees"), [
    ("Windows 10 Pro 1809 (OS Build 17763.1.amd64fre.rs5_release.180914-1434)",
     "Windows 10 Pro", True),
    ("Windows 10 Pro 1809 (OS Build 17763.1)", "Windows 11 Pro 23H2", False),
    ("Microsoft Windows 10 Pro (OS Build 22631.2861)", "Windows 11 Pro 23H2", True),
    ("Windows OS", "Windows 11 Pro", True),
    ("Illustrative Linux", "Windows 11 Pro 23H2", False),
    ("Ubuntu 24.04 LTS", "Linux (kernel 6.8)", True),
])
def test_os_by_family_and_major(recorded: str, declared: str, agrees: bool) -> None:
    assert os_agrees(recorded, declared) is agrees


@pytest.mark.parametrize(("recorded", "declared", "agrees"), [
    ("Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz", "Intel Core i9-9900K", True),
    ("Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz", "i9-9900KF", False),
    ("AMD Ryzen 7 7800X3D 8-Core Processor", "Ryzen 7 7800X3D", True),
    ("AMD Ryzen 7 7800X3D 8-Core Processor", "Ryzen 7 7700X", False),
    ("Illustrative 8-core CPU", "Illustrative 8-core desktop CPU", False),
    ("Illustrative 8-core CPU", "Illustrative 8-core CPU", True),
])
def test_cpu_by_model_token(recorded: str, declared: str, agrees: bool) -> None:
    assert cpu_agrees(recorded, declared) is agrees


@pytest.mark.parametrize(("recorded", "declared", "agrees"), [
    ("32 GB 3800 MT/s", 32, True),
    ("32 GB DDR4 3200 MT/s", 16, False),
    ("32768 MB", 32, True),
    ("32803468", 32, True),      # MangoHud: MemTotal in kB
    ("32768", 32, False),        # 32 MB in kB: not 32 GB
    ("no size", 32, None),
])
def test_ram_in_gb(recorded: str, declared: float, agrees: bool | None) -> None:
    assert ram_agrees(recorded, declared) is agrees


@pytest.mark.parametrize(("recorded", "declared", "agrees"), [
    ("ASUSTeK COMPUTER INC. ROG MAXIMUS XI HERO", "ASUS ROG MAXIMUS XI HERO", True),
    ("ASUSTeK COMPUTER INC. ROG MAXIMUS XI HERO", "ASUS PRIME Z390-A", False),
    ("Micro-Star International Co. Ltd. MPG Z390 GAMING PRO CARBON (MS-7B17)",
     "MSI MPG Z390 GAMING PRO CARBON", True),
    ("Micro-Star International Co. Ltd. MPG Z390 GAMING PRO CARBON (MS-7B17)",
     "ASUS MPG Z390 GAMING PRO CARBON", False),
])
def test_board_by_vendor_alias_and_model_words(recorded: str, declared: str,
                                               agrees: bool) -> None:
    assert board_agrees(recorded, declared) is agrees


def test_resolution_and_capture_dates() -> None:
    assert resolution_agrees("2560x1440", "2560x1440") is True
    assert resolution_agrees("1920 x 1080", "2560x1440") is False
    assert resolution_agrees("native", "2560x1440") is None
    assert captured_date("2019-03-30 12:01:36") == dt.date(2019, 3, 30)   # CapFrameX CSV
    assert captured_date("2026-11-20T10:00:00") == dt.date(2026, 11, 20)  # CapFrameX JSON
    assert captured_date("2019-03-30T12:01:36.1234567+01:00") == dt.date(2019, 3, 30)
    assert captured_date("30.03.2019") is None


# --------------------------------------------------------------------------------------------
# The real captures with a card that is not theirs
# --------------------------------------------------------------------------------------------


def _real_runs(**per_run: dict[str, Any]) -> list[dict[str, Any]]:
    names = {"metro": OCAT, "farcry": PRESENTMON, "re2": CAPFRAMEX}
    titles = {"metro": "Metro Exodus", "farcry": "Far Cry 5", "re2": "Resident Evil 2"}
    return [run_entry(titles[key], capture=f"captures/{names[key]}", **per_run.get(key, {}))
            for key in ("metro", "farcry", "re2")]


def _real_bundle(root: Path, data: dict[str, Any]) -> Path:
    (root / "captures").mkdir(parents=True)
    for name in (OCAT, PRESENTMON, CAPFRAMEX):
        shutil.copyfile(REAL / name, root / "captures" / name)  # a tmp bundle, never the repo
    return write_card(root, data)


WRONG_CARD = card(
    _real_runs(),
    card={"vendor": "Example", "model": "Example RTX 2080 8G", "gpu": "TU104", "vram_gb": 8,
          "serial": "EX-2080-1", "hardware_ray_tracing": True, "driver": "418.91"},
    test_system={"cpu": "Intel Core i9-9900K", "memory_gb": 16, "os": "Windows 10 Pro",
                 "motherboard": "ASUS PRIME Z390-A", "display": "Example 27-inch monitor"},
)
"""The issue's card: an RTX 2080, driver 418.91, 16 GB, an ASUS board, tested in 2026."""


def test_the_real_captures_refuse_a_card_that_is_not_theirs_one_line_per_mismatch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _real_bundle(tmp_path / "b", WRONG_CARD)
    code, out, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1 and "refused (10 reasons, on stderr)" in out
    lines = err.splitlines()
    assert lines == [
        # The PresentMon test file is 15 s long, below the minimum to be graded (issue 39).
        "certgen: card.yaml: runs[1].capture: run \"Far Cry 5 2560x1440\": captures/"
        f"{PRESENTMON} is incomplete: 1171 frames over 15.3 s; a graded capture needs at least "
        "20 s and 1001 frames (the 0.1% low the mean of at least 2 frames); re-run the "
        "configuration (the SOP's re-run rule): the re-run is the recorded run and this capture "
        "its archived first_capture",
        "certgen: card.yaml: runs[0].capture: run \"Metro Exodus 2560x1440\": captures/"
        f"{OCAT} records GPU 'GeForce RTX 2080 Ti', card.model / card.gpu says "
        "'Example RTX 2080 8G / TU104'; the capture is not of the certified card (no "
        "provenance_note can excuse it)",
        "certgen: card.yaml: runs[0].capture: run \"Metro Exodus 2560x1440\": captures/"
        f"{OCAT} records RAM '32 GB DDR4 3200 MT/s', test_system.memory_gb says '16 GB'; "
        "explain it in runs[0].provenance_note or correct card.yaml",
        "certgen: card.yaml: runs[0].capture: run \"Metro Exodus 2560x1440\": captures/"
        f"{OCAT} records motherboard 'Micro-Star International Co. Ltd. MPG Z390 GAMING PRO "
        "CARBON (MS-7B17)', test_system.motherboard says 'ASUS PRIME Z390-A'; explain it in "
        "runs[0].provenance_note or correct card.yaml",
        "certgen: card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records GPU 'NVIDIA GeForce RTX 2080 Ti', card.model / card.gpu says "
        "'Example RTX 2080 8G / TU104'; the capture is not of the certified card (no "
        "provenance_note can excuse it)",
        "certgen: card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records driver 'bla', card.driver says '418.91'; explain it in "
        "runs[2].provenance_note or correct card.yaml",
        "certgen: card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records RAM '32 GB 3800 MT/s', test_system.memory_gb says '16 GB'; "
        "explain it in runs[2].provenance_note or correct card.yaml",
        "certgen: card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records motherboard 'ASUSTeK COMPUTER INC. ROG MAXIMUS XI HERO', "
        "test_system.motherboard says 'ASUS PRIME Z390-A'; explain it in "
        "runs[2].provenance_note or correct card.yaml",
        "certgen: card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records capture date '2019-03-30 12:01:36', runs[2].tested_on says "
        "'2026-11-28'; explain it in runs[2].provenance_note or correct card.yaml",
        # Made in 2019, issued in 2026: older than the maximum age at issue (issue 39).
        "certgen: card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records capture date '2019-03-30 12:01:36', 2801 days before the issue "
        "date 2026-11-29 (certificate.issued); a capture may be at most 180 days old when its "
        "certificate is issued (lab.yaml max_capture_age_days)",
    ]
    record = check_bundle(bundle).record
    assert [d.code for d in record.status.refusal_details] == [
        "capture_too_short", *["provenance_mismatch"] * 8, "capture_too_old"]


def _matching_card() -> dict[str, Any]:
    """The real captures' own system: the OCAT and CapFrameX captures were made on different
    boards and the CapFrameX file's driver reads 'bla', so those runs carry a note."""
    note = ("The CapFrameX test file records its driver as 'bla' and was made on the ASUS "
            "board of the lab's second bench.")
    data = copy.deepcopy(WRONG_CARD)
    data["card"].update(model="Example RTX 2080 Ti 11G", gpu="TU102")
    data["test_system"].update(memory_gb=32, motherboard="MSI MPG Z390 GAMING PRO CARBON")
    data["certificate"]["issued"] = "2019-04-02"
    data["runs"] = _real_runs(
        metro={"tested_on": dt.date(2019, 2, 20)},
        farcry={"tested_on": dt.date(2019, 2, 21)},
        re2={"tested_on": dt.date(2019, 3, 30), "provenance_note": note})
    # The PresentMon test file (15 s) is below the minimum to be graded (issue 39): declared
    # not run here, as it records nothing to hold against the card anyway.
    data["runs"][1] = run_entry("Far Cry 5", not_run="the 15 s test file is not a benchmark pass")
    return data


def test_with_their_own_values_and_a_note_the_real_captures_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = _real_bundle(tmp_path / "b", _matching_card())
    code, out, err = run_cli(["check", str(bundle)], capsys)
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "issuable"
    lab = tmp_path / "lab.yaml"
    lab.write_text(LAB.read_text(encoding="utf-8").replace("specimen: true", "specimen: false")
                   .replace("certificates.example.org", "certificates.lab.invalid.net"),
                   encoding="utf-8")
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--jobs", "1",
                            "--lab", str(lab), "--lang", "en,ru,pt"], capsys)
    assert code == 0, err
    folder = tmp_path / "o" / "TEST-0001"
    record = load_record((folder / "record.json").read_bytes())
    assert record.runs[2].provenance_note is not None
    assert record.runs[0].provenance_note is None
    assert record.runs[2].recorded is not None and record.runs[2].recorded.driver == "bla"
    # The note and the recorded value that differs from card.yaml are on the certificate in
    # every language (the note in the lab's words, marked as the original where translated).
    pages = sorted(folder.glob("*.html"))
    assert len(pages) == 3
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "records its driver as" in text, page.name
        assert "bla" in text, page.name


def test_without_the_note_the_same_bundle_is_refused(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    data = _matching_card()
    del data["runs"][2]["provenance_note"]
    bundle = _real_bundle(tmp_path / "b", data)
    code, _, err = run_cli(["check", str(bundle)], capsys)
    assert code == 1
    assert [line.split(": ")[2] for line in err.splitlines()] == ["runs[2].capture"] * 2
    assert "records driver 'bla'" in err and "records motherboard 'ASUSTeK" in err


def test_two_captures_recording_different_gpus_are_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "b"
    (bundle / "captures").mkdir(parents=True)
    shutil.copyfile(REAL / CAPFRAMEX, bundle / "captures" / "a.csv")
    text = (REAL / CAPFRAMEX).read_text(encoding="utf-8")
    (bundle / "captures" / "b.csv").write_text(
        text.replace("//GPU=NVIDIA GeForce RTX 2080 Ti", "//GPU=NVIDIA GeForce RTX 2080"),
        encoding="utf-8")
    data = _matching_card()
    data["runs"] = [run_entry("A", capture="captures/a.csv", tested_on=dt.date(2019, 3, 30),
                              provenance_note="driver field of the test file"),
                    run_entry("B", capture="captures/b.csv", tested_on=dt.date(2019, 3, 30),
                              provenance_note="driver field of the test file")]
    data["test_system"]["motherboard"] = "ASUS ROG MAXIMUS XI HERO"
    write_card(bundle, data)
    reasons = check_bundle(bundle).record.status.refusals
    assert reasons == (
        "card.yaml: runs[1].capture: run \"B 2560x1440\": captures/b.csv records GPU "
        "'NVIDIA GeForce RTX 2080', card.model / card.gpu says 'Example RTX 2080 Ti 11G / "
        "TU102'; the capture is not of the certified card (no provenance_note can excuse it)",
        "card.yaml: runs[1].capture: run \"B 2560x1440\": captures/b.csv records GPU "
        "'NVIDIA GeForce RTX 2080', runs[0].capture captures/a.csv records 'NVIDIA GeForce "
        "RTX 2080 Ti'; the captures of one certificate must be of one card",
    )


def test_an_unreadable_capture_date_is_a_note_not_a_refusal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _matching_card()
    bundle = _real_bundle(tmp_path / "b", data)
    path = bundle / "captures" / CAPFRAMEX
    path.write_text(path.read_text(encoding="utf-8").replace(
        "//CreationDate=2019-03-30", "//CreationDate=30.03.2019"), encoding="utf-8")
    code, out, err = run_cli(["check", str(bundle)], capsys)
    assert (code, err) == (0, "")
    assert (f"note: runs[2].capture: captures/{CAPFRAMEX} records capture date "
            "'30.03.2019 12:01:36', which certgen cannot read; not compared") in out


def test_a_capture_dated_after_the_issue_date_is_refused_even_with_a_note(tmp_path: Path) -> None:
    data = _matching_card()
    data["certificate"]["issued"] = "2019-03-29"
    data["runs"][2]["tested_on"] = dt.date(2019, 3, 28)
    reasons = check_bundle(_real_bundle(tmp_path / "b", data)).record.status.refusals
    assert reasons == (
        "card.yaml: runs[2].capture: run \"Resident Evil 2 2560x1440\": captures/"
        f"{CAPFRAMEX} records capture date '2019-03-30 12:01:36', after the issue date "
        "2019-03-29 (certificate.issued); a certificate cannot cite a capture made after it",)


# --------------------------------------------------------------------------------------------
# Conditions required for issue, sample ids
# --------------------------------------------------------------------------------------------


def _sample_copy(tmp_path: Path, edit: Any) -> Path:
    bundle = shutil.copytree(EXAMPLES / "gold-rx7800xt", tmp_path / "b")
    data = yaml.safe_load((bundle / "card.yaml").read_text(encoding="utf-8"))
    edit(data)
    (bundle / "card.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False),
                                      encoding="utf-8")
    return bundle


def test_a_test_date_after_the_issue_date_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["certificate"]["issued"] = dt.date(2026, 12, 1)
        data["runs"][2]["tested_on"] = dt.date(2027, 3, 5)

    code, _, err = run_cli(["check", str(_sample_copy(tmp_path, edit))], capsys)
    assert (code, err) == (1, "certgen: card.yaml: runs[2].tested_on: 2027-03-05 is after the "
                              "issue date 2026-12-01 (certificate.issued); a run cannot be "
                              "tested after its certificate is issued\n")


def test_a_missing_technician_refuses_a_build_and_a_draft_says_not_stated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def edit(data: dict[str, Any]) -> None:
        del data["runs"][2]["technician"]
        del data["runs"][5]["first_capture"]["tested_on"]
        del data["test_system"]["display"]

    bundle = _sample_copy(tmp_path, edit)
    args = ["build", str(bundle), "--out", str(tmp_path / "o"), "--jobs", "1", "--lab", str(LAB),
            "--lang", "en"]
    code, _, err = run_cli(args, capsys)
    assert code == 1
    for field in ("test_system.display", "runs[2].technician", "runs[5].first_capture.tested_on"):
        assert (f"card.yaml: {field}: required for a certificate (a --draft may leave it out)"
                in err), err
    code, _, err = run_cli([*args, "--draft"], capsys)
    assert code == 0, err
    html = (tmp_path / "o" / "SAMPLE-GOLD-0002" / "certificate.en.html").read_text("utf-8")
    assert "not stated" in html
    assert ("The test conditions do not state runs[2].technician; a certificate can be issued "
            "only when they do.") in html


def test_a_sample_id_under_a_real_lab_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = tmp_path / "lab.yaml"
    lab.write_text(LAB.read_text(encoding="utf-8").replace("specimen: true", "specimen: false")
                   .replace("certificates.example.org", "certificates.lab.invalid.net"),
                   encoding="utf-8")
    code, _, err = run_cli(["build", str(EXAMPLES / "gold-rx7800xt"), "--out",
                            str(tmp_path / "o"), "--jobs", "1", "--lab", str(lab), "--lang",
                            "en"], capsys)
    assert code == 1
    assert ("card.yaml: certificate.id: SAMPLE-GOLD-0002 is one of the examples' sample "
            "certificates (an id beginning SAMPLE-); only a specimen laboratory profile "
            "(specimen: true) may issue it") in err
    assert len([line for line in err.splitlines() if "certificate.id" in line]) == 1


# --------------------------------------------------------------------------------------------
# The samples
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_sample_states_full_conditions_and_its_captures_agree_with_its_card(
        sample: str) -> None:
    checked = check_bundle(EXAMPLES / sample)
    assert checked.record.status.refusals == ()
    assert checked.notes == ()
    bundle = load_bundle(EXAMPLES / sample)
    bench = bundle.card.test_system
    assert bench is not None and all(getattr(bench, key) is not None for key in (
        "cpu", "memory_gb", "os", "motherboard", "display"))
    for run in bundle.card.runs:
        if run.capture is None:
            continue
        assert run.tested_on is not None and run.technician is not None
        assert run.game_version is not None
        if run.first_capture is not None:
            assert run.first_capture.tested_on and run.first_capture.technician
    assert bundle.card.certificate.id.startswith("SAMPLE-")


@pytest.mark.parametrize(("lang", "words", "english"), [
    ("ru", "записано значение «Графический процессор» GeForce RTX 2080 Ti", "records GPU"),
    ("pt", "registra GPU GeForce RTX 2080 Ti", "records GPU"),
    ("en", "records GPU GeForce RTX 2080 Ti, but card.yaml states", None),
])
def test_a_draft_words_each_provenance_refusal_in_its_language(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str, words: str,
        english: str | None) -> None:
    """The new refusals are worded by the certificate in the reader's language, from their
    details, not printed in English (an English message is only for a code it does not know)."""
    bundle = _real_bundle(tmp_path / "b", WRONG_CARD)
    code, _, err = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--jobs", "1",
                            "--draft", "--lang", lang], capsys)
    assert code == 0, err
    text = (tmp_path / "o" / "TEST-0001" / f"certificate.{lang}.html").read_text("utf-8")
    plain = " ".join(text.replace("\u00a0", " ").split())
    assert words in plain
    if english is not None:
        assert english not in plain
