"""PAdES signatures on certificate PDFs (pyHanko), deterministic to the byte.

`sign_pdf(pdf, key, name=..., when=...)` appends one incremental update to a rendered PDF: an
invisible signature field whose CMS signature (PAdES baseline B, SHA-256) covers the whole file.
The original bytes stay as they were, so the tagged PDF/A-3a conformance, the XMP metadata and the
attached record.json are kept; pyHanko updates the modification date and producer in both the
Info dictionary and the XMP packet, as PDF/A asks (the producer becomes pyHanko's in both).

Determinism (DESIGN rule 4): nothing comes from the clock or a random source.
- The signing time (the CMS signingTime attribute and the new ModDate) is `when`, the
  certificate's build date; pyHanko would otherwise take the clock in two places.
- The second half of the trailer /ID, which changes with every revision, is derived from the
  signed bytes instead of the clock.
- An RSA key signs with PKCS#1 v1.5, which is deterministic; ECDSA draws a random nonce, so a
  lab that needs byte-identical rebuilds uses an RSA key (docs/verify.md).

Pure: bytes in, bytes out. The PKCS#12 file is read by the caller (certgen.commands.build);
`SigningKey` keeps its bytes, not a loaded key, so it pickles into build worker processes.
pyHanko and cryptography are the `sign` extra, imported only here and in certgen.verify.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from certgen.errors import CertgenError

SIGN_EXTRA_MESSAGE = ("signing and verifying need pyHanko: install the `sign` extra "
                      "(pip install 'certgen[sign]')")
"""The refusal when the optional signing libraries are not installed."""

FIELD_NAME = "CertgenSignature"
"""The PDF signature field certgen adds (one per document)."""


def require_sign_extra() -> None:
    """Refuse (a CertgenError) when pyHanko is not installed."""
    try:
        import pyhanko.sign  # noqa: F401
    except ImportError:
        raise CertgenError(SIGN_EXTRA_MESSAGE) from None


@dataclass(frozen=True)
class SigningKey:
    """A lab's signing key: the PKCS#12 bytes and passphrase, and the certificate's SHA-256
    fingerprint (the build cache keys on it; the passphrase never enters a key or a file).

    Made by `signing_key`, which checks that the archive opens.
    """

    p12: bytes = field(repr=False)
    passphrase: bytes = field(repr=False)
    fingerprint: str
    """SHA-256 of the signing certificate (DER), hex."""
    subject: str
    """The signing certificate's subject, as text (for messages)."""


def signing_key(p12: bytes, passphrase: bytes, *, source: str) -> SigningKey:
    """Open a PKCS#12 archive (key + certificate [+ chain]); a wrong passphrase or a file that
    is not PKCS#12 is a CertgenError naming `source`."""
    require_sign_extra()
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

    try:
        key, cert, _chain = pkcs12.load_key_and_certificates(p12, passphrase or None)
    except (ValueError, TypeError):
        raise CertgenError(
            "cannot open the PKCS#12 key: wrong passphrase, or not a .p12 file", file=source
        ) from None
    if key is None or cert is None:
        raise CertgenError("expected a PKCS#12 file holding a private key and its certificate",
                           file=source)
    fingerprint = hashlib.sha256(cert.public_bytes(Encoding.DER)).hexdigest()
    return SigningKey(p12=p12, passphrase=passphrase, fingerprint=fingerprint,
                      subject=cert.subject.rfc4514_string())


@lru_cache(maxsize=2)
def _signer(p12: bytes, passphrase: bytes) -> Any:
    # Loaded once per process (each build worker loads it on its first document).
    from pyhanko.sign import signers

    return signers.SimpleSigner.load_pkcs12_data(p12, other_certs=(), passphrase=passphrase or None)


def sign_pdf(pdf: bytes, key: SigningKey, *, name: str, when: dt.datetime) -> bytes:
    """`pdf` with a PAdES signature by `key` in `name` (the lab's signatory) appended as an
    incremental update, dated `when`; the same arguments give the same bytes."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.pdf_utils.metadata.model import VENDOR, DocumentMetadata
    from pyhanko.sign import fields, signers

    when = when.astimezone(dt.UTC) if when.tzinfo else when.replace(tzinfo=dt.UTC)

    class PinnedMetadata(DocumentMetadata):
        # pyHanko sets last_modified to 'now' (the clock) just before writing: pinned here.
        def __setattr__(self, attr: str, value: Any) -> None:
            if attr == "last_modified" and value == "now":
                value = when
            super().__setattr__(attr, value)

    class DatedSigner(signers.PdfSigner):
        # The session's system_time is the CMS signingTime: the build date, not the clock.
        def init_signing_session(self, pdf_out: Any, existing_fields_only: bool = False) -> Any:
            session = super().init_signing_session(pdf_out, existing_fields_only)
            session.system_time = when
            return session

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    writer._meta = PinnedMetadata(last_modified=when)
    # PDF/A wants the Info dictionary and the XMP packet to agree: pyHanko writes its own name
    # as the XMP producer but appends it to the Info one, so the Info one is set to it too
    # (the Creator still names certgen and the renderer stack).
    info: Any = writer._info
    if info is not None:
        info.get_object()["/Producer"] = generic.TextStringObject(VENDOR)
        writer.mark_update(info)
    # The /ID's second half names the revision: derived from the bytes signed, not the clock.
    writer._document_id = generic.ArrayObject([
        writer._document_id[0], generic.ByteStringObject(hashlib.sha256(pdf).digest()[:16])])
    meta = signers.PdfSignatureMetadata(
        field_name=FIELD_NAME, name=name, md_algorithm="sha256",
        subfilter=fields.SigSeedSubFilter.PADES)
    out = io.BytesIO()
    DatedSigner(meta, signer=_signer(key.p12, key.passphrase)).sign_pdf(writer, output=out)
    return out.getvalue()
