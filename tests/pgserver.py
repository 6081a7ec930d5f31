"""A throwaway PostgreSQL server for the fleet tests: Debian's postgresql binaries, initdb into a
temporary folder, started on a free loopback port, stopped and removed at the end. One server
serves the whole test session (tests/conftest.py shares it between the xdist workers); each
test gets a database of its own in it (fresh_database).

Missing binaries: as root they are installed (`make test` does it before the workers start; this
is the fallback for a direct pytest run, behind a lock so two xdist workers do not race for
dpkg); not root, the PostgreSQL tests are skipped saying so. Any other failure to start is a
test failure with the server's log, never a silent skip. PostgreSQL refuses to run as root, so
as root the server runs as the `postgres` system user the package creates.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = os.geteuid() == 0


def _bin_dir() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else None


def _install() -> None:
    import fcntl

    with open("/tmp/certgen-postgresql-install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _bin_dir() is not None:
            return
        subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True, timeout=600)
        done = subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"],
                              capture_output=True, timeout=1200,
                              env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
        if _bin_dir() is None:
            pytest.fail("POSTGRESQL COULD NOT BE INSTALLED (apt-get install postgresql): "
                        f"{done.stderr.decode()[-500:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if ROOT else cmd


@dataclass(frozen=True)
class Server:
    """A running server: its admin URL and what stopping it needs (JSON-able, so the process
    that stops it need not be the one that started it)."""

    url: str
    bins: str
    base: str

    def as_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Server:
        return cls(**json.loads(text))


def start_server() -> Server:
    """Start a server (database `postgres`, trust auth on loopback); stop_server stops it."""
    bins = _bin_dir()
    if bins is None:
        if not ROOT:
            pytest.skip("POSTGRESQL MISSING and not root: cannot `apt-get install postgresql`; "
                        "the PostgreSQL fleet tests did NOT run")
        _install()
        bins = _bin_dir()
        assert bins is not None
    if ROOT and shutil.which("runuser") is None:
        pytest.fail("cannot start PostgreSQL as root without runuser (it refuses to run as root)")
    base = Path(tempfile.mkdtemp(prefix="certgen-pg-"))
    server = Server(url="", bins=str(bins), base=str(base))
    data, log = base / "data", base / "server.log"
    if ROOT:
        shutil.chown(base, "postgres", "postgres")
    port = _free_port()
    try:
        init = subprocess.run(
            _as_owner([str(bins / "initdb"), "-D", str(data), "-U", "certgen", "--auth=trust",
                       "--locale=C", "-E", "UTF8", "--no-sync"]),
            capture_output=True, text=True, timeout=300)
        if init.returncode != 0:
            pytest.fail(f"POSTGRESQL COULD NOT START: initdb failed: {init.stderr[-800:]}")
        # One server for the whole session, shared by the xdist workers (tests/conftest.py):
        # room for all of their connections.
        opts = (f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        start = subprocess.run(
            _as_owner([str(bins / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(log), "-w",
                       "-t", "120", "start"]),
            capture_output=True, text=True, timeout=300)
        if start.returncode != 0:
            text = log.read_text(errors="replace")[-800:] if log.exists() else start.stderr
            pytest.fail(f"POSTGRESQL COULD NOT START on 127.0.0.1:{port}: {text}")
    except BaseException:
        stop_server(server)
        raise
    return dataclasses.replace(server, url=f"postgresql://certgen@127.0.0.1:{port}/postgres")


def stop_server(server: Server) -> None:
    """Stop a server start_server started and remove its folder."""
    data = Path(server.base) / "data"
    if (data / "postmaster.pid").exists():
        subprocess.run(_as_owner([str(Path(server.bins) / "pg_ctl"), "-D", str(data), "-m",
                                  "immediate", "-w", "stop"]), capture_output=True, timeout=120)
    shutil.rmtree(server.base, ignore_errors=True)


@contextmanager
def postgres_server() -> Iterator[str]:
    """A server for the length of the block; yields its admin URL."""
    server = start_server()
    try:
        yield server.url
    finally:
        stop_server(server)


def fresh_database(admin_url: str) -> str:
    """A new empty database on the server; its URL."""
    import psycopg

    name = "fleet_" + uuid.uuid4().hex[:12]
    for attempt in range(10):
        try:
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')
            break
        except psycopg.errors.ObjectInUse:
            # CREATE DATABASE copies template1 and needs it unused; another test (of any
            # worker: the server is the session's) may be creating. The last try raises.
            if attempt == 9:
                raise
            time.sleep(0.2 * (attempt + 1))
    return admin_url.rsplit("/", 1)[0] + "/" + name


def drop_database(admin_url: str, url: str) -> None:
    """Drop a database fresh_database made (closing any connection left to it)."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
