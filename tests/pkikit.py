"""A throwaway PKI for the signing tests: a CA and lab keys made with cryptography, never stored
in the repository (each test session makes its own)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PASSPHRASE = b"test passphrase"
NOT_BEFORE = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
NOT_AFTER = dt.datetime(2099, 12, 31, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Pki:
    """A CA certificate (PEM) and a lab key + certificate it issued (PKCS#12)."""

    ca_pem: bytes
    lab_p12: bytes


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "certgen tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@lru_cache(maxsize=4)
def make_pki(label: str = "Test CA") -> Pki:
    """A fresh CA named `label` and a lab certificate it signed (cached per label)."""
    ca_key, lab_key = _key(), _key()
    ca = (x509.CertificateBuilder()
          .subject_name(_name(label)).issuer_name(_name(label))
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, key_cert_sign=True, crl_sign=True,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    lab = (x509.CertificateBuilder()
           .subject_name(_name("Dr. Test Signatory")).issuer_name(ca.subject)
           .public_key(lab_key.public_key()).serial_number(2)
           .not_valid_before(NOT_BEFORE).not_valid_after(NOT_AFTER)
           .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
           .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True,
                                        key_encipherment=False, data_encipherment=False,
                                        key_agreement=False, key_cert_sign=False, crl_sign=False,
                                        encipher_only=False, decipher_only=False), critical=True)
           .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION]),
                          critical=False)
           .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                          critical=False)
           .sign(ca_key, hashes.SHA256()))
    p12 = pkcs12.serialize_key_and_certificates(
        b"lab", lab_key, lab, [ca], serialization.BestAvailableEncryption(PASSPHRASE))
    return Pki(ca_pem=ca.public_bytes(serialization.Encoding.PEM), lab_p12=p12)
