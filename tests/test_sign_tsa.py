"""Signatures that outlive their key: `build --sign … --tsa URL` (PAdES B-LTA) against a real
RFC 3161 timestamp authority on loopback (OpenSSL's `ts`, tests/tsakit.py) and a CA whose CRL
the same server serves (issue 21).

The lab's key here is valid for two days only. With the timestamp, the certificate still
verifies a week later, offline (the server is stopped), from the validation data the PDF
carries; without one, the same key is refused for a 24-month certificate, and a signature made
with it fails as expired once the key has expired.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
from bundlekit import simple_bundle
from forgekit import add_field, rogue_timestamp, set_title, stamp_text
from forgekit40 import duplicate_xref, variants
from tsakit import PASSPHRASE, running_authority

from certgen.builders.certificate import build_bundle
from certgen.cli import main
from certgen.errors import CertgenError
from certgen.inputs.lab import load_lab
from certgen.render.sign import sign_pdf, signing_key
from certgen.verify.outcome import Verification
from certgen.verify.verdict import verify_pdf

ROOT = Path(__file__).resolve().parent.parent
LAB = load_lab(ROOT / "examples" / "lab.yaml")


@pytest.fixture(scope="module")
def timestamped(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A certificate signed with a two-day key and the TSA; the server is stopped after."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is missing: the TSA tests need OpenSSL's `ts` command")
    out = tmp_path_factory.mktemp("tsa")
    # A one-run certificate, the smallest the pipeline makes: every verify below runs pyHanko's
    # difference analysis, whose cost grows with the square of the PDF's objects (GOLD's
    # certificate has twice as many and takes four times as long); what is tested here is
    # the signature and its timestamps, not what the certificate shows.
    bundle = simple_bundle(out / "bundle", [(120.0, 108.0, 90.0)])
    # The CA's next CRL comes out just after the signature: the build must fetch it again.
    with running_authority(lab_valid_for=dt.timedelta(days=2), signatory="A. Sample",
                           fresh_crl="after-signing") as tsa:
        key = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12").with_tsa(tsa.tsa_url)
        built = build_bundle(bundle, out, languages=["en"], lab=LAB, sign=key)
        folder = Path(built.folder)
        without = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12")
        with pytest.raises(CertgenError) as refused:
            build_bundle(bundle, out / "plain", languages=["en"], lab=LAB, sign=without)
        requests = list(tsa.requests)
        unsigned_key = without.at(dt.datetime.now(dt.UTC), given=False)
        pdf = (folder / "certificate.en.pdf").read_bytes()
        restamped = _timestamp(stamp_text(pdf, "PLATINUM"), tsa.tsa_url)
        plain = _plain(folder, unsigned_key)
        # The plain-to-LTA conversion (issue 40): anyone appends a document timestamp from a
        # TSA the customer trusts to a plainly signed certificate, then a forged revision.
        converted = _timestamp(plain, tsa.tsa_url)
        other_stack = sign_pdf(_other_stack(folder), key.at(dt.datetime.now(dt.UTC), given=False),
                               name="A. Sample")
    return {"pdf": pdf, "ca": tsa.ca_pem, "restamped": restamped, "plain": plain,
            "converted": converted, "ca_key": tsa.ca_key,
            "requests": requests, "refused": str(refused.value), "key": unsigned_key,
            "key_expires": tsa.lab_not_after, "folder": folder, "notes": built.notes,
            "other_stack": other_stack}


def _plain(folder: Path, key: object) -> bytes:
    """The certificate of `folder` signed by `key` without a timestamp (as an older certgen)."""
    import hashlib

    from certgen.record import load_record
    from certgen.render.certificate import render_certificate_html, render_certificate_pdf

    record_bytes = (folder / "record.json").read_bytes()
    record = load_record(record_bytes)
    html = render_certificate_html(record, "en",
                                   record_sha256=hashlib.sha256(record_bytes).hexdigest(),
                                   verify_base=LAB.lab.verification_base, signed=True)
    return sign_pdf(render_certificate_pdf(html, record, record_bytes, "en"), key,  # type: ignore[arg-type]
                    name="A. Sample")


def _other_stack(folder: Path) -> bytes:
    """The certificate of `folder` rendered from its record edited to name another software
    stack, unsigned, with its bytes made to differ from this stack's render."""
    from renderkit import render_naming_another_stack

    pdf = render_naming_another_stack((folder / "record.json").read_bytes(),
                                      LAB.lab.verification_base)
    # Another stack's bytes differ from this one's render: here, the catalog restated as is.
    from forgekit40 import Revision, _facts, _unparse, append_revision

    root = _facts(pdf).root
    return append_revision(pdf, Revision(objects=[(root, _unparse(pdf, root))]))


def test_a_timestamped_certificate_of_another_stack_is_compared_as_signed(
        timestamped: dict[str, object]) -> None:
    """A B-LTA certificate whose record names another software stack: its pages are compared
    as the signed revision has them (the document timestamps' widgets that follow are held by
    the strict revision reader, not counted as annotations the record lacks)."""
    result = _verify(timestamped, timestamped["other_stack"])  # type: ignore[arg-type]
    assert result.verdict == "verified", "\n".join(c.line() for c in result.checks)
    assert _detail(result, "content").startswith("pass every page, as PDFium and poppler draw it")
    assert result.warnings and "compared the pages as drawn" in result.warnings[0]


def _timestamp(pdf: bytes, url: str) -> bytes:
    """`pdf` with a document timestamp of its own from the (trusted) TSA, as an attacker who
    changed the file would add one to make the last revision look covered."""
    import asyncio
    import io

    import aiohttp
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign.signers import PdfTimeStamper
    from pyhanko.sign.timestamps.aiohttp_client import HTTPTimeStamper

    async def run() -> bytes:
        async with aiohttp.ClientSession() as session:
            out = io.BytesIO()
            await PdfTimeStamper(HTTPTimeStamper(url, session=session)).async_timestamp_pdf(
                IncrementalPdfFileWriter(io.BytesIO(pdf)), "sha256", output=out)
            return out.getvalue()

    return asyncio.run(run())


def _verify(data: dict[str, object], pdf: bytes | None = None,
            at: dt.datetime | None = None) -> Verification:
    return verify_pdf(pdf or data["pdf"], trust=data["ca"], revocations=(),  # type: ignore[arg-type]
                      at=at)


def _detail(result: Verification, name: str) -> str:
    [check] = [c for c in result.checks if c.name == name]
    return f"{check.verdict} {check.detail}"


def test_the_tsa_and_the_crl_were_used(timestamped: dict[str, object]) -> None:
    requests = timestamped["requests"]
    assert isinstance(requests, list)
    # The CRL before signing and again after the signature timestamp; the signature timestamp,
    # a document timestamp over the first validation data, one over the later CRL.
    assert requests.count("GET /ca.crl") >= 2 and requests.count("POST /tsa") >= 3


def test_a_timestamped_certificate_verifies_now(timestamped: dict[str, object]) -> None:
    result = _verify(timestamped)
    assert result.verdict == "verified", "\n".join(c.line() for c in result.checks)
    assert "2 document timestamp(s) follow" in _detail(result, "intact")
    assert _detail(result, "content").startswith("pass the file is, byte for byte, ")
    # Every certificate the long-term validation needs has its revocation information inside.
    import io

    from pyhanko.pdf_utils.reader import PdfFileReader

    from certgen.verify.signature import missing_revocation_info

    pdf = timestamped["pdf"]
    assert isinstance(pdf, bytes)
    [sig] = PdfFileReader(io.BytesIO(pdf), strict=False).embedded_regular_signatures
    assert missing_revocation_info(sig) is None


def test_it_verifies_after_the_key_expired_offline(timestamped: dict[str, object]) -> None:
    expired = timestamped["key_expires"]
    assert isinstance(expired, dt.datetime)
    later = expired + dt.timedelta(days=5)
    result = _verify(timestamped, at=later)
    assert result.verdict == "verified", "\n".join(c.line() for c in result.checks)
    assert "the timestamps prove the signature existed at " in _detail(result, "trust")
    # The build fetched the CA's CRL again after the signature timestamp and embedded it under
    # a second document timestamp: the file alone shows the key unrevoked when it signed
    # (issue 40), so nothing is fetched now (the server is stopped) and no note was printed.
    assert ", embedded, shows its key unrevoked then" in _detail(result, "trust")
    assert timestamped["notes"] == ()
    # pyHanko's own AdES LTA validation agrees, at the same time, offline.
    import asyncio
    import io

    from pyhanko.keys import load_certs_from_pemder_data
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation.ades import ades_lta_validation
    from pyhanko.sign.validation.policy_decl import (
        PdfSignatureValidationSpec,
        RevinfoOnlineFetchingRule,
        RevocationInfoGatheringSpec,
        SignatureValidationSpec,
    )
    from pyhanko_certvalidator.context import CertValidationPolicySpec
    from pyhanko_certvalidator.ltv.types import ValidationTimingInfo
    from pyhanko_certvalidator.policy_decl import REQUIRE_REVINFO, CertRevTrustPolicy
    from pyhanko_certvalidator.registry import SimpleTrustManager

    pdf = timestamped["pdf"]
    assert isinstance(pdf, bytes)
    [sig] = PdfFileReader(io.BytesIO(pdf)).embedded_regular_signatures
    roots = list(load_certs_from_pemder_data(timestamped["ca"]))  # type: ignore[arg-type]
    spec = PdfSignatureValidationSpec(SignatureValidationSpec(
        cert_validation_policy=CertValidationPolicySpec(
            trust_manager=SimpleTrustManager.build(trust_roots=roots),
            revinfo_policy=CertRevTrustPolicy(REQUIRE_REVINFO)),
        revinfo_gathering_policy=RevocationInfoGatheringSpec(
            online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY)))
    timing = ValidationTimingInfo(validation_time=later, best_signature_time=later,
                                  point_in_time_validation=False)
    assert asyncio.run(ades_lta_validation(sig, spec, timing_info=timing)).api_status.bottom_line


def test_without_a_timestamp_the_short_key_is_refused_and_its_signature_dies(
        timestamped: dict[str, object]) -> None:
    assert str(timestamped["refused"]).startswith("--sign: the key's certificate expires on ")
    assert "or add a timestamp (--tsa URL)" in str(timestamped["refused"])
    plain = timestamped["plain"]  # signed anyway, as an older certgen did
    assert isinstance(plain, bytes)
    # Its key names a CRL address, now gone (the server is stopped): nothing shows the key
    # unrevoked when it signed (issue 40), until the CA's later CRL is given.
    unshown = _verify(timestamped, plain)
    assert unshown.verdict == "verified-except", _detail(unshown, "trust")
    assert "cannot be reached" in _detail(unshown, "trust")
    assert verify_pdf(plain, trust=timestamped["ca"], revocations=(),  # type: ignore[arg-type]
                      crl=_later_crl(timestamped)).verdict == "verified"
    expired = timestamped["key_expires"]
    assert isinstance(expired, dt.datetime)
    late = _verify(timestamped, plain, at=expired + dt.timedelta(days=5))
    assert late.failed() == ["trust"]
    assert _detail(late, "trust").startswith("fail expired: the signer's certificate ")


def _appended(data: dict[str, object]) -> int:
    """The number a revision appended to the genuine file has, counted after the signed one
    (the genuine file's own validation data and timestamps come first)."""
    import io

    from pyhanko.pdf_utils.reader import PdfFileReader

    reader = PdfFileReader(io.BytesIO(data["pdf"]), strict=False)  # type: ignore[arg-type]
    [sig] = reader.embedded_regular_signatures
    return reader.xrefs.total_revisions - sig.signed_revision


def _later_crl(data: dict[str, object]) -> bytes:
    """The CA's CRL issued now, listing nothing."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.serialization import Encoding

    ca = x509.load_pem_x509_certificate(data["ca"])  # type: ignore[arg-type]
    now = dt.datetime.now(dt.UTC)
    return (x509.CertificateRevocationListBuilder().issuer_name(ca.subject)
            .last_update(now).next_update(now + dt.timedelta(days=7))
            .sign(data["ca_key"], hashes.SHA256())  # type: ignore[arg-type]
            .public_bytes(Encoding.DER))


def test_an_overlay_after_the_timestamps_is_not_verified(timestamped: dict[str, object]) -> None:
    pdf = timestamped["pdf"]
    assert isinstance(pdf, bytes)
    result = _verify(timestamped, stamp_text(pdf, "PLATINUM"))
    assert result.verdict == "not-verified"
    assert "intact" in result.failed()


def test_an_overlay_under_a_fresh_document_timestamp_is_not_verified(
        timestamped: dict[str, object]) -> None:
    """The overlay followed by a document timestamp from the lab's own TSA: the last revision is
    covered, but what lies between the signature and it is more than validation data."""
    result = _verify(timestamped, timestamped["restamped"])  # type: ignore[arg-type]
    assert result.verdict == "not-verified"
    assert _detail(result, "intact").startswith(
        f"fail revision {_appended(timestamped)} after the signed one (bytes "), _detail(result, "intact")
    assert "is neither validation data nor a document timestamp" in _detail(result, "intact")


@pytest.mark.parametrize("variant", ["js", "freetext", "title"])
def test_what_pyhanko_lets_pass_as_an_lta_update_is_not_verified(
        timestamped: dict[str, object], variant: str) -> None:
    """Appended to a genuine B-LTA certificate, each passes pyHanko's difference analysis as
    an LTA update (found by an attack pass): a JavaScript action on an invisible signature
    widget, a FreeText overlay whose five-number /Rect pyHanko cannot measure, a new window
    title. certgen checks what the later revisions add itself."""
    pdf = timestamped["pdf"]
    assert isinstance(pdf, bytes)
    forged = set_title(pdf, "PLATINUM certificate") if variant == "title" else add_field(
        pdf, variant)
    result = _verify(timestamped, forged)
    assert result.verdict == "not-verified"
    detail = _detail(result, "intact")
    # The strict reader of the revisions after the signature (issue 40) names them first.
    wanted = {"js": "(/Type /Annot) is neither validation data nor a document timestamp",
              "freetext": "(/Type /Annot) is neither validation data nor a document timestamp",
              "title": "(the document information) changes /Title (readers show it)"}
    assert detail.startswith(f"fail revision {_appended(timestamped)} after the signed one (bytes "), detail
    assert wanted[variant] in detail, detail


def test_a_document_timestamp_from_an_untrusted_authority_is_not_verified(
        timestamped: dict[str, object]) -> None:
    """A plainly signed certificate given a document timestamp by a TSA of the forger's own:
    the timestamp must chain to the trusted roots before it counts for anything."""
    plain = timestamped["plain"]
    assert isinstance(plain, bytes)
    assert verify_pdf(plain, trust=timestamped["ca"], revocations=(),  # type: ignore[arg-type]
                      crl=_later_crl(timestamped)).verdict == "verified"
    result = _verify(timestamped, rogue_timestamp(plain))
    # A plain signature followed by timestamps is refused before any timestamp counts (issue 40).
    assert _detail(result, "intact").startswith(
        "fail document timestamps follow a signature that carries no signature timestamp")


def test_pdfsig_reports_the_signature_valid_and_the_timestamp(
        timestamped: dict[str, object], tmp_path: Path) -> None:
    if shutil.which("pdfsig") is None:
        pytest.fail("pdfsig (Debian poppler-utils) is missing: `make test` installs it as root")
    path = tmp_path / "cert.pdf"
    pdf = timestamped["pdf"]
    assert isinstance(pdf, bytes)
    path.write_bytes(pdf)
    report = subprocess.run(["pdfsig", "-nocert", str(path)], capture_output=True, text=True,
                            timeout=60).stdout
    assert "Signer Certificate Common Name: A. Sample" in report
    assert "Signature Validation: Signature is Valid." in report
    assert "Signer Certificate Common Name: TSA test authority" in report  # the document timestamp


def test_verify_at_takes_an_iso_time(timestamped: dict[str, object], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    pdf, ca = tmp_path / "cert.pdf", tmp_path / "ca.pem"
    pdf.write_bytes(timestamped["pdf"])  # type: ignore[arg-type]
    ca.write_bytes(timestamped["ca"])  # type: ignore[arg-type]
    expired = timestamped["key_expires"]
    assert isinstance(expired, dt.datetime)
    at = (expired + dt.timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    code = main(["verify", str(pdf), "--trust", str(ca), "--at", at, "--revocations",
                 str(ROOT / "examples" / "revocations.yaml")])
    captured = capsys.readouterr()
    assert not code, captured.out
    assert captured.out.splitlines()[-1].startswith("VERIFIED: ")
    with pytest.raises(SystemExit) as exit_:
        main(["verify", str(pdf), "--trust", str(ca), "--at", "2026-12-01"])
    assert exit_.value.code == 2


def test_an_authority_answering_an_http_error_is_named_so(tmp_path: Path) -> None:
    """A TSA address that answers (here HTTP 500) is not reported as unreachable: the one line
    says what it answered, so the lab looks at the server, not at its network."""
    import http.server
    import threading

    class Failing(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(500, "Internal Server Error")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    url = f"http://127.0.0.1:{server.server_address[1]}/tsa"
    try:
        with running_authority(lab_valid_for=dt.timedelta(days=2), signatory="A. Sample") as tsa:
            key = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12").with_tsa(url)
            with pytest.raises(CertgenError) as refused:
                build_bundle(bundle, tmp_path / "out", languages=["en"], lab=LAB, sign=key)
    finally:
        server.shutdown()
    assert str(refused.value).startswith(f"--tsa {url}: the timestamp authority or a CRL "
                                         "address answered HTTP 500"), refused.value
    assert "\n" not in str(refused.value)
    assert not any((tmp_path / "out").rglob("*.pdf"))  # nothing half-signed is left


def test_a_silent_authority_is_given_up_after_the_stated_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listener that accepts and never answers: the refusal comes after certgen's own wait
    (TSA_TIMEOUT_S, here 1 s; not pyHanko's 5 s default) and says how long it waited."""
    import socket

    import certgen.render.sign as sign_module

    monkeypatch.setattr(sign_module, "TSA_TIMEOUT_S", 1)
    # pyHanko's stamper sets its own per-request timeout (5 s), which overrides the session's:
    # the wait stated in the message is the one the stamper was given.
    from pyhanko.sign.timestamps import aiohttp_client

    given: list[object] = []
    real_init = aiohttp_client.HTTPTimeStamper.__init__

    def init(self: object, *args: object, **kwargs: object) -> None:
        given.append(kwargs.get("timeout"))
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(aiohttp_client.HTTPTimeStamper, "__init__", init)
    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/tsa"
        with running_authority(lab_valid_for=dt.timedelta(days=2), signatory="A. Sample") as tsa:
            key = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12").with_tsa(url)
            with pytest.raises(CertgenError) as refused:
                build_bundle(bundle, tmp_path / "out", languages=["en"], lab=LAB, sign=key)
    assert str(refused.value) == (f"--tsa {url}: the timestamp authority or a CRL address did "
                                  "not answer within 1 s")
    assert given == [1]


# --------------------------------------------------------------------------- issue 40

FORGED_LTA = ["dup-xref-table", "dup-xref-table-origfirst", "dup-xref-hybrid", "dup-xref-stream",
              "copied-eof-table", "copied-eof-stream", "links-plain", "links-objstm",
              "links-dup", "links-dup-hybrid", "links-dup-objstm", "links-copied-eof",
              "links-copied-eof-objstm", "noop-revision", "orphan-objects", "catalog-version"]


@pytest.fixture(scope="module")
def forged(timestamped: dict[str, object]) -> dict[str, bytes]:
    pdf = timestamped["pdf"]
    assert isinstance(pdf, bytes)
    return variants(pdf)


def test_the_forgery_kit_builds_every_class(forged: dict[str, bytes]) -> None:
    assert sorted(forged) == sorted(FORGED_LTA)


@pytest.mark.parametrize("name", FORGED_LTA)
def test_a_revision_after_the_timestamps_that_is_not_certgen_s_is_not_verified(
        timestamped: dict[str, object], forged: dict[str, bytes], name: str) -> None:
    """Each variant class of issue 40 appended to a genuine B-LTA certificate (parser
    differentials: an object listed twice in a classic, hybrid or stream xref, a copied
    `startxref … %%EOF` before a short xref; restated link annotations and outline items, in
    an object stream too; a no-op revision, orphan objects, a new /Version): the strict reader
    of the revisions after the signature names the revision and the object."""
    result = _verify(timestamped, forged[name])
    assert result.verdict == "not-verified"
    if name in ("dup-xref-stream", "links-dup-objstm"):
        # pyHanko itself cannot read these: the signature check says so first.
        assert _detail(result, "signature") == ("fail the PDF's structure cannot be read (a "
                                                "damaged or truncated file)")
        return
    assert result.failed()[0] == "intact", result.failed()
    detail = _detail(result, "intact")
    assert detail.startswith(f"fail revision {_appended(timestamped)} after the signed one ("), detail
    expected = {"dup-xref-table": "lists object", "dup-xref-table-origfirst": "lists object",
                "dup-xref-stream": "lists object", "copied-eof-table": "`startxref` at byte",
                "copied-eof-stream": "`startxref` at byte", "links-plain": "of an earlier "
                "revision is redefined", "links-objstm": "in an object stream",
                "links-dup": "is defined twice", "links-dup-objstm": "in an object stream",
                "links-dup-hybrid": "in an object stream", "dup-xref-hybrid": "not followed by",
                "links-copied-eof": "`startxref` at byte",
                "links-copied-eof-objstm": "`startxref` at byte",
                "noop-revision": "adds neither validation data nor a document timestamp",
                "orphan-objects": "is neither validation data", "catalog-version": "gains /Version"}
    assert expected[name] in detail, detail


def test_a_plain_signature_made_to_look_long_term_is_not_verified(
        timestamped: dict[str, object]) -> None:
    """The plain-to-LTA conversion: a document timestamp from the customer's trusted TSA on a
    plainly signed certificate, with and without a forged revision after it."""
    converted = timestamped["converted"]
    assert isinstance(converted, bytes)
    for pdf in (converted, duplicate_xref(converted)):
        result = _verify(timestamped, pdf)
        assert result.verdict == "not-verified"
        assert "intact" in result.failed()
    assert _detail(_verify(timestamped, converted), "intact") == (
        "fail document timestamps follow a signature that carries no signature timestamp: "
        "certgen adds validation data and document timestamps only to a signature it "
        "timestamped itself (a plain signature was made to look long-term after signing)")


def test_a_timestamped_signature_by_a_key_revoked_before_it_is_not_verified(
        timestamped: dict[str, object]) -> None:
    """Issue 40: a leaked key the CA revoked, used with --tsa (the build embeds the CA's CRL of
    before the revocation): the CA's current CRL (--crl) shows the key revoked before the time
    the timestamps prove; a revocation after that time leaves the signature valid."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.serialization import Encoding

    ca = x509.load_pem_x509_certificate(timestamped["ca"])  # type: ignore[arg-type]
    issued = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=5)

    def crl(revoked_at: dt.datetime) -> bytes:
        entry = x509.RevokedCertificateBuilder().serial_number(2).revocation_date(
            revoked_at).build()
        return (x509.CertificateRevocationListBuilder().issuer_name(ca.subject)
                .last_update(issued).next_update(issued + dt.timedelta(days=7))
                .add_revoked_certificate(entry)
                .sign(timestamped["ca_key"], hashes.SHA256())  # type: ignore[arg-type]
                .public_bytes(Encoding.DER))

    expires = timestamped["key_expires"]
    assert isinstance(expires, dt.datetime)
    # The key was issued an hour before the build and valid two days: revoked half an hour
    # before the build signed.
    revoked = expires - dt.timedelta(days=2, minutes=30)
    before = verify_pdf(timestamped["pdf"], trust=timestamped["ca"], revocations=(),  # type: ignore[arg-type]
                        crl=crl(revoked))
    assert before.failed() == ["trust"]
    assert _detail(before, "trust").startswith(
        f"fail revoked: the signer's certificate (serial 2) was revoked by its CA on "
        f"{revoked.replace(microsecond=0).isoformat(sep=' ')}")
    after = verify_pdf(timestamped["pdf"], trust=timestamped["ca"], revocations=(),  # type: ignore[arg-type]
                       crl=crl(issued - dt.timedelta(minutes=1)))
    assert after.verdict == "verified", _detail(after, "trust")
    assert "; revoked by its CA on " in _detail(after, "trust")
    assert "after the timestamps prove the signature existed" in _detail(after, "trust")
