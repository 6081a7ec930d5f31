"""PAdES signatures on certificate PDFs (pyHanko), deterministic to the byte.

`sign_pdf(pdf, key, name=..., when=...)` appends one incremental update to a rendered PDF: an
invisible signature field whose CMS signature (PAdES baseline B, SHA-256) covers the whole file.
The original bytes stay as they were, so the tagged PDF/A-3a conformance, the XMP metadata and the
attached record.json are kept; pyHanko updates the modification date and producer in both the
Info dictionary and the XMP packet, as PDF/A asks (the producer becomes pyHanko's in both).

The signing time (the CMS signingTime attribute, the signature's /M and the new ModDate) is the
time of signing: the clock when the build starts, or `--signing-time` given to re-sign
reproducibly (`SigningKey.signing_time`; recorded in the build manifest). It is never the issue
date: a key made on the issue day must not sign "before it existed" (docs/verify.md).
`check_signing_key` refuses a key that is not the signatory's, not an end-entity signing
certificate, or not valid at the signing time; `check_key_outlives` one whose validity ends
before a certificate's own "valid until" (without a timestamp the signature would die first).

Determinism (DESIGN rule 4): the same PDF, key, name and signing time give the same bytes.
- pyHanko would take the clock in two places; both are pinned to the signing time.
- The second half of the trailer /ID, which changes with every revision, is derived from the
  signed bytes instead of the clock.
- An RSA key signs with PKCS#1 v1.5, which is deterministic; ECDSA draws a random nonce, so a
  lab that needs byte-identical rebuilds uses an RSA key (docs/verify.md).

Pure: bytes in, bytes out. The PKCS#12 file is read by the caller (certgen.commands.build);
`SigningKey` keeps its bytes, not a loaded key, so it pickles into build worker processes.
pyHanko and cryptography are the `sign` extra, imported only here and in certgen.verify.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import hashlib
import io
import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from certgen.errors import CertgenError
from certgen.support.crlfetch import CrlFetchError, crl_addresses, fetch_crl
from certgen.support.objstreams import pdf_reader
from certgen.support.untrusted import escape_invisible, shorten

if TYPE_CHECKING:
    from asn1crypto import cms
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.pdf_utils.writer import BasePdfFileWriter
    from pyhanko.sign.signers import PdfSigner, Signer, SimpleSigner
    from pyhanko.sign.signers.pdf_signer import PdfSigningSession
    from pyhanko.sign.timestamps.aiohttp_client import HTTPTimeStamper

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


_EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)
_LATEST = dt.datetime.max.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class SigningKey:
    """A lab's signing key: the PKCS#12 bytes and passphrase, what its certificate says, and the
    time this build signs at (the build cache keys on the fingerprint; the passphrase never
    enters a key or a file).

    Made by `signing_key`, which checks that the archive opens.
    """

    p12: bytes = field(repr=False)
    passphrase: bytes = field(repr=False)
    fingerprint: str
    """SHA-256 of the signing certificate (DER), hex."""
    subject: str
    """The signing certificate's subject, as text (for messages)."""
    common_name: str | None = None
    """The subject's common name: the signatory's name (None when it has none)."""
    common_names: int = 1
    """How many common names the subject states (a signatory's certificate states one)."""
    organizations: tuple[str, ...] = ()
    """The subject's organization (O) values: the laboratory's name, once."""
    issuer: str = ""
    """The issuer's name, as text."""
    not_before: dt.datetime = _EARLIEST
    not_after: dt.datetime = _LATEST
    """The certificate's validity (UTC)."""
    is_ca: bool = False
    """The certificate says CA:TRUE (a CA's key never signs a certificate of ours)."""
    can_sign: bool = True
    """Its key usage allows digitalSignature or nonRepudiation (or it states none)."""
    signing_time: dt.datetime | None = None
    """When this build signs (UTC, whole seconds); None until the build sets it."""
    signing_time_given: bool = False
    """The signing time was given (`--signing-time`), not read from the clock: it then enters
    the build cache key, so re-signing at another time rebuilds."""
    tsa_url: str | None = None
    """`--tsa URL`: an RFC 3161 timestamp authority; the signature then gets a signature
    timestamp, the validation data (certificates, CRLs, OCSP) embedded, and a document
    timestamp (PAdES B-LTA), so it verifies offline after the key expires."""
    no_revocation_address: tuple[str, ...] = ()
    """The subjects of the certificates of the key's chain (its own and the PKCS#12 file's
    intermediates, roots aside) that name neither a CRL distribution point nor an OCSP
    responder: with `--tsa` no revocation information can be embedded for them, so nobody
    could verify the signature (check_signing_key refuses them)."""

    def at(self, when: dt.datetime, *, given: bool) -> SigningKey:
        """This key, signing at `when` (made UTC, whole seconds)."""

        return dataclasses.replace(self, signing_time=utc_seconds(when), signing_time_given=given)

    def with_tsa(self, url: str | None) -> SigningKey:
        """This key, timestamping at `url` (None: no timestamp)."""

        return dataclasses.replace(self, tsa_url=url)


def utc_seconds(when: dt.datetime) -> dt.datetime:
    """`when` in UTC, to the whole second (a naive time is read as UTC)."""
    when = when.astimezone(dt.UTC) if when.tzinfo else when.replace(tzinfo=dt.UTC)
    return when.replace(microsecond=0)


def signing_key(p12: bytes, passphrase: bytes, *, source: str) -> SigningKey:
    """Open a PKCS#12 archive (key + certificate [+ chain]); a wrong passphrase or a file that
    is not PKCS#12 is a CertgenError naming `source`."""
    require_sign_extra()
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
    from cryptography.x509.oid import NameOID

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
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    try:
        is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        is_ca = False
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
        can_sign = usage.digital_signature or usage.content_commitment
    except x509.ExtensionNotFound:
        can_sign = True
    chain = [cert, *(c for c in _chain or () if c.subject != c.issuer)]
    return SigningKey(p12=p12, passphrase=passphrase, fingerprint=fingerprint,
                      subject=cert.subject.rfc4514_string(),
                      common_name=str(names[0].value) if names else None,
                      common_names=len(names),
                      organizations=tuple(str(o.value) for o in cert.subject.get_attributes_for_oid(
                          NameOID.ORGANIZATION_NAME)),
                      issuer=cert.issuer.rfc4514_string(),
                      not_before=cert.not_valid_before_utc, not_after=cert.not_valid_after_utc,
                      is_ca=is_ca, can_sign=can_sign,
                      no_revocation_address=tuple(c.subject.rfc4514_string() for c in chain
                                                  if not _names_revocation_address(c)))


def _names_revocation_address(cert: Any) -> bool:
    """The certificate (cryptography's) says where its revocation status is published: a CRL
    distribution point or an OCSP responder in its authority information access."""
    from cryptography import x509
    from cryptography.x509.oid import AuthorityInformationAccessOID

    try:
        points = cert.extensions.get_extension_for_class(x509.CRLDistributionPoints).value
        if any(point.full_name for point in points):
            return True
    except x509.ExtensionNotFound:
        pass
    try:
        access = cert.extensions.get_extension_for_class(x509.AuthorityInformationAccess).value
    except x509.ExtensionNotFound:
        return False
    return any(a.access_method == AuthorityInformationAccessOID.OCSP for a in access)


def check_signing_key(key: SigningKey, *, signatory: str,
                      certificate_sha256: str | None = None,
                      organization: str | None = None) -> None:
    """Refuse (a CertgenError, one line) a key that cannot sign for `signatory` at its signing
    time: another name or more than one, another organization than the laboratory's (unless
    lab.yaml pins the certificate), another certificate than lab.yaml pins, a CA's key, a
    certificate whose key usage forbids signing, or one not valid at the signing time."""
    if key.common_names != 1:
        raise CertgenError(f"--sign: the key's certificate states {key.common_names} common "
                           f"names ({key.subject}); a signatory's states exactly one")
    if key.common_name != signatory:
        raise CertgenError(f"--sign: the key's certificate is made out to {key.common_name!r} "
                           f"({key.subject}); the laboratory's signatory is {signatory!r}")
    if certificate_sha256 is not None and key.fingerprint != certificate_sha256.lower():
        raise CertgenError(f"--sign: the key's certificate has SHA-256 {key.fingerprint}; "
                           f"lab.yaml's signatory.certificate_sha256 is {certificate_sha256}")
    if organization is not None and certificate_sha256 is None \
            and key.organizations != (organization,):
        raise CertgenError(f"--sign: the key's certificate is made out to the organization "
                           f"{', '.join(repr(o) for o in key.organizations) or 'none'} "
                           f"({key.subject}); the laboratory is {organization!r} (its O must be "
                           "the laboratory's name, or pin the certificate in lab.yaml)")
    if key.is_ca:
        raise CertgenError("--sign: the key's certificate is a CA certificate (CA:TRUE); sign "
                           "with the signatory's own end-entity certificate")
    if not key.can_sign:
        raise CertgenError("--sign: the key's certificate does not allow signing (its key usage "
                           "has neither digitalSignature nor nonRepudiation)")
    when = key.signing_time
    if when is not None and not key.not_before <= when <= key.not_after:
        state = "not valid until" if when < key.not_before else "expired on"
        moment = key.not_before if when < key.not_before else key.not_after
        raise CertgenError(f"--sign: the key's certificate is {state} "
                           f"{moment.isoformat(sep=' ')}; the signing time is "
                           f"{when.isoformat(sep=' ')}")
    if key.tsa_url is not None and key.no_revocation_address:
        raise CertgenError(_NO_REVOCATION.format(
            url=key.tsa_url, subject=key.no_revocation_address[0],
            why="it names no CRL distribution point and no OCSP responder"))


_NO_REVOCATION = ("--tsa {url}: no revocation information can be embedded for the certificate "
                  "'{subject}' ({why}), so nobody could verify the timestamped signature; "
                  "issue it with a CRL distribution point the lab publishes (docs/verify.md)")
"""The refusal of a timestamped build that cannot carry validation data for every certificate
of its chain (issue 40): one line naming the certificate."""


def check_key_outlives(key: SigningKey, *, certificate_id: str, valid_until: dt.date) -> None:
    """Refuse a key whose certificate expires before the end of the certificate's last valid day:
    a signature without a timestamp stops verifying when its key expires (docs/verify.md). With
    a timestamp authority (`tsa_url`) the signature outlives its key, and any key will do."""
    last = dt.datetime.combine(valid_until, dt.time(23, 59, 59), tzinfo=dt.UTC)
    if key.tsa_url is None and key.not_after < last:
        raise CertgenError(f"--sign: the key's certificate expires on "
                           f"{key.not_after.date().isoformat()}, before {certificate_id} is valid "
                           f"until {valid_until.isoformat()}: its signature would stop verifying "
                           "first; use a key valid at least that long, or add a timestamp "
                           "(--tsa URL)")


@lru_cache(maxsize=2)
def _signer(p12: bytes, passphrase: bytes) -> SimpleSigner:
    # Loaded once per process (each build worker loads it on its first document).
    from pyhanko.sign import signers

    signer: SimpleSigner = signers.SimpleSigner.load_pkcs12_data(
        p12, other_certs=(), passphrase=passphrase or None)
    return signer


TSA_TIMEOUT_S = 60
"""How long `--tsa` waits for the timestamp authority (and each CRL address) to answer
(docs/limits.md)."""
MAX_TSA_REPLY_BYTES = 1024 * 1024
"""The largest timestamp reply `--tsa` reads (a real one is a few kB, its certificates
included): an endless answer is refused at this size, not read to the memory's end."""


class TSAReplyTooLargeError(Exception):
    """The timestamp authority's answer passed MAX_TSA_REPLY_BYTES (worded by the caller)."""


def sign_pdf(pdf: bytes, key: SigningKey, *, name: str, when: dt.datetime | None = None) -> bytes:
    """`pdf` with a PAdES signature by `key` in `name` (the lab's signatory) appended as an
    incremental update, made at `when` (default: the key's signing time); the same arguments
    give the same bytes."""
    at = when if when is not None else key.signing_time
    if at is None:
        raise ValueError("sign_pdf needs a signing time (SigningKey.at or when=)")
    return _sign_with(pdf, _signer(key.p12, key.passphrase), name=name, when=at,
                      tsa_url=key.tsa_url)


def replay_signature(pdf: bytes, cms_der: bytes, *, name: str, when: dt.datetime,
                     bytes_reserved: int) -> bytes:
    """What `sign_pdf` writes for `pdf` with the signature `cms_der` already made: the same
    incremental update, with that CMS in the same reserved space. certgen.verify compares this
    with a signed file: equal bytes mean the file is exactly this unsigned PDF, signed by certgen
    and nothing else (no object added, changed or restated)."""
    from asn1crypto import cms
    from pyhanko.sign import signers

    content = cms.ContentInfo.load(cms_der)
    certs = list(content["content"]["certificates"])
    cert = certs[0].chosen if certs else None

    class ReplaySigner(signers.Signer):
        async def async_sign(self, *args: object, **kwargs: object) -> cms.ContentInfo:
            return content

    signer = ReplaySigner(signing_cert=cert)
    return _sign_with(pdf, signer, name=name, when=when, bytes_reserved=bytes_reserved)


def _sign_with(pdf: bytes, signer: Signer, *, name: str, when: dt.datetime,
               bytes_reserved: int | None = None, tsa_url: str | None = None) -> bytes:
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.pdf_utils.metadata.model import VENDOR, DocumentMetadata
    from pyhanko.sign import fields, signers

    when = utc_seconds(when)

    class PinnedMetadata(DocumentMetadata):
        # pyHanko sets last_modified to 'now' (the clock) just before writing: pinned here.
        def __setattr__(self, attr: str, value: object) -> None:
            if attr == "last_modified" and value == "now":
                value = when
            super().__setattr__(attr, value)

    class DatedSigner(signers.PdfSigner):
        # The session's system_time is the CMS signingTime and the signature's /M.
        def init_signing_session(self, pdf_out: BasePdfFileWriter,
                                 existing_fields_only: bool = False) -> PdfSigningSession:
            session = super().init_signing_session(pdf_out, existing_fields_only)
            session.system_time = when
            return session

    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    writer._meta = PinnedMetadata(last_modified=when)
    # PDF/A wants the Info dictionary and the XMP packet to agree: pyHanko writes its own name
    # as the XMP producer but appends it to the Info one, so the Info one is set to it too
    # (the Creator still names certgen and the renderer stack).
    # Any: pyHanko leaves IndirectObject.get_object unannotated (an untyped call otherwise).
    info: Any = writer._info
    if info is not None:
        info.get_object()["/Producer"] = generic.TextStringObject(VENDOR)
        writer.mark_update(info)
    # The /ID's second half names the revision: derived from the bytes signed, not the clock.
    writer._document_id = generic.ArrayObject([
        writer._document_id[0], generic.ByteStringObject(hashlib.sha256(pdf).digest()[:16])])
    out = io.BytesIO()
    if tsa_url is None:
        meta = signers.PdfSignatureMetadata(
            field_name=FIELD_NAME, name=name, md_algorithm="sha256",
            subfilter=fields.SigSeedSubFilter.PADES)
        DatedSigner(meta, signer=signer).sign_pdf(writer, output=out,
                                                  bytes_reserved=bytes_reserved)
        return out.getvalue()

    asyncio.run(_sign_timestamped(writer, out, DatedSigner, signer, name, tsa_url))
    return _with_fresh_crl(out.getvalue(), signer, tsa_url)


FRESH_CRL_WAIT_S = 5
"""How long `--tsa` waits at most, after the signature timestamp, for its clock to reach the
second a timestamp with a fraction of a second ends in, before it fetches the CA's CRL again
(a CRL states its date to the second)."""


def signature_time(pdf: bytes) -> dt.datetime | None:
    """The time of the signature timestamp of a timestamped certificate (None: there is none)."""
    from asn1crypto import cms, tsp

    try:
        [sig] = pdf_reader(pdf).embedded_regular_signatures
        for attr in sig.signer_info["unsigned_attrs"]:
            if attr["type"].native == "signature_time_stamp_token":
                token = cms.ContentInfo.load(attr["values"][0].dump())
                info = tsp.TSTInfo.load(token["content"]["encap_content_info"]["content"]
                                        .parsed.dump())
                when: dt.datetime = info["gen_time"].native
                return when
    except Exception:
        return None
    return None


def embedded_signer_crl_date(pdf: bytes) -> dt.datetime | None:
    """When the newest CRL of the signer's CA in the file's document security store was issued
    (None: there is none)."""
    from asn1crypto import crl as crls
    from pyhanko.sign.validation.dss import DocumentSecurityStore

    try:
        reader = pdf_reader(pdf)
        [sig] = reader.embedded_regular_signatures
        issuer = sig.signer_cert.issuer.dump()
        dates = [listed["tbs_cert_list"]["this_update"].native
                 for listed in (crls.CertificateList.load(ref.get_object().data)
                                for ref in DocumentSecurityStore.read_dss(reader).crls)
                 if listed["tbs_cert_list"]["issuer"].dump() == issuer]
    except Exception:
        return None
    return max(dates, default=None)


def stale_crl_note(pdf: bytes) -> str | None:
    """What a timestamped certificate cannot show (None: nothing): the CRL of the signer's CA it
    embeds was issued before the signature timestamp, so it shows the key unrevoked only until
    then; verify then reads the CA's next CRL (fetched, or --crl) instead (issue 40)."""
    signed = signature_time(pdf)
    issued = embedded_signer_crl_date(pdf)
    if signed is None or (issued is not None and issued >= signed):
        return None
    return ("the CA's CRL at the signing key's CRL address was "
            + ("not embedded" if issued is None else
               f"issued on {issued.isoformat(sep=' ')}, before the signature timestamp "
               f"({signed.isoformat(sep=' ')})")
            + ": until the CA publishes a later one, verify cannot show the key unrevoked when "
              "it signed (VERIFIED EXCEPT; docs/verify.md, 'A CRL after the signature')")


def _with_fresh_crl(pdf: bytes, signer: Signer, tsa_url: str) -> bytes:
    """`pdf` (B-LTA from pyHanko), completed with a CRL of the signer's CA issued after the
    signature timestamp when the CA serves one: pyHanko fetched the CRL before signing, which
    shows the key unrevoked only until then (issue 40). The CRL is fetched again once the
    clock passes the timestamp's second; a later one goes into a document security store
    update covered by a new document timestamp. A CA that re-issues its CRL only on a schedule
    serves the old one: the file is left as it is (stale_crl_note says what it lacks)."""
    from asn1crypto import crl as crls
    from asn1crypto import x509 as ax509

    signed = signature_time(pdf)
    issued = embedded_signer_crl_date(pdf)
    if signed is None or signer.signing_cert is None or (issued is not None and issued >= signed):
        return pdf
    cert = ax509.Certificate.load(signer.signing_cert.dump())
    # A CRL states its date in whole seconds: one issued after a timestamp of 10:00:00.7 reads
    # 10:00:00 until the next second, so the fetch waits for the second the timestamp ends in
    # (none for a timestamp in whole seconds, OpenSSL's and most authorities' default).
    wait = math.ceil(signed.timestamp()) - time.time()
    if 0 < wait <= FRESH_CRL_WAIT_S:
        time.sleep(wait)
    for url in crl_addresses(cert.crl_distribution_points)[:4]:
        try:
            data = fetch_crl(url, timeout=TSA_TIMEOUT_S)
            listed = crls.CertificateList.load(_der(data))
            fresh = (listed["tbs_cert_list"]["issuer"].dump() == cert.issuer.dump()
                     and listed["tbs_cert_list"]["this_update"].native >= signed
                     and _signed_by_a_root(listed, signer))
        except (CrlFetchError, ValueError, TypeError, KeyError):
            continue
        if fresh:
            return asyncio.run(_add_crl_and_timestamp(pdf, listed, signer, tsa_url))
    return pdf


def _signed_by_a_root(listed: Any, signer: Signer) -> bool:
    """The CRL is signed by a CA of the PKCS#12 file (what a verifier will check anyway: an
    answer from the address that is not the CA's is not embedded)."""
    from cryptography import x509 as cx509

    crl = cx509.load_der_x509_crl(listed.dump())
    for root in signer.cert_registry:
        ca = cx509.load_der_x509_certificate(root.dump())
        try:
            if crl.issuer == ca.subject and crl.is_signature_valid(
                    ca.public_key()):  # type: ignore[arg-type]
                return True
        except Exception:
            continue
    return False


def _der(data: bytes) -> bytes:
    from asn1crypto import pem

    return bytes(pem.unarmor(data)[2]) if pem.detect(data) else data


async def _add_crl_and_timestamp(pdf: bytes, listed: Any, signer: Signer, tsa_url: str) -> bytes:
    """`pdf` with `listed` (a CRL) added to its document security store and a document timestamp
    over it (with the authority's own validation data after it, as pyHanko writes a B-LTA)."""
    import aiohttp
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.sign.signers import PdfTimeStamper
    from pyhanko.sign.timestamps.aiohttp_client import HTTPTimeStamper
    from pyhanko.sign.validation.dss import DocumentSecurityStore
    from pyhanko_certvalidator import ValidationContext
    from pyhanko_certvalidator.fetchers.aiohttp_fetchers import AIOHttpFetcherBackend

    roots = [cert for cert in signer.cert_registry if cert.self_signed]
    timeout = aiohttp.ClientTimeout(total=TSA_TIMEOUT_S)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
            DocumentSecurityStore.supply_dss_in_writer(writer, None, crls=[listed])
            context = ValidationContext(trust_roots=roots, allow_fetching=True,
                                        fetcher_backend=AIOHttpFetcherBackend(session))
            stamper = _bounded_stamper(HTTPTimeStamper)(tsa_url, session=session,
                                                        timeout=TSA_TIMEOUT_S)
            out = io.BytesIO()
            await PdfTimeStamper(stamper).async_timestamp_pdf(
                writer, "sha256", validation_context=context, output=out)
            return out.getvalue()
    except Exception as exc:
        raise _tsa_refusal(exc, tsa_url, timeout.total, "the CA's later CRL could not be added "
                           "under a document timestamp") from None


async def _sign_timestamped(writer: IncrementalPdfFileWriter, out: io.BytesIO,
                            signer_class: type[PdfSigner], signer: Signer,
                            name: str, tsa_url: str) -> None:
    """PAdES B-LTA: a signature timestamp from `tsa_url`, then the validation data of the
    signer's and the TSA's certificates (fetched now, from the addresses they name) in the
    document security store, then a document timestamp. The PKCS#12 file's self-signed
    certificates are the roots the validation data is gathered against."""
    import aiohttp
    from pyhanko.sign import fields, signers
    from pyhanko.sign.timestamps.aiohttp_client import HTTPTimeStamper
    from pyhanko_certvalidator import ValidationContext
    from pyhanko_certvalidator.fetchers.aiohttp_fetchers import AIOHttpFetcherBackend

    roots = [cert for cert in signer.cert_registry if cert.self_signed]
    timeout = aiohttp.ClientTimeout(total=TSA_TIMEOUT_S)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            context = ValidationContext(trust_roots=roots, allow_fetching=True,
                                        fetcher_backend=AIOHttpFetcherBackend(session))
            meta = signers.PdfSignatureMetadata(
                field_name=FIELD_NAME, name=name, md_algorithm="sha256",
                subfilter=fields.SigSeedSubFilter.PADES, embed_validation_info=True,
                use_pades_lta=True, validation_context=context)
            # pyHanko's own default is 5 s a request: the documented wait is ours.
            stamper = _bounded_stamper(HTTPTimeStamper)(tsa_url, session=session,
                                                        timeout=TSA_TIMEOUT_S)
            await signer_class(meta, signer=signer, timestamper=stamper).async_sign_pdf(
                writer, output=out)
    except Exception as exc:
        # pyHanko's own (a refused timestamp, validation data not found) is quoted
        raise _tsa_refusal(exc, tsa_url, timeout.total, "the signature could not be timestamped "
                           "and completed with its validation data") from None
    missing = _without_validation_data(out.getvalue())
    if missing:
        raise CertgenError(_NO_REVOCATION.format(
            url=tsa_url, subject=missing[0],
            why="the file's validation data holds no CRL or OCSP answer for it"))


def _without_validation_data(pdf: bytes) -> list[str]:
    """The certificates in a B-LTA file's document security store, roots aside, for which the
    store holds no revocation information: neither a CRL by the certificate's issuer nor an
    OCSP answer about its serial number. pyHanko embeds what it could fetch and says nothing
    about what it could not (its soft-fail default); a verifier then cannot trust the file."""
    from asn1crypto import crl, ocsp
    from cryptography import x509
    from pyhanko.sign.validation.dss import DocumentSecurityStore
    from pyhanko.sign.validation.errors import NoDSSFoundError

    try:
        dss = DocumentSecurityStore.read_dss(pdf_reader(pdf, strict=True))
    except NoDSSFoundError:
        return ["every certificate of the chain: the file has no document security store"]
    crl_issuers = {crl.CertificateList.load(ref.get_object().data).issuer.dump()
                   for ref in dss.crls}
    answered: set[tuple[str, bytes, int]] = set()
    for ref in dss.ocsps:
        basic = ocsp.OCSPResponse.load(ref.get_object().data).basic_ocsp_response
        for single in basic["tbs_response_data"]["responses"]:
            cert_id = single["cert_id"]
            answered.add((cert_id["hash_algorithm"]["algorithm"].native,
                          cert_id["issuer_name_hash"].native,
                          int(cert_id["serial_number"].native)))
    algorithms = {algorithm for algorithm, _, _ in answered}

    def has_answer(cert: Any) -> bool:
        return any((algorithm, hashlib.new(algorithm, cert.issuer.dump()).digest(),
                    cert.serial_number) in answered for algorithm in algorithms)

    return [x509.load_der_x509_certificate(cert.dump()).subject.rfc4514_string()
            for cert in dss.load_certs()
            if cert.self_signed == "no" and cert.issuer.dump() not in crl_issuers
            and not has_answer(cert)]


def _tsa_refusal(exc: Exception, tsa_url: str, seconds: float | None,
                 failed: str) -> CertgenError:
    """One line for what stopped a `--tsa` step: an answer over the size limit, an authority or
    CRL address not reached in time, else what `failed`, with the library's own words."""
    import aiohttp

    if (large := _cause(exc, TSAReplyTooLargeError)) is not None:
        return CertgenError(f"--tsa {tsa_url}: {large}")
    if isinstance(exc, (aiohttp.ClientError, OSError, TimeoutError)):
        return CertgenError(f"--tsa {tsa_url}: {_unreachable(exc, seconds)}")
    return CertgenError(f"--tsa {tsa_url}: {failed} ({type(exc).__name__}: {_one_line(exc)})")


def _one_line(exc: BaseException) -> str:
    """A library's message as one short line: pyHanko and asn1crypto wrap what they found over
    several lines (a fuzzed timestamp reply: "Error parsing asn1crypto.tsp.PKIStatusInfo -\n…"),
    and the reply's bytes may show in it (invisible characters escaped)."""
    return shorten(escape_invisible(" ".join(str(exc).split())), 300)

def _cause(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of `kind` in exc's chain (pyHanko wraps what the stamper raises)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _bounded_stamper(base: type[HTTPTimeStamper]) -> type[HTTPTimeStamper]:
    """pyHanko's HTTP timestamper, reading the reply in pieces up to MAX_TSA_REPLY_BYTES
    (pyHanko's reads it whole, however long it streams); the rest as pyHanko does it."""
    import aiohttp
    from asn1crypto import tsp
    from pyhanko.sign.timestamps.common_utils import TimestampRequestError

    class BoundedStamper(base):  # type: ignore[valid-type, misc]
        async def async_request_tsa_response(self, req: tsp.TimeStampReq) -> tsp.TimeStampResp:
            headers = await self.async_request_headers()
            too_large = TSAReplyTooLargeError(
                f"the timestamp authority's answer is larger than {MAX_TSA_REPLY_BYTES} bytes "
                "(a timestamp reply is a few kB); refused unread")
            try:
                async with self._acquire_session() as session, session.post(
                        url=self.url, headers=headers, data=req.dump(), auth=self.auth,
                        raise_for_status=True,
                        timeout=aiohttp.ClientTimeout(total=self.timeout)) as response:
                    if (response.content_length or 0) > MAX_TSA_REPLY_BYTES:
                        raise too_large
                    data = bytearray()
                    async for piece in response.content.iter_chunked(64 * 1024):
                        data += piece
                        if len(data) > MAX_TSA_REPLY_BYTES:
                            raise too_large
                    kind = response.headers.get("Content-Type")
                    if kind != "application/timestamp-reply":
                        raise aiohttp.ContentTypeError(
                            response.request_info, response.history, headers=response.headers,
                            message=f"Timestamp server response is malformed: expected "
                                    f"content type application/timestamp-reply, but got {kind}.")
            except (aiohttp.ClientError, OSError) as exc:
                raise TimestampRequestError("Error while contacting timestamp service") from exc
            return tsp.TimeStampResp.load(bytes(data))

    return BoundedStamper


def _unreachable(exc: BaseException, seconds: float | None) -> str:
    """What went wrong on the way to the timestamp authority (or a CRL address), from the
    cause pyHanko wraps (TimestampRequestError): an HTTP error is an answer, not an
    unreachable server; a timeout says how long we waited."""
    import aiohttp

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, aiohttp.ClientResponseError):
            return (f"the timestamp authority or a CRL address answered HTTP {cause.status} "
                    f"({str(cause.message)[:200]})")
        if isinstance(cause, TimeoutError):
            return (f"the timestamp authority or a CRL address did not answer within "
                    f"{seconds or 0:g} s")
        cause = cause.__cause__ or cause.__context__
    return (f"the timestamp authority or a CRL address cannot be reached "
            f"({type(exc).__name__}: {exc})")


def sign_detached(data: bytes, key: SigningKey) -> bytes:
    """A detached CMS signature (DER, SHA-256) of `data` by `key`, made at the key's signing
    time (its signingTime attribute): how the registry signs its index.json (index.json.p7s),
    so that `certgen verify --revocations` can tell the lab's list from a forged one."""

    from pyhanko.sign.signers.pdf_cms import PdfCMSSignedAttributes

    if key.signing_time is None:
        raise ValueError("sign_detached needs a signing time (SigningKey.at)")
    signer = _signer(key.p12, key.passphrase)
    content = asyncio.run(signer.async_sign_general_data(
        data, "sha256", detached=True,
        signed_attr_settings=PdfCMSSignedAttributes(signing_time=key.signing_time)))
    return bytes(content.dump())
