"""The fleet on a PostgreSQL server (`--fleet postgresql://…`): a shared fleet for several benches.

Same tables, same schema versions (the steps below mirror certgen.fleet.store.MIGRATIONS one for
one, in PostgreSQL's dialect), same idempotent add, import/export and figures as the SQLite file.
Differences that matter:
- the schema version is the one row of `certgen_schema` (SQLite keeps it in PRAGMA user_version);
- metrics are DOUBLE PRECISION (PostgreSQL's REAL is single precision) and text columns use the
  "C" collation, so ordering and comparisons are byte order, as in SQLite;
- every write transaction (and a migration) first takes one transaction-level advisory lock:
  writers from any number of processes or machines are serialised as SQLite's BEGIN IMMEDIATE
  serialises them, and the per-cohort aggregates never lose an update.

psycopg (version 3) is the optional extra `postgres`; it is imported only when a URL is used.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit, urlunsplit

from certgen.errors import FleetError
from certgen.fleet.model import METRIC_NAMES
from certgen.fleet.schema import MIGRATIONS as SQLITE_MIGRATIONS
from certgen.fleet.schema import (
    MODE_LIST,
    Connection,
    _fill_aggregates,
    _not_a_fleet,
    _older_schema,
    _say_waiting,
    columns_cohort,
    lock_error,
    one_line,
)
from certgen.support.untrusted import shorten

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

MAX_CONNECT_TIMEOUT_S: Final = 30
"""The longest certgen waits to connect to a fleet server (also the default): a URL's (or
$PGCONNECT_TIMEOUT's) connect_timeout above it, or of 0 (no limit), is refused, not clipped."""
LOCK_ID: Final = 0x63657274_67656E  # "certgen": the advisory lock every writer takes

_TEXT = 'TEXT COLLATE "C"'


def _rekey_cohorts(conn: Connection) -> None:
    """Fill `cohort_key` from the cohort columns with Cohort.key() (as the SQLite step 2)."""
    rows = conn.execute("SELECT certificate_id, run_index, title, resolution, preset, "
                        "ray_tracing, upscaler, upscaler_mode, frame_generation "
                        "FROM runs").fetchall()
    for cert, index, *fields in rows:
        conn.execute("UPDATE runs SET cohort_key = %s WHERE certificate_id = %s "
                     "AND run_index = %s", (columns_cohort(fields).key(), cert, index))


def _fill_aggregates_pg(conn: Connection) -> None:
    _fill_aggregates(conn, "%s")


MIGRATIONS: Final[tuple[tuple[str | Callable[[Connection], None], ...], ...]] = (
    (f"""
    CREATE TABLE runs (
        certificate_id   {_TEXT} NOT NULL,
        run_index        INTEGER NOT NULL,
        card_model       {_TEXT} NOT NULL,
        card_serial      {_TEXT} NOT NULL,
        title            {_TEXT} NOT NULL,
        resolution       {_TEXT} NOT NULL,
        preset           {_TEXT} NOT NULL,
        ray_tracing      INTEGER NOT NULL CHECK (ray_tracing IN (0, 1)),
        upscaler         {_TEXT} NOT NULL,
        upscaler_mode    {_TEXT},
        frame_generation INTEGER NOT NULL CHECK (frame_generation IN (0, 1)),
        avg_fps          DOUBLE PRECISION,
        low_1pct_fps     DOUBLE PRECISION,
        low_0_1pct_fps   DOUBLE PRECISION,
        consistency_gap  DOUBLE PRECISION,
        stutter          DOUBLE PRECISION,
        fluidity_score   DOUBLE PRECISION,
        UNIQUE (certificate_id, run_index)
    )
    """,),
    (
        f"ALTER TABLE runs ADD COLUMN issued {_TEXT}",
        f"ALTER TABLE runs ADD COLUMN source {_TEXT} NOT NULL DEFAULT 'unknown'",
        f"ALTER TABLE runs ADD COLUMN cohort_key {_TEXT} NOT NULL DEFAULT ''",
        _rekey_cohorts,
        "CREATE INDEX runs_by_cohort ON runs (cohort_key)",
    ),
    (
        *(f"CREATE INDEX runs_by_cohort_{m} ON runs (cohort_key, {m})" for m in METRIC_NAMES),
        "DROP INDEX runs_by_cohort",
        f"""
        CREATE TABLE cohort_stats (
            cohort_key {_TEXT} NOT NULL,
            metric     {_TEXT} NOT NULL,
            n          BIGINT  NOT NULL,
            sum_x      TEXT    NOT NULL,
            sum_xx     TEXT    NOT NULL,
            PRIMARY KEY (cohort_key, metric)
        )
        """,
        f"""
        CREATE TABLE cohorts (
            cohort_key {_TEXT} NOT NULL PRIMARY KEY,
            runs       BIGINT  NOT NULL,
            digest     TEXT    NOT NULL
        )
        """,
        _fill_aggregates_pg,
    ),
    (f"""
    CREATE TABLE captures (
        sha256         {_TEXT} NOT NULL,
        certificate_id {_TEXT} NOT NULL,
        file           {_TEXT} NOT NULL,
        PRIMARY KEY (sha256, certificate_id)
    )
    """,),
    (
        f"ALTER TABLE runs ADD COLUMN frame_generation_mode {_TEXT} CHECK "
        f"(frame_generation_mode IN ({MODE_LIST}))",
        "UPDATE runs SET frame_generation_mode = 'off' WHERE frame_generation = 0",
    ),
)
"""The PostgreSQL form of each schema step (same count and meaning as the SQLite steps)."""

assert len(MIGRATIONS) == len(SQLITE_MIGRATIONS), "the two backends have the same versions"


def redact(url: str) -> str:
    """The URL without its password: what messages and `store.path` show."""
    try:
        parts = urlsplit(url)
        password, port = parts.password, parts.port
    except ValueError:
        # A malformed URL ("Invalid IPv6 URL", a port that is not a number): hide whatever
        # stands between the scheme and the last '@' after the user name.
        return re.sub(r"^([^:/]*://[^:@/]*):[^/]*@", r"\1:***@", url)
    if password is None:
        return url
    host = parts.hostname or ""
    if port is not None:
        host = f"{host}:{port}"
    user = f"{parts.username}:***@" if parts.username else ""
    return urlunsplit((parts.scheme, user + host, parts.path, parts.query, parts.fragment))


def begin_write(conn: Connection, *, where: str, timeout: float) -> None:
    """Start a write transaction holding the fleet's advisory lock (released at its end).

    Tried first without waiting; when another writer holds it, say so once on stderr and wait
    up to `timeout` seconds (lock_timeout), then refuse naming the server and the timeout."""
    import psycopg

    conn.execute("BEGIN")
    try:
        tried = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (LOCK_ID,)).fetchone()
        assert tried is not None  # a SELECT without FROM: one row
        if tried[0]:
            return
        if timeout <= 0:
            raise lock_error(where, timeout)
        _say_waiting(where, timeout, write=True)
        # lock_timeout applies to advisory locks too; SET LOCAL ends with the transaction.
        conn.execute(f"SET LOCAL lock_timeout = {max(1, int(timeout * 1000))}")
        try:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_ID,))
        except psycopg.errors.LockNotAvailable:
            raise lock_error(where, timeout) from None
        conn.execute("SET LOCAL lock_timeout TO DEFAULT")
    except BaseException:
        try:
            conn.execute("ROLLBACK")
        except Exception:
            pass
        raise


def server_error(exc: Exception, where: str, timeout: float) -> FleetError:
    """A server error as one line naming the fleet and the cause (its first line)."""
    import psycopg

    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return lock_error(where, timeout)
    text = one_line(str(exc).strip().splitlines()[0]) if str(exc).strip() else type(exc).__name__
    if isinstance(exc, psycopg.errors.DiskFull):
        return FleetError(f"cannot write: the server's disk is full ({text})", file=where)
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return FleetError(f"cannot write: the server or this session is read-only ({text})",
                          file=where)
    if isinstance(exc, psycopg.OperationalError):
        return FleetError(f"the fleet server failed ({text})", file=where)
    return FleetError(f"database error ({text})", file=where)


def _connect_timeout(url: str, shown: str) -> int:
    """The seconds to wait for the server: the URL's connect_timeout (else $PGCONNECT_TIMEOUT,
    else MAX_CONNECT_TIMEOUT_S), refused above MAX_CONNECT_TIMEOUT_S or when it sets no limit."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        value = conninfo_to_dict(url).get("connect_timeout")
    except psycopg.Error:
        return MAX_CONNECT_TIMEOUT_S  # psycopg.connect words the malformed URL
    source = "connect_timeout"
    if value is None:
        value, source = os.environ.get("PGCONNECT_TIMEOUT"), "$PGCONNECT_TIMEOUT"
    if value is None:
        return MAX_CONNECT_TIMEOUT_S
    try:
        seconds = float(str(value))
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= MAX_CONNECT_TIMEOUT_S:  # NaN fails too
        raise FleetError(f"{source}: expected at most {MAX_CONNECT_TIMEOUT_S} seconds (0 or "
                         f"less waits without limit), got {shorten(repr(str(value)), 40)}",
                         file=shown)
    return max(2, math.ceil(seconds))  # libpq's own least wait


def connect(url: str, *, target: int | None = None, readonly: bool = False,
            lock_timeout: float = 60.0) -> tuple[psycopg.Connection[TupleRow], str, int]:
    """An autocommit connection to the fleet server, migrated; the URL to show; the schema
    version found before migrating.

    readonly: the session is READ ONLY and nothing is created or migrated; a database without
    certgen's schema, or at an older version, is refused."""
    shown = redact(url)
    try:
        import psycopg
    except ImportError:
        raise FleetError("a postgresql:// fleet needs psycopg; install certgen[postgres]",
                         file=shown) from None
    try:
        urlsplit(url).port  # noqa: B018 (raises on a malformed URL: psycopg would not say where)
    except ValueError as exc:
        raise FleetError(f"not a valid PostgreSQL URL ({exc}); expected "
                         "postgresql://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE", file=shown
                         ) from None
    timeout = _connect_timeout(url, shown)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=timeout)
    except psycopg.Error as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FleetError(f"cannot connect to the fleet server: {text}", file=shown) from None
    try:
        try:
            if readonly:
                found = check_readonly(conn, where=shown)
            else:
                found = migrate(conn, where=shown, target=len(MIGRATIONS) if target is None else target,
                        timeout=lock_timeout)
        except psycopg.Error as exc:
            raise server_error(exc, shown, lock_timeout) from exc
    except BaseException:
        conn.close()
        raise
    return conn, shown, found


def check_readonly(conn: Connection, *, where: str) -> int:
    """Make the session read-only and check the schema without changing anything."""

    conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    tables_found = conn.execute(
        "SELECT to_regclass('certgen_schema') IS NOT NULL, to_regclass('runs') IS NOT NULL"
    ).fetchone()
    assert tables_found is not None  # a SELECT without FROM: one row
    has_schema, has_runs = tables_found
    found = None
    if has_schema:
        found = conn.execute("SELECT version FROM certgen_schema").fetchone()
    if not has_schema or found is None or (not has_runs and int(found[0]) > 0):
        tables = [str(name) for (name,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "ORDER BY tablename").fetchall()]
        raise FleetError(_not_a_fleet(tables), file=where)
    version = int(found[0])
    if version > len(MIGRATIONS):
        raise FleetError(f"fleet schema version {version} is newer than this certgen "
                         f"supports ({len(MIGRATIONS)}); upgrade certgen", file=where)
    if version < len(MIGRATIONS):
        raise FleetError(_older_schema(version), file=where)
    return version


def migrate(conn: Connection, *, where: str, target: int = len(MIGRATIONS),
            timeout: float = 60.0) -> int:
    """Apply the missing steps up to `target` under the advisory lock; return the version found."""

    begin_write(conn, where=where, timeout=timeout)
    try:
        missing = conn.execute("SELECT to_regclass('certgen_schema') IS NULL").fetchone()
        assert missing is not None  # a SELECT without FROM: one row
        if missing[0]:
            tables = [str(name) for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "ORDER BY tablename").fetchall()]
            if tables:  # another application's database: never given certgen's tables
                raise FleetError(_not_a_fleet(tables), file=where)
        conn.execute("CREATE TABLE IF NOT EXISTS certgen_schema (version INTEGER NOT NULL)")
        found_row = conn.execute("SELECT version FROM certgen_schema").fetchone()
        if found_row is None:
            conn.execute("INSERT INTO certgen_schema (version) VALUES (0)")
            found = 0
        else:
            found = int(found_row[0])
        if found > len(MIGRATIONS):
            raise FleetError(f"fleet schema version {found} is newer than this certgen "
                             f"supports ({len(MIGRATIONS)}); upgrade certgen", file=where)
        for version in range(found + 1, target + 1):
            for step in MIGRATIONS[version - 1]:
                if isinstance(step, str):
                    conn.execute(step)
                else:
                    step(conn)
            conn.execute("UPDATE certgen_schema SET version = %s", (version,))
        conn.execute("COMMIT")
    except BaseException:
        try:
            conn.execute("ROLLBACK")
        except Exception:
            pass  # the error being raised is the one to report
        raise
    return found
