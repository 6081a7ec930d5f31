"""`build --tsa` refuses a chain it cannot carry validation data for (issue 40): a certificate
without revocation information makes a timestamped signature nobody can verify, and pyHanko
embeds what it found without a word about what it did not.

Before any file is written: the signer's own certificate names no CRL distribution point (the
recipe docs/verify.md used to give). After timestamping: the authority's certificate names
none (a real OpenSSL TSA on loopback, tests/tsakit.py). Each is one line naming the certificate.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
from bundlekit import simple_bundle
from pkikit import PASSPHRASE, make_pki
from tsakit import PASSPHRASE as TSA_PASSPHRASE
from tsakit import running_authority

from certgen.builders.certificate import build_bundle
from certgen.cli import main
from certgen.errors import CertgenError
from certgen.inputs.lab import load_lab
from certgen.render.sign import signing_key

ROOT = Path(__file__).resolve().parent.parent
LAB = load_lab(ROOT / "examples" / "lab.yaml")
SUBJECT = "CN=A. Sample,O=Sample Frame-Pacing Laboratory (SPECIMEN\\, not a real laboratory)"
"""The test signer's subject as a refusal names it (RFC 4514): pkikit issues the sample lab's
name as O, which verify and build --sign bind to lab.yaml's `name` (issue 40, item 5)."""


def test_a_signer_without_a_crl_address_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "lab.p12"
    key.write_bytes(make_pki("No CRL CA").lab_p12)  # pkikit's certificates name no CRL
    monkeypatch.setenv("CERTGEN_SIGN_PASSPHRASE", PASSPHRASE.decode())
    out = tmp_path / "out"
    # Port 1 refuses: the refusal must come before any connection to the authority.
    with pytest.raises(SystemExit) as exited:
        main(["build", str(ROOT / "examples" / "silver-gtx1660s"), "--out", str(out),
              "--lab", str(ROOT / "examples" / "lab.yaml"), "--lang", "en",
              "--sign", str(key), "--tsa", "http://127.0.0.1:1/tsa"])
    err = capsys.readouterr().err
    assert exited.value.code == 1, err
    assert err.count("\n") == 1, err
    assert err.startswith("certgen: --tsa http://127.0.0.1:1/tsa: no revocation information "
                          f"can be embedded for the certificate '{SUBJECT}' "
                          "(it names no CRL distribution point and no OCSP responder)"), err
    assert not out.exists() or not any(out.iterdir())
    # Without --tsa the same key signs: the check is the timestamp's, not the signature's.
    assert signing_key(key.read_bytes(), PASSPHRASE, source="lab.p12").no_revocation_address \
        == (SUBJECT,)


def test_a_chain_whose_file_lacks_validation_data_is_refused_after_timestamping(
        tmp_path: Path) -> None:
    """The check of the finished file, on its own: a signer certificate without a CRL address
    let past the first check (as one whose address answers nothing would be) gets no CRL in the
    file, and the build stops naming it."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12

    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    lab, cert, chain = pkcs12.load_key_and_certificates(make_pki("No CRL CA").lab_p12, PASSPHRASE)
    assert lab is not None and cert is not None
    with running_authority(lab_valid_for=dt.timedelta(days=30), signatory="A. Sample") as tsa:
        # The lab's key and CA, with the authority's root beside them (as docs/verify.md does).
        p12 = pkcs12.serialize_key_and_certificates(
            b"lab", lab, cert, [*(chain or []), x509.load_pem_x509_certificate(tsa.ca_pem)],
            BestAvailableEncryption(PASSPHRASE))
        key = signing_key(p12, PASSPHRASE, source="lab.p12").with_tsa(tsa.tsa_url)
        assert key.no_revocation_address == (SUBJECT,)
        with pytest.raises(CertgenError) as refused:
            build_bundle(bundle, tmp_path / "out", languages=["en"], lab=LAB,
                         sign=dataclasses.replace(key, no_revocation_address=()))
        asked = list(tsa.requests)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"--tsa {tsa.tsa_url}: no revocation information can be embedded "
                              f"for the certificate '{SUBJECT}' (the file's "
                              "validation data holds no CRL or OCSP answer for it)"), message
    assert any(r.startswith("POST") for r in asked)  # it was timestamped, then refused
    assert not list((tmp_path / "out").glob("*/certificate.en.pdf"))


def test_a_chain_with_its_crls_signs() -> None:
    """The file check passes what it must: a certificate whose CA's CRL the file carries, even
    when the certificate itself (the authority's, here) names no address of its own."""
    import io

    import pypdf

    from certgen.render.sign import _without_validation_data, sign_pdf

    blank = pypdf.PdfWriter()
    blank.add_blank_page(width=595, height=842)
    pdf = io.BytesIO()
    blank.write(pdf)
    with running_authority(lab_valid_for=dt.timedelta(days=30), signatory="A. Sample",
                           tsa_names_crl=False) as tsa:
        key = signing_key(tsa.lab_p12, TSA_PASSPHRASE, source="lab.p12").with_tsa(tsa.tsa_url)
        signed = sign_pdf(pdf.getvalue(), key.at(dt.datetime.now(dt.UTC), given=False),
                          name="A. Sample")
    assert _without_validation_data(signed) == []
