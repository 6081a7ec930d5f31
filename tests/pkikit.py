"""A throwaway PKI for the signing tests: a CA and lab keys made with cryptography, never stored
in the repository (each test session makes its own).

`make_pki(label)` is a CA named `label` with the sample lab's signatory key ("A. Sample", the
signatory of examples/lab.yaml); `issue(pki, ...)` makes other keys under the same CA: another
name, another validity, a CA certificate, a key usage that forbids signing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PASSPHRASE = b"test passphrase"
NOT_BEFORE = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
NOT_AFTER = dt.datetime(2099, 12, 31, tzinfo=dt.UTC)
SIGNATORY = "A. Sample"
"""examples/lab.yaml's signatory: the common name of the lab's signing certificate."""


@dataclass(frozen=True)
class Pki:
    """A CA certificate (PEM) and the lab key + certificate it issued (PKCS#12)."""

    ca_pem: bytes
    lab_p12: bytes
    ca_cert: Any
    ca_key: Any


LAB_NAME = "Sample Frame-Pacing Laboratory (SPECIMEN, not a real laboratory)"
"""examples/lab.yaml's name: the organization (O) of the lab's signing certificate (issue 40)."""


def _name(common: str, organization: str = "certgen tests",
          extra: tuple[tuple[Any, str], ...] = ()) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
                      x509.NameAttribute(NameOID.COMMON_NAME, common),
                      *(x509.NameAttribute(oid, value) for oid, value in extra)])


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _usage(*, sign: bool, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=sign, content_commitment=sign, key_encipherment=not sign,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca,
                         crl_sign=ca, encipher_only=False, decipher_only=False)


@lru_cache(maxsize=4)
def make_pki(label: str = "Test CA") -> Pki:
    """A fresh CA named `label` and the signatory's certificate it signed (cached per label)."""
    ca_key = _key()
    ca = (x509.CertificateBuilder()
          .subject_name(_name(label)).issuer_name(_name(label))
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(_usage(sign=False, ca=True), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    pki = Pki(ca_pem=ca.public_bytes(serialization.Encoding.PEM), lab_p12=b"", ca_cert=ca,
              ca_key=ca_key)
    return Pki(ca_pem=pki.ca_pem, lab_p12=issue(pki), ca_cert=ca, ca_key=ca_key)


def issue(pki: Pki, common_name: str = SIGNATORY, *, not_before: dt.datetime = NOT_BEFORE,
          not_after: dt.datetime = NOT_AFTER, ca: bool = False, can_sign: bool = True,
          serial: int = 2, purposes: tuple[Any, ...] = (ExtendedKeyUsageOID.EMAIL_PROTECTION,),
          organization: str = LAB_NAME, second_common_name: str | None = None) -> bytes:
    """A key and certificate issued by `pki`'s CA, as a PKCS#12 file (PASSPHRASE): made out to
    `common_name` of `organization` (the sample lab), with a second CN if given."""
    lab_key = _key()
    extra = () if second_common_name is None else ((NameOID.COMMON_NAME, second_common_name),)
    lab = (x509.CertificateBuilder()
           .subject_name(_name(common_name, organization, extra)).issuer_name(pki.ca_cert.subject)
           .public_key(lab_key.public_key()).serial_number(serial)
           .not_valid_before(not_before).not_valid_after(not_after)
           .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
           .add_extension(_usage(sign=can_sign, ca=ca), critical=True)
           .add_extension(x509.ExtendedKeyUsage(list(purposes)), critical=False)
           .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
               pki.ca_key.public_key()), critical=False)
           .sign(pki.ca_key, hashes.SHA256()))
    return pkcs12.serialize_key_and_certificates(
        b"lab", lab_key, lab, [pki.ca_cert], serialization.BestAvailableEncryption(PASSPHRASE))
