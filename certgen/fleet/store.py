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
import math
import os
import sqlite3
import stat
import sys
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final, NoReturn, Self, cast

from certgen.errors import FleetError, FleetImportError
from certgen.fleet.model import (
    LOCK_TIMEOUT_S,
    METRIC_NAMES,
    METRIC_RANGES,
    RANKED_METRICS,
    CaptureUse,
    CohortSums,
    FleetRun,
    Withdrawn,
    _bound,
    _describe,
    _dump_line,
    _shown,
    captures_of,
    exact_scaled,
    exact_scaled_square,
    is_server_url,
    parse_line,
    rank_from_sums,
    record_source,
    row_errors,
    runs_from_record,
)
from certgen.fleet.model import (
    lock_timeout as lock_timeout_of,
)
from certgen.fleet.postgres import begin_write, connect, server_error
from certgen.fleet.schema import (
    _COLUMNS,
    _NOT_WRITTEN_HERE,
    BATCH_ROWS,
    MIGRATIONS,
    SCHEMA_VERSION,
    Connection,
    Cursor,
    _Delta,
    _from_sql,
    _marks,
    _metric_values,
    _not_a_fleet,
    _older_schema,
    _say_waiting,
    lock_error,
    one_line,
)
from certgen.model import Rank, Ranks, RunMetrics
from certgen.model.cohort import Cohort
from certgen.record import Record, record_json
from certgen.sop import load_rules
from certgen.support import jsonload
from certgen.support.untrusted import UnreadableInput, escape_invisible, read_limited, shorten

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow


def migrate(conn: sqlite3.Connection, *, where: str, target: int = SCHEMA_VERSION,
            begin: Callable[[], None] | None = None) -> int:
    """Apply the missing migration steps up to `target`; return the version found before.

    begin: starts the write transaction (FleetStore passes its lock wait); BEGIN IMMEDIATE
    by default."""
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        raise FleetError(f"fleet schema version {found} is newer than this certgen supports "
                         f"({SCHEMA_VERSION}); upgrade certgen", file=where)
    if found >= target:
        return found
    try:
        if begin is None:
            conn.execute("BEGIN IMMEDIATE")
        else:
            begin()
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
        _quiet_rollback(conn)
        raise
    return found


def _quiet_rollback(conn: Connection) -> None:
    """Roll back if a transaction is open, never raising: the error that made us roll back is
    the one to report (SQLite may already have rolled back after a full disk, and "cannot
    rollback - no transaction is active" must not replace "database or disk is full")."""
    try:
        if getattr(conn, "in_transaction", True):
            conn.execute("ROLLBACK")
    except Exception:
        pass


# ---------------------------------------------------------------------------------------------
# Aggregates maintained on write










# ---------------------------------------------------------------------------------------------
# The store






def _busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (sqlite3.SQLITE_BUSY,
                                                          sqlite3.SQLITE_LOCKED)






_SQLITE_CAUSES: Final = {
    sqlite3.SQLITE_FULL: "cannot write: the disk is full",
    sqlite3.SQLITE_READONLY: "cannot write: the file or its folder is read-only",
    sqlite3.SQLITE_CORRUPT: "the file is damaged (not a readable SQLite database)",
    sqlite3.SQLITE_NOTADB: "not a fleet database",
    sqlite3.SQLITE_IOERR: "cannot read or write the file (an I/O error)",
    sqlite3.SQLITE_CANTOPEN: "cannot open the file",
    sqlite3.SQLITE_PERM: "cannot write: permission denied",
    sqlite3.SQLITE_NOLFS: "cannot write: the file is too large for the file system",
    sqlite3.SQLITE_TOOBIG: "a value is too large for SQLite",
}
"""SQLite's primary result codes worded as their cause; SQLite's own text follows in
parentheses ("database or disk is full")."""




def _sqlite_error(exc: sqlite3.Error, where: str, timeout: float) -> FleetError:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and _busy(exc):
        return lock_error(where, timeout)
    if code == sqlite3.SQLITE_READONLY_ROLLBACK:
        return FleetError("has an interrupted write to undo (a hot journal beside it), which a "
                          "read-only command cannot do: run `certgen fleet migrate` (or any "
                          "command that writes to the fleet) first", file=where)
    detail = one_line(str(exc)) or type(exc).__name__
    cause = None if code is None else _SQLITE_CAUSES.get(code & 0xFF)
    if cause is None:
        return FleetError(f"database error ({detail})", file=where)
    return FleetError(f"{cause} ({detail})", file=where)


_CHECKED: set[State] = set()
"""The SQLite fleet files this process has found whole, as (device, inode, size, mtime,
ctime) at the check. A process-wide memo, on purpose: PRAGMA quick_check reads every page (0.76 s
on a 1M-run fleet, docs/limits.md), and a batch build opens the fleet once per bundle. Any write
to the file changes its mtime and ctime (ctime cannot be set back by anyone), so a file changed
since, by certgen or anything else, is checked again."""


RACY_NS: Final = 1_000_000_000
"""A file state younger than this (ns) at its check is not remembered in _CHECKED."""


def _file_state(path: Path) -> State | None:
    """What _CHECKED remembers of a file (None: stat failed; the file is then always checked)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


State = tuple[int, int, int, int, int]
"""A file's (device, inode, size, mtime_ns, ctime_ns): what the verified-state marker and
_CHECKED hold."""

VERIFIED_SUFFIX: Final = "-certgen-verified"
"""The verified-state marker beside an SQLite fleet (`fleet.sqlite-certgen-verified`): the
file state in which the fleet was last found whole, by the integrity check of a write command
or by certgen's own write to a file it knew whole. Read by every command; written only by the
commands that write to the fleet (a read-only command never writes beside the fleet)."""

_MARKER_HEAD: Final = "certgen fleet verified 1"
_MARKER_LIMIT: Final = 256


def _marker_path(path: Path) -> Path:
    return path.with_name(path.name + VERIFIED_SUFFIX)


def _read_marker(path: Path) -> State | None:
    """The state the marker vouches for, or None (no marker, or one certgen did not write)."""
    try:
        # A regular file only: a FIFO put there must not block every command.
        text = read_limited(_marker_path(path), limit=_MARKER_LIMIT,
                            what="a fleet marker").decode("ascii")
    except (UnreadableInput, UnicodeDecodeError):
        return None
    head, _, rest = text.partition("\n")
    fields = rest.split()
    if head != _MARKER_HEAD or len(fields) != 5 or len(text) > _MARKER_LIMIT:
        return None
    try:
        dev, ino, size, mtime, ctime = (int(f) for f in fields)
    except ValueError:
        return None
    return (dev, ino, size, mtime, ctime)


def _write_marker(path: Path, state: State | None) -> None:
    """Vouch for `state` (None: remove the marker), atomically (a temp file renamed over it).
    A marker that cannot be written is no error: the next command checks the file instead."""
    marker = _marker_path(path)
    if state is None:
        try:
            marker.unlink()
        except OSError:
            pass
        return
    tmp = marker.with_name(f".{marker.name}.{os.getpid()}.tmp")
    data = f"{_MARKER_HEAD}\n{' '.join(map(str, state))}\n".encode("ascii")
    try:
        # A new file of our own (never through a link someone left there), renamed over it.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, marker)
    except FileExistsError:
        return  # another process of the same id's leftover: the next command checks instead
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def _stamp_clock() -> int:
    """Now, on the clock the kernel stamps file times with (Linux: the coarse real-time clock,
    which lags the fine one by up to a tick); elsewhere now less RACY_NS, so that only a file
    unchanged for a second counts as settled."""
    # Python names no CLOCK_REALTIME_COARSE; Linux's is clock id 5 (linux/time.h).
    coarse = getattr(time, "CLOCK_REALTIME_COARSE", 5 if sys.platform == "linux" else None)
    if coarse is None:
        return time.time_ns() - RACY_NS
    return time.clock_gettime_ns(coarse)


_COARSE_FS_NS: Final = 1_000_000
"""File times that are whole multiples of this (a millisecond) come from a file system that
keeps coarse times (FAT's 2 s, HFS+'s 1 s): there a state is settled only after RACY_NS."""


def _settled(state: State, clock: int) -> bool:
    """Whether any change to the file after `clock` (read before `state` was taken) must give
    it another state: the clock has passed its file times, so a later change stamps a later
    time (ctime cannot be set back). "Racily clean" otherwise, as _CHECKED's rule."""
    newest = max(state[3], state[4])
    if state[3] % _COARSE_FS_NS == 0 and state[4] % _COARSE_FS_NS == 0:
        return newest < clock - RACY_NS
    return newest < clock


SETTLE_WAIT_S: Final = 0.1
"""How long a write waits for the clock to pass the file's new times before it vouches for
them (a tick: 1 to 10 ms on Linux); past it the marker is removed and the next command checks."""


def _settled_state(path: Path) -> State | None:
    """The file's state once settled (see _settled), or None within SETTLE_WAIT_S."""
    deadline = time.monotonic() + SETTLE_WAIT_S
    while True:
        clock = _stamp_clock()
        state = _file_state(path)
        if state is None:
            return None
        if _settled(state, clock):
            return state
        if time.monotonic() > deadline:
            return None
        time.sleep(0.002)


def _damage_found(problems: Sequence[str]) -> str | None:
    """The first problem quick_check reported (and how many more), or None when it said ok."""
    lines = [line.strip() for text in problems for line in str(text).splitlines()
             if line.strip() and not line.startswith("*** in database")]
    if lines == ["ok"] or not lines:
        return None
    more = f"; {len(lines) - 1} more problems" if len(lines) > 1 else ""
    return f"{one_line(lines[0])}{more}"


def _check_pages(conn: sqlite3.Connection, where: str) -> None:
    """PRAGMA quick_check: every page reachable once, every b-tree well formed. A page
    overwritten behind a valid header reads as fewer runs, or none, until a query happens to
    touch it; a certificate must never be ranked against part of a fleet."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_CORRUPT:
            raise
        rows = [(str(exc),)]
    found = _damage_found([str(row[0]) for row in rows])
    if found is not None:
        raise _damaged(where, found)


def _check_counts(conn: sqlite3.Connection, where: str) -> None:
    """The redundant counts agree (_counts_disagree), on a fleet of this schema version, all
    read from one snapshot: another writer committing between two of the counts would
    otherwise make a whole fleet read as damaged."""
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        found = _counts_disagree(conn)
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")  # a read: nothing to keep or undo
    if found is not None:
        raise _damaged(where, found)


def _damaged(where: str, found: str) -> FleetError:
    return FleetError(f"the file is damaged (integrity check on opening: {found}); left "
                      "unchanged, nothing read from it: restore it from a backup or import its "
                      "runs into a new fleet", file=where)


def _counts_disagree(conn: sqlite3.Connection) -> str | None:
    """Where the fleet's redundant run counts disagree, or None. Every write keeps them in step
    in one transaction: the runs table, each ranking index (runs_by_cohort_<metric>) and the
    cohorts' run counts. A page replaced by a well-formed one (quick_check's blind spot: it
    does not compare an index with its table) drops or adds rows in one of them and not in the
    others. Totals, one pass over each b-tree that reads no value: counting per cohort, or each
    index's values against cohort_stats, cost four times as much (docs/limits.md)."""
    runs = int(conn.execute("SELECT coalesce(sum(runs), 0) FROM cohorts").fetchone()[0])
    total = int(conn.execute("SELECT count(*) FROM runs NOT INDEXED").fetchone()[0])
    if total != runs:
        return f"the runs table holds {total} runs, the cohort counts {runs}"
    # A bare count(*) lets SQLite pick the smallest index whatever INDEXED BY says; a range
    # over the first column holds it to the named one.
    indexes = [(f"runs_by_cohort_{m}", "cohort_key") for m in METRIC_NAMES]
    for index, first in [*indexes, ("sqlite_autoindex_runs_1", "certificate_id")]:
        indexed = int(conn.execute(
            f"SELECT count(*) FROM runs INDEXED BY {index} WHERE {first} >= ''").fetchone()[0])
        if indexed != runs:
            return f"the index {index} holds {indexed} runs, the cohort counts {runs}"
    return None


CALIBRATION_COLUMNS: Final = ("certificate_id", "issued", "resolution", "cohort_key",
                               "fluidity_score", "consistency_gap", "stutter")
"""What the calibration review reads of a run (FleetStore.calibration_pages)."""
CALIBRATION_PAGE: Final = 20_000
"""Rows per page of calibration_pages: few round trips, a few MB per page."""


class FleetStore:
    """The fleet database. Open with `FleetStore.open(location)`; use as a context manager.

    location: an SQLite file path, or a `postgresql://…` URL (needs the `postgres` extra).
    """

    def __init__(self, conn: Connection, path: Path | str, min_cohort: int, *,
                 mark: str = "?", backend: str = "sqlite", readonly: bool = False,
                 lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        self._conn = conn
        self.path = path
        """The file, or the server URL without its password (what messages print)."""
        self.min_cohort = min_cohort
        """The ranking minimum used when ranks_for is not given one (the rules file's)."""
        self.backend = backend
        """"sqlite" or "postgresql"."""
        self.readonly = readonly
        """Opened by a command that only reads: never migrated, never written."""
        self.lock_timeout = lock_timeout
        """Seconds a write waits for another writer's lock before giving up."""
        self.found_version = SCHEMA_VERSION
        """The schema version the database had when opened (before any migration)."""
        self._whole: State | None = None
        """The SQLite file's state when this store last knew it whole (checked, vouched for by
        the marker, or just written by it from a whole state); None when it does not know."""
        self._q = _marks(mark)
        self._mark = mark

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, min_cohort: int | None = None, create: bool = True,
        readonly: bool = False, lock_timeout: float | None = None,
    ) -> FleetStore:
        """Open (and create or migrate) the fleet at `path` (a file or a postgresql:// URL).

        readonly: for commands that only read (cohorts, export, check, build): an SQLite file is
        opened with mode=ro, nothing is created or migrated, and a database that is not a
        certgen fleet, or is at an older schema version, is refused unchanged. create=False
        refuses a missing file. lock_timeout: seconds a write waits for another writer (default:
        $CERTGEN_FLEET_LOCK_TIMEOUT, else 60). min_cohort defaults to `ranking.min_cohort` of
        the default SOP rules file; the pipeline passes its own bundle's rules to `ranks_for`.
        """
        timeout = lock_timeout_of(lock_timeout)
        if min_cohort is None:
            min_cohort = load_rules().ranking_min_cohort
        if is_server_url(path):
            pg_conn, shown, found = connect(str(path), readonly=readonly, lock_timeout=timeout)
            server = cls(pg_conn, shown, min_cohort, mark="%s", backend="postgresql",
                         readonly=readonly, lock_timeout=timeout)
            server.found_version = found
            return server
        p = Path(path)
        where = str(p)
        try:
            mode = p.stat().st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise FleetError(f"cannot open the fleet database ({exc.strerror})",
                             file=where) from None
        if mode is None and (readonly or not create):
            raise FleetError("no such fleet database (run `certgen fleet add` or "
                             "`certgen fleet import` to create one)", file=where)
        if mode is not None and stat.S_ISDIR(mode):
            raise FleetError("is a folder, expected an SQLite file", file=where)
        if mode is not None and not stat.S_ISREG(mode):
            raise FleetError("is not a regular file (a FIFO, device or socket), expected an "
                             "SQLite file", file=where)
        try:
            if readonly:
                # mode=ro: SQLite never writes the file (no journal, no schema), whatever it is.
                uri = "file:" + urllib.parse.quote(os.path.abspath(p)) + "?mode=ro"
                conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout)
            else:
                conn = sqlite3.connect(p, isolation_level=None, timeout=timeout)
        except sqlite3.Error as exc:
            raise FleetError(f"cannot open the fleet database: {exc}", file=where) from None
        store = cls(conn, p, min_cohort, readonly=readonly, lock_timeout=timeout)
        try:
            with store._errors():
                store._prepare_sqlite(conn)
        except BaseException:
            conn.close()
            raise
        return store

    def _prepare_sqlite(self, conn: sqlite3.Connection) -> None:
        """Check that the file is a certgen fleet at this schema version, and whole; migrate it
        if writing.

        A certgen fleet has PRAGMA user_version 1..SCHEMA_VERSION and a `runs` table. A new or
        empty file is created as one by a write command; a database holding other tables is
        refused, never given certgen's tables. A damaged file is refused before anything reads
        or writes it (_check_pages, _check_counts). `conn` is the store's own connection."""
        where = str(self.path)
        path = Path(self.path)
        self._acquire(lambda: conn.execute("PRAGMA user_version").fetchone())
        clock = _stamp_clock()
        state = _file_state(path)
        # Found whole before, in this state: by this process (_CHECKED), or by a command that
        # writes to the fleet (the marker). Any change since, by anything, changes the state.
        trusted = state is not None and (state in _CHECKED or _read_marker(path) == state)
        started = time.time_ns()
        if not trusted:
            _check_pages(conn, where)
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        names = sorted(str(name) for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall())
        if "runs" not in names and names:
            raise FleetError(_not_a_fleet(names), file=where)
        # certgen makes tables and indexes only: a trigger runs its own SQL on every write
        # (a recursive one never ends), a view reads what it likes; refused before any write.
        foreign = conn.execute("SELECT type, name FROM sqlite_master WHERE type NOT IN "
                               "('table', 'index') ORDER BY type, name").fetchone()
        if foreign is not None:
            kind, name = foreign
            raise FleetError(f"holds a {kind} {escape_invisible(shorten(repr(name), 60))} "
                             "certgen did not create; a fleet database holds only certgen's "
                             "tables and indexes", file=where)
        if version > SCHEMA_VERSION:
            raise FleetError(f"fleet schema version {version} is newer than this certgen "
                             f"supports ({SCHEMA_VERSION}); upgrade certgen", file=where)
        # Empty: a new file a write command makes a fleet. A `runs` table without a version:
        # not certgen's.
        if ("runs" in names) != (version > 0) or (not names and self.readonly):
            raise FleetError(_not_a_fleet(names), file=where)
        if self.readonly:
            if version < SCHEMA_VERSION:
                raise FleetError(_older_schema(version), file=where)
        else:
            self.found_version = migrate(conn, where=where, begin=lambda: self._acquire(
                lambda: conn.execute("BEGIN IMMEDIATE"), write=True))
            if self.found_version < SCHEMA_VERSION:
                # Our migration changed the file: what is checked and vouched for is the state
                # after it, once the clock has passed its times (a tick).
                state, trusted = _settled_state(path), False
                clock, started = _stamp_clock(), time.time_ns()
                _check_pages(conn, where)
        if trusted:
            self._whole = state
            return
        _check_counts(conn, where)
        # A file changed less than a second before the check is not remembered: file times
        # are kept at a clock tick's resolution, so a change made within the same tick as
        # the one checked could leave the same state (git's "racily clean" index entries).
        if state is not None and max(state[3], state[4]) < started - RACY_NS:
            _CHECKED.add(state)
        # The state checked, if nothing changed it meanwhile and no later change could keep it.
        if state is not None and _file_state(path) == state and _settled(state, clock):
            self._whole = state
            if not self.readonly:
                _write_marker(path, state)

    def _whole_now(self) -> bool:
        """Inside a write transaction (no other certgen writer can commit): whether the file
        is still in a state found whole (this store's, or the marker's: another certgen
        writer's since)."""
        if self.backend != "sqlite":
            return False
        state = _file_state(Path(self.path))
        return state is not None and (state == self._whole or state == _read_marker(
            Path(self.path)))

    def _written(self, was_whole: bool) -> None:
        """After a committed write: certgen's own transaction on a whole file leaves it whole,
        so the marker vouches for the new state (once settled); otherwise it is removed and
        the next command checks the file."""
        if self.backend != "sqlite":
            return
        path = Path(self.path)
        self._whole = _settled_state(path) if was_whole else None
        _write_marker(path, self._whole)

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
        with self._errors():
            if self.backend == "sqlite":
                found = self._conn.execute("PRAGMA user_version").fetchone()
            else:
                found = self._conn.execute("SELECT version FROM certgen_schema").fetchone()
            assert found is not None  # the pragma's one row; the version row open() checked
            return int(found[0])

    # -- the lock, and errors shown as their cause -------------------------------------------

    def _acquire(self, attempt: Callable[[], object], *, write: bool = False) -> None:
        """Run `attempt` (the statement that takes SQLite's lock: BEGIN IMMEDIATE for a write,
        the first read of a read) without waiting; if another process holds the lock, say so
        once on stderr, then wait up to lock_timeout for it (SQLite's busy timeout)."""
        conn = self._conn
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            attempt()
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.lock_timeout * 1000)}")
        _say_waiting(str(self.path), self.lock_timeout, write=write)
        attempt()  # a second busy error is the lock timeout (_errors words it)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Database errors as one line naming the fleet and the cause (disk full, read-only,
        damaged file, the lock timeout), the original kept as __cause__."""
        try:
            yield
        except sqlite3.Error as exc:
            raise _sqlite_error(exc, str(self.path), self.lock_timeout) from exc
        except UnicodeDecodeError as exc:
            # sqlite3 decodes TEXT as UTF-8: bytes that are not come from damage or another tool.
            raise FleetError(f"holds text that is not UTF-8 (byte {exc.object[exc.start]:#04x}); "
                             "the file is damaged or another tool wrote it",
                             file=str(self.path)) from exc
        except Exception as exc:
            if self.backend == "sqlite" or not type(exc).__module__.startswith("psycopg"):
                raise
            raise server_error(exc, str(self.path), self.lock_timeout) from exc

    def _execute(self, sql: str, params: Sequence[object] = ()) -> Cursor:
        return self._conn.execute(self._q(sql), tuple(params))

    def _executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        cur = self._conn.cursor()
        try:
            cur.executemany(self._q(sql), rows)
        finally:
            cur.close()

    def _begin_write(self) -> None:
        if self.readonly:
            raise FleetError("opened read-only; a read-only command does not write",
                             file=str(self.path))
        if self.backend == "sqlite":
            self._acquire(lambda: self._conn.execute("BEGIN IMMEDIATE"), write=True)
        else:
            begin_write(self._conn, where=str(self.path), timeout=self.lock_timeout)

    def _begin_read(self) -> None:
        # One snapshot for all the queries of a read (counts and sums agree).
        if self.backend == "sqlite":
            self._conn.execute("BEGIN")
            try:
                # The first read takes SQLite's shared lock (blocked only while a writer commits).
                self._acquire(lambda: self._conn.execute(
                    "SELECT 1 FROM sqlite_master LIMIT 1").fetchall())
            except BaseException:
                self._rollback()
                raise
        else:
            self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """A read snapshot for a read method called on its own (inside a caller's transaction,
        that transaction is used); database errors worded by _errors."""
        with self._errors():
            if self._in_transaction():
                yield
                return
            self._begin_read()
            try:
                yield
                self._conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _in_transaction(self) -> bool:
        if isinstance(self._conn, sqlite3.Connection):  # the sqlite backend
            return bool(self._conn.in_transaction)
        from psycopg.pq import TransactionStatus

        server = cast("psycopg.Connection[TupleRow]", self._conn)  # the postgresql backend
        return bool(server.info.transaction_status != TransactionStatus.IDLE)

    def _rollback(self) -> None:
        if self.backend == "sqlite":
            _quiet_rollback(self._conn)
            return
        try:
            self._conn.execute("ROLLBACK")
        except Exception:
            pass

    # -- writing -------------------------------------------------------------------------------

    def add_record(
        self, record: Record, *, source: str | None = None, replace: bool = False,
        where: str = "record.json", revoked: Withdrawn | None = None,
    ) -> tuple[int, int]:
        """Add a certificate record's recorded runs; return (added, skipped).

        source defaults to the SHA-256 of the record's canonical JSON; the CLI passes the SHA-256
        of the record.json bytes it read. Kept out, each with one line naming it: a draft or
        refused certificate, a specimen (runs_from_record), a certificate `revoked` lists, and
        one whose capture files are already behind another certificate in the fleet.
        """
        if source is None:
            canonical = json.dumps(record_json(record), ensure_ascii=False,
                                   sort_keys=True).encode("utf-8")
            source = record_source(canonical)
        rows = runs_from_record(record, source=source, where=where)
        why = None if revoked is None else revoked.why(record.certificate.id)
        if why is not None:
            raise FleetError(why, file=where)
        return self.add_runs(rows, replace=replace, where=where, captures=captures_of(record))

    def add_runs(
        self, rows: Sequence[FleetRun], *, replace: bool = False, where: str = "fleet",
        captures: Sequence[CaptureUse] = (),
    ) -> tuple[int, int]:
        """Insert rows in one transaction; identical rows are skipped, conflicting ones refused.

        Every row is checked as an imported line is (ranges and closed sets); any invalid row
        writes nothing: `where: certificate ID run N: field: problem`, one per problem.
        captures: the capture files behind the rows' certificate; one already behind another
        certificate of the fleet refuses the whole call (the same certificate may come again)."""
        rows = list(rows)
        problems = [f"{where}: certificate {_shown(r.certificate_id)} run {r.run_index}: "
                    f"{field}: {problem}" for r in rows for field, problem in row_errors(r)]
        if problems:
            raise FleetImportError(problems)
        delta = _Delta()
        with self._errors():
            self._begin_write()
            try:
                was_whole = self._whole_now()
                self._check_captures(captures, where)
                added, skipped, conflict = self._write_batch(rows, replace, where, delta)
                if conflict is not None:
                    raise conflict
                self._keep_captures(captures, replace=replace)
                delta.flush(self._conn, self._mark)
                self._conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        self._written(was_whole)
        return added, skipped

    def _check_captures(self, captures: Sequence[CaptureUse], where: str) -> None:
        """Refuse a capture already behind another certificate (inside the write transaction,
        so two writers cannot both pass): one index lookup per capture."""
        for use in captures:
            found = self._execute(
                "SELECT certificate_id, file FROM captures WHERE sha256 = ? AND "
                "certificate_id <> ? ORDER BY certificate_id LIMIT 1",
                (use.sha256, use.certificate_id)).fetchone()
            if found is not None:
                raise FleetError(
                    f"certificate {_shown(use.certificate_id)}: capture {_shown(use.file)} "
                    f"(SHA-256 {use.sha256}) is already in the fleet behind certificate "
                    f"{_shown(str(found[0]))} ({_shown(str(found[1]))}); one capture never "
                    "certifies two certificates", file=where)

    def _keep_captures(self, captures: Sequence[CaptureUse], *, replace: bool) -> None:
        if not captures:
            return
        if replace:  # the certificate's captures are the ones of the record given now
            for cert in sorted({use.certificate_id for use in captures}):
                self._execute("DELETE FROM captures WHERE certificate_id = ?", (cert,))
        known = {(str(sha), str(cert)) for sha, cert in self._execute(
            "SELECT sha256, certificate_id FROM captures WHERE certificate_id = ?",
            (captures[0].certificate_id,)).fetchall()}
        new = [tuple(use) for use in captures if (use.sha256, use.certificate_id) not in known]
        if new:
            self._executemany("INSERT INTO captures (sha256, certificate_id, file) "
                              "VALUES (?, ?, ?)", new)

    def shared_captures(self) -> dict[str, str]:
        """Certificates of the fleet whose capture is also behind another certificate (a fleet
        written before captures were recorded cannot say): certificate id -> the other one.
        add_record never lets this happen; the calibration review leaves such cards out."""
        out: dict[str, str] = {}
        with self._reading():
            found = self._execute(
                "SELECT a.certificate_id, b.certificate_id FROM captures a JOIN captures b "
                "ON a.sha256 = b.sha256 AND a.certificate_id <> b.certificate_id "
                "ORDER BY a.certificate_id, b.certificate_id").fetchall()
        for mine, other in found:
            out.setdefault(str(mine), str(other))
        return out

    def _existing(self, rows: Sequence[FleetRun]) -> dict[tuple[str, int], FleetRun]:
        ids = sorted({r.certificate_id for r in rows})
        out: dict[tuple[str, int], FleetRun] = {}
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            cur = self._execute(
                f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE certificate_id IN "
                f"({', '.join('?' * len(part))})", part)
            for found in cur.fetchall():
                row = _from_sql(found, str(self.path))
                out[(row.certificate_id, row.run_index)] = row
        return out

    def _write_batch(
        self, rows: Sequence[FleetRun], replace: bool, where: str, delta: _Delta
    ) -> tuple[int, int, FleetError | None]:
        """Write one batch (inside a write transaction); stop at the first conflict."""
        existing = self._existing(rows)
        inserts: list[tuple[object, ...]] = []
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
        with self._errors():
            return self._import_jsonl(stream, name, replace)

    def _import_jsonl(self, stream: IO[str], name: str, replace: bool) -> tuple[int, int]:
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
        was_whole = self._whole_now()
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
                    obj = jsonload.loads(line, parse_constant=_refuse_constant)  # depth-limited
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
            self._written(was_whole)
        except BaseException:
            self._rollback()
            if self.backend == "sqlite":
                try:
                    self._conn.execute("DROP TABLE IF EXISTS temp.import_seen")
                except sqlite3.Error:
                    pass  # the error being raised is the one to report
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

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read snapshot for several reads (the calibration review streams the runs and
        reads the cohorts: both from the same state of the fleet)."""
        with self._reading():
            yield

    def _keyset_pages(self, cols: str, key: tuple[int, int], size: int
                      ) -> Iterator[Sequence[tuple[Any, ...]]]:
        """`cols` of every run ordered by (certificate_id, run_index), `size` rows a page; `key`
        is where those two columns stand in a row. Keyset by a row-value comparison, which the
        unique index answers as a range (an OR of the two columns read ~65 ms a page on a
        million runs), so memory stays one page on either backend."""
        last: tuple[str, int] | None = None
        while True:
            if last is None:
                cur = self._execute(f"SELECT {cols} FROM runs ORDER BY certificate_id, "
                                    f"run_index LIMIT {size}")
            else:
                cur = self._execute(
                    f"SELECT {cols} FROM runs WHERE (certificate_id, run_index) > (?, ?) "
                    f"ORDER BY certificate_id, run_index LIMIT {size}", last)
            page = cur.fetchall()
            if page:
                yield page
            if len(page) < size:
                return
            last = (page[-1][key[0]], int(page[-1][key[1]]))

    def calibration_pages(self) -> Iterator[Sequence[tuple[Any, ...]]]:
        """CALIBRATION_COLUMNS (then run_index) of every run, ordered by (certificate_id,
        run_index), CALIBRATION_PAGE rows a page. Call inside `snapshot()`; the values are as
        stored: certgen.fleet.calibration checks them."""
        n = len(CALIBRATION_COLUMNS)
        with self._errors():
            yield from self._keyset_pages(f"{', '.join(CALIBRATION_COLUMNS)}, run_index",
                                          (0, n), CALIBRATION_PAGE)

    def iter_runs(self) -> Iterator[FleetRun]:
        """Every row, ordered by (certificate_id, run_index), read page by page (keyset).

        A stored row this certgen would not write (out of range, wrong type: another tool or
        an older certgen wrote it) is a FleetError naming it."""
        where = str(self.path)
        with self._errors():
            for page in self._keyset_pages(", ".join(_COLUMNS), (0, 1), BATCH_ROWS):
                for found in page:
                    yield _from_sql(found, where)

    def runs(self) -> list[FleetRun]:
        """Every row, ordered by (certificate_id, run_index): a unique, stable order."""
        with self._reading():
            return list(self.iter_runs())

    def run_count(self) -> int:
        """How many runs the fleet holds (`fleet.fleet_runs` of a record)."""
        with self._reading():
            found = self._execute("SELECT COALESCE(SUM(runs), 0) FROM cohorts").fetchone()
        assert found is not None  # an aggregate: one row
        return _stored_count(found[0], str(self.path), "cohorts.runs")

    def cohort_runs(self, cohorts: Iterable[Cohort]) -> int:
        """How many runs the fleet holds in these cohorts, each counted once (a record's
        `fleet.fleet_runs`: what its ranks are measured against)."""
        keys = sorted({c.key() for c in cohorts})
        total = 0
        with self._reading():
            for key in keys:
                found = self._execute("SELECT runs FROM cohorts WHERE cohort_key = ?",
                                      (key,)).fetchone()
                if found is not None:
                    total += _stored_count(found[0], str(self.path), "cohorts.runs")
        return total

    def cohorts(self) -> list[tuple[Cohort, int]]:
        """Every cohort with its size, largest first, then by configuration (a unique order)."""
        with self._reading():
            found = self._execute("SELECT cohort_key, runs FROM cohorts").fetchall()
        where = str(self.path)
        out = [(_stored_cohort(key, where), _stored_count(n, where, "cohorts.runs"))
               for key, n in found]
        out.sort(key=lambda cs: (-cs[1], _cohort_sort_key(cs[0])))
        return out

    def cohort_digest(self, cohorts: Iterable[Cohort]) -> str:
        """A digest of the fleet content of these cohorts (what their ranks can depend on).

        Changes when a run of one of them is added, replaced or removed, and only then: the
        build cache keys each bundle on the digest of its own cohorts.
        """
        keys = sorted({c.key() for c in cohorts})
        digest = hashlib.sha256()
        with self._reading():
            for key in keys:
                found = self._execute("SELECT runs, digest FROM cohorts WHERE cohort_key = ?",
                                      (key,)).fetchone()
                state = "-" if found is None else f"{found[0]}:{found[1]}"
                digest.update(f"{key}\0{state}\0".encode())
        return digest.hexdigest()

    def cohort_values(self, cohort: Cohort,
                      certificate_id: str) -> dict[str, list[float]]:
        """Per metric, the non-null values of the cohort's runs from other certificates.

        Pulls the whole cohort: for audits and tests (the reference for ranks_for), never used
        by ranking itself.
        """
        key = cohort.key()
        with self._reading():
            found = self._execute(
                f"SELECT {', '.join(METRIC_NAMES)} FROM runs "
                "WHERE cohort_key = ? AND certificate_id != ? ORDER BY certificate_id, run_index",
                (key, certificate_id),
            ).fetchall()
        values: dict[str, list[float]] = {m: [] for m in METRIC_NAMES}
        for row in found:
            for name, v in zip(METRIC_NAMES, row, strict=True):
                if v is not None:
                    values[name].append(float(v))
        return values

    def _ranks(
        self, cohort: Cohort, metrics: Mapping[str, float | None],
        certificate_id: str, minimum: int,
    ) -> dict[str, Rank]:
        """Rank every metric the run has a value for, in SQL (see the module docstring)."""
        key = cohort.key()
        wanted = [(m, float(given)) for m in RANKED_METRICS
                  if (given := metrics.get(m.name)) is not None]
        for m, value in wanted:
            if not _stored_in_range(m.name, value):
                raise FleetError(f"expected a number from {_range_text(m.name)} to rank, got "
                                 f"{_stored_shown(value)}", field=m.name)
        out: dict[str, Rank] = {}
        if not wanted:
            return out
        with self._reading():
            self._check_stored_values(key, [m.name for m, _ in wanted])
            found_stats = self._execute(
                "SELECT metric, n, sum_x, sum_xx FROM cohort_stats WHERE cohort_key = ?",
                (key,)).fetchall()
            stats = _stored_stats(found_stats, str(self.path), cohort)
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
                    assert found is not None  # an aggregate: one row
                    mine_beaten = sum(1 for o in mine
                                      if (value < o if m.lower_is_better else value > o))
                    beaten = int(found[0]) - mine_beaten
                try:
                    out[m.name] = rank_from_sums(value, CohortSums(n, beaten, sx, sxx),
                                                 min_cohort=minimum,
                                                 mean_decimals=m.mean_decimals)
                except (ArithmeticError, ValueError) as exc:
                    # The rows were in range: only damaged aggregates can get here.
                    raise _damaged_stats(str(self.path), cohort, exc) from exc
        return out

    def _check_stored_values(self, key: str, names: Sequence[str]) -> None:
        """Refuse a cohort holding a value this certgen would not write (an older certgen or
        another tool wrote it): its smallest and largest value per metric, each one index
        lookup, must be numbers in the metric's range. A refusal names the row."""
        sql = ", ".join(f"(SELECT {agg}({name}) FROM runs WHERE cohort_key = ?)"
                        for name in names for agg in ("MIN", "MAX"))
        found = self._execute(f"SELECT {sql}", [key] * (2 * len(names))).fetchone()
        assert found is not None  # a SELECT of subqueries without FROM: one row
        for pos, name in enumerate(names):
            for value in found[2 * pos: 2 * pos + 2]:
                if value is None or _stored_in_range(name, value):
                    continue
                row = self._execute(f"SELECT certificate_id, run_index FROM runs "
                                    f"WHERE cohort_key = ? AND {name} = ?",
                                    (key, value)).fetchone()
                who = "a row" if row is None else \
                    f"certificate {_shown(str(row[0]))} run {row[1]}"
                raise FleetError(f"{who}: {name}: holds {_stored_shown(value)}, outside what "
                                 f"certgen accepts ({_range_text(name)}); "
                                 f"{_NOT_WRITTEN_HERE}", file=str(self.path))

    def ranks_for(
        self,
        cohort: Cohort,
        metrics: Mapping[str, float | None],
        certificate_id: str,
        *,
        min_cohort: int | None = None,
    ) -> dict[str, dict[str, float | int | None]]:
        """`runs[].ranks` of one run: {metric: {percentile, n, cohort_mean, z}}.

        cohort: the run's Cohort; metrics: the run's metrics (nulls allowed); the certificate's own
        runs are left out of the cohort. min_cohort: the bundle's rules (default: the store's).
        """
        minimum = self.min_cohort if min_cohort is None else min_cohort
        ranks = self._ranks(cohort, metrics, certificate_id, minimum)
        return {name: rank.model_dump() for name, rank in ranks.items()}

    def run_ranks(
        self,
        cohort: Cohort,
        metrics: RunMetrics,
        certificate_id: str,
        *,
        min_cohort: int | None = None,
    ) -> Ranks:
        """`runs[].ranks` of one run as the record holds it (see ranks_for)."""
        minimum = self.min_cohort if min_cohort is None else min_cohort
        values = {m: getattr(metrics, m) for m in METRIC_NAMES}
        ranks = self._ranks(cohort, values, certificate_id, minimum)
        return Ranks(**ranks)

    def export_jsonl(self, stream: IO[str]) -> int:
        """Write every row as one JSON line, ordered by (certificate_id, run_index), streaming
        page by page from one snapshot."""
        count = 0
        with self._reading():
            for row in self.iter_runs():
                stream.write(_dump_line(row) + "\n")
                count += 1
        return count


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number JSON allows")




def _cohort_sort_key(c: Cohort) -> tuple[str, int, str, str, bool, str, str, bool, str]:
    return (c.title, _pixels(c.resolution), c.resolution, c.preset, c.ray_tracing, c.upscaler,
            c.upscaler_mode or "", c.frame_generation, c.frame_generation_mode or "")


def _pixels(resolution: str) -> int:
    w, _, h = resolution.partition("x")
    try:
        return int(w) * int(h)
    except ValueError:
        return 0


def _to_sql(row: FleetRun) -> tuple[object, ...]:
    c = row.cohort
    return (row.certificate_id, row.run_index, row.issued, row.card_model, row.card_serial,
            c.title, c.resolution, c.preset, int(c.ray_tracing), c.upscaler, c.upscaler_mode,
            int(c.frame_generation), c.frame_generation_mode, *_metric_values(row), row.source,
            c.key())






def _stored_in_range(name: str, value: object) -> bool:
    low, high = METRIC_RANGES[name]
    return (type(value) is int or type(value) is float) and low <= value <= high


def _range_text(name: str) -> str:
    low, high = METRIC_RANGES[name]
    return f"{_bound(low)} to {_bound(high)}"


def _stored_shown(value: object) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"a blob of {len(bytes(value))} bytes"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    try:
        return _describe(value)
    except (TypeError, ValueError):
        return escape_invisible(shorten(repr(value), 40))


def _stored_count(value: object, where: str, what: str) -> int:
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        value = int(value)  # PostgreSQL's SUM of a BIGINT is a NUMERIC
    if type(value) is not int or value < 0:
        raise FleetError(f"{what}: holds {_stored_shown(value)}, expected a count; "
                         f"{_NOT_WRITTEN_HERE}", file=where)
    return value


def _stored_cohort(key: object, where: str) -> Cohort:
    try:
        if not isinstance(key, (str, bytes, bytearray)):  # json.loads's own refusal
            raise TypeError(f"the JSON object must be str, bytes or bytearray, not "
                            f"{key.__class__.__name__}")
        fields = json.loads(key)
        if not isinstance(fields, list):
            raise ValueError("not a JSON array")
        cohort = Cohort.from_key(fields)
    except (TypeError, ValueError) as exc:
        raise FleetError(f"cohorts: holds the key {_stored_shown(key)}, which is not a cohort; "
                         f"{_NOT_WRITTEN_HERE}", file=where) from exc
    return cohort


def _stored_stats(found: Sequence[tuple[Any, ...]], where: str,
                  cohort: Cohort) -> dict[str, tuple[int, int, int]]:
    """cohort_stats rows (metric, n, sum_x, sum_xx) as the cursor gives them, raw SQL values
    (Cursor): n must be a count and the sums hex text, and what int() raises for a damaged
    one is the refusal's detail."""
    stats: dict[str, tuple[int, int, int]] = {}
    try:
        for name, n, sx, sxx in found:
            if type(n) is not int or n < 0:
                raise ValueError(f"n = {n!r}")
            stats[str(name)] = (n, int(sx, 16), int(sxx, 16))
    except (TypeError, ValueError) as exc:
        raise _damaged_stats(where, cohort, exc) from exc
    return stats


def _damaged_stats(where: str, cohort: Cohort, exc: Exception) -> FleetError:
    detail = shorten(str(exc), 60)
    return FleetError(f"cohort_stats of {cohort.label()}: damaged ({detail}); the per-cohort "
                      "sums no longer match the runs (an older certgen or another tool wrote "
                      "them)", file=where)
