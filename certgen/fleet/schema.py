"""The fleet's SQL schema and what every backend shares: the tables and their migrations, the
per-cohort aggregates kept beside the rows (one `_Delta` for SQLite and PostgreSQL), the row
encoding and the messages both backends print. certgen.fleet.store (SQLite, and the store
itself) and certgen.fleet.postgres both build on it; neither imports the other's internals.
"""


from __future__ import annotations

import hashlib
import operator
import sqlite3
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, Protocol

from certgen.errors import FleetError
from certgen.fleet.model import (
    LOCK_TIMEOUT_ENV,
    METRIC_NAMES,
    FleetRun,
    _plainly_valid,
    _row_from_mapping,
    _shown,
    exact_scaled,
    exact_scaled_square,
    field_errors,
    valid_row,
)
from certgen.model.cohort import FRAME_GENERATION_MODES, Cohort
from certgen.support.untrusted import escape_invisible, shorten


class Cursor(Protocol):
    """What the fleet uses of a DB-API cursor (sqlite3.Cursor, psycopg.Cursor).

    A row is a tuple of SQL values, typed `tuple[Any, ...]` as both drivers type it (sqlite3's
    fetchone returns Any, psycopg's TupleRow is tuple[Any, ...]): what a value is depends on
    what the file or server holds (str, int, float, bytes, None; PostgreSQL's NUMERIC a
    Decimal), so each one is converted or checked where it is read (_from_sql, _Delta.flush,
    the _stored_* helpers of certgen.fleet.store), and a damaged one fails there.
    """

    def fetchone(self) -> tuple[Any, ...] | None: ...

    def fetchall(self) -> Sequence[tuple[Any, ...]]: ...

    def fetchmany(self, size: int, /) -> Sequence[tuple[Any, ...]]: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[object]], /) -> object: ...

    def close(self) -> None: ...


class Connection(Protocol):
    """What both backends use of a connection (sqlite3.Connection, psycopg.Connection); SQL
    is written with `?` placeholders and turned into psycopg's `%s` by _marks."""

    def execute(self, sql: str, params: Sequence[object] = ..., /) -> Cursor: ...

    def cursor(self) -> Cursor: ...

    def close(self) -> None: ...


BATCH_ROWS: Final = 2000
"""Rows per executemany batch of an import, and per page of an export (bounded memory)."""


DIGEST_MOD: Final = 1 << 256


def _rekey_cohorts(conn: sqlite3.Connection) -> None:
    """Fill `cohort_key` from the cohort columns with Cohort.key() (one encoder, no drift)."""
    rows = conn.execute("SELECT rowid, title, resolution, preset, ray_tracing, upscaler, "
                        "upscaler_mode, frame_generation FROM runs").fetchall()
    for rowid, *fields in rows:
        conn.execute("UPDATE runs SET cohort_key = ? WHERE rowid = ?",
                     (columns_cohort(fields).key(), rowid))


def _fill_aggregates_sqlite(conn: sqlite3.Connection) -> None:
    _fill_aggregates(conn, "?")


def _fill_aggregates(conn: Connection, mark: str) -> None:
    """Compute cohort_stats and cohorts from the rows already there (schema step 3).

    Streams the rows once; memory holds one aggregate per cohort and metric.
    """
    delta = _Delta()
    # The columns of step 3's schema: the mode column comes in step 4 (the derived mode gives
    # the same key).
    columns = tuple(c for c in _COLUMNS if c != "frame_generation_mode")
    cur = conn.execute(f"SELECT {', '.join(columns)} FROM runs")
    while True:
        chunk = cur.fetchmany(BATCH_ROWS)
        if not chunk:
            break
        for r in chunk:
            delta.add(_from_sql(r, "the fleet", columns), 1)
    delta.flush(conn, mark)


Migration = str | Callable[[sqlite3.Connection], None]


MODE_LIST: Final = ", ".join(f"'{m}'" for m in FRAME_GENERATION_MODES)
"""The modes a row's frame_generation_mode may hold (SQL text for a CHECK)."""


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
    # 4: the capture files behind each certificate (issue 39), so that one capture never
    # certifies two certificates; keyed by SHA-256 first, so the check is an index lookup.
    ("""
    CREATE TABLE captures (
        sha256         TEXT NOT NULL,
        certificate_id TEXT NOT NULL,
        file           TEXT NOT NULL,
        PRIMARY KEY (sha256, certificate_id)
    )
    """,),
    # 5: the frame-generation mode (issue 42). A row from before holds what was known: off
    # when frame generation was off, NULL (on, mode not stated) when it was on; never a guessed
    # mode. Both keep their cohort key (Cohort.key() writes off and not-stated as before), so no
    # row is re-keyed and no aggregate changes.
    (
        "ALTER TABLE runs ADD COLUMN frame_generation_mode TEXT CHECK (frame_generation_mode "
        f"IN ({MODE_LIST}))",
        "UPDATE runs SET frame_generation_mode = 'off' WHERE frame_generation = 0",
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

    def flush(self, conn: Connection, mark: str) -> None:
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


def _not_a_fleet(names: Sequence[str]) -> str:
    if not names:
        return ("not a certgen fleet database (an empty database; `certgen fleet add` or "
                "`certgen fleet import` creates a fleet); it was left unchanged")
    shown = ", ".join(escape_invisible(shorten(n, 40)) for n in names[:5])
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return (f"not a certgen fleet database (no fleet schema; it holds {shown}{more}); "
            "it was left unchanged")


def _older_schema(version: int) -> str:
    return (f"fleet schema version {version} is older than this certgen's ({SCHEMA_VERSION}); "
            "a read-only command does not migrate it: run `certgen fleet migrate` (or any "
            "command that writes to the fleet) first")


def _say_waiting(where: str, timeout: float, *, write: bool) -> None:
    """The one line a command prints while it waits for the fleet's lock."""
    doing = "writing to" if write else "committing to"
    sys.stderr.write(f"certgen: {where}: another process is {doing} the fleet; waiting "
                     f"up to {timeout:g} s for its lock (--lock-timeout or {LOCK_TIMEOUT_ENV} "
                     "sets the wait)\n")
    sys.stderr.flush()


def lock_error(where: str, timeout: float) -> FleetError:
    """The refusal when the fleet's lock was not free within the timeout."""
    return FleetError(f"another process held the fleet's lock for {timeout:g} s; gave "
                      f"up (--lock-timeout or {LOCK_TIMEOUT_ENV} sets a longer wait)",
                      file=where)


def one_line(text: str) -> str:
    """A database's own message as one short line (SQLite quotes schema text, line breaks
    and all)."""
    return escape_invisible(shorten(" ".join(text.split()), 160))


def columns_cohort(fields: Sequence[object]) -> Cohort:
    """The cohort of a row's seven cohort columns as schema step 2 found them (before the
    mode column): the mode derived, off or not stated, never guessed."""
    t, r, p, rt, up, mode, fg = fields
    return Cohort(str(t), str(r), str(p), bool(rt), str(up), None if mode is None else str(mode),
                  bool(fg))


_NOT_WRITTEN_HERE: Final = ("a value this certgen would not write (an older certgen or another "
                             "tool wrote it): correct or delete that row")


def _from_sql(r: Sequence[object], where: str, columns: Sequence[str] = _COLUMNS) -> FleetRun:
    """A stored row, checked as an imported line is: a row this certgen would not write is a
    FleetError naming it, never a traceback later."""
    obj: dict[str, object] = dict(zip(columns, r, strict=True))
    obj.pop("cohort_key")
    if "frame_generation_mode" not in obj and obj["frame_generation"] in (0, 1):
        # A row read by a schema step before the mode column: off or not stated.
        obj["frame_generation_mode"] = None if obj["frame_generation"] else "off"
    for key in ("ray_tracing", "frame_generation"):
        if obj[key] in (0, 1):
            obj[key] = bool(obj[key])
    index = obj["run_index"]
    if isinstance(index, float) and index.is_integer():
        obj["run_index"] = int(index)  # PostgreSQL or SQLite may hand back 1.0
    if _plainly_valid(obj):
        return _row_from_mapping(obj)
    errors = field_errors(obj)
    if errors:
        field, problem = errors[0]
        who = f"certificate {_shown(str(obj['certificate_id']))} run {obj['run_index']!r}"
        raise FleetError(f"{who}: {field}: {problem}; {_NOT_WRITTEN_HERE}", file=where)
    return _row_from_mapping(valid_row(obj))
