"""The fleet store: every recorded run of every certified card, its cohort, and ranking.

Storage (docs/spec/rules.md, "Cohorts and ranking"): one SQLite file (stdlib sqlite3), one row per
recorded run with its cohort key, the card and the six ranked metrics. Not-run runs never enter.

Where the file is (`fleet_path`): `--fleet PATH` if given, else the environment variable
CERTGEN_FLEET, else `fleet.sqlite` in the current directory (DEFAULT_FLEET_FILE).

Schema: versioned with `PRAGMA user_version` and an ordered list of migration steps (MIGRATIONS);
opening a file applies the steps it lacks, in one transaction. A file newer than this certgen is
refused rather than guessed at.

Adding is idempotent: a row is keyed by (certificate_id, run_index) (UNIQUE). Adding the same
certificate again skips rows that are already there with the same content, so a certificate is
never counted twice. A row with the same key but different content (cohort, card or metrics) is
refused, not overwritten and not silently ignored: an issued certificate does not change, so a
difference means a re-used id or an edited record, which a person must look at. `replace=True`
(`certgen fleet add --replace`) overwrites such rows on purpose.

Ranking decisions (documented here, stated by tests/test_fleet_rank.py):
- The cohort of a run is its own configuration key. It holds the run itself plus every fleet run
  of the same key from *other* certificates (the certificate's own runs are left out, so a
  re-check of an already-added certificate never ranks against itself).
- `n` is the size of that cohort *including the run itself*: the number shown in
  "Provisional · n = X". A percentile is published when n >= the rules' ranking minimum (30 in
  SOP v1.1), i.e. when 29 other runs exist.
- percentile = 100 * (other runs this run strictly beats) / (n - 1), 1 decimal. A tie is not a
  win (no half credit): "better than P% of the cohort" stays literally true. For consistency_gap
  and stutter a lower value beats a higher one, so a higher percentile is always better.
- cohort_mean and z are over the same n values (the run included); z uses the population
  standard deviation (the cohort is the whole fleet population of that configuration, not a
  sample of it); z keeps the metric's own sign (z > 0 means above the cohort mean, for g and s
  too) so that a reader can re-derive it from the mean; a zero spread gives z = null.
- Below the minimum: percentile, cohort_mean and z are null, n is the real count.
- A NULL metric is never 0: a run without a value is not ranked on that metric (no entry in its
  `ranks`) and does not enter other runs' cohorts for that metric.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, NamedTuple, Self

from certgen.errors import FleetError
from certgen.errors import FleetImportError as FleetImportError  # re-exported (moved)
from certgen.metrics import round_half_away
from certgen.record import FleetSection, Ranks, Record, RunMetrics, record_json
from certgen.record import Rank as RecordRank
from certgen.record import Run as RecordRun

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


class Cohort(NamedTuple):
    """The configuration key: runs are ranked only against runs with an identical one."""

    title: str
    resolution: str
    preset: str
    ray_tracing: bool
    upscaler: str
    upscaler_mode: str | None
    frame_generation: bool

    def key(self) -> str:
        """An unambiguous text key (a JSON array), stored and indexed in the database."""
        return json.dumps(list(self), ensure_ascii=False, separators=(",", ":"))

    def label(self) -> str:
        """One readable line: `Cyberpunk 2077 · 2560x1440 · Ultra · RT off · upscaler none …`."""
        mode = f" {self.upscaler_mode}" if self.upscaler_mode else ""
        return (
            f"{self.title} · {self.resolution} · {self.preset} · "
            f"RT {'on' if self.ray_tracing else 'off'} · upscaler {self.upscaler}{mode} · "
            f"FG {'on' if self.frame_generation else 'off'}"
        )


def fleet_path(option: str | os.PathLike[str] | None = None) -> Path:
    """--fleet if given, else $CERTGEN_FLEET, else ./fleet.sqlite."""
    if option:
        return Path(option)
    env = os.environ.get(FLEET_ENV)
    if env:
        return Path(env)
    return Path(DEFAULT_FLEET_FILE)


# ---------------------------------------------------------------------------------------------
# Ranking (pure)


@dataclass(frozen=True)
class Rank:
    """A run's standing in its cohort for one metric (`runs[].ranks.<metric>` in record.json).

    percentile: share of the other cohort runs it strictly beats, higher is better (null below
    the minimum); n: cohort size including the run; cohort_mean, z: over those n values.
    """

    percentile: float | None
    n: int
    cohort_mean: float | None
    z: float | None

    @property
    def published(self) -> bool:
        """True when the cohort reached the minimum and the percentile is shown."""
        return self.percentile is not None

    def as_json(self) -> dict[str, float | int | None]:
        """The pinned shape {percentile, n, cohort_mean, z}."""
        return {"percentile": self.percentile, "n": self.n, "cohort_mean": self.cohort_mean,
                "z": self.z}


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


def rank_run(
    metrics: Mapping[str, Any],
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


def fleet_section(runs: Iterable[RecordRun], *, fleet_runs: int | None = None) -> FleetSection:
    """The certificate's fleet section from its record runs (docs/spec/rules.md, Certificate means).

    mean_consistency_gap / mean_stutter: means over the recorded runs with a value (4 decimals);
    median_percentile: median of the published per-run fluidity_score percentiles (1 decimal),
    null when none is published; cohort_mean: always null (runs of different cohorts are not
    pooled, the document prints "—"); ranked_runs / provisional_runs: runs whose fluidity_score
    rank is published / provisional; fleet_runs: the fleet's size when known.
    """
    gaps: list[float] = []
    stutters: list[float] = []
    percentiles: list[float] = []
    ranked = provisional = 0
    for run in runs:
        if run.status != "recorded":
            continue
        metrics = run.metrics
        if metrics is not None and metrics.consistency_gap is not None:
            gaps.append(metrics.consistency_gap)
        if metrics is not None and metrics.stutter is not None:
            stutters.append(metrics.stutter)
        rank = None if run.ranks is None else run.ranks.fluidity_score
        if rank is None:
            continue
        if rank.percentile is not None:
            ranked += 1
            percentiles.append(rank.percentile)
        else:
            provisional += 1

    def mean4(values: list[float]) -> float | None:
        return round_half_away(math.fsum(values) / len(values), 4) if values else None

    return FleetSection(
        mean_consistency_gap=mean4(gaps),
        mean_stutter=mean4(stutters),
        median_percentile=(
            round_half_away(float(statistics.median(percentiles)), 1) if percentiles else None
        ),
        cohort_mean=None,
        ranked_runs=ranked,
        provisional_runs=provisional,
        fleet_runs=fleet_runs,
    )


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

    def _content(self) -> tuple[Any, ...]:
        return (self.certificate_id, self.run_index, self.issued, self.card_model,
                self.card_serial, self.cohort, *(self.metric(m) for m in METRIC_NAMES))

    def as_json(self) -> dict[str, Any]:
        """The export line's object, keys in a fixed order (JSONL_FIELDS)."""
        c = self.cohort
        return {
            "certificate_id": self.certificate_id, "run_index": self.run_index,
            "issued": self.issued, "card_model": self.card_model, "card_serial": self.card_serial,
            "title": c.title, "resolution": c.resolution, "preset": c.preset,
            "ray_tracing": c.ray_tracing, "upscaler": c.upscaler, "upscaler_mode": c.upscaler_mode,
            "frame_generation": c.frame_generation,
            **{m: self.metric(m) for m in METRIC_NAMES},
            "source": self.source,
        }


JSONL_FIELDS: Final = (
    "certificate_id", "run_index", "issued", "card_model", "card_serial",
    *Cohort._fields, *METRIC_NAMES, "source",
)
"""Every line of an export holds exactly these keys, in this order."""


def _dump_line(run: FleetRun) -> str:
    return json.dumps(run.as_json(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def field_errors(obj: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every (field, problem) of one fleet row object; empty when it is valid."""
    errors: list[tuple[str, str]] = []
    for key in obj:
        if key not in JSONL_FIELDS:
            errors.append((key, "unknown field"))
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

    for key in ("certificate_id", "card_model", "card_serial", "title", "resolution", "preset",
                "upscaler", "source"):
        text(key)
    text("issued", nullable=True)
    text("upscaler_mode", nullable=True)
    for key in ("ray_tracing", "frame_generation"):
        if key in obj and not isinstance(obj[key], bool):
            errors.append((key, f"expected true or false, got {_describe(obj[key])}"))
    if "run_index" in obj:
        v = obj["run_index"]
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            errors.append(("run_index", f"expected an integer >= 0, got {_describe(v)}"))
    for name in METRIC_NAMES:
        v = obj.get(name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            errors.append((name, f"expected a number or null, got {_describe(v)}"))
    return errors


def parse_line(obj: Any, where: str) -> tuple[FleetRun | None, list[str]]:
    """Validate one decoded JSONL object; return the row or every error (`where: field: …`)."""
    if not isinstance(obj, dict):
        return None, [f"{where}: expected a JSON object, got {_describe(obj)}"]
    errors = field_errors(obj)
    if errors:
        return None, [f"{where}: {field}: {problem}" for field, problem in errors]
    return _row_from_mapping(obj), []


def _row_from_mapping(obj: Mapping[str, Any]) -> FleetRun:
    def num(key: str) -> float | None:
        v = obj[key]
        return None if v is None else float(v)

    return FleetRun(
        certificate_id=obj["certificate_id"], run_index=int(obj["run_index"]),
        issued=obj["issued"], card_model=obj["card_model"], card_serial=obj["card_serial"],
        cohort=Cohort(obj["title"], obj["resolution"], obj["preset"], bool(obj["ray_tracing"]),
                      obj["upscaler"], obj["upscaler_mode"], bool(obj["frame_generation"])),
        avg_fps=num("avg_fps"), low_1pct_fps=num("low_1pct_fps"),
        low_0_1pct_fps=num("low_0_1pct_fps"), consistency_gap=num("consistency_gap"),
        stutter=num("stutter"), fluidity_score=num("fluidity_score"), source=obj["source"],
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
            **{m: None if metrics is None else getattr(metrics, m) for m in METRIC_NAMES},
            "source": source,
        }
        errors = field_errors(obj)
        if errors:
            # Name the field by its path in the record, not by its fleet column.
            field, problem = errors[0]
            record_path = {"run_index": f"{path}.index", "issued": "certificate.issued",
                           "card_model": "card.model", "card_serial": "card.serial",
                           **{m: f"{path}.metrics.{m}" for m in METRIC_NAMES}}
            raise FleetError(problem, file=where, field=record_path.get(field, f"{path}.{field}"))
        out.append(_row_from_mapping(obj))
    return out


def record_source(data: bytes) -> str:
    """The `source` of rows added from a record: the SHA-256 of its written bytes."""
    return "record:sha256:" + hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------
# The SQLite store

def _rekey_cohorts(conn: sqlite3.Connection) -> None:
    """Fill `cohort_key` from the cohort columns with Cohort.key() (one encoder, no drift)."""
    rows = conn.execute("SELECT rowid, title, resolution, preset, ray_tracing, upscaler, "
                        "upscaler_mode, frame_generation FROM runs").fetchall()
    for rowid, *fields in rows:
        conn.execute("UPDATE runs SET cohort_key = ? WHERE rowid = ?",
                     (_as_cohort(fields).key(), rowid))


Migration = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: Final[tuple[tuple[Migration, ...], ...]] = (
    # 1: one row per recorded run, keyed by (certificate_id, run_index).
    ("""
    CREATE TABLE runs (
        certificate_id   TEXT    NOT NULL,
        run_index        INTEGER NOT NULL,
        card_model       TEXT    NOT NULL,
        card_serial      TEXT    NOT NULL,
        title            TEXT    NOT NULL,
        resolution       TEXT    NOT NULL,
        preset           TEXT    NOT NULL,
        ray_tracing      INTEGER NOT NULL CHECK (ray_tracing IN (0, 1)),
        upscaler         TEXT    NOT NULL,
        upscaler_mode    TEXT,
        frame_generation INTEGER NOT NULL CHECK (frame_generation IN (0, 1)),
        avg_fps          REAL,
        low_1pct_fps     REAL,
        low_0_1pct_fps   REAL,
        consistency_gap  REAL,
        stutter          REAL,
        fluidity_score   REAL,
        UNIQUE (certificate_id, run_index)
    )
    """,),
    # 2: provenance (record SHA-256 or import), the certificate date, and an indexed cohort key
    # so that ranking reads one cohort, not the whole fleet.
    (
        "ALTER TABLE runs ADD COLUMN issued TEXT",
        "ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'unknown'",
        "ALTER TABLE runs ADD COLUMN cohort_key TEXT NOT NULL DEFAULT ''",
        _rekey_cohorts,
        "CREATE INDEX runs_by_cohort ON runs (cohort_key)",
    ),
)
"""Ordered schema steps (SQL, or a function for data the SQL cannot derive exactly);
PRAGMA user_version = how many of them a file has applied. Never edit a released step: append."""

SCHEMA_VERSION: Final = len(MIGRATIONS)

_COLUMNS: Final = (
    "certificate_id", "run_index", "issued", "card_model", "card_serial", *Cohort._fields,
    *METRIC_NAMES, "source", "cohort_key",
)


def migrate(conn: sqlite3.Connection, *, where: str, target: int = SCHEMA_VERSION) -> int:
    """Apply the missing migration steps up to `target`; return the version found before."""
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        raise FleetError(f"fleet schema version {found} is newer than this certgen supports "
                         f"({SCHEMA_VERSION}); upgrade certgen", file=where)
    if found >= target:
        return found
    try:
        conn.execute("BEGIN IMMEDIATE")
        # Re-read inside the write lock: another process may have migrated meanwhile.
        current = int(conn.execute("PRAGMA user_version").fetchone()[0])
        for version in range(current + 1, target + 1):
            for step in MIGRATIONS[version - 1]:
                if isinstance(step, str):
                    conn.execute(step)
                else:
                    step(conn)
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return found


class FleetStore:
    """The fleet database. Open with `FleetStore.open(path)`; use as a context manager."""

    def __init__(self, conn: sqlite3.Connection, path: Path, min_cohort: int) -> None:
        self._conn = conn
        self.path = path
        self.min_cohort = min_cohort
        """The ranking minimum used when ranks_for is not given one (the rules file's)."""

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, min_cohort: int | None = None, create: bool = True
    ) -> FleetStore:
        """Open (and create or migrate) the fleet file at `path`.

        min_cohort defaults to `ranking.min_cohort` of the default SOP rules file; the pipeline
        passes its own bundle's rules to `ranks_for` instead.
        """
        p = Path(path)
        where = str(p)
        if not create and not p.exists():
            raise FleetError("no such fleet database (run `certgen fleet add` or "
                             "`certgen fleet import` to create one)", file=where)
        if p.exists() and p.is_dir():
            raise FleetError("is a folder, expected an SQLite file", file=where)
        if min_cohort is None:
            from certgen.sop import load_rules

            min_cohort = load_rules().ranking_min_cohort
        try:
            conn = sqlite3.connect(p, isolation_level=None, timeout=30.0)
        except sqlite3.Error as exc:
            raise FleetError(f"cannot open the fleet database: {exc}", file=where) from None
        try:
            migrate(conn, where=where)
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise FleetError(f"not a fleet database ({exc})", file=where) from None
        except BaseException:
            conn.close()
            raise
        return cls(conn, p, min_cohort)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    # -- writing -------------------------------------------------------------------------------

    def add_record(
        self, record: Record, *, source: str | None = None, replace: bool = False,
        where: str = "record.json",
    ) -> tuple[int, int]:
        """Add a certificate record's recorded runs; return (added, skipped).

        source defaults to the SHA-256 of the record's canonical JSON; the CLI passes the SHA-256
        of the record.json bytes it read.
        """
        if source is None:
            canonical = json.dumps(record_json(record), ensure_ascii=False,
                                   sort_keys=True).encode("utf-8")
            source = record_source(canonical)
        rows = runs_from_record(record, source=source, where=where)
        return self.add_runs(rows, replace=replace, where=where)

    def add_runs(
        self, rows: Sequence[FleetRun], *, replace: bool = False, where: str = "fleet"
    ) -> tuple[int, int]:
        """Insert rows in one transaction; identical rows are skipped, conflicting ones refused."""
        added = skipped = 0
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for row in rows:
                existing = self._get(row.certificate_id, row.run_index)
                if existing is not None:
                    if existing.same_content(row):
                        skipped += 1
                        continue
                    if not replace:
                        raise FleetError(
                            f"certificate {row.certificate_id} run {row.run_index} is already in "
                            "the fleet with different figures or configuration; it was not "
                            "changed (use --replace to overwrite it)", file=where)
                    conn.execute("DELETE FROM runs WHERE certificate_id = ? AND run_index = ?",
                                 (row.certificate_id, row.run_index))
                conn.execute(
                    f"INSERT INTO runs ({', '.join(_COLUMNS)}) "
                    f"VALUES ({', '.join('?' * len(_COLUMNS))})",
                    _to_sql(row),
                )
                added += 1
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return added, skipped

    def import_jsonl(
        self, stream: IO[str], *, name: str = "fleet.jsonl", replace: bool = False
    ) -> tuple[int, int]:
        """Import an export: every line is validated first; any error imports nothing.

        Errors name the line and field: `fleet.jsonl:3: stutter: expected a number or null, got
        "abc"`. A key repeated inside the file is an error naming both lines.
        """
        rows: list[FleetRun] = []
        errors: list[str] = []
        seen: dict[tuple[str, int], int] = {}
        for lineno, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            where = f"{name}:{lineno}"
            try:
                obj = json.loads(line, parse_constant=_refuse_constant)
            except (json.JSONDecodeError, ValueError) as exc:
                msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                errors.append(f"{where}: not valid JSON ({msg})")
                continue
            row, line_errors = parse_line(obj, where)
            errors.extend(line_errors)
            if row is None:
                continue
            key = (row.certificate_id, row.run_index)
            if key in seen:
                errors.append(f"{where}: certificate {key[0]} run {key[1]} is repeated "
                              f"(first on line {seen[key]})")
                continue
            seen[key] = lineno
            rows.append(row)
        if errors:
            raise FleetImportError(errors)
        return self.add_runs(rows, replace=replace, where=name)

    # -- reading -------------------------------------------------------------------------------

    def _get(self, certificate_id: str, run_index: int) -> FleetRun | None:
        cur = self._conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE certificate_id = ? AND run_index = ?",
            (certificate_id, run_index),
        )
        found = cur.fetchone()
        return None if found is None else _from_sql(found)

    def runs(self) -> list[FleetRun]:
        """Every row, ordered by (certificate_id, run_index): a unique, stable order."""
        cur = self._conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM runs ORDER BY certificate_id, run_index")
        return [_from_sql(r) for r in cur]

    def run_count(self) -> int:
        """How many runs the fleet holds (`fleet.fleet_runs` of a record)."""
        return int(self._conn.execute("SELECT count(*) FROM runs").fetchone()[0])

    def cohorts(self) -> list[tuple[Cohort, int]]:
        """Every cohort with its size, largest first, then by configuration (a unique order)."""
        cur = self._conn.execute(
            "SELECT title, resolution, preset, ray_tracing, upscaler, upscaler_mode, "
            "frame_generation, count(*) FROM runs GROUP BY cohort_key")
        out = [(Cohort(r[0], r[1], r[2], bool(r[3]), r[4], r[5], bool(r[6])), int(r[7]))
               for r in cur]
        out.sort(key=lambda cs: (-cs[1], _cohort_sort_key(cs[0])))
        return out

    def cohort_values(self, cohort: Sequence[Any], certificate_id: str) -> dict[str, list[float]]:
        """Per metric, the non-null values of the cohort's runs from other certificates."""
        key = _as_cohort(cohort).key()
        cur = self._conn.execute(
            f"SELECT {', '.join(METRIC_NAMES)} FROM runs "
            "WHERE cohort_key = ? AND certificate_id != ? ORDER BY certificate_id, run_index",
            (key, certificate_id),
        )
        values: dict[str, list[float]] = {m: [] for m in METRIC_NAMES}
        for row in cur:
            for name, v in zip(METRIC_NAMES, row, strict=True):
                if v is not None:
                    values[name].append(float(v))
        return values

    def ranks_for(
        self,
        cohort: Sequence[Any],
        metrics: Mapping[str, Any],
        certificate_id: str,
        *,
        min_cohort: int | None = None,
    ) -> dict[str, dict[str, float | int | None]]:
        """`runs[].ranks` of one run: {metric: {percentile, n, cohort_mean, z}}.

        cohort: (title, resolution, preset, ray_tracing, upscaler, upscaler_mode,
        frame_generation); metrics: the run's metrics (nulls allowed); the certificate's own
        runs are left out of the cohort. min_cohort: the bundle's rules (default: the store's).
        """
        minimum = self.min_cohort if min_cohort is None else min_cohort
        ranks = rank_run(metrics, self.cohort_values(cohort, certificate_id), min_cohort=minimum)
        return {name: rank.as_json() for name, rank in ranks.items()}

    def run_ranks(
        self,
        cohort: Sequence[str | bool | None],
        metrics: RunMetrics,
        certificate_id: str,
        *,
        min_cohort: int | None = None,
    ) -> Ranks:
        """`runs[].ranks` of one run as the record holds it (see ranks_for)."""
        minimum = self.min_cohort if min_cohort is None else min_cohort
        values = {m: getattr(metrics, m) for m in METRIC_NAMES}
        ranks = rank_run(values, self.cohort_values(cohort, certificate_id), min_cohort=minimum)
        return Ranks(**{
            name: RecordRank(percentile=r.percentile, n=r.n, cohort_mean=r.cohort_mean, z=r.z)
            for name, r in ranks.items()
        })

    def export_jsonl(self, stream: IO[str]) -> int:
        """Write every row as one JSON line, ordered by (certificate_id, run_index)."""
        count = 0
        for row in self.runs():
            stream.write(_dump_line(row) + "\n")
            count += 1
        return count


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _as_cohort(cohort: Sequence[Any]) -> Cohort:
    if isinstance(cohort, Cohort):
        return cohort
    if len(cohort) != len(Cohort._fields):
        raise ValueError(f"a cohort has {len(Cohort._fields)} fields, got {cohort!r}")
    t, r, p, rt, up, mode, fg = cohort
    return Cohort(str(t), str(r), str(p), bool(rt), str(up), None if mode is None else str(mode),
                  bool(fg))


def _cohort_sort_key(c: Cohort) -> tuple[Any, ...]:
    return (c.title, _pixels(c.resolution), c.resolution, c.preset, c.ray_tracing, c.upscaler,
            c.upscaler_mode or "", c.frame_generation)


def _pixels(resolution: str) -> int:
    w, _, h = resolution.partition("x")
    try:
        return int(w) * int(h)
    except ValueError:
        return 0


def _to_sql(row: FleetRun) -> tuple[Any, ...]:
    c = row.cohort
    return (row.certificate_id, row.run_index, row.issued, row.card_model, row.card_serial,
            c.title, c.resolution, c.preset, int(c.ray_tracing), c.upscaler, c.upscaler_mode,
            int(c.frame_generation), *(row.metric(m) for m in METRIC_NAMES), row.source,
            c.key())


def _from_sql(r: Sequence[Any]) -> FleetRun:
    obj = dict(zip(_COLUMNS, r, strict=True))
    obj["ray_tracing"] = bool(obj["ray_tracing"])
    obj["frame_generation"] = bool(obj["frame_generation"])
    return _row_from_mapping(obj)
