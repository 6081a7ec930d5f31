"""lab.yaml -> Lab: who issues a certificate (name, address, accreditation, signatory), how long
it is valid and where it is verified.

A certificate names its issuer: `certgen build` refuses to build one that is not a --draft
without a laboratory profile (`--lab FILE` or `$CERTGEN_LAB`), and refuses a verification base
on a reserved example domain (RFC 2606 / RFC 6761), where the QR code would lead nowhere. The
schema is strict like card.yaml's: unknown keys, wrong types and duplicate keys are errors,
every one reported at once (`lab.yaml: field: what`). A profile marked `specimen: true` is a
sample laboratory: every document it issues is marked SPECIMEN, so its placeholder addresses
(an example domain included) can never pass for a real certificate.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from certgen.errors import LabError
from certgen.inputs.bundle import check_text, format_validation_errors
from certgen.model.base import schema_keeping_names
from certgen.sop.capture_limits import (
    MAX_CAPTURE_AGE_DAYS,
    MIN_CAPTURE_SECONDS,
    MIN_K_0_1PCT,
    CaptureLimits,
)
from certgen.support.untrusted import UnreadableInput, read_limited
from certgen.support.yamlload import YamlDocumentError, load_yaml_document

if TYPE_CHECKING:
    from certgen.support.jsonload import JSONValue

LAB_ENV = "CERTGEN_LAB"
"""The environment variable `certgen build` reads the lab profile's path from."""

MAX_LAB_BYTES = 1 << 20
"""Largest lab.yaml (1 MiB, as card.yaml; a real one is under 1 KB). A 30 MB profile once
reached the PDF renderer and crashed the process inside GLib."""

_MARKUP = re.compile(r"<[A-Za-z/!?]")
"""The start of an HTML tag, comment or processing instruction."""


def _lab_text(value: str) -> str:
    """card.yaml's rules for a one-line text (certgen.inputs.bundle.check_text: visible, no bidi or
    control character, so no line break, at most 200 characters), and no markup: a lab's name,
    signatory and address are printed on every certificate and matched against its signing
    certificate, where a tag is never meant."""
    check_text(value, "lab")
    if _MARKUP.search(value):
        raise PydanticCustomError(
            "text_markup", "markup is not allowed (the text is printed as written)")
    return value


Text = Annotated[str, Field(min_length=1)]
"""A non-empty text (revocations.yaml's id and reason use it too)."""

ProfileText = Annotated[str, Field(min_length=1), AfterValidator(_lab_text)]
"""A lab.yaml text: card.yaml's rules for a one-line field, and no markup."""


class _LabModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class LocalizedText(_LabModel):
    """Text a lab writes, per language: English (the original) and optional translations."""

    en: Text = Field(description="The English original.")
    ru: Text | None = Field(default=None, description="Russian translation.")
    pt: Text | None = Field(default=None, description="Portuguese translation.")


LabText = Text | LocalizedText


class LocalizedProfileText(LocalizedText):
    """A lab.yaml text per language, each language under lab.yaml's text rules."""

    en: ProfileText = Field(description="The English original.")
    ru: ProfileText | None = Field(default=None, description="Russian translation.")
    pt: ProfileText | None = Field(default=None, description="Portuguese translation.")


ProfileLabText = ProfileText | LocalizedProfileText
"""A lab.yaml text as a plain string (English) or {en, ru, pt}, every one checked."""
"""A plain string (English, shown as is in every language) or {en, ru, pt}."""


class LabAccreditation(_LabModel):
    """The laboratory's accreditation: the accrediting body and the accreditation number."""

    body: ProfileText = Field(description="Accreditation body, e.g. the national accreditation body.")
    number: ProfileText = Field(description="Accreditation number or scope reference.")


class LabSignatory(_LabModel):
    """Who signs the certificates for the laboratory."""

    name: ProfileText = Field(description="Full name, as printed; the signing certificate's common "
                                   "name must be exactly this (build --sign, verify).")
    role: ProfileLabText = Field(description="Role, e.g. Head of laboratory (per language or a string).")
    certificate_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = Field(
        default=None, description="SHA-256 (hex, lower case) of the signatory's signing "
                                  "certificate (DER): build --sign refuses any other, and verify "
                                  "requires it of the signer. Leave out to accept any certificate "
                                  "in the signatory's name that chains to the lab's CA.")


class LabCaptureMinimum(_LabModel):
    """The least a recorded capture needs to be graded, raised above certgen's defaults
    (docs/spec/rules.md, Capture minimum); a key left out keeps the default."""

    seconds: float | None = Field(
        default=None, description=f"Shortest capture in seconds (at least {MIN_CAPTURE_SECONDS:g}).")
    k_0_1pct: int | None = Field(
        default=None, description=f"Fewest frames the 0.1% low is the mean of (at least {MIN_K_0_1PCT}).")

    @field_validator("seconds")
    @classmethod
    def _seconds(cls, value: float | None) -> float | None:
        if value is not None and not value >= MIN_CAPTURE_SECONDS:
            raise PydanticCustomError(
                "capture_minimum",
                f"expected at least certgen's default of {MIN_CAPTURE_SECONDS:g} s (a "
                "laboratory may raise the capture minimum, never lower it)")
        if value is not None and value > MAX_MINIMUM_SECONDS:
            raise PydanticCustomError(
                "capture_minimum", f"expected at most {MAX_MINIMUM_SECONDS:g} s")
        return value

    @field_validator("k_0_1pct")
    @classmethod
    def _k(cls, value: int | None) -> int | None:
        if value is not None and value < MIN_K_0_1PCT:
            raise PydanticCustomError(
                "capture_minimum",
                f"expected at least certgen's default of {MIN_K_0_1PCT} (a laboratory may raise "
                "the capture minimum, never lower it)")
        if value is not None and value > MAX_MINIMUM_K:
            raise PydanticCustomError(
                "capture_minimum", f"expected at most {MAX_MINIMUM_K}")
        return value


MAX_MINIMUM_SECONDS = 3600.0
"""The highest capture minimum a profile may set (an hour: no benchmark pass is longer)."""
MAX_MINIMUM_K = 1000
"""The highest k₀.₁ minimum a profile may set (a million frames)."""


class Lab(_LabModel):
    """lab.yaml: the laboratory that issues the certificates."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, title="lab.yaml",
                              json_schema_extra={"$comment": "certgen laboratory profile"})

    name: ProfileText = Field(description="Laboratory name, as printed on every certificate.")
    address: ProfileLabText = Field(description="Postal address (per language or a string).")
    accreditation: LabAccreditation | None = Field(
        default=None, description="Accreditation body and number; leave out when not accredited.")
    signatory: LabSignatory = Field(description="Who signs for the laboratory.")
    verification_base: str = Field(
        description="https:// base of the verification address: <base>/<id>/?sha256=<hash>.")
    validity_months: Annotated[int, Field(ge=1, le=120)] = Field(
        description="Months a certificate stays valid after its issue date (1 to 120).")
    contact: ProfileText = Field(description="Where a customer asks about a certificate (e-mail, phone).")
    specimen: bool = Field(
        default=False,
        description="A sample laboratory: every document it issues is marked SPECIMEN.")
    capture_minimum: LabCaptureMinimum | None = Field(
        default=None,
        description="Raise the least a recorded capture needs to be graded (seconds, k_0_1pct); "
                    "never below certgen's defaults (docs/spec/rules.md).")
    max_capture_age_days: Annotated[int, Field(ge=1, le=3650)] | None = Field(
        default=None,
        description=f"The oldest a run's tested_on or a capture's recorded date may be at issue, "
                    f"in days (default {MAX_CAPTURE_AGE_DAYS}).")

    def capture_limits(self) -> CaptureLimits:
        """The capture limits this laboratory's certificates are issued under."""
        minimum = self.capture_minimum
        return CaptureLimits(
            min_seconds=(MIN_CAPTURE_SECONDS if minimum is None or minimum.seconds is None
                         else minimum.seconds),
            min_k_0_1pct=(MIN_K_0_1PCT if minimum is None or minimum.k_0_1pct is None
                          else minimum.k_0_1pct),
            max_age_days=(MAX_CAPTURE_AGE_DAYS if self.max_capture_age_days is None
                          else self.max_capture_age_days))

    @field_validator("verification_base")
    @classmethod
    def _base(cls, value: str) -> str:
        # As long as --verify-base may be: with the id and the record's SHA-256 the address
        # must still fit a QR code (segno refuses more than about 2,300 bytes).
        check_text(value, "verification_base")
        try:
            parts = urlsplit(value)
            usable = (parts.scheme == "https" and bool(parts.hostname) and not parts.query
                      and not parts.fragment)
        except ValueError:  # "Invalid IPv6 URL", a port that is not a number
            usable = False
        if not usable:
            raise PydanticCustomError(
                "verification_base", "expected an https:// address without query or fragment")
        return value


def reserved_domain(url: str) -> str | None:
    """The reserved name `url`'s host falls under (RFC 2606, RFC 6761), or None.

    example.org / .com / .net and their subdomains, the .example, .test, .invalid and
    .localhost top-level names, and localhost itself: no real verification service lives there.
    """
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    for name in ("example.org", "example.com", "example.net"):
        if host == name or host.endswith("." + name):
            return name
    for tld in ("example", "test", "invalid", "localhost"):
        if host == tld or host.endswith("." + tld):
            return tld if tld == "localhost" else "." + tld
    return None


def add_months(day: dt.date, months: int) -> dt.date:
    """`day` plus whole months; a day past the target month's end becomes its last day
    (2026-01-31 + 1 month = 2026-02-28)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


@dataclass(frozen=True)
class LabProfile:
    """A loaded lab profile: the validated Lab, where it came from and its bytes' SHA-256
    (the build cache keys on it, and the record cites it)."""

    lab: Lab
    source: str
    sha256: str


def parse_lab(data: bytes, *, source: str = "lab.yaml") -> LabProfile:
    """lab.yaml bytes -> LabProfile (UTF-8, a BOM allowed; at most MAX_LAB_BYTES; strict
    schema; duplicates refused)."""
    if len(data) > MAX_LAB_BYTES:
        raise LabError([f"{source}: {len(data)} bytes, more than the limit of {MAX_LAB_BYTES} "
                        "for a laboratory profile"])
    try:
        parsed, duplicates = load_yaml_document(data, source)
    except YamlDocumentError as exc:
        raise LabError([str(exc)]) from None
    errors = [f"{source}:{d.line}: duplicate key {d.key!r} (first at line {d.first_line})"
              for d in duplicates]
    lab: Lab | None = None
    if not isinstance(parsed, dict):
        errors.append(f"{source}: expected a mapping at the top level")
    else:
        try:
            lab = Lab.model_validate(parsed)
        except ValidationError as exc:
            errors.extend(format_validation_errors(exc, source, Lab))
    if errors:
        raise LabError(errors)
    assert lab is not None
    return LabProfile(lab=lab, source=source, sha256=hashlib.sha256(data).hexdigest())


def load_lab(path: str | os.PathLike[str]) -> LabProfile:
    """Read and validate a lab profile file (the message names the file as given): a regular
    file of at most MAX_LAB_BYTES (a FIFO or device is refused before any read)."""
    source = str(path)
    try:
        data = read_limited(path, limit=MAX_LAB_BYTES, what="a laboratory profile")
    except UnreadableInput as exc:
        raise LabError([f"{source}: {exc}"]) from None
    return parse_lab(data, source=source)


NO_LAB_MESSAGE = ("no laboratory profile: a certificate must name its issuer; give --lab FILE "
                  f"(or set ${LAB_ENV}), or build a --draft")
"""The refusal of a non-draft build without a lab profile (tests assert it word for word)."""


def check_issuable_base(verify_base: str, profile: LabProfile | None, *, draft: bool,
                        from_profile: bool = True) -> None:
    """Refuse a non-draft build whose verification address is on a reserved example domain.

    A draft, or a specimen lab's documents (every page marked SPECIMEN), may point anywhere.
    `from_profile` says the base is the profile's (the message then names its field).
    """
    if draft or (profile is not None and profile.lab.specimen):
        return
    name = reserved_domain(verify_base)
    if name is not None:
        where = (f"{profile.source}: verification_base: "
                 if profile is not None and from_profile else "--verify-base: ")
        raise LabError([
            f"{where}{verify_base} is on a reserved example domain ({name}); the QR code and "
            "the printed verification address must lead to the laboratory's own service"
        ])


def lab_json_schema() -> dict[str, JSONValue]:
    """The JSON Schema of lab.yaml, generated from the models (deterministic)."""
    schema = schema_keeping_names(Lab, {"LabAccreditation": "Accreditation",
                                        "LocalizedProfileText": "LocalizedText",
                                        "LabSignatory": "Signatory"})
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    ordered: dict[str, JSONValue] = json.loads(json.dumps(schema, sort_keys=True))
    return ordered
