"""Issue 14, the fleet: poisoned rows, foreign and older databases, the lock, and SQLite's own
errors. One regression test per class (docs/limits.md, "The fleet"); each asserts the one line a
user gets. Store-level tests run on both backends (a real SQLite file and a real PostgreSQL
database, tests/conftest.py)."""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from bundlekit import run_cli, simple_bundle
from recordkit import complete_record

from certgen.errors import FleetError, FleetImportError
from certgen.fleet import (
    JSONL_FIELDS,
    LOCK_TIMEOUT_ENV,
    MAX_FPS,
    SCHEMA_VERSION,
    Cohort,
    FleetRun,
    FleetStore,
    lock_timeout,
    migrate,
)
from certgen.record import dump_record

CP = Cohort("Game 0", "2560x1440", "Ultra", False, "none", None, False)
"""The cohort of simple_bundle's first run (tests/bundlekit.py)."""


def line(**changes: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "certificate_id": "X-1", "run_index": 0, "issued": "2026-11-29",
        "card_model": "Example 1660", "card_serial": "SN-1", **CP._asdict(),
        "avg_fps": 100.0, "low_1pct_fps": 90.0, "low_0_1pct_fps": 70.0,
        "consistency_gap": 0.1, "stutter": 0.2222, "fluidity_score": 86.33, "source": "import",
    }
    obj.update(changes)
    return obj


def jsonl(*objs: dict[str, Any]) -> str:
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def certgen(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return run_cli(list(args), capsys)


def fill(location: str | Path, count: int = 3) -> None:
    with FleetStore.open(location) as store:
        store.import_jsonl(io.StringIO(jsonl(*(line(certificate_id=f"F-{i}")
                                               for i in range(count)))))


# --- ranges and closed sets on every write path -----------------------------------------------

POISON = [
    ({"avg_fps": 1e308}, "avg_fps: expected a number from 0 to 1000000000 or null, got 1e+308"),
    ({"avg_fps": -100.0, "low_1pct_fps": -120.0, "low_0_1pct_fps": -130.0},
     "avg_fps: expected a number from 0 to 1000000000 or null, got -100.0"),
    ({"consistency_gap": -0.5}, "consistency_gap: expected a number from 0 to 1 or null, got -0.5"),
    ({"stutter": 1.5}, "stutter: expected a number from 0 to 1 or null, got 1.5"),
    ({"fluidity_score": 100.01},
     "fluidity_score: expected a number from 0 to 100 or null, got 100.01"),
    ({"low_1pct_fps": 120.0}, "low_1pct_fps: expected at most avg_fps (100.0), got 120.0 (a low "
                              "above it is a corrupted or hand-edited figure)"),
    ({"low_0_1pct_fps": 95.0}, "low_0_1pct_fps: expected at most low_1pct_fps (90.0), got 95.0 "
                               "(a low above it is a corrupted or hand-edited figure)"),
    ({"upscaler": "DLSS 3 (trust me)"},
     'upscaler: expected one of none, DLSS, FSR, XeSS, got "DLSS 3 (trust me)"'),
    ({"resolution": "4K"}, 'resolution: expected WIDTHxHEIGHT (e.g. 2560x1440), got "4K"'),
    ({"issued": "2026-02-30"}, 'issued: expected a date YYYY-MM-DD or null, got "2026-02-30"'),
    ({"run_index": 10**9}, "run_index: expected an integer from 0 to 99999, got 1000000000"),
    ({"title": "EVIL\u202egnp.exe"}, "title: bidirectional control U+202E is not allowed (it "
                                     'reorders the text), got "EVIL\\u202egnp.exe"'),
    ({"preset": "\u200b"}, "preset: expected a text with visible characters (whitespace, control "
                           'and zero-width characters do not count), got "\\u200b"'),
    ({"card_model": "x" * 201}, "card_model: expected at most 200 characters, got 201"),
]


@pytest.mark.parametrize(("changes", "message"), POISON)
def test_a_poisoned_import_line_is_refused_naming_line_and_field(
    fleet_location: str, changes: dict[str, Any], message: str
) -> None:
    fill(fleet_location)
    text = jsonl(line(certificate_id="OK-1"), line(certificate_id="BAD-1", **changes))
    with FleetStore.open(fleet_location) as store, pytest.raises(FleetImportError) as err:
        store.import_jsonl(io.StringIO(text), name="fleet.jsonl")
    assert err.value.errors[0] == f"fleet.jsonl:2: {message}"
    with FleetStore.open(fleet_location) as store:
        assert store.run_count() == 3  # nothing imported, not even the good line


def test_the_limits_accept_what_certgen_computes(fleet_location: str) -> None:
    """The edges are inside: 0.0 FPS lows (a figure that rounds to 0.0) with s = 1, the fastest
    frame a capture may hold, a score of 0 and of 100, and the largest run index."""
    from certgen.captures.detect import MIN_FRAME_TIME_MS

    assert MAX_FPS == 1000 / MIN_FRAME_TIME_MS
    rows = [line(certificate_id="E-1", avg_fps=12.0, low_1pct_fps=0.1, low_0_1pct_fps=0.0,
                 consistency_gap=0.9917, stutter=1.0, fluidity_score=0.0),
            line(certificate_id="E-2", avg_fps=MAX_FPS, low_1pct_fps=MAX_FPS,
                 low_0_1pct_fps=MAX_FPS, consistency_gap=0.0, stutter=0.0,
                 fluidity_score=100.0, run_index=99_999, issued=None),
            line(certificate_id="E-3", **dict.fromkeys(JSONL_FIELDS[13:19])),
            line(certificate_id="E-4", title="Метро Исход\u00a0Enhanced", upscaler="XeSS",
                 upscaler_mode="Ultra Quality")]
    with FleetStore.open(fleet_location) as store:
        assert store.import_jsonl(io.StringIO(jsonl(*rows))) == (4, 0)


def test_add_runs_checks_rows_built_in_code(fleet_location: str) -> None:
    row = FleetRun(certificate_id="API-1", run_index=0, issued="2026-01-01", card_model="M",
                   card_serial="S", cohort=CP._replace(upscaler="dlss"), avg_fps=float("inf"),
                   low_1pct_fps=None, low_0_1pct_fps=None, consistency_gap=None, stutter=None,
                   fluidity_score=None, source="api")
    with FleetStore.open(fleet_location) as store:
        with pytest.raises(FleetImportError) as err:
            store.add_runs([row], where="api")
        assert err.value.errors == [
            'api: certificate API-1 run 0: upscaler: expected one of none, DLSS, FSR, XeSS, '
            'got "dlss"',
            "api: certificate API-1 run 0: avg_fps: expected a number or null, got Infinity"]
        assert store.run_count() == 0


def test_fleet_add_refuses_a_hand_edited_record(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, fleet_location: str) -> None:
    m = {"avg_fps": 1e308, "low_1pct_fps": 90.0, "low_0_1pct_fps": 70.0,
         "consistency_gap": 0.1, "stutter": 0.2222, "fluidity_score": 86.33}
    rec = complete_record({
        "certificate": {"id": "EDIT-1", "issued": "2026-01-01"},
        "status": {"issuable": True, "draft": False},
        "card": {"model": "Card", "serial": "S"},
        "runs": [{"index": 0, **CP._asdict(), "status": "recorded", "metrics": m}]})
    path = tmp_path / "record.json"
    path.write_bytes(dump_record(rec))
    code, _, err = certgen(capsys, "fleet", "add", "--fleet", fleet_location, str(path))
    assert code == 1
    assert err.splitlines()[0] == (
        f"certgen: {path}: runs[0].metrics.avg_fps: expected a number from 0 to 1000000000 or "
        "null, got 1e+308")


# --- reads of a database an older certgen or another tool wrote ------------------------------


def _poison(location: str, column: str, value: Any) -> None:
    """Write a value past certgen's checks, as another tool would."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(f"UPDATE runs SET {column} = %s WHERE certificate_id = 'F-1'", (value,))
        return
    conn = sqlite3.connect(location, isolation_level=None)
    conn.execute(f"UPDATE runs SET {column} = ? WHERE certificate_id = 'F-1'", (value,))
    conn.close()


@pytest.mark.parametrize(("value", "shown"), [(1e308, "1e+308"), (-5.0, "-5.0"),
                                              (float("inf"), "inf")])
def test_an_out_of_range_stored_value_is_one_line_on_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fleet_location: str, value: float,
    shown: str
) -> None:
    fill(fleet_location)
    _poison(fleet_location, "avg_fps", value)
    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    code, _, err = certgen(capsys, "check", str(bundle), "--fleet", fleet_location)
    assert code == 1
    assert err == (f"certgen: {fleet_location}: certificate F-1 run 0: avg_fps: holds {shown}, "
                   "outside what certgen accepts (0 to 1000000000); a value this certgen would "
                   "not write (an older certgen or another tool wrote it): correct or delete "
                   "that row\n")
    code, _, err = certgen(capsys, "fleet", "export", "--fleet", fleet_location)
    assert code == 1
    assert err.startswith(f"certgen: {fleet_location}: certificate F-1 run 0: avg_fps: expected "
                          "a number")
    assert err.count("\n") == 1


def test_text_in_a_number_column_and_damaged_sums_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "fleet.sqlite"
    fill(db)
    _poison(str(db), "stutter", "high")
    with FleetStore.open(db, readonly=True) as store, pytest.raises(FleetError) as err:
        store.ranks_for(CP, {"stutter": 0.1}, "NEW")
    assert str(err.value).startswith(f'{db}: certificate F-1 run 0: stutter: holds "high", ')
    _poison(str(db), "stutter", 0.2222)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE cohort_stats SET sum_xx = 'zz' WHERE metric = 'stutter'")
    conn.close()
    with FleetStore.open(db, readonly=True) as store, pytest.raises(FleetError) as err:
        store.ranks_for(CP, {"stutter": 0.1}, "NEW")
    assert str(err.value) == (
        f"{db}: cohort_stats of {CP.label()}: damaged (invalid literal for int() with base 16: "
        "'zz'); the per-cohort sums no longer match the runs (an older certgen or another tool "
        "wrote them)")


# --- read-only commands ------------------------------------------------------------------------


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _foreign_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("command", [["fleet", "cohorts"], ["fleet", "export"],
                                     ["fleet", "add", "RECORD"], ["fleet", "import", "JSONL"],
                                     ["check", "BUNDLE"], ["build", "BUNDLE"]])
def test_a_database_that_is_not_a_fleet_is_refused_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "other.sqlite"
    _foreign_db(db)
    jsonl_file = tmp_path / "f.jsonl"
    jsonl_file.write_text(jsonl(line()))
    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    record = tmp_path / "record.json"
    record.write_bytes(dump_record(complete_record({})))
    args = [{"RECORD": str(record), "JSONL": str(jsonl_file), "BUNDLE": str(bundle)}.get(a, a)
            for a in command]
    if command[0] == "build":
        args += ["--out", str(tmp_path / "out"), "--draft"]
    before = _snapshot(folder)
    code, _, err = certgen(capsys, *args, "--fleet", str(db))
    assert code == 1
    assert err.splitlines()[-1] == (
        f"certgen: {db}: not a certgen fleet database (no fleet schema; it holds invoices); it "
        "was left unchanged")
    assert _snapshot(folder) == before  # same bytes, no journal or other file beside it


def test_an_empty_file_is_not_a_fleet_for_a_read(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    db = tmp_path / "empty.sqlite"
    db.touch()
    code, _, err = certgen(capsys, "fleet", "cohorts", "--fleet", str(db))
    assert code == 1
    assert err == (f"certgen: {db}: not a certgen fleet database (an empty database; `certgen "
                   "fleet add` or `certgen fleet import` creates a fleet); it was left "
                   "unchanged\n")
    assert db.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == [db.name]


def test_read_only_commands_never_migrate(capsys: pytest.CaptureFixture[str],
                                          tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    conn = sqlite3.connect(db, isolation_level=None)
    migrate(conn, where=str(db), target=2)
    conn.close()
    before = db.read_bytes()
    bundle = simple_bundle(tmp_path / "bundle", [(120.0, 108.0, 90.0)])
    message = (f"certgen: {db}: fleet schema version 2 is older than this certgen's "
               f"({SCHEMA_VERSION}); a read-only command does not migrate it: run `certgen "
               "fleet migrate` (or any command that writes to the fleet) first\n")
    for args in (["fleet", "cohorts"], ["fleet", "export"], ["check", str(bundle)]):
        code, _, err = certgen(capsys, *args, "--fleet", str(db))
        assert (code, err) == (1, message)
    assert db.read_bytes() == before
    code, out, _ = certgen(capsys, "fleet", "migrate", "--fleet", str(db))
    assert (code, out) == (0, f"{db}: schema version 2 -> {SCHEMA_VERSION}\n")
    code, out, _ = certgen(capsys, "fleet", "migrate", "--fleet", str(db))
    assert out == f"{db}: schema version {SCHEMA_VERSION}, already current\n"
    assert certgen(capsys, "fleet", "cohorts", "--fleet", str(db))[1] == "the fleet is empty\n"


def test_a_read_only_session_on_the_server(capsys: pytest.CaptureFixture[str],
                                           postgres_admin: str) -> None:
    import psycopg
    from pgserver import drop_database, fresh_database

    url = fresh_database(postgres_admin)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE invoices (id INTEGER)")
        for args in (["fleet", "cohorts"], ["fleet", "import", os.devnull]):
            code, _, err = certgen(capsys, *args, "--fleet", url)
            assert (code, err) == (1, f"certgen: {url}: not a certgen fleet database (no fleet "
                                      "schema; it holds invoices); it was left unchanged\n")
        with psycopg.connect(url, autocommit=True) as conn:
            tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = "
                                  "current_schema()").fetchall()
        assert tables == [("invoices",)]
        fresh = fresh_database(postgres_admin)
        code, _, err = certgen(capsys, "fleet", "cohorts", "--fleet", fresh)
        assert err == (f"certgen: {fresh}: not a certgen fleet database (an empty database; "
                       "`certgen fleet add` or `certgen fleet import` creates a fleet); it was "
                       "left unchanged\n")
        fill(fresh)
        with FleetStore.open(fresh, readonly=True) as store:
            assert store.run_count() == 3
            with pytest.raises(FleetError) as info:
                store.add_runs([])
            assert str(info.value) == (f"{fresh}: opened read-only; a read-only command does "
                                       "not write")
        drop_database(postgres_admin, fresh)
    finally:
        drop_database(postgres_admin, url)


# --- the lock ----------------------------------------------------------------------------------


@contextmanager
def held_lock(location: str) -> Iterator[None]:
    """Another process's write transaction on the fleet (a second connection holds its lock)."""
    if location.startswith("postgresql://"):
        import psycopg

        from certgen.fleet.postgres import LOCK_ID

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("BEGIN")
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_ID,))
            yield
            conn.execute("ROLLBACK")
        return
    conn = sqlite3.connect(location, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_waiting_for_the_lock_says_so_then_gives_up(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fleet_location: str,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(fleet_location)
    jsonl_file = tmp_path / "f.jsonl"
    jsonl_file.write_text(jsonl(line(certificate_id="NEW-1")))
    with held_lock(fleet_location):
        code, _, err = certgen(capsys, "fleet", "import", "--fleet", fleet_location,
                               "--lock-timeout", "0.5", str(jsonl_file))
        assert code == 1
        assert err == (
            f"certgen: {fleet_location}: another process is writing to the fleet; "
            f"waiting up to 0.5 s for its lock (--lock-timeout or {LOCK_TIMEOUT_ENV} sets the "
            f"wait)\ncertgen: {fleet_location}: another process held the fleet's lock "
            f"for 0.5 s; gave up (--lock-timeout or {LOCK_TIMEOUT_ENV} sets a longer wait)\n")
        monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0")
        code, _, err = certgen(capsys, "fleet", "import", "--fleet", fleet_location,
                               str(jsonl_file))
        assert code == 1 and err.endswith("held the fleet's lock for 0 s; gave up (--lock-timeout "
                                          f"or {LOCK_TIMEOUT_ENV} sets a longer wait)\n")
        # Readers are not writers: a read-only command does not wait for a write lock.
        assert certgen(capsys, "fleet", "cohorts", "--fleet", fleet_location)[0] == 0
    monkeypatch.delenv(LOCK_TIMEOUT_ENV)
    assert certgen(capsys, "fleet", "import", "--fleet", fleet_location, str(jsonl_file))[0] == 0


def test_a_lock_released_while_waiting_lets_the_write_through(tmp_path: Path) -> None:
    db = tmp_path / "fleet.sqlite"
    fill(db)
    release = threading.Event()

    def holder() -> None:
        with held_lock(str(db)):
            release.wait(5)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        threading.Timer(0.3, release.set).start()
        with FleetStore.open(db, lock_timeout=10) as store:
            assert store.import_jsonl(io.StringIO(jsonl(line(certificate_id="W-1")))) == (1, 0)
    finally:
        release.set()
        thread.join()


@pytest.mark.parametrize(("value", "shown"), [("soon", "soon"), ("-1", "-1"), ("nan", "nan"),
                                              ("1e9", "1e9")])
def test_a_bad_lock_timeout_is_one_line(monkeypatch: pytest.MonkeyPatch, value: str,
                                        shown: str) -> None:
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, value)
    with pytest.raises(FleetError) as err:
        lock_timeout()
    assert str(err.value) == f"{LOCK_TIMEOUT_ENV}: expected seconds from 0 to 86400, got '{shown}'"
    with pytest.raises(FleetError) as err:
        lock_timeout(-2.0)
    assert str(err.value) == "--lock-timeout: expected seconds from 0 to 86400, got '-2.0'"


# --- SQLite's errors as their cause ------------------------------------------------------------


@contextmanager
def small_tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted on `folder` (needs root); unmounted at the end."""
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs as root: {done.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


ROOT = os.geteuid() == 0


def _big_import(count: int) -> io.StringIO:
    pad = "p" * 180
    return io.StringIO(jsonl(*(line(certificate_id=f"D-{i:06d}", card_model=pad, card_serial=pad)
                               for i in range(count))))


@pytest.mark.skipif(not ROOT or shutil.which("mount") is None,
                    reason="mounting a tmpfs needs root; "
                           "test_a_full_database_is_named_as_such covers SQLITE_FULL without it")
def test_a_full_disk_is_one_line_naming_the_cause(tmp_path: Path) -> None:
    """A real full file system (a 256 KiB tmpfs): the import's error, not the rollback's."""
    with small_tmpfs(tmp_path / "small", "256k") as folder:
        db = folder / "fleet.sqlite"
        fill(db)
        with FleetStore.open(db) as store:
            with pytest.raises(FleetError) as err:
                store.import_jsonl(_big_import(3000))
            assert str(err.value) == (f"{db}: cannot write: the disk is full (database or disk "
                                      "is full)")
            assert isinstance(err.value.__cause__, sqlite3.Error)
            assert store.run_count() == 3  # rolled back whole; the store still works


def test_a_full_database_is_named_as_such(tmp_path: Path) -> None:
    """SQLITE_FULL without root: max_page_count caps the file as a full disk would."""
    db = tmp_path / "fleet.sqlite"
    fill(db)
    with FleetStore.open(db) as store:
        store._conn.execute("PRAGMA max_page_count = 40")
        with pytest.raises(FleetError) as err:
            store.import_jsonl(_big_import(3000))
        assert str(err.value) == f"{db}: cannot write: the disk is full (database or disk is full)"
        assert store.run_count() == 3


def test_a_read_only_file_is_one_line(tmp_path: Path) -> None:
    if ROOT:  # root writes through file modes: make the whole file system read-only instead
        with small_tmpfs(tmp_path / "ro", "1m") as folder:
            db = folder / "fleet.sqlite"
            fill(db)
            subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
            _assert_read_only_refusal(db)
        return
    db = tmp_path / "fleet.sqlite"
    fill(db)
    db.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        _assert_read_only_refusal(db)
    finally:
        tmp_path.chmod(0o755)


def _assert_read_only_refusal(db: Path) -> None:
    with FleetStore.open(db, readonly=True) as store:
        assert store.run_count() == 3  # reading a read-only fleet works
    with pytest.raises(FleetError) as err, FleetStore.open(db) as store:
        store.import_jsonl(io.StringIO(jsonl(line(certificate_id="RO-1"))))
    assert str(err.value) == (f"{db}: cannot write: the file or its folder is read-only "
                              "(attempt to write a readonly database)")


def test_a_damaged_file_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    data = bytearray(db.read_bytes())
    page = 4096
    for start in range(2 * page, len(data), page):  # every page but the schema's
        data[start:start + 64] = b"\xff" * 64
    db.write_bytes(bytes(data))
    code, _, err = certgen(capsys, "fleet", "export", "--fleet", str(db))
    assert code == 1
    assert err == (f"certgen: {db}: {DAMAGED.format('database disk image is malformed')}\n")


DAMAGED = ("the file is damaged (integrity check on opening: {}); left unchanged, nothing read "
           "from it: restore it from a backup or import its runs into a new fleet")
"""The refusal of a damaged fleet file (issue 27), around what the check found."""


def _overwrite_page(db: Path, number: int, data: bytes) -> None:
    """Overwrite page `number` (1-based) of an SQLite file, header (page 1) left valid."""
    size = int.from_bytes(db.read_bytes()[16:18], "big")
    with db.open("r+b") as fh:
        fh.seek((number - 1) * size)
        fh.write(data.ljust(size, b"\0"))


def _page_of(db: Path, name: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?",
                                (name,)).fetchone()[0])
    finally:
        conn.close()


def test_a_page_overwritten_behind_a_valid_header_is_named_as_damage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 27: page 4 overwritten, header valid: `fleet cohorts` exited 0 with an empty
    table. Every command that opens the fleet now refuses it, and the file is left as it was."""
    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    _overwrite_page(db, 4, b"")
    damaged = db.read_bytes()
    rows = tmp_path / "rows.jsonl"
    rows.write_text(jsonl(line(certificate_id="NEW-1")))
    for args in (["fleet", "cohorts"], ["fleet", "export"], ["fleet", "import", str(rows)],
                 ["fleet", "migrate"]):
        code, out, err = certgen(capsys, *args, "--fleet", str(db))
        assert code == 1 and out == ""
        assert err.startswith(f"certgen: {db}: the file is damaged (integrity check on opening: ")
        assert err.endswith("; left unchanged, nothing read from it: restore it from a backup "
                            "or import its runs into a new fleet\n") and err.count("\n") == 1
    assert db.read_bytes() == damaged


def test_a_page_replaced_by_a_well_formed_empty_one_is_named_as_damage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The cohorts table's page replaced by a valid empty leaf: quick_check finds nothing wrong
    (it does not compare indexes with tables), the cohorts read as none; the counts disagree."""
    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    size = int.from_bytes(db.read_bytes()[16:18], "big")
    empty_leaf = bytes([0x0D, 0, 0, 0, 0]) + size.to_bytes(2, "big")
    _overwrite_page(db, _page_of(db, "cohorts"), empty_leaf)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    conn.close()
    code, out, err = certgen(capsys, "fleet", "cohorts", "--fleet", str(db))
    assert (code, out, err) == (1, "", f"certgen: {db}: " + DAMAGED.format(
        "the runs table holds 400 runs, the cohort counts 0") + "\n")
    with pytest.raises(FleetError) as info:  # never a ranking against part of a fleet
        FleetStore.open(db, readonly=True)
    assert str(info.value) == f"{db}: " + DAMAGED.format(
        "the runs table holds 400 runs, the cohort counts 0")


def test_an_index_page_from_an_older_state_is_named_as_damage(tmp_path: Path) -> None:
    """One index's page put back from a copy made before a run was added (a restored block):
    every page is well formed, but that index lacks a run its table and counts hold."""
    db = tmp_path / "fleet.sqlite"
    fill(db, 2)
    older = db.read_bytes()
    with FleetStore.open(db) as store:
        store.import_jsonl(io.StringIO(jsonl(line(certificate_id="F-9"))))
    page = _page_of(db, "runs_by_cohort_stutter")
    size = int.from_bytes(older[16:18], "big")
    _overwrite_page(db, page, older[(page - 1) * size:page * size])
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    conn.close()
    with pytest.raises(FleetError) as info:
        FleetStore.open(db, readonly=True)
    assert str(info.value) == f"{db}: " + DAMAGED.format(
        "the index runs_by_cohort_stutter holds 2 runs, the cohort counts 3")


def test_a_fleet_found_whole_is_not_read_again_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check reads every page (docs/limits.md gives its cost): once per process per file
    state (device, inode, size, mtime, ctime); any change to the file is checked again."""
    import certgen.fleet.store as module

    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    calls: list[str] = []
    real = module._check_pages

    def counted(conn: sqlite3.Connection, where: str) -> None:
        calls.append(where)
        real(conn, where)

    monkeypatch.setattr(module, "_check_pages", counted)
    monkeypatch.setattr(module, "RACY_NS", 0)  # the file was written just now
    _marker(db).unlink()  # the process memo alone (the marker has its own tests below)
    for _ in range(3):
        FleetStore.open(db, readonly=True).close()
    assert calls == [str(db)]
    time.sleep(0.05)  # past the file times' clock tick
    _overwrite_page(db, 4, b"")
    with pytest.raises(FleetError):
        FleetStore.open(db, readonly=True)
    assert len(calls) == 2


def test_a_fleet_changed_within_a_second_of_its_check_is_checked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import certgen.fleet.store as module

    db = tmp_path / "fleet.sqlite"
    fill(db, 3)
    calls: list[str] = []
    real = module._check_pages
    monkeypatch.setattr(module, "_check_pages",
                        lambda conn, where: (calls.append(where), real(conn, where))[1])
    _marker(db).unlink()  # the process memo alone
    FleetStore.open(db, readonly=True).close()
    FleetStore.open(db, readonly=True).close()
    assert len(calls) == 2  # "racily clean": a state younger than RACY_NS is not remembered


def _marker(db: Path) -> Path:
    return db.with_name(db.name + "-certgen-verified")


def _counting_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The integrity checks every later open runs, each named by its file (the process memo
    emptied, so what is counted is what a fresh process would do)."""
    import certgen.fleet.store as module

    calls: list[str] = []
    real = module._check_pages
    monkeypatch.setattr(module, "_CHECKED", set())
    monkeypatch.setattr(module, "_check_pages",
                        lambda conn, where: (calls.append(where), real(conn, where))[1])
    return calls


def test_the_fleets_own_writes_keep_the_verified_state_marker_current(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: the check is paid once per fleet state, not once per process. A write command
    that found the file whole vouches for the state its own write leaves (the marker beside
    the fleet); a read-only command in a new process trusts it and reads no page."""
    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    assert _marker(db).is_file()
    calls = _counting_checks(monkeypatch)
    for args in (["fleet", "cohorts"], ["fleet", "export"]):
        assert certgen(capsys, *args, "--fleet", str(db))[0] == 0
    rows = tmp_path / "rows.jsonl"
    rows.write_text(jsonl(line(certificate_id="NEW-1")))
    assert certgen(capsys, "fleet", "import", str(rows), "--fleet", str(db))[0] == 0
    assert certgen(capsys, "fleet", "cohorts", "--fleet", str(db))[0] == 0
    assert calls == []  # the import left a state it vouched for
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert certgen(capsys, "fleet", "export", "--fleet", str(db))[0] == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # a read writes nothing


def test_a_change_behind_the_markers_back_is_checked_and_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any change the fleet's own writes did not make (a page overwritten, even with the file's
    times set back as they were) leaves the file in a state the marker does not name: checked
    again, and refused. A marker copied from another file, or one certgen did not write,
    vouches for nothing."""
    import os

    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    calls = _counting_checks(monkeypatch)
    st = db.stat()
    time.sleep(0.05)
    _overwrite_page(db, 4, b"")
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime set back; ctime cannot be
    code, _, err = certgen(capsys, "fleet", "cohorts", "--fleet", str(db))
    assert code == 1 and "the file is damaged (integrity check on opening: " in err
    assert calls == [str(db)]
    other = tmp_path / "other.sqlite"
    fill(other, 3)
    calls.clear()
    _marker(other).write_bytes(_marker(db).read_bytes())  # another file's state
    assert certgen(capsys, "fleet", "cohorts", "--fleet", str(other))[0] == 0
    _marker(other).write_text("certgen fleet verified 1\nnot numbers\n")
    assert certgen(capsys, "fleet", "cohorts", "--fleet", str(other))[0] == 0
    assert calls == [str(other), str(other)]


def test_a_fleet_without_a_marker_is_vouched_for_by_the_next_write(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet an older certgen wrote (no marker) is checked by every new process until a
    command that writes (`fleet migrate` does) checks it and leaves the marker."""
    db = tmp_path / "fleet.sqlite"
    fill(db, 400)
    _marker(db).unlink()
    calls = _counting_checks(monkeypatch)
    certgen(capsys, "fleet", "cohorts", "--fleet", str(db))
    assert calls == [str(db)] and not _marker(db).exists()
    time.sleep(0.05)
    assert certgen(capsys, "fleet", "migrate", "--fleet", str(db))[0] == 0
    assert _marker(db).is_file() and len(calls) == 2
    certgen(capsys, "fleet", "cohorts", "--fleet", str(db))
    assert len(calls) == 2


def test_an_interrupted_write_is_undone_by_a_write_not_by_a_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A writer killed mid-transaction leaves a hot journal: a read-only open cannot roll it
    back (SQLITE_READONLY_ROLLBACK) and says what to run; `fleet migrate` rolls it back."""
    db = tmp_path / "fleet.sqlite"
    fill(db)
    killed = (
        "import sqlite3, os, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA cache_size = 1')\n"  # spill to the file: a journal is needed
        "c.execute('BEGIN IMMEDIATE')\n"
        "c.executemany(\"UPDATE runs SET card_model = ? WHERE certificate_id = ?\", "
        "[('x' * 3000, f'F-{i}') for i in range(3)])\n"
        "c.executemany(\"INSERT INTO cohorts VALUES (?, 1, 'x')\", "
        "[('k' * 500 + str(i),) for i in range(2000)])\n"
        "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", killed, str(db)], check=True)
    assert (tmp_path / "fleet.sqlite-journal").exists()
    code, _, err = certgen(capsys, "fleet", "cohorts", "--fleet", str(db))
    assert (code, err) == (1, f"certgen: {db}: has an interrupted write to undo (a hot journal "
                              "beside it), which a read-only command cannot do: run `certgen "
                              "fleet migrate` (or any command that writes to the fleet) first\n")
    assert certgen(capsys, "fleet", "migrate", "--fleet", str(db))[0] == 0
    assert not (tmp_path / "fleet.sqlite-journal").exists()
    with FleetStore.open(db, readonly=True) as store:
        assert [r.card_model for r in store.runs()] == ["Example 1660"] * 3  # rolled back


def test_a_marker_that_is_not_a_regular_file_is_no_marker(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    alarm: None
) -> None:
    """A FIFO (or a link to one) where the marker goes must not block a command that opens the
    fleet: it vouches for nothing, and the file is checked. A write replaces it with a marker."""
    db = tmp_path / "fleet.sqlite"
    fill(db, 3)
    _marker(db).unlink()
    os.mkfifo(_marker(db))
    calls = _counting_checks(monkeypatch)
    assert certgen(capsys, "fleet", "cohorts", "--fleet", str(db))[0] == 0
    assert calls == [str(db)]
    rows = tmp_path / "rows.jsonl"
    rows.write_text(jsonl(line(certificate_id="NEW-1")))
    assert certgen(capsys, "fleet", "import", str(rows), "--fleet", str(db))[0] == 0
    assert _marker(db).is_file() and not _marker(db).is_fifo()
