"""The content check: the file is, byte for byte, the certificate this certgen renders from the
attached record, signed by certgen with the signature it carries; when the record names another
software stack, what a reader sees (text and images) is compared instead."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from certgen.errors import CertgenError
from certgen.render.certificate import (
    certificate_print_html,
    render_certificate_pdf,
    software_line,
    verify_url,
)
from certgen.render.i18n import LANGUAGES
from certgen.render.sign import replay_signature
from certgen.support.software import creator_line, current_software
from certgen.verify.drawn import drawn_difference
from certgen.verify.outcome import Check, Said
from certgen.verify.reading import MAX_RECORD_RUNS
from certgen.verify.seen import Seen, seen_of, seen_said
from certgen.verify.signature import SignatureFindings

if TYPE_CHECKING:

    from certgen.record import Record

_RENDERS: dict[tuple[object, str, bytes, str], bytes] = {}
"""The content check's renders in this process (_rendered), oldest first."""
_EXPECTED: dict[bytes, Seen] = {}
"""What a reader sees of each of those renders (_expected_seen), oldest first."""
_RENDERS_KEPT = 8


def _rendered(html: str, record: Record, record_bytes: bytes, lang: str) -> bytes:
    """render_certificate_pdf(html, record, record_bytes, lang), remembered for the process.

    The PDF is a function of the HTML, the record (parsed from record_bytes), the language and
    the software stack (versions and data digests, certgen.support.software): verifying the same
    certificate again, or a copy with other bytes outside its record, renders nothing new
    (a WeasyPrint render costs seconds); another record, address, language or stack renders."""

    key = (current_software(), lang, record_bytes, html)
    if key not in _RENDERS:
        pdf = render_certificate_pdf(html, record, record_bytes, lang)
        while len(_RENDERS) >= _RENDERS_KEPT:
            del _RENDERS[next(iter(_RENDERS))]
        _RENDERS[key] = pdf
    return _RENDERS[key]


def _expected_seen(unsigned: bytes) -> Seen:
    """seen_of of this certgen's rendering (a function of its bytes), remembered as the renders
    are: the expected side of every comparison with the same record is read once."""
    import pypdf

    if unsigned not in _EXPECTED:
        seen = seen_of(pypdf.PdfReader(io.BytesIO(unsigned)))
        while len(_EXPECTED) >= _RENDERS_KEPT:
            del _EXPECTED[next(iter(_EXPECTED))]
        _EXPECTED[unsigned] = seen
    return _EXPECTED[unsigned]


def content_check(pdf: bytes, record: Record, record_bytes: bytes, record_sha: str, text: str,
                   lang: str, signature: SignatureFindings, vouched: bool) -> tuple[Check, Said | None]:
    """The content check (see the module doc) and, when the record names another stack, the
    warning that says so."""
    import pypdf

    if not vouched or signature.cms_der is None or signature.when is None:
        return Check("content", "skip", Said("not compared: no signature holds for this file, so "
                                             "nothing vouches for its record")), None
    if lang not in LANGUAGES:
        return Check("content", "fail", Said("the PDF's language %(lang)s is not one certgen "
                                             "renders", lang=repr(lang))), None
    if len(record.runs) > MAX_RECORD_RUNS:
        return Check("content", "fail", Said("the record has %(count)s runs, more than the "
                                             "%(max_record_runs)s verify renders",
                                             count=len(record.runs),
                                             max_record_runs=MAX_RECORD_RUNS)), None
    base = printed_base(text, record.certificate.id, record_sha)
    if base is None:
        return Check("content", "fail", Said("the verification address with the record's SHA-256 "
                                             "is not printed")), None
    try:
        html = certificate_print_html(record, lang, record_sha256=record_sha, verify_base=base,
                                      signed=record.issuer is not None)
        unsigned = _rendered(html, record, record_bytes, lang)
    except CertgenError as exc:
        return Check("content", "fail", Said("the record cannot be rendered: %(error)s",
                                             error=str(exc))), None
    except Exception as exc:  # a schema-valid record no certificate was rendered from
        return Check("content", "fail", Said("the record cannot be rendered (%(error)s)",
                                             error=type(exc).__name__)), None
    assert signature.name is not None and signature.reserved is not None
    try:
        replayed: bytes | None = replay_signature(
            unsigned, signature.cms_der, name=signature.name, when=signature.when,
            bytes_reserved=signature.reserved)
    except Exception:  # the signature does not fit certgen's own update: compared below
        replayed = None
    signed_revision = pdf if signature.sig_end is None else pdf[:signature.sig_end]
    if replayed == signed_revision:
        return Check("content", "pass", Said(
            "the file is, byte for byte, the certificate this certgen renders from the attached "
            "record, signed once by certgen (nothing added, restated or changed)")
            if not signature.timestamped else Said(
            "the file is, byte for byte, the certificate this certgen renders from the attached "
            "record, signed once by certgen (nothing added, restated or changed; validation "
            "data and timestamps follow)")), None
    theirs = software_line(record) if record.software is not None else None
    ours = creator_line(current_software())
    # What follows a timestamped signature (validation data, the timestamps' invisible widgets)
    # was held by the strict revision reader and the drawn comparison already: the pages are
    # compared as the signed revision has them, not with the timestamp widgets counted in.
    producer = _producer(signed_revision)
    from pyhanko.pdf_utils.metadata.model import VENDOR

    # The record decides which comparison is made, never the file: a /Producer other than
    # pyHanko's (another signing tool over certgen's render) is no reason to compare less.
    same_stack = theirs == ours
    try:
        seen = seen_of(pypdf.PdfReader(io.BytesIO(signed_revision)))
        expected = _expected_seen(unsigned)
        difference = seen_said(seen, expected, signature_widgets=1)
    except Exception as exc:
        difference = Said("its pages cannot be read (%(error)s)", error=type(exc).__name__)
    if same_stack:
        found = difference or Said(
            "the file's bytes are not what certgen writes for its record: an object was added, "
            "restated or changed (its text and images are the same)")
        return Check("content", "fail", found if producer == VENDOR else Said(
            "%(found)s (the file was not signed by certgen: its producer is %(producer)s)",
            found=found, producer=repr(producer))), None
    if theirs is None:
        stack = Said("the record names no software stack") if producer == VENDOR else Said(
            "the record names no software stack and the signature %(producer)s",
            producer=producer)
    else:
        stack = Said("the record names %(stack)s", stack=theirs) if producer == VENDOR else Said(
            "the record names %(stack)s and the signature %(producer)s", stack=theirs,
            producer=producer)
    warning = Said("%(stack)s; this is %(ours)s with %(vendor)s: the content check compared the "
                   "pages as drawn (and their text, images and actions), not bytes", stack=stack,
                   ours=ours, vendor=VENDOR)
    if difference:
        return Check("content", "fail", difference), warning
    # Text and images miss a vector overlay (issue 40): the pages as PDFium and poppler draw
    # them must be this certgen's rendering's, pixel for pixel.
    drawn = drawn_difference(signed_revision, unsigned)
    if drawn is not None:
        return Check("content", "fail", drawn), warning
    return Check("content", "pass", Said("every page, as PDFium and poppler draw it, equals this "
                                         "certgen's rendering of the record, with the same text "
                                         "and images and no action or script (another software "
                                         "stack made the file)")), warning


def _producer(pdf: bytes) -> str | None:
    import pypdf

    try:
        info = pypdf.PdfReader(io.BytesIO(pdf)).metadata
        return None if info is None else str(info.get("/Producer"))
    except Exception:
        return None


def printed_base(text: str, cert_id: str, sha: str) -> str | None:
    """The verification base printed before the address's own tail (`/<id>/?sha256=<sha>`, as
    certgen.render.certificate.verify_url writes it; whitespace ignored)."""

    flat = "".join(text.split())
    tail = verify_url("", cert_id, sha)
    end = flat.find(tail)
    if end < 0:
        return None
    start = max(flat.rfind("https://", 0, end), flat.rfind("http://", 0, end))
    return flat[start:end] if start >= 0 else None
