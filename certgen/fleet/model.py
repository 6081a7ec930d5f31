"""The fleet's records and pure ranking: cohorts, rows and their JSON Lines form, ranks.

The decisions are documented in certgen/fleet/__init__.py."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple, TypedDict, TypeGuard, cast

from pydantic_core import PydanticCustomError

from certgen.errors import FleetError
from certgen.errors import FleetImportError as FleetImportError  # re-exported (moved)
from certgen.inputs.bundle import NAME_LIMIT, UPSCALERS, check_text
from certgen.metrics.figures import round_half_away
from certgen.model.cohort import FRAME_GENERATION_MODES, Cohort, FrameGenerationMode, Rank
from certgen.record import Record
from certgen.support.untrusted import escape_invisible, shorten

if TYPE_CHECKING:
    from certgen.support.jsonload import JSONValue

DEFAULT_FLEET_FILE: Final = "fleet.sqlite"
"""The fleet file used when neither --fleet nor CERTGEN_FLEET is given (current directory)."""

FLEET_ENV: Final = "CERTGEN_FLEET"


class Metric(NamedTuple):
    """One ranked metric: its record key, whether lower wins, and its printed precision."""

    name: str
    lower_is_better: bool
    mean_decimals: int


RANKED_METRICS: Final[tuple[Metric, ...]] = (
    Metric("fluidity_score", False, 2),
    Metric("consistency_gap", True, 4),
    Metric("stutter", True, 4),
    Metric("avg_fps", False, 2),
    Metric("low_1pct_fps", False, 2),
    Metric("low_0_1pct_fps", False, 2),
)
"""The metrics every recorded run is ranked on, in the order of `runs[].ranks`."""

METRIC_NAMES: Final = tuple(m.name for m in RANKED_METRICS)


POSTGRES_SCHEMES: Final = ("postgresql://", "postgres://")
"""A --fleet value starting with one of these is a PostgreSQL server, not a file."""


def is_server_url(location: str | os.PathLike[str]) -> bool:
    """True when the fleet location is a PostgreSQL URL (postgresql://…)."""
    return isinstance(location, str) and location.lower().startswith(POSTGRES_SCHEMES)


def fleet_path(option: str | os.PathLike[str] | None = None) -> Path | str:
    """--fleet if given, else $CERTGEN_FLEET, else ./fleet.sqlite.

    A file is returned as a Path; a PostgreSQL URL as the string itself (a Path would fold its
    `//`)."""
    value: str | os.PathLike[str] | None = option or os.environ.get(FLEET_ENV) or None
    if value is None:
        return Path(DEFAULT_FLEET_FILE)
    if is_server_url(value):
        return str(value)
    return Path(value)


LOCK_TIMEOUT_ENV: Final = "CERTGEN_FLEET_LOCK_TIMEOUT"
"""Seconds a fleet command waits for another writer's lock (when --lock-timeout is not given)."""

LOCK_TIMEOUT_S: Final = 60.0
"""The default wait for the fleet's lock (as for an output folder's, certgen.writer)."""

MAX_LOCK_TIMEOUT_S: Final = 86_400.0
"""The longest wait a user may ask for (a day)."""


def lock_timeout(option: float | None = None) -> float:
    """--lock-timeout if given, else $CERTGEN_FLEET_LOCK_TIMEOUT, else 60 s; seconds, 0 to a day
    (0: do not wait). A bad value is a FleetError naming the option or variable."""
    if option is not None:
        value: float | str = option
        where = "--lock-timeout"
    else:
        text = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
        if not text:
            return LOCK_TIMEOUT_S
        value, where = text, LOCK_TIMEOUT_ENV
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= MAX_LOCK_TIMEOUT_S:  # NaN and inf fail too
        shown = escape_invisible(shorten(str(value), 40))
        raise FleetError(f"expected seconds from 0 to {MAX_LOCK_TIMEOUT_S:g}, got '{shown}'",
                         field=where)
    return seconds


# ---------------------------------------------------------------------------------------------
# Ranking (pure)


def rank_value(
    value: float,
    others: Sequence[float],
    *,
    lower_is_better: bool,
    min_cohort: int,
    mean_decimals: int = 4,
) -> Rank:
    """Rank one value against the other runs of its cohort (see the module docstring)."""
    n = len(others) + 1
    if n < min_cohort or not others:
        return Rank(percentile=None, n=n, cohort_mean=None, z=None)
    if lower_is_better:
        beaten = sum(1 for o in others if value < o)
    else:
        beaten = sum(1 for o in others if value > o)
    percentile = round_half_away(100.0 * beaten / len(others), 1)
    values = [value, *others]
    mean = math.fsum(values) / n
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / n)
    # A spread below float noise is a zero spread: every value is the same figure.
    z = None if sd <= 1e-12 * max(1.0, abs(mean)) else round_half_away((value - mean) / sd, 2)
    return Rank(percentile=percentile, n=n, cohort_mean=round_half_away(mean, mean_decimals), z=z)


SUM_SCALE: Final = 1074
"""Every finite double is an integer multiple of 2**-1074: exact sums are kept as integers in
that unit (and squares in 2**-2148), so they add and subtract without any rounding."""


def exact_scaled(value: float) -> int:
    """`value` as an exact integer multiple of 2**-SUM_SCALE."""
    num, den = value.as_integer_ratio()
    return num << (SUM_SCALE - den.bit_length() + 1)


def exact_scaled_square(value: float) -> int:
    """`value**2` as an exact integer multiple of 2**-(2*SUM_SCALE)."""
    num, den = value.as_integer_ratio()
    return (num * num) << (2 * (SUM_SCALE - den.bit_length() + 1))


@dataclass(frozen=True)
class CohortSums:
    """Exact aggregates of one metric over the other runs of a cohort (what SQL keeps).

    n: how many values; beaten: how many of them the ranked value strictly beats; sum_x: their
    exact sum in units of 2**-SUM_SCALE; sum_xx: their exact sum of squares in 2**-2*SUM_SCALE.
    """

    n: int
    beaten: int
    sum_x: int
    sum_xx: int


def rank_from_sums(
    value: float, others: CohortSums, *, min_cohort: int, mean_decimals: int = 4
) -> Rank:
    """`rank_value` from aggregates instead of the values themselves (identical figures).

    The mean is the same float as rank_value's: math.fsum is the correctly rounded sum, and so
    is an exact integer sum divided by 2**SUM_SCALE (Python's int division rounds correctly).
    The spread is computed from the exact sum of squared deviations, sum_xx - 2*m*sum_x + n*m**2
    (m the float mean), rounded once; rank_value rounds each squared deviation before summing,
    so the two standard deviations can differ in the last bits of a double, far below the two
    printed decimals of z.
    """
    n = others.n + 1
    if n < min_cohort or others.n == 0:
        return Rank(percentile=None, n=n, cohort_mean=None, z=None)
    percentile = round_half_away(100.0 * others.beaten / others.n, 1)
    total = others.sum_x + exact_scaled(value)
    mean = (total / (1 << SUM_SCALE)) / n
    m = exact_scaled(mean)
    squares = others.sum_xx + exact_scaled_square(value)
    spread = squares - 2 * m * total + n * m * m
    sd = math.sqrt(max(spread, 0) / (1 << (2 * SUM_SCALE)) / n)
    # A spread below float noise is a zero spread: every value is the same figure.
    z = None if sd <= 1e-12 * max(1.0, abs(mean)) else round_half_away((value - mean) / sd, 2)
    return Rank(percentile=percentile, n=n, cohort_mean=round_half_away(mean, mean_decimals), z=z)


def rank_run(
    metrics: Mapping[str, float | None],
    cohort_values: Mapping[str, Sequence[float]],
    *,
    min_cohort: int,
) -> dict[str, Rank]:
    """Rank every metric the run has a value for; a null metric gets no entry (never 0)."""
    out: dict[str, Rank] = {}
    for m in RANKED_METRICS:
        value = metrics.get(m.name)
        if value is None:
            continue
        out[m.name] = rank_value(
            float(value),
            cohort_values.get(m.name, ()),
            lower_is_better=m.lower_is_better,
            min_cohort=min_cohort,
            mean_decimals=m.mean_decimals,
        )
    return out


# ---------------------------------------------------------------------------------------------
# Rows and their JSON Lines form


@dataclass(frozen=True)
class FleetRun:
    """One fleet row: a recorded run of a certified card. Metrics are None when absent."""

    certificate_id: str
    run_index: int
    issued: str | None
    card_model: str
    card_serial: str
    cohort: Cohort
    avg_fps: float | None
    low_1pct_fps: float | None
    low_0_1pct_fps: float | None
    consistency_gap: float | None
    stutter: float | None
    fluidity_score: float | None
    source: str

    def metric(self, name: str) -> float | None:
        value: float | None = getattr(self, name)
        return value

    def same_content(self, other: FleetRun) -> bool:
        """Equal in everything but `source` (a re-dumped record of the same certificate)."""
        return self._content() == other._content()

    def _content(self) -> tuple[object, ...]:
        return (self.certificate_id, self.run_index, self.issued, self.card_model,
                self.card_serial, self.cohort, *(self.metric(m) for m in METRIC_NAMES))

    def as_json(self) -> dict[str, JSONValue]:
        """The export line's object, keys in a fixed order (JSONL_FIELDS)."""
        c = self.cohort
        return {
            "certificate_id": self.certificate_id, "run_index": self.run_index,
            "issued": self.issued, "card_model": self.card_model, "card_serial": self.card_serial,
            "title": c.title, "resolution": c.resolution, "preset": c.preset,
            "ray_tracing": c.ray_tracing, "upscaler": c.upscaler, "upscaler_mode": c.upscaler_mode,
            "frame_generation": c.frame_generation,
            "frame_generation_mode": c.frame_generation_mode,
            **{m: self.metric(m) for m in METRIC_NAMES},
            "source": self.source,
        }


JSONL_FIELDS: Final = (
    "certificate_id", "run_index", "issued", "card_model", "card_serial",
    *Cohort._fields, *METRIC_NAMES, "source",
)
"""Every line of an export holds exactly these keys, in this order."""


class RowObject(TypedDict):
    """A fleet row as an export line holds it (the keys of JSONL_FIELDS), once _plainly_valid
    or field_errors has found nothing wrong in it."""

    certificate_id: str
    run_index: int
    issued: str | None
    card_model: str
    card_serial: str
    title: str
    resolution: str
    preset: str
    ray_tracing: bool
    upscaler: str
    upscaler_mode: str | None
    frame_generation: bool
    frame_generation_mode: FrameGenerationMode | None
    fluidity_score: float | None
    consistency_gap: float | None
    stutter: float | None
    avg_fps: float | None
    low_1pct_fps: float | None
    low_0_1pct_fps: float | None
    source: str


assert tuple(RowObject.__annotations__) == JSONL_FIELDS, "RowObject has the export's keys"


def _dump_line(run: FleetRun) -> str:
    return json.dumps(run.as_json(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _describe(value: object) -> str:
    # Escaped (bidi controls, zero-width characters) and shortened: a value is shown, never
    # allowed to reorder or fill the message.
    text = escape_invisible(json.dumps(value, ensure_ascii=False))
    return text if len(text) <= 40 else text[:37] + "..."


def _shown(text: str) -> str:
    """A text as a message shows it outside quotes: escaped and shortened."""
    return escape_invisible(shorten(text, 60))


MAX_FPS: Final = 1e9
"""The largest FPS figure a fleet row may hold: 1000 / 1e-6 ms, the shortest frame time a capture
may hold (certgen.captures.detect.MIN_FRAME_TIME_MS), so every figure certgen computes fits."""

METRIC_RANGES: Final[dict[str, tuple[float, float]]] = {
    "fluidity_score": (0.0, 100.0),
    "consistency_gap": (0.0, 1.0),
    "stutter": (0.0, 1.0),
    "avg_fps": (0.0, MAX_FPS),
    "low_1pct_fps": (0.0, MAX_FPS),
    "low_0_1pct_fps": (0.0, MAX_FPS),
}
"""The closed range of each ranked metric (docs/spec/metrics.md): S_F 0-100, g and s fractions
(1 is reached only by rounding: a 0.1% low that rounds to 0.0 FPS gives s = 1), FPS figures from
0 (the spec's "F is 0" case: a figure that rounds to 0.0) to MAX_FPS. A value outside would skew
or break every rank of its cohort."""

ORDERED_FPS: Final = (("low_1pct_fps", "avg_fps"), ("low_0_1pct_fps", "low_1pct_fps"))
"""(lower, upper): F_1% <= F and F_0.1% <= F_1% (metrics.md: a record that breaks one is
corrupted or hand-edited)."""

MAX_RUN_INDEX: Final = 99_999
"""The largest run index (a card.yaml of at most 1 MiB cannot list that many runs)."""

CERTIFICATE_ID_LIMIT: Final = 100
"""Longest certificate id (as card.yaml's certificate.id)."""

_RESOLUTION_RE: Final = re.compile(r"([1-9][0-9]{1,5})x([1-9][0-9]{1,5})")
_ISSUED_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TEXT_KEYS: Final = ("certificate_id", "card_model", "card_serial", "title", "preset",
                     "source")
_NULLABLE_TEXT_KEYS: Final = ("upscaler_mode",)


@lru_cache(maxsize=4096)
def _calendar_date(text: str) -> bool:
    if not _ISSUED_RE.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _text_problem(key: str, value: str) -> str | None:
    """What is wrong with a text field's value (card.yaml's text rules), or None."""
    if key == "certificate_id" and len(value) > CERTIFICATE_ID_LIMIT:
        return f"expected at most {CERTIFICATE_ID_LIMIT} characters, got {len(value)}"
    try:
        check_text(value, key)
    except PydanticCustomError as exc:
        return exc.message()
    return None


def _fast_text(value: object, limit: int) -> bool:
    """True for a text every rule accepts (printable: no control, bidi or zero-width
    character; something besides spaces; within the limit). False sends it to the full check."""
    return type(value) is str and len(value) <= limit and value.isprintable() and \
        not value.isspace() and value != ""


def _bound(value: float) -> str:
    return str(int(value)) if value.is_integer() else repr(value)


def field_errors(obj: Mapping[str, object]) -> list[tuple[str, str]]:
    """Every (field, problem) of one fleet row object; empty when it is valid.

    Types, then ranges and closed sets (docs/limits.md, "The fleet"): texts as card.yaml's
    (visible, no control or bidi character, at most 200 characters, an id at most 100), a
    resolution WIDTHxHEIGHT, an upscaler from UPSCALERS, a calendar date, a run index up to
    MAX_RUN_INDEX, each metric in METRIC_RANGES and the lows not above the average.
    """
    errors: list[tuple[str, str]] = []
    for key in obj:
        if key not in JSONL_FIELDS:
            errors.append((_shown(str(key)), "unknown field"))
    missing = [key for key in JSONL_FIELDS if key not in obj]
    if missing:
        errors.append((", ".join(missing), "missing"))

    def text(key: str, *, nullable: bool = False) -> None:
        if key not in obj:
            return
        v = obj[key]
        if v is None and nullable:
            return
        if not isinstance(v, str) or not v.strip():
            want = "a non-empty string" + (" or null" if nullable else "")
            errors.append((key, f"expected {want}, got {_describe(v)}"))
            return
        problem = _text_problem(key, v)
        if problem is not None:
            # A length refusal already says what it got (the length, not the text).
            shown = "" if problem.startswith("expected at most") else f", got {_describe(v)}"
            errors.append((key, problem + shown))

    for key in _TEXT_KEYS:
        text(key)
    for key in _NULLABLE_TEXT_KEYS:
        text(key, nullable=True)
    cert = obj.get("certificate_id")
    if isinstance(cert, str) and is_specimen_id(cert):
        errors.append(("certificate_id", SPECIMEN_REFUSAL))
    if "issued" in obj:
        v = obj["issued"]
        if v is not None and (not isinstance(v, str) or not _calendar_date(v)):
            errors.append(("issued", f"expected a date YYYY-MM-DD or null, got {_describe(v)}"))
    if "resolution" in obj:
        v = obj["resolution"]
        if not isinstance(v, str) or not _RESOLUTION_RE.fullmatch(v):
            errors.append(("resolution",
                           f"expected WIDTHxHEIGHT (e.g. 2560x1440), got {_describe(v)}"))
    if "upscaler" in obj:
        v = obj["upscaler"]
        if not isinstance(v, str) or v not in UPSCALERS:
            errors.append(("upscaler",
                           f"expected one of {', '.join(UPSCALERS)}, got {_describe(v)}"))
    for key in ("ray_tracing", "frame_generation"):
        if key in obj and not isinstance(obj[key], bool):
            errors.append((key, f"expected true or false, got {_describe(obj[key])}"))
    if "frame_generation_mode" in obj:
        v = obj["frame_generation_mode"]
        fg = obj.get("frame_generation")
        if v is not None and (not isinstance(v, str) or v not in _MODE_SET):
            errors.append(("frame_generation_mode",
                           f"expected one of {', '.join(FRAME_GENERATION_MODES)} or null, got "
                           f"{_describe(v)}"))
        elif isinstance(fg, bool) and (v == "off") == fg:
            want = "off" if not fg else "a mode other than off, or null (not stated)"
            errors.append(("frame_generation_mode",
                           f"expected {want} with frame_generation {str(fg).lower()}, got "
                           f"{_describe(v)}"))
    if "run_index" in obj:
        v = obj["run_index"]
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_RUN_INDEX:
            errors.append(("run_index",
                           f"expected an integer from 0 to {MAX_RUN_INDEX}, got {_describe(v)}"))
    numbers: dict[str, float] = {}
    for name in METRIC_NAMES:
        v = obj.get(name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            errors.append((name, f"expected a number or null, got {_describe(v)}"))
            continue
        low, high = METRIC_RANGES[name]
        if not low <= v <= high:
            errors.append((name, f"expected a number from {_bound(low)} to {_bound(high)} "
                                 f"or null, got {_describe(v)}"))
            continue
        numbers[name] = float(v)
    for lower, upper in ORDERED_FPS:
        if lower in numbers and upper in numbers and numbers[lower] > numbers[upper]:
            errors.append((lower, f"expected at most {upper} ({numbers[upper]!r}), got "
                                  f"{numbers[lower]!r} (a low above it is a corrupted or "
                                  "hand-edited figure)"))
    return errors


def parse_line(obj: object, where: str) -> tuple[FleetRun | None, list[str]]:
    """Validate one decoded JSONL object; return the row or every error (`where: field: …`).

    A line from an older certgen's export has no frame_generation_mode: it reads as what that
    certgen knew, off or (frame generation on) not stated, never a guessed mode."""
    if not isinstance(obj, dict):
        return None, [f"{where}: expected a JSON object, got {_describe(obj)}"]
    if "frame_generation_mode" not in obj and isinstance(obj.get("frame_generation"), bool):
        obj = {**obj, "frame_generation_mode": None if obj["frame_generation"] else "off"}
    if _plainly_valid(obj):
        return _row_from_mapping(obj), []
    errors = field_errors(obj)
    if errors:
        return None, [f"{where}: {field}: {problem}" for field, problem in errors]
    return _row_from_mapping(valid_row(obj)), []


def valid_row(obj: Mapping[str, object]) -> RowObject:
    """`obj` as the row object it is, once field_errors has found nothing wrong in it."""
    return cast("RowObject", obj)  # field_errors checked every key and type


_FIELD_SET: Final = frozenset(JSONL_FIELDS)
_MODE_SET: Final = frozenset(FRAME_GENERATION_MODES)
_UPSCALER_SET: Final = frozenset(UPSCALERS)
_RANGES: Final = tuple(METRIC_RANGES.items())


def _plainly_valid(obj: Mapping[str, object]) -> TypeGuard[RowObject]:
    """A fast check that a row has no error (the common case of a large import); False sends it
    to field_errors, which finds and words every error. Never True for a row field_errors
    would refuse."""
    if obj.keys() != _FIELD_SET:
        return False
    for key in _TEXT_KEYS:
        if not _fast_text(obj[key], CERTIFICATE_ID_LIMIT if key == "certificate_id" else
                          NAME_LIMIT):
            return False
    if is_specimen_id(cast("str", obj["certificate_id"])):
        return False
    mode = obj["upscaler_mode"]
    if mode is not None and not _fast_text(mode, NAME_LIMIT):
        return False
    issued = obj["issued"]
    if issued is not None and (type(issued) is not str or not _calendar_date(issued)):
        return False
    resolution = obj["resolution"]
    if type(resolution) is not str or not _RESOLUTION_RE.fullmatch(resolution):
        return False
    if type(obj["upscaler"]) is not str or obj["upscaler"] not in _UPSCALER_SET:
        return False
    if type(obj["ray_tracing"]) is not bool or type(obj["frame_generation"]) is not bool:
        return False
    fg_mode = obj["frame_generation_mode"]
    if (fg_mode is not None and (type(fg_mode) is not str or fg_mode not in _MODE_SET)) or \
            (fg_mode == "off") == obj["frame_generation"]:
        return False
    index = obj["run_index"]
    if type(index) is not int or not 0 <= index <= MAX_RUN_INDEX:
        return False
    for name, (low, high) in _RANGES:
        v = obj[name]
        if v is None:
            continue
        # NaN fails the comparison; inf is out of range.
        if (type(v) is not float and type(v) is not int) or not low <= v <= high:
            return False
    for lower, upper in ORDERED_FPS:
        # Numbers or None: the loop above returned False for anything else.
        a, b = cast("tuple[float | None, float | None]", (obj[lower], obj[upper]))
        if a is not None and b is not None and a > b:
            return False
    return True


def row_errors(row: FleetRun) -> list[tuple[str, str]]:
    """Every (field, problem) of a row built in code (FleetStore.add_runs checks each: the API
    is a write path too)."""
    obj = row.as_json()
    return [] if _plainly_valid(obj) else field_errors(obj)


def _row_from_mapping(obj: RowObject) -> FleetRun:
    def num(v: float | None) -> float | None:
        return None if v is None else float(v)

    return FleetRun(
        certificate_id=obj["certificate_id"], run_index=int(obj["run_index"]),
        issued=obj["issued"], card_model=obj["card_model"], card_serial=obj["card_serial"],
        cohort=Cohort(obj["title"], obj["resolution"], obj["preset"], bool(obj["ray_tracing"]),
                      obj["upscaler"], obj["upscaler_mode"], bool(obj["frame_generation"]),
                      obj["frame_generation_mode"]),
        avg_fps=num(obj["avg_fps"]), low_1pct_fps=num(obj["low_1pct_fps"]),
        low_0_1pct_fps=num(obj["low_0_1pct_fps"]), consistency_gap=num(obj["consistency_gap"]),
        stutter=num(obj["stutter"]), fluidity_score=num(obj["fluidity_score"]),
        source=obj["source"],
    )


def runs_from_record(record: Record, *, source: str, where: str = "record.json") -> list[FleetRun]:
    """The fleet rows of a certificate record: its recorded runs (not-run runs never enter).

    Refuses a record that is not issuable (a draft or a refused certificate is not certified)
    and names the first field a fleet row cannot hold (an empty text, a negative index).
    """
    cert_id = record.certificate.id
    if not cert_id.strip():
        raise FleetError(f"expected a non-empty string, got {_describe(cert_id)}", file=where,
                         field="certificate.id")
    if not record.status.issuable or record.status.draft:
        raise FleetError(f"certificate {cert_id} is not issuable (a draft or refused "
                         "certificate); only issued certificates enter the fleet", file=where)
    if record.status.specimen or is_specimen_id(cert_id):
        raise FleetError(f"certificate {_shown(cert_id)} is a specimen (a sample laboratory's "
                         "certificate; no card was measured for it); a specimen never enters "
                         "the fleet", file=where)
    out: list[FleetRun] = []
    for pos, run in enumerate(record.runs):
        if run.status != "recorded":
            continue
        path = f"runs[{pos}]"
        metrics = run.metrics
        obj: dict[str, object] = {
            "certificate_id": cert_id, "run_index": run.index,
            "issued": record.certificate.issued,
            "card_model": record.card.model, "card_serial": record.card.serial,
            **{k: getattr(run, k) for k in Cohort._fields},
            # A record from before modes has none: off, or on with the mode not stated.
            "frame_generation_mode": run.frame_generation_mode if run.frame_generation
            else "off",
            **{m: None if metrics is None else getattr(metrics, m) for m in METRIC_NAMES},
            "source": source,
        }
        errors = field_errors(obj)
        if errors:
            # Name the field by its path in the record, not by its fleet column.
            field, problem = errors[0]
            record_path = {"certificate_id": "certificate.id", "run_index": f"{path}.index", "issued": "certificate.issued",
                           "card_model": "card.model", "card_serial": "card.serial",
                           **{m: f"{path}.metrics.{m}" for m in METRIC_NAMES}}
            raise FleetError(problem, file=where, field=record_path.get(field, f"{path}.{field}"))
        out.append(_row_from_mapping(valid_row(obj)))
    return out


SPECIMEN_PREFIX: Final = "SAMPLE-"
"""A certificate id beginning with this is a specimen (the pipeline refuses it under a lab
profile that is not a sample): no card was measured for it, so the fleet never holds it."""

SPECIMEN_REFUSAL: Final = ("a specimen certificate (an id beginning SAMPLE-: no card was "
                           "measured for it) never enters the fleet")


def is_specimen_id(certificate_id: str) -> bool:
    """True for a specimen's certificate id (SPECIMEN_PREFIX)."""
    return certificate_id.startswith(SPECIMEN_PREFIX)


class CaptureUse(NamedTuple):
    """One capture file behind a certificate: its SHA-256, the certificate and the file's path
    inside the bundle (what a refusal names)."""

    sha256: str
    certificate_id: str
    file: str


def captures_of(record: Record) -> list[CaptureUse]:
    """The capture files of a record's recorded runs, each SHA-256 once (in SHA-256 order); a
    capture archived as a first capture counts too, since it is a capture of the same card."""
    found: dict[str, str] = {}
    for run in record.runs:
        if run.capture is not None:
            found.setdefault(run.capture.sha256, run.capture.file)
        first = run.first_capture
        if first is not None and first.sha256_actual:
            found.setdefault(first.sha256_actual, first.file)
    return [CaptureUse(sha, record.certificate.id, found[sha]) for sha in sorted(found)]


@dataclass(frozen=True)
class Withdrawn:
    """The certificates a laboratory has revoked (its revocations.yaml or its registry's
    index.json): id -> the day it was withdrawn, and the list's name (what a refusal names)."""

    dates: Mapping[str, str]
    source: str

    def why(self, certificate_id: str) -> str | None:
        """The refusal's words for a revoked certificate, or None when it is not revoked."""
        day = self.dates.get(certificate_id)
        if day is None:
            return None
        return (f"certificate {_shown(certificate_id)} was revoked on {day} ({self.source}); a "
                "revoked certificate never enters the fleet or its calibration")


def record_source(data: bytes) -> str:
    """The `source` of rows added from a record: the SHA-256 of its written bytes."""
    return "record:sha256:" + hashlib.sha256(data).hexdigest()


