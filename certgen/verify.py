"""Offline verification of a certificate PDF (`certgen verify`, docs/verify.md).

Every check gives one verdict (pass, fail, or skip when its input was not given):

- signature: the PDF carries exactly one signature, in the name of the record's signatory, by an
  end-entity certificate made out to that name that may sign (and, where lab.yaml pins one, is
  that certificate);
- intact: the signature's digest matches, its /ByteRange (read from the signed revision) ends at
  the end of the file, and the gap it leaves holds exactly its /Contents as a hex string: no
  incremental update, restated dictionary or second signature follows (pdfsig's "total document
  signed", checked from the bytes, not from a size equation);
- trust: the signer's certificate chains to the CA given with --trust and is valid both at the
  signing time the signature carries and now (without --trust the check fails);
- revocation: the certificate id is not revoked in the lab's revocations.yaml or the registry's
  verify/index.json (skipped when none is given: the verdict is then VERIFIED EXCEPT);
- record: the attached record.json is present, within its size limit and schema-valid;
- record-sha256: its SHA-256 is the one printed in the verification block;
- content: what a reader sees is what the record says. Rendering is deterministic, so the file
  must be, byte for byte, the certificate this certgen renders from the attached record, signed
  by certgen with the signature it carries (certgen.render.sign.replay_signature). When the
  record names another software stack, every page's text in reading order and every drawn image
  must equal this certgen's rendering instead, with no action, script or extra annotation; the
  verdict says which comparison was made. Not compared (skip) when the signature does not hold:
  nothing then vouches for the record, and rendering a hostile one costs time;
- derivation: every Fluidity Score (with its gap and stutter), tier mean and the grade follow
  from the record's FPS figures under the rules file the record names (certgen.rules.verdict), and
  that file's SHA-256 is the one the record cites;
- with a bundle folder (read as `certgen check` reads it: only the files its card.yaml names,
  inside the bundle): captures (every capture the certificate cites, archived first captures
  included, has the record's SHA-256) and recomputed (every run's and first capture's figures,
  recomputed from the captures, equal the record's).

Nothing here reads the network. pyHanko's own log lines and tracebacks never reach the
terminal: a failure is one reason in plain words (digest mismatch, signed range does not cover
the file, untrusted signer, expired, not yet valid, revoked, record damaged).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import difflib
import hashlib
import io
import json
import logging
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from certgen.errors import CertgenError, RecordError, RevocationsError
from certgen.inputs.bundle import load_bundle
from certgen.metrics.figures import ratios_from_fps, weights_of
from certgen.model import RunMetrics, WhyIncomplete
from certgen.pipeline import record_from_bundle
from certgen.record import load_record
from certgen.registry import INDEX_FORMAT, parse_revocations
from certgen.render.certificate import (
    render_certificate_html,
    render_certificate_pdf,
    software_line,
    verify_url,
)
from certgen.render.i18n import LANGUAGES
from certgen.render.sign import replay_signature, require_sign_extra
from certgen.rules.uncertainty import recorded_runs, repeat_differences, uncertainty_problems
from certgen.rules.verdict import decide, run_facts
from certgen.sop import load_rules
from certgen.support.software import creator_line, current_software
from certgen.support.untrusted import UnreadableInput, read_limited

if TYPE_CHECKING:
    import pypdf
    from asn1crypto import x509
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation.pdf_embedded import EmbeddedPdfSignature
    from pyhanko.sign.validation.status import PdfSignatureStatus
    from pypdf.generic import DictionaryObject

    from certgen.record import Record
    from certgen.rules.verdict import RunFacts
    from certgen.support.jsonload import JSONValue

Verdict = Literal["pass", "fail", "skip"]

MAX_PDF_BYTES = 32 * 1024 * 1024
"""The largest certificate PDF verify reads (a certificate is a few hundred kB)."""
MAX_TRUST_BYTES = 1024 * 1024
"""The largest --trust file (a CA certificate, or a few, in PEM or DER)."""
MAX_REGISTRY_INDEX_BYTES = 64 * 1024 * 1024
"""The largest --revocations file read: the registry's index.json (about 1 kB a certificate:
some 60,000 certificates). A revocations.yaml in it holds certgen.registry's own, smaller
MAX_REVOCATIONS_BYTES, checked where it is parsed."""
MAX_RECORD_BYTES = 8 * 1024 * 1024
"""The largest attached record.json (a certificate's record is tens of kB)."""
MAX_PAGES = 100
"""The most pages verify reads the text of (a certificate has a handful)."""
MAX_RECORD_RUNS = 200
"""The most runs a record may hold before verify renders it (a card has tens)."""

EXIT_VERIFIED = 0
"""Every check ran and held."""
EXIT_NOT_VERIFIED = 1
"""A check failed (or an input was refused)."""
EXIT_VERIFIED_EXCEPT = 3
"""No check failed, but one did not run (it is named: "VERIFIED EXCEPT: revocation not
checked"); 2 stays click's bad usage."""


@dataclass(frozen=True)
class Check:
    """One check's verdict and what it found (one line of `certgen verify`)."""

    name: str
    verdict: Verdict
    detail: str

    def line(self) -> str:
        """`PASS name: detail` (FAIL, SKIP)."""
        return f"{self.verdict.upper()} {self.name}: {self.detail}"


@dataclass(frozen=True)
class Verification:
    """Every check of one certificate, in order, and the warnings."""

    source: str
    certificate_id: str | None
    checks: tuple[Check, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No check failed (a skipped one leaves `complete` false)."""
        return all(c.verdict != "fail" for c in self.checks)

    @property
    def complete(self) -> bool:
        """Every check ran (none skipped)."""
        return all(c.verdict != "skip" for c in self.checks)

    @property
    def verdict(self) -> Literal["verified", "verified-except", "not-verified"]:
        """verified: every check ran and held; verified-except: none failed, some skipped."""
        if not self.ok:
            return "not-verified"
        return "verified" if self.complete else "verified-except"

    @property
    def exit_code(self) -> int:
        """0 verified, 3 verified except the skipped checks, 1 not verified."""
        return {"verified": EXIT_VERIFIED, "verified-except": EXIT_VERIFIED_EXCEPT,
                "not-verified": EXIT_NOT_VERIFIED}[self.verdict]

    def failed(self) -> list[str]:
        """The names of the failed checks, in order."""
        return [c.name for c in self.checks if c.verdict == "fail"]

    def skipped(self) -> list[str]:
        """The names of the checks that did not run, in order."""
        return [c.name for c in self.checks if c.verdict == "skip"]

    def summary(self) -> str:
        """The last line: VERIFIED, VERIFIED EXCEPT: … not checked, or NOT VERIFIED: …."""
        if not self.ok:
            failed = self.failed()
            return (f"NOT VERIFIED: {self.source}: {len(failed)} check(s) failed: "
                    f"{', '.join(failed)}")
        if not self.complete:
            return (f"VERIFIED EXCEPT: {', '.join(self.skipped())} not checked: {self.source} "
                    f"({self.certificate_id})")
        return f"VERIFIED: {self.source} ({self.certificate_id})"

    def as_json(self) -> dict[str, JSONValue]:
        """The `--json` form: file, certificate, ok, verdict, checks, warnings."""
        return {
            "file": self.source,
            "certificate": self.certificate_id,
            "ok": self.ok,
            "verdict": self.verdict,
            "checks": [{"check": c.name, "verdict": c.verdict, "detail": c.detail}
                       for c in self.checks],
            "warnings": list(self.warnings),
        }


# --------------------------------------------------------------------------------------------
# verify's own inputs
# --------------------------------------------------------------------------------------------


def read_input(path: str | os.PathLike[str], *, limit: int, what: str) -> bytes:
    """The bytes of one of verify's inputs: a regular file (a FIFO or device is refused before
    any read: it could block or never end) of at most `limit` bytes; refusals name the file."""

    source = os.fspath(path)
    try:
        return read_limited(source, limit=limit, what=what)
    except UnreadableInput as exc:
        raise CertgenError(str(exc), file=source) from None


@dataclass(frozen=True)
class RevokedCertificate:
    """One revoked certificate as verify sees it: the id, the date and the reason (English)."""

    id: str
    date: str
    reason: str


@dataclass(frozen=True)
class RevocationList:
    """--revocations as read: the revocations, where from, the date the registry gave its
    statuses for (index.json's as_of), and the detached signature beside it, if any
    (index.json.p7s, written by `certgen registry --sign`)."""

    items: tuple[RevokedCertificate, ...]
    source: str
    data: bytes = field(default=b"", repr=False)
    as_of: str | None = None
    signature: bytes | None = field(default=None, repr=False)

    def __iter__(self) -> Iterator[RevokedCertificate]:
        return iter(self.items)


SIGNATURE_SUFFIX = ".p7s"
"""The detached signature of a revocation list is the list's file name plus this."""


def parse_revocation_list(data: bytes, *, source: str) -> tuple[RevokedCertificate, ...]:
    """--revocations: the lab's revocations.yaml (certgen.registry's format), or the registry's
    verify/index.json (a saved copy of the published one); anything else is refused, naming the
    file and the entry."""
    return _parse_revocations(data, source=source)[0]


def _parse_revocations(data: bytes, *, source: str) -> tuple[tuple[RevokedCertificate, ...], str | None]:
    """parse_revocation_list, and index.json's `as_of` (None for revocations.yaml)."""

    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        try:
            index = json.loads(data.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise CertgenError(f"expected the registry's index.json, which is JSON ({exc})",
                               file=source) from None
        if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
            raise CertgenError(f"expected the registry's index.json (format {INDEX_FORMAT!r})",
                               file=source)
        rows = index.get("certificates")
        if not isinstance(rows, list):
            raise CertgenError("expected a list of certificates", file=source,
                               field="certificates")
        out = []
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                raise CertgenError("expected an entry with an id", file=source,
                                   field=f"certificates[{i}]")
            revoked = row.get("revoked")
            if revoked is None:
                continue
            reason = revoked.get("reason") if isinstance(revoked, dict) else None
            english = reason.get("en") if isinstance(reason, dict) else None
            if not isinstance(revoked, dict) or not isinstance(revoked.get("date"), str) \
                    or not isinstance(english, str):
                raise CertgenError("expected revoked: {date, reason: {en, …}} or null",
                                   file=source, field=f"certificates[{i}].revoked")
            out.append(RevokedCertificate(row["id"], revoked["date"], english))
        as_of = index.get("as_of")
        return tuple(out), as_of if isinstance(as_of, str) else None
    try:
        listed = parse_revocations(data, source=source)
    except RevocationsError as exc:
        raise CertgenError("; ".join(exc.errors)) from None
    return tuple(RevokedCertificate(r.id, r.date.isoformat(),
                            r.reason if isinstance(r.reason, str) else r.reason.en)
                 for r in listed.items), None


def load_revocations(path: str | os.PathLike[str]) -> RevocationList:
    """Read --revocations (a regular file within MAX_REGISTRY_INDEX_BYTES; a revocations.yaml
    within MAX_REVOCATIONS_BYTES), parse it, and take
    its detached signature `<file>.p7s` from beside it when there is one."""
    source = os.fspath(path)
    data = read_input(path, limit=MAX_REGISTRY_INDEX_BYTES, what="a revocation list")
    items, as_of = _parse_revocations(data, source=source)
    signature = None
    beside = Path(source + SIGNATURE_SUFFIX)
    if beside.exists():
        signature = read_input(beside, limit=MAX_TRUST_BYTES, what="a CMS signature")
    return RevocationList(items, source, data, as_of, signature)


def _list_signature_problem(revocations: RevocationList, roots: list[x509.Certificate],
                            signatory: str | None, pinned: str | None) -> str | None:
    """Why the list's detached signature does not show it is the laboratory's (None: it does):
    intact, by the signatory's own certificate, chaining to --trust."""
    from asn1crypto import cms
    from pyhanko.sign.validation.generic_cms import async_validate_detached_cms
    from pyhanko_certvalidator import ValidationContext

    assert revocations.signature is not None
    try:
        content = cms.ContentInfo.load(revocations.signature)
        signed = content["content"]
        status = asyncio.run(async_validate_detached_cms(
            revocations.data, signed, signer_validation_context=ValidationContext(
                trust_roots=roots, allow_fetching=False, revocation_mode="soft-fail")))
    except Exception as exc:
        return f"its signature cannot be read ({type(exc).__name__})"
    if not (status.intact and status.valid):
        return "digest mismatch: the list was changed after it was signed"
    identity = _identity_problem(status.signing_cert, signatory, signatory, pinned)
    if identity is not None:
        return identity
    if not status.trusted:
        return (f"untrusted signer: {status.signing_cert.subject.human_friendly} does not chain "
                "to the trusted CA")
    return None


@contextmanager
def quiet_libraries(debug: bool = False) -> Iterator[None]:
    """pyHanko, its validator and pypdf log failed checks with tracebacks; the verdict already
    says what failed, so their loggers are off for the duration unless `debug` (verify --debug,
    which sends them to stderr)."""
    # A level on the parent logger covers its children (a child's `disabled` would not).
    loggers = [logging.getLogger(name) for name in ("pyhanko", "pyhanko_certvalidator", "pypdf")]
    before = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG if debug else logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, before):
            lg.setLevel(level)


# --------------------------------------------------------------------------------------------
# The signature
# --------------------------------------------------------------------------------------------


@dataclass
class _Signature:
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


def _load_trust(data: bytes, source: str) -> list[x509.Certificate]:
    from pyhanko.keys import load_certs_from_pemder_data

    try:
        roots = list(load_certs_from_pemder_data(data))
        for root in roots:
            _ = root.subject  # parse now, so a bad file is refused here
    except Exception:  # asn1crypto raises ValueError, TypeError or its own on bad DER
        raise CertgenError("expected a CA certificate (PEM or DER)", file=source) from None
    if not roots:
        raise CertgenError("expected a CA certificate (PEM or DER)", file=source)
    return roots


_HEX_GAP = re.compile(rb"<[0-9A-Fa-f]*>")


def _coverage_problem(pdf: bytes, sig: EmbeddedPdfSignature, reader: PdfFileReader, *,
                      last: bool) -> str | None:
    """Why a signature does not cover what it must (None: it does). Read from the bytes: the
    range must be [0 a b c] as the signed revision states it, and its gap hold exactly the
    /Contents hex string. The `last` signature (the lab's, or the newest document timestamp)
    must end at the end of the file and its revision be the file's last; an earlier one (the
    lab's, followed by certgen's own timestamp revisions) must end where its revision ends."""
    try:
        byte_range = [int(x) for x in sig.sig_object["/ByteRange"]]
    except Exception:
        return "the signature has no readable /ByteRange"
    if len(byte_range) != 4 or byte_range[0] != 0 or min(byte_range) < 0:
        return f"the signed range {byte_range} does not start at the file's first byte"
    _, a, b, c = byte_range
    end = b + c
    if not a < b <= len(pdf) or end > len(pdf):
        return "the signed range runs past the end of the file"
    if last and end < len(pdf):
        return (f"the signed range does not cover the file: {len(pdf) - end} bytes were added "
                "after signing (an incremental update)")
    if not last and not pdf[:end].rstrip().endswith(b"%%EOF"):
        return "the signed range does not end where its revision ends"
    gap = pdf[a:b]
    if _HEX_GAP.fullmatch(gap) is None:
        return ("the gap the signed range leaves is not one hex string (ISO 32000 requires "
                "/Contents there as hex): bytes were hidden in it")
    stated = re.compile(rb"/ByteRange\s*\[\s*0\s+%d\s+%d\s+%d\s*\]" % (a, b, c))
    # pyHanko writes /ByteRange just after /Contents; another writer may put it before.
    if stated.search(pdf, b, b + 4096) is None and stated.search(pdf, max(0, a - 4096), a) is None:
        return "the signed revision does not state this /ByteRange beside its /Contents"
    try:
        contents = bytes(sig.sig_object["/Contents"])
    except Exception:
        return "the signature has no readable /Contents"
    if bytes.fromhex(gap[1:-1].decode("ascii")) != contents:
        return "the signature's /Contents is not the hex string in the signed range's gap"
    if last:
        try:
            final = reader.xrefs.total_revisions - 1
            if sig.signed_revision != final:
                return (f"{final - sig.signed_revision} revision(s) follow the signed one: the "
                        "file was updated after signing")
        except Exception:
            return "the file's revisions cannot be read"
    return None


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


def _identity_problem(cert: x509.Certificate, name: str | None, signatory: str | None,
                      pinned: str | None) -> str | None:
    """Why the signer is not the record's signatory (None: it is): the signature's /Name and the
    certificate's common name must be the signatory's; the certificate must be an end-entity
    one whose key usage allows signing, and lab.yaml's pinned one where it pins one."""
    subject = cert.subject.native.get("common_name")
    if isinstance(subject, list):
        subject = subject[0] if subject else None
    if signatory is not None and name != signatory:
        return f"signed in the name of {name!r}; the record's signatory is {signatory!r}"
    if signatory is not None and subject != signatory:
        return (f"the signing certificate is made out to {subject!r} "
                f"({cert.subject.human_friendly}); the record's signatory is {signatory!r}")
    if cert.ca:
        return "the signing certificate is a CA certificate (CA:TRUE), not the signatory's own"
    usage = cert.key_usage_value
    if usage is not None and not ({"digital_signature", "non_repudiation"} & set(usage.native)):
        return "the signing certificate's key usage does not allow signing"
    purposes = cert.extended_key_usage_value
    if purposes is not None and not (set(purposes.native) & DOCUMENT_SIGNING_PURPOSES):
        return (f"the signing certificate is for {', '.join(purposes.native)}, not for signing "
                "documents (its extended key usage)")
    fingerprint = hashlib.sha256(cert.dump()).hexdigest()
    if pinned is not None and fingerprint != pinned:
        return (f"the signing certificate has SHA-256 {fingerprint}; the record's signatory "
                f"signs with {pinned}")
    return None


def _path_problem(cert: x509.Certificate, others: list[x509.Certificate],
                  roots: list[x509.Certificate], moment: dt.datetime,
                  what: str) -> str | None:
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
        return (f"expired: the signer's certificate ({subject}) was valid until "
                f"{cert.not_valid_after.isoformat(sep=' ')}, before {what}")
    except NotYetValidError:
        return (f"not yet valid: the signer's certificate ({subject}) is valid from "
                f"{cert.not_valid_before.isoformat(sep=' ')}, after {what}")
    except RevokedError:
        return f"revoked: the signer's certificate ({subject}) was revoked by its CA"
    except PathBuildingError:
        return f"untrusted signer: {subject} does not chain to the trusted CA"
    except PathValidationError as exc:
        return f"untrusted signer: {subject}: {exc}"
    except Exception as exc:  # a malformed certificate: say so, never a traceback
        return f"untrusted signer: {subject}: the certificate cannot be validated ({type(exc).__name__})"
    return None


def _signature_checks(pdf: bytes, roots: list[x509.Certificate] | None, signatory: str | None,
                      pinned: str | None, at: dt.datetime | None = None,
                      tsa_roots: list[x509.Certificate] | None = None) -> _Signature:
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext

    out = _Signature()
    try:
        reader = PdfFileReader(io.BytesIO(pdf), strict=False)
        embedded = list(reader.embedded_regular_signatures)
        stamps = sorted(reader.embedded_timestamp_signatures, key=lambda t: t.signed_revision)
    except Exception:  # a damaged file: pyHanko cannot even find the signatures
        out.checks.append(Check("signature", "fail", "the PDF's structure cannot be read (a "
                                "damaged or truncated file)"))
        return out
    if not embedded:
        out.checks.append(Check("signature", "fail", "the PDF is not signed"))
        return out
    if len(embedded) > 1:
        out.checks.append(Check("signature", "fail", f"{len(embedded)} signatures: certgen signs "
                                "a certificate once, so one was added after the lab signed"))
        out.checks.append(Check("intact", "fail", "a second signature follows the lab's: the "
                                "file is not the one the lab signed"))
        out.checks.append(Check("trust", "skip", "not checked: the file has more than one "
                                "signature"))
        return out
    sig = embedded[0]
    try:
        out.name = None if sig.sig_object.get("/Name") is None else str(sig.sig_object["/Name"])
        cert = sig.signer_cert
        others = list(sig.other_embedded_certs)
        # PAdES puts the signing time in the signed /M, not in a CMS attribute.
        out.when = sig.self_reported_timestamp
    except Exception:
        out.checks.append(Check("signature", "fail", "the signature's CMS data cannot be read "
                                "(the signature is damaged)"))
        out.checks.append(Check("intact", "fail", "the signature cannot be read"))
        return out
    identity = _identity_problem(cert, out.name, signatory, pinned)
    out.checks.append(Check("signature", "fail", identity) if identity else
                      Check("signature", "pass", f"signed in the name of {out.name}, by its own "
                            f"certificate (SHA-256 {hashlib.sha256(cert.dump()).hexdigest()})"))

    coverage = _coverage_problem(pdf, sig, reader, last=not stamps)
    # Timestamps chain to their own roots (--tsa-trust), else to the signer's (--trust): a
    # public TSA's root must never make its other certificates count as the lab's signatory.
    stamp_roots = tsa_roots if tsa_roots is not None else roots
    if coverage is None and stamps:
        coverage = _timestamps_problem(pdf, sig, stamps, reader, stamp_roots)
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
                        or _lta_additions_problem(pdf, _range_end(sig)))
    except Exception:
        digest_ok = False
    if coverage is not None:
        out.checks.append(Check("intact", "fail", coverage))
    elif not digest_ok:
        out.checks.append(Check("intact", "fail", "digest mismatch: the signed bytes were "
                                "changed after signing"))
    elif out.when is None:
        out.checks.append(Check("intact", "fail", "the signature carries no signing time"))
    else:
        out.holds = True
        gap = [int(x) for x in sig.sig_object["/ByteRange"]]
        out.reserved = gap[2] - gap[1] - 2
        out.cms_der = _cms_der(bytes(sig.sig_object["/Contents"]))
        out.sig_end = _range_end(sig)
        out.timestamped = bool(stamps)
        out.checks.append(Check("intact", "pass", "no byte changed after signing; the signed "
                                "range is the whole file" if not stamps else
                                "no byte changed after signing; after the signed revision only "
                                f"validation data and {len(stamps)} document timestamp(s) follow "
                                "(pyHanko's difference analysis: nothing a reader sees changed)"))

    if roots is None:
        out.checks.append(Check("trust", "fail", "not checked: give --trust CA.pem, the "
                                "laboratory's CA certificate"))
        return out
    moment = at or dt.datetime.now(dt.UTC)
    shown = "today" if at is None else f"the validation time {moment.isoformat(sep=' ')}"
    if stamps:
        problem, proven = _long_term_problem(sig, roots, moment, stamp_roots or roots)
        out.checks.append(Check("trust", "fail", problem) if problem else
                          Check("trust", "pass", f"{cert.subject.human_friendly} chains to the "
                                f"trusted CA; the timestamps prove the signature existed at "
                                f"{proven} and the embedded validation data shows the "
                                f"certificate valid then (checked at {shown}, offline)"))
        return out
    problems = []
    if out.when is not None:
        problems.append(_path_problem(cert, others, roots, out.when,
                                      f"its signing time {out.when.isoformat(sep=' ')}"))
    problems.append(_path_problem(cert, others, roots, moment, shown))
    problem = next((p for p in problems if p is not None), None)
    out.checks.append(Check("trust", "fail", problem) if problem else
                      Check("trust", "pass", f"{cert.subject.human_friendly} chains to the "
                            "trusted CA and is valid at the signing time "
                            f"{'' if out.when is None else out.when.isoformat(sep=' ')} and "
                            f"{'now' if at is None else 'at ' + moment.isoformat(sep=' ')}"))
    return out


def _timestamps_problem(pdf: bytes, sig: EmbeddedPdfSignature,
                        stamps: list[EmbeddedPdfSignature], reader: PdfFileReader,
                        roots: list[x509.Certificate] | None) -> str | None:
    """Why the document timestamps after the lab's signature are not certgen's own (None: they
    are): each follows the signature, is intact, and the newest covers the whole file."""
    from pyhanko.sign.validation import validate_pdf_timestamp
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    for number, stamp in enumerate(stamps, start=1):
        if stamp.signed_revision <= sig.signed_revision:
            return "a document timestamp precedes the signature"
        try:
            at_end = _range_end(stamp) >= len(pdf)
        except Exception:
            return f"document timestamp {number} has no readable /ByteRange"
        problem = _coverage_problem(pdf, stamp, reader, last=at_end)
        if problem is not None:
            return f"document timestamp {number}: {problem}"
        try:
            status = validate_pdf_timestamp(stamp, ValidationContext(
                trust_roots=roots or [], allow_fetching=False, revocation_mode="soft-fail"))
            intact = bool(status.intact and status.valid)
            trusted = bool(status.trusted)
            restated = not at_end and status.coverage == SignatureCoverageLevel.ENTIRE_FILE
        except Exception:
            intact, trusted, restated = False, False, False
        if not intact:
            return (f"digest mismatch: document timestamp {number} does not match the bytes it "
                    "covers")
        if roots is not None and not trusted:
            return (f"document timestamp {number} is by a timestamp authority that does not "
                    "chain to the trusted roots (--tsa-trust, else --trust)")
        if restated:
            return (f"document timestamp {number} claims to cover the whole file, but bytes "
                    "follow it: its dictionary was restated")
    return None


def _later_revisions_problem(status: PdfSignatureStatus) -> str | None:
    """What pyHanko's difference analysis found between the signed revision and the file's end,
    when it is more than validation data and document timestamps (None: nothing more)."""
    from pyhanko.sign.diff_analysis import ModificationLevel
    from pyhanko.sign.validation.status import SignatureCoverageLevel

    if status.coverage != SignatureCoverageLevel.ENTIRE_REVISION:
        return ("the signature claims to cover the whole file, but revisions follow it: its "
                "dictionary was restated")
    level = status.modification_level
    if level is None or level > ModificationLevel.LTA_UPDATES or not status.docmdp_ok:
        return ("the file was changed after signing: a revision that follows the signature "
                "does more than add validation data or a timestamp")
    return None


def _lta_additions_problem(pdf: bytes, sig_end: int) -> str | None:
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
            return ("the document information (title, author…) was changed after signing; "
                    "readers show it")
        if _xmp(signed) != _xmp(final):
            return "the XMP metadata was changed after signing; readers show it"
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
                return ("a form field was added after signing that is not a document "
                        "timestamp's invisible one")
        new_ids = {ref.idnum for ref in added}
        for number, (old_page, new_page) in enumerate(zip(signed.pages, final.pages), start=1):
            had = {a.idnum for a in (old_page.get("/Annots") or [])}
            for annot in new_page.get("/Annots") or []:
                if annot.idnum not in had and annot.idnum not in new_ids:
                    return f"an annotation was added to page {number} after signing"
        difference = _seen_difference(_seen(final), _seen(signed), signature_widgets=len(added))
        if difference is not None:
            return f"after signing: {difference}"
    except Exception as exc:
        return f"the revisions after signing cannot be read ({type(exc).__name__})"
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
                       tsa_roots: list[x509.Certificate]) -> tuple[str | None, str]:
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
        return f"the long-term validation could not run ({type(exc).__name__})", ""
    status = result.api_status
    proven = result.best_signature_time.isoformat(sep=" ")
    if status is not None and status.bottom_line:
        return None, proven
    subject = sig.signer_cert.subject.human_friendly
    indication = str(result.ades_subindic)
    if "REVOKED" in indication:
        return f"revoked: the signer's certificate ({subject}) was revoked by its CA", proven
    if "NO_POE" in indication or "OUT_OF_BOUNDS" in indication or "EXPIRED" in indication:
        return (f"expired: no timestamp in the file proves the signature existed while the "
                f"signer's certificate ({subject}) was valid, checked at "
                f"{moment.isoformat(sep=' ')} with the validation data the file carries "
                f"({indication})"), proven
    if status is not None and not status.trusted:
        return f"untrusted signer: {subject} does not chain to the trusted CA", proven
    return f"untrusted signer: {subject}: {result.failure_msg or indication}", proven


def _cms_der(contents: bytes) -> bytes:
    """The CMS object inside a /Contents value (the DER, without the zero padding after it)."""
    from asn1crypto import cms

    return bytes(cms.ContentInfo.load(contents, strict=False).dump())


# --------------------------------------------------------------------------------------------
# What a reader sees
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Seen:
    """What a reader sees of a PDF: each page's text in reading order and the SHA-256 of each
    image it draws, and any action or script the file carries."""

    pages: tuple[tuple[str, tuple[str, ...]], ...]
    actions: tuple[str, ...]
    annotations: tuple[int, ...]


_ACTION_KEYS = ("/OpenAction", "/AA")


def _seen(reader: pypdf.PdfReader) -> _Seen:
    pages = []
    actions: list[str] = []
    annotations = []
    root = cast("DictionaryObject", reader.trailer["/Root"])
    for key in _ACTION_KEYS:
        if key in root:
            actions.append(f"the document's {key}")
    names = root.get("/Names")
    if names is not None and "/JavaScript" in names.get_object():
        actions.append("document-level JavaScript")
    for number, page in enumerate(reader.pages, start=1):
        text = page.extract_text() or ""
        images = tuple(hashlib.sha256(image.data).hexdigest() for image in page.images)
        pages.append((" ".join(text.split()), images))
        if "/AA" in page:
            actions.append(f"page {number}'s /AA")
        annots = page.get("/Annots")
        count = 0
        for annot in (annots.get_object() if annots is not None else []):
            annot = annot.get_object()
            count += 1
            action = annot.get("/A")
            kind = None if action is None else action.get_object().get("/S")
            if kind is not None and kind != "/URI":
                actions.append(f"a {kind} action on page {number}")
            if "/AA" in annot:
                actions.append(f"an annotation's /AA on page {number}")
        annotations.append(count)
    return _Seen(tuple(pages), tuple(actions), tuple(annotations))


def _seen_difference(signed: _Seen, expected: _Seen, *, signature_widgets: int) -> str | None:
    """What a reader would see differently from the record's own rendering (None: nothing)."""

    if signed.actions:
        return f"the file carries {signed.actions[0]}, which certgen never writes"
    if len(signed.pages) != len(expected.pages):
        return (f"the PDF has {len(signed.pages)} pages; the record's certificate has "
                f"{len(expected.pages)}")
    for number, ((text, images), (want_text, want_images)) in enumerate(
            zip(signed.pages, expected.pages), start=1):
        if text != want_text:
            a, b = text.split(), want_text.split()
            for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False
                                                              ).get_opcodes():
                if op != "equal":
                    shown = " ".join(a[i1:i2][:6]) or "nothing"
                    wanted = " ".join(b[j1:j2][:6]) or "nothing"
                    return (f"page {number} prints {shown!r} where the record's certificate "
                            f"prints {wanted!r}")
        if images != want_images:
            return (f"page {number} draws {len(images)} image(s) that are not the "
                    f"{len(want_images)} of the record's certificate")
    extra = sum(signed.annotations) - sum(expected.annotations) - signature_widgets
    if extra:
        return f"the file has {extra} annotation(s) more than the record's certificate"
    return None


_RENDERS: dict[tuple[object, str, bytes, str], bytes] = {}
"""The content check's renders in this process (_rendered), oldest first."""
_EXPECTED: dict[bytes, _Seen] = {}
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


def _expected_seen(unsigned: bytes) -> _Seen:
    """_seen of this certgen's rendering (a function of its bytes), remembered as the renders
    are: the expected side of every comparison with the same record is read once."""
    import pypdf

    if unsigned not in _EXPECTED:
        seen = _seen(pypdf.PdfReader(io.BytesIO(unsigned)))
        while len(_EXPECTED) >= _RENDERS_KEPT:
            del _EXPECTED[next(iter(_EXPECTED))]
        _EXPECTED[unsigned] = seen
    return _EXPECTED[unsigned]


def _content_check(pdf: bytes, record: Record, record_bytes: bytes, record_sha: str, text: str,
                   lang: str, signature: _Signature, vouched: bool) -> tuple[Check, str | None]:
    """The content check (see the module doc) and, when the record names another stack, the
    warning that says so."""
    import pypdf

    if not vouched or signature.cms_der is None or signature.when is None:
        return Check("content", "skip", "not compared: no signature holds for this file, so "
                     "nothing vouches for its record"), None
    if lang not in LANGUAGES:
        return Check("content", "fail", f"the PDF's language {lang!r} is not one certgen "
                                        "renders"), None
    if len(record.runs) > MAX_RECORD_RUNS:
        return Check("content", "fail", f"the record has {len(record.runs)} runs, more than the "
                     f"{MAX_RECORD_RUNS} verify renders"), None
    base = _printed_base(text, record.certificate.id, record_sha)
    if base is None:
        return Check("content", "fail", "the verification address with the record's SHA-256 "
                                        "is not printed"), None
    try:
        html = render_certificate_html(record, lang, record_sha256=record_sha, verify_base=base,
                                       signed=record.issuer is not None)
        unsigned = _rendered(html, record, record_bytes, lang)
    except CertgenError as exc:
        return Check("content", "fail", f"the record cannot be rendered: {exc}"), None
    except Exception as exc:  # a schema-valid record no certificate was rendered from
        return Check("content", "fail", f"the record cannot be rendered "
                     f"({type(exc).__name__})"), None
    assert signature.name is not None and signature.reserved is not None
    try:
        replayed: bytes | None = replay_signature(
            unsigned, signature.cms_der, name=signature.name, when=signature.when,
            bytes_reserved=signature.reserved)
    except Exception:  # the signature does not fit certgen's own update: compared below
        replayed = None
    signed_revision = pdf if signature.sig_end is None else pdf[:signature.sig_end]
    if replayed == signed_revision:
        return Check("content", "pass", "the file is, byte for byte, the certificate this "
                     "certgen renders from the attached record, signed once by certgen (nothing "
                     "added, restated or changed" + (")" if not signature.timestamped else
                     "; validation data and timestamps follow)")), None
    theirs = software_line(record) if record.software is not None else None
    ours = creator_line(current_software())
    producer = _producer(pdf)
    from pyhanko.pdf_utils.metadata.model import VENDOR

    same_stack = theirs == ours and producer == VENDOR
    try:
        seen = _seen(pypdf.PdfReader(io.BytesIO(pdf)))
        expected = _expected_seen(unsigned)
        difference = _seen_difference(seen, expected, signature_widgets=1)
    except Exception as exc:
        difference = f"its pages cannot be read ({type(exc).__name__})"
    if same_stack:
        return Check("content", "fail", difference or "the file's bytes are not what certgen "
                     "writes for its record: an object was added, restated or changed (its text "
                     "and images are the same)"), None
    stack = f"the record names {theirs or 'no software stack'}" + (
        f" and the signature {producer}" if producer != VENDOR else "")
    warning = (f"{stack}; this is {ours} with {VENDOR}: the content check compared text and "
               "images, not bytes")
    if difference:
        return Check("content", "fail", difference), warning
    return Check("content", "pass", "every page's text in reading order and every image equal "
                 "this certgen's rendering of the record, with no action or script (compared as "
                 "text and images: another software stack made the file)"), warning


def _producer(pdf: bytes) -> str | None:
    import pypdf

    try:
        info = pypdf.PdfReader(io.BytesIO(pdf)).metadata
        return None if info is None else str(info.get("/Producer"))
    except Exception:
        return None


# ----------------------------------------------------------------------------------------
# The record and its derivation
# --------------------------------------------------------------------------------------------


def _printed_base(text: str, cert_id: str, sha: str) -> str | None:
    """The verification base printed before the address's own tail (`/<id>/?sha256=<sha>`, as
    certgen.render.certificate.verify_url writes it; whitespace ignored)."""

    flat = "".join(text.split())
    tail = verify_url("", cert_id, sha)
    end = flat.find(tail)
    if end < 0:
        return None
    start = max(flat.rfind("https://", 0, end), flat.rfind("http://", 0, end))
    return flat[start:end] if start >= 0 else None


def record_facts(record: Record) -> list[RunFacts]:
    """What the rules need of each run, read back from a record (certgen.rules.verdict.run_facts, the
    derivation the pipeline uses on the bundle)."""

    facts = []
    for run in record.runs:
        first = run.first_capture
        # The first capture's own incompleteness is in the record as its re-run reason
        # (incomplete outranks stutter there, as in rules.rerun_reason).
        own = None if first is None else first.rerun_reason
        facts.append(run_facts(
            index=run.index, title=run.title, resolution=run.resolution,
            capture=run.capture if run.status == "recorded" else None, metrics=run.metrics,
            justification=None if run.soft_limit is None else run.soft_limit.justification,
            vrm_reexamination=None if run.soft_limit is None
            else run.soft_limit.vrm_reexamination,
            first_file=None if first is None else first.file,
            first_declared=None if first is None else first.sha256_declared,
            first_actual=None if first is None else first.sha256_actual,
            first_metrics=None if first is None else first.metrics,
            first_incomplete=isinstance(own, WhyIncomplete),
            first_incomplete_reason=own.reason if isinstance(own, WhyIncomplete) else None,
        ))
    return facts


def _derivation(record: Record) -> list[str]:
    """What does not follow from the record's figures under its rules file (empty: all does)."""

    problems: list[str] = []
    rules = load_rules(record.rules.sop)
    if record.rules.sha256 is not None and rules.sha256 != record.rules.sha256:
        problems.append(f"the rules file {rules.file} here has SHA-256 {rules.sha256}; the record "
                        f"was graded by {record.rules.sha256}")
    weights = weights_of(rules)
    for run in record.runs:
        m = run.metrics
        label = f"run {run.index + 1} ({run.title} {run.resolution})"
        if m is not None:
            ratios = ratios_from_fps(m.avg_fps, m.low_1pct_fps, m.low_0_1pct_fps, weights)
            for key in ("consistency_gap", "stutter", "fluidity_score"):
                if getattr(ratios, key) != getattr(m, key):
                    problems.append(f"{label}: {key} {getattr(m, key)} does not follow from its "
                                    f"FPS figures ({getattr(ratios, key)})")
    facts = record_facts(record)
    cap = record.grade.cap
    verdict = decide(facts, cap, rules)
    by_res = {t.resolution: t for t in verdict.tiers}
    for tier in record.tiers:
        derived = by_res.get(tier.resolution)
        if derived is None or derived.mean_fluidity != tier.mean_fluidity:
            problems.append(f"tier {tier.resolution}: mean {tier.mean_fluidity} does not follow "
                            f"from its runs' scores "
                            f"({None if derived is None else derived.mean_fluidity})")
    if [t.resolution for t in verdict.tiers] != [t.resolution for t in record.tiers]:
        problems.append("the record's tiers are not its runs' resolutions")
    if verdict.grade.value != record.grade.value:
        problems.append(f"grade {record.grade.value} does not follow from the tiers "
                        f"(the rules give {verdict.grade.value})")
    problems += uncertainty_problems(record.uncertainty, record.tiers, recorded_runs(
        [(r.index, r.resolution, r.status, r.metrics) for r in record.runs]), rules)
    return problems


def _revocation_check(cert_id: str, revocations: Sequence[RevokedCertificate] | RevocationList,
                      roots: list[x509.Certificate] | None,
                      signatory: str | None, pinned: str | None) -> Check:
    """The revocation check: the id's entry, and what vouches for the list (its signature)."""
    listed = revocations if isinstance(revocations, RevocationList) else None
    where = ""
    if listed is not None:
        name = Path(listed.source).name
        where = f" ({name}" + ("" if listed.as_of is None else f", as of {listed.as_of}")
        if listed.signature is None:
            where += ", unsigned)"
        elif roots is None:
            where += ", its signature not checked without --trust)"
        else:
            problem = _list_signature_problem(listed, roots, signatory, pinned)
            if problem is not None:
                return Check("revocation", "fail", f"the revocation list {name} is not the "
                             f"laboratory's: {problem}")
            where += f", signed by {signatory})"
    hits = [r for r in revocations if r.id == cert_id]
    if hits:
        return Check("revocation", "fail", f"revoked: {cert_id} was revoked on {hits[0].date}: "
                     f"{hits[0].reason}{where}")
    return Check("revocation", "pass", f"{cert_id} is not in the revocation list{where}")


def _bundle_checks(record: Record, bundle: str) -> list[Check]:
    """captures and recomputed: the bundle read as `certgen check` reads it (only the files its
    card.yaml names, inside the bundle, regular files within their limits), its record made
    again, and every capture the certificate cites compared with it, first captures included."""

    try:
        again = record_from_bundle(load_bundle(Path(bundle)), refuse=False)
    except CertgenError as exc:
        reason = f"the bundle cannot be read: {exc}"
        return [Check("captures", "fail", reason), Check("recomputed", "fail", reason)]

    def label(index: int) -> str:
        run = record.runs[index] if index < len(record.runs) else None
        return f"run {index + 1}" + ("" if run is None else f" ({run.title} {run.resolution})")

    wrong: list[str] = []
    # The recorded captures, then the archived first captures, each against the bundle's.
    for cited, found, what in ((record.audit.captures, again.audit.captures, ""),
                               (record.audit.first_captures, again.audit.first_captures,
                                "the archived first capture ")):
        fresh = {c.run: c for c in found}
        for item in cited:
            other = fresh.get(item.run)
            if other is None:
                wrong.append(f"{label(item.run)}: the bundle has no {what or 'capture '}for it")
            elif other.file != item.file:
                wrong.append(f"{label(item.run)}: the record cites {what}{item.file}; the "
                             f"bundle's card.yaml names {other.file}")
            elif other.sha256 != item.sha256:
                wrong.append(f"{label(item.run)}: {what}{item.file} has SHA-256 "
                             f"{other.sha256}, the record's is {item.sha256}")
    extra = (len(again.audit.captures) - len(record.audit.captures),
             len(again.audit.first_captures) - len(record.audit.first_captures))
    if extra[0] > 0 or extra[1] > 0:
        wrong.append("the bundle has captures the record does not cite")
    count = len(record.audit.captures) + len(record.audit.first_captures)
    checks = [Check("captures", "fail", "; ".join(wrong)) if wrong else
              Check("captures", "pass", f"all {count} captures the certificate cites "
                    f"({len(record.audit.first_captures)} archived first captures among them) "
                    "have the record's SHA-256")]

    def differs(a: RunMetrics | None, b: RunMetrics | None) -> str:
        keys = [k for k in RunMetrics.model_fields if getattr(a, k, None) != getattr(b, k, None)]
        return ", ".join(keys) or "metrics"

    differ = []
    for run, fresh_run in zip(record.runs, again.runs):
        if run.metrics != fresh_run.metrics:
            differ.append(f"{label(run.index)}: {differs(run.metrics, fresh_run.metrics)} "
                          "recomputed differently")
        mine, theirs = run.first_capture, fresh_run.first_capture
        if (mine is None) != (theirs is None):
            differ.append(f"{label(run.index)}: the first capture is "
                          f"{'missing from the bundle' if theirs is None else 'not in the record'}")
        elif mine is not None and theirs is not None and mine.metrics != theirs.metrics:
            differ.append(f"{label(run.index)}: the archived first capture {mine.file}: "
                          f"{differs(mine.metrics, theirs.metrics)} recomputed differently")
    if len(record.runs) != len(again.runs):
        differ.append(f"the bundle has {len(again.runs)} runs, the record {len(record.runs)}")
    differ += repeat_differences(record.uncertainty, again.uncertainty)
    checks.append(Check("recomputed", "fail", "; ".join(differ)) if differ else
                  Check("recomputed", "pass", "every run's and first capture's figures, "
                        "recomputed from the captures, equal the record's"))
    return checks


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
) -> Verification:
    """Run every check on one certificate PDF (see the module doc); never raises for a
    failed check, only for unusable inputs (a bad CA file). `at`: the time the signer's
    certificate is checked at (default: now)."""

    require_sign_extra()
    with quiet_libraries(debug):
        return _verify(pdf, source=source, trust=trust, trust_source=trust_source,
                       revocations=revocations, bundle=bundle, at=at, tsa_trust=tsa_trust)


def _verify(pdf: bytes, *, source: str, trust: bytes | None, trust_source: str,
            revocations: Sequence[RevokedCertificate] | RevocationList | None, bundle: str | None,
            at: dt.datetime | None, tsa_trust: bytes | None = None) -> Verification:
    import pypdf

    roots = None if trust is None else _load_trust(trust, trust_source)
    tsa_roots = None if tsa_trust is None else _load_trust(tsa_trust, "--tsa-trust")
    if len(pdf) > MAX_PDF_BYTES:
        return Verification(source, None, (Check("signature", "fail", f"{len(pdf)} bytes, more "
                                                 f"than the limit of {MAX_PDF_BYTES} for a "
                                                 "certificate PDF"),))
    # A damaged file is a failed check, not an error: the signature check says what changed.
    unreadable = None
    blobs: list[bytes] = []
    text, lang, pages = "", "en", 0
    try:
        reader = pypdf.PdfReader(io.BytesIO(pdf))
        catalog = cast("DictionaryObject", reader.trailer["/Root"])
        lang = str(catalog.get("/Lang", "en"))
        blobs = list(dict(reader.attachments).get("record.json") or [])
        pages = len(reader.pages)
    except Exception as exc:
        unreadable = f"the PDF cannot be read ({type(exc).__name__})"

    record = None
    record_bytes = b""
    record_checks: list[Check] = []
    if unreadable is not None:
        record_checks.append(Check("record", "fail", unreadable))
    elif len(blobs) != 1:
        record_checks.append(Check("record", "fail", "no record.json attached" if not blobs
                                   else "more than one record.json attached"))
    elif len(blobs[0]) > MAX_RECORD_BYTES:
        record_checks.append(Check("record", "fail", f"the attached record.json has "
                                   f"{len(blobs[0])} bytes, more than the limit of "
                                   f"{MAX_RECORD_BYTES}"))
    else:
        try:
            record = load_record(blobs[0], source="record.json")
            record_bytes = blobs[0]
            record_checks.append(Check("record", "pass", "record.json attached and schema-valid"))
        except RecordError as exc:
            record_checks.append(Check("record", "fail", f"record damaged: {exc}"))

    issuer = None if record is None else record.issuer
    signatory = None if issuer is None else issuer.signatory
    signature = _signature_checks(pdf, roots, None if signatory is None else signatory.name,
                                  None if signatory is None else signatory.certificate_sha256,
                                  at, tsa_roots)
    checks = list(signature.checks)
    cert_id = None if record is None else record.certificate.id

    if revocations is None:
        checks.append(Check("revocation", "skip", "not checked: give --revocations, the lab's "
                            "revocations.yaml or its registry's verify/index.json"))
    elif cert_id is None:
        checks.append(Check("revocation", "fail", "no certificate id to look up (no record)"))
    else:
        checks.append(_revocation_check(cert_id, revocations, roots,
                                        None if signatory is None else signatory.name,
                                        None if signatory is None
                                        else signatory.certificate_sha256))
    checks.extend(record_checks)

    if record is None:
        for name in ("record-sha256", "content", "derivation"):
            checks.append(Check(name, "fail", "no valid record.json to compare with"))
        if bundle is not None:
            checks.append(Check("captures", "fail", "no valid record.json to compare with"))
        return Verification(source, cert_id, tuple(checks), ())

    record_sha = hashlib.sha256(record_bytes).hexdigest()
    # The printed text is read only once a signature vouches for the file, and only of a
    # certificate's size: text extraction of a hostile page costs seconds (issue 21).
    vouched = signature.holds  # and, below, its text readable within a certificate's size
    if not vouched:
        checks.append(Check("record-sha256", "skip", "not compared: no signature holds for "
                            "this file"))
    elif pages > MAX_PAGES:
        checks.append(Check("record-sha256", "fail", f"the PDF has {pages} pages; a certificate "
                            f"has at most {MAX_PAGES}"))
        vouched = False
    else:
        try:
            text = "\n".join(page.extract_text() or "" for page in reader.pages)
        except Exception as exc:
            vouched = False
            checks.append(Check("record-sha256", "fail", f"the PDF's text cannot be read "
                                f"({type(exc).__name__})"))
        if vouched:
            flat = "".join(text.split())
            checks.append(Check("record-sha256", "pass", f"{record_sha} is the printed SHA-256")
                          if record_sha in flat else
                          Check("record-sha256", "fail", f"the attached record.json's SHA-256 "
                                f"{record_sha} is not the one printed"))
    content, warning = _content_check(pdf, record, record_bytes, record_sha, text, lang,
                                      signature, vouched)
    checks.append(content)
    try:
        problems = _derivation(record)
    except CertgenError as exc:
        problems = [str(exc)]
    except Exception as exc:  # a schema-valid but hostile record (e.g. a resolution "big")
        problems = [f"the record's figures cannot be re-derived ({type(exc).__name__}: "
                    f"{str(exc)[:200]})"]
    checks.append(Check("derivation", "fail", "; ".join(problems)) if problems else
                  Check("derivation", "pass", f"every score, tier mean and the grade "
                        f"{record.grade.value} follow from the figures under "
                        f"{record.rules.file or record.rules.sop}"))
    if bundle is not None:
        checks.extend(_bundle_checks(record, bundle))
    return Verification(source, cert_id, tuple(checks), () if warning is None else (warning,))
