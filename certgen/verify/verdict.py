"""The hub of `certgen verify`: every check of one certificate PDF run in order (signature,
intact, trust, revocation, record, record-sha256, content, derivation; captures and recomputed
with a bundle) into one Verification (see the package doc)."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from certgen.errors import CertgenError, RecordError
from certgen.record import load_record
from certgen.render.i18n import LANGUAGES, check_language
from certgen.render.sign import require_sign_extra
from certgen.verify.content import content_check
from certgen.verify.derivation import bundle_checks, derivation_reasons
from certgen.verify.outcome import Check, Said, Verification, joined, verbatim
from certgen.verify.reading import (
    MAX_PAGES,
    MAX_PDF_BYTES,
    MAX_RECORD_BYTES,
    load_trust,
    quiet_libraries,
)
from certgen.verify.revocation import (
    Holding,
    RevocationList,
    RevokedCertificate,
    revocation_check,
    signer_status,
)
from certgen.verify.signature import signature_checks

if TYPE_CHECKING:
    from pypdf.generic import DictionaryObject


def verify_pdf(
    pdf: bytes,
    *,
    source: str = "certificate.pdf",
    trust: bytes | None = None,
    trust_source: str = "--trust",
    revocations: Sequence[RevokedCertificate] | RevocationList | None = None,
    bundle: str | None = None,
    debug: bool = False,
    at: dt.datetime | None = None,
    tsa_trust: bytes | None = None,
    allow_unsigned_list: bool = False,
    crl: bytes | None = None,
    offline: bool = False,
    lang: str | None = None,
) -> Verification:
    """Run every check on one certificate PDF (see the module doc); never raises for a
    failed check, only for unusable inputs (a bad CA file). `at`: the time the signer's
    certificate is checked at (default: now). `offline`: never fetch the CA's CRL from the
    address the signer's certificate names (the key's status when it signed is then shown only
    by --crl or the file). `lang`: the language the details print in (en, ru, pt; default: the
    PDF's /Lang, else English)."""

    require_sign_extra()
    if lang is not None:
        check_language(lang)
    with quiet_libraries(debug):
        return _verify(pdf, source=source, trust=trust, trust_source=trust_source,
                       revocations=revocations, bundle=bundle, at=at, tsa_trust=tsa_trust,
                       allow_unsigned_list=allow_unsigned_list, crl=crl, offline=offline,
                       say=lang)


def _verify(pdf: bytes, *, source: str, trust: bytes | None, trust_source: str,
            revocations: Sequence[RevokedCertificate] | RevocationList | None, bundle: str | None,
            at: dt.datetime | None, tsa_trust: bytes | None = None,
            allow_unsigned_list: bool = False, crl: bytes | None = None,
            offline: bool = False, say: str | None = None) -> Verification:
    import pypdf

    roots = None if trust is None else load_trust(trust, trust_source)
    tsa_roots = None if tsa_trust is None else load_trust(tsa_trust, "--tsa-trust")
    if len(pdf) > MAX_PDF_BYTES:
        return Verification(source, None, (Check("signature", "fail", Said(
            "%(count)s bytes, more than the limit of %(limit)s for a certificate PDF",
            count=len(pdf), limit=MAX_PDF_BYTES)),), lang=say or "en")
    # A damaged file is a failed check, not an error: the signature check says what changed.
    unreadable = None
    blobs: list[bytes] = []
    text, lang, pages = "", "en", 0
    try:
        reader = pypdf.PdfReader(io.BytesIO(pdf))
        catalog = cast("DictionaryObject", reader.trailer["/Root"])
        lang = str(catalog.get("/Lang", "en"))
        if say is None:  # the lines in the PDF's language (en, ru, pt; else English)
            said_in = lang.split("-")[0].lower()
            say = said_in if said_in in LANGUAGES else "en"
        blobs = list(dict(reader.attachments).get("record.json") or [])
        pages = len(reader.pages)
    except Exception as exc:
        unreadable = Said("the PDF cannot be read (%(error)s)", error=type(exc).__name__)

    record = None
    record_bytes = b""
    record_checks: list[Check] = []
    if unreadable is not None:
        record_checks.append(Check("record", "fail", unreadable))
    elif len(blobs) != 1:
        record_checks.append(Check("record", "fail", Said("no record.json attached") if not blobs
                                   else Said("more than one record.json attached")))
    elif len(blobs[0]) > MAX_RECORD_BYTES:
        record_checks.append(Check("record", "fail", Said("the attached record.json has %(count)s "
                                                          "bytes, more than the limit of "
                                                          "%(limit)s",
                                                          count=len(blobs[0]),
                                                          limit=MAX_RECORD_BYTES)))
    else:
        try:
            record = load_record(blobs[0], source="record.json")
            record_bytes = blobs[0]
            record_checks.append(Check("record", "pass", Said("record.json attached and "
                                                              "schema-valid")))
        except RecordError as exc:
            record_checks.append(Check("record", "fail", Said("record damaged: %(error)s",
                                                              error=str(exc))))

    issuer = None if record is None else record.issuer
    signatory = None if issuer is None else issuer.signatory
    signature = signature_checks(pdf, roots, None if signatory is None else signatory.name,
                                  None if signatory is None else signatory.certificate_sha256,
                                 at, tsa_roots, None if issuer is None else issuer.name)
    checks = list(signature.checks)
    cert_id = None if record is None else record.certificate.id
    if roots is not None and signature.cert is not None:
        # The signer's key status when it signed: part of the trust check (issue 40).
        for number, check in enumerate(checks):
            if check.name == "trust":
                checks[number] = signer_status(check, signature.cert, roots,
                                               signed_at=signature.when, proven=signature.proven,
                                               shown=signature.shown, crl=crl, offline=offline)

    if revocations is None:
        checks.append(Check("revocation", "skip", Said("not checked: give --revocations, the lab's"
                                                       " revocations.yaml or its registry's "
                                                       "verify/index.json")))
    elif cert_id is None:
        checks.append(Check("revocation", "fail", Said("no certificate id to look up (no record)")))
    else:
        checks.append(revocation_check(
            cert_id, revocations, roots, None if signatory is None else signatory.name,
            None if signatory is None else signatory.certificate_sha256,
            Holding(record_sha256=None if record is None
                    else hashlib.sha256(record_bytes).hexdigest(),
                    signed_at=signature.when, at=at, lang=say or "en",
                    allow_unsigned=allow_unsigned_list,
                    organization=None if issuer is None else issuer.name)))
    checks.extend(record_checks)

    if record is None:
        for name in ("record-sha256", "content", "derivation"):
            checks.append(Check(name, "fail", Said("no valid record.json to compare with")))
        if bundle is not None:
            checks.append(Check("captures", "fail", Said("no valid record.json to compare with")))
        return Verification(source, cert_id, tuple(checks), (), lang=say or "en")

    record_sha = hashlib.sha256(record_bytes).hexdigest()
    # The printed text is read only once a signature vouches for the file, and only of a
    # certificate's size: text extraction of a hostile page costs seconds (issue 21).
    vouched = signature.holds  # and, below, its text readable within a certificate's size
    if not vouched:
        checks.append(Check("record-sha256", "skip", Said("not compared: no signature holds for "
                                                          "this file")))
    elif pages > MAX_PAGES:
        checks.append(Check("record-sha256", "fail", Said("the PDF has %(pages)s pages; a "
                                                          "certificate has at most %(limit)s",
                                                          pages=pages, limit=MAX_PAGES)))
        vouched = False
    else:
        try:
            text = "\n".join(page.extract_text() or "" for page in reader.pages)
        except Exception as exc:
            vouched = False
            checks.append(Check("record-sha256", "fail", Said("the PDF's text cannot be read "
                                                              "(%(error)s)",
                                                              error=type(exc).__name__)))
        if vouched:
            flat = "".join(text.split())
            checks.append(Check("record-sha256", "pass", Said("%(sha256)s is the printed "
                                                              "SHA-256", sha256=record_sha))
                          if record_sha in flat else
                          Check("record-sha256", "fail", Said("the attached record.json's SHA-256 "
                                                              "%(sha256)s is not the one "
                                                              "printed", sha256=record_sha)))
    content, warning = content_check(pdf, record, record_bytes, record_sha, text, lang,
                                      signature, vouched)
    checks.append(content)
    try:
        problems = derivation_reasons(record)
    except CertgenError as exc:
        problems = [verbatim(str(exc))]  # the rules' own words
    except Exception as exc:  # a schema-valid but hostile record (e.g. a resolution "big")
        problems = [Said("the record's figures cannot be re-derived (%(error)s: %(message)s)",
                         error=type(exc).__name__, message=str(exc)[:200])]
    checks.append(Check("derivation", "fail", joined(problems)) if problems else
                  Check("derivation", "pass", Said("every score, tier mean and the grade %(grade)s"
                                                   " follow from the figures under %(rules)s",
                                                   grade=record.grade.value,
                                                   rules=record.rules.file or record.rules.sop)))
    if bundle is not None:
        checks.extend(bundle_checks(record, bundle))
    return Verification(source, cert_id, tuple(checks), () if warning is None else (warning,),
                        lang=say or "en")
