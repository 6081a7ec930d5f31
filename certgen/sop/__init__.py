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

import difflib
import hashlib
import os
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path  # not importlib.resources: ~6 ms of `certgen metrics` start-up
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from certgen.errors import RulesError
from certgen.support.untrusted import UnreadableInput, read_limited
from certgen.support.yamlload import (
    YamlDocumentError,
    field_path,
    key_lines,
    load_yaml_document,
    shown_value,
)

DEFAULT_SOP = "SOP-GPU-001 v1.1"

GRADES = ("PLATINUM", "GOLD", "SILVER")
"""The grades every rules file lists, highest first (the grade gates' order)."""

DECISION_RULES = ("simple acceptance",)
"""The decision rules a rules file may name (docs/spec/uncertainty.md)."""

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
    decision_rule: str = "simple acceptance"
    """The decision rule of a statement of conformity (ISO/IEC 17025 §7.8.6, ILAC-G8:09/2019):
    "simple acceptance", a gate met when the tier mean reaches its line (SOP-GPU-001 v1.1)."""

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


MAX_RULES_BYTES = 1 << 20
"""Largest rules file (1 MiB; the packaged one is under 4 KB)."""


def _read_rules(path: Path) -> bytes:
    """A rules file's bytes: a regular file within MAX_RULES_BYTES (a FIFO on the search path
    would block, a device never end: both refused before any read), or a RulesError naming it."""
    try:
        return read_limited(path, limit=MAX_RULES_BYTES, what="a rules file")
    except UnreadableInput as exc:
        raise RulesError(str(exc), file=str(path)) from None


def _rules_entries(folder: Path) -> list[Path]:
    """The *.yaml entries of a rules folder, sorted by name (none opened yet)."""
    try:
        return sorted((e for e in folder.iterdir() if e.name.endswith(".yaml")),
                      key=lambda p: p.name)
    except OSError:
        return []  # a folder on the path that cannot be listed holds no usable rules


def available_sops() -> list[str]:
    """SOP versions with a valid rules file (packaged and on CERTGEN_RULES_PATH), sorted: what
    a refusal lists as the known SOPs.

    A rules file that cannot be read or does not validate is left out here, never listed
    under a name it does not validly declare: it is refused in its own words (a RulesError
    naming the file, the line and the field) only when a bundle names its SOP (load_rules).
    So one broken file anywhere on the path cannot stop bundles of another SOP.
    """
    out = set()
    for folder in rules_folders():
        for entry in _rules_entries(folder):
            try:
                out.add(parse_rules(_read_rules(entry), entry.name).sop)
            except RulesError:
                continue
    return sorted(out)


def has_rules_file(sop: str) -> bool:
    """Whether some folder of the search path has an entry named for `sop`'s rules file (a
    file or not: load_rules then reads it, or refuses it naming it)."""
    name = rules_file_name(sop)
    return any(os.path.lexists(folder / name) for folder in rules_folders())


def load_rules(sop: str = DEFAULT_SOP) -> Rules:
    """Load the rules file of one SOP version; a missing or malformed file is a RulesError."""
    return _load_rules(sop, rules_folders())


@cache
def _load_rules(sop: str, folders: tuple[Path, ...]) -> Rules:
    name = rules_file_name(sop)
    found = [folder / name for folder in folders if os.path.lexists(folder / name)]
    if not found:
        known = ", ".join(available_sops())
        raise RulesError(f"no rules file for SOP {sop!r} (known: {known})", field="sop")
    if len(found) > 1:
        raise RulesError(
            f"SOP {sop!r} has a rules file in more than one folder: "
            + ", ".join(str(p) for p in found), field="sop",
        )
    [entry] = found
    rules = parse_rules(_read_rules(entry), name)
    if rules.sop != sop.strip():
        raise RulesError(f"file declares SOP {rules.sop!r}, expected {sop!r}", file=name)
    return rules


# --------------------------------------------------------------------------------------------
# The schema of a rules file: strict like card.yaml's and lab.yaml's (certgen/inputs/bundle.py,
# certgen/inputs/lab.py). Unknown keys, wrong types ("false" is a text, not a boolean) and duplicate
# keys are refused, each in one line `<file>:<line>: <field>: <what>`.
# --------------------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


Number = Annotated[float, Field(allow_inf_nan=False)]
"""A finite number; a whole number (88) is one too, read as 88.0."""


class FluidityWeights(_Strict):
    """The Fluidity Score's weights of the two ratios (SOP Step 4.2)."""

    consistency_gap: Number = Field(description="Weight of the consistency gap g.")
    stutter: Number = Field(description="Weight of the stutter ratio s.")


class GradeLines(_Strict):
    """The Fluidity Score lines of the grades."""

    gold: Number = Field(description="Every measured tier's mean at or above it: GOLD.")
    platinum: Number = Field(description="One measured tier at or above it: PLATINUM.")


class StutterLine(_Strict):
    """A stutter line (the Soft Limit's, the re-run audit's)."""

    stutter: Number = Field(description="Stutter strictly above this crosses the line.")


class Ranking(_Strict):
    """When the fleet ranking publishes a percentile."""

    min_cohort: int = Field(description="Smallest cohort (the run included) ranked in public.")


class RulesFile(_Strict):
    """A versioned SOP rules file, e.g. certgen/sop/sop-gpu-001-v1.1.yaml."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, title="SOP rules file")

    sop: str = Field(description="The SOP version the file holds, e.g. SOP-GPU-001 v1.1.")
    rules_version: str = Field(description="The rules version records name (pinned).")
    fluidity_weights: FluidityWeights
    grade_lines: GradeLines
    grades: list[str] = Field(description="The grades, highest first: PLATINUM, GOLD, SILVER.")
    no_measured_tier_cap: Literal["PLATINUM", "GOLD", "SILVER"] = Field(
        description="The grade cap when no tier is measured.")

    @field_validator("grades")
    @classmethod
    def _grades(cls, value: list[str]) -> list[str]:
        # The grade gates name the top grade, GOLD and the one below it (certgen/rules/verdict.py):
        # an empty, shorter or reordered list has no meaning there (an IndexError once).
        if value != list(GRADES):
            raise PydanticCustomError(
                "grades", "expected the grades {grades}, highest first",
                {"grades": ", ".join(GRADES)})
        return value
    soft_limit: StutterLine
    rerun: StutterLine
    ranking: Ranking
    calibrated: bool = Field(description="Whether the thresholds are calibrated (true/false).")
    calibration_fleet_target: int = Field(description="Certified cards calibration waits for.")
    calibration_statement: dict[str, str] = Field(
        description="The calibration statement every document prints, per language.")
    decision_rule: Literal["simple acceptance"] = Field(
        default="simple acceptance",
        description="The decision rule a gate applies (ILAC-G8:09/2019): simple acceptance, a "
                    "gate met when the tier mean reaches its line. Optional: a file without it "
                    "(SOP-GPU-001 v1.1) applies simple acceptance, as that SOP prescribes.")


_EXPECT = {
    "string_type": "expected a text",
    "bool_type": "expected true or false",
    "int_type": "expected a whole number",
    "float_type": "expected a number",
    "finite_number": "expected a finite number",
    "list_type": "expected a list",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
}
"""What a wrong type was expected to be, worded as card.yaml's refusals are (certgen/inputs/bundle.py)."""


def _known_keys(path: tuple[object, ...]) -> list[str]:
    """The keys allowed in the mapping at `path` (for the "did you mean" hint)."""
    model: type[BaseModel] = RulesFile
    for part in path:
        annotation = model.model_fields[str(part)].annotation if str(part) in model.model_fields \
            else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)


def _problems(exc: ValidationError) -> list[tuple[tuple[object, ...], str]]:
    """(path, what) of each validation error, as a user reads it."""
    out: list[tuple[tuple[object, ...], str]] = []
    for err in exc.errors(include_url=False):
        path = tuple(err["loc"])
        kind = err["type"]
        if kind == "missing":
            what = "required key missing"
        elif kind == "extra_forbidden":
            close = difflib.get_close_matches(str(path[-1]), _known_keys(path[:-1]), n=1)
            what = "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
        elif path and path[-1] == "[key]":
            path = path[:-1]
            what = f"expected a text as the key, got {shown_value(path[-1])}"
        elif kind == "literal_error" and path == ("decision_rule",):
            what = f"expected {DECISION_RULES[0]!r}, got {shown_value(err['input'])}"
        elif kind == "literal_error":
            what = f"expected one of {', '.join(GRADES)}, got {shown_value(err['input'])}"
        elif kind in _EXPECT:
            what = f"{_EXPECT[kind]}, got {shown_value(err['input'])}"
        else:
            what = f"{err['msg']}, got {shown_value(err['input'])}"
        out.append((path, what))
    return out


def _refuse(name: str, problems: list[tuple[int | None, str, str]]) -> RulesError:
    """One RulesError for every problem, one `<file>:<line>: <field>: <what>` line each, in file
    order; the error's own file, line and field are the first problem's."""
    problems = sorted(problems, key=lambda p: (p[0] or 0, p[1]))
    line, field, what = problems[0]
    rest = [str(RulesError(w, file=name, line=ln, field=f or None)) for ln, f, w in problems[1:]]
    return RulesError("\n".join([what, *rest]), file=name, line=line, field=field or None)


@lru_cache(maxsize=32)
def parse_rules(data: bytes, name: str) -> Rules:
    """A rules file's bytes -> Rules, through the strict schema (RulesFile).

    `name` is the file's name as records and messages give it (sop-gpu-001-v1.1.yaml). Every
    problem is refused at once, one line each naming the file, the line and the field.
    """
    try:
        parsed, _ = load_yaml_document(data, name)  # duplicates: found below, with their paths
    except YamlDocumentError as exc:
        # Worded "<name>[:<line>]: invalid YAML: <problem>": the same line, as a RulesError.
        where, _, what = str(exc).partition(": ")
        at = where.removeprefix(name).removeprefix(":")
        raise RulesError(what, file=name, line=int(at) if at.isdigit() else None) from None
    lines: dict[tuple[object, ...], int] = {}
    problems: list[tuple[int | None, str, str]] = []
    for path, line in key_lines(data.decode("utf-8-sig")):
        if path in lines and not isinstance(path[-1], int):
            problems.append((line, field_path(path), f"duplicate key (first at line {lines[path]})"))
        lines.setdefault(path, line)
    if not isinstance(parsed, dict):
        raise _refuse(name, [*problems, (None, "", "expected a mapping at the top level")])
    model: RulesFile | None = None
    try:
        model = RulesFile.model_validate(parsed)
    except ValidationError as exc:
        for path, what in _problems(exc):
            # A missing key has no line of its own: the line of the mapping that lacks it.
            key = path if path in lines else path[:-1]
            problems.append((lines.get(key), field_path(path), what))
    if problems:
        raise _refuse(name, problems)
    assert model is not None
    return Rules(
        sop=model.sop,
        rules_version=model.rules_version,
        weight_gap=model.fluidity_weights.consistency_gap,
        weight_stutter=model.fluidity_weights.stutter,
        gold_line=model.grade_lines.gold,
        platinum_line=model.grade_lines.platinum,
        grades=tuple(model.grades),
        no_measured_tier_cap=model.no_measured_tier_cap,
        soft_limit_stutter=model.soft_limit.stutter,
        rerun_stutter=model.rerun.stutter,
        ranking_min_cohort=model.ranking.min_cohort,
        calibrated=model.calibrated,
        calibration_fleet_target=model.calibration_fleet_target,
        calibration_statement=tuple(sorted(
            (lang, " ".join(text.split())) for lang, text in model.calibration_statement.items()
        )),
        file=name,
        sha256=hashlib.sha256(data).hexdigest(),
        decision_rule=model.decision_rule,
    )
