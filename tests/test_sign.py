"""Signed certificates and `certgen verify` (issue 12), with a throwaway PKI made in the test.

A signed PDF verifies; one byte flipped anywhere in the signed range, a record replaced and
re-signed by a key outside the trust root, one printed figure altered on its way through the
HTML-to-PDF path, and a wrong capture in --bundle each fail their own check; the signature
keeps the PDF/A metadata, attachment and fonts; two signed builds are byte-identical.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import re
import shutil
import time
from pathlib import Path

import pypdf
import pytest
from conftest import SIGNED_AT, CliBuild
from pkikit import PASSPHRASE, make_pki

from certgen.builders.certificate import NO_LAB_TO_SIGN_MESSAGE, build_bundle
from certgen.cli import main
from certgen.errors import CertgenError
from certgen.inputs.lab import load_lab
from certgen.record import dump_record, load_record
from certgen.render.certificate import (
    render_certificate_html,
    render_certificate_pdf,
)
from certgen.render.sign import SigningKey, sign_pdf, signing_key
from certgen.verify.outcome import Verification
from certgen.verify.revocation import RevokedCertificate
from certgen.verify.verdict import verify_pdf

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "examples" / "gold-rx7800xt"
LAB = load_lab(ROOT / "examples" / "lab.yaml")


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return signing_key(make_pki().lab_p12, PASSPHRASE, source="lab.p12").at(SIGNED_AT, given=True)


@pytest.fixture(scope="module")
def built(signed_gold: Path) -> Path:
    """The gold sample built in English, signed with `key`: its output folder (the worker's
    `signed_gold`, tests/conftest.py, which the attack tests read too). Read-only."""
    return signed_gold


def _verify(pdf: bytes, **kwargs: object) -> Verification:
    kwargs.setdefault("trust", make_pki().ca_pem)
    return verify_pdf(pdf, **kwargs)  # type: ignore[arg-type]


def _check(result: Verification, name: str) -> str:
    [check] = [c for c in result.checks if c.name == name]
    return f"{check.verdict} {check.detail}"


def test_a_signed_certificate_verifies_with_its_bundle(built: Path) -> None:
    pdf = (built / "certificate.en.pdf").read_bytes()
    result = _verify(pdf, bundle=str(BUNDLE), revocations=())
    assert result.ok, "\n".join(c.line() for c in result.checks)
    assert [c.name for c in result.checks] == [
        "signature", "intact", "trust", "revocation", "record", "record-sha256", "content",
        "derivation", "captures", "recomputed"]
    assert all(c.verdict == "pass" for c in result.checks)
    assert _check(result, "signature").startswith("pass signed in the name of A. Sample, by its "
                                                  "own certificate (SHA-256 ")
    record_sha = hashlib.sha256((built / "record.json").read_bytes()).hexdigest()
    assert record_sha in _check(result, "record-sha256")


def test_the_cli_prints_a_verdict_per_check_and_exits_0(
        built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As a customer would: a fresh folder with only the PDF and the CA certificate."""
    shutil.copy(built / "certificate.en.pdf", tmp_path / "cert.pdf")
    (tmp_path / "ca.pem").write_bytes(make_pki().ca_pem)
    assert not main(["verify", str(tmp_path / "cert.pdf"), "--trust", str(tmp_path / "ca.pem"),
                     "--revocations", str(ROOT / "examples" / "revocations.yaml")])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("PASS signature: signed in the name of A. Sample")
    assert out[-1] == f"VERIFIED: {tmp_path / 'cert.pdf'} (SAMPLE-GOLD-0002)"
    # No trust root given: the signer is unknown, exit 1 (main returns the code to sys.exit).
    assert main(["verify", str(tmp_path / "cert.pdf"), "--json"]) == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert "Traceback" not in captured.err  # pyHanko's own log of the failed path stays quiet
    assert data["ok"] is False
    assert [c["check"] for c in data["checks"] if c["verdict"] == "fail"] == ["trust"]


def _signed_range(pdf: bytes) -> list[tuple[int, int]]:
    match = re.search(rb"/ByteRange \[(\d+) (\d+) (\d+) (\d+)\]", pdf)
    assert match is not None
    a, b, c, d = (int(x) for x in match.groups())
    return [(a, a + b), (c, c + d)]


def test_flipping_one_byte_anywhere_in_the_signed_range_fails(built: Path) -> None:
    pdf = (built / "certificate.en.pdf").read_bytes()
    (start1, end1), (start2, end2) = _signed_range(pdf)
    assert start1 == 0 and end2 == len(pdf)  # the two ranges are the whole file but /Contents
    positions = [start1, *range(1000, end1, end1 // 4), end1 - 1, start2, end2 - 1]
    attachment = pdf.find(b"/EmbeddedFile")
    assert attachment > 0
    positions.append(attachment + 20)
    for position in positions:
        flipped = bytearray(pdf)
        flipped[position] ^= 0x01
        result = _verify(bytes(flipped))
        assert not result.ok, position
        failed = result.failed()
        assert "intact" in failed or "signature" in failed, (position, failed)


def test_a_record_replaced_and_re_signed_by_a_key_outside_the_trust_root_fails(
        built: Path) -> None:
    """A forger re-renders the whole certificate from an edited record (so the print and the
    hash agree) and signs it with a key of their own: only the trust check can tell."""
    record = load_record((built / "record.json").read_bytes())
    # The signed record names the lab's signing certificate (issue 40): the forger drops it.
    assert record.issuer is not None
    signatory = record.issuer.signatory.model_copy(update={"certificate_sha256": None})
    forged = record.model_copy(update={"customer": "Someone Else Ltd", "issuer":
                                       record.issuer.model_copy(update={"signatory": signatory})})
    forged_bytes = dump_record(forged)
    sha = hashlib.sha256(forged_bytes).hexdigest()
    html = render_certificate_html(forged, "en", record_sha256=sha,
                                   verify_base=LAB.lab.verification_base, signed=True)
    pdf = render_certificate_pdf(html, forged, forged_bytes, "en")
    rogue = signing_key(make_pki("Rogue CA").lab_p12, PASSPHRASE, source="rogue.p12")
    signed = sign_pdf(pdf, rogue, name="A. Sample", when=SIGNED_AT)
    result = _verify(signed)
    assert result.failed() == ["trust"]
    assert "does not chain to the trusted CA" in _check(result, "trust")


def test_a_record_swapped_into_a_genuine_pdf_fails(built: Path, key: SigningKey) -> None:
    """The genuine print with another record attached (and signed by the lab's own key, as an
    insider could): the printed hash and figures no longer match the attachment."""
    record = load_record((built / "record.json").read_bytes())
    m = record.runs[0].metrics
    assert m is not None and m.avg_fps is not None
    run = record.runs[0].model_copy(
        update={"metrics": m.model_copy(update={"avg_fps": m.avg_fps + 10})})
    forged = record.model_copy(update={"runs": (run, *record.runs[1:])})
    genuine_sha = hashlib.sha256((built / "record.json").read_bytes()).hexdigest()
    html = render_certificate_html(record, "en", record_sha256=genuine_sha,
                                   verify_base=LAB.lab.verification_base, signed=True)
    pdf = render_certificate_pdf(html, record, dump_record(forged), "en")
    signed = sign_pdf(pdf, key, name="A. Sample")
    result = _verify(signed)
    assert result.failed() == ["record-sha256", "content", "derivation"]
    assert "run 1 (" in _check(result, "derivation")


def test_one_printed_figure_changed_in_the_html_to_pdf_path_fails(
        built: Path, key: SigningKey) -> None:
    record_bytes = (built / "record.json").read_bytes()
    record = load_record(record_bytes)
    sha = hashlib.sha256(record_bytes).hexdigest()
    html = render_certificate_html(record, "en", record_sha256=sha,
                                   verify_base=LAB.lab.verification_base, signed=True)
    cell = re.search(r'<td class="num fps-avg"[^>]*>([0-9.]+)</td>', html)
    assert cell is not None
    altered_value = f"{float(cell[1]) + 10:.1f}"
    altered = html[:cell.start(1)] + altered_value + html[cell.end(1):]
    pdf = render_certificate_pdf(altered, record, record_bytes, "en")
    signed = sign_pdf(pdf, key, name="A. Sample")
    result = _verify(signed)
    assert result.failed() == ["content"]
    detail = _check(result, "content")
    assert re.fullmatch(rf"fail page \d prints '{altered_value}' where the record's "
                        rf"certificate prints '{cell[1]}'", detail), detail


def test_a_wrong_capture_in_the_bundle_names_the_run(built: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLE, bundle)
    record = load_record((built / "record.json").read_bytes())
    second = record.audit.captures[1]
    other = record.audit.captures[2]
    shutil.copy(bundle / other.file, bundle / second.file)
    result = _verify((built / "certificate.en.pdf").read_bytes(), bundle=str(bundle))
    run = record.runs[second.run]
    assert result.failed() == ["captures", "recomputed"]
    assert _check(result, "captures").startswith(
        f"fail run {second.run + 1} ({run.title} {run.resolution}): {second.file} has SHA-256 ")
    assert f"run {second.run + 1} ({run.title} {run.resolution}): " in _check(result, "recomputed")


def test_a_revoked_certificate_fails(built: Path) -> None:
    result = _verify((built / "certificate.en.pdf").read_bytes(), revocations=(
        RevokedCertificate("OTHER-1", "2026-01-01", "withdrawn"),
        RevokedCertificate("SAMPLE-GOLD-0002", "2026-12-01", "card returned for repair")))
    assert result.failed() == ["revocation"]
    assert _check(result, "revocation") == (
        "fail revoked: SAMPLE-GOLD-0002 was revoked on 2026-12-01: card returned for repair")


def test_an_unsigned_certificate_says_so_and_does_not_verify(gold_build: CliBuild) -> None:
    """GOLD built unsigned with its lab in every language: the session's `gold_build`
    (tests/conftest.py)."""
    assert gold_build.code == 0, gold_build.stderr
    folder = gold_build.folder
    for lang, words in (("en", "This certificate is not digitally signed."),
                        ("ru", "Сертификат не подписан электронной подписью."),
                        ("pt", "Este certificado não tem assinatura digital.")):
        page = (folder / f"certificate.{lang}.html").read_text()
        assert words in page.replace("\u00a0", " ")  # the wording, not the no-break spaces
    result = _verify((folder / "certificate.en.pdf").read_bytes())
    assert _check(result, "signature") == "fail the PDF is not signed"
    # Nothing vouches for the record, so it is not rendered; what else it carries still holds.
    assert result.failed() == ["signature"]
    assert _check(result, "content").startswith("skip not compared: no signature holds")


def test_the_signed_pdf_keeps_pdfa_metadata_attachment_and_fonts(built: Path) -> None:
    pdf = (built / "certificate.en.pdf").read_bytes()
    reader = pypdf.PdfReader(io.BytesIO(pdf))
    assert dict(reader.attachments) == {"record.json": [(built / "record.json").read_bytes()]}
    root = reader.trailer["/Root"]
    assert root["/Lang"] == "en"
    assert root["/AF"][0].get_object()["/AFRelationship"] == "/Data"
    xmp = root["/Metadata"].get_object().get_data()
    assert b'pdfaid:part="3" pdfaid:conformance="A"' in xmp
    # The modification date is the signing time in both the Info dictionary and the XMP packet
    # (PDF/A wants them equal): here the one given, so that a rebuild is byte-identical.
    meta = reader.metadata
    assert meta is not None
    assert meta["/ModDate"].startswith("D:20261201100000")
    assert b"2026-12-01T10:00:00+00:00" in xmp
    assert f'pdf:Producer="{meta["/Producer"]}"' in xmp.decode()
    assert meta["/Creator"] in xmp.decode()  # the certgen stack that rendered it
    fonts = set()
    for page in reader.pages:
        for font in page["/Resources"]["/Font"].values():
            fonts.add(str(font.get_object()["/BaseFont"]).split("+", 1)[1])
    assert fonts and all(name.startswith("DejaVu") for name in fonts)


@pytest.mark.render_uncached  # the second render is the point
def test_two_signed_builds_are_byte_identical(built: Path, key: SigningKey,
                                              tmp_path: Path) -> None:
    time.sleep(1.1)  # a second later by the clock: nothing in the output may notice
    again = Path(build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=key).folder)
    for name in ("certificate.en.pdf", "certificate.en.html", "record.json"):
        assert (again / name).read_bytes() == (built / name).read_bytes(), name


def test_the_cache_key_names_the_signing_certificate(tmp_path: Path, key: SigningKey) -> None:
    assert build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB).rebuilt
    assert build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=key).rebuilt
    assert not build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=key).rebuilt
    # Another passphrase for the same key does not rebuild; another certificate does.
    same = dataclasses.replace(key, passphrase=b"another way in")
    assert not build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=same).rebuilt
    other = signing_key(make_pki("Other CA").lab_p12, PASSPHRASE, source="other.p12").at(
        SIGNED_AT, given=True)
    assert build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=other).rebuilt


def test_build_sign_reads_the_passphrase_from_a_file_or_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    p12 = tmp_path / "lab.p12"
    p12.write_bytes(make_pki().lab_p12)
    lab = str(ROOT / "examples" / "lab.yaml")
    args = ["build", str(BUNDLE), "--out", str(tmp_path / "out"), "--lang", "en", "--lab", lab,
            "--sign", str(p12)]
    monkeypatch.setenv("CERTGEN_SIGN_PASSPHRASE", "wrong")
    with pytest.raises(SystemExit) as exit_:
        main(args)
    assert exit_.value.code == 1
    assert capsys.readouterr().err == (
        f"certgen: {p12}: cannot open the PKCS#12 key: wrong passphrase, or not a .p12 file\n")
    secret = tmp_path / "passphrase"
    secret.write_bytes(PASSPHRASE + b"\n")
    main([*args, "--sign-passphrase-file", str(secret)])
    pdf = (tmp_path / "out" / "SAMPLE-GOLD-0002" / "certificate.en.pdf").read_bytes()
    assert _verify(pdf).ok


def test_signing_needs_a_lab_profile(tmp_path: Path, key: SigningKey) -> None:
    with pytest.raises(CertgenError) as error:
        build_bundle(BUNDLE, tmp_path, draft=True, sign=key)
    assert str(error.value) == NO_LAB_TO_SIGN_MESSAGE


def test_a_signed_build_records_its_signature_for_the_registry(built: Path,
                                                              tmp_path: Path) -> None:
    """The seam between signing and the registry: the manifest of a signed build names the
    signer and the certificate, and the registry page built from it says the PDF is signed."""
    import datetime as dt
    import json

    from certgen.builders.registry import build_registry

    manifest = json.loads((built / "manifest.json").read_text("utf-8"))
    signature = manifest["signature"]
    assert signature["signer"] == "A. Sample"
    assert signature["certificate_subject"] and len(signature["certificate_sha256"]) == 64
    reg = tmp_path / "verify"
    build_registry(built.parent, reg, as_of=dt.date(2026, 12, 1))
    page = (reg / built.name / "en" / "index.html").read_text("utf-8")
    assert "The PDF is signed by A. Sample." in page and "Unsigned" not in page
