"""Versioned SOP rules files: thresholds are data, chosen by card.yaml's `sop`, never constants.

The file for "SOP-GPU-001 v1.1" is sop-gpu-001-v1.1.yaml beside this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path  # not importlib.resources: ~6 ms of `certgen metrics` start-up

from certgen.errors import RulesError

DEFAULT_SOP = "SOP-GPU-001 v1.1"


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


def available_sops() -> list[str]:
    """SOP versions with a rules file, sorted."""
    import yaml

    out = []
    for entry in sorted(Path(__file__).parent.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".yaml"):
            out.append(str(yaml.safe_load(entry.read_text(encoding="utf-8"))["sop"]))
    return out


@cache
def load_rules(sop: str = DEFAULT_SOP) -> Rules:
    """Load the rules file of one SOP version; a missing or malformed file is a RulesError."""
    import yaml

    name = rules_file_name(sop)
    entry = Path(__file__).parent / name
    if not entry.is_file():
        known = ", ".join(available_sops())
        raise RulesError(f"no rules file for SOP {sop!r} (known: {known})", field="sop")
    try:
        data = yaml.safe_load(entry.read_text(encoding="utf-8"))
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
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, RulesError):
            raise
        raise RulesError(f"malformed rules file: {exc!r}", file=name) from None
