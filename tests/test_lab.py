"""The laboratory profile: lab.yaml's strict schema, the build's refusals, the issuer block."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pypdf
import pytest
from bundlekit import card, frames_for, run_cli, run_entry, write_card, write_presentmon

from certgen.errors import LabError
from certgen.inputs.lab import add_months, parse_lab, reserved_domain

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SAMPLE_LAB = EXAMPLES / "lab.yaml"

REAL_LAB = """\
name: "Frame Lab GmbH"
address: "Musterweg 5, 10115 Berlin"
accreditation: {body: "DAkkS", number: "D-PL-00000-01-00"}
signatory: {name: "Dr. Jana Weber", role: "Head of laboratory"}
verification_base: "https://verify.framelab.de/c"
validity_months: 12
contact: "certs@framelab.de"
"""


def _bundle(root: Path) -> Path:
    rel = "captures/run0.csv"
    write_presentmon(root / rel, frames_for(120.0, 110.0, 100.0))
    return write_card(root, card([run_entry("Game 0", capture=rel)]))


def _lab(tmp_path: Path, text: str = REAL_LAB) -> Path:
    path = tmp_path / "lab.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_sample_lab_is_valid_and_visibly_a_specimen() -> None:
    profile = parse_lab(SAMPLE_LAB.read_bytes())
    assert profile.lab.specimen is True
    assert "SPECIMEN" in profile.lab.name


def test_unknown_keys_wrong_types_and_duplicates_are_all_reported_at_once() -> None:
    text = REAL_LAB.replace('contact: "certs@framelab.de"', 'contakt: "x"\nvalidity_months: 12')
    text = text.replace("validity_months: 12\n", "validity_months: \"12\"\n", 1)
    with pytest.raises(LabError) as err:
        parse_lab(text.encode(), source="lab.yaml")
    assert err.value.errors == (
        "lab.yaml:8: duplicate key 'validity_months' (first at line 6)",
        "lab.yaml: validity_months: expected a whole number, got '12'",
        "lab.yaml: contact: required key missing",
        "lab.yaml: contakt: unknown key (did you mean 'contact'?)",
    )


def test_the_verification_base_must_be_https() -> None:
    with pytest.raises(LabError) as err:
        parse_lab(REAL_LAB.replace("https://verify", "http://verify").encode())
    assert err.value.errors == ("lab.yaml: verification_base: expected an https:// address "
                                "without query or fragment, got 'http://verify.framelab.de/c'",)


@pytest.mark.parametrize(("url", "name"), [
    ("https://certificates.example.org/verify", "example.org"),
    ("https://example.com", "example.com"),
    ("https://a.b.example.net/x", "example.net"),
    ("https://lab.example/v", ".example"),
    ("https://verify.lab.test/", ".test"),
    ("https://x.invalid", ".invalid"),
    ("https://localhost:8443/v", "localhost"),
    ("https://verify.framelab.de/c", None),
    ("https://notexample.org/c", None),
])
def test_reserved_example_domains(url: str, name: str | None) -> None:
    assert reserved_domain(url) == name


def test_validity_adds_whole_months_and_clamps_to_the_month_end() -> None:
    assert add_months(dt.date(2026, 11, 29), 24) == dt.date(2028, 11, 29)
    assert add_months(dt.date(2026, 1, 31), 1) == dt.date(2026, 2, 28)
    assert add_months(dt.date(2027, 12, 31), 2) == dt.date(2028, 2, 29)


def test_a_build_without_a_lab_profile_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CERTGEN_LAB", raising=False)
    bundle = _bundle(tmp_path / "b")
    code, stdout, stderr = run_cli(["build", str(bundle), "--out", str(tmp_path / "o")], capsys)
    assert (code, stdout) == (1, "")
    assert stderr == ("certgen: no laboratory profile: a certificate must name its issuer; give "
                      "--lab FILE (or set $CERTGEN_LAB), or build a --draft\n")
    assert not (tmp_path / "o").exists()
    # A draft needs none: it is marked as a draft and names no issuer.
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--draft",
                               "--lang", "en"], capsys)
    assert (code, stderr) == (0, "")
    record = json.loads((tmp_path / "o" / "TEST-0001" / "record.json").read_text())
    assert record["issuer"] is None and record["status"]["draft"] is True


def test_a_verification_base_on_an_example_domain_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = _bundle(tmp_path / "b")
    lab = _lab(tmp_path, REAL_LAB.replace("verify.framelab.de", "certificates.example.org"))
    monkeypatch.setenv("CERTGEN_LAB", str(lab))
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert stderr == (f"certgen: {lab}: verification_base: https://certificates.example.org/c "
                      "is on a reserved example domain (example.org); the QR code and the "
                      "printed verification address must lead to the laboratory's own service\n")
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(tmp_path / "o"), "--lab",
                               str(_lab(tmp_path)), "--verify-base", "https://v.lab.test/"],
                              capsys)
    assert code == 1
    assert stderr == ("certgen: --verify-base: https://v.lab.test/ is on a reserved example "
                      "domain (.test); the QR code and the printed verification address must "
                      "lead to the laboratory's own service\n")
    assert not (tmp_path / "o").exists()


def test_the_issuer_is_in_the_record_on_page_one_and_the_pdf_author(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(tmp_path / "b")
    out = tmp_path / "o"
    code, _, stderr = run_cli(["build", str(bundle), "--out", str(out), "--lab",
                               str(_lab(tmp_path)), "--lang", "en,ru,pt"], capsys)
    assert (code, stderr) == (0, "")
    folder = out / "TEST-0001"
    record = json.loads((folder / "record.json").read_text())
    issuer = record["issuer"]
    assert issuer["name"] == "Frame Lab GmbH"
    assert issuer["accreditation"] == {"body": "DAkkS", "number": "D-PL-00000-01-00"}
    assert issuer["signatory"] == {"name": "Dr. Jana Weber", "role": "Head of laboratory"}
    assert issuer["valid_until"] == add_months(
        dt.date.fromisoformat(record["certificate"]["issued"]), 12).isoformat()
    assert record["status"]["specimen"] is False
    valid = {"en": "Valid until", "ru": "Действителен до", "pt": "Válido até"}
    for lang in ("en", "ru", "pt"):
        reader = pypdf.PdfReader(io.BytesIO((folder / f"certificate.{lang}.pdf").read_bytes()))
        assert reader.metadata is not None and reader.metadata.author == "Frame Lab GmbH"
        first = reader.pages[0].extract_text().replace("\n", " ")
        for text in ("Frame Lab GmbH", "Musterweg 5, 10115 Berlin", "DAkkS",
                     "D-PL-00000-01-00", "Dr. Jana Weber", "certs@framelab.de", valid[lang]):
            assert text in first or text in first.replace(" ", ""), (lang, text)
        # The QR code and the printed address point to the lab's own verification service.
        assert "https://verify.framelab.de/c/TEST-0001/?sha256=" in "".join(
            p.extract_text() for p in reader.pages).replace("\n", "")


def test_schema_lab_prints_the_lab_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, _ = run_cli(["schema", "--lab"], capsys)
    schema = json.loads(stdout)
    assert code == 0 and schema["title"] == "lab.yaml"
    assert set(schema["required"]) == {"name", "address", "signatory", "verification_base",
                                       "validity_months", "contact"}
