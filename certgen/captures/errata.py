"""Known defects of the capture tools, as data (certgen/captures/errata.yaml; issue 42).

A capture is held against the list through its tool (the format table's name) and the version
it records, or that card.yaml gives for it; an entry matches when the tool is the same, the
version lies in the entry's range and one of its columns is a column certgen read from the
capture. The file ships with certgen and is checked here strictly: a malformed file is a bug
of certgen's (an internal error), never the user's input.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field, ValidationError

from certgen.model.base import Frozen
from certgen.model.capture import CaptureErratum, ErratumEffect
from certgen.support.yamlload import load_yaml_document

if TYPE_CHECKING:
    from certgen.captures.model import Capture

ERRATA_FILE: Final = Path(__file__).resolve().parent / "errata.yaml"


class ErratumVersions(Frozen):
    """The affected versions: from (included; None: not known) until (excluded; None: not
    fixed)."""

    first: str | None = Field(alias="from", description="First affected version, or null.")
    until: str | None = Field(description="First fixed version (not affected), or null.")


class Erratum(Frozen):
    """One entry of errata.yaml (its header comment names every key)."""

    id: str
    tool: str
    versions: ErratumVersions
    columns: tuple[str, ...] = Field(min_length=1)
    defect: str
    source: str = Field(pattern=r"^https://")
    effect: ErratumEffect
    confidence: Literal["high", "medium", "low"]
    note: str

    def versions_text(self) -> str:
        """"2.5.0 to before 2.5.1", "before 0.6.9", "from 2.3.1", "every version"."""
        first, until = self.versions.first, self.versions.until
        if first and until:
            return f"{first} to before {until}"
        if until:
            return f"before {until}"
        return f"from {first}" if first else "every version"

    def covers(self, version: str) -> bool:
        """Whether `version` lies in the entry's range (a version certgen cannot read: no)."""
        key = version_key(version)
        if key is None:
            return False
        first, until = self.versions.first, self.versions.until
        if first is not None and key < _required_key(first):
            return False
        return until is None or key < _required_key(until)


class ErrataFile(Frozen):
    """errata.yaml: its schema, its own version and the entries."""

    schema_: Literal[1] = Field(alias="schema")
    errata_version: str
    errata: tuple[Erratum, ...]


_VERSION: Final = re.compile(r"v?(\d+(?:\.\d+){0,3})(?:[-~_]?(rc|beta|alpha)\.?(\d*))?",
                             re.IGNORECASE)


def version_key(text: str) -> tuple[int, ...] | None:
    """A version as a comparable key: four numbers (missing ones 0), then 0 for a release
    candidate (before its release) or 1, then the candidate's number. A beta or alpha suffix
    counts as the release (CapFrameX tags its releases `_beta`). None when the text does not
    start with a version."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    numbers = [int(n) for n in match[1].split(".")]
    numbers += [0] * (4 - len(numbers))
    candidate = (match[2] or "").lower() == "rc"
    return (*numbers, 0 if candidate else 1, int(match[3] or 0) if candidate else 0)


def _required_key(text: str) -> tuple[int, ...]:
    key = version_key(text)
    if key is None:
        raise RuntimeError(f"{ERRATA_FILE.name}: not a version: {text!r}")
    return key


@cache
def load_errata() -> ErrataFile:
    """The packaged errata file, checked (a defect in it is certgen's bug: RuntimeError)."""
    data, duplicates = load_yaml_document(ERRATA_FILE.read_bytes(), ERRATA_FILE.name)
    if duplicates:
        raise RuntimeError(f"{ERRATA_FILE.name}: duplicate keys {duplicates!r}")
    try:
        parsed = ErrataFile.model_validate(data, strict=False)
    except ValidationError as exc:
        raise RuntimeError(f"{ERRATA_FILE.name}: {exc}") from None
    ids = [e.id for e in parsed.errata]
    if len(set(ids)) != len(ids):
        raise RuntimeError(f"{ERRATA_FILE.name}: an id is listed twice")
    for entry in parsed.errata:  # every bound must read as a version
        for bound in (entry.versions.first, entry.versions.until):
            if bound is not None:
                _required_key(bound)
    return parsed


def columns_read(capture: Capture) -> tuple[str, ...]:
    """The columns certgen read from a capture: its interval column, its display-change column
    and FrameType, when it has them."""
    read = [capture.interval_column.removesuffix(" (fallback)")]
    if capture.display_change_column:
        read.append(capture.display_change_column)
    if capture.frame_types is not None or capture.frame_type_codes is not None:
        read.append("FrameType")
    return tuple(read)


def errata_for(tool: str | None, version: str | None, columns: tuple[str, ...]
               ) -> tuple[CaptureErratum, ...]:
    """The entries matching a capture of `tool` at `version` from which certgen read `columns`
    (compared without case: PresentMon 1.7 wrote its names in lower case). Nothing without a
    tool or a version: a version is never guessed."""
    if tool is None or version is None:
        return ()
    read = {c.casefold() for c in columns}
    found: list[CaptureErratum] = []
    for entry in load_errata().errata:
        hit = tuple(c for c in entry.columns if c.casefold() in read)
        if entry.tool == tool and hit and entry.covers(version):
            found.append(CaptureErratum(
                id=entry.id, tool=entry.tool, version=version, versions=entry.versions_text(),
                columns=hit, defect=" ".join(entry.defect.split()), source=entry.source,
                effect=entry.effect))
    return tuple(found)


def capture_errata(capture: Capture, tool: str | None, version: str | None = None
                   ) -> tuple[CaptureErratum, ...]:
    """The entries matching a capture: its tool (the format table's), and the version it
    records, else `version` (what card.yaml gives)."""
    return errata_for(tool or capture.recorded.tool, capture.recorded.tool_version or version,
                      columns_read(capture))
