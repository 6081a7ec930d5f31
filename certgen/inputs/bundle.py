"""card.yaml -> Bundle: a strict schema, paths confined to the bundle, zips checked before use.

A bundle is a folder (or a .zip of one) holding `card.yaml`, the capture of every recorded run
and the archived first captures of re-run configurations (docs/spec/bundle.md). Loading is the only
stage of the pipeline that reads the bundle; everything after it works on the returned records.

Rules enforced here, all reported at once (one line per problem, `card.yaml: <field>: <what>`):
- unknown keys and duplicate YAML keys are errors (a typo never falls back to a default);
- types are strict (`driver: 566.14` is a number, not the string "566.14");
- capture paths are relative, free of `..`, and resolve (symlinks included) inside the bundle;
- each run has exactly one of `capture` and `not_run`.
Zip entries are checked for traversal, absolute names, symlinks and size before any is extracted.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import stat
import typing
import unicodedata
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from certgen.errors import BundleErrors
from certgen.model.base import schema_keeping_names
from certgen.model.cohort import FrameGenerationMode
from certgen.model.measured import DisplayTiming
from certgen.sop import available_sops, has_rules_file, load_rules
from certgen.support.markup import sanitise_markdown, visible_text
from certgen.support.untrusted import open_regular, shorten
from certgen.support.yamlload import field_path, load_yaml, shown_value, yaml_problem

CARD_FILE = "card.yaml"

Locate = Callable[[tuple[str, ...]], None]
"""The existence check of a bundle path (its parts): raises a PydanticCustomError to refuse."""
MAX_CARD_BYTES = 1 << 20
"""Largest card.yaml (1 MiB; a real one is a few KB)."""
MAX_RUNS = 100
"""Most runs a card.yaml may list (docs/limits.md). A real certificate has 6 to 20; every run
is a capture to compute and a row of every document in every language, so 600 runs kept a
build busy for minutes before it said anything. certgen verify reads a record of up to 200."""
LANGUAGES = ("en", "ru", "pt")
UPSCALERS = ("none", "DLSS", "FSR", "XeSS")
GRADES = ("PLATINUM", "GOLD", "SILVER")

# Used with fullmatch: `$` alone would accept a trailing newline ("ID-1\n").
_RESOLUTION_RE = re.compile(r"^([1-9][0-9]{1,5})x([1-9][0-9]{1,5})$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_CERT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


# --------------------------------------------------------------------------------------------
# The schema of card.yaml (pinned key names: docs/spec/bundle.md)
# --------------------------------------------------------------------------------------------


class _CardModel(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


TEXT_LIMITS: dict[str, int] = {
    "justification": 5000,
    "vrm_reexamination": 1000,
    "vrm_rail_resistance": 1000,
    "not_run": 1000,
    "reason": 1000,
}
"""Longest text (in characters) of each prose field of card.yaml; refused, never clipped."""

NAME_LIMIT = 200
"""Longest text of every other (one-line, name-like) field: customer, card, run titles, …"""

_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidirectional controls: they reorder what a reader sees ("EVIL\u202egnp.exe")."""


def _invisible(char: str) -> bool:
    """Whitespace, control and format (zero-width) characters: none counts as written."""
    return char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")


def check_text(value: str, field: str) -> str:
    """The rules of every card.yaml text (docs/limits.md), or a PydanticCustomError:
    no bidi controls; no control characters (a tab or line break only in prose fields); at most
    the field's length limit; something visible once whitespace, control and zero-width
    characters are trimmed; a justification must still show text after sanitising."""
    limit = TEXT_LIMITS.get(field, NAME_LIMIT)
    if len(value) > limit:
        raise PydanticCustomError(
            "text_too_long", "expected at most {limit} characters, got {length}",
            {"limit": limit, "length": len(value)},
        )
    bidi = next((c for c in value if c in _BIDI), None)
    if bidi is not None:
        raise PydanticCustomError(
            "text_bidi", "bidirectional control U+{code} is not allowed (it reorders the text)",
            {"code": f"{ord(bidi):04X}"},
        )
    allowed = "\t\n\r" if field in TEXT_LIMITS else ""
    control = next((c for c in value
                    if unicodedata.category(c) == "Cc" and c not in allowed), None)
    if control is not None:
        raise PydanticCustomError(
            "text_control", "control character U+{code} is not allowed",
            {"code": f"{ord(control):04X}"},
        )
    if all(_invisible(c) for c in value):
        raise PydanticCustomError(
            "text_blank", "expected a text with visible characters (whitespace, control and "
            "zero-width characters do not count)",
        )
    if field == "justification":
        if not visible_text(sanitise_markdown(value)):
            raise PydanticCustomError(
                "text_sanitised_empty",
                "expected a justification with visible text once sanitised (it would print "
                "as nothing)",
            )
    return value


def _check_text(value: str, info: ValidationInfo) -> str:
    return check_text(value, info.field_name or "")


Text = Annotated[str, Field(min_length=1), AfterValidator(_check_text)]
"""A card.yaml text: non-empty, visible, no bidi or control characters, length-limited."""


# Text a lab writes (justification, VRM outcomes, reasons, bench notes) may be given per
# language. Each language's text obeys the rules of the field it belongs to, so the rule is
# bound here by kind rather than read from the (language) field name.
def _justification_rule(value: str) -> str:
    return check_text(value, "justification")


def _prose_rule(value: str) -> str:
    return check_text(value, "reason")  # the 1000-character prose limit, line breaks allowed


def _note_rule(value: str) -> str:
    return check_text(value, "notes")  # a one-line field (NAME_LIMIT)


_JustificationText = Annotated[str, Field(min_length=1), AfterValidator(_justification_rule)]
_ProseText = Annotated[str, Field(min_length=1), AfterValidator(_prose_rule)]
_NoteText = Annotated[str, Field(min_length=1), AfterValidator(_note_rule)]

TEXT_LANGUAGES = ("en", "ru", "pt")
"""The languages a lab may write its text in (the languages of the documents)."""


class _PerLanguage(_CardModel):
    """Text a lab writes, per language (`{en: …, ru: …, pt: …}`): at least one is given.

    A certificate shows its own language's text, else the English, else the first given
    (in the order en, ru, pt), marked as written in that language (docs/spec/bundle.md)."""

    @model_validator(mode="after")
    def _one_given(self) -> _PerLanguage:
        if all(getattr(self, lang) is None for lang in TEXT_LANGUAGES):
            raise PydanticCustomError(
                "languages_empty", "expected the text in at least one of en, ru, pt")
        return self


class JustificationPerLanguage(_PerLanguage):
    """A Soft Limit justification per language (Markdown, each sanitised like a plain one)."""

    en: _JustificationText | None = Field(default=None, description="English.")
    ru: _JustificationText | None = Field(default=None, description="Russian.")
    pt: _JustificationText | None = Field(default=None, description="Portuguese.")


class ProsePerLanguage(_PerLanguage):
    """An outcome or a reason per language."""

    en: _ProseText | None = Field(default=None, description="English.")
    ru: _ProseText | None = Field(default=None, description="Russian.")
    pt: _ProseText | None = Field(default=None, description="Portuguese.")


class NotePerLanguage(_PerLanguage):
    """A one-line note per language."""

    en: _NoteText | None = Field(default=None, description="English.")
    ru: _NoteText | None = Field(default=None, description="Russian.")
    pt: _NoteText | None = Field(default=None, description="Portuguese.")


# The union's branches are tagged so that an error names only the branch the value is meant
# for (a mapping's error is not paired with "expected a text"); the tags never reach a message.
_PLAIN_TAG = "plain text"
_PER_LANGUAGE_TAG = "per language"


def _written_tag(value: object) -> str | None:
    if isinstance(value, str):
        return _PLAIN_TAG
    if isinstance(value, dict | _PerLanguage):
        return _PER_LANGUAGE_TAG
    return None


_WRITTEN = Discriminator(
    _written_tag, custom_error_type="written_type",
    custom_error_message="expected a text or a mapping of languages (en, ru, pt) to texts")

Justification = Annotated[
    Annotated[_JustificationText, Tag(_PLAIN_TAG)]
    | Annotated[JustificationPerLanguage, Tag(_PER_LANGUAGE_TAG)], _WRITTEN]
"""A justification: a plain string (English) or per language."""
Prose = Annotated[
    Annotated[_ProseText, Tag(_PLAIN_TAG)]
    | Annotated[ProsePerLanguage, Tag(_PER_LANGUAGE_TAG)], _WRITTEN]
"""An outcome or a reason: a plain string (English) or per language."""
Note = Annotated[
    Annotated[_NoteText, Tag(_PLAIN_TAG)]
    | Annotated[NotePerLanguage, Tag(_PER_LANGUAGE_TAG)], _WRITTEN]
"""A one-line note: a plain string (English) or per language."""

Written = str | _PerLanguage
"""Any text a lab writes, as validated: a plain string (English) or per language."""


class Certificate(_CardModel):
    """Which certificate this is and which SOP rules file applies."""

    id: str = Field(
        description="Certificate id, also the output folder name (letters, digits, . _ -).",
        json_schema_extra={"pattern": _CERT_ID_RE.pattern},
    )
    issued: date = Field(strict=False, description="Issue date, YYYY-MM-DD (dates come from here).")
    sop: str = Field(description="SOP version; picks the rules file in certgen/sop/.")
    languages: list[Literal["en", "ru", "pt"]] = Field(
        min_length=1, description="Languages of the customer documents."
    )

    @field_validator("issued", mode="before")
    @classmethod
    def _issued(cls, value: object) -> object:
        # YAML gives a date for 2026-11-29 and a text when quoted; a number is never a date.
        if isinstance(value, datetime) or not isinstance(value, date | str):
            raise PydanticCustomError("date_type", "expected a date YYYY-MM-DD")
        return value

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _CERT_ID_RE.fullmatch(value):
            raise PydanticCustomError(
                "certificate_id",
                "expected letters, digits, '.', '_' or '-' (it names the output folder)",
            )
        return value

    @field_validator("sop")
    @classmethod
    def _sop(cls, value: str) -> str:
        # Only the named SOP's rules file is read (validate_card, before this); the others
        # are parsed only to list them in this refusal, and a broken one is left out.
        if not has_rules_file(value):
            known = available_sops()
            raise PydanticCustomError(
                "sop_unknown", "expected one of {known}", {"known": ", ".join(known)}
            )
        return value

    @field_validator("languages")
    @classmethod
    def _languages(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise PydanticCustomError("duplicate_language", "expected each language once")
        return value


class Card(_CardModel):
    """The certified card, as printed on the documents."""

    vendor: Text
    model: Text
    gpu: Text
    vram_gb: Annotated[int, Field(gt=0)] | Annotated[float, Field(gt=0)] = Field(
        description="VRAM in GB."
    )
    serial: Text
    hardware_ray_tracing: bool = Field(description="Whether the GPU has hardware ray tracing.")
    driver: Text = Field(description='Driver version as text (quote it: "566.14").')


class CardPhase1(_CardModel):
    """Outcomes of SOP Phase 1 (electrical checks) that bear on the certificate."""

    vrm_rail_resistance: Prose = Field(
        description="Outcome of the VRM rail resistance check (per language or a string).")


class CardGradeCap(_CardModel):
    """A cap on the grade imposed by another SOP phase, with its reason."""

    grade: Literal["PLATINUM", "GOLD", "SILVER"]
    reason: Prose = Field(description="Why (per language or a string).")


class CardFirstCapture(_CardModel):
    """The archived first capture of a re-run configuration and its SHA-256."""

    file: str = Field(description="Path inside the bundle, e.g. archive/run-first.csv.")
    sha256: str = Field(
        description="SHA-256 of the archived file, 64 lowercase hex digits.",
        json_schema_extra={"pattern": _SHA256_RE.pattern},
    )
    tested_on: date | None = Field(
        default=None, description="The day the first capture was made (required for issue).")
    technician: Text | None = Field(
        default=None, description="Who made it (required for issue).")

    @field_validator("file")
    @classmethod
    def _file(cls, value: str, info: ValidationInfo) -> str:
        return _confined(value, info)

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not _SHA256_RE.fullmatch(value):
            raise PydanticCustomError("sha256", "expected 64 lowercase hex digits")
        return value


MAX_REPEATS = 9
"""Most repeats a run may list: ten captures of a configuration (US DOE plans use four units;
the repeats' t-interval gains little past ten, and each is a capture to read and hash)."""


class CardRepeat(_CardModel):
    """`runs[].repeats[]`: a further capture of the run's configuration (issue 41). Hashed,
    archived, provenance-checked and confined like the recorded capture; never graded: the
    recorded capture stays the graded one, the repeats say how far a second capture moves it."""

    capture: str = Field(description="Capture file inside the bundle.")
    tested_on: date | None = Field(
        default=None, description="The day it was captured (required for issue).")
    technician: Text | None = Field(default=None, description="Who made it (required for issue).")
    provenance_note: Justification | None = Field(
        default=None, description="Explains a difference between what this capture records and "
                                  "what card.yaml declares (as the run's provenance_note).")

    @field_validator("capture")
    @classmethod
    def _capture(cls, value: str, info: ValidationInfo) -> str:
        return _confined(value, info)


class CardSoftLimit(_CardModel):
    """What a raised Stutter Soft Limit requires: a justification and a VRM re-examination."""

    justification: Justification | None = Field(
        default=None, description="Written justification (Markdown; per language or a string).")
    vrm_reexamination: Prose | None = Field(
        default=None, description="Outcome of the Phase 1 VRM rail resistance re-examination "
                                  "(per language or a string).")


class CardVrr(_CardModel):
    """`test_system.display_timing.vrr`: the variable-refresh window, lowest and highest Hz."""

    min_hz: Annotated[float, Field(gt=0, le=1000)] = Field(description="Lowest refresh, Hz.")
    max_hz: Annotated[float, Field(gt=0, le=1000)] = Field(description="Highest refresh, Hz.")

    @model_validator(mode="after")
    def _ordered(self) -> CardVrr:
        if self.min_hz >= self.max_hz:
            raise PydanticCustomError(
                "vrr", "expected min_hz below max_hz, got {lo} and {hi}",
                {"lo": self.min_hz, "hi": self.max_hz})
        return self


class CardDisplayTiming(_CardModel):
    """`test_system.display_timing`: the refresh the display ran at during the runs, which the
    refresh-cadence diagnostics need (without it they give only what needs no refresh rate)."""

    refresh_hz: Annotated[float, Field(gt=0, le=1000)] = Field(
        description="The refresh rate, Hz (its highest under VRR), e.g. 165.")
    vrr: CardVrr | Literal["none"] = Field(
        description='The VRR window {min_hz, max_hz}, or "none" (a fixed refresh).')
    presentation: Literal["fullscreen", "windowed"] | None = Field(
        default=None, description="How the game presented during the runs: fullscreen or "
                                  "windowed (optional; fullscreen lets certgen check the "
                                  "captures for composed presentation).")

    @model_validator(mode="after")
    def _within(self) -> CardDisplayTiming:
        if isinstance(self.vrr, CardVrr) and self.vrr.max_hz > self.refresh_hz:
            raise PydanticCustomError(
                "vrr", "expected vrr.max_hz at most refresh_hz ({refresh}), got {hi}",
                {"refresh": self.refresh_hz, "hi": self.vrr.max_hz})
        return self


def display_timing_of(timing: CardDisplayTiming) -> DisplayTiming:
    """card.yaml's display timing as the stages take it (VRR none: both ends null)."""
    vrr = timing.vrr if isinstance(timing.vrr, CardVrr) else None
    later = {} if timing.presentation is None else {"presentation": timing.presentation}
    return DisplayTiming(refresh_hz=float(timing.refresh_hz),
                         vrr_min_hz=None if vrr is None else float(vrr.min_hz),
                         vrr_max_hz=None if vrr is None else float(vrr.max_hz), **later)


class CardTestSystem(_CardModel):
    """The test bench the runs were measured on (every field optional: what is not stated is
    printed as not stated, never guessed)."""

    cpu: Text | None = Field(default=None, description="The CPU, e.g. Ryzen 7 7800X3D.")
    memory_gb: Annotated[float, Field(gt=0)] | None = Field(
        default=None, description="System memory in GB.")
    os: Text | None = Field(default=None, description="Operating system and build.")
    motherboard: Text | None = Field(default=None, description="Motherboard.")
    display: Text | None = Field(
        default=None, description="The display the runs were shown on, e.g. 27-inch "
                                  "2560x1440 165 Hz IPS (free text).")
    display_timing: CardDisplayTiming | None = Field(
        default=None, description="The display's refresh and VRR window, for the refresh-"
                                  "cadence diagnostics (optional).")
    notes: Note | None = Field(
        default=None, description="Anything else about the bench (per language or a string).")


class CardRun(_CardModel):
    """One benchmark run: its cohort fields, then a capture or the reason it was not run."""

    title: Text
    resolution: str = Field(
        description="Output resolution, WIDTHxHEIGHT (e.g. 2560x1440).",
        json_schema_extra={"pattern": _RESOLUTION_RE.pattern},
    )
    preset: Text
    ray_tracing: bool
    upscaler: Literal["none", "DLSS", "FSR", "XeSS"]
    upscaler_mode: Text | None = Field(description="e.g. Quality; null when no upscaler.")
    frame_generation: bool = Field(description=(
        "Frame generation on; may be left out when frame_generation_mode is given (derived "
        "from it: on unless the mode is off)."))
    frame_generation_mode: FrameGenerationMode | None = Field(
        default=None, description=(
            "off, 2x, 3x, 4x, 6x or dynamic: frames shown per frame the game renders, or a "
            "multiplier the driver changes during the run. Must agree with frame_generation; "
            "left out, the mode is off, or (frame generation on) not stated, and the run ranks "
            "with other runs whose mode is not stated."))
    capture: str | None = Field(default=None, description="Capture file inside the bundle.")
    not_run: Prose | None = Field(
        default=None, description="Why the run could not execute (per language or a string).")
    first_capture: CardFirstCapture | None = None
    soft_limit: CardSoftLimit | None = None
    process: Text | None = Field(
        default=None, description="Application name to pick from a multi-process capture."
    )
    format: Text | None = Field(default=None, description="Force a capture reader.")
    game_version: Text | None = Field(default=None, description="The game build tested.")
    tested_on: date | None = Field(default=None, description="The day the run was captured.")
    technician: Text | None = Field(default=None, description="Who ran it.")
    tool_version: Text | None = Field(
        default=None, description="The capture tool's version, where the capture does not "
                                  "record it (a version the capture records wins).")
    provenance_note: Justification | None = Field(
        default=None, description="Explains a difference between what the run's captures "
                                  "record and what this file declares (driver, OS, CPU, RAM, "
                                  "board, date); Markdown, per language or a string, the rules "
                                  "of a justification (docs/spec/provenance.md).")
    repeats: list[CardRepeat] | None = Field(
        default=None, json_schema_extra={"maxItems": MAX_REPEATS},
        description="Further captures of this configuration (never graded): how sure the grade "
                    "is (docs/spec/uncertainty.md).")

    @field_validator("repeats", mode="before")
    @classmethod
    def _few_repeats(cls, value: object) -> object:
        if isinstance(value, list) and len(value) > MAX_REPEATS:
            raise PydanticCustomError(
                "too_many_repeats", "expected at most {most} repeats, got {count}",
                {"most": MAX_REPEATS, "count": len(value)})
        return value

    @field_validator("resolution", mode="before")
    @classmethod
    def _resolution(cls, value: object) -> object:
        if not isinstance(value, str) or not _RESOLUTION_RE.fullmatch(value):
            raise PydanticCustomError("resolution", "expected WIDTHxHEIGHT")
        return value

    @field_validator("capture")
    @classmethod
    def _capture(cls, value: str | None, info: ValidationInfo) -> str | None:
        return None if value is None else _confined(value, info)

    @model_validator(mode="before")
    @classmethod
    def _derive_frame_generation(cls, data: object) -> object:
        # frame_generation left out: derived from the mode (the mode alone says it all).
        if isinstance(data, dict) and "frame_generation" not in data and \
                isinstance(data.get("frame_generation_mode"), str):
            return {**data, "frame_generation": data["frame_generation_mode"] != "off"}
        return data

    @model_validator(mode="after")
    def _mode_agrees(self) -> CardRun:
        mode = self.frame_generation_mode
        if mode is not None and (mode != "off") != self.frame_generation:
            raise PydanticCustomError(
                "frame_generation_mode",
                "expected frame_generation_mode to agree with frame_generation ({fg}), got "
                "'{mode}'", {"fg": str(self.frame_generation).lower(), "mode": mode})
        return self

    @model_validator(mode="after")
    def _capture_xor_not_run(self) -> CardRun:
        if (self.capture is None) == (self.not_run is None):
            raise PydanticCustomError(
                "capture_or_not_run", "expected exactly one of 'capture' and 'not_run'"
            )
        if self.repeats and self.capture is None:
            raise PydanticCustomError(
                "repeats_not_run", "expected no repeats for a run declared not_run")
        return self

    @property
    def label(self) -> str:
        """How messages name the run: title and output resolution."""
        return f"{self.title} {self.resolution}"


class CardFile(_CardModel):
    """card.yaml: certificate, customer, card, Phase 1 outcome, grade cap and the runs."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        title="card.yaml",
        json_schema_extra={"$comment": "certgen bundle metadata (spec/bundle.md)"},
    )

    certificate: Certificate
    customer: Text = Field(description="Customer name, as printed.")
    card: Card
    phase1: CardPhase1
    grade_cap: CardGradeCap | None = Field(description="A cap from another SOP phase, or null.")
    test_system: CardTestSystem | None = Field(default=None, description="The test bench.")
    runs: list[CardRun] = Field(min_length=1, max_length=MAX_RUNS)


# --------------------------------------------------------------------------------------------
# Paths inside the bundle
# --------------------------------------------------------------------------------------------


def _confined(value: str, info: ValidationInfo) -> str:
    """Check a bundle path: relative, no `..`, and (through the loader's `locate` context) an
    existing file inside the bundle, symlinks resolved.

    Without a validation context (schema export, tests of the model alone) only the text is checked.
    """
    if not value:
        raise PydanticCustomError("path_empty", "expected a path inside the bundle")
    posix = PurePosixPath(value.replace("\\", "/"))
    if posix.is_absolute() or re.match(r"^[A-Za-z]:", value) or value.startswith("\\"):
        raise PydanticCustomError(
            "path_absolute", "expected a relative path inside the bundle"
        )
    if ".." in posix.parts:
        raise PydanticCustomError(
            "path_parent", "expected a path inside the bundle without '..'"
        )
    locate = (info.context or {}).get("locate")
    if locate is not None:
        locate(posix.parts)
    return value


def _locate_in_folder(root: Path) -> Locate:
    """The existence check of bundle paths in a folder: inside it (symlinks resolved), a file."""
    resolved_root = root.resolve()

    def locate(parts: tuple[str, ...]) -> None:
        target = root.joinpath(*parts)
        resolved = target.resolve()
        if not resolved.is_relative_to(resolved_root):
            raise PydanticCustomError("path_escape", "resolves outside the bundle (a symlink out)")
        if not target.exists():
            raise PydanticCustomError("path_missing", "file not found in the bundle")
        if resolved.is_dir():
            raise PydanticCustomError("path_not_file", "expected a file, got a folder")
        if not resolved.is_file():
            raise PydanticCustomError(
                "path_not_file", "expected a file, got a FIFO, device or socket"
            )

    return locate


def _locate_in_zip(files: frozenset[str], folders: frozenset[str]) -> Locate:
    """The existence check of bundle paths in a zip (its entries were checked before)."""

    def locate(parts: tuple[str, ...]) -> None:
        name = "/".join(p for p in parts if p != ".")
        if name in folders:
            raise PydanticCustomError("path_not_file", "expected a file, got a folder")
        if name not in files:
            raise PydanticCustomError("path_missing", "file not found in the bundle")

    return locate


# --------------------------------------------------------------------------------------------
# YAML with duplicate keys refused
# --------------------------------------------------------------------------------------------


def parse_card_yaml(text: str) -> tuple[object, list[str]]:
    """YAML text -> (data, duplicate-key errors). A syntax error is a BundleErrors at once."""

    try:
        data, duplicates = load_yaml(text)
    except yaml.MarkedYAMLError as exc:
        line, problem = yaml_problem(text, exc)
        where = f"{CARD_FILE}:{line}" if line is not None else CARD_FILE
        raise BundleErrors([f"{where}: {problem}"]) from None
    except yaml.YAMLError as exc:
        raise BundleErrors([f"{CARD_FILE}: invalid YAML: {exc}"]) from None
    return data, [f"{CARD_FILE}:{d.line}: duplicate key {shorten(d.key)!r} (first at line "
                  f"{d.first_line})"
                  for d in duplicates]


# --------------------------------------------------------------------------------------------
# Validation errors -> one readable line each
# --------------------------------------------------------------------------------------------

_EXPECT: dict[str, str] = {
    "string_type": "expected a text",
    "bool_type": "expected true or false",
    "int_type": "expected a whole number",
    "float_type": "expected a number",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
    "date_type": "expected a date YYYY-MM-DD",
    "date_from_datetime_parsing": "expected a date YYYY-MM-DD",
    "date_parsing": "expected a date YYYY-MM-DD",
    "date_from_datetime_inexact": "expected a date YYYY-MM-DD",
    "string_too_short": "expected a non-empty text",
    "too_short": "expected at least one entry",
    "greater_than": "expected a number above 0",
}


_UNION_TAGS = {"int", "float", "constrained-int", "constrained-float"}


def _known_keys(loc: tuple[int | str, ...], root: type[BaseModel] | None = None) -> list[str]:
    """The key names allowed where `loc` points (for 'did you mean' hints)."""
    model: type[BaseModel] = CardFile if root is None else root
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return []
        ann = field.annotation
        inner = _model_in(ann)
        if inner is None:
            return []
        model = inner
    return list(model.model_fields)


def _model_in(ann: object) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in typing.get_args(ann):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


_LANGUAGE_NAMES = {"english": "en", "eng": "en", "russian": "ru", "rus": "ru",
                   "portuguese": "pt", "por": "pt", "br": "pt"}


def _language_hint(name: str) -> str | None:
    """The language a mistyped language key most likely means: 'EN', 'pt-BR', 'ru_RU',
    'english' and 'pt ' name one; otherwise the closest spelling, if any is close."""
    key = name.strip().lower().replace("_", "-")
    base = key.split("-", 1)[0]
    for candidate in (key, base):
        if candidate in TEXT_LANGUAGES:
            return candidate
        if candidate in _LANGUAGE_NAMES:
            return _LANGUAGE_NAMES[candidate]
    close = difflib.get_close_matches(key, TEXT_LANGUAGES, n=1)
    return close[0] if close else None


def format_validation_errors(exc: ValidationError, file: str = CARD_FILE,
                             root: type[BaseModel] | None = None) -> list[str]:
    """One `file: field.path: expected X, got Y` line per error, in file order, deduplicated.

    `root` is the model validated (card.yaml's by default), for the "did you mean" hints."""
    lines: list[str] = []
    unions: set[str] = set()
    for err in exc.errors(include_url=False):
        # A per-language text's branch tag is not a key a user wrote: never part of a path.
        err_loc = tuple(p for p in err["loc"] if p not in (_PLAIN_TAG, _PER_LANGUAGE_TAG))
        loc = tuple(p for p in err_loc if not (isinstance(p, str) and p in _UNION_TAGS))
        kind = err["type"]
        where = field_path(loc)
        if len(loc) != len(err_loc):
            # A number union (int | float): one message for the field, not one per member.
            if where in unions:
                continue
            unions.add(where)
            if kind in ("int_type", "float_type"):
                kind = "float_type"
        if kind == "missing":
            text = "required key missing"
        elif kind == "extra_forbidden" and _known_keys(loc, root) == list(TEXT_LANGUAGES):
            hint = _language_hint(str(loc[-1]))
            text = ("unknown language (expected en, ru or pt" +
                    (f"; did you mean {hint!r}?)" if hint else ")"))
        elif kind == "extra_forbidden":
            name = str(loc[-1])
            close = difflib.get_close_matches(name, _known_keys(loc, root), n=1)
            text = "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            options = re.findall(r"'([^']*)'", expected)
            text = f"expected one of {', '.join(options)}, got {shown_value(err['input'])}"
        elif kind in _EXPECT:
            text = f"{_EXPECT[kind]}, got {shown_value(err['input'])}"
        elif kind.startswith("path_") and kind != "path_absolute" and kind != "path_parent":
            text = f"{shown_value(err['input'])}: {err['msg']}"
        elif kind in ("capture_or_not_run", "text_too_long", "too_many_repeats",
                      "repeats_not_run", "frame_generation_mode"):
            text = err["msg"]  # a long value is not repeated in its own refusal
        else:
            text = f"{err['msg']}, got {shown_value(err['input'])}"
        line = f"{file}: {where}: {text}" if where else f"{file}: {text}"
        if line not in lines:
            lines.append(line)
    return lines


# --------------------------------------------------------------------------------------------
# The loaded bundle
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BundleFile:
    """One file card.yaml names, read once: the bytes every stage uses and their SHA-256."""

    name: str
    """The path as card.yaml writes it (how messages and the record name the file)."""
    data: bytes
    sha256: str


@dataclass(frozen=True)
class LoadedBundle:
    """A validated bundle with every file it names read into memory, each exactly once.

    Nothing else of the bundle is read (a stray file costs nothing). Later stages (metrics,
    the record, the build cache key) work from these bytes and never reopen the bundle.
    """

    source: str
    """How messages name the bundle (the path the user gave)."""
    card: CardFile
    card_sha256: str
    """SHA-256 of card.yaml's bytes as read."""
    files: tuple[BundleFile, ...]
    """Every capture and archived first capture card.yaml names, in card order, no repeats."""

    def file(self, name: str) -> BundleFile:
        """The named file (a path card.yaml gives; validation guarantees it was read)."""
        for entry in self.files:
            if entry.name == name:
                return entry
        raise KeyError(name)

    def content_sha256(self) -> str:
        """One digest of everything the bundle contributes to a certificate: card.yaml and
        each named file (by name and SHA-256). The build cache keys on it."""
        digest = hashlib.sha256(b"card.yaml\0" + self.card_sha256.encode())
        for entry in self.files:
            digest.update(f"\0{entry.name}\0{entry.sha256}".encode())
        return digest.hexdigest()


def named_files(card: CardFile) -> list[str]:
    """The bundle paths card.yaml names (per run: its capture, first capture and repeats), each
    once."""
    names: list[str] = []
    for run in card.runs:
        for name in (run.capture, run.first_capture.file if run.first_capture else None,
                     *(r.capture for r in run.repeats or ())):
            if name is not None and name not in names:
                names.append(name)
    return names


def sha256_bytes(data: bytes) -> str:
    """SHA-256 (hex) of bytes already read."""
    return hashlib.sha256(data).hexdigest()


def validate_card(
    data: object, *, root: Path | None = None, locate: Locate | None = None,
    duplicates: list[str] | None = None,
) -> CardFile:
    """Validate parsed card.yaml data; every problem is one line of one BundleErrors.

    Bundle paths are checked against the folder `root` (or by `locate(parts)`, which the zip
    loader gives); with neither, only the paths' text is checked.
    """
    if locate is None and root is not None:
        locate = _locate_in_folder(root)
    # The rules file of the SOP card.yaml names, when there is one, is read here: a malformed
    # one is refused in its own words (a RulesError naming its line and field), not as a
    # problem of certificate.sop. No other rules file is read: a broken file of another SOP
    # on CERTGEN_RULES_PATH cannot stop this bundle.
    sop = _named_sop(data)
    if sop is not None and has_rules_file(sop):
        load_rules(sop)
    errors = list(duplicates or [])
    card: CardFile | None = None
    runs = data.get("runs") if isinstance(data, dict) else None
    if isinstance(runs, list) and len(runs) > MAX_RUNS:
        # Refused before the schema: validating 600 runs, and their paths, is itself slow.
        raise BundleErrors([*errors, f"{CARD_FILE}: runs: expected at most {MAX_RUNS} runs, "
                                     f"got {len(runs)}"])
    if not isinstance(data, dict):
        errors.append(f"{CARD_FILE}: expected a mapping at the top level, got {shown_value(data)}")
    else:
        try:
            card = CardFile.model_validate(data, context={"locate": locate} if locate else None)
        except ValidationError as exc:
            errors.extend(format_validation_errors(exc))
    if errors:
        raise BundleErrors(errors)
    assert card is not None
    return card


def _named_sop(data: object) -> str | None:
    """certificate.sop of parsed card.yaml data, when it is a text."""
    certificate = data.get("certificate") if isinstance(data, dict) else None
    sop = certificate.get("sop") if isinstance(certificate, dict) else None
    return sop if isinstance(sop, str) else None


def parse_card(data: bytes, *, locate: Locate | None = None) -> CardFile:
    """card.yaml bytes -> CardFile (UTF-8, a BOM allowed; strict schema; duplicate keys refused)."""
    if len(data) > MAX_CARD_BYTES:
        raise BundleErrors([f"{CARD_FILE}: {len(data)} bytes, more than the limit of "
                            f"{MAX_CARD_BYTES}"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BundleErrors([f"{CARD_FILE}: expected UTF-8 text"]) from None
    parsed, duplicates = parse_card_yaml(text)
    return validate_card(parsed, locate=locate, duplicates=duplicates)


def _read_folder_file(root: Path, name: str, source: str) -> bytes:
    try:
        fd = open_regular(root.joinpath(*PurePosixPath(name.replace("\\", "/")).parts))
        with os.fdopen(fd, "rb") as handle:
            return handle.read()
    except ValueError as exc:  # a FIFO or device, refused before any read
        raise BundleErrors([f"{source}: {name}: is {exc}, expected a file"]) from None
    except OSError as exc:
        raise BundleErrors([f"{source}: {name}: cannot read the file ({exc.strerror})"]) from None


def _load_folder(root: Path, source: str) -> LoadedBundle:
    card_path = root / CARD_FILE
    if not card_path.is_file():
        raise BundleErrors([f"{source}: no {CARD_FILE} in the bundle"])
    if not card_path.resolve().is_relative_to(root.resolve()):
        raise BundleErrors([f"{CARD_FILE}: resolves outside the bundle (a symlink out)"])
    card_bytes = _read_folder_file(root, CARD_FILE, source)
    card = parse_card(card_bytes, locate=_locate_in_folder(root))
    files = []
    for name in named_files(card):
        data = _read_folder_file(root, name, source)
        files.append(BundleFile(name=name, data=data, sha256=sha256_bytes(data)))
    return LoadedBundle(source=source, card=card, card_sha256=sha256_bytes(card_bytes),
                        files=tuple(files))


# --------------------------------------------------------------------------------------------
# Zips: checked entry by entry before anything is extracted
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZipLimits:
    """Bounds on a bundle zip (a zip bomb must fail before it fills the disk)."""

    max_entries: int = 10_000
    max_entry_bytes: int = 1 << 30
    max_total_bytes: int = 4 << 30


def _zip_entry_problem(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return "is a symbolic link"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "has an absolute path"
    parts = name.replace("\\", "/").split("/")
    if ".." in parts:
        return "escapes the bundle through '..'"
    if "\x00" in name:
        return "has a NUL byte in its name"
    return None


def check_zip(archive: zipfile.ZipFile, source: str, limits: ZipLimits) -> list[str]:
    """Every problem of a bundle zip's entries (names, links, sizes), before extraction."""
    problems: list[str] = []
    infos = archive.infolist()
    if len(infos) > limits.max_entries:
        problems.append(f"{source}: {len(infos)} entries, more than the limit of {limits.max_entries}")
    total = 0
    seen: set[str] = set()
    for info in infos:
        key = info.filename.replace("\\", "/").rstrip("/")
        if key in seen:
            problems.append(f"{source}: entry {info.filename!r} appears twice")
        seen.add(key)
        problem = _zip_entry_problem(info)
        if problem:
            problems.append(f"{source}: entry {info.filename!r} {problem}")
        if info.file_size > limits.max_entry_bytes:
            problems.append(
                f"{source}: entry {info.filename!r} is {info.file_size} bytes, "
                f"more than the limit of {limits.max_entry_bytes}"
            )
        total += info.file_size
    folders = {key[:i] for key in seen for i in range(len(key)) if key[i] == "/"}
    for info in infos:
        key = info.filename.replace("\\", "/").rstrip("/")
        if not info.is_dir() and key in folders:
            problems.append(f"{source}: entry {info.filename!r} is both a file and a folder")
    if total > limits.max_total_bytes:
        problems.append(
            f"{source}: {total} bytes uncompressed, more than the limit of {limits.max_total_bytes}"
        )
    return problems


def _zip_root(names: list[str]) -> str:
    """The folder inside the zip that holds card.yaml: the top level or one top folder."""
    clean = [n.replace("\\", "/") for n in names]
    if CARD_FILE in clean:
        return ""
    tops = sorted({n.split("/", 1)[0] for n in clean if "/" in n})
    candidates = [t for t in tops if f"{t}/{CARD_FILE}" in clean]
    return candidates[0] + "/" if len(candidates) == 1 else ""


def _zip_read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, name: str) -> bytes:
    """One entry's bytes; a size or CRC that does not match the directory is refused."""
    try:
        with archive.open(info) as entry:
            data = entry.read(info.file_size + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError,
            OSError, EOFError, zlib.error) as exc:
        raise BundleErrors([f"{source}: {name}: cannot read the zip entry ({exc})"]) from None
    if len(data) != info.file_size:
        raise BundleErrors([f"{source}: entry {info.filename!r} holds {len(data)} bytes, not the "
                            f"{info.file_size} its zip header declares"])
    return data


def _load_zip(path: Path, source: str, limits: ZipLimits, *, card_only: bool = False
              ) -> LoadedBundle:
    """A bundle zip read in memory: entries checked first, then only card.yaml and the files it
    names are read (nothing is extracted to disk)."""
    if not path.exists():
        raise BundleErrors([f"{source}: no such bundle (expected a folder or a .zip)"])

    try:
        # One open: the zip check and every entry read share it. A FIFO or device is refused
        # before any read (it would block, or never end: /dev/zero).
        handle = os.fdopen(open_regular(path), "rb")
    except ValueError as exc:
        raise BundleErrors([f"{source}: is {exc}, expected a bundle folder or a .zip"]) from None
    except OSError as exc:
        raise BundleErrors([f"{source}: cannot read the bundle ({exc.strerror})"]) from None
    with handle:
        if not zipfile.is_zipfile(handle):
            raise BundleErrors([f"{source}: expected a bundle folder or a .zip of one"])
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise BundleErrors([f"{source}: not a readable zip ({exc})"]) from None
        with archive:
            return _read_zip(archive, source, limits, card_only=card_only)


def _read_zip(archive: zipfile.ZipFile, source: str, limits: ZipLimits, *, card_only: bool
              ) -> LoadedBundle:
    """Check every entry, then read card.yaml and (unless card_only) the files it names."""
    problems = check_zip(archive, source, limits)
    if problems:
        raise BundleErrors(problems)
    prefix = _zip_root(archive.namelist())
    entries: dict[str, zipfile.ZipInfo] = {}
    folders: set[str] = set()
    for info in archive.infolist():
        name = "/".join(p for p in info.filename.replace("\\", "/").split("/")
                        if p not in ("", "."))
        if prefix and not name.startswith(prefix):
            continue  # outside the folder that holds card.yaml
        inside = name[len(prefix):]
        if not inside:
            continue
        parts = inside.split("/")
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
        if info.is_dir():
            folders.add(inside)
        else:
            entries[inside] = info
    if CARD_FILE not in entries:
        raise BundleErrors([f"{source}: no {CARD_FILE} in the bundle"])
    card_bytes = _zip_read(archive, entries[CARD_FILE], source, CARD_FILE)
    card = parse_card(card_bytes,
                      locate=_locate_in_zip(frozenset(entries), frozenset(folders)))
    files = []
    for name in [] if card_only else named_files(card):
        key = "/".join(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))
        data = _zip_read(archive, entries[key], source, name)
        files.append(BundleFile(name=name, data=data, sha256=sha256_bytes(data)))
    return LoadedBundle(source=source, card=card, card_sha256=sha256_bytes(card_bytes),
                    files=tuple(files))


def read_card(path: str | os.PathLike[str], *, limits: ZipLimits | None = None) -> CardFile:
    """Only the card.yaml of a bundle folder or zip, validated (paths checked, nothing else
    read): what a caller needs to know a certificate id before building."""
    p = Path(path)
    source = str(path)
    if p.is_dir():
        card_path = p / CARD_FILE
        if not card_path.is_file():
            raise BundleErrors([f"{source}: no {CARD_FILE} in the bundle"])
        if not card_path.resolve().is_relative_to(p.resolve()):
            raise BundleErrors([f"{CARD_FILE}: resolves outside the bundle (a symlink out)"])
        return parse_card(_read_folder_file(p, CARD_FILE, source), locate=_locate_in_folder(p))
    return _load_zip(p, source, limits or ZipLimits(), card_only=True).card


def load_bundle(path: str | os.PathLike[str], *, limits: ZipLimits | None = None) -> LoadedBundle:
    """Read a bundle folder or .zip: card.yaml once, validated, and every file it names once.

    This is the only function that reads a bundle; the returned LoadedBundle holds all of it
    that any later stage needs. A zip is opened once and read in memory (nothing extracted).
    """
    p = Path(path)
    source = str(path)
    if p.is_dir():
        return _load_folder(p, source)
    return _load_zip(p, source, limits or ZipLimits())


def card_json_schema() -> dict[str, object]:
    """The JSON Schema of card.yaml, generated from the models (deterministic)."""
    schema = schema_keeping_names(CardFile, {f"Card{name}": name for name in (
        "Phase1", "GradeCap", "FirstCapture", "SoftLimit", "TestSystem", "Run")})
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    ordered: dict[str, object] = json.loads(json.dumps(schema, sort_keys=True))
    return ordered
