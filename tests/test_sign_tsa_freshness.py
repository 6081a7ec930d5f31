"""The signer's key status when it signed (issue 40, item 4): a CRL counts only if it was issued
at or after the time it must cover (the time the timestamps prove).

A real TSA and CA on loopback (tests/tsakit.py). Its CA serves the CRL it issued when it started
(a CA that re-issues on a schedule), so `build --tsa` can embed only a CRL of before the
signature: the build says so in a note, verify offline says VERIFIED EXCEPT (never VERIFIED),
verify online reads the CA's CRL from the address the certificate names, and once the CA has
revoked the key before the signature (a leaked key, signing after its revocation with the
pre-revocation CRL embedded), the fetched CRL makes it NOT VERIFIED.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import http.server
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from bundlekit import simple_bundle
from tsakit import PASSPHRASE, running_authority

from certgen.builders.certificate import build_bundle
from certgen.cli import main
from certgen.inputs.lab import load_lab
from certgen.render.sign import (
    _add_crl_and_timestamp,
    _signer,
    embedded_signer_crl_date,
    signature_time,
    signing_key,
)
from certgen.support.crlfetch import STEP_S, CrlFetchError, fetch_crl
from certgen.verify.outcome import Verification
from certgen.verify.verdict import verify_pdf

ROOT = Path(__file__).resolve().parent.parent
LAB = load_lab(ROOT / "examples" / "lab.yaml")
UNSHOWN = "the signer's key status when it signed not shown"


def _key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _crl(ca_pem: bytes, key: Any, delta: bool = False) -> Any:
    """A CRL issued now, naming the CA of `ca_pem` as its issuer, signed by `key` (a delta CRL:
    `delta`)."""
    from asn1crypto import crl as crls
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.serialization import Encoding

    ca = x509.load_pem_x509_certificate(ca_pem)
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateRevocationListBuilder().issuer_name(ca.subject).last_update(now)
               .next_update(now + dt.timedelta(days=7)))
    if delta:
        builder = builder.add_extension(x509.DeltaCRLIndicator(1), critical=True)
    der = builder.sign(key, hashes.SHA256()).public_bytes(Encoding.DER)
    return crls.CertificateList.load(der)


def _trust(result: Verification) -> str:
    [check] = [c for c in result.checks if c.name == "trust"]
    return f"{check.verdict} {check.detail}"


def test_a_crl_of_before_the_signature_never_verifies_and_a_revoked_key_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    with running_authority(lab_valid_for=dt.timedelta(days=30), signatory="A. Sample",
                           fresh_crl=False) as tsa:
        key = signing_key(tsa.lab_p12, PASSPHRASE, source="lab.p12").with_tsa(tsa.tsa_url)
        built = build_bundle(bundle, tmp_path / "out", languages=["en"], lab=LAB, sign=key)
        pdf = (Path(built.folder) / "certificate.en.pdf").read_bytes()
        signed, embedded = signature_time(pdf), embedded_signer_crl_date(pdf)
        assert signed is not None and embedded is not None and embedded < signed
        # The build said what the file lacks, in one note.
        [note] = built.notes
        assert note.startswith("the CA's CRL at the signing key's CRL address was issued on ")
        assert "before the signature timestamp" in note
        # The CLI prints the build's note on stderr, one line (the same authority: no
        # revocation yet, its first CRL still served).
        p12 = tmp_path / "lab.p12"
        p12.write_bytes(tsa.lab_p12)
        with pytest.MonkeyPatch.context() as env:
            env.setenv("CERTGEN_SIGN_PASSPHRASE", PASSPHRASE.decode())
            capsys.readouterr()
            main(["build", str(bundle), "--out", str(tmp_path / "cli"), "--lab",
                  str(ROOT / "examples" / "lab.yaml"), "--lang", "en", "--sign", str(p12),
                  "--tsa", tsa.tsa_url])
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("certgen: note: "), err

        offline = verify_pdf(pdf, trust=tsa.ca_pem, revocations=(), offline=True)
        assert offline.verdict == "verified-except", _trust(offline)
        assert offline.summary().startswith(f"VERIFIED EXCEPT: {UNSHOWN}")
        assert "--offline: its CA's CRL was not fetched" in _trust(offline)

        # Anyone may append validation data under a document timestamp: a CRL dated after the
        # signature that names the CA as its issuer but is not signed by it shows nothing; the
        # same CRL signed by the CA does (so the first verdict is the signature's doing).
        # A CRL the CA signed that is only a delta (an attack pass: a CA publishing daily deltas
        # leaves out of each what its full CRL already lists) shows nothing either.
        signer = _signer(tsa.lab_p12, PASSPHRASE)
        for by, delta, verdict in ((_key(), False, "not-verified"),
                                   (tsa.ca_key, True, "verified-except"),
                                   (tsa.ca_key, False, "verified")):
            appended = asyncio.run(_add_crl_and_timestamp(pdf, _crl(tsa.ca_pem, by, delta),
                                                          signer, tsa.tsa_url))
            held = verify_pdf(appended, trust=tsa.ca_pem, revocations=(), offline=True)
            assert held.verdict == verdict, _trust(held)
            if verdict == "not-verified":
                assert "embedded in the file is not signed by the CA" in _trust(held)

        # Online: the CA's address still serves the CRL of before the signature.
        online = verify_pdf(pdf, trust=tsa.ca_pem, revocations=())
        assert online.verdict == "verified-except", _trust(online)
        assert f"the CRL {tsa.crl_url} was issued on " in _trust(online)

        # The CA revokes the key as of before the signature and publishes a CRL at once.
        assert tsa.revoked is not None
        revoked_at = signed.replace(microsecond=0) - dt.timedelta(minutes=1)
        tsa.revoked.append((2, revoked_at))
        fetched = verify_pdf(pdf, trust=tsa.ca_pem, revocations=())
        assert fetched.failed() == ["trust"], _trust(fetched)
        assert _trust(fetched).startswith(
            f"fail revoked: the signer's certificate (serial 2) was revoked by its CA on "
            f"{revoked_at.isoformat(sep=' ')}")

        # The command line says the same; --offline still cannot call it VERIFIED.
        path = tmp_path / "cert.pdf"
        path.write_bytes(pdf)
        ca = tmp_path / "ca.pem"
        ca.write_bytes(tsa.ca_pem)
        capsys.readouterr()
        assert main(["verify", str(path), "--trust", str(ca)]) == 1
        assert capsys.readouterr().out.splitlines()[-1].startswith("NOT VERIFIED: ")
        assert main(["verify", str(path), "--trust", str(ca), "--offline"]) == 3
        assert capsys.readouterr().out.splitlines()[-1].startswith(
            f"VERIFIED EXCEPT: {UNSHOWN}")


@contextmanager
def _serving(answers: dict[str, tuple[int, bytes, dict[str, str]]]) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            status, body, headers = answers.get(self.path, (404, b"", {}))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with _loopback(Handler) as base:
        yield base


@contextmanager
def _dripping(seconds: int) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(seconds))
            self.end_headers()
            try:
                for _ in range(seconds):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass

    with _loopback(Handler) as base:
        yield base


@contextmanager
def _loopback(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on a free loopback port (its base URL) until the block ends; a request
    still being answered (a drip) does not hold the shutdown up."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_crl_address_is_read_within_its_bounds() -> None:
    """What verify fetches is bounded and http(s) only: an error, an oversized answer and a
    redirect to another scheme are one line each, never a traceback."""
    with _serving({"/ok": (200, b"crl", {}), "/big": (200, b"x" * 2048, {}),
                   "/gone": (500, b"", {}),
                   "/ftp": (302, b"", {"Location": "ftp://example.org/ca.crl"})}) as base:
        assert fetch_crl(f"{base}/ok") == b"crl"
        for path, said in (("/big", "answered more than 1024 bytes"),
                           ("/gone", "answered HTTP 500"),
                           ("/ftp", "redirected to 'ftp://example.org/ca.crl'")):
            with pytest.raises(CrlFetchError) as refused:
                fetch_crl(f"{base}{path}", limit=1024)
            assert str(refused.value).startswith(said), str(refused.value)
    # An answer dripped a byte at a time is given up at the deadline, not read to its end
    # (60 s here): a bound, not a speed measurement.
    with _dripping(60) as base:
        started = time.monotonic()
        with pytest.raises(CrlFetchError, match="did not answer within 1 s"):
            fetch_crl(f"{base}/drip", timeout=1)
        assert time.monotonic() - started < 1 + STEP_S + 5
    with pytest.raises(CrlFetchError, match="not an http"):
        fetch_crl("file:///etc/passwd")
    with pytest.raises(CrlFetchError, match="cannot be reached"):
        fetch_crl("http://127.0.0.1:1/ca.crl")


def test_a_key_whose_status_only_an_ocsp_responder_publishes_is_not_shown() -> None:
    """verify reads CRLs; a certificate naming only an OCSP responder leaves the status unshown
    (the check not run, never passed), saying why."""
    from asn1crypto import x509 as ax509
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.serialization import Encoding
    from cryptography.x509.oid import AuthorityInformationAccessOID, NameOID

    from certgen.verify.outcome import Check, Said
    from certgen.verify.revocation import signer_status

    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "OCSP only")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(7).not_valid_before(now)
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.AuthorityInformationAccess([x509.AccessDescription(
                AuthorityInformationAccessOID.OCSP,
                x509.UniformResourceIdentifier("http://127.0.0.1:1/ocsp"))]), critical=False)
            .sign(key, hashes.SHA256()))
    loaded = ax509.Certificate.load(cert.public_bytes(Encoding.DER))
    passed = Check("trust", "pass", Said("%(subject)s chains to the trusted CA",
                                         subject="OCSP only"))
    status = signer_status(passed, loaded, [], signed_at=now, proven=None, shown=None, crl=None,
                           offline=False)
    assert status.verdict == "skip" and status.short == UNSHOWN
    assert "only through an OCSP responder, which verify does not query" in status.detail
