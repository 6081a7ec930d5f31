"""Versioned SOP rules files: thresholds are data, chosen by card.yaml's `sop`, never constants.

The file for "SOP-GPU-001 v1.1" is sop-gpu-001-v1.1.yaml beside this module. A new SOP version
is a new file beside the old one (v1.2 next to v1.1): a bundle names the SOP it is certified
under, so an old bundle keeps grading by its own rules. Folders named in CERTGEN_RULES_PATH
(os.pathsep-separated) are searched after the packaged one, for rules files that are not
shipped (a lab's draft SOP, the tests' rules file); one SOP file name in two folders is an
error, never a silent choice. The record names the file and its SHA-256 (`rules.file`,
`rules.sha256`).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path  # not importlib.resources: ~6 ms of `certgen metrics` start-up

from certgen.errors import RulesError

DEFAULT_SOP = "SOP-GPU-001 v1.1"

RULES_PATH_ENV = "CERTGEN_RULES_PATH"
"""Extra folders of rules files, searched after the packaged one (docs/reproducibility.md)."""


@dataclass(frozen=True)
class Rules:
    """The priors of one SOP version (see the YAML file for what each means)."""

    sop: str
    rules_version: str
    weight_gap: float
    weight_stutter: float
    gold_line: float
    platinum_line: float
    grades: tuple[str, ...]
    no_measured_tier_cap: str
    soft_limit_stutter: float
    rerun_stutter: float
    ranking_min_cohort: int
    calibrated: bool
    calibration_fleet_target: int
    calibration_statement: tuple[tuple[str, str], ...] = ()
    """(language, text) pairs, sorted by language: the calibration status every document prints."""
    file: str = ""
    """The rules file's name, e.g. sop-gpu-001-v1.1.yaml."""
    sha256: str = ""
    """SHA-256 of the rules file's bytes: which exact rules a certificate was graded by."""

    def calibration_text(self, language: str) -> str:
        """The calibration statement in one language; a missing language is a RulesError."""
        for lang, text in self.calibration_statement:
            if lang == language:
                return text
        raise RulesError(
            f"no calibration statement in language {language!r}",
            file=rules_file_name(self.sop),
            field="calibration_statement",
        )


def rules_file_name(sop: str) -> str:
    """'SOP-GPU-001 v1.1' -> 'sop-gpu-001-v1.1.yaml'."""
    slug = re.sub(r"[^a-z0-9.]+", "-", sop.strip().lower()).strip("-")
    return f"{slug}.yaml"


def rules_folders() -> tuple[Path, ...]:
    """The folders searched for rules files: the packaged one, then CERTGEN_RULES_PATH's."""
    extra = os.environ.get(RULES_PATH_ENV, "")
    return (Path(__file__).resolve().parent,
            *(Path(part).resolve() for part in extra.split(os.pathsep) if part))


def available_sops() -> list[str]:
    """SOP versions with a rules file (packaged and on CERTGEN_RULES_PATH), sorted."""
    import yaml

    out = set()
    for folder in rules_folders():
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if entry.name.endswith(".yaml"):
                out.add(str(yaml.safe_load(entry.read_text(encoding="utf-8"))["sop"]))
    return sorted(out)


def load_rules(sop: str = DEFAULT_SOP) -> Rules:
    """Load the rules file of one SOP version; a missing or malformed file is a RulesError."""
    return _load_rules(sop, rules_folders())


@cache
def _load_rules(sop: str, folders: tuple[Path, ...]) -> Rules:
    import yaml

    name = rules_file_name(sop)
    found = [folder / name for folder in folders if (folder / name).is_file()]
    if not found:
        known = ", ".join(available_sops())
        raise RulesError(f"no rules file for SOP {sop!r} (known: {known})", field="sop")
    if len(found) > 1:
        raise RulesError(
            f"SOP {sop!r} has a rules file in more than one folder: "
            + ", ".join(str(p) for p in found), field="sop",
        )
    [entry] = found
    raw = entry.read_bytes()
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
        if data["sop"] != sop.strip():
            raise RulesError(f"file declares SOP {data['sop']!r}, expected {sop!r}", file=name)
        return Rules(
            sop=str(data["sop"]),
            rules_version=str(data["rules_version"]),
            weight_gap=float(data["fluidity_weights"]["consistency_gap"]),
            weight_stutter=float(data["fluidity_weights"]["stutter"]),
            gold_line=float(data["grade_lines"]["gold"]),
            platinum_line=float(data["grade_lines"]["platinum"]),
            grades=tuple(str(g) for g in data["grades"]),
            no_measured_tier_cap=str(data["no_measured_tier_cap"]),
            soft_limit_stutter=float(data["soft_limit"]["stutter"]),
            rerun_stutter=float(data["rerun"]["stutter"]),
            ranking_min_cohort=int(data["ranking"]["min_cohort"]),
            calibrated=bool(data["calibrated"]),
            calibration_fleet_target=int(data["calibration_fleet_target"]),
            calibration_statement=tuple(
                sorted((str(k), " ".join(str(v).split())) for k, v in data["calibration_statement"].items())
            ),
            file=name,
            sha256=hashlib.sha256(raw).hexdigest(),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, RulesError):
            raise
        raise RulesError(f"malformed rules file: {exc!r}", file=name) from None
