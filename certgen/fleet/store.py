"""The fleet database: SQLite (the embedded default) or PostgreSQL, one schema, ranking in SQL.

Both backends hold the same tables, reach the same schema version through the same ordered
steps, and answer with the same figures:
- `runs`: one row per recorded run (UNIQUE (certificate_id, run_index)), indexed per cohort and
  metric, so that "how many runs of this cohort does the value strictly beat" is an index range
  count;
- `cohort_stats`: per cohort and metric, n and the exact sum and sum of squares of the values
  (integers in units of 2**-1074 and 2**-2148, stored as hex text: SQL floats would round), kept
  up to date by every write in the same transaction;
- `cohorts`: per cohort, its run count and a content digest (the sum modulo 2**256 of a SHA-256
  per row, so it is updated by adding and subtracting rows) that the build cache keys on.

Ranking a run reads its cohort's aggregates, one index count per metric, and the certificate's
own rows of that cohort (left out of its cohort); no cohort is ever pulled into Python.
Writes run in one transaction per call, serialised (SQLite BEGIN IMMEDIATE; PostgreSQL a
transaction-level advisory lock), so concurrent writers from several processes lose nothing.
Import and export stream in batches: memory does not grow with the file.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Final, Self

from certgen.errors import FleetError, FleetImportError
from certgen.fleet.model import (
    METRIC_NAMES,
    RANKED_METRICS,
    Cohort,
    CohortSums,
    FleetRun,
    Rank,
    _dump_line,
    _row_from_mapping,
    _shown,
    exact_scaled,
    exact_scaled_square,
    is_server_url,
    parse_line,
    rank_from_sums,
    record_source,
    row_errors,
    runs_from_record,
)
from certgen.record import Rank as RecordRank
from certgen.record import Ranks, Record, RunMetrics, record_json

BATCH_ROWS: Final = 2000
"""Rows per executemany batch of an import, and per page of an export (bounded memory)."""

DIGEST_MOD: Final = 1 << 256


def _rekey_cohorts(conn: sqlite3.Connection) -> None:
    """Fill `cohort_key` from the cohort columns with Cohort.key() (one encoder, no drift)."""
    rows = conn.execute("SELECT rowid, title, resolution, preset, ray_tracing, upscaler, "
                        "upscaler_mode, frame_generation FROM runs").fetchall()
    for rowid, *fields in rows:
        conn.execute("UPDATE runs SET cohort_key = ? WHERE rowid = ?",
                     (_as_cohort(fields).key(), rowid))


def _fill_aggregates_sqlite(conn: sqlite3.Connection) -> None:
    _fill_aggregates(conn, "?")


def _fill_aggregates(conn: Any, mark: str) -> None:
    """Compute cohort_stats and cohorts from the rows already there (schema step 3).

    Streams the rows once; memory holds one aggregate per cohort and metric.
    """
    delta = _Delta()
    cur = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM runs")
    while True:
        chunk = cur.fetchmany(BATCH_ROWS)
        if not chunk:
            break
        for r in chunk:
            delta.add(_from_sql(r), 1)
    delta.flush(conn, mark)


Migration = str | Callable[[Any], None]

_METRIC_INDEXES: Final = tuple(
    f"CREATE INDEX runs_by_cohort_{m} ON runs (cohort_key, {m})" for m in METRIC_NAMES
)

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
    # 3: ranking in SQL: an index per (cohort, metric) for the counts, exact per-cohort sums for
    # the mean and spread, and a per-cohort digest for the build cache. The cohort-only index
    # is a prefix of each new one.
    (
        *_METRIC_INDEXES,
        "DROP INDEX runs_by_cohort",
        """
        CREATE TABLE cohort_stats (
            cohort_key TEXT    NOT NULL,
            metric     TEXT    NOT NULL,
            n          INTEGER NOT NULL,
            sum_x      TEXT    NOT NULL,
            sum_xx     TEXT    NOT NULL,
            PRIMARY KEY (cohort_key, metric)
        )
        """,
        """
        CREATE TABLE cohorts (
            cohort_key TEXT    NOT NULL PRIMARY KEY,
            runs       INTEGER NOT NULL,
            digest     TEXT    NOT NULL
        )
        """,
        _fill_aggregates_sqlite,
    ),
)
"""Ordered schema steps (SQL, or a function for data the SQL cannot derive exactly);
PRAGMA user_version = how many of them a file has applied. Never edit a released step: append.
PostgreSQL has the same steps in its own dialect (certgen.fleet.postgres.MIGRATIONS)."""

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


# ---------------------------------------------------------------------------------------------
# Aggregates maintained on write


_metric_values: Final = operator.attrgetter(*METRIC_NAMES)


def _row_digest(row: FleetRun, values: tuple[float | None, ...]) -> int:
    """What a row contributes to its cohort's digest: everything ranking reads of it."""
    text = repr((row.certificate_id, row.run_index, *values))
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")


class _Delta:
    """Changes to cohort_stats and cohorts made by one write, applied in its transaction."""

    def __init__(self) -> None:
        self.runs: dict[str, int] = {}
        self.digest: dict[str, int] = {}
        # (cohort_key, metric) -> [n, sum_x, sum_xx]
        self.stats: dict[tuple[str, str], list[int]] = {}

    def add(self, row: FleetRun, sign: int) -> None:
        key = row.cohort.key()
        values = _metric_values(row)
        self.runs[key] = self.runs.get(key, 0) + sign
        self.digest[key] = (self.digest.get(key, 0) + sign * _row_digest(row, values)) % DIGEST_MOD
        for name, value in zip(METRIC_NAMES, values):
            if value is None:
                continue
            acc = self.stats.get((key, name))
            if acc is None:
                acc = self.stats[(key, name)] = [0, 0, 0]
            acc[0] += sign
            acc[1] += sign * exact_scaled(value)
            acc[2] += sign * exact_scaled_square(value)

    def flush(self, conn: Any, mark: str) -> None:
        """Add the changes to the stored aggregates (inside the caller's write transaction)."""
        q = _marks(mark)
        for key in sorted(self.runs):
            found = conn.execute(q("SELECT runs, digest FROM cohorts WHERE cohort_key = ?"),
                                 (key,)).fetchone()
            runs, digest = (0, 0) if found is None else (int(found[0]), int(found[1], 16))
            runs += self.runs[key]
            digest = (digest + self.digest[key]) % DIGEST_MOD
            if runs == 0:
                conn.execute(q("DELETE FROM cohorts WHERE cohort_key = ?"), (key,))
                continue
            conn.execute(q("INSERT INTO cohorts (cohort_key, runs, digest) VALUES (?, ?, ?) "
                           "ON CONFLICT (cohort_key) DO UPDATE SET runs = excluded.runs, "
                           "digest = excluded.digest"), (key, runs, f"{digest:064x}"))
        for (key, name), (dn, dx, dxx) in sorted(self.stats.items()):
            found = conn.execute(q("SELECT n, sum_x, sum_xx FROM cohort_stats "
                                   "WHERE cohort_key = ? AND metric = ?"), (key, name)).fetchone()
            n, sx, sxx = (0, 0, 0) if found is None else (
                int(found[0]), int(found[1], 16), int(found[2], 16))
            n, sx, sxx = n + dn, sx + dx, sxx + dxx
            if n == 0:
                conn.execute(q("DELETE FROM cohort_stats WHERE cohort_key = ? AND metric = ?"),
                             (key, name))
                continue
            conn.execute(q("INSERT INTO cohort_stats (cohort_key, metric, n, sum_x, sum_xx) "
                           "VALUES (?, ?, ?, ?, ?) ON CONFLICT (cohort_key, metric) DO UPDATE "
                           "SET n = excluded.n, sum_x = excluded.sum_x, "
                           "sum_xx = excluded.sum_xx"), (key, name, n, f"{sx:x}", f"{sxx:x}"))
        self.runs.clear()
        self.digest.clear()
        self.stats.clear()


def _marks(mark: str) -> Callable[[str], str]:
    """Our SQL is written with `?` placeholders; psycopg wants `%s`."""
    if mark == "?":
        return lambda sql: sql
    return lambda sql: sql.replace("?", mark)


# ---------------------------------------------------------------------------------------------
# The store


class FleetStore:
    """The fleet database. Open with `FleetStore.open(location)`; use as a context manager.

    location: an SQLite file path, or a `postgresql://…` URL (needs the `postgres` extra).
    """

    def __init__(self, conn: Any, path: Path | str, min_cohort: int, *,
                 mark: str = "?", backend: str = "sqlite") -> None:
        self._conn = conn
        self.path = path
        """The file, or the server URL without its password (what messages print)."""
        self.min_cohort = min_cohort
        """The ranking minimum used when ranks_for is not given one (the rules file's)."""
        self.backend = backend
        """"sqlite" or "postgresql"."""
        self._q = _marks(mark)
        self._mark = mark

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, min_cohort: int | None = None, create: bool = True
    ) -> FleetStore:
        """Open (and create or migrate) the fleet at `path` (a file or a postgresql:// URL).

        min_cohort defaults to `ranking.min_cohort` of the default SOP rules file; the pipeline
        passes its own bundle's rules to `ranks_for` instead.
        """
        if min_cohort is None:
            from certgen.sop import load_rules

            min_cohort = load_rules().ranking_min_cohort
        if is_server_url(path):
            from certgen.fleet.postgres import connect

            conn, shown = connect(str(path))
            return cls(conn, shown, min_cohort, mark="%s", backend="postgresql")
        p = Path(path)
        where = str(p)
        if not create and not p.exists():
            raise FleetError("no such fleet database (run `certgen fleet add` or "
                             "`certgen fleet import` to create one)", file=where)
        if p.exists() and p.is_dir():
            raise FleetError("is a folder, expected an SQLite file", file=where)
        try:
            conn = sqlite3.connect(p, isolation_level=None, timeout=60.0)
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
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """How many schema steps the database has applied."""
        if self.backend == "sqlite":
            return int(self._conn.execute("PRAGMA user_version").fetchone()[0])
        return int(self._conn.execute("SELECT version FROM certgen_schema").fetchone()[0])

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(self._q(sql), tuple(params))

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        cur = self._conn.cursor()
        try:
            cur.executemany(self._q(sql), rows)
        finally:
            cur.close()

    def _begin_write(self) -> None:
        if self.backend == "sqlite":
            self._conn.execute("BEGIN IMMEDIATE")
        else:
            from certgen.fleet.postgres import begin_write

            begin_write(self._conn)

    def _begin_read(self) -> None:
        # One snapshot for all the queries of a read (counts and sums agree).
        if self.backend == "sqlite":
            self._conn.execute("BEGIN")
        else:
            self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")

    def _rollback(self) -> None:
        try:
            self._conn.execute("ROLLBACK")
        except Exception:
            pass

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
        """Insert rows in one transaction; identical rows are skipped, conflicting ones refused.

        Every row is checked as an imported line is (ranges and closed sets); any invalid row
        writes nothing: `where: certificate ID run N: field: problem`, one per problem."""
        rows = list(rows)
        problems = [f"{where}: certificate {_shown(r.certificate_id)} run {r.run_index}: "
                    f"{field}: {problem}" for r in rows for field, problem in row_errors(r)]
        if problems:
            raise FleetImportError(problems)
        delta = _Delta()
        self._begin_write()
        try:
            added, skipped, conflict = self._write_batch(rows, replace, where, delta)
            if conflict is not None:
                raise conflict
            delta.flush(self._conn, self._mark)
            self._conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
        return added, skipped

    def _existing(self, rows: Sequence[FleetRun]) -> dict[tuple[str, int], FleetRun]:
        ids = sorted({r.certificate_id for r in rows})
        out: dict[tuple[str, int], FleetRun] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            cur = self._execute(
                f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE certificate_id IN "
                f"({', '.join('?' * len(part))})", part)
            for found in cur.fetchall():
                row = _from_sql(found)
                out[(row.certificate_id, row.run_index)] = row
        return out

    def _write_batch(
        self, rows: Sequence[FleetRun], replace: bool, where: str, delta: _Delta
    ) -> tuple[int, int, FleetError | None]:
        """Write one batch (inside a write transaction); stop at the first conflict."""
        existing = self._existing(rows)
        inserts: list[tuple[Any, ...]] = []
        deletes: list[tuple[str, int]] = []
        added = skipped = 0
        for row in rows:
            key = (row.certificate_id, row.run_index)
            old = existing.get(key)
            if old is not None:
                if old.same_content(row):
                    skipped += 1
                    continue
                if not replace:
                    return added, skipped, FleetError(
                        f"certificate {row.certificate_id} run {row.run_index} is already in "
                        "the fleet with different figures or configuration; it was not "
                        "changed (use --replace to overwrite it)", file=where)
                deletes.append(key)
                delta.add(old, -1)
            inserts.append(_to_sql(row))
            delta.add(row, 1)
            added += 1
        if deletes:
            self._executemany("DELETE FROM runs WHERE certificate_id = ? AND run_index = ?",
                              deletes)
        if inserts:
            self._executemany(
                f"INSERT INTO runs ({', '.join(_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_COLUMNS))})", inserts)
        return added, skipped, None

    def import_jsonl(
        self, stream: IO[str], *, name: str = "fleet.jsonl", replace: bool = False
    ) -> tuple[int, int]:
        """Import an export, streaming: one transaction, rows written in batches.

        Every line is validated; any error imports nothing (the transaction is rolled back) and
        errors name the line and field: `fleet.jsonl:3: stutter: expected a number or null, got
        "abc"`. A key repeated inside the file is an error naming both lines. Memory holds one
        batch, whatever the file's size (the keys seen so far live in a temporary table).
        """
        errors: list[str] = []
        conflict: FleetError | None = None
        added = skipped = 0
        delta = _Delta()
        batch: list[tuple[FleetRun, int]] = []
        if self.backend == "sqlite":
            # A 64 MB page cache (not the 2 MB default) for the index updates of a large import:
            # a fixed bound, whatever the file's size.
            self._conn.execute("PRAGMA cache_size = -65536")
        self._begin_write()
        try:
            self._execute("CREATE TEMP TABLE import_seen (certificate_id TEXT NOT NULL, "
                          "run_index INTEGER NOT NULL, line INTEGER NOT NULL, "
                          "PRIMARY KEY (certificate_id, run_index))")

            def flush() -> None:
                nonlocal added, skipped, conflict
                rows = self._unrepeated(batch, name, errors)
                batch.clear()
                if errors or conflict is not None:
                    return  # nothing will be kept: only go on finding errors
                a, s, conflict = self._write_batch(rows, replace, name, delta)
                added += a
                skipped += s

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
                if row is not None:
                    batch.append((row, lineno))
                    if len(batch) >= BATCH_ROWS:
                        flush()
            flush()
            if errors:
                raise FleetImportError(errors)
            if conflict is not None:
                raise conflict
            delta.flush(self._conn, self._mark)
            self._execute("DROP TABLE import_seen")
            self._conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            if self.backend == "sqlite":
                self._conn.execute("DROP TABLE IF EXISTS temp.import_seen")
            raise
        return added, skipped

    def _unrepeated(
        self, batch: Sequence[tuple[FleetRun, int]], name: str, errors: list[str]
    ) -> list[FleetRun]:
        """The batch's rows whose key the file has not given before; repeats become errors."""
        if not batch:
            return []
        seen: dict[tuple[str, int], int] = {}
        ids = sorted({row.certificate_id for row, _ in batch})
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            cur = self._execute(
                "SELECT certificate_id, run_index, line FROM import_seen WHERE certificate_id "
                f"IN ({', '.join('?' * len(part))})", part)
            for cert, index, line in cur.fetchall():
                seen[(cert, int(index))] = int(line)
        rows: list[FleetRun] = []
        new: list[tuple[str, int, int]] = []
        for row, lineno in batch:
            key = (row.certificate_id, row.run_index)
            if key in seen:
                errors.append(f"{name}:{lineno}: certificate {key[0]} run {key[1]} is repeated "
                              f"(first on line {seen[key]})")
                continue
            seen[key] = lineno
            new.append((key[0], key[1], lineno))
            rows.append(row)
        self._executemany("INSERT INTO import_seen (certificate_id, run_index, line) "
                          "VALUES (?, ?, ?)", new)
        return rows

    # -- reading -------------------------------------------------------------------------------

    def iter_runs(self) -> Iterator[FleetRun]:
        """Every row, ordered by (certificate_id, run_index), read page by page (keyset)."""
        cols = ", ".join(_COLUMNS)
        last: tuple[str, int] | None = None
        while True:
            if last is None:
                cur = self._execute(f"SELECT {cols} FROM runs ORDER BY certificate_id, "
                                    f"run_index LIMIT {BATCH_ROWS}")
            else:
                cur = self._execute(
                    f"SELECT {cols} FROM runs WHERE certificate_id > ? OR "
                    f"(certificate_id = ? AND run_index > ?) ORDER BY certificate_id, run_index "
                    f"LIMIT {BATCH_ROWS}", (last[0], last[0], last[1]))
            page = cur.fetchall()
            for found in page:
                yield _from_sql(found)
            if len(page) < BATCH_ROWS:
                return
            last = (page[-1][0], int(page[-1][1]))

    def runs(self) -> list[FleetRun]:
        """Every row, ordered by (certificate_id, run_index): a unique, stable order."""
        return list(self.iter_runs())

    def run_count(self) -> int:
        """How many runs the fleet holds (`fleet.fleet_runs` of a record)."""
        found = self._execute("SELECT COALESCE(SUM(runs), 0) FROM cohorts").fetchone()
        return int(found[0])

    def cohorts(self) -> list[tuple[Cohort, int]]:
        """Every cohort with its size, largest first, then by configuration (a unique order)."""
        cur = self._execute("SELECT cohort_key, runs FROM cohorts")
        out = [(_as_cohort(json.loads(key)), int(n)) for key, n in cur.fetchall()]
        out.sort(key=lambda cs: (-cs[1], _cohort_sort_key(cs[0])))
        return out

    def cohort_digest(self, cohorts: Iterable[Sequence[Any]]) -> str:
        """A digest of the fleet content of these cohorts (what their ranks can depend on).

        Changes when a run of one of them is added, replaced or removed, and only then: the
        build cache keys each bundle on the digest of its own cohorts.
        """
        keys = sorted({_as_cohort(c).key() for c in cohorts})
        digest = hashlib.sha256()
        for key in keys:
            found = self._execute("SELECT runs, digest FROM cohorts WHERE cohort_key = ?",
                                  (key,)).fetchone()
            state = "-" if found is None else f"{int(found[0])}:{found[1]}"
            digest.update(f"{key}\0{state}\0".encode())
        return digest.hexdigest()

    def cohort_values(self, cohort: Sequence[Any], certificate_id: str) -> dict[str, list[float]]:
        """Per metric, the non-null values of the cohort's runs from other certificates.

        Pulls the whole cohort: for audits and tests (the reference for ranks_for), never used
        by ranking itself.
        """
        key = _as_cohort(cohort).key()
        cur = self._execute(
            f"SELECT {', '.join(METRIC_NAMES)} FROM runs "
            "WHERE cohort_key = ? AND certificate_id != ? ORDER BY certificate_id, run_index",
            (key, certificate_id),
        )
        values: dict[str, list[float]] = {m: [] for m in METRIC_NAMES}
        for row in cur.fetchall():
            for name, v in zip(METRIC_NAMES, row, strict=True):
                if v is not None:
                    values[name].append(float(v))
        return values

    def _ranks(
        self, cohort: Sequence[Any], metrics: Mapping[str, Any], certificate_id: str,
        minimum: int,
    ) -> dict[str, Rank]:
        """Rank every metric the run has a value for, in SQL (see the module docstring)."""
        key = _as_cohort(cohort).key()
        wanted = [(m, float(metrics[m.name])) for m in RANKED_METRICS
                  if metrics.get(m.name) is not None]
        out: dict[str, Rank] = {}
        if not wanted:
            return out
        self._begin_read()
        try:
            stats = {
                name: (int(n), int(sx, 16), int(sxx, 16))
                for name, n, sx, sxx in self._execute(
                    "SELECT metric, n, sum_x, sum_xx FROM cohort_stats WHERE cohort_key = ?",
                    (key,)).fetchall()
            }
            # By certificate only (its unique index; a few rows), the cohort filtered here: with
            # the cohort in the WHERE clause a planner may walk the cohort's index instead.
            own = [r[1:] for r in self._execute(
                f"SELECT cohort_key, {', '.join(METRIC_NAMES)} FROM runs "
                "WHERE certificate_id = ?", (certificate_id,)).fetchall() if r[0] == key]
            for m, value in wanted:
                n, sx, sxx = stats.get(m.name, (0, 0, 0))
                mine = [float(r[METRIC_NAMES.index(m.name)]) for r in own
                        if r[METRIC_NAMES.index(m.name)] is not None]
                n -= len(mine)
                sx -= sum(exact_scaled(v) for v in mine)
                sxx -= sum(exact_scaled_square(v) for v in mine)
                beaten = 0
                if n > 0 and n + 1 >= minimum:
                    # Others this value strictly beats: an index range count, minus our own.
                    op = ">" if m.lower_is_better else "<"
                    found = self._execute(
                        f"SELECT COUNT(*) FROM runs WHERE cohort_key = ? AND {m.name} {op} ?",
                        (key, value)).fetchone()
                    mine_beaten = sum(1 for o in mine
                                      if (value < o if m.lower_is_better else value > o))
                    beaten = int(found[0]) - mine_beaten
                out[m.name] = rank_from_sums(value, CohortSums(n, beaten, sx, sxx),
                                             min_cohort=minimum, mean_decimals=m.mean_decimals)
            self._conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
        return out

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
        ranks = self._ranks(cohort, metrics, certificate_id, minimum)
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
        ranks = self._ranks(cohort, values, certificate_id, minimum)
        return Ranks(**{
            name: RecordRank(percentile=r.percentile, n=r.n, cohort_mean=r.cohort_mean, z=r.z)
            for name, r in ranks.items()
        })

    def export_jsonl(self, stream: IO[str]) -> int:
        """Write every row as one JSON line, ordered by (certificate_id, run_index), streaming
        page by page from one snapshot."""
        count = 0
        self._begin_read()
        try:
            for row in self.iter_runs():
                stream.write(_dump_line(row) + "\n")
                count += 1
            self._conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise
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
            int(c.frame_generation), *_metric_values(row), row.source, c.key())


def _from_sql(r: Sequence[Any]) -> FleetRun:
    obj = dict(zip(_COLUMNS, r, strict=True))
    obj["ray_tracing"] = bool(obj["ray_tracing"])
    obj["frame_generation"] = bool(obj["frame_generation"])
    return _row_from_mapping(obj)
