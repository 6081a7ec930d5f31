"""The issuing laboratory as the record holds it (from its lab.yaml): name, accreditation,
signatory, validity.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from certgen.model.base import Frozen, LabText, WithLaterKeys


class Accreditation(Frozen):
    """`issuer.accreditation`: the accrediting body and the number."""

    body: str = Field(description="Accreditation body.")
    number: str = Field(description="Accreditation number.")


class Signatory(WithLaterKeys):
    """`issuer.signatory`: who signs for the laboratory."""

    name: str = Field(description="Full name.")
    role: LabText = Field(description="Role (per language or a string).")
    certificate_sha256: str | None = Field(
        default=None, description="SHA-256 of the signing certificate lab.yaml pins; absent when "
                                  "lab.yaml pins none (and in records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("certificate_sha256",)


class Issuer(Frozen):
    """`issuer`: the laboratory that issued the certificate (its lab.yaml), and the validity."""

    name: str = Field(description="Laboratory name.")
    address: LabText = Field(description="Postal address (per language or a string).")
    accreditation: Accreditation | None = Field(description="Accreditation, or null.")
    signatory: Signatory = Field(description="Who signs for the laboratory.")
    contact: str = Field(description="Contact for questions about the certificate.")
    verification_base: str = Field(description="Base of the verification address.")
    validity_months: int = Field(description="Months of validity after the issue date.")
    valid_until: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$",
                             description="certificate.issued + validity_months, YYYY-MM-DD.")
    specimen: bool = Field(description="A sample laboratory: every document is marked SPECIMEN.")
    profile_sha256: str = Field(description="SHA-256 of the lab.yaml the build read.")
