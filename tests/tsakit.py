"""A real RFC 3161 timestamp authority and a CA's CRL on loopback, for the long-term signature
tests: `openssl ts -reply` (OpenSSL's own TSA) answers timestamp queries over HTTP, and the CA's
CRL (made with cryptography) is served at the address its certificates name. Started by the test
itself in a temporary folder; stopped when the test ends.

The PKI: a root CA whose certificates carry a CRL distribution point on this server; the lab's
signing key (its validity chosen by the test: one that expires soon, to show a timestamp keeps
the signature verifiable after it); a TSA key with the timeStamping extended key usage.
"""

from __future__ import annotations

import datetime as dt
import http.server
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PASSPHRASE = b"tsa test passphrase"


@dataclass(frozen=True)
class Authority:
    """The running server: the TSA's URL, the CA (PEM) to trust, the lab's key (PKCS#12)."""

    tsa_url: str
    crl_url: str
    ca_pem: bytes
    lab_p12: bytes
    lab_not_after: dt.datetime
    requests: list[str]
    """The paths asked for, in order (the test shows the CRL and the TSA were used)."""
    ca_key: Any = None
    """The CA's private key (a test issues a later CRL with it: a revoked lab key)."""
    revoked: list[tuple[int, dt.datetime]] | None = None
    """(serial, when) the CA has revoked: every CRL served from now on lists them (a test
    appends to it)."""


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "certgen TSA tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _usage(**on: bool) -> x509.KeyUsage:
    names = ("digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
             "key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only")
    return x509.KeyUsage(**{n: on.get(n, False) for n in names})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _openssl_config(folder: Path) -> Path:
    config = folder / "tsa.cnf"
    config.write_text(f"""
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {folder}
serial = $dir/tsaserial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/chain.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = 1.3.6.1.4.1.4146.2.3
digests = sha256, sha384, sha512
accuracy = secs:1
ordering = yes
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
""", "utf-8")
    (folder / "tsaserial").write_text("01\n", "utf-8")
    return config


@contextmanager
def running_authority(*, lab_valid_for: dt.timedelta, signatory: str,
                      tsa_names_crl: bool = True,
                      fresh_crl: bool | str = "after-signing") -> Iterator[Authority]:
    """Start the TSA and CRL server; yield what the test needs; stop it. `tsa_names_crl=False`:
    the TSA's certificate names no CRL distribution point (a chain a verifier cannot check).
    The CA serves the CRL it issued when it started until it has answered a timestamp query,
    and one issued at each request after (`fresh_crl="after-signing"`, the default: the CA's
    next CRL comes out just after a signature, so a build always fetches again and embeds it
    under a second document timestamp: the same revisions on every run). `fresh_crl=True`: a
    CRL issued at each request (whether the build's first CRL already covers the signature
    then depends on the second both fall in); `False`: always the first (a CA that re-issues
    on a schedule)."""
    if shutil.which("openssl") is None:
        raise RuntimeError("openssl is missing: the TSA tests need OpenSSL's `ts` command")
    folder = Path(tempfile.mkdtemp(prefix="certgen-tsa-"))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    crl_url = f"{base}/ca.crl"
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    dp = x509.CRLDistributionPoints([x509.DistributionPoint(
        full_name=[x509.UniformResourceIdentifier(crl_url)], relative_name=None, reasons=None,
        crl_issuer=None)])
    ca_key, lab_key, tsa_key = _key(), _key(), _key()
    ca = (x509.CertificateBuilder().subject_name(_name("TSA test CA")).issuer_name(_name("TSA test CA"))
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=3650))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(_usage(key_cert_sign=True, crl_sign=True), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    aki = x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key())
    lab_not_after = now + lab_valid_for
    lab_name = x509.Name([  # the sample lab's name as O: verify binds it (issue 40)
        x509.NameAttribute(NameOID.ORGANIZATION_NAME,
                           "Sample Frame-Pacing Laboratory (SPECIMEN, not a real laboratory)"),
        x509.NameAttribute(NameOID.COMMON_NAME, signatory)])
    lab = (x509.CertificateBuilder().subject_name(lab_name).issuer_name(ca.subject)
           .public_key(lab_key.public_key()).serial_number(2)
           .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(lab_not_after)
           .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
           .add_extension(_usage(digital_signature=True, content_commitment=True), critical=True)
           .add_extension(aki, critical=False).add_extension(dp, critical=False)
           .sign(ca_key, hashes.SHA256()))
    tsa_builder = (x509.CertificateBuilder().subject_name(_name("TSA test authority")).issuer_name(ca.subject)
           .public_key(tsa_key.public_key()).serial_number(3)
           .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=3000))
           .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
           .add_extension(_usage(digital_signature=True, content_commitment=True), critical=True)
           .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
           .add_extension(aki, critical=False))
    if tsa_names_crl:
        tsa_builder = tsa_builder.add_extension(dp, critical=False)
    tsa = tsa_builder.sign(ca_key, hashes.SHA256())
    revoked: list[tuple[int, dt.datetime]] = []

    def crl_der() -> bytes:
        # A revocation is published at once (docs/verify.md): a fresh CRL from then on.
        fresh = fresh_crl is True or bool(revoked) or (
            fresh_crl == "after-signing" and any(r.startswith("POST") for r in requests))
        issued = dt.datetime.now(dt.UTC).replace(microsecond=0) if fresh else \
            now - dt.timedelta(minutes=5)
        builder = (x509.CertificateRevocationListBuilder().issuer_name(ca.subject)
                   .last_update(issued).next_update(issued + dt.timedelta(days=30))
                   .add_extension(aki, critical=False)
                   .add_extension(x509.CRLNumber(int(issued.timestamp())), critical=False))
        for serial, when in list(revoked):
            builder = builder.add_revoked_certificate(
                x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(when)
                .build())
        return builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)

    pem = serialization.Encoding.PEM
    (folder / "tsa.pem").write_bytes(tsa.public_bytes(pem))
    (folder / "chain.pem").write_bytes(tsa.public_bytes(pem) + ca.public_bytes(pem))
    (folder / "tsa.key").write_bytes(tsa_key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    config = _openssl_config(folder)
    requests: list[str] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            requests.append(f"GET {self.path}")
            if self.path == "/ca.crl":
                self._send(crl_der(), "application/pkix-crl")
            else:
                self.send_error(404)

        def do_POST(self) -> None:
            requests.append(f"POST {self.path}")
            query = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock, tempfile.TemporaryDirectory(dir=folder) as work:
                (Path(work) / "q.tsq").write_bytes(query)
                subprocess.run(["openssl", "ts", "-reply", "-config", str(config), "-queryfile",
                                f"{work}/q.tsq", "-out", f"{work}/r.tsr"], check=True,
                               capture_output=True, timeout=60)
                reply = (Path(work) / "r.tsr").read_bytes()
            self._send(reply, "application/timestamp-reply")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    p12 = pkcs12.serialize_key_and_certificates(
        b"lab", lab_key, lab, [ca], serialization.BestAvailableEncryption(PASSPHRASE))
    try:
        yield Authority(tsa_url=f"{base}/tsa", crl_url=crl_url, ca_pem=ca.public_bytes(pem),
                        lab_p12=p12, lab_not_after=lab_not_after, requests=requests,
                        ca_key=ca_key, revoked=revoked)
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(folder, ignore_errors=True)
