"""What card.yaml states about the certificate, the card, Phase 1, the test bench and each run's
conditions, as the record holds it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from certgen.model.base import Frozen, LabText, Language, WithLaterKeys
from certgen.model.measured import DisplayTiming


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


class RunConditions(Frozen):
    """`runs[].conditions`: how the run was made, as card.yaml states it (null: not stated)."""

    game_version: str | None = Field(description="The game build tested.")
    tested_on: str | None = Field(description="The day it was captured, YYYY-MM-DD.")
    technician: str | None = Field(description="Who ran it.")


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

    display_timing: DisplayTiming | None = Field(
        default=None, description="The display's refresh and VRR window as card.yaml states "
                                  "them; absent when it does not, and in records of an older "
                                  "certgen.")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("display", "display_timing")


class ScopeGame(Frozen):
    """`certificate.scope.game_versions[]`: the game build one recorded run was made on."""

    run: int = Field(description="0-based run index.")
    title: str = Field(description="Game title.")
    game_version: str | None = Field(description="The game build tested, or null: not stated.")


class Scope(Frozen):
    """`certificate.scope`: what the grade covers, as data (the certificate words it under
    "Valid until"): this unit, this driver, the recorded runs' game versions and the test
    system, as card.yaml states them."""

    serial: str = Field(description="The certified unit's serial number.")
    driver: str = Field(description="The driver version tested.")
    game_versions: tuple[ScopeGame, ...] = Field(
        description="Every recorded run's game build, in run order (not_run runs are left out).")
    test_system: TestSystem | None = Field(
        description="The test bench, or null when card.yaml does not describe it.")


class CertificateInfo(WithLaterKeys):
    """`certificate`: which certificate this is, as in card.yaml."""

    id: str = Field(description="Certificate id (also the output folder name).")
    issued: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$",
                        description="Issue date, YYYY-MM-DD (the document date).")
    sop: str = Field(description='The SOP version, e.g. "SOP-GPU-001 v1.1".')
    languages: tuple[Language, ...] = Field(description="Languages of the customer documents.")
    scope: Scope | None = Field(
        default=None, description="What the grade covers: unit, driver, game versions, test "
                                  "system (absent in records of an older certgen).")

    LATER_KEYS: ClassVar[tuple[str, ...]] = ("scope",)
