"""The verification registry: every certificate a laboratory issued and its status on a date.

The registry is rebuilt from the certificate records, never edited by hand (docs/registry.md):

    certificate folders (record.json + manifest.json)  ─┐
    revocations.yaml (id, date, reason per withdrawal)  ─┼─▶ RegistryEntry[] ─▶ verify/index.json
    the registry's date (--as-of, else the build date)  ─┘          │
                                                                    └─▶ one page per certificate

Everything here is pure except `load_revocations` (reads one file): the builder
(certgen.builders.registry) gathers the folders and writes; render/registry.py draws the pages.

Status on the registry's date `as_of`: *revoked* from the revocation's date on, else *expired*
after `issuer.valid_until`, else *valid*. A certificate issued after `as_of` cannot be in a
registry of that date and is refused, as is a draft or a record without an issuer.

The signature: a record cannot carry its own signature (the PDF is signed after the record is
written), so the registry reads it from the certificate folder's build manifest: a `signature`
object with at least `signer` (see `signature_of`). No such object: the certificate is unsigned.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from certgen.errors import RegistryError, RevocationsError
from certgen.inputs.lab import LabText, Text
from certgen.record import Record
from certgen.support.untrusted import UnreadableInput, read_limited
from certgen.support.yamlload import YamlDocumentError, load_yaml_document

if TYPE_CHECKING:
    from certgen.model import LabText as RecordText
    from certgen.record import Record
    from certgen.support.jsonload import JSONValue

REVOCATIONS_FILE = "revocations.yaml"
"""The file a laboratory lists its withdrawn certificates in (examples/revocations.yaml)."""

INDEX_FORMAT = "certgen-registry/1"
"""The `format` of verify/index.json; a change of its keys gets a new number."""

StatusName = Literal["valid", "expired", "revoked"]

SOFTWARE_FOLDER = "software"
"""Where, under the registry root, the certgen wheel and its SHA256SUMS are published."""


@dataclass(frozen=True)
class PublishedWheel:
    """A checked certgen wheel: its file name, bytes and SHA-256 (hex)."""

    name: str
    data: bytes
    sha256: str

    def sums(self) -> bytes:
        """SHA256SUMS: `<hex>  <name>`, the form `sha256sum -c` reads."""
        return f"{self.sha256}  {self.name}\n".encode()


# --------------------------------------------------------------------------- revocations.yaml


class Revocation(BaseModel):
    """One withdrawn certificate: which, from when, and why (shown on its registry page)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: Text = Field(description="The certificate id, as in its record.")
    date: dt.date = Field(description="The day the certificate was withdrawn, YYYY-MM-DD.")
    reason: LabText = Field(description="Why (a string in English, or per language {en, ru, pt}).")

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, value: object) -> dt.date:
        # YAML gives an unquoted 2026-05-01 as a date and a quoted one as text: both are the
        # same day. A timestamp, a number or another shape is refused, never guessed at.
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if isinstance(value, str) and len(value) == 10:
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        raise PydanticCustomError("revocation_date", "expected a date YYYY-MM-DD")


_REVOCATIONS = TypeAdapter(list[Revocation])


@dataclass(frozen=True)
class Revocations:
    """A loaded revocations.yaml: the revocations in file order, the line each starts on."""

    items: tuple[Revocation, ...]
    lines: tuple[int, ...]
    source: str

    def find(self, certificate_id: str) -> tuple[Revocation, int] | None:
        """The revocation of a certificate and its line, or None."""
        for item, line in zip(self.items, self.lines):
            if item.id == certificate_id:
                return item, line
        return None


NO_REVOCATIONS = Revocations(items=(), lines=(), source=REVOCATIONS_FILE)
"""A laboratory that has withdrawn nothing needs no file."""


def _node_lines(node: yaml.Node, path: tuple[int | str, ...],
                out: dict[tuple[int | str, ...], int]) -> None:
    """The 1-based line of every item and key, by its path (index or key name)."""
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _node_lines(item, (*path, index), out)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.value)
            _node_lines(value, (*path, name), out)
            out[(*path, name)] = key.start_mark.line + 1


def _where(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _show(value: object) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "…"


_UNION_TAGS = ("str", "constrained-str", "LocalizedText")
"""How pydantic names the branches of `reason: Text | LocalizedText` in an error's path."""


def _value_at(data: object, loc: tuple[int | str, ...]) -> object:
    """What the parsed YAML holds at a validation error's path (None where it holds nothing)."""
    for part in loc:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and -len(data) <= part < len(data):
            data = data[part]
        else:
            return None
    return data


def _messages(exc: ValidationError, source: str, lines: dict[tuple[int | str, ...], int],
              parsed: object) -> list[tuple[int, str]]:
    """(line, `file:line: [i].field: what`) per problem, a union (reason) said once."""
    found: list[tuple[int, str]] = []
    for err in exc.errors(include_url=False):
        raw = tuple(err["loc"])
        loc = tuple(p for p in raw if p not in _UNION_TAGS)
        union = len(loc) != len(raw)
        if union:
            # reason: a text or {en, ru, pt}: report the branch that matches what was written.
            branch = next(p for p in raw if p in _UNION_TAGS)
            written = _value_at(parsed, raw[:raw.index(branch)])
            if (branch == "LocalizedText") != isinstance(written, dict):
                continue
        kind = err["type"]
        if kind == "missing":
            text = "required key missing"
        elif kind == "extra_forbidden":
            text = "unknown key (expected id, date, reason)" if len(loc) == 2 else "unknown key"
        elif kind == "revocation_date":
            text = f"expected a date YYYY-MM-DD, got {_show(err['input'])}"
        elif kind == "string_type" and union and len(loc) == 2:
            text = f"expected a text or en/ru/pt texts, got {_show(err['input'])}"
        elif kind == "string_type":
            text = f"expected a text, got {_show(err['input'])}"
        elif kind == "string_too_short":
            text = "expected a text, got an empty one"
        elif kind in ("model_type", "dict_type"):
            text = "expected a mapping with id, date and reason"
        else:
            text = f"{err['msg']}, got {_show(err['input'])}"
        line = next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), 1)
        message = f"{source}:{line}: {_where(loc)}: {text}"
        if (line, message) not in found:
            found.append((line, message))
    return found


REVOCATIONS_WHAT = "a revocations list"
"""How a refusal of its size names revocations.yaml."""
MAX_REVOCATIONS_BYTES = 16 << 20
"""Largest revocations.yaml (16 MiB: about 100,000 revocations with their reasons), for
`registry --revocations` and `verify --revocations` alike (docs/limits.md). YAML is parsed in
pure Python: a larger list would take minutes, not a bigger registry."""


def parse_revocations(data: bytes, *, source: str = REVOCATIONS_FILE) -> Revocations:
    """revocations.yaml bytes -> Revocations (strict; every problem at once, each naming its
    line; the same id twice refused). An empty file lists no revocation. More than
    MAX_REVOCATIONS_BYTES is refused here, so every reader of the list holds the same limit."""

    if len(data) > MAX_REVOCATIONS_BYTES:
        raise RevocationsError([f"{source}: {len(data)} bytes, more than the limit of "
                                f"{MAX_REVOCATIONS_BYTES} for {REVOCATIONS_WHAT}"])
    try:
        parsed, duplicates = load_yaml_document(data, source)
    except YamlDocumentError as exc:
        raise RevocationsError([str(exc)]) from None
    if parsed is None:
        return Revocations(items=(), lines=(), source=source)
    lines: dict[tuple[int | str, ...], int] = {}
    # Lines of each node, for the messages (the text decoded and checked by load_yaml_document).
    node = yaml.compose(data.decode("utf-8-sig"), Loader=yaml.SafeLoader)
    if node is not None:
        _node_lines(node, (), lines)
    errors = [(d.line, f"{source}:{d.line}: duplicate key {d.key!r} (first at line "
                       f"{d.first_line})") for d in duplicates]
    items: list[Revocation] = []
    if not isinstance(parsed, list):
        errors.append((lines.get((), 1), f"{source}:{lines.get((), 1)}: expected a list of "
                       "revocations, each with id, date and reason"))
    elif parsed and all(not isinstance(item, dict | list) for item in parsed):
        # A list of bare ids is a plausible mistake, never "nothing revoked": one line for
        # the file, not one per id.
        errors.append((lines.get((), 1), f"{source}:{lines.get((), 1)}: expected a list of "
                       "revocations, each with id, date and reason, got a list of bare ids "
                       "(a revocation needs its date and reason)"))
    else:
        try:
            items = _REVOCATIONS.validate_python(parsed)
        except ValidationError as exc:
            errors.extend(_messages(exc, source, lines, parsed))
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            at = lines.get((index, "id"), lines.get((index,), 1))
            if item.id in first:
                errors.append((at, f"{source}:{at}: [{index}].id: {item.id!r} is revoked "
                               f"twice (first at line {first[item.id]})"))
            else:
                first[item.id] = at
    if errors:
        raise RevocationsError([message for _, message in sorted(errors, key=lambda e: e[0])])
    return Revocations(items=tuple(items),
                       lines=tuple(lines.get((i,), 1) for i in range(len(items))), source=source)


def load_revocations(path: str | os.PathLike[str]) -> Revocations:
    """Read and validate revocations.yaml (the messages name the file as given): a regular
    file within MAX_REVOCATIONS_BYTES (a FIFO or device is refused before any read)."""
    source = str(path)
    try:
        data = read_limited(path, limit=MAX_REVOCATIONS_BYTES, what=REVOCATIONS_WHAT)
    except UnreadableInput as exc:
        raise RevocationsError([f"{source}: {exc}"]) from None
    return parse_revocations(data, source=source)


# --------------------------------------------------------------------------- the entries


@dataclass(frozen=True)
class Signature:
    """What the build manifest says of the PDFs' digital signature."""

    signer: str
    certificate_sha256: str | None = None
    """SHA-256 of the signing certificate (what the registry page prints to compare)."""
    timestamped: bool = False
    """Signed with a timestamp authority (PAdES B-LTA): verify then needs --tsa-trust."""


def signature_of(manifest: dict[str, JSONValue]) -> Signature | None:
    """The signature a certificate folder's manifest records, or None (unsigned).

    The seam with signing (`certgen build --sign`): the build writes `signature` into the
    folder's manifest.json, an object with at least `signer` (the name the PDFs are signed in:
    the lab's signatory), plus the signing certificate's subject and SHA-256. The registry shows only what is recorded there; without it, "unsigned".
    """
    value = manifest.get("signature")
    signer = value.get("signer") if isinstance(value, dict) else None
    if isinstance(signer, str) and signer and isinstance(value, dict):
        sha = value.get("certificate_sha256")
        return Signature(signer=signer,
                         certificate_sha256=sha if isinstance(sha, str) else None,
                         timestamped=isinstance(value.get("timestamp_authority"), str))
    return None


@dataclass(frozen=True)
class RegistryEntry:
    """One certificate in the registry: what its page and index.json show."""

    id: str
    record_sha256: str
    grade: str
    vendor: str
    model: str
    issued: dt.date
    valid_until: dt.date
    issuer: str
    signatory: str
    signatory_role: RecordText
    signature: Signature | None
    specimen: bool
    languages: tuple[str, ...]
    """The languages the certificate's PDFs exist in (the page links each)."""
    status: StatusName
    revocation: Revocation | None
    """The revocation in force on the registry's date (None unless status is revoked)."""
    serial: str = ""
    """The card's serial number, as the certificate prints it (to compare by eye)."""
    driver: str = ""
    """The driver version, as the certificate prints it."""
    tiers: tuple[tuple[str, float | None], ...] = ()
    """(resolution, mean Fluidity Score) per tier, as the certificate prints them."""


def certificate_status(issued: dt.date, valid_until: dt.date, revoked_on: dt.date | None,
                       as_of: dt.date) -> StatusName:
    """revoked from the revocation's day on; else expired after the last valid day; else valid.

    `issued` is for the caller's check only: a registry never dates before an issue.
    """
    if revoked_on is not None and revoked_on <= as_of:
        return "revoked"
    if as_of > valid_until:
        return "expired"
    return "valid"


@dataclass(frozen=True)
class IssuedCertificate:
    """What the builder read of one certificate folder: the record, its SHA-256 and where the
    record came from (for messages), the languages its PDFs exist in, the build manifest."""

    record: Record  # imported for type checking only: the record module is heavy
    record_sha256: str
    source: str
    languages: tuple[str, ...]
    manifest: dict[str, JSONValue]


def registry_entries(certificates: list[IssuedCertificate], revocations: Revocations,
                     as_of: dt.date) -> list[RegistryEntry]:
    """The registry's entries on `as_of`, sorted by certificate id (refusals: RegistryError,
    a revocation that names no certificate or predates its issue: RevocationsError)."""

    entries: list[RegistryEntry] = []
    seen: dict[str, str] = {}
    for cert in certificates:
        record: Record = cert.record
        cid = record.certificate.id
        if cid in seen:
            raise RegistryError(f"certificate {cid!r} is also in {seen[cid]}", file=cert.source)
        seen[cid] = cert.source
        if record.status.draft or not record.status.issuable or record.issuer is None:
            raise RegistryError(
                f"certificate {cid!r} is a draft or was refused, not an issued certificate; "
                "the registry lists issued certificates only", file=cert.source)
        issued = dt.date.fromisoformat(record.certificate.issued)
        valid_until = dt.date.fromisoformat(record.issuer.valid_until)
        if issued > as_of:
            raise RegistryError(
                f"certificate {cid!r} is issued on {issued.isoformat()}, after the registry's "
                f"date {as_of.isoformat()} (--as-of)", file=cert.source)
        found = revocations.find(cid)
        revocation = None
        if found is not None:
            revocation, line = found
            if revocation.date < issued:
                raise RevocationsError([
                    f"{revocations.source}:{line}: {cid}: revoked on "
                    f"{revocation.date.isoformat()}, before its issue date {issued.isoformat()}"])
        status = certificate_status(issued, valid_until,
                                    None if revocation is None else revocation.date, as_of)
        entries.append(RegistryEntry(
            id=cid,
            record_sha256=cert.record_sha256,
            grade=record.grade.value,
            vendor=record.card.vendor,
            model=record.card.model,
            issued=issued,
            valid_until=valid_until,
            issuer=record.issuer.name,
            signatory=record.issuer.signatory.name,
            signatory_role=record.issuer.signatory.role,
            signature=signature_of(cert.manifest),
            specimen=record.status.specimen or record.issuer.specimen,
            languages=cert.languages,
            status=status,
            revocation=revocation if status == "revoked" else None,
            serial=record.card.serial,
            driver=record.card.driver,
            tiers=tuple((t.resolution, t.mean_fluidity) for t in record.tiers),
        ))
    unknown = [(line, item.id) for item, line in zip(revocations.items, revocations.lines)
               if item.id not in seen]
    if unknown:
        raise RevocationsError([
            f"{revocations.source}:{line}: {cid}: no such certificate among the records"
            for line, cid in unknown])
    return sorted(entries, key=lambda e: e.id)


def page_dir(certificate_id: str) -> str:
    """The folder of a certificate's page, relative to the registry root: `<id>/`."""
    return f"{certificate_id}/"


def pdf_path(certificate_id: str, lang: str) -> str:
    """A certificate's PDF in the registry, relative to the registry root."""
    return f"{certificate_id}/certificate.{lang}.pdf"


def _text_json(value: LabText | RecordText) -> dict[str, str | None]:
    if isinstance(value, str):
        return {"en": value, "ru": None, "pt": None}
    return {"en": value.en, "ru": value.ru, "pt": value.pt}


NEXT_UPDATE_DAYS = 7
"""How long a registry's statuses hold by default (index.json's `next_update`, as a CRL's
nextUpdate): `certgen verify` says "status list out of date" past it (`registry --next-update`)."""


def registry_index(entries: list[RegistryEntry], as_of: dt.date,
                   next_update: dt.date | None = None, *,
                   software: PublishedWheel | None = None,
                   signer_sha256: str | None = None) -> bytes:
    """verify/index.json: every entry, sorted by id, keys sorted, UTF-8, newline-terminated;
    `next_update` (default: NEXT_UPDATE_DAYS after `as_of`), and where given the published
    verifier wheel's name and SHA-256 and the SHA-256 of the certificate the lab signs with (so
    that the signed index vouches for both).

    Paths are relative to the registry root (the folder served at the verification base).
    """
    rows = []
    for e in sorted(entries, key=lambda e: e.id):
        rows.append({
            "id": e.id,
            "record_sha256": e.record_sha256,
            "grade": e.grade,
            "card": {"vendor": e.vendor, "model": e.model},
            "issued": e.issued.isoformat(),
            "valid_until": e.valid_until.isoformat(),
            "issuer": e.issuer,
            "signatory": {"name": e.signatory, "role": _text_json(e.signatory_role)},
            "signed": e.signature is not None,
            "signer": None if e.signature is None else e.signature.signer,
            "specimen": e.specimen,
            "status": e.status,
            "revoked": None if e.revocation is None else {
                "date": e.revocation.date.isoformat(),
                "reason": _text_json(e.revocation.reason),
            },
            "page": page_dir(e.id),
            "pdf": {lang: pdf_path(e.id, lang) for lang in e.languages},
        })
    due = next_update or as_of + dt.timedelta(days=NEXT_UPDATE_DAYS)
    if due < as_of:
        raise RegistryError(f"the next update {due.isoformat()} is before the registry's date "
                            f"{as_of.isoformat()}", field="--next-update")
    document: dict[str, object] = {"format": INDEX_FORMAT, "as_of": as_of.isoformat(),
                                   "next_update": due.isoformat(), "certificates": rows}
    if software is not None:
        document["software"] = {"wheel": f"{SOFTWARE_FOLDER}/{software.name}",
                                "sha256": software.sha256}
    if signer_sha256 is not None:
        document["signer_certificate_sha256"] = signer_sha256
    return (json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode()


def parse_as_of(value: str, option: str = "--as-of") -> dt.date:
    """--as-of DATE (or another date option): YYYY-MM-DD, a calendar date."""
    try:
        if len(value) != 10:
            raise ValueError
        return dt.date.fromisoformat(value)
    except ValueError:
        raise RegistryError(f"expected a date YYYY-MM-DD, got {_show(value)}",
                            field=option) from None
