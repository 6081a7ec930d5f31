"""`certgen fleet`: add certified records to the fleet store, import/export JSON Lines, cohorts.

The fleet file is `--fleet PATH`, else $CERTGEN_FLEET, else ./fleet.sqlite (certgen.fleet).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, TypeVar

import click

from certgen.errors import CertgenError, FleetError
from certgen.fleet import SCHEMA_VERSION, FleetStore, fleet_path, record_source
from certgen.fleet import lock_timeout as timeout_of
from certgen.fleet.model import Withdrawn
from certgen.pipeline import make_record
from certgen.record import dump_record, load_record
from certgen.verify.revocation import load_revocations

if TYPE_CHECKING:
    from certgen.fleet import FleetStore
    from certgen.record import Record

_Command = TypeVar("_Command", bound=Callable[..., object])

FLEET_HELP = (
    "Fleet database: an SQLite file, or a postgresql:// URL (the postgres extra). "
    "Default: $CERTGEN_FLEET, else fleet.sqlite in the current folder."
)


LOCK_HELP = (
    "Seconds to wait for another process writing to the fleet before giving up "
    "(0: do not wait). Default: $CERTGEN_FLEET_LOCK_TIMEOUT, else 60."
)


def _fleet_option(f: _Command) -> _Command:
    f = click.option("--lock-timeout", "lock_timeout", type=float, default=None,
                     metavar="SECONDS", help=LOCK_HELP)(f)
    return click.option("--fleet", "fleet", type=click.Path(dir_okay=False), default=None,
                        metavar="DB", help=FLEET_HELP)(f)


REVOCATIONS_HELP = (
    "The lab's revocations.yaml, or its registry's verify/index.json (a saved copy of the "
    "published one), as `certgen verify --revocations` reads it: a certificate it revokes is "
    "kept out."
)


def revocations_option(f: _Command) -> _Command:
    """--revocations FILE, the same option on `fleet add` and `calibrate`."""
    return click.option("--revocations", "revocations", type=click.Path(dir_okay=False),
                        default=None, metavar="FILE", help=REVOCATIONS_HELP)(f)


def withdrawn(path: str | None) -> Withdrawn | None:
    """--revocations read (None when not given): a file that is neither form is refused in one
    line naming it, before the fleet is opened."""
    if path is None:
        return None
    listed = load_revocations(path)
    return Withdrawn(dates={item.id: item.date for item in listed}, source=path)


@contextmanager
def _open(fleet: str | None, lock_timeout: float | None, *,
          readonly: bool) -> Iterator[FleetStore]:
    """The fleet store; read-only commands never create, migrate or write it."""

    timeout = timeout_of(lock_timeout)  # a bad --lock-timeout is refused before opening
    with FleetStore.open(fleet_path(fleet), readonly=readonly, lock_timeout=timeout) as store:
        yield store


@click.group(name="fleet")
def command() -> None:
    """The fleet store: every recorded run of every certified card, ranked by cohort.

    The database is --fleet DB, else $CERTGEN_FLEET, else ./fleet.sqlite. A cohort is (title,
    resolution, preset, ray tracing, upscaler, upscaler mode, frame generation); a run is only
    ever ranked against runs of its own cohort.
    """


def _load_input(path: Path) -> tuple[Record, str, str]:
    """A record.json, a build output folder holding one, or a bundle (folder or .zip).

    Returns (record, source, where): source is `record:sha256:<hex>` of the record.json bytes
    read, or `bundle:sha256:<hex>` of the record computed from a bundle.
    """

    where = str(path)
    if path.is_dir() and (path / "record.json").is_file() and not (path / "card.yaml").exists():
        path = path / "record.json"
        where = str(path)
    if path.is_file() and path.suffix.lower() == ".json":
        data = path.read_bytes()
        return load_record(data, source=where), record_source(data), where
    if not path.exists():
        raise FleetError("no such record or bundle", file=where)
    record = make_record(path, fleet=None, draft=False)
    # No record.json was written: the source names the record computed here (without ranks,
    # which do not enter the fleet), so it differs from the hash of a built record.json.
    digest = record_source(dump_record(record)).removeprefix("record:")
    return record, f"bundle:{digest}", where


@command.command(name="add", short_help="Add certified records or bundles (idempotent).")
@_fleet_option
@click.option("--replace", is_flag=True,
              help="Overwrite runs already in the fleet under the same certificate id whose "
                   "figures differ (by default such a conflict is refused).")
@revocations_option
@click.argument("inputs", nargs=-1, required=True, metavar="BUNDLE_OR_RECORD...",
                type=click.Path(path_type=Path))
def add(fleet: str | None, lock_timeout: float | None, replace: bool, revocations: str | None,
        inputs: Sequence[Path]) -> None:
    """Add certified records (record.json, a build folder, or a bundle) to the fleet.

    Idempotent: a certificate already in the fleet is not counted twice. Kept out, one line
    each: draft or refused certificates, specimens (SAMPLE- ids: no card was measured), the
    certificates --revocations revokes, and a certificate whose capture (same SHA-256) is
    already behind another certificate. Every input is tried; any refusal makes the exit
    status 1.
    """
    added = skipped = failed = 0
    revoked = withdrawn(revocations)
    with _open(fleet, lock_timeout, readonly=False) as store:
        show = len(inputs) > 1 and sys.stderr.isatty()
        with click.progressbar(inputs, label="adding", file=sys.stderr,
                               hidden=not show) as bar:
            for path in bar:
                try:
                    record, source, where = _load_input(path)
                    a, s = store.add_record(record, source=source, replace=replace, where=where,
                                            revoked=revoked)
                except CertgenError as exc:
                    failed += 1
                    click.echo(f"certgen: {exc}", err=True)
                    continue
                added += a
                skipped += s
                click.echo(f"{record.certificate.id}: {_runs(a)} added, {s} already in the fleet")
        click.echo(f"{store.path}: {_runs(added)} added, {skipped} already present; "
                   f"{_runs(store.run_count())} in {len(store.cohorts())} cohorts")
    if failed:
        raise FleetError(f"{failed} of {len(inputs)} inputs refused (see above); "
                         "the others were added")


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


@command.command(name="import", short_help="Import a JSON Lines export.")
@_fleet_option
@click.option("--replace", is_flag=True,
              help="Overwrite runs already in the fleet whose figures differ.")
@click.argument("file", metavar="FILE.jsonl", type=click.Path(allow_dash=True))
def import_(fleet: str | None, lock_timeout: float | None, replace: bool, file: str) -> None:
    """Import a JSON Lines export (every line is checked; an error imports nothing).

    The file is streamed: memory does not grow with its size.
    """
    with ExitStack() as stack:
        if file == "-":
            stream: IO[str] = sys.stdin
            name = "<stdin>"
        else:
            try:
                stream = stack.enter_context(open(file, encoding="utf-8"))
            except OSError as exc:
                raise FleetError(f"cannot read: {exc}", file=file) from None
            name = file
        with _open(fleet, lock_timeout, readonly=False) as store:
            try:
                added, skipped = store.import_jsonl(stream, name=name, replace=replace)
            except (OSError, UnicodeDecodeError) as exc:
                raise FleetError(f"cannot read: {exc}", file=name) from None
            click.echo(f"{store.path}: {_runs(added)} imported, {skipped} already present; "
                       f"{_runs(store.run_count())} in {len(store.cohorts())} cohorts")


@command.command(name="export", short_help="Export every run as JSON Lines.")
@_fleet_option
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Write to this file (atomically) instead of standard output.")
def export(fleet: str | None, lock_timeout: float | None, output: Path | None) -> None:
    """Export every run as JSON Lines, ordered by certificate id then run index (streamed).

    Read-only: the database is never created, migrated or changed."""
    with _open(fleet, lock_timeout, readonly=True) as store:
        if output is None:
            store.export_jsonl(sys.stdout)
            sys.stdout.flush()
            return
        count = _export_atomic(store, output)
    click.echo(f"{output}: {_runs(count)} exported", err=True)


def _export_atomic(store: FleetStore, path: Path) -> int:
    """Stream the export into a temp file beside `path`, fsync, then os.replace (atomic); a
    failure is a FleetError naming the file and leaves no partial file."""

    if path.is_dir():  # one line, as every other output failure (not a usage error)
        raise FleetError("cannot write: expected a file, got a folder", file=str(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise FleetError(f"cannot write: {exc.strerror}", file=str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            count = int(store.export_jsonl(fh))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise FleetError(f"cannot write: {exc.strerror}", file=str(path)) from None
        raise
    return count


@command.command(name="cohorts", short_help="Cohort sizes, largest first.")
@_fleet_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def cohorts(fleet: str | None, lock_timeout: float | None, as_json: bool) -> None:
    """Cohort sizes, largest first (then by title and resolution).

    Read-only: the database is never created, migrated or changed."""
    with _open(fleet, lock_timeout, readonly=True) as store:
        listing = store.cohorts()
        total = store.run_count()
        minimum = store.min_cohort
    if as_json:
        doc = {
            "fleet_runs": total,
            "ranking_min_cohort": minimum,
            "cohorts": [{**c._asdict(), "runs": n} for c, n in listing],
        }
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    if not listing:
        click.echo("the fleet is empty")
        return
    width = max(4, len(str(listing[0][1])))
    click.echo(f"{'runs':>{width}}  cohort")
    for cohort, n in listing:
        click.echo(f"{n:>{width}}  {cohort.label()}")
    click.echo(f"{_runs(total)} in {len(listing)} cohorts; percentiles are published "
               f"from n = {minimum} (the run itself included)")


@command.command(name="migrate", short_help="Bring the fleet to this certgen's schema version.")
@_fleet_option
def migrate(fleet: str | None, lock_timeout: float | None) -> None:
    """Apply the schema steps an older fleet lacks (read-only commands never migrate).

    Every write command migrates too; this one only migrates. A missing file is refused."""

    timeout = timeout_of(lock_timeout)
    with FleetStore.open(fleet_path(fleet), create=False, lock_timeout=timeout) as store:
        found = store.found_version
        if found == SCHEMA_VERSION:
            click.echo(f"{store.path}: schema version {found}, already current")
        else:
            click.echo(f"{store.path}: schema version {found} -> {store.schema_version}")
