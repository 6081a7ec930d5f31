"""A CA's CRL held against the signer's certificate (certgen.verify.crls, issue 40): a CRL the CA
signed that does not speak for this certificate shows nothing, and a key compromised before
the signature fails even when the CA processed the revocation later.

Each case is a CRL the real CA signs (an attack pass found that a delta CRL, a partial CRL, one
issued after the certificate expired and a keyCompromise invalidity date each let a revoked key
verify): made here with cryptography, no server needed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from asn1crypto import core
from asn1crypto import x509 as ax509
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID, ObjectIdentifier

from certgen.verify.crls import crl_finding

NOW = dt.datetime.now(dt.UTC).replace(microsecond=0)
SIGNED = NOW - dt.timedelta(hours=2)
"""When the timestamps prove the signature existed."""
CDP = "http://127.0.0.1:1/ca.crl"
_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _ca() -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "CRL test CA")])
    return (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(_KEY.public_key()).serial_number(1)
            .not_valid_before(NOW - dt.timedelta(days=30))
            .not_valid_after(NOW + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(_KEY, hashes.SHA256()))


CA = _ca()


def _signer(not_after: dt.datetime = NOW + dt.timedelta(days=30)) -> ax509.Certificate:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "A. Sample")]))
            .issuer_name(CA.subject).public_key(key.public_key()).serial_number(2)
            .not_valid_before(NOW - dt.timedelta(days=10)).not_valid_after(not_after)
            .add_extension(x509.CRLDistributionPoints([x509.DistributionPoint(
                full_name=[x509.UniformResourceIdentifier(CDP)], relative_name=None,
                reasons=None, crl_issuer=None)]), critical=False)
            .sign(_KEY, hashes.SHA256()))
    return ax509.Certificate.load(cert.public_bytes(Encoding.DER))


def _crl(*, issued: dt.datetime = NOW, revoked: x509.RevokedCertificate | None = None,
         extend: Callable[[Any], Any] = lambda b: b) -> bytes:
    builder = (x509.CertificateRevocationListBuilder().issuer_name(CA.subject)
               .last_update(issued).next_update(issued + dt.timedelta(days=7))
               .add_extension(x509.CRLNumber(5), critical=False))
    if revoked is not None:
        builder = builder.add_revoked_certificate(revoked)
    return extend(builder).sign(_KEY, hashes.SHA256()).public_bytes(Encoding.DER)


def _roots() -> list[ax509.Certificate]:
    return [ax509.Certificate.load(CA.public_bytes(Encoding.DER))]


def _finding(data: bytes, cert: ax509.Certificate | None = None) -> tuple[str, str]:
    found = crl_finding(data, cert or _signer(), _roots(), signed_at=SIGNED, proven=SIGNED,
                        source="ca.crl")
    return found.verdict, found.detail.render()


def test_a_complete_crl_of_after_the_signature_shows_the_key_unrevoked() -> None:
    assert _finding(_crl())[0] == "pass"
    # Scoped to the certificate's own distribution point: still complete for it.
    own = x509.IssuingDistributionPoint(
        full_name=[x509.UniformResourceIdentifier(CDP)], relative_name=None,
        only_contains_user_certs=True, only_contains_ca_certs=False, only_some_reasons=None,
        indirect_crl=False, only_contains_attribute_certs=False)
    assert _finding(_crl(extend=lambda b: b.add_extension(own, critical=True)))[0] == "pass"


@pytest.mark.parametrize("case", ["delta", "ca-only", "another-point", "critical-unknown",
                                  "future"])
def test_a_crl_that_does_not_speak_for_the_certificate_shows_nothing(case: str) -> None:
    def point(**kw: Any) -> x509.IssuingDistributionPoint:
        base: dict[str, Any] = dict(full_name=None, relative_name=None,
                                    only_contains_user_certs=False, only_contains_ca_certs=False,
                                    only_some_reasons=None, indirect_crl=False,
                                    only_contains_attribute_certs=False)
        return x509.IssuingDistributionPoint(**(base | kw))

    extend, said = {
        "delta": (lambda b: b.add_extension(x509.DeltaCRLIndicator(4), critical=True),
                  "is a delta CRL"),
        "ca-only": (lambda b: b.add_extension(point(only_contains_ca_certs=True), critical=True),
                    "covers only part of its CA's certificates"),
        "another-point": (lambda b: b.add_extension(point(full_name=[
            x509.UniformResourceIdentifier("http://127.0.0.1:1/part2.crl")]), critical=True),
            "covers only part of its CA's certificates"),
        "critical-unknown": (lambda b: b.add_extension(x509.UnrecognizedExtension(
            ObjectIdentifier("1.3.6.1.4.1.99999.1"), b"\x05\x00"), critical=True),
            "has a critical extension verify does not know (1.3.6.1.4.1.99999.1)"),
        "future": (lambda b: b, "in the future"),
    }[case]
    issued = NOW + dt.timedelta(days=2) if case == "future" else NOW
    verdict, detail = _finding(_crl(issued=issued, extend=extend))
    assert verdict == "unfit", detail
    assert said in detail, detail


def test_a_crl_of_after_the_certificate_expired_shows_nothing_unless_it_keeps_expired_ones(
        ) -> None:
    expired = _signer(not_after=NOW - dt.timedelta(hours=1))
    verdict, detail = _finding(_crl(), expired)
    assert verdict == "unfit" and "after the signer's certificate expired" in detail, detail
    # ExpiredCertsOnCRL (X.509, 2.5.29.60): the CA keeps certificates expired since that date.
    since = core.GeneralizedTime(NOW - dt.timedelta(days=20)).dump()
    kept = x509.UnrecognizedExtension(ObjectIdentifier("2.5.29.60"), since)
    assert _finding(_crl(extend=lambda b: b.add_extension(kept, critical=False)),
                    expired)[0] == "pass"


def test_a_key_compromised_before_the_signature_fails_though_revoked_after() -> None:
    """RFC 5280 §5.3.2: the revocation date is when the CA processed it (after the signature);
    the invalidity date says the key was compromised before it."""
    def revoked(invalid: dt.datetime | None) -> x509.RevokedCertificate:
        builder = (x509.RevokedCertificateBuilder().serial_number(2)
                   .revocation_date(SIGNED + dt.timedelta(minutes=30))
                   .add_extension(x509.CRLReason(x509.ReasonFlags.key_compromise),
                                  critical=False))
        if invalid is not None:
            builder = builder.add_extension(x509.InvalidityDate(invalid), critical=False)
        return builder.build()

    verdict, detail = _finding(_crl(revoked=revoked(SIGNED - dt.timedelta(minutes=20))))
    assert verdict == "fail", detail
    assert detail.startswith("revoked: the signer's certificate (serial 2) was revoked by its "
                             f"CA on {(SIGNED - dt.timedelta(minutes=20)).isoformat(sep=' ')}")
    # Without the invalidity date, a revocation after the proven time leaves it valid.
    assert _finding(_crl(revoked=revoked(None)))[0] == "pass"
