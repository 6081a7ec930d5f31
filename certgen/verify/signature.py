"""The signature and what it covers: exactly one signature, by the record's signatory's own
certificate (identity), intact and covering the whole file or followed only by certgen's own
validation data and document timestamps (coverage), and a signer chaining to --trust at the
signing time and now, or by the long-term validation data the file carries (trust)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import io
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from certgen.support.objstreams import pdf_reader
from certgen.verify.crls import CrlFinding, crl_finding
from certgen.verify.drawn import drawn_said
from certgen.verify.outcome import Check, Said
from certgen.verify.revisions import lta_revisions_said
from certgen.verify.seen import seen_of, seen_said

if TYPE_CHECKING:
    import pypdf
    from asn1crypto import x509
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation.pdf_embedded import EmbeddedPdfSignature
    from pyhanko.sign.validation.status import PdfSignatureStatus
    from pypdf.generic import DictionaryObject


@dataclass
class SignatureFindings:
    """What the signature checks found, and what the content check needs to replay it."""

    checks: list[Check] = field(default_factory=list)
    holds: bool = False
    """One signature, intact, covering the whole file (trust aside)."""
    name: str | None = None
    when: dt.datetime | None = None
    """The signing time the signature states (its /M, inside the signed bytes)."""
    cms_der: bytes | None = None
    reserved: int | None = None
    """Hex digits reserved between the gap's < and >."""
    sig_end: int | None = None
    """Where the lab's signed revision ends (the file's end, unless timestamps follow)."""
    timestamped: bool = False
    """Document timestamps (and validation data) follow the signed revision."""
    cert: x509.Certificate | None = None
    """The signer's certificate (for the CA's CRL, --crl)."""
    proven: dt.datetime | None = None
    """When the timestamps prove the signature existed (a timestamped signature that holds)."""
    shown: Said | None = None
    """What in the file shows the signer's key unrevoked when it signed: a CRL of its CA issued
    at or after the time the timestamps prove (None: nothing does; verify then needs the CA's
    current CRL, issue 40)."""



_HEX_GAP = re.compile(rb"<[0-9A-Fa-f]*>")


def _coverage_problem(pdf: bytes, sig: EmbeddedPdfSignature, reader: PdfFileReader, *,
                      last: bool) -> Said | None:
    """Why a signature does not cover what it must (None: it does). Read from the bytes: the
    range must be [0 a b c] as the signed revision states it, and its gap hold exactly the
    /Contents hex string. The `last` signature (the lab's, or the newest document timestamp)
    must end at the end of the file and its revision be the file's last; an earlier one (the
    lab's, followed by certgen's own timestamp revisions) must end where its revision ends."""
    try:
        byte_range = [int(x) for x in sig.sig_object["/ByteRange"]]
    except Exception:
        return Said("the signature has no readable /ByteRange")
    if len(byte_range) != 4 or byte_range[0] != 0 or min(byte_range) < 0:
        return Said("the signed range %(byte_range)s does not start at the file's first byte",
                    byte_range=str(byte_range))
    _, a, b, c = byte_range
    end = b + c
    if not a < b <= len(pdf) or end > len(pdf):
        return Said("the signed range runs past the end of the file")
    if last and end < len(pdf):
        return Said("the signed range does not cover the file: %(number)s bytes were added after "
                     "signing (an incremental update)", number=len(pdf) - end)
    if not last and not pdf[:end].rstrip().endswith(b"%%EOF"):
        return Said("the signed range does not end where its revision ends")
    gap = pdf[a:b]
    if _HEX_GAP.fullmatch(gap) is None:
        return Said("the gap the signed range leaves is not one hex string (ISO 32000 requires "
                     "/Contents there as hex): bytes were hidden in it")
    stated = re.compile(rb"/ByteRange\s*\[\s*0\s+%d\s+%d\s+%d\s*\]" % (a, b, c))
    # pyHanko writes /ByteRange just after /Contents; another writer may put it before.
    if stated.search(pdf, b, b + 4096) is None and stated.search(pdf, max(0, a - 4096), a) is None:
        return Said("the signed revision does not state this /ByteRange beside its /Contents")
    try:
        contents = bytes(sig.sig_object["/Contents"])
    except Exception:
        return Said("the signature has no readable /Contents")
    if bytes.fromhex(gap[1:-1].decode("ascii")) != contents:
        return Said("the signature's /Contents is not the hex string in the signed range's gap")
    if last:
        try:
            final = reader.xrefs.total_revisions - 1
            if sig.signed_revision != final:
                return Said("%(number)s revision(s) follow the signed one: the file was updated "
                             "after signing", number=final - sig.signed_revision)
        except Exception:
            return Said("the file's revisions cannot be read")
    return None


def _has_signature_timestamp(sig: EmbeddedPdfSignature) -> bool:
    """The signature's CMS carries a signature timestamp (PAdES B-T: what `build --tsa` makes
    before it adds validation data and document timestamps)."""
    try:
        attrs = sig.signer_info["unsigned_attrs"]
        return any(attr["type"].native == "signature_time_stamp_token" for attr in attrs)
    except Exception:
        return False


def _range_end(sig: EmbeddedPdfSignature) -> int:
    """Where a signature's signed range ends (the end of its revision)."""
    _, _, b, c = (int(x) for x in sig.sig_object["/ByteRange"])
    return b + c


DOCUMENT_SIGNING_PURPOSES = {
    "email_protection", "any_extended_key_usage",
    "1.3.6.1.5.5.7.3.36",          # id-kp-documentSigning (RFC 9336)
    "1.2.840.113583.1.1.5",        # Adobe Authentic Documents Trust
    "1.3.6.1.4.1.311.10.3.12",     # Microsoft document signing
}
"""Extended key usages a document signer's certificate may state (none stated also passes); a
timestamping- or code-signing-only certificate is not a signatory's."""


def _names(cert: x509.Certificate, kind: str) -> list[str]:
    """Every value of one attribute type (common_name, organization_name) in the subject, in
    every RDN (a second CN hides in a second RDN or a multi-valued one)."""
    found = []
    for rdn in cert.subject.chosen:
        for attribute in rdn:
            if attribute["type"].native == kind:
                found.append(str(attribute["value"].native))
    return found


def identity_problem(cert: x509.Certificate, name: str | None, signatory: str | None,
                     pinned: str | None, organization: str | None = None) -> str | None:
    """identity_said in English."""
    said = identity_said(cert, name, signatory, pinned, organization)
    return None if said is None else said.render()


def identity_said(cert: x509.Certificate, name: str | None, signatory: str | None,
                  pinned: str | None, organization: str | None = None) -> Said | None:
    """Why the signer is not the record's signatory (None: it is): the signature's /Name and the
    certificate's one common name must be the signatory's, and, unless lab.yaml pins the
    certificate, its one organization (O) the laboratory's name; the certificate must be an
    end-entity one whose key usage allows signing, and lab.yaml's pinned one where it pins one."""
    names = _names(cert, "common_name")
    subject = names[0] if names else None
    if len(names) > 1:
        return (Said("the signing certificate names %(count)s common names (%(subject)s); a "
                     "signatory's has exactly one", count=len(names),
                     subject=cert.subject.human_friendly))
    if signatory is not None and name != signatory:
        return Said("signed in the name of %(name)s; the record's signatory is %(signatory)s",
                    name=repr(name), signatory=repr(signatory))
    if signatory is not None and subject != signatory:
        return Said("the signing certificate is made out to %(common_name)s (%(subject)s); the "
                    "record's signatory is %(signatory)s", common_name=repr(subject),
                    subject=cert.subject.human_friendly, signatory=repr(signatory))
    if organization is not None and pinned is None:
        orgs = _names(cert, "organization_name")
        if orgs != [organization]:
            if not orgs:
                return Said("the signing certificate is made out to the organization none "
                            "(%(subject)s); the issuing laboratory is %(organization)s (or pin "
                            "the certificate in lab.yaml)", subject=cert.subject.human_friendly,
                            organization=repr(organization))
            return Said("the signing certificate is made out to the organization %(orgs)s "
                        "(%(subject)s); the issuing laboratory is %(organization)s (or pin the "
                        "certificate in lab.yaml)", orgs=", ".join(repr(o) for o in orgs),
                        subject=cert.subject.human_friendly, organization=repr(organization))
    if cert.ca:
        return Said("the signing certificate is a CA certificate (CA:TRUE), not the signatory's "
                    "own")
    usage = cert.key_usage_value
    if usage is not None and not ({"digital_signature", "non_repudiation"} & set(usage.native)):
        return Said("the signing certificate's key usage does not allow signing")
    purposes = cert.extended_key_usage_value
    if purposes is not None and not (set(purposes.native) & DOCUMENT_SIGNING_PURPOSES):
        return Said("the signing certificate is for %(purposes)s, not for signing documents (its "
                     "extended key usage)", purposes=", ".join(purposes.native))
    fingerprint = hashlib.sha256(cert.dump()).hexdigest()
    if pinned is not None and fingerprint != pinned:
        return Said("the signing certificate has SHA-256 %(fingerprint)s; the record's signatory "
                     "signs with %(pinned)s", fingerprint=fingerprint, pinned=pinned)
    return None


def _path_problem(cert: x509.Certificate, others: list[x509.Certificate],
                  roots: list[x509.Certificate], moment: dt.datetime,
                  what: Said) -> Said | None:
    """Why the signer's certificate is not valid at `moment` under `roots` (None: it is)."""
    from pyhanko_certvalidator import CertificateValidator, ValidationContext
    from pyhanko_certvalidator.errors import (
        ExpiredError,
        NotYetValidError,
        PathBuildingError,
        PathValidationError,
        RevokedError,
    )

    context = ValidationContext(trust_roots=roots, allow_fetching=False,
                                revocation_mode="soft-fail", moment=moment)
    validator = CertificateValidator(cert, intermediate_certs=others, validation_context=context)
    subject = cert.subject.human_friendly
    try:
        asyncio.run(validator.async_validate_path())
    except ExpiredError:
        return (Said("expired: the signer's certificate (%(subject)s) was valid until "
                     "%(not_valid_after)s, before %(what)s", subject=subject,
                     not_valid_after=cert.not_valid_after.isoformat(sep=' '), what=what))
    except NotYetValidError:
        return (Said("not yet valid: the signer's certificate (%(subject)s) is valid from "
                     "%(not_valid_before)s, after %(what)s", subject=subject,
                     not_valid_before=cert.not_valid_before.isoformat(sep=' '), what=what))
    except RevokedError:
        return Said("revoked: the signer's certificate (%(subject)s) was revoked by its CA",
                    subject=subject)
    except PathBuildingError:
        return Said("untrusted signer: %(subject)s does not chain to the trusted CA",
                    subject=subject)
    except PathValidationError as exc:
        return Said("untrusted signer: %(subject)s: %(error)s", subject=subject, error=str(exc))
    except Exception as exc:  # a malformed certificate: say so, never a traceback
        return Said("untrusted signer: %(subject)s: the certificate cannot be validated "
                    "(%(error)s)", subject=subject, error=type(exc).__name__)
    return None


def signature_checks(pdf: bytes, roots: list[x509.Certificate] | None, signatory: str | None,
                     pinned: str | None, at: dt.datetime | None = None,
                     tsa_roots: list[x509.Certificate] | None = None,
                     organization: str | None = None) -> SignatureFindings:
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext

    out = SignatureFindings()
    try:
        reader = pdf_reader(pdf)
        embedded = list(reader.embedded_regular_signatures)
        stamps = sorted(reader.embedded_timestamp_signatures, key=lambda t: t.signed_revision)
    except Exception:  # a damaged file: pyHanko cannot even find the signatures
        out.checks.append(Check("signature", "fail", Said("the PDF's structure cannot be read (a "
                                                          "damaged or truncated file)")))
        return out
    if not embedded:
        out.checks.append(Check("signature", "fail", Said("the PDF is not signed")))
        return out
    if len(embedded) > 1:
        out.checks.append(Check("signature", "fail", Said("%(count)s signatures: certgen signs a "
                                                          "certificate once, so one was added "
                                                          "after the lab signed",
                                                          count=len(embedded))))
        out.checks.append(Check("intact", "fail", Said("a second signature follows the lab's: the "
                                                       "file is not the one the lab signed")))
        out.checks.append(Check("trust", "skip", Said("not checked: the file has more than one "
                                                      "signature")))
        return out
    sig = embedded[0]
    try:
        out.name = None if sig.sig_object.get("/Name") is None else str(sig.sig_object["/Name"])
        cert = sig.signer_cert
        out.cert = cert
        others = list(sig.other_embedded_certs)
        # PAdES puts the signing time in the signed /M, not in a CMS attribute.
        out.when = sig.self_reported_timestamp
    except Exception:
        out.checks.append(Check("signature", "fail", Said("the signature's CMS data cannot be read"
                                                          " (the signature is damaged)")))
        out.checks.append(Check("intact", "fail", Said("the signature cannot be read")))
        return out
    identity = identity_said(cert, out.name, signatory, pinned, organization)
    out.checks.append(Check("signature", "fail", identity) if identity else
                      Check("signature", "pass", Said(
                          "signed in the name of %(name)s, by its own certificate (SHA-256 "
                          "%(sha256)s)", name=out.name,
                          sha256=hashlib.sha256(cert.dump()).hexdigest())))

    coverage = _coverage_problem(pdf, sig, reader, last=not stamps)
    # Timestamps chain to their own roots (--tsa-trust), else to the signer's (--trust): a
    # public TSA's root must never make its other certificates count as the lab's signatory.
    stamp_roots = tsa_roots if tsa_roots is not None else roots
    if coverage is None and stamps and not _has_signature_timestamp(sig):
        coverage = Said("document timestamps follow a signature that carries no signature "
                        "timestamp: certgen adds validation data and document timestamps only "
                        "to a signature it timestamped itself (a plain signature was made to "
                        "look long-term after signing)")
    if coverage is None and stamps:
        # Read strictly first: a revision pyHanko reads one way and other readers another
        # (a listed-twice object, a copied end marker) never reaches the libraries' analysis.
        coverage = (lta_revisions_said(pdf, _range_end(sig))
                    or _timestamps_problem(pdf, sig, stamps, reader, stamp_roots))
    digest_ok = False
    try:
        # pyHanko's difference analysis (seconds on an appended update) only says what the
        # later revisions do; once the bytes show the signed range short, that is the verdict.
        status = validate_pdf_signature(sig, ValidationContext(
            trust_roots=roots or [], allow_fetching=False, revocation_mode="soft-fail"),
            skip_diff=coverage is not None)
        digest_ok = bool(status.intact and status.valid)
        if coverage is None and stamps:
            coverage = (_later_revisions_problem(status)
                        or _lta_additions_problem(pdf, _range_end(sig))
                        or drawn_said(pdf, _range_end(sig)))
    except Exception:
        digest_ok = False
    if coverage is not None:
        out.checks.append(Check("intact", "fail", coverage))
    elif not digest_ok:
        out.checks.append(Check("intact", "fail", Said("digest mismatch: the signed bytes were "
                                                       "changed after signing")))
    elif out.when is None:
        out.checks.append(Check("intact", "fail", Said("the signature carries no signing time")))
    else:
        out.holds = True
        gap = [int(x) for x in sig.sig_object["/ByteRange"]]
        out.reserved = gap[2] - gap[1] - 2
        out.cms_der = _cms_der(bytes(sig.sig_object["/Contents"]))
        out.sig_end = _range_end(sig)
        out.timestamped = bool(stamps)
        out.checks.append(Check("intact", "pass", Said(
            "no byte changed after signing; the signed range is the whole file") if not stamps
            else Said("no byte changed after signing; after the signed revision only validation "
                      "data and %(count)s document timestamp(s) follow (read strictly, revision "
                      "by revision; PDFium and poppler draw every page as signed; pyHanko, pypdf "
                      "and qpdf read the same pages)", count=len(stamps))))

    if roots is None:
        out.checks.append(Check("trust", "fail", Said("not checked: give --trust CA.pem, the "
                                                      "laboratory's CA certificate")))
        return out
    moment = at or dt.datetime.now(dt.UTC)
    shown = Said("today") if at is None else Said("the validation time %(moment)s",
                                                  moment=moment.isoformat(sep=" "))
    if stamps:
        problem, proven = _long_term_problem(sig, roots, moment, stamp_roots or roots)
        out.proven = None if problem or not proven else dt.datetime.fromisoformat(proven)
        if problem:
            out.checks.append(Check("trust", "fail", problem))
            return out
        # An embedded CRL counts only if the CA signed it, it speaks for this certificate and it
        # was issued at or after the time it must cover (certgen.verify.crls, issue 40).
        assert out.proven is not None
        findings = _embedded_findings(sig, cert, roots, out.when, out.proven)
        revoked = next((f for _, f in findings if f.verdict == "fail"), None)
        if revoked is not None:
            out.checks.append(Check("trust", "fail", revoked.detail))
            return out
        shown_by = next((issued for issued, f in findings if f.verdict == "pass"), None)
        if shown_by is not None:
            out.shown = Said("its CA's CRL of %(issued)s", issued=shown_by.isoformat(sep=" "))
            shows = Said("%(crl)s, embedded, shows its key unrevoked then", crl=out.shown)
        else:
            issued = max((when for when, _ in findings), default=None)
            shows = (Said("the file embeds no CRL of its CA") if issued is None else
                     Said("the CRL the file embeds (%(issued)s) predates that",
                          issued=issued.isoformat(sep=" ")))
        out.checks.append(Check("trust", "pass", Said("%(subject)s chains to the trusted CA; the "
                                                      "timestamps prove the signature existed at "
                                                      "%(proven)s; %(shows)s (checked at "
                                                      "%(shown)s, offline)",
                                                      subject=cert.subject.human_friendly,
                                                      proven=proven, shows=shows, shown=shown)))
        return out
    problems = []
    if out.when is not None:
        problems.append(_path_problem(cert, others, roots, out.when,
                                      Said("its signing time %(when)s",
                                           when=out.when.isoformat(sep=" "))))
    problems.append(_path_problem(cert, others, roots, moment, shown))
    problem = next((p for p in problems if p is not None), None)
    out.checks.append(Check("trust", "fail", problem) if problem else
                      Check("trust", "pass", Said(
                          "%(subject)s chains to the trusted CA and is valid at the signing "
                          "time %(when)s and now", subject=cert.subject.human_friendly,
                          when="" if out.when is None else out.when.isoformat(sep=" "))
                          if at is None else Said(
                          "%(subject)s chains to the trusted CA and is valid at the signing "
                          "time %(when)s and at %(moment)s", subject=cert.subject.human_friendly,
                          when="" if out.when is None else out.when.isoformat(sep=" "),
                          moment=moment.isoformat(sep=" "))))
    return out


def _timestamps_problem(pdf: bytes, sig: EmbeddedPdfSignature,
                        stamps: list[EmbeddedPdfSignature], reader: PdfFileReader,
                        roots: list[x509.Certificate] | None) -> Said | None:
    """Why the document timestamps after the lab's signature are not certgen's own (None: they
    are): each follows the signature and is intact, by a trusted authority; what follows the
    newest (pyHanko ends the file with an unsigned DSS revision) is held by the strict reader."""
    from pyhanko.sign.validation import validate_pdf_timestamp
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    for number, stamp in enumerate(stamps, start=1):
        if stamp.signed_revision <= sig.signed_revision:
            return Said("a document timestamp precedes the signature")
        try:
            at_end = _range_end(stamp) >= len(pdf)
        except Exception:
            return Said("document timestamp %(number)s has no readable /ByteRange", number=number)
        problem = _coverage_problem(pdf, stamp, reader, last=at_end)
        if problem is not None:
            return Said("document timestamp %(number)s: %(problem)s", number=number,
                        problem=problem)
        try:
            status = validate_pdf_timestamp(stamp, ValidationContext(
                trust_roots=roots or [], allow_fetching=False, revocation_mode="soft-fail"))
            intact = bool(status.intact and status.valid)
            trusted = bool(status.trusted)
            restated = not at_end and status.coverage == SignatureCoverageLevel.ENTIRE_FILE
        except Exception:
            intact, trusted, restated = False, False, False
        if not intact:
            return Said("digest mismatch: document timestamp %(number)s does not match the bytes "
                         "it covers", number=number)
        if roots is not None and not trusted:
            return Said("document timestamp %(number)s is by a timestamp authority that does not "
                         "chain to the trusted roots (--tsa-trust, else --trust)", number=number)
        if restated:
            return Said("document timestamp %(number)s claims to cover the whole file, but bytes "
                         "follow it: its dictionary was restated", number=number)
    return None


def _later_revisions_problem(status: PdfSignatureStatus) -> Said | None:
    """What pyHanko's difference analysis found between the signed revision and the file's end,
    when it is more than validation data and document timestamps (None: nothing more)."""
    from pyhanko.sign.diff_analysis import ModificationLevel
    from pyhanko.sign.validation.status import SignatureCoverageLevel

    if status.coverage != SignatureCoverageLevel.ENTIRE_REVISION:
        return Said("the signature claims to cover the whole file, but revisions follow it: its "
                     "dictionary was restated")
    level = status.modification_level
    if level is None or level > ModificationLevel.LTA_UPDATES or not status.docmdp_ok:
        return Said("the file was changed after signing: a revision that follows the signature "
                     "does more than add validation data or a timestamp")
    return None


def _lta_additions_problem(pdf: bytes, sig_end: int) -> Said | None:
    """What the revisions after the signed one add beyond validation data and document
    timestamps (None: nothing), checked on top of pyHanko's difference analysis, which lets a
    new invisible signature field, any /Info or XMP change pass as LTA updates: the document
    information and XMP must be the signed revision's, every new field a document timestamp
    with a zero-area widget and no action, no page may gain another annotation, and what a
    reader sees (text, images, actions) must be the signed revision's."""
    import pypdf

    try:
        signed = pypdf.PdfReader(io.BytesIO(pdf[:sig_end]))
        final = pypdf.PdfReader(io.BytesIO(pdf))
        # pyHanko's own validation-data and timestamp revisions move the modification date,
        # and nothing else of the document information or the XMP packet.
        if _info(signed) != _info(final):
            return Said("the document information (title, author…) was changed after signing; "
                         "readers show it")
        if _xmp(signed) != _xmp(final):
            return Said("the XMP metadata was changed after signing; readers show it")
        before = {f.idnum for f in _fields(signed)}
        added = [f for f in _fields(final) if f.idnum not in before]
        for ref in added:
            field_ = cast("DictionaryObject", ref.get_object())
            value = field_.get("/V")
            rect = field_.get("/Rect")
            if (field_.get("/FT") != "/Sig" or value is None
                    or value.get_object().get("/Type") != "/DocTimeStamp"
                    or field_.get("/Subtype") != "/Widget" or "/Kids" in field_
                    or "/A" in field_ or "/AA" in field_ or rect is None or len(rect) != 4
                    or any(float(x) != 0 for x in rect)):
                return Said("a form field was added after signing that is not a document "
                             "timestamp's invisible one")
        new_ids = {ref.idnum for ref in added}
        for number, (old_page, new_page) in enumerate(zip(signed.pages, final.pages), start=1):
            had = {a.idnum for a in (old_page.get("/Annots") or [])}
            for annot in new_page.get("/Annots") or []:
                if annot.idnum not in had and annot.idnum not in new_ids:
                    return Said("an annotation was added to page %(number)s after signing",
                                number=number)
        difference = seen_said(seen_of(final), seen_of(signed), signature_widgets=len(added))
        if difference is not None:
            return Said("after signing: %(difference)s", difference=difference)
    except Exception as exc:
        return Said("the revisions after signing cannot be read (%(error)s)",
                    error=type(exc).__name__)
    return None


def _fields(reader: pypdf.PdfReader) -> list[pypdf.generic.IndirectObject]:
    form = cast("DictionaryObject", reader.trailer["/Root"]).get("/AcroForm")
    fields = None if form is None else form.get_object().get("/Fields")
    return [] if fields is None else list(fields)


def _info(reader: pypdf.PdfReader) -> dict[str, str]:
    return {str(k): str(v) for k, v in (reader.metadata or {}).items() if k != "/ModDate"}


_XMP_DATES = re.compile(rb'\s*xmp:(?:ModifyDate|MetadataDate)="[^"]*"'
                        rb'|<xmp:(ModifyDate|MetadataDate)>[^<]*</xmp:\1>')


def _xmp(reader: pypdf.PdfReader) -> bytes | None:
    """The XMP packet without its modification dates (what a later revision may move)."""
    metadata = cast("DictionaryObject", reader.trailer["/Root"]).get("/Metadata")
    if metadata is None:
        return None
    return _XMP_DATES.sub(b"", bytes(metadata.get_object().get_data()))


def _long_term_problem(sig: EmbeddedPdfSignature, roots: list[x509.Certificate],
                       moment: dt.datetime,
                       tsa_roots: list[x509.Certificate]) -> tuple[Said | None, str]:
    """PAdES B-LTA validation at `moment`, offline, from the validation data in the file alone
    (pyHanko's AdES LTA algorithm): (why it fails or None, when the signature is proven to have
    existed)."""
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

    def policy(trusted: list[x509.Certificate]) -> CertValidationPolicySpec:
        return CertValidationPolicySpec(trust_manager=SimpleTrustManager.build(
            trust_roots=trusted), revinfo_policy=CertRevTrustPolicy(REQUIRE_REVINFO))

    spec = PdfSignatureValidationSpec(SignatureValidationSpec(
        cert_validation_policy=policy(roots), ts_cert_validation_policy=policy(tsa_roots),
        revinfo_gathering_policy=RevocationInfoGatheringSpec(
            online_fetching_rule=RevinfoOnlineFetchingRule.LOCAL_ONLY)))
    timing = ValidationTimingInfo(validation_time=moment, best_signature_time=moment,
                                  point_in_time_validation=False)
    try:
        result = asyncio.run(ades_lta_validation(sig, spec, timing_info=timing))
    except Exception as exc:
        return Said("the long-term validation could not run (%(error)s)",
                    error=type(exc).__name__), ""
    status = result.api_status
    proven = result.best_signature_time.isoformat(sep=" ")
    if status is not None and status.bottom_line:
        return None, proven
    subject = sig.signer_cert.subject.human_friendly
    indication = str(result.ades_subindic)
    if "REVOKED" in indication:
        return Said("revoked: the signer's certificate (%(subject)s) was revoked by its CA",
                    subject=subject), proven
    if "NO_POE" in indication or "OUT_OF_BOUNDS" in indication or "EXPIRED" in indication:
        return (Said("expired: no timestamp in the file proves the signature existed while the "
                     "signer's certificate (%(subject)s) was valid, checked at %(moment)s with the"
                     " validation data the file carries (%(indication)s)", subject=subject,
                     moment=moment.isoformat(sep=' '), indication=indication)), proven
    missing = missing_revocation_said(sig)
    if missing is not None:
        # pyHanko reports a chain it could not validate; the cause a lab can fix is this.
        return Said("untrusted signer: %(missing)s", missing=missing), proven
    if status is not None and not status.trusted:
        return Said("untrusted signer: %(subject)s does not chain to the trusted CA",
                    subject=subject), proven
    return Said("untrusted signer: %(subject)s: %(reason)s", subject=subject,
                reason=result.failure_msg or indication), proven


def _revocation_subjects(sig: EmbeddedPdfSignature) -> list[x509.Certificate]:
    """The certificates the long-term validation needs revocation information for: the signer's
    and each timestamp authority's (of the signature timestamp and the document timestamps)."""
    from asn1crypto import cms

    found = [sig.signer_cert]
    try:
        for attr in sig.signer_info["unsigned_attrs"]:
            if attr["type"].native == "signature_time_stamp_token":
                for token in attr["values"]:
                    token = cms.ContentInfo.load(token.dump())
                    for choice in token["content"]["certificates"]:
                        found.append(choice.chosen)
    except Exception:
        pass
    try:
        found.extend(stamp.signer_cert for stamp in sig.reader.embedded_timestamp_signatures)
    except Exception:
        pass
    unique: dict[bytes, x509.Certificate] = {}
    for cert in found:
        if cert.subject != cert.issuer and not cert.ca:
            unique.setdefault(cert.dump(), cert)
    return list(unique.values())


def _embedded_findings(sig: EmbeddedPdfSignature, cert: x509.Certificate,
                       roots: list[x509.Certificate], signed_at: dt.datetime | None,
                       proven: dt.datetime) -> list[tuple[dt.datetime, CrlFinding]]:
    """Each CRL in the document security store that names `cert`'s issuer, newest first, with
    its date and what it says of `cert` at the time the timestamps prove (crl_finding: only one
    the CA of --trust signed, complete for this certificate, can pass or fail; anyone may
    append a DSS revision)."""
    from asn1crypto import crl as crls
    from pyhanko.sign.validation.dss import DocumentSecurityStore

    found: list[tuple[dt.datetime, CrlFinding]] = []
    try:
        dss = DocumentSecurityStore.read_dss(sig.reader)
        for ref in dss.crls:
            data = ref.get_object().data
            listed = crls.CertificateList.load(data)
            if listed["tbs_cert_list"]["issuer"].dump() != cert.issuer.dump():
                continue
            issued = listed["tbs_cert_list"]["this_update"].native
            if isinstance(issued, dt.datetime):
                found.append((issued, crl_finding(data, cert, roots, signed_at=signed_at,
                                                  proven=proven,
                                                  source=Said("embedded in the file"))))
    except Exception:
        return []
    return sorted(found, key=lambda pair: pair[0], reverse=True)


def missing_revocation_info(sig: EmbeddedPdfSignature) -> str | None:
    """missing_revocation_said in English."""
    said = missing_revocation_said(sig)
    return None if said is None else said.render()


def missing_revocation_said(sig: EmbeddedPdfSignature) -> Said | None:
    """Which certificate the file carries no revocation information for (None: each has a CRL of
    its issuer or an OCSP answer for it in the document security store), and why it likely has
    none: a certificate that names no CRL distribution point gives `build --tsa` nothing to
    fetch."""
    from asn1crypto import crl as crls
    from asn1crypto import ocsp
    from pyhanko.sign.validation.dss import DocumentSecurityStore

    issuers: set[bytes] = set()
    serials: set[int] = set()
    try:
        dss = DocumentSecurityStore.read_dss(sig.reader)
        for ref in dss.crls:
            listed = crls.CertificateList.load(ref.get_object().data)
            issuers.add(listed["tbs_cert_list"]["issuer"].dump())
        for ref in dss.ocsps:
            answer = ocsp.OCSPResponse.load(ref.get_object().data)
            for single in answer.basic_ocsp_response["tbs_response_data"]["responses"]:
                serials.add(int(single["cert_id"]["serial_number"].native))
    except Exception:  # no DSS at all: nothing is covered
        pass
    for cert in _revocation_subjects(sig):
        if cert.issuer.dump() in issuers or int(cert.serial_number) in serials:
            continue
        why = (Said("it names no CRL distribution point, so nothing could be fetched and "
                    "embedded when it was signed") if not cert.crl_distribution_points else
               Said("its CRL was not embedded when it was signed"))
        return Said("the file carries no revocation information for %(subject)s (issued by "
                    "%(issuer)s): %(why)s", subject=cert.subject.human_friendly,
                    issuer=cert.issuer.human_friendly, why=why)
    return None


def _cms_der(contents: bytes) -> bytes:
    """The CMS object inside a /Contents value (the DER, without the zero padding after it)."""
    from asn1crypto import cms

    return bytes(cms.ContentInfo.load(contents, strict=False).dump())
