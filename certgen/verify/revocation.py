"""The revocation check: --revocations read (the lab's revocations.yaml or the registry's
verify/index.json, with its detached signature beside it), the certificate id looked up, and what
vouches for the list (its signature, by the signatory, chaining to --trust)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from certgen.errors import CertgenError, RevocationsError
from certgen.registry import INDEX_FORMAT, parse_revocations
from certgen.verify.outcome import Check
from certgen.verify.reading import MAX_REGISTRY_INDEX_BYTES, MAX_TRUST_BYTES, read_input
from certgen.verify.signature import identity_problem

if TYPE_CHECKING:
    from asn1crypto import x509


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
    identity = identity_problem(status.signing_cert, signatory, signatory, pinned)
    if identity is not None:
        return identity
    if not status.trusted:
        return (f"untrusted signer: {status.signing_cert.subject.human_friendly} does not chain "
                "to the trusted CA")
    return None


def revocation_check(cert_id: str, revocations: Sequence[RevokedCertificate] | RevocationList,
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
