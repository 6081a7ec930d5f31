"""certgen.verify.signature: who may have signed (the identity check on the signer's certificate)
and what a signed range must look like, on certificates of a throwaway PKI, without a PDF."""

from __future__ import annotations

from pathlib import Path

from asn1crypto import x509
from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID
from pkikit import PASSPHRASE, SIGNATORY, issue, make_pki

from certgen.verify.signature import identity_problem


def _cert(p12: bytes) -> x509.Certificate:
    _, cert, _ = pkcs12.load_key_and_certificates(p12, PASSPHRASE)
    assert cert is not None
    return x509.Certificate.load(cert.public_bytes(Encoding.DER))


def test_the_signatory_s_own_certificate_is_its_identity() -> None:
    cert = _cert(make_pki().lab_p12)
    assert identity_problem(cert, SIGNATORY, SIGNATORY, None) is None


def test_another_name_a_ca_a_non_signing_key_or_another_pin_is_refused() -> None:
    pki = make_pki()
    own = _cert(pki.lab_p12)
    assert "signed in the name of 'B. Other'" in str(
        identity_problem(own, "B. Other", SIGNATORY, None))
    other = _cert(issue(pki, "B. Other", serial=3))
    assert "made out to 'B. Other'" in str(identity_problem(other, SIGNATORY, SIGNATORY, None))
    ca = _cert(issue(pki, ca=True, serial=4))
    assert "CA certificate" in str(identity_problem(ca, SIGNATORY, SIGNATORY, None))
    stamping = _cert(issue(pki, serial=5, purposes=(ExtendedKeyUsageOID.TIME_STAMPING,)))
    assert "extended key usage" in str(identity_problem(stamping, SIGNATORY, SIGNATORY, None))
    assert "signs with " + "0" * 64 in str(identity_problem(own, SIGNATORY, SIGNATORY, "0" * 64))


def test_missing_revocation_information_is_named(signed_gold: Path) -> None:
    """Issue 40: when the long-term validation cannot run for want of revocation information,
    verify names the certificate it lacks and why (here the plainly signed GOLD certificate,
    which carries none, made with a key whose certificate names no CRL distribution point)."""
    import io

    from pyhanko.pdf_utils.reader import PdfFileReader

    from certgen.verify.signature import missing_revocation_info

    pdf = (signed_gold / "certificate.en.pdf").read_bytes()
    [sig] = PdfFileReader(io.BytesIO(pdf), strict=False).embedded_regular_signatures
    missing = missing_revocation_info(sig)
    assert missing is not None
    assert missing.startswith(f"the file carries no revocation information for Common Name: "
                              f"{SIGNATORY}"), missing
    assert missing.endswith("(issued by Common Name: Test CA, Organization: certgen tests): it "
                            "names no CRL distribution point, so nothing could be fetched and "
                            "embedded when it was signed"), missing
