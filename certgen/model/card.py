"""What card.yaml states about the certificate, the card, Phase 1, the test bench and each run's
conditions, as the record holds it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from certgen.model.base import Frozen, LabText, Language, WithLaterKeys


class CertificateInfo(Frozen):
    """`certificate`: which certificate this is, as in card.yaml."""

    id: str = Field(description="Certificate id (also the output folder name).")
    issued: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$",
                        description="Issue date, YYYY-MM-DD (the document date).")
    sop: str = Field(description='The SOP version, e.g. "SOP-GPU-001 v1.1".')
    languages: tuple[Language, ...] = Field(description="Languages of the customer documents.")


class CardInfo(Frozen):
    """`card`: the certified card, as in card.yaml."""

    vendor: str = Field(description="Card vendor.")
    model: str = Field(description="Card model.")
    gpu: str = Field(description="GPU chip.")
    vram_gb: int | float = Field(description="Video memory in GB (an integer stays an integer).")
    serial: str = Field(description="Serial number.")
    hardware_ray_tracing: bool = Field(description="Whether the GPU has hardware ray tracing.")
    driver: str = Field(description="Driver version, as text.")


class Phase1(Frozen):
    """`phase1`: outcomes of SOP Phase 1 (electrical checks)."""

    vrm_rail_resistance: LabText = Field(
        description='Outcome of the VRM rail resistance check ("pass"; per language or a string).')


class RunConditions(WithLaterKeys):
    """`runs[].conditions`: how the run was made, as card.yaml states it (null: not stated)."""

    game_version: str | None = Field(description="The game build tested.")
    tested_on: str | None = Field(description="The day it was captured, YYYY-MM-DD.")
    technician: str | None = Field(description="Who ran it.")
    provenance_note: LabText | None = Field(
        default=None,
        description="The lab's explanation of what its captures record differently from "
                    "card.yaml (docs/spec/provenance.md; per language or a string); absent when "
                    "card.yaml gives none, and in records of an older certgen.")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("provenance_note",)


class TestSystem(WithLaterKeys):
    """`test_system`: the test bench, as card.yaml states it (null: not stated)."""

    cpu: str | None = Field(description="The CPU.")
    memory_gb: float | None = Field(description="System memory, GB.")
    os: str | None = Field(description="Operating system and build.")
    motherboard: str | None = Field(description="Motherboard.")
    notes: LabText | None = Field(
        description="Anything else about the bench (per language or a string).")
    display: str | None = Field(
        default=None, description="The display the runs were shown on (free text); absent when "
                                  "card.yaml gives none, and in records of an older certgen.")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("display",)
