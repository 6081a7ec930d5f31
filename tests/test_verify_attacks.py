"""Forged and tampered certificates end NOT VERIFIED with the right reason (issue 21).

Each forgery is built the way its attack describes (tests/forgekit.py): incremental updates
with and without a "fixed point", a second signature, actions, changes made before signing
(text, an image over the text), foreign signers; poppler's pdfsig, an independent verifier,
says "Not total document signed" of every incremental variant. The signing time is the time of
signing, checked against the key's validity; verify's own inputs are refused as every other
input is (regular files, size limits).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SIGNED_AT
from cryptography.x509.oid import ExtendedKeyUsageOID
from forgekit import (
    add_open_action,
    fixed_point,
    graft,
    hide_text,
    sign_again,
    stamp_image,
    stamp_text,
)
from forgekit40 import Revision, append_revision, forged_page_content
from pkikit import PASSPHRASE, SIGNATORY, issue, make_pki

from certgen.builders.certificate import build_bundle
from certgen.cli import main
from certgen.errors import CertgenError
from certgen.inputs.lab import load_lab
from certgen.record import dump_record, load_record
from certgen.render.certificate import render_certificate_html, render_certificate_pdf
from certgen.render.sign import SigningKey, sign_pdf, signing_key
from certgen.verify.outcome import Verification
from certgen.verify.revocation import parse_revocation_list
from certgen.verify.verdict import verify_pdf

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "examples" / "gold-rx7800xt"
LAB = load_lab(ROOT / "examples" / "lab.yaml")


def _key(p12: bytes | None = None, at: dt.datetime = SIGNED_AT) -> SigningKey:
    return signing_key(p12 or make_pki().lab_p12, PASSPHRASE, source="lab.p12").at(at, given=True)


@pytest.fixture(scope="module")
def built(signed_gold: Path) -> Path:
    """GOLD built in English, signed with `_key()`: the worker's `signed_gold`
    (tests/conftest.py), which the signing tests read too. Read-only."""
    return signed_gold


@pytest.fixture(scope="module")
def signed(built: Path) -> bytes:
    return (built / "certificate.en.pdf").read_bytes()


@pytest.fixture(scope="module")
def unsigned(built: Path) -> bytes:
    """The same certificate as rendered before signing (what a pre-signing change edits)."""
    record_bytes = (built / "record.json").read_bytes()
    record = load_record(record_bytes)
    html = render_certificate_html(record, "en",
                                   record_sha256=hashlib.sha256(record_bytes).hexdigest(),
                                   verify_base=LAB.lab.verification_base, signed=True)
    return render_certificate_pdf(html, record, record_bytes, "en")


@pytest.fixture(scope="module")
def unpinned(built: Path) -> bytes:
    """The certificate rendered from its record without the signing certificate's SHA-256 (as a
    lab.yaml that pins none gave records before issue 40): the signer is then bound by its
    subject (one CN, the lab's O)."""
    record = load_record((built / "record.json").read_bytes())
    assert record.issuer is not None
    signatory = record.issuer.signatory.model_copy(update={"certificate_sha256": None})
    record = record.model_copy(update={"issuer": record.issuer.model_copy(
        update={"signatory": signatory})})
    record_bytes = dump_record(record)
    html = render_certificate_html(record, "en",
                                   record_sha256=hashlib.sha256(record_bytes).hexdigest(),
                                   verify_base=LAB.lab.verification_base, signed=True)
    return render_certificate_pdf(html, record, record_bytes, "en")


def _verify(pdf: bytes, **kwargs: object) -> Verification:
    kwargs.setdefault("trust", make_pki().ca_pem)
    kwargs.setdefault("revocations", ())
    return verify_pdf(pdf, **kwargs)  # type: ignore[arg-type]


def _detail(result: Verification, name: str) -> str:
    [check] = [c for c in result.checks if c.name == name]
    return f"{check.verdict} {check.detail}"


def _pdfsig(pdf: bytes, tmp_path: Path) -> str:
    if shutil.which("pdfsig") is None:
        pytest.fail("pdfsig (Debian poppler-utils) is missing: `make test` installs it as root")
    path = tmp_path / "forged.pdf"
    path.write_bytes(pdf)
    run = subprocess.run(["pdfsig", str(path)], capture_output=True, text=True, timeout=60)
    return run.stdout + run.stderr


def test_the_genuine_certificate_verifies_byte_for_byte(signed: bytes, tmp_path: Path) -> None:
    result = _verify(signed)
    assert result.verdict == "verified", "\n".join(c.line() for c in result.checks)
    assert _detail(result, "content").startswith("pass the file is, byte for byte, the "
                                                 "certificate this certgen renders")
    assert _detail(result, "trust").endswith("valid at the signing time 2026-12-01 10:00:00+00:00 "
                                             "and now")
    report = _pdfsig(signed, tmp_path)
    assert "Signature is Valid." in report and "Total document signed" in report


INCREMENTAL = {
    "overlay": lambda pdf: stamp_text(pdf, "PLATINUM"),
    "image overlay": stamp_image,
    "JavaScript OpenAction": lambda pdf: add_open_action(pdf, "JavaScript"),
    "Launch OpenAction": lambda pdf: add_open_action(pdf, "Launch"),
}


@pytest.mark.parametrize("variant", sorted(INCREMENTAL))
@pytest.mark.parametrize("fixed", [False, True], ids=["plain", "fixed point"])
def test_an_update_appended_after_signing_is_not_verified(
        signed: bytes, tmp_path: Path, variant: str, fixed: bool) -> None:
    forged = INCREMENTAL[variant](signed)
    if fixed:
        forged = fixed_point(signed, forged)
    result = _verify(forged)
    assert result.verdict == "not-verified"
    assert "intact" in result.failed()
    detail = _detail(result, "intact")
    assert detail.startswith("fail the signed range does not cover the file: "), detail
    assert "bytes were added after signing" in detail
    assert _detail(result, "content").startswith("skip")
    assert "Not total document signed" in _pdfsig(forged, tmp_path)


def test_the_fixed_point_fools_a_size_only_coverage_check(signed: bytes) -> None:
    """The attack is the real one: pyHanko's own coverage evaluation calls the forged file
    entirely signed; certgen reads the bytes instead."""
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    forged = fixed_point(signed, stamp_text(signed, "PLATINUM"))
    [sig] = PdfFileReader(io.BytesIO(forged), strict=False).embedded_signatures
    status = validate_pdf_signature(sig, ValidationContext(trust_roots=[], allow_fetching=False))
    assert status.intact and status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    assert "intact" in _verify(forged).failed()


def test_a_fixed_point_without_any_visible_change_is_not_verified(signed: bytes) -> None:
    forged = fixed_point(signed, signed)
    assert forged != signed
    assert _detail(_verify(forged), "intact").startswith("fail the signed range does not cover")


@pytest.fixture(scope="module")
def grafted(built: Path, signed: bytes) -> bytes:
    """Every page and the record of a certificate the forger rendered himself (another customer,
    unsigned) grafted over the signed file, which keeps its signature. Made once for both
    variants below: the render and pyHanko's import of every object cost seconds each."""
    from certgen.record import dump_record

    record = load_record((built / "record.json").read_bytes())
    forged_record = record.model_copy(update={"customer": "Someone Else Ltd"})
    forged_bytes = dump_record(forged_record)
    html = render_certificate_html(forged_record, "en",
                                   record_sha256=hashlib.sha256(forged_bytes).hexdigest(),
                                   verify_base=LAB.lab.verification_base, signed=True)
    return graft(signed, render_certificate_pdf(html, forged_record, forged_bytes, "en"))


@pytest.mark.parametrize("fixed", [False, True], ids=["plain", "fixed point"])
def test_a_forged_certificate_grafted_over_a_signed_one_is_not_verified(
        grafted: bytes, signed: bytes, tmp_path: Path, fixed: bool) -> None:
    """The grafted forgery (the `grafted` fixture), as it is or with a fixed point after it."""
    forged = fixed_point(signed, grafted) if fixed else grafted
    import pypdf

    shown = pypdf.PdfReader(io.BytesIO(forged))
    # A reader sees the forgery (the customer is printed after page 1's grade, issuer and
    # how-sure boxes: on page 2 of GOLD since issue 41).
    assert "Someone Else Ltd" in "".join(page.extract_text() for page in shown.pages)
    result = _verify(forged)
    assert result.verdict == "not-verified"
    assert _detail(result, "intact").startswith("fail the signed range does not cover the file")
    assert "Not total document signed" in _pdfsig(forged, tmp_path)


def test_a_second_signature_by_another_key_of_the_same_ca_is_not_verified(
        signed: bytes) -> None:
    forged = sign_again(stamp_text(signed, "PLATINUM"), issue(make_pki(), SIGNATORY, serial=7),
                        PASSPHRASE, name=SIGNATORY)
    result = _verify(forged)
    assert _detail(result, "signature") == ("fail 2 signatures: certgen signs a certificate "
                                            "once, so one was added after the lab signed")
    assert result.verdict == "not-verified"


@pytest.mark.parametrize("change", ["text", "image", "invisible text"])
def test_a_change_made_before_the_lab_key_signed_is_not_verified(
        unsigned: bytes, change: str) -> None:
    """An insider edits the rendered certificate, then signs it with the lab's own key: the
    signature holds, but the file is not what certgen renders from its record."""
    edited = {"text": lambda pdf: stamp_text(pdf, "PLATINUM"), "image": stamp_image,
              "invisible text": hide_text}[change](unsigned)
    forged = sign_pdf(edited, _key(), name=SIGNATORY)
    result = _verify(forged)
    assert result.failed() == ["content"], "\n".join(c.line() for c in result.checks)
    detail = _detail(result, "content")
    if change == "text":
        assert detail.startswith("fail page 1 prints 'PLATINUM") or "PLATINUM" in detail, detail
    else:
        assert detail.startswith("fail page 1 draws 1 image(s) that are not the "), detail


def _pyhanko_signed(pdf: bytes) -> bytes:
    """`pdf` signed by the lab's key with plain pyHanko (its own metadata, /Producer and /ID):
    what a key holder's own tool makes."""
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign import fields, signers

    signer = signers.SimpleSigner.load_pkcs12_data(make_pki().lab_p12, other_certs=(),
                                                   passphrase=PASSPHRASE)
    out = io.BytesIO()
    signers.PdfSigner(signers.PdfSignatureMetadata(
        field_name="CertgenSignature", name=SIGNATORY, md_algorithm="sha256",
        subfilter=fields.SigSeedSubFilter.PADES), signer=signer).sign_pdf(
        IncrementalPdfFileWriter(io.BytesIO(pdf)), output=out)
    return out.getvalue()


@pytest.mark.parametrize("overlay", [False, True], ids=["as rendered", "vector overlay"])
def test_a_render_signed_by_another_tool_is_not_verified(unsigned: bytes, overlay: bool) -> None:
    """Issue 40: the key holder signs certgen's render with plain pyHanko (only /Producer
    differs), with or without a vector "PLATINUM" drawn over the badge (no text, no image):
    the signed revision is not byte for byte certgen's, and no weaker comparison is made."""
    edited = unsigned
    if overlay:
        number, body = forged_page_content(unsigned)
        edited = append_revision(unsigned, Revision(objects=[(number, body)]))
    result = _verify(_pyhanko_signed(edited))
    assert result.failed() == ["content"], "\n".join(c.line() for c in result.checks)
    assert not result.warnings
    assert "(the file was not signed by certgen: its producer is '" in _detail(result, "content")


@pytest.mark.parametrize(("who", "kwargs", "reason"), [
    ("Mallory", {}, "the signing certificate is made out to 'Mallory'"),
    (SIGNATORY, {"ca": True}, "the signing certificate is a CA certificate (CA:TRUE)"),
    (SIGNATORY, {"can_sign": False}, "the signing certificate's key usage does not allow"),
    (SIGNATORY, {"purposes": (ExtendedKeyUsageOID.TIME_STAMPING,)},
     "the signing certificate is for time_stamping, not for signing documents"),
    # Issue 40: the lab's CA issued it in the signatory's name, for another organization.
    (SIGNATORY, {"organization": "Mallory Resale Ltd"},
     "the signing certificate is made out to the organization 'Mallory Resale Ltd'"),
    (SIGNATORY, {"second_common_name": "Mallory"},
     "the signing certificate names 2 common names"),
])
def test_a_signer_who_is_not_the_signatory_is_not_verified(
        unsigned: bytes, unpinned: bytes, who: str, kwargs: dict[str, object],
        reason: str) -> None:
    key = signing_key(issue(make_pki(), who, serial=11, **kwargs),  # type: ignore[arg-type]
                      PASSPHRASE, source="x.p12")
    forged = sign_pdf(unpinned, key, name=SIGNATORY, when=SIGNED_AT)
    result = _verify(forged)
    assert "signature" in result.failed()
    assert _detail(result, "signature").startswith(f"fail {reason}")
    # The lab's own signed records name its certificate: any other key fails on that first.
    forged = sign_pdf(unsigned, key, name=SIGNATORY, when=SIGNED_AT)
    result = _verify(forged)
    assert "signature" in result.failed()
    pinned = _detail(result, "signature")
    assert pinned.startswith(f"fail {reason}") or "the record's signatory signs with" in pinned


def test_build_sign_refuses_a_key_in_another_name(tmp_path: Path) -> None:
    mallory = _key(issue(make_pki(), "Mallory", serial=12))
    with pytest.raises(CertgenError) as error:
        build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=mallory)
    assert str(error.value).startswith("--sign: the key's certificate is made out to 'Mallory'")


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"organization": "Mallory Resale Ltd"}, "--sign: the key's certificate is made out to the "
                                             "organization 'Mallory Resale Ltd'"),
    ({"second_common_name": "Mallory"}, "--sign: the key's certificate states 2 common names"),
])
def test_build_sign_refuses_another_organization_or_a_second_name(
        tmp_path: Path, kwargs: dict[str, object], reason: str) -> None:
    key = _key(issue(make_pki(), SIGNATORY, serial=13, **kwargs))  # type: ignore[arg-type]
    with pytest.raises(CertgenError) as error:
        build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=key)
    assert str(error.value).startswith(reason), error.value


def test_the_signing_time_is_the_time_of_signing_and_is_checked(tmp_path: Path) -> None:
    """A key made today signs at today's time (never the issue date's midnight) and pyHanko's
    own validator, at that time, accepts it; a key not yet valid or expired is refused."""
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext

    made = dt.datetime(2026, 12, 1, 19, 58, tzinfo=dt.UTC)
    fresh = issue(make_pki(), SIGNATORY, not_before=made, serial=13)
    with pytest.raises(CertgenError) as early:
        build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB,
                     sign=_key(fresh, at=dt.datetime(2026, 12, 1, 0, 0, tzinfo=dt.UTC)))
    assert "not valid until 2026-12-01 19:58:00+00:00" in str(early.value)
    folder = Path(build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB,
                               sign=_key(fresh, at=made + dt.timedelta(minutes=2))).folder)
    pdf = (folder / "certificate.en.pdf").read_bytes()
    [sig] = PdfFileReader(io.BytesIO(pdf)).embedded_signatures
    assert sig.self_reported_timestamp == made + dt.timedelta(minutes=2)
    context = ValidationContext(trust_roots=[_ca_cert()], allow_fetching=False,
                                moment=made + dt.timedelta(minutes=2))
    assert validate_pdf_signature(sig, context).bottom_line
    assert _verify(pdf).verdict == "verified"
    expired = issue(make_pki(), SIGNATORY, not_after=dt.datetime(2026, 6, 1, tzinfo=dt.UTC),
                    serial=14)
    with pytest.raises(CertgenError) as late:
        build_bundle(BUNDLE, tmp_path / "b", languages=["en"], lab=LAB, sign=_key(expired))
    assert "expired on 2026-06-01" in str(late.value)


def test_a_key_that_expires_before_the_certificate_is_refused(tmp_path: Path) -> None:
    short = issue(make_pki(), SIGNATORY, not_after=dt.datetime(2027, 1, 1, tzinfo=dt.UTC),
                  serial=15)
    with pytest.raises(CertgenError) as error:
        build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=_key(short))
    assert str(error.value).startswith("--sign: the key's certificate expires on 2027-01-01, "
                                       "before SAMPLE-GOLD-0002 is valid until ")


@pytest.mark.render_uncached  # the second render is the point
def test_same_inputs_and_signing_time_give_the_same_bytes(signed: bytes, tmp_path: Path) -> None:
    again = Path(build_bundle(BUNDLE, tmp_path, languages=["en"], lab=LAB, sign=_key()).folder)
    assert (again / "certificate.en.pdf").read_bytes() == signed
    later = _key(at=SIGNED_AT + dt.timedelta(seconds=1))
    other = Path(build_bundle(BUNDLE, tmp_path / "b", languages=["en"], lab=LAB,
                              sign=later).folder)
    assert (other / "certificate.en.pdf").read_bytes() != signed


def _ca_cert() -> object:
    from pyhanko.keys import load_certs_from_pemder_data

    return next(iter(load_certs_from_pemder_data(make_pki().ca_pem)))


def test_without_a_revocation_list_the_verdict_says_what_was_not_checked(
        signed: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cert.pdf").write_bytes(signed)
    (tmp_path / "ca.pem").write_bytes(make_pki().ca_pem)
    code = main(["verify", str(tmp_path / "cert.pdf"), "--trust", str(tmp_path / "ca.pem")])
    out = capsys.readouterr().out.splitlines()
    assert code == 3
    assert out[-1] == (f"VERIFIED EXCEPT: revocation not checked: {tmp_path / 'cert.pdf'} "
                       "(SAMPLE-GOLD-0002)")


def test_the_registry_index_is_a_revocation_list(built: Path, signed: bytes,
                                                 tmp_path: Path) -> None:
    from certgen.builders.registry import build_registry

    revocations = tmp_path / "revocations.yaml"
    revocations.write_text('- id: "SAMPLE-GOLD-0002"\n  date: 2026-12-01\n  reason:\n'
                           '    en: "Card returned for repair"\n    ru: "Ремонт"\n', "utf-8")
    registry = tmp_path / "verify"
    build_registry(built.parent, registry, as_of=dt.date(2026, 12, 2), revocations=revocations)
    index = (registry / "index.json").read_bytes()
    for data in (index, revocations.read_bytes()):
        result = _verify(signed, revocations=parse_revocation_list(data, source="x"))
        assert _detail(result, "revocation") == ("fail revoked: SAMPLE-GOLD-0002 was revoked on "
                                                 "2026-12-01: Card returned for repair")
    empty = registry.parent / "empty"
    build_registry(built.parent, empty, as_of=dt.date(2026, 12, 2))
    result = _verify(signed, revocations=parse_revocation_list(
        (empty / "index.json").read_bytes(), source="index.json"))
    assert result.verdict == "verified"


def test_a_list_of_ids_is_not_a_revocation_list() -> None:
    with pytest.raises(CertgenError) as error:
        parse_revocation_list(b"- SAMPLE-GOLD-0002\n", source="revoked.yaml")
    assert "revoked.yaml" in str(error.value)


def test_a_changed_archived_first_capture_is_named(signed: bytes, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(BUNDLE, bundle)
    [first] = sorted((bundle / "archive").iterdir())
    lines = first.read_text("utf-8").splitlines(keepends=True)
    lines[-1] = lines[-1].replace("1", "2", 1) if "1" in lines[-1] else lines[-1] + "\n"
    first.write_text("".join(lines), "utf-8")
    result = _verify(signed, bundle=str(bundle))
    assert result.verdict == "not-verified"
    assert f"the archived first capture archive/{first.name} has SHA-256 " in _detail(
        result, "captures")


@pytest.mark.parametrize("which", ["pdf", "trust", "revocations"])
def test_verify_refuses_a_fifo_or_device_without_hanging(
        signed: bytes, tmp_path: Path, which: str, capsys: pytest.CaptureFixture[str]) -> None:
    pdf, ca, fifo = tmp_path / "cert.pdf", tmp_path / "ca.pem", tmp_path / "fifo"
    pdf.write_bytes(signed)
    ca.write_bytes(make_pki().ca_pem)
    os.mkfifo(fifo)
    args = {"pdf": str(pdf), "trust": str(ca), "revocations": None}
    for special in (str(fifo), "/dev/zero"):
        given = dict(args, **{which: special})
        argv = ["verify", given["pdf"] or "", "--trust", given["trust"] or ""]
        if given["revocations"]:
            argv += ["--revocations", given["revocations"]]
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.splitlines()) == 1
        assert err.startswith(f"certgen: {special}: is a ")


def test_no_failure_prints_a_traceback_or_more_than_a_few_lines(
        signed: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ca.pem").write_bytes(make_pki().ca_pem)
    flipped = bytearray(signed)
    flipped[2000] ^= 1
    variants = {"flipped": bytes(flipped), "overlay": stamp_text(signed, "PLATINUM"),
                "fixed": fixed_point(signed, stamp_text(signed, "PLATINUM")),
                "truncated": signed[: len(signed) // 2], "not a pdf": b"hello"}
    for name, data in variants.items():
        path = tmp_path / f"{name}.pdf"
        path.write_bytes(data)
        code = main(["verify", str(path), "--trust", str(tmp_path / "ca.pem")])
        captured = capsys.readouterr()
        assert code == 1, name
        assert "Traceback" not in captured.err, name
        assert len(captured.err.splitlines()) < 5, (name, captured.err)


def test_one_changed_byte_is_a_digest_mismatch_not_an_untrusted_signer(signed: bytes) -> None:
    start = signed.find(b"/EmbeddedFile")
    flipped = bytearray(signed)
    flipped[start + 20] ^= 1
    result = _verify(bytes(flipped))
    assert _detail(result, "intact") == ("fail digest mismatch: the signed bytes were changed "
                                         "after signing")
    assert _detail(result, "trust").startswith("pass")


def test_a_signed_registry_index_is_checked_as_the_lab_s(built: Path, signed: bytes,
                                                          tmp_path: Path) -> None:
    """`certgen registry --sign` writes index.json.p7s; verify reads it from beside index.json:
    the lab's signed list holds, an edited list (the revocation taken out) or one signed by
    another key of the same CA does not."""
    import json

    from certgen.builders.registry import build_registry
    from certgen.render.sign import sign_detached
    from certgen.verify.revocation import load_revocations

    revocations = tmp_path / "revocations.yaml"
    revocations.write_text('- id: "SAMPLE-GOLD-0002"\n  date: 2026-12-01\n  reason: "Withdrawn"\n',
                           "utf-8")
    registry = tmp_path / "verify"
    build_registry(built.parent, registry, as_of=dt.date(2026, 12, 2), revocations=revocations,
                   sign=_key())
    index = registry / "index.json"
    assert (registry / "index.json.p7s").is_file()
    result = _verify(signed, revocations=load_revocations(index))
    assert _detail(result, "revocation") == (
        "fail revoked: SAMPLE-GOLD-0002 was revoked on 2026-12-01: Withdrawn (index.json, as of "
        "2026-12-02, signed by A. Sample)")
    # The forger takes the revocation out of the published list: half of it is refused as an
    # entry that contradicts itself (issue 40), the whole of it as not the lab's list.
    data = json.loads(index.read_bytes())
    data["certificates"][0]["revoked"] = None
    index.write_text(json.dumps(data), "utf-8")
    with pytest.raises(CertgenError, match=r"certificates\[0\]: status revoked with revoked: "
                                           "null: the entry contradicts itself"):
        load_revocations(index)
    data["certificates"][0]["status"] = "valid"
    index.write_text(json.dumps(data), "utf-8")
    assert _detail(_verify(signed, revocations=load_revocations(index)), "revocation") == (
        "fail the revocation list index.json is not the laboratory's: digest mismatch: the list "
        "was changed after it was signed")
    # ... and signs it with another key the same CA issued.
    mallory = _key(issue(make_pki(), "Mallory", serial=21))
    (registry / "index.json.p7s").write_bytes(sign_detached(index.read_bytes(), mallory))
    assert _detail(_verify(signed, revocations=load_revocations(index)), "revocation").startswith(
        "fail the revocation list index.json is not the laboratory's: the signing certificate is "
        "made out to 'Mallory'")
    # An unsigned copy is refused (issue 40), unless accepted on purpose, which the verdict says.
    (registry / "index.json.p7s").unlink()
    assert _detail(_verify(signed, revocations=load_revocations(index)), "revocation").startswith(
        "fail the registry's list index.json is unsigned: its signature index.json.p7s is not "
        "beside it")
    accepted = _verify(signed, revocations=load_revocations(index), allow_unsigned_list=True,
                       at=dt.datetime(2026, 12, 3, tzinfo=dt.UTC))
    assert _detail(accepted, "revocation") == (
        "pass SAMPLE-GOLD-0002 is not in the revocation list (index.json, as of 2026-12-02, "
        "unsigned: accepted with --allow-unsigned-list)")


def test_certgen_registry_sign_writes_the_signature(built: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    p12 = tmp_path / "lab.p12"
    p12.write_bytes(make_pki().lab_p12)
    monkeypatch.setenv("CERTGEN_SIGN_PASSPHRASE", PASSPHRASE.decode())
    out = tmp_path / "verify"
    assert not main(["registry", str(built.parent), "--out", str(out), "--as-of", "2026-12-02",
                     "--sign", str(p12)])
    from certgen.verify.revocation import load_revocations

    listed = load_revocations(out / "index.json")
    assert listed.signature is not None and listed.as_of == "2026-12-02"
    assert _detail(_verify((built / "certificate.en.pdf").read_bytes(), revocations=listed,
                           at=dt.datetime(2026, 12, 3, tzinfo=dt.UTC)),
                   "revocation").endswith("(index.json, as of 2026-12-02, signed by A. Sample)")


def test_an_unsigned_pdf_is_not_read_for_text_or_rendered(
        unsigned: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing vouches for an unsigned file, so verify neither extracts its text (a hostile page
    costs seconds of pypdf) nor renders its record (found by an attack pass). The file is the
    certificate as rendered before signing, never signed (the `unsigned` fixture)."""
    import pypdf

    pdf = unsigned

    def refuse(*args: object, **kwargs: object) -> str:
        raise AssertionError("the text of an unsigned PDF was read")

    monkeypatch.setattr(pypdf.PageObject, "extract_text", refuse)
    result = _verify(pdf)
    assert result.failed() == ["signature"]
    assert _detail(result, "record-sha256").startswith("skip not compared")
    assert _detail(result, "content").startswith("skip not compared")


def test_a_hostile_record_in_an_unsigned_pdf_is_a_verdict_not_a_traceback(
        built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A schema-valid record whose resolution is not WxH (found by an attack pass)."""
    import json

    from certgen.record import load_record

    data = json.loads((built / "record.json").read_bytes())
    data["runs"][0]["resolution"] = "big"
    record_bytes = json.dumps(data).encode()
    record = load_record(record_bytes)
    html = render_certificate_html(record, "en",
                                   record_sha256=hashlib.sha256(record_bytes).hexdigest(),
                                   verify_base=LAB.lab.verification_base, signed=True)
    path = tmp_path / "hostile.pdf"
    path.write_bytes(render_certificate_pdf(html, record, record_bytes, "en"))
    (tmp_path / "ca.pem").write_bytes(make_pki().ca_pem)
    assert main(["verify", str(path), "--trust", str(tmp_path / "ca.pem")]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err == ""
    assert "FAIL derivation: the record's figures cannot be re-derived (ValueError" in captured.out


def _crl(revoked: dict[int, dt.datetime], issued: dt.datetime, label: str = "Test CA") -> bytes:
    """A CRL of pkikit's CA `label` revoking the given serials (DER)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.serialization import Encoding

    pki = make_pki() if label == "Test CA" else make_pki(label)  # make_pki() is cached as called
    builder = (x509.CertificateRevocationListBuilder().issuer_name(pki.ca_cert.subject)
               .last_update(issued).next_update(issued + dt.timedelta(days=30)))
    for serial, when in revoked.items():
        builder = builder.add_revoked_certificate(
            x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(when).build())
    return builder.sign(pki.ca_key, hashes.SHA256()).public_bytes(Encoding.DER)


def test_a_key_its_ca_revoked_is_not_verified(signed: bytes) -> None:
    """Issue 40: the leaked key the CA revoked (pkikit's lab certificate is serial 2). Without a
    timestamp nothing proves the key signed before its revocation, so any revocation fails; a
    CRL issued before the signature, or by another CA, proves nothing."""
    now = dt.datetime(2026, 12, 5, tzinfo=dt.UTC)
    revoked = _verify(signed, crl=_crl({2: dt.datetime(2026, 12, 4, tzinfo=dt.UTC)}, now))
    assert revoked.failed() == ["trust"]
    assert _detail(revoked, "trust").startswith(
        "fail revoked: the signer's certificate (serial 2) was revoked by its CA on 2026-12-04 "
        "00:00:00+00:00 (CRL of 2026-12-05); without a timestamp nothing proves")
    clean = _verify(signed, crl=_crl({7: now}, now))
    assert clean.verdict == "verified"
    assert _detail(clean, "trust").endswith("; not revoked in its CA's CRL of 2026-12-05")
    early = _verify(signed, crl=_crl({}, dt.datetime(2026, 11, 1, tzinfo=dt.UTC)))
    assert _detail(early, "trust").startswith("fail the CRL --crl was issued on 2026-11-01 "
                                              "00:00:00+00:00, before the signature")
    other = _verify(signed, crl=_crl({}, now, label="Another CA"))
    assert _detail(other, "trust") == ("fail the CRL --crl is not signed by the CA that issued "
                                       "the signer's certificate")


def test_the_cli_says_a_status_list_is_out_of_date_and_reads_crl(
        built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As a customer would, with the files the registry publishes: past index.json's next
    update the verdict is VERIFIED EXCEPT (exit 3) and says why; --crl revoking the lab's key
    makes it NOT VERIFIED; --allow-unsigned-list is said in the verdict."""
    from certgen.builders.registry import build_registry

    registry = tmp_path / "verify"
    crl = _crl({2: dt.datetime(2026, 12, 4, tzinfo=dt.UTC)}, dt.datetime(2026, 12, 5,
                                                                          tzinfo=dt.UTC))
    build_registry(built.parent, registry, as_of=dt.date(2026, 12, 2), sign=_key(),
                   next_update=dt.date(2026, 12, 9), ca=make_pki().ca_pem, crl=crl)
    import json

    index = json.loads((registry / "index.json").read_bytes())
    assert index["signer_certificate_sha256"] == _key().fingerprint  # vouched for by the .p7s
    assert index["next_update"] == "2026-12-09"
    pdf = str(built / "certificate.en.pdf")
    base = ["verify", pdf, "--trust", str(registry / "ca.pem"), "--revocations",
            str(registry / "index.json")]
    assert not main([*base, "--at", "2026-12-03T00:00:00Z"])
    capsys.readouterr()
    assert main([*base, "--at", "2026-12-20T00:00:00Z"]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"VERIFIED EXCEPT: status list out of date: {pdf} (SAMPLE-GOLD-0002)"
    assert main([*base, "--at", "2026-12-06T00:00:00Z", "--crl", str(registry / "ca.crl")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1].endswith("1 check(s) failed: trust")
    (registry / "index.json.p7s").unlink()
    assert main([*base, "--at", "2026-12-03T00:00:00Z"]) == 1
    capsys.readouterr()
    assert not main([*base, "--at", "2026-12-03T00:00:00Z", "--allow-unsigned-list"])
    assert "unsigned: accepted with --allow-unsigned-list" in capsys.readouterr().out


@pytest.fixture(scope="module")
def other_stack(built: Path) -> bytes:
    """The certificate rendered (by this certgen) from its record edited to name another
    software stack (Pango 1.0.0): what verify compares by drawing, not bytes."""
    from renderkit import render_naming_another_stack

    return render_naming_another_stack((built / "record.json").read_bytes(),
                                       LAB.lab.verification_base)


def test_another_stack_is_compared_as_drawn(other_stack: bytes) -> None:
    """Issue 40: when the record names another software stack, the bytes cannot match and the
    pages are compared as PDFium and poppler draw them: an identical restatement passes (with the
    warning), a vector overlay, invisible to a text-and-image comparison, does not."""
    from forgekit40 import _facts, _unparse

    root = _facts(other_stack).root
    same = append_revision(other_stack, Revision(objects=[(root, _unparse(other_stack, root))]))
    result = _verify(sign_pdf(same, _key(), name=SIGNATORY))
    assert result.verdict == "verified", "\n".join(c.line() for c in result.checks)
    assert _detail(result, "content").startswith("pass every page, as PDFium and poppler draw it")
    assert result.warnings and "compared the pages as drawn" in result.warnings[0]
    number, body = forged_page_content(other_stack)
    overlaid = append_revision(other_stack, Revision(objects=[(number, body)]))
    result = _verify(sign_pdf(overlaid, _key(), name=SIGNATORY))
    assert result.failed() == ["content"]
    assert _detail(result, "content") == (
        "fail PDFium draws page 1 otherwise than this certgen's rendering of the record")
