"""The revocation check: --revocations read (the lab's revocations.yaml or the registry's
verify/index.json, with its detached signature beside it), the certificate id looked up, and what
vouches for the list (its signature, by the signatory, chaining to --trust)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from certgen.errors import CertgenError, RevocationsError
from certgen.registry import INDEX_FORMAT, parse_revocations
from certgen.support import jsonload
from certgen.support.crlfetch import CrlFetchError, crl_addresses, fetch_crl
from certgen.verify.crls import crl_finding
from certgen.verify.outcome import Check, Said, joined, verbatim
from certgen.verify.reading import MAX_REGISTRY_INDEX_BYTES, MAX_TRUST_BYTES, read_input
from certgen.verify.signature import identity_said

if TYPE_CHECKING:
    from asn1crypto import x509


@dataclass(frozen=True)
class RevokedCertificate:
    """One revoked certificate as verify sees it: the id, the date and the reason (English), and
    the reason in each language the list gives it in."""

    id: str
    date: str
    reason: str
    reasons: tuple[tuple[str, str], ...] = ()
    """(language, reason) for every language the list states one in (English included)."""

    def reason_in(self, lang: str) -> str:
        """The reason in `lang` where the list gives one, else in English."""
        return dict(self.reasons).get(lang) or self.reason


@dataclass(frozen=True)
class IssuedEntry:
    """One certificate the registry's index.json lists: what verify holds the PDF against."""

    id: str
    record_sha256: str
    status: str


@dataclass(frozen=True)
class RevocationList:
    """--revocations as read: the revocations, where from, the date the registry gave its
    statuses for (index.json's as_of) and the date it promises the next list by (next_update),
    every certificate it lists (index.json only: None for revocations.yaml), and the detached
    signature beside it, if any (index.json.p7s, written by `certgen registry --sign`)."""

    items: tuple[RevokedCertificate, ...]
    source: str
    data: bytes = field(default=b"", repr=False)
    as_of: str | None = None
    signature: bytes | None = field(default=None, repr=False)
    issued: tuple[IssuedEntry, ...] | None = None
    next_update: str | None = None

    def __iter__(self) -> Iterator[RevokedCertificate]:
        return iter(self.items)


SIGNATURE_SUFFIX = ".p7s"
"""The detached signature of a revocation list is the list's file name plus this."""

_STATUSES = ("valid", "expired", "revoked")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def parse_revocation_list(data: bytes, *, source: str) -> tuple[RevokedCertificate, ...]:
    """--revocations: the lab's revocations.yaml (certgen.registry's format), or the registry's
    verify/index.json (a saved copy of the published one); anything else is refused, naming the
    file and the entry."""
    return _parse_revocations(data, source=source).items


def _date_text(value: object, source: str, name: str) -> str | None:
    """index.json's `as_of` or `next_update`: a date YYYY-MM-DD, or absent."""
    if value is None:
        return None
    if isinstance(value, str) and len(value) == 10:
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise CertgenError("expected a date YYYY-MM-DD", file=source, field=name)


def _parse_revocations(data: bytes, *, source: str) -> RevocationList:
    """The list (without its signature): revocations, and for index.json every certificate it
    lists, its `as_of` and `next_update`. An entry that contradicts itself (status revoked
    without a revocation, a revocation with another status, an id twice, a record SHA-256 that is
    not one) is refused, naming it."""

    text = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"{"):
        try:
            # certgen's loader: nesting held to its depth limit (a 2,000-deep file overflowed
            # the standard parser's stack).
            index = jsonload.loads(data.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise CertgenError(f"expected the registry's index.json, which is JSON "
                               f"({str(exc)[:200]})", file=source) from None
        if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
            raise CertgenError(f"expected the registry's index.json (format {INDEX_FORMAT!r})",
                               file=source)
        rows = index.get("certificates")
        if not isinstance(rows, list):
            raise CertgenError("expected a list of certificates", file=source,
                               field="certificates")
        out = []
        issued = []
        seen: set[str] = set()
        for i, row in enumerate(rows):
            where = f"certificates[{i}]"
            ident = row.get("id") if isinstance(row, dict) else None
            if not isinstance(row, dict) or not isinstance(ident, str):
                raise CertgenError("expected an entry with an id", file=source, field=where)
            if ident in seen:
                raise CertgenError(f"{ident} is listed twice", file=source, field=where)
            seen.add(ident)
            sha, status = row.get("record_sha256"), row.get("status")
            if not isinstance(sha, str) or _SHA256.fullmatch(sha) is None:
                raise CertgenError("expected the record's SHA-256 (64 hex digits)", file=source,
                                   field=f"{where}.record_sha256")
            if status not in _STATUSES:
                raise CertgenError(f"expected a status ({', '.join(_STATUSES)})", file=source,
                                   field=f"{where}.status")
            issued.append(IssuedEntry(ident, sha, status))
            revoked = row.get("revoked")
            if (revoked is None) != (status != "revoked"):
                raise CertgenError(f"status {status} with revoked: "
                                   f"{'null' if revoked is None else 'a revocation'}: the entry "
                                   "contradicts itself", file=source, field=where)
            if revoked is None:
                continue
            reason = revoked.get("reason") if isinstance(revoked, dict) else None
            english = reason.get("en") if isinstance(reason, dict) else None
            day = revoked.get("date") if isinstance(revoked, dict) else None
            if not isinstance(revoked, dict) or not isinstance(day, str) \
                    or not isinstance(english, str):
                raise CertgenError("expected revoked: {date, reason: {en, …}} or null",
                                   file=source, field=f"{where}.revoked")
            assert isinstance(reason, dict)
            reasons = tuple((lang, text) for lang, text in sorted(reason.items())
                            if isinstance(text, str))
            out.append(RevokedCertificate(ident, day, english, reasons))
        return RevocationList(tuple(out), source, data,
                              _date_text(index.get("as_of"), source, "as_of"),
                              issued=tuple(issued),
                              next_update=_date_text(index.get("next_update"), source,
                                                     "next_update"))
    try:
        listed = parse_revocations(data, source=source)
    except RevocationsError as exc:
        raise CertgenError("; ".join(exc.errors)) from None
    items = []
    for r in listed.items:
        if isinstance(r.reason, str):
            items.append(RevokedCertificate(r.id, r.date.isoformat(), r.reason))
        else:
            reasons = tuple((lang, text) for lang, text in
                            (("en", r.reason.en), ("pt", r.reason.pt), ("ru", r.reason.ru))
                            if text)
            items.append(RevokedCertificate(r.id, r.date.isoformat(), r.reason.en, reasons))
    return RevocationList(tuple(items), source, data)


def load_revocations(path: str | os.PathLike[str]) -> RevocationList:
    """Read --revocations (a regular file within MAX_REGISTRY_INDEX_BYTES; a revocations.yaml
    within MAX_REVOCATIONS_BYTES), parse it, and take
    its detached signature `<file>.p7s` from beside it when there is one."""
    source = os.fspath(path)
    data = read_input(path, limit=MAX_REGISTRY_INDEX_BYTES, what="a revocation list")
    listed = _parse_revocations(data, source=source)
    signature = None
    beside = Path(source + SIGNATURE_SUFFIX)
    if beside.exists():
        signature = read_input(beside, limit=MAX_TRUST_BYTES, what="a CMS signature")
    return dataclasses.replace(listed, signature=signature)


def _list_signature_problem(revocations: RevocationList, roots: list[x509.Certificate],
                            signatory: str | None, pinned: str | None,
                            organization: str | None = None) -> Said | None:
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
        return Said("its signature cannot be read (%(error)s)", error=type(exc).__name__)
    if not (status.intact and status.valid):
        return Said("digest mismatch: the list was changed after it was signed")
    identity = identity_said(status.signing_cert, signatory, signatory, pinned, organization)
    if identity is not None:
        return identity
    if not status.trusted:
        return Said("untrusted signer: %(subject)s does not chain to the trusted CA",
                     subject=status.signing_cert.subject.human_friendly)
    return None


@dataclass(frozen=True)
class Holding:
    """What the revocation check holds the list against: this certificate's record SHA-256, when
    it was signed, the time verify checks at, the PDF's language, and whether an unsigned
    index.json was accepted on purpose (--allow-unsigned-list)."""

    record_sha256: str | None = None
    signed_at: dt.datetime | None = None
    at: dt.datetime | None = None
    lang: str = "en"
    allow_unsigned: bool = False
    organization: str | None = None
    """The issuing laboratory's name: the list's signer's organization (O)."""


def revocation_check(cert_id: str, revocations: Sequence[RevokedCertificate] | RevocationList,
                     roots: list[x509.Certificate] | None,
                     signatory: str | None, pinned: str | None,
                     holding: Holding | None = None) -> Check:
    """The revocation check: what vouches for the list (its signature), that the registry issued
    this very certificate (index.json lists its id with this record's SHA-256), that the list is
    not older than the signature and not past its next update, and the id's revocation."""
    holding = holding or Holding()
    listed = revocations if isinstance(revocations, RevocationList) else None
    where: Said | str = ""
    stale = None
    if listed is not None:
        name = Path(listed.source).name
        source: Said | str = name if listed.as_of is None else Said(
            "%(name)s, as of %(as_of)s", name=name, as_of=listed.as_of)
        if listed.signature is None:
            if listed.issued is not None and not holding.allow_unsigned:
                return Check("revocation", "fail", Said(
                    "the registry's list %(name)s is unsigned: its signature %(signature)s is "
                    "not beside it, so nothing shows it is the laboratory's (save both files "
                    "from the registry; --allow-unsigned-list accepts an unsigned list, and the "
                    "verdict says so)", name=name, signature=name + SIGNATURE_SUFFIX))
            vouch = (Said("unsigned: accepted with --allow-unsigned-list")
                     if listed.issued is not None else Said("unsigned"))
        elif roots is None:
            vouch = Said("its signature not checked without --trust")
        else:
            problem = _list_signature_problem(listed, roots, signatory, pinned,
                                              holding.organization)
            if problem is not None:
                return Check("revocation", "fail", Said("the revocation list %(name)s is not the "
                                                        "laboratory's: %(problem)s", name=name,
                                                        problem=problem))
            vouch = Said("signed by %(signatory)s", signatory=signatory)
        # The list and what vouches for it, after every verdict: " (index.json, as of …, …)".
        where = Said(" (%(list)s, %(vouch)s)", list=source, vouch=vouch)
        if listed.issued is not None:
            entry = next((e for e in listed.issued if e.id == cert_id), None)
            if entry is None:
                return Check("revocation", "fail", Said("not issued: the registry's list does not "
                                                        "list %(cert_id)s%(where)s",
                                                        cert_id=cert_id, where=where))
            if holding.record_sha256 is not None and entry.record_sha256 != holding.record_sha256:
                return Check("revocation", "fail", Said("not issued: the registry lists "
                                                        "%(cert_id)s with the record SHA-256 "
                                                        "%(listed)s, not this certificate's"
                                                        " %(ours)s%(where)s",
                                                        cert_id=cert_id,
                                                        listed=entry.record_sha256,
                                                        ours=holding.record_sha256,
                                                        where=where))
            signed_day = None if holding.signed_at is None else holding.signed_at.date()
            if listed.as_of is not None and signed_day is not None \
                    and dt.date.fromisoformat(listed.as_of) < signed_day:
                return Check("revocation", "fail", Said("the list is as of %(as_of)s, before the "
                                                        "certificate was signed (%(signed_day)s): "
                                                        "an older list cannot show it was not "
                                                        "revoked since%(where)s",
                                                        as_of=listed.as_of,
                                                        signed_day=signed_day.isoformat(),
                                                        where=where))
            today = (holding.at or dt.datetime.now(dt.UTC)).date()
            if listed.next_update is None:
                stale = Said("the list states no next update")
            elif dt.date.fromisoformat(listed.next_update) < today:
                stale = Said("its next update was due on %(next_update)s (checked on "
                             "%(today)s): save the registry's current list",
                             next_update=listed.next_update, today=today.isoformat())
    hits = [r for r in revocations if r.id == cert_id]
    if hits:
        return Check("revocation", "fail", Said("revoked: %(cert_id)s was revoked on %(date)s: "
                                                "%(reason)s%(where)s", cert_id=cert_id,
                                                date=hits[0].date,
                                                reason=hits[0].reason_in(holding.lang),
                                                where=where))
    if stale is not None:
        return Check("revocation", "skip", Said("status list out of date: %(stale)s; %(cert_id)s "
                                                "is not in it%(where)s", stale=stale,
                                                cert_id=cert_id, where=where),
                     short=Said("status list out of date"))
    return Check("revocation", "pass", Said("%(cert_id)s is not in the revocation list%(where)s",
                                            cert_id=cert_id, where=where))


def signer_status(trust: Check, cert: x509.Certificate, roots: list[x509.Certificate], *,
                  signed_at: dt.datetime | None, proven: dt.datetime | None,
                  shown: Said | None, crl: bytes | None, offline: bool) -> Check:
    """The trust check, completed with the signer's key status when it signed (issue 40, item
    4): the CA's CRL given with --crl; else what the file embeds, if issued after the signature
    (`shown`); else the CRL the certificate's own CRL address serves now (not with --offline). A
    key revoked by then fails; nothing that shows it either way leaves the check unrun (VERIFIED
    EXCEPT), never passed. A certificate naming no CRL address has no status to check."""
    if trust.verdict != "pass":
        return trust
    if crl is not None:
        finding = crl_finding(crl, cert, roots, signed_at=signed_at, proven=proven)
        if finding.verdict in ("stale", "unfit"):  # given for this: it cannot do the job
            return Check("trust", "fail", Said("%(detail)s; give the CA's current CRL",
                                               detail=finding.detail))
        return (Check("trust", "fail", finding.detail) if finding.verdict == "fail" else
                Check("trust", "pass", joined([trust.said, finding.detail])))
    if shown is not None:
        return trust
    unshown = Said("the signer's key status when it signed not shown")
    if not cert.crl_distribution_points:
        if cert.ocsp_urls:
            # Its status is published only by an OCSP responder, which verify does not query,
            # and an OCSP answer in the file is not held to the signature's time: not shown.
            return Check("trust", "skip", Said("%(detail)s; its certificate publishes its "
                                               "status only through an OCSP responder, which "
                                               "verify does not query: give the CA's current "
                                               "CRL (--crl)", detail=trust.said), short=unshown)
        return trust
    addresses = crl_addresses(cert.crl_distribution_points)
    if offline or not addresses:
        why = (Said("--offline: its CA's CRL was not fetched") if offline else
               Said("its certificate names no http(s) CRL address"))
        return Check("trust", "skip", Said("%(detail)s; %(why)s, and the file shows no CRL issued "
                                           "after the signature: give the CA's current CRL (--crl,"
                                           " the registry's ca.crl)", detail=trust.said, why=why),
                     short=unshown)
    reasons = []
    for url in addresses[:4]:
        try:
            data = fetch_crl(url)
        except CrlFetchError as exc:
            reasons.append(Said("%(url)s: %(error)s", url=url, error=_fetch_said(exc)))
            continue
        finding = crl_finding(data, cert, roots, signed_at=signed_at, proven=proven, source=url)
        if finding.verdict == "pass":
            return Check("trust", "pass", joined([trust.said, finding.detail]))
        if finding.verdict == "fail":
            return Check("trust", "fail", finding.detail)
        reasons.append(finding.detail)
    return Check("trust", "skip", Said("%(detail)s; no CRL issued after the signature shows the "
                                       "key unrevoked when it signed (%(reasons)s): give the CA's "
                                       "current CRL (--crl) once it has published one",
                                       detail=trust.said, reasons=joined(reasons)),
                 short=unshown)


def _fetch_said(error: CrlFetchError) -> Said:
    """Why a CRL address could not be read, as a message (certgen.support.crlfetch says it in
    English for build's notes; its kind and value let verify say it in the line's language)."""
    said = {
        "redirect": Said("redirected to %(address)s, not an http(s) address",
                         address=error.value),
        "scheme": Said("not an http:// or https:// address"),
        "http": Said("answered HTTP %(code)s", code=error.value),
        "timeout": Said("did not answer within %(seconds)s s", seconds=error.value),
        "unreachable": Said("cannot be reached (%(error)s)", error=error.value),
        "size": Said("answered more than %(limit)s bytes", limit=error.value),
    }.get(error.kind)
    return said if said is not None else verbatim(str(error))
